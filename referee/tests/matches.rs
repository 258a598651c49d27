//! Whole matches: side swapping, scoring, faults and determinism.

use arbiter_games::othello::Mode;
use arbiter_games::{Budget, FinishReason, Side, Variant};
use arbiter_referee::native::NativeCommand;
use arbiter_referee::replay::Replay;
use arbiter_referee::wasm::bot_seed;
use arbiter_referee::{Entrant, GameSetup, InProcess, MatchSettings, play_match};
use std::sync::Arc;

fn othello_bot(fault: &str, colour: &str) -> NativeCommand {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/bots/othello_first.py");
    NativeCommand::parse(&format!("python3 {script} {fault} {colour}")).expect("command parses")
}

fn play(settings: &MatchSettings, a: &dyn Entrant, b: &dyn Entrant) -> Replay {
    play_match(settings, [a, b]).expect("no host failure").replay
}

/// A house bot run in-process: `random`, `greedy` or `perfect` for the game
/// (skirmish's weakest and strongest bots stand in for them).
fn builtin(variant: Variant, strength: &str) -> Arc<InProcess> {
    let name = match (variant, strength) {
        (Variant::Skirmish, "random") => "skirmish-rush".to_string(),
        (Variant::Skirmish, _) => "skirmish-economy".to_string(),
        _ => format!("{}-{strength}", variant.game()),
    };
    Arc::new(InProcess::new(name.clone(), move |setup: &GameSetup| {
        let rng = arbiter_sdk::Rng::seeded(bot_seed(setup.seed, setup.game_index, setup.side));
        arbiter_bots::answerer(&name, rng).expect("house bot exists")
    }))
}

#[test]
fn every_variant_plays_two_games_with_sides_swapped() {
    for variant in Variant::ALL {
        let settings = MatchSettings::new(variant, 3);
        let replay = play(
            &settings,
            builtin(variant, "random").as_ref(),
            builtin(variant, "random").as_ref(),
        );
        assert_eq!(replay.games.len(), 2, "{variant}");
        assert_eq!(replay.games[0].sides, [0, 1]);
        assert_eq!(replay.games[1].sides, [1, 0]);
        for game in &replay.games {
            assert!(!game.reason.is_fault(), "{variant}: {:?}", game.detail);
        }
        let totals = [
            replay.games[0].scores[0] + replay.games[1].scores[1],
            replay.games[0].scores[1] + replay.games[1].scores[0],
        ];
        assert_eq!(replay.result.totals, totals, "{variant}");
        if let Variant::Othello(mode) = variant {
            let othello = |g: &arbiter_referee::replay::GameRecord| g.record.othello().cloned();
            let openings: Vec<_> = replay.games.iter().map(|g| othello(g).map(|r| r.opening)).collect();
            assert_eq!(openings[0], openings[1], "both legs start from the same opening");
            let opening_moves = othello(&replay.games[0]).map(|r| r.opening_moves.len());
            assert_eq!(opening_moves, Some(if mode == Mode::Reversi { 12 } else { 8 }));
        }
    }
}

#[test]
fn same_seed_gives_identical_replay_bytes() {
    for variant in Variant::ALL {
        let strong = if variant == Variant::TicTacToe {
            "perfect"
        } else {
            "greedy"
        };
        let (a, b) = (builtin(variant, strong), builtin(variant, "random"));
        let settings = MatchSettings::new(variant, 42);
        let first = play(&settings, a.as_ref(), b.as_ref()).to_json();
        let second = play(&settings, a.as_ref(), b.as_ref()).to_json();
        assert_eq!(first, second, "{variant}");
        let other = play(&MatchSettings::new(variant, 43), a.as_ref(), b.as_ref()).to_json();
        if variant != Variant::TicTacToe {
            assert_ne!(first, other, "{variant}: another seed gives another match");
        }
        assert_eq!(Replay::from_json(&first).expect("reads back").to_json(), first);
    }
}

#[test]
fn a_perfect_tictactoe_player_never_loses() {
    let variant = Variant::TicTacToe;
    for seed in 0..20 {
        let replay = play(
            &MatchSettings::new(variant, seed),
            builtin(variant, "perfect").as_ref(),
            builtin(variant, "random").as_ref(),
        );
        assert_ne!(replay.result.winner, Some(1), "seed {seed}");
    }
}

/// An in-process bot that answers every request with `reply`.
fn constant(reply: &'static str) -> InProcess {
    InProcess::new("constant", move |_: &GameSetup| {
        Box::new(move |_: &str| reply.to_string())
    })
}

