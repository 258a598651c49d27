//! Skirmish under the referee: hostile bots in the sandbox are handled as
//! `docs/spec/skirmish.md` says, each losing at most its own game and
//! never disturbing the other side; house-bot matches verify from their
//! records and give the same bytes under any load.
//!
//! The hostile bots are a small std-only crate (`tests/skirmish-bots`)
//! built for `wasm32-wasip1` once per run.

use std::path::PathBuf;
use std::sync::OnceLock;

use arbiter_games::skirmish::{Reason, TICK_LIMIT};
use arbiter_games::{Budget, FinishReason, Variant};
use arbiter_referee::replay::GameRecord;
use arbiter_referee::skirmish::SkirmishRecord;
use arbiter_referee::verify::{check_records, verify};
use arbiter_referee::wasm::bot_seed;
use arbiter_referee::{Entrant, GameSetup, InProcess, MatchSettings, PlayedMatch, WasmBot, play_match};
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};

#[path = "common/load.rs"]
mod load;
#[path = "common/skirmish_bots.rs"]
mod skirmish_bots;

use load::while_cpu_saturated;

/// Fuel per virtual millisecond for the hostile matches: a hundredth of the
/// default, so that bots that burn their whole budget every tick for 3 000
/// ticks cost seconds, not minutes. Budgets are virtual time: the rules of
/// the match do not change.
const CHEAP_FUEL_PER_MS: u64 = 100_000;

/// The house bot the hostile ones play against, in-process.
const OPPONENT: &str = "skirmish-economy";

fn sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        let cache = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skirmish-compiled");
        let _ = std::fs::remove_dir_all(&cache);
        std::fs::create_dir_all(&cache).expect("the target folder is writable");
        Sandbox::new(SandboxConfig {
            compiler: CompilerCommand::embedded_in(env!("CARGO_BIN_EXE_arbiter")),
            cache_dir: Some(cache),
            instance_slots: 16,
            ..SandboxConfig::default()
        })
        .expect("sandbox")
    })
}

fn hostile(name: &str) -> WasmBot {
    let wasm = skirmish_bots::wasm(name);
    let module = sandbox().load(&wasm).expect("the test bot loads");
    WasmBot::new(sandbox().clone(), module, name)
}

fn house(name: &str) -> WasmBot {
    let bot = arbiter_house::find(name).expect("a house bot");
    let module = sandbox().load(bot.wasm()).expect("a house bot loads");
    WasmBot::new(sandbox().clone(), module, name)
}

/// A house bot in-process: it costs no fuel and is never late.
fn in_process(name: &'static str) -> InProcess {
    InProcess::new(name, move |setup: &GameSetup| {
        let rng = arbiter_sdk::Rng::seeded(bot_seed(setup.seed, setup.game_index, setup.side));
        arbiter_bots::answerer(name, rng).expect("a house bot")
    })
}

fn settings(seed: u64, fuel_per_ms: u64) -> MatchSettings {
    MatchSettings {
        fuel_per_ms: Some(fuel_per_ms),
        standard_opening: false,
        match_id: seed,
        ..MatchSettings::new(Variant::Skirmish, seed)
    }
}

fn play(settings: &MatchSettings, a: &dyn Entrant, b: &dyn Entrant) -> PlayedMatch {
    play_match(settings, [a, b]).expect("no host failure")
}

fn record(game: &GameRecord) -> SkirmishRecord {
    SkirmishRecord::from_game(game).expect("a skirmish record").clone()
}

/// The side participant 0 played in `game`.
fn side_of_first(game: &GameRecord) -> usize {
    usize::from(game.sides[0] != 0)
}

/// One tick of one side: (tick, accepted orders, rejections as (index,
/// reason), skipped).
type SideTick = (u32, usize, Vec<(u32, Reason)>, bool);

/// Every tick of participant 0 in `played`.
fn first_ticks(played: &PlayedMatch) -> Vec<SideTick> {
    let mut out = Vec::new();
    for game in &played.replay.games {
        let side = side_of_first(game);
        for tick in &record(game).game.ticks {
            let taken = &tick.sides[side];
            let rejected = taken.rejected.iter().map(|r| (r.index, r.reason)).collect();
            out.push((tick.tick, taken.accepted.len(), rejected, taken.skipped));
        }
    }
    out
}

