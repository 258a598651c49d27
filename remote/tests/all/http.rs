//! HTTP bots: botsarena's messages field for field, Othello in every mode,
//! and every way a far side can fail.

use std::time::{Duration, Instant};

use arbiter_games::{FinishReason, Variant};
use arbiter_referee::replay::GameRecord;
use arbiter_referee::verify::{VerifyError, recheck, verify};
use arbiter_referee::{Entrant, MatchSettings, PlayedMatch, play_match};
use arbiter_sdk::Rng;
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use crate::support::{HttpServer, closed_port, house, json, remote};

/// A botsarena tic-tac-toe bot, written from the seed's description: it
/// answers `init` with its name and `play-turn` with the first empty cell.
fn botsarena_reply(body: &str) -> Response {
    json(botsarena_answer(body))
}

fn botsarena_answer(body: &str) -> String {
    let message: Value = serde_json::from_str(body).expect("the referee sends JSON");
    match message["action"].as_str() {
        Some("init") => r#"{"name":"first-empty"}"#.to_owned(),
        Some("play-turn") => {
            let board = message["board"].as_object().expect("a board object");
            let cell = (0..3)
                .flat_map(|r| (0..3).map(move |c| format!("{r}-{c}")))
                .find(|key| board.get(key).and_then(Value::as_str) == Some(""))
                .expect("an empty cell on my turn");
            format!(r#"{{"name":"","play":"{cell}","error":null}}"#)
        }
        other => panic!("unknown action {other:?}"),
    }
}

/// The participant's record of game `game`: its side's index there.
fn side_of(game: &GameRecord, participant: u8) -> usize {
    usize::from(game.sides[1] == participant)
}

fn play(variant: Variant, entrants: [&dyn Entrant; 2]) -> PlayedMatch {
    let settings = MatchSettings::new(variant, 11);
    play_match(&settings, entrants).expect("no host failure")
}

#[test]
fn a_botsarena_bot_gets_the_seed_messages_field_for_field() {
    let server = HttpServer::start(|body| botsarena_reply(&body));
    let bot = remote("first-empty", &server.url);
    let opponent = house("tictactoe-random");
    let played = play(Variant::TicTacToe, [&bot, &opponent]);

    assert_eq!(played.replay.games.len(), 2);
    assert!(!played.replay.reproducible, "a remote bot's match is not reproducible");
    assert_eq!(played.replay.participants[0].kind, "http");
    for game in &played.replay.games {
        assert!(
            matches!(game.reason, FinishReason::Line | FinishReason::Draw),
            "the game is played to its end: {:?} {:?}",
            game.reason,
            game.detail
        );
    }

    rechecks(&played);

    let requests = server.requests();
    let inits: Vec<Value> = requests
        .iter()
        .map(|body| serde_json::from_str(body).expect("JSON"))
        .filter(|m: &Value| m["action"] == "init")
        .collect();
    assert_eq!(inits.len(), 2, "one init per game");
    for (index, init) in inits.iter().enumerate() {
        let keys: Vec<&str> = init.as_object().expect("object").keys().map(String::as_str).collect();
        let mut keys = keys;
        keys.sort_unstable();
        assert_eq!(keys, ["action", "board", "game", "game-id", "player-index", "players"]);
        assert_eq!(init["game"], "tictactoe");
        assert_eq!(init["players"], 2);
        assert_eq!(init["board"], "");
        assert!(init["game-id"].is_string());
        // Participant 0 moves first in game 0 and second in game 1.
        assert_eq!(init["player-index"], index);
    }
    let turns: Vec<Value> = requests
        .iter()
        .map(|body| serde_json::from_str(body).expect("JSON"))
        .filter(|m: &Value| m["action"] == "play-turn")
        .collect();
    assert!(turns.len() >= 4, "it played its turns: {}", turns.len());
    for turn in &turns {
        let mut keys: Vec<&str> = turn.as_object().expect("object").keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["action", "board", "game", "game-id", "player-index", "players", "you"]
        );
        let board = turn["board"].as_object().expect("a board object");
        let mut cells: Vec<&str> = board.keys().map(String::as_str).collect();
        cells.sort_unstable();
        assert_eq!(cells, ["0-0", "0-1", "0-2", "1-0", "1-1", "1-2", "2-0", "2-1", "2-2"]);
        assert!(board.values().all(|v| matches!(v.as_str(), Some("" | "X" | "O"))));
        let you = turn["you"].as_str().expect("you");
        let index = turn["player-index"].as_u64().expect("player-index");
        assert_eq!(you, if index == 0 { "X" } else { "O" });
    }
}

#[test]
fn othello_over_http_plays_every_mode() {
    // A stateless server: every request carries the whole position.
    let server = HttpServer::start(|body| {
        let mut bot = arbiter_bots::answerer("othello-greedy", Rng::seeded(3)).expect("house bot");
        json(bot(&body))
    });
    let bot = remote("greedy-over-http", &server.url);
    let opponent = house("othello-random");
    for mode in arbiter_games::othello::Mode::ALL {
        let variant = Variant::Othello(mode);
        let played = play(variant, [&bot, &opponent]);
        assert_eq!(played.replay.games.len(), 2, "{mode}");
        for game in &played.replay.games {
            assert_eq!(game.reason, FinishReason::Discs, "{mode}: {:?}", game.detail);
        }
        rechecks(&played);
    }
    assert!(server.requests().len() > 100);
}

