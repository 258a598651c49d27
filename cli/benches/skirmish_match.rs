//! Skirmish under the referee on the 48×48 map (`skirmish:standard`):
//! simulated ticks per second with two idle bots and with two house bots,
//! in-process and sandboxed, against the rules alone measured in the same
//! run; and the real time of whole sandboxed matches, 3 000 ticks a game.
//!
//! `cargo bench -p arbiter --bench skirmish_match`

use std::time::{Duration, Instant};

#[path = "../tests/common/skirmish_bots.rs"]
mod skirmish_bots;

use arbiter_games::Variant;
use arbiter_games::skirmish::{Map, Skirmish};
use arbiter_referee::skirmish::SkirmishRecord;
use arbiter_referee::wasm::bot_seed;
use arbiter_referee::{Entrant, GameSetup, InProcess, MatchSettings, WasmBot, play_match};
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};

const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
/// The house pair: the two strongest (economy builds up, defence holds).
const HOUSE: [&str; 2] = ["skirmish-economy", "skirmish-defence"];

/// One measured form: ticks simulated (both games) and the real time.
struct Measure {
    name: String,
    ticks: u64,
    time: Duration,
}

impl Measure {
    fn per_second(&self) -> f64 {
        self.ticks as f64 / self.time.as_secs_f64()
    }
}

/// Plays `runs` matches and sums the ticks of their games.
fn measure(name: &str, runs: u32, entrants: [&dyn Entrant; 2], settings: &MatchSettings) -> Measure {
    let mut ticks = 0;
    let started = Instant::now();
    for _ in 0..runs {
        let played = play_match(settings, entrants).expect("no host failure");
        for game in &played.replay.games {
            let record = SkirmishRecord::from_game(game).expect("a skirmish record");
            ticks += record.game.ticks.len() as u64;
        }
    }
    Measure {
        name: name.to_string(),
        ticks,
        time: started.elapsed(),
    }
}

fn idle_in_process() -> InProcess {
    InProcess::new("idle", |_: &GameSetup| {
        // Reads only the tick, as the sandboxed idle bot does.
        Box::new(|line: &str| {
            let tick: String = line
                .split_once("\"tick\":")
                .map(|(_, rest)| rest.chars().take_while(char::is_ascii_digit).collect())
                .unwrap_or_default();
            format!(r#"{{"t":"act","tick":{tick},"actions":[]}}"#)
        })
    })
}

fn house_in_process(name: &'static str) -> InProcess {
    InProcess::new(name, move |setup: &GameSetup| {
        // The stream the sandboxed bot draws: the same games both ways.
        let rng = arbiter_sdk::Rng::as_sandboxed(bot_seed(setup.seed, setup.game_index, setup.side));
        arbiter_bots::answerer(name, rng).expect("a house bot")
    })
}

fn main() {
    let sandbox = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new(ARBITER, ["__compile-module"]),
        ..Default::default()
    })
    .expect("the sandbox starts");
    let settings = MatchSettings {
        fuel_per_ms: Some(sandbox.config().fuel_per_ms),
        standard_opening: false,
        ..MatchSettings::new(Variant::Skirmish, 1)
    };
    println!(
        "skirmish benchmark: {} ({}×{}), {} ms per tick, {} fuel per ms",
        Variant::SKIRMISH_MAP,
        48,
        48,
        settings.budget.turn_ms,
        sandbox.config().fuel_per_ms
    );

    // The floor: the rules alone, nobody asked.
    let map = Map::builtin(Variant::SKIRMISH_MAP).expect("the built-in map");
    let started = Instant::now();
    let mut ticks = 0u64;
    for _ in 0..10 {
        let mut game = Skirmish::new(map.clone(), 0);
        while game.step([None, None]).is_some() {}
        ticks += u64::from(game.tick());
    }
    let rules = Measure {
        name: "rules alone (no bots)".into(),
        ticks,
        time: started.elapsed(),
    };

    let idle = idle_in_process();
    let in_process_idle = measure("in-process, idle bots", 3, [&idle, &idle], &settings);
    let house = [house_in_process(HOUSE[0]), house_in_process(HOUSE[1])];
    let in_process_house = measure("in-process, house bots", 3, [&house[0], &house[1]], &settings);

    let idle_module = sandbox.load(&skirmish_bots::wasm("idle")).expect("the idle bot loads");
    let idle_bot = WasmBot::new(sandbox.clone(), idle_module, "idle");
    let sandboxed_idle = measure("sandboxed, idle bots", 2, [&idle_bot, &idle_bot], &settings);
    let house_bots = HOUSE.map(|name| {
        let bot = arbiter_house::find(name).expect("a house bot");
        WasmBot::new(sandbox.clone(), sandbox.load(bot.wasm()).expect("loads"), name)
    });
    let sandboxed_house = measure("sandboxed, house bots", 2, [&house_bots[0], &house_bots[1]], &settings);

    println!(
        "{:<28} {:>8} {:>10} {:>12} {:>10}",
        "form", "ticks", "time", "ticks/s", "vs rules"
    );
    for m in [
        &rules,
        &in_process_idle,
        &in_process_house,
        &sandboxed_idle,
        &sandboxed_house,
    ] {
        println!(
            "{:<28} {:>8} {:>9.2}s {:>12.0} {:>9.1}x",
            m.name,
            m.ticks,
            m.time.as_secs_f64(),
            m.per_second(),
            rules.per_second() / m.per_second()
        );
    }
    let per_match = |m: &Measure, runs: u32| m.time.as_secs_f64() / f64::from(runs);
    println!(
        "real time of one sandboxed match (two games): idle bots {:.2} s ({} ticks a game), house bots {:.2} s ({} ticks a game)",
        per_match(&sandboxed_idle, 2),
        sandboxed_idle.ticks / 4,
        per_match(&sandboxed_house, 2),
        sandboxed_house.ticks / 4
    );
}