/// The opponent (participant 1) was never skipped, never faulted.
fn assert_opponent_unharmed(played: &PlayedMatch, what: &str) {
    for game in &played.replay.games {
        let record = record(game);
        let side = 1 - side_of_first(game);
        assert_eq!(record.skipped[side], 0, "{what}: the opponent lost no tick");
        assert_ne!(
            game.faulted.map(|s| s.index()),
            Some(side),
            "{what}: the opponent did not fault"
        );
    }
}

#[test]
fn ten_thousand_actions_a_tick_are_read_only_up_to_32() {
    let flood = hostile("flood");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(1, 1_000_000), &flood, &opponent);
    let ticks = first_ticks(&played);
    assert!(ticks.len() > 100, "{} ticks", ticks.len());
    for (tick, accepted, rejected, skipped) in ticks {
        assert!(!skipped, "tick {tick}: the flood answered in time");
        assert_eq!(accepted, 0, "tick {tick}: the train order at index 33 was never read");
        let expected: Vec<(u32, Reason)> = (0..32).map(|i| (i, Reason::BadAction)).collect();
        assert_eq!(
            rejected, expected,
            "tick {tick}: exactly the first 32 are read, each rejected"
        );
    }
    for game in &played.replay.games {
        assert!(!game.reason.is_fault(), "{} {:?}", game.reason, game.detail);
    }
    assert_opponent_unharmed(&played, "flood");
}

#[test]
fn orders_for_units_it_does_not_own_are_rejected_as_not_owner() {
    let bot = hostile("enemy_orders");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(2, 1_000_000), &bot, &opponent);
    let mut rejected_in_all = 0;
    for (tick, accepted, rejected, _) in first_ticks(&played) {
        assert_eq!(accepted, 0, "tick {tick}: no order for another's unit is accepted");
        assert!(
            rejected.iter().all(|(_, reason)| *reason == Reason::NotOwner),
            "tick {tick}: {rejected:?}"
        );
        rejected_in_all += rejected.len();
    }
    assert!(rejected_in_all > 1000, "{rejected_in_all}");
    assert_opponent_unharmed(&played, "enemy orders");
}

#[test]
fn unknown_orders_and_codes_are_rejected_one_by_one() {
    let bot = hostile("unknown_codes");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(3, 1_000_000), &bot, &opponent);
    let mut seen = std::collections::BTreeSet::new();
    for (tick, accepted, rejected, _) in first_ticks(&played) {
        assert_eq!(accepted, 0, "tick {tick}");
        for (_, reason) in rejected {
            seen.insert(reason.as_str());
        }
    }
    assert_eq!(
        seen.into_iter().collect::<Vec<_>>(),
        ["unknown_code", "unknown_order"],
        "every action is rejected for its unknown order or code"
    );
    for game in &played.replay.games {
        assert!(!game.reason.is_fault(), "{} {:?}", game.reason, game.detail);
    }
}

#[test]
fn targets_out_of_vision_are_rejected() {
    let bot = hostile("out_of_vision");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(4, 1_000_000), &bot, &opponent);
    for (tick, _, rejected, skipped) in first_ticks(&played) {
        assert!(!skipped, "tick {tick}");
        let out_of_vision = rejected.iter().filter(|(_, r)| *r == Reason::OutOfVision).count();
        // The attack on an unknown id and the tree in the far corner, at least.
        assert!(out_of_vision >= 2, "tick {tick}: {rejected:?}");
    }
}

#[test]
fn a_reply_over_64_kib_loses_the_game_as_a_bad_reply() {
    let bot = hostile("huge");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(5, 1_000_000), &bot, &opponent);
    for game in &played.replay.games {
        assert_eq!(game.reason, FinishReason::BadReply);
        assert_eq!(game.faulted.map(|s| s.index()), Some(side_of_first(game)));
        assert!(
            game.detail.as_deref().is_some_and(|d| d.contains("65536")),
            "{:?}",
            game.detail
        );
        assert!(record(game).game.ticks.is_empty(), "lost at tick 0");
    }
    assert_eq!(played.replay.result.winner, Some(1));
}

#[test]
fn late_replies_skip_their_ticks_and_the_bot_catches_up() {
    let bot = hostile("late");
    let opponent = in_process(OPPONENT);
    let played = play(&settings(6, 1_000_000), &bot, &opponent);
    for game in &played.replay.games {
        let record = record(game);
        let side = side_of_first(game);
        let ticks = record.game.ticks.len() as u32;
        // Every third tick is late; the next one begins with the stale
        // reply, dropped, and is answered in time.
        let skipped: Vec<u32> = record
            .game
            .ticks
            .iter()
            .filter(|t| t.sides[side].skipped)
            .map(|t| t.tick)
            .collect();
        assert!(skipped.iter().all(|t| t % 3 == 0), "{skipped:?}");
        assert!(
            skipped.len() as u32 >= ticks / 3 - 1,
            "{} of {ticks} skipped",
            skipped.len()
        );
        assert_eq!(
            record.stale[side] as usize,
            skipped.len(),
            "every late reply came and was dropped"
        );
        assert!(!game.reason.is_fault(), "{} {:?}", game.reason, game.detail);
    }
    assert_opponent_unharmed(&played, "late");
}

