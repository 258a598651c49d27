//! WebSocket bots: skirmish in lockstep over a connection per game, a late
//! tick skipped and its action dropped, and broken far sides.

use std::net::TcpStream;
use std::time::Duration;

use arbiter_games::{FinishReason, Variant};
use arbiter_referee::skirmish::SkirmishRecord;
use arbiter_referee::{Entrant, MatchSettings, PlayedMatch, play_match};
use arbiter_sdk::Rng;
use serde_json::Value;
use tungstenite::{Message, WebSocket};

use crate::support::{WsServer, closed_port, house, remote};

/// The tick at which the slow bot answers late.
const SLOW_TICK: u64 = 5;
/// The per-tick budget of these matches: the Arène design's 200 ms tick.
const TICK_MS: u64 = 200;

/// Plays a skirmish house bot over `socket`, answering tick `slow` (if any)
/// one and a half times the tick's budget after its observation: skipped,
/// its reply comes during the next tick.
fn skirmish_session(mut socket: WebSocket<TcpStream>, slow: Option<u64>) {
    let mut bot = arbiter_bots::answerer("skirmish-economy", Rng::seeded(5)).expect("house bot");
    loop {
        let text = match socket.read() {
            Ok(Message::Text(text)) => text,
            Ok(Message::Close(_)) | Err(_) => return,
            Ok(_) => continue,
        };
        let observation: Value = serde_json::from_str(text.as_str()).expect("an observation");
        let reply = bot(text.as_str());
        if slow.is_some() && observation["tick"].as_u64() == slow {
            std::thread::sleep(Duration::from_millis(3 * TICK_MS / 2));
        }
        if socket.send(Message::text(reply)).is_err() {
            return;
        }
    }
}

fn play(bot: &dyn Entrant, opponent: &dyn Entrant) -> PlayedMatch {
    let mut settings = MatchSettings::new(Variant::Skirmish, 21);
    settings.budget.turn_ms = TICK_MS;
    play_match(&settings, [bot, opponent]).expect("no host failure")
}

#[test]
fn a_websocket_skirmish_bot_plays_a_match_and_a_late_tick_is_dropped() {
    let server = WsServer::start(|socket| skirmish_session(socket, Some(SLOW_TICK)));
    let bot = remote("economy-over-ws", &server.url);
    let opponent = house("skirmish-rush");
    let played = play(&bot, &opponent);

    assert_eq!(played.replay.games.len(), 2);
    assert_eq!(played.replay.participants[0].kind, "websocket");
    assert!(!played.replay.reproducible);
    assert_eq!(*server.connections.lock().expect("count"), 2, "one connection per game");
    for game in &played.replay.games {
        assert!(
            matches!(game.reason, FinishReason::Elimination | FinishReason::Score),
            "played to its end: {:?} {:?}",
            game.reason,
            game.detail
        );
        let side = usize::from(game.sides[1] == 0);
        let record = SkirmishRecord::from_game(game).expect("a skirmish record");
        // Exactly one of each on an idle machine; a loaded one may skip
        // the next tick too.
        assert!(
            (1..=2).contains(&record.skipped[side]),
            "skipped {}",
            record.skipped[side]
        );
        assert!(record.stale[side] >= 1, "its late reply came later and was dropped");
        let ticks = &record.game.ticks;
        let slow = &ticks[usize::try_from(SLOW_TICK).expect("small")].sides[side];
        assert!(slow.skipped && slow.accepted.is_empty(), "{slow:?}");
        let answered = ticks[usize::try_from(SLOW_TICK).expect("small") + 1..]
            .iter()
            .filter(|tick| !tick.sides[side].skipped)
            .count();
        assert!(answered + 2 >= ticks.len() - 6, "it answers again after the slow tick");
        assert!(ticks.len() > 20, "a whole game: {} ticks", ticks.len());
    }
    let checked = arbiter_referee::verify::recheck(&played.replay).expect("the record re-simulates");
    assert!(checked > 40);
}

#[test]
fn a_skirmish_bot_that_cannot_be_reached_loses_both_games() {
    let url = format!("ws://{}/", closed_port());
    let played = play(&remote("gone", &url), &house("skirmish-rush"));
    for game in &played.replay.games {
        assert_eq!(game.reason, FinishReason::Crash, "{:?}", game.detail);
        assert!(
            game.detail.as_deref().is_some_and(|d| d.contains("cannot connect")),
            "{:?}",
            game.detail
        );
    }
    assert_eq!(played.replay.result.winner, Some(1));
}

#[test]
fn a_closed_socket_and_a_binary_frame_lose_the_game() {
    let closing = WsServer::start(|mut socket| {
        let _ = socket.read();
        let _ = socket.close(None);
        let _ = socket.flush();
    });
    let played = play(&remote("closing", &closing.url), &house("skirmish-rush"));
    for game in &played.replay.games {
        assert_eq!(game.reason, FinishReason::Crash, "{:?}", game.detail);
        assert!(
            game.detail
                .as_deref()
                .is_some_and(|d| d.contains("closed the WebSocket")),
            "{:?}",
            game.detail
        );
    }

    let binary = WsServer::start(|mut socket| {
        while socket.read().is_ok() {
            if socket.send(Message::binary(vec![1, 2, 3])).is_err() {
                return;
            }
        }
    });
    let played = play(&remote("binary", &binary.url), &house("skirmish-rush"));
    for game in &played.replay.games {
        assert_eq!(game.reason, FinishReason::BadReply, "{:?}", game.detail);
        assert!(
            game.detail.as_deref().is_some_and(|d| d.contains("binary frame")),
            "{:?}",
            game.detail
        );
    }
}

#[test]
fn othello_works_over_a_websocket_too() {
    let server = WsServer::start(|mut socket| {
        let mut bot = arbiter_bots::answerer("othello-greedy", Rng::seeded(1)).expect("house bot");
        while let Ok(message) = socket.read() {
            if let Message::Text(text) = message
                && socket.send(Message::text(bot(text.as_str()))).is_err()
            {
                return;
            }
        }
    });
    let settings = MatchSettings::new(Variant::Othello(arbiter_games::othello::Mode::Std), 4);
    let bot = remote("greedy-over-ws", &server.url);
    let played = play_match(&settings, [&bot, &house("othello-random")]).expect("no host failure");
    for game in &played.replay.games {
        assert_eq!(game.reason, FinishReason::Discs, "{:?}", game.detail);
    }
}