#[test]
fn in_process_faults_cost_the_game_with_the_right_reason() {
    let variant = Variant::TicTacToe;
    let cases = [
        (r#"{"play":"9-9"}"#, FinishReason::BadReply, "not a cell"),
        ("not json", FinishReason::BadReply, "not JSON"),
        (r#"{"name":"x"}"#, FinishReason::BadReply, "no `play` field"),
        (r#"{"play":"1-1"}"#, FinishReason::IllegalMove, "1-1 is taken"),
    ];
    for (reply, reason, words) in cases {
        let replay = play(
            &MatchSettings::new(variant, 1),
            &constant(reply),
            builtin(variant, "random").as_ref(),
        );
        for game in &replay.games {
            // Participant 0 is `constant`: X in game 0, O in game 1.
            let constant_side = if game.index == 0 { Side::First } else { Side::Second };
            assert_eq!(game.faulted, Some(constant_side), "{reply}: {:?}", game.detail);
            assert_eq!(game.reason, reason, "{reply}");
            assert!(
                game.detail.as_deref().unwrap_or("").contains(words),
                "{reply}: {:?}",
                game.detail
            );
            assert_eq!(game.scores[constant_side.index()], 0);
            assert_eq!(game.turns.last().and_then(|t| t.fault), Some(reason));
        }
        assert_eq!(replay.result.winner, Some(1));
    }
}

fn native_settings() -> MatchSettings {
    let mut settings = MatchSettings::new(Variant::Othello(Mode::Std), 5);
    settings.budget = Budget {
        turn_ms: 3_000,
        bank_ms: 60_000,
    };
    settings
}

#[test]
fn a_faulty_native_bot_loses_exactly_its_own_leg() {
    let cases = [
        ("crash", FinishReason::Crash),
        ("hang", FinishReason::Timeout),
        ("garbage", FinishReason::BadReply),
        ("illegal", FinishReason::IllegalMove),
        ("exit", FinishReason::Crash),
        ("pass", FinishReason::IllegalMove),
    ];
    let threads: Vec<_> = cases
        .into_iter()
        .map(|(fault, reason)| {
            std::thread::spawn(move || {
                let settings = native_settings();
                // Misbehaves only as black: participant 0 is black in leg 0.
                let faulty = othello_bot(fault, "black");
                let honest = othello_bot("none", "black");
                let replay = play(&settings, &faulty, &honest);
                let leg0 = &replay.games[0];
                assert_eq!(leg0.reason, reason, "{fault}: {:?}", leg0.detail);
                assert_eq!(leg0.faulted, Some(Side::First), "{fault}");
                assert_eq!(leg0.scores, [0, 64], "{fault}: result_discs [loser, winner]");
                let leg1 = &replay.games[1];
                assert_eq!(leg1.reason, FinishReason::Discs, "{fault}: the other leg is played out");
                assert_eq!(leg1.faulted, None);
                assert!(!replay.reproducible, "native bots run on wall-clock time");
                reason
            })
        })
        .collect();
    for thread in threads {
        thread.join().expect("case passed");
    }
}

#[test]
fn a_native_bot_that_cannot_start_loses_both_games() {
    let missing = NativeCommand::parse("/nonexistent/bot --flag").expect("parses");
    let variant = Variant::Othello(Mode::Std);
    let replay = play(
        &MatchSettings::new(variant, 1),
        &missing,
        builtin(variant, "random").as_ref(),
    );
    for game in &replay.games {
        assert_eq!(game.reason, FinishReason::Crash);
        assert!(
            game.detail.as_deref().unwrap_or("").contains("cannot start"),
            "{:?}",
            game.detail
        );
    }
    assert_eq!(replay.result.winner, Some(1));
}

#[test]
fn an_honest_native_bot_plays_whole_legs_and_sees_its_history() {
    let settings = native_settings();
    let replay = play(
        &settings,
        &othello_bot("none", "black"),
        builtin(settings.variant, "greedy").as_ref(),
    );
    for game in &replay.games {
        assert_eq!(game.reason, FinishReason::Discs);
        let native_side = if game.index == 0 { Side::First } else { Side::Second };
        let native_turns: Vec<_> = game.turns.iter().filter(|t| t.side == native_side).collect();
        assert!(native_turns.len() > 10);
        assert!(native_turns.iter().all(|t| t.spent.us > 0 && t.spent.fuel.is_none()));
    }
}

/// Replays written before the per-game record was typed, committed under
/// `tests/replays/`: the same match must still give these bytes, and the
/// stored bytes must read back and write out unchanged (stored replays are
/// verified byte for byte). `ARBITER_BLESS_REPLAYS=1` rewrites them, for a
/// deliberate change of the format only.
#[test]
fn replays_keep_their_bytes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/replays");
    let bless = std::env::var_os("ARBITER_BLESS_REPLAYS").is_some();
    // A whole skirmish is megabytes of ticks: here the rush bot stops making
    // sense after 60 ticks, which ends each game with its record so far.
    let short_rush = Arc::new(InProcess::new("skirmish-rush-60", |setup: &GameSetup| {
        let rng = arbiter_sdk::Rng::seeded(bot_seed(setup.seed, setup.game_index, setup.side));
        let mut rush = arbiter_bots::answerer("skirmish-rush", rng).expect("house bot exists");
        let mut replies = 0;
        Box::new(move |request: &str| {
            replies += 1;
            if replies > 60 {
                "no more".to_owned()
            } else {
                rush(request)
            }
        })
    }));
    for (file, variant, strong) in [
        ("tictactoe.json", Variant::TicTacToe, "perfect"),
        ("othello-std.json", Variant::Othello(Mode::Std), "greedy"),
        ("skirmish.json", Variant::Skirmish, "greedy"),
    ] {
        let a = builtin(variant, strong);
        let b = if variant == Variant::Skirmish {
            short_rush.clone()
        } else {
            builtin(variant, "random")
        };
        let played = play(&MatchSettings::new(variant, 7), a.as_ref(), b.as_ref()).to_json();
        let path = dir.join(file);
        if bless {
            std::fs::create_dir_all(&dir).expect("the replays folder");
            std::fs::write(&path, &played).expect("a golden replay written");
        }
        let stored = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        // Only the program's version may differ (it names the engine).
        let engine = |bytes: &[u8]| Replay::from_json(bytes).map(|r| r.engine).unwrap_or_default();
        let expected = String::from_utf8_lossy(&stored).replacen(
            &format!("\"engine\": \"{}\"", engine(&stored)),
            &format!("\"engine\": \"{}\"", engine(&played)),
            1,
        );
        assert!(
            played == expected.as_bytes(),
            "{file}: the same match no longer gives the stored bytes"
        );
        let read = Replay::from_json(&stored).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert!(
            read.to_json() == stored,
            "{file}: the stored replay does not write out unchanged"
        );
        for game in &read.games {
            let typed = match variant {
                Variant::TicTacToe => game.record.tictactoe().is_some(),
                Variant::Othello(_) => game.record.othello().is_some(),
                Variant::Skirmish => game.record.skirmish().is_some(),
            };
            assert!(typed, "{file}: game {} is read as its game's record", game.index);
        }
    }
}

/// A record of no known shape (another version's) still loads, is kept as
/// it was and writes out byte for byte.
#[test]
fn a_record_of_another_shape_loads_and_keeps_its_bytes() {
    use arbiter_referee::replay::GameSpecificRecord;
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/replays/othello-std.json");
    let stored = String::from_utf8(std::fs::read(path).expect("the golden Othello replay")).expect("UTF-8");
    // A key that sorts where `transcript` did, as stored keys are in name order.
    let renamed = stored.replacen("\"transcript\"", "\"transcript_of_old\"", 1);
    assert_ne!(renamed, stored);
    let read = Replay::from_json(renamed.as_bytes()).expect("loads");
    assert!(matches!(read.games[0].record, GameSpecificRecord::Unread(_)));
    assert!(read.games[1].record.othello().is_some());
    assert_eq!(read.games[0].record.transcript(), None);
    assert!(read.to_json() == renamed.as_bytes(), "writes out unchanged");
}

/// A replay verifies with the program that refereed it; one refereed by
/// another engine (another version or fuel schedule) is refused as such,
/// not reported as a different game.
#[test]
fn a_replay_of_another_engine_is_told_apart_from_a_different_game() {
    use arbiter_referee::verify::{VerifyError, verify};
    let variant = Variant::TicTacToe;
    let (a, b) = (builtin(variant, "perfect"), builtin(variant, "random"));
    let mut replay = play(&MatchSettings::new(variant, 11), a.as_ref(), b.as_ref());
    assert_eq!(replay.engine, arbiter_referee::engine());
    assert!(
        replay
            .engine
            .contains(&format!("fuel schedule {}", arbiter_sandbox::FUEL_SCHEDULE))
    );
    verify(&replay, [a.as_ref(), b.as_ref()]).expect("the same program re-runs it");
    replay.engine = "arbiter 0.1.0".to_owned();
    match verify(&replay, [a.as_ref(), b.as_ref()]) {
        Err(VerifyError::OtherEngine { recorded, current }) => {
            assert_eq!(
                (recorded.as_str(), current),
                ("arbiter 0.1.0", arbiter_referee::engine())
            );
        }
        other => panic!("{other:?}"),
    }
}