/// A bot that burns ten times its budget every tick, and one that never
/// answers, only lose their own ticks: the other side's game is the very
/// game it plays against a bot that answers nothing at once.
#[test]
fn slow_and_silent_bots_lose_only_their_own_ticks() {
    let opponent = in_process(OPPONENT);
    let cheap = settings(7, CHEAP_FUEL_PER_MS);
    let idle = play(&cheap, &hostile("idle"), &opponent);
    for name in ["burner", "silent"] {
        let played = play(&cheap, &hostile(name), &opponent);
        for (game, baseline) in played.replay.games.iter().zip(&idle.replay.games) {
            let (record, baseline) = (record(game), record(baseline));
            let side = side_of_first(game);
            assert!(!game.reason.is_fault(), "{name}: {} {:?}", game.reason, game.detail);
            assert_eq!(game.scores, baseline.game.outcome.map_or([0, 0], |o| o.scores));
            let answered = record.game.ticks.len() as u32 - record.skipped[side];
            assert!(
                answered * 10 <= record.game.ticks.len() as u32,
                "{name}: answered {answered} of {} ticks",
                record.game.ticks.len()
            );
            assert_eq!(record.skipped[1 - side], 0, "{name}: the opponent lost no tick");
            assert_eq!(record.game.ticks.len(), baseline.game.ticks.len(), "{name}");
            for (tick, base) in record.game.ticks.iter().zip(&baseline.game.ticks) {
                assert_eq!(
                    tick.sides[1 - side],
                    base.sides[1 - side],
                    "{name}: tick {}: the opponent played as against an idle bot",
                    tick.tick
                );
                assert!(tick.sides[side].accepted.is_empty(), "{name}: tick {}", tick.tick);
            }
        }
        if name == "silent" {
            let record = record(&played.replay.games[0]);
            assert_eq!(
                record.skipped[side_of_first(&played.replay.games[0])],
                record.game.ticks.len() as u32
            );
        }
    }
}

/// Every pair of house skirmish bots, sandboxed at the ladder's fuel rate:
/// the match verifies from its records (every digest) and by re-running
/// it, and the same match with both cores saturated gives the same bytes.
#[test]
fn house_skirmish_matches_verify_and_do_not_depend_on_load() {
    let names: Vec<&str> = arbiter_house::ALL
        .iter()
        .filter(|bot| bot.plays(Variant::Skirmish))
        .map(|bot| bot.name)
        .collect();
    assert!(names.len() >= 3, "{names:?}");
    let settings = MatchSettings {
        fuel_per_ms: Some(sandbox().config().fuel_per_ms),
        standard_opening: false,
        budget: Budget::new(20, 1_000),
        ..MatchSettings::new(Variant::Skirmish, 11)
    };
    for (i, a) in names.iter().enumerate() {
        let b = names[(i + 1) % names.len()];
        let (a, b) = (house(a), house(b));
        let started = std::time::Instant::now();
        let played = play(&settings, &a, &b);
        let idle_time = started.elapsed();
        let replay = &played.replay;
        let ticks = check_records(replay).expect("the records re-simulate");
        assert!(ticks > 0);
        for game in &replay.games {
            assert!(game.faulted.is_none(), "{} {:?}", game.reason, game.detail);
            assert!(record(game).game.ticks.len() <= TICK_LIMIT as usize);
        }
        verify(replay, [&a, &b]).expect("a re-run gives the same replay");
        let started = std::time::Instant::now();
        let loaded = while_cpu_saturated(2, || play(&settings, &a, &b));
        println!(
            "{} vs {}: {ticks} ticks, {:.2} s idle, {:.2} s loaded, replay {} bytes",
            replay.participants[0].name,
            replay.participants[1].name,
            idle_time.as_secs_f64(),
            started.elapsed().as_secs_f64(),
            replay.to_json().len()
        );
        assert!(loaded.replay.to_json() == replay.to_json(), "the same bytes under load");
    }
}