/// Plays `bot` against a random house bot at tic-tac-toe and checks that
/// it lost both games with `reason`, its detail containing `detail`, the
/// opponent winning each.
fn loses_both(bot: &dyn Entrant, reason: FinishReason, detail: &str) -> PlayedMatch {
    let opponent = house("tictactoe-random");
    let played = play(Variant::TicTacToe, [bot, &opponent]);
    assert_eq!(played.replay.games.len(), 2, "the match completes");
    for game in &played.replay.games {
        let side = side_of(game, 0);
        assert_eq!(game.reason, reason, "{:?}", game.detail);
        assert_eq!(game.faulted.map(|s| s.index()), Some(side));
        let text = game.detail.clone().unwrap_or_default();
        assert!(text.contains(detail), "{text:?} should mention {detail:?}");
        assert!(game.scores[1 - side] > game.scores[side], "the opponent wins");
    }
    assert_eq!(played.replay.result.winner, Some(1));
    rechecks(&played);
    played
}

/// The replay cannot be re-run but re-checks from its record, and a
/// tampered copy does not.
pub fn rechecks(played: &PlayedMatch) {
    let replay = &played.replay;
    let stand_in = house("tictactoe-random");
    assert!(matches!(
        verify(replay, [&stand_in, &stand_in]),
        Err(VerifyError::NotReproducible)
    ));
    let checked = recheck(replay).expect("the record is consistent");
    assert!(checked > 0);
    // Change the first recorded move into another legal-looking one.
    let mut tampered = replay.clone();
    let turn = tampered
        .games
        .iter_mut()
        .flat_map(|game| game.turns.iter_mut())
        .find(|turn| turn.action.is_some())
        .expect("a move");
    turn.action = Some("somewhere else".to_owned());
    assert!(recheck(&tampered).is_err(), "a changed move is caught");
}

#[test]
fn a_slow_bot_times_out() {
    let server = HttpServer::start(|body| {
        std::thread::sleep(Duration::from_millis(400));
        botsarena_reply(&body)
    });
    let started = Instant::now();
    loses_both(&remote("slow", &server.url), FinishReason::Timeout, "");
    // The first request (init) already times out: 100 ms per turn.
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
}

#[test]
fn a_garbage_reply_is_a_bad_reply() {
    let server = HttpServer::start(|body| {
        if body.contains("\"init\"") {
            json("")
        } else {
            json("hello, referee")
        }
    });
    loses_both(&remote("garbage", &server.url), FinishReason::BadReply, "");
}

#[test]
fn an_http_error_is_a_crash_with_the_status() {
    let server = HttpServer::start(|_| {
        Response::builder()
            .status(StatusCode::INTERNAL_SERVER_ERROR)
            .body("oops".into())
            .expect("response")
    });
    loses_both(
        &remote("failing", &server.url),
        FinishReason::Crash,
        "HTTP 500 from http://127.0.0.1",
    );
}

#[test]
fn a_redirect_is_not_followed() {
    let target = HttpServer::start(|body| botsarena_reply(&body));
    let location = target.url.clone();
    let server = HttpServer::start(move |_| {
        Response::builder()
            .status(StatusCode::FOUND)
            .header("location", location.as_str())
            .body(axum::body::Body::empty())
            .expect("response")
    });
    loses_both(
        &remote("redirecting", &server.url),
        FinishReason::Crash,
        "redirects are not followed",
    );
    assert!(target.requests().is_empty(), "the redirect's target is never called");
}

#[test]
fn a_huge_body_is_refused_without_reading_it() {
    let huge = "x".repeat(10 * 1024 * 1024);
    let server = HttpServer::start(move |_| json(huge.clone()));
    loses_both(
        &remote("huge", &server.url),
        FinishReason::BadReply,
        "longer than 65536 bytes",
    );
}

#[test]
fn a_refused_connection_is_a_crash() {
    let url = format!("http://{}/", closed_port());
    loses_both(&remote("gone", &url), FinishReason::Crash, "cannot connect");
}

#[test]
fn a_pretty_printed_or_empty_answer_is_read() {
    let server = HttpServer::start(|body| {
        let message: Value = serde_json::from_str(&body).expect("JSON");
        if message["action"] == "init" {
            return json("");
        }
        let value: Value = serde_json::from_str(&botsarena_answer(&body)).expect("JSON");
        json(serde_json::to_string_pretty(&value).expect("JSON"))
    });
    let bot = remote("pretty", &server.url);
    let opponent = house("tictactoe-random");
    let played = play(Variant::TicTacToe, [&bot, &opponent]);
    for game in &played.replay.games {
        assert!(
            matches!(game.reason, FinishReason::Line | FinishReason::Draw),
            "{:?}",
            game.detail
        );
    }
}
