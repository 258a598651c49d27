//! The same bot in four player forms, side by side.
//!
//! House bot `othello-greedy` (it parses the whole Othello request, 0.4 to
//! 3 KB as the move history grows, every move) runs
//!
//! 1. in-process, natively (`arbiter_bots::answerer` behind `InProcess`),
//! 2. sandboxed (the house wasm module through `arbiter_sandbox`, as a
//!    `WasmBot`),
//! 3. as a native subprocess per game (`arbiter __house-bot othello-greedy`
//!    behind `NativeCommand`),
//! 4. as a native subprocess per move (the same with `--once`: the native
//!    player restarts the bot for every turn).
//!
//! For each form it measures (a) the per-turn round trip over the requests of
//! one recorded game (fresh players each game, so starting them is amortised
//! over the game's turns), (b) full-match throughput of `play_match` with both
//! participants in that form, and for the sandbox (c) instantiating a loaded
//! module and loading a cached one. It prints a table, ratios against the
//! in-process baseline of the same run, and whether each target is met.
//! (d) repeats the per-turn comparison for three bots whose turns do
//! different work (parsing only, parsing and a little play, a search), since
//! the sandbox's relative cost depends on it. (e) splits the sandboxed turn:
//! the same module under a bare host (`players/bare.rs`) without and with
//! fuel metering, so that the compiled code's share, metering's share and
//! the sandbox host's share can be told apart.
//!
//! Run with `cargo bench -p arbiter --bench players` (30 to 60 s after
//! the build); add `-- sandboxed` (any words) to measure only the forms whose
//! name contains one of them, plus the baseline. Timing is a hand-rolled
//! wall-clock loop: one warm-up run, then the median (and 10th percentile) of
//! the timed runs. Wall-clock figures on a busy machine are noisy; the run
//! prints the load average so a reader can tell. Nothing here asserts on time.
//!
//! Build profiles differ on purpose: everything here, the in-process bot and
//! the sandbox's host included, is built with the bench profile (as the
//! `arbiter` binary is with release), while the house modules are built with
//! fat LTO and one codegen unit (`profile.house-bots`). To compare the bot's
//! code under the same optimiser on both sides, build the bench like the
//! modules: `CARGO_PROFILE_BENCH_LTO=fat CARGO_PROFILE_BENCH_CODEGEN_UNITS=1`.
//! That makes the in-process bot about 5% faster and the host about 0.1 µs
//! a turn faster.

use std::hint::black_box;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arbiter_games::Variant;
use arbiter_games::othello::{Mode, Move, Request, parse_reply};
use arbiter_referee::native::NativeCommand;
use arbiter_referee::wasm::{CLOCK_ORIGIN_NS, bot_seed};
use arbiter_referee::{Entrant, GameSetup, InProcess, MatchSettings, Player, WasmBot, play_match};
use arbiter_sandbox::{BotEnv, BotModule, CompilerCommand, DEFAULT_FUEL_PER_MS, Sandbox, SandboxConfig};
use arbiter_sdk::Rng;

#[path = "players/bare.rs"]
mod bare;

/// The bot every form runs.
const BOT: &str = "othello-greedy";
/// The match seed of the recorded game and of every benchmarked match.
const SEED: u64 = 2026;
/// Othello's per-move cap, as the referee hands it to a player.
const TURN_BUDGET_US: u64 = 10_000_000;

/// Targets, checked (and reported, never asserted) at the end.
const TARGET_SANDBOX_VS_IN_PROCESS: f64 = 2.5;
const TARGET_PER_GAME_VS_SANDBOX: f64 = 5.0;
const TARGET_INSTANTIATE_US: f64 = 50.0;

/// The arbiter binary: runs the native house bot and compiles modules.
const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");

fn main() {
    // `-- WORD...` measures only the forms whose name contains a WORD (the
    // in-process baseline always); cargo's own `--bench` flag is skipped.
    let filters: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    let selected = |name: &str| filters.is_empty() || filters.iter().any(|word| name.contains(word.as_str()));

    let variant: Variant = "othello:std".parse().expect("othello:std is a variant");
    let house = arbiter_house::find(BOT).expect("othello-greedy is a house bot");
    println!("players benchmark: {BOT} on {variant}, match seed {SEED}");
    let load_before = load_average();

    // The sandbox, its compiler child being the arbiter binary.
    let sandbox = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new(ARBITER, ["__compile-module"]),
        ..Default::default()
    })
    .expect("the sandbox starts");
    let started = Instant::now();
    let module = sandbox.load(house.wasm()).expect("the house module loads");
    let first_load = started.elapsed();

    let forms = [
        Form {
            name: IN_PROCESS,
            entrant: in_process(BOT),
            turn_games: Runs::new(3, 2000, Duration::from_secs(3)),
            matches: Runs::new(3, 1000, Duration::from_secs(4)),
        },
        Form {
            name: SANDBOXED,
            entrant: Arc::new(WasmBot::new(sandbox.clone(), module.clone(), format!("house:{BOT}"))),
            turn_games: Runs::new(3, 2000, Duration::from_secs(4)),
            matches: Runs::new(3, 1000, Duration::from_secs(6)),
        },
        Form {
            name: PER_GAME,
            entrant: native(false),
            turn_games: Runs::new(3, 500, Duration::from_secs(6)),
            matches: Runs::new(2, 300, Duration::from_secs(6)),
        },
        Form {
            name: PER_MOVE,
            entrant: native(true),
            turn_games: Runs::new(1, 20, Duration::from_secs(4)),
            matches: Runs::new(1, 12, Duration::from_secs(5)),
        },
    ];

    let game = record_game(variant, BOT);
    let sizes = game.iter().map(|turn| turn.request.len());
    let (shortest, longest) = (sizes.clone().min().unwrap_or(0), sizes.max().unwrap_or(0));
    println!(
        "recorded game: leg 0 of an in-process match, {} turns, requests {shortest}–{longest} bytes",
        game.len()
    );

    let mut results = Vec::new();
    for form in forms
        .iter()
        .filter(|form| form.name == IN_PROCESS || selected(form.name))
    {
        let started = Instant::now();
        let turns = measure_turns(&*form.entrant, &game, form.turn_games);
        let matches = measure_matches(&*form.entrant, variant, form.matches);
        eprintln!("measured {} in {:.1} s", form.name, started.elapsed().as_secs_f64());
        results.push(FormResult {
            name: form.name,
            turns,
            matches,
        });
    }
    let cache = selected(SANDBOXED).then(|| {
        let started = Instant::now();
        let cache = measure_cache(&sandbox, &module, house.wasm(), &game[0].request);
        eprintln!(
            "measured the sandbox's instantiation and caches in {:.1} s",
            started.elapsed().as_secs_f64()
        );
        cache
    });

    report(&results, cache.as_ref(), first_load, house.wasm().len());
    if selected(SANDBOXED) {
        let started = Instant::now();
        let workloads = measure_workloads(&sandbox, variant);
        eprintln!("measured the workloads in {:.1} s", started.elapsed().as_secs_f64());
        report_workloads(&workloads);
        let started = Instant::now();
        let breakdown = [false, true].map(|fuel| measure_bare(house.wasm(), &game, fuel));
        eprintln!("measured the bare host in {:.1} s", started.elapsed().as_secs_f64());
        report_breakdown(&results, &breakdown);
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    if let (Some(before), Some(after)) = (load_before, load_average()) {
        println!();
        println!("load average {before} before, {after} after, on {cores} cores");
        if before.max(after) > cores as f64 {
            println!("  the machine was busy: wall-clock figures are noisy, compare within one run only");
        }
    }
}

/// (e): the recorded game under the bare host, both sides' modules started
/// fresh each game as in (a).
struct BareStats {
    fuel: bool,
    /// Median over games of (whole game ÷ turns), µs.
    amortised_us: f64,
    games: usize,
    /// Replies that are missing or not a legal move.
    bad: usize,
    fault: Option<String>,
}

fn measure_bare(wasm: &[u8], game: &[Turn], fuel: bool) -> BareStats {
    let host = bare::BareHost::new(wasm, fuel).expect("the module compiles under the bare host");
    let stdin = [0u8, 1].map(|side| {
        let mut bytes = Vec::new();
        for turn in game.iter().filter(|turn| turn.side == side) {
            bytes.extend_from_slice(turn.request.as_bytes());
            bytes.push(b'\n');
        }
        bytes
    });
    let n = game.len().max(1) as f64;
    // Replies are checked within the timing, as `replay_game` does.
    let runs = Runs::new(3, 2000, Duration::from_secs(3)).run(|| {
        let start = Instant::now();
        let mut bad = 0;
        let mut fault = None;
        for (side, input) in stdin.iter().enumerate() {
            let out = match host.run(input) {
                Ok(out) => String::from_utf8_lossy(&out).into_owned(),
                Err(error) => {
                    bad += 1;
                    fault = Some(format!("{error:#}"));
                    continue;
                }
            };
            let mut lines = out.lines();
            for turn in game.iter().filter(|turn| usize::from(turn.side) == side) {
                if !lines.next().is_some_and(|line| legal_reply(turn, line)) {
                    bad += 1;
                    fault = Some(format!("side {side}: a missing or illegal reply"));
                }
            }
        }
        (start.elapsed(), bad, fault)
    });
    BareStats {
        fuel,
        amortised_us: median(runs.iter().map(|(whole, _, _)| micros(*whole) / n)),
        games: runs.len(),
        bad: runs.iter().map(|(_, bad, _)| bad).sum(),
        fault: runs.iter().rev().find_map(|(_, _, fault)| fault.clone()),
    }
}

fn report_breakdown(results: &[FormResult], bare: &[BareStats]) {
    let turn_of = |name: &str| results.iter().find(|r| r.name == name).map(|r| r.turns.amortised_us);
    let (Some(baseline), Some(sandboxed)) = (turn_of(IN_PROCESS), turn_of(SANDBOXED)) else {
        return;
    };
    println!();
    println!("(e) where a sandboxed turn's time goes: the same module under a bare host (synchronous WASI");
    println!("    calls, the side's whole game on stdin from the start so it never pauses, a clock stuck at");
    println!("    zero, no limits), `turn` as in (a); each row adds what is named on the right");
    let row = |form: &str, us: f64, adds: &str| {
        println!("  {form:<40} {us:>6.1} µs {:>6.2}×  {adds}", us / baseline);
    };
    row(IN_PROCESS, baseline, "");
    for stats in bare {
        let (form, adds) = if stats.fuel {
            ("wasm, bare host, fuel metered", "fuel metering in the compiled code")
        } else {
            (
                "wasm, bare host, no fuel",
                "Cranelift's code for wasm32 instead of LLVM's native code",
            )
        };
        row(form, stats.amortised_us, adds);
        if let Some(fault) = &stats.fault {
            println!(
                "  ! {form}: {} bad replies in {} games; last: {fault}",
                stats.bad, stats.games
            );
        }
    }
    row(
        SANDBOXED,
        sandboxed,
        "the sandbox's host: pausing between turns, fuel accounting, limits, the referee's player",
    );
    if let Some(metered) = bare.iter().find(|stats| stats.fuel && stats.fault.is_none()) {
        let host = sandboxed - metered.amortised_us;
        println!(
            "  a fuel-metered module cannot beat {:.2}× here; the sandbox's host adds {:.2}× ({host:.1} µs, {:.0}% of a sandboxed turn)",
            metered.amortised_us / baseline,
            host / baseline,
            100.0 * host / sandboxed,
        );
    }
}

/// Bots whose turns are mostly request parsing, parsing plus a little play,
/// and a search: how the sandbox's cost depends on what a turn does.
const WORKLOADS: [(&str, &str); 3] = [
    ("othello-random", "parses the request, picks a legal move"),
    ("othello-greedy", "parses, tries every legal move (the bot above)"),
    ("othello-ab-weak", "parses, searches two plies"),
];

/// (d): one workload's per-turn round trips, in-process and sandboxed.
struct Workload {
    bot: &'static str,
    what: &'static str,
    in_process: TurnStats,
    sandboxed: TurnStats,
}

fn measure_workloads(sandbox: &Sandbox, variant: Variant) -> Vec<Workload> {
    let runs = Runs::new(3, 1000, Duration::from_secs(2));
    WORKLOADS
        .iter()
        .map(|&(bot, what)| {
            let house = arbiter_house::find(bot).expect("a house bot");
            let module = sandbox.load(house.wasm()).expect("the house module loads");
            let game = record_game(variant, bot);
            let wasm = WasmBot::new(sandbox.clone(), module, format!("house:{bot}"));
            Workload {
                bot,
                what,
                in_process: measure_turns(&*in_process(bot), &game, runs),
                sandboxed: measure_turns(&wasm, &game, runs),
            }
        })
        .collect()
}

fn report_workloads(workloads: &[Workload]) {
    println!();
    println!("(d) the same per-turn round trip (`turn`, as in (a)) for bots doing different work per turn");
    println!(
        "{:<17} {:<48} {:>9} {:>9} {:>8} {:>11}",
        "bot", "a turn", "in-proc µs", "sandbox µs", "ratio", "fuel/turn"
    );
    for w in workloads {
        println!(
            "{:<17} {:<48} {:>10.1} {:>10.1} {:>7.2}× {:>11.0}",
            w.bot,
            w.what,
            w.in_process.amortised_us,
            w.sandboxed.amortised_us,
            w.sandboxed.amortised_us / w.in_process.amortised_us,
            w.sandboxed.fuel_per_turn.unwrap_or(0.0),
        );
        for (form, stats) in [("in-process", &w.in_process), ("sandboxed", &w.sandboxed)] {
            if let Some(fault) = &stats.fault {
                println!("  ! {} {form}: {fault}", w.bot);
            }
        }
    }
}

/// The one-minute load average, where the system tells it.
fn load_average() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/loadavg").ok()?;
    text.split_whitespace().next()?.parse().ok()
}

const IN_PROCESS: &str = "in-process native";
const SANDBOXED: &str = "sandboxed (wasm)";
const PER_GAME: &str = "native subprocess per game";
const PER_MOVE: &str = "native subprocess per move";

/// One player form and how many runs it gets.
struct Form {
    name: &'static str,
    entrant: Arc<dyn Entrant>,
    /// Replays of the recorded game for (a).
    turn_games: Runs,
    /// Matches for (b).
    matches: Runs,
}

/// How many timed runs: at least `min`, then more until `time` has passed,
/// at most `max`; one untimed warm-up run first.
#[derive(Clone, Copy)]
struct Runs {
    min: usize,
    max: usize,
    time: Duration,
}

impl Runs {
    const fn new(min: usize, max: usize, time: Duration) -> Runs {
        Runs { min, max, time }
    }

    /// Runs `f` once to warm up, then as often as this says; returns the
    /// timed runs' results.
    fn run<T>(self, mut f: impl FnMut() -> T) -> Vec<T> {
        black_box(f());
        let start = Instant::now();
        let mut out = Vec::new();
        while out.len() < self.max && (out.len() < self.min || start.elapsed() < self.time) {
            out.push(f());
        }
        out
    }
}

/// The house bot as an in-process reply function, seeded from the match
/// (what `arbiter play builtin:othello-greedy` runs).
fn in_process(bot: &'static str) -> Arc<dyn Entrant> {
    assert!(
        arbiter_bots::answerer(bot, Rng::seeded(0)).is_some(),
        "{bot} has an answerer"
    );
    Arc::new(InProcess::new(format!("builtin:{bot}"), move |setup: &GameSetup| {
        let rng = Rng::seeded(bot_seed(setup.seed, setup.game_index, setup.side));
        arbiter_bots::answerer(bot, rng).unwrap_or_else(|| Box::new(|_: &str| String::new()))
    }))
}

/// The house bot as a native process: `arbiter __house-bot othello-greedy`,
/// with `--once` a process per move.
fn native(once: bool) -> Arc<dyn Entrant> {
    let mut command = format!("{} __house-bot {BOT}", shell_quote(ARBITER));
    if once {
        command.push_str(" --once");
    }
    Arc::new(NativeCommand::parse(&command).expect("the bot command parses"))
}

/// `word` in single quotes, for `NativeCommand::parse`.
fn shell_quote(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

/// One request of the recorded game.
struct Turn {
    /// The side it went to.
    side: u8,
    /// The request line.
    request: String,
    /// Its legal moves (empty: the bot must pass).
    legal: Vec<i32>,
}

/// The requests of leg 0 of a real match between two in-process `bot`s, in
/// the order they were made.
fn record_game(variant: Variant, bot: &'static str) -> Vec<Turn> {
    let log: Arc<Mutex<Vec<(u8, String)>>> = Arc::default();
    let recorder = {
        let log = Arc::clone(&log);
        InProcess::new("recorder", move |setup: &GameSetup| {
            let rng = Rng::seeded(bot_seed(setup.seed, setup.game_index, setup.side));
            let mut answer = arbiter_bots::answerer(bot, rng).expect("a house bot has an answerer");
            let (log, side, leg) = (Arc::clone(&log), setup.side, setup.game_index);
            Box::new(move |request: &str| {
                if leg == 0 {
                    let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                    log.push((side, request.to_string()));
                }
                answer(request)
            })
        })
    };
    let played = play_match(&MatchSettings::new(variant, SEED), [&recorder, &recorder]).expect("the recording plays");
    if let Some(game) = played.replay.games.first().filter(|game| game.reason.is_fault()) {
        println!("  ! the recorded game ended in a fault: {}", game.reason);
    }
    let log = std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner));
    log.into_iter()
        .map(|(side, request)| {
            let parsed: Request = serde_json::from_str(&request).expect("a request parses");
            Turn {
                side,
                legal: parsed.legal_moves,
                request,
            }
        })
        .collect()
}

/// Whether `line` answers `turn` with a legal move.
fn legal_reply(turn: &Turn, line: &str) -> bool {
    match parse_reply(line, Mode::Std) {
        Ok(Move::Pass) => turn.legal.is_empty(),
        Ok(mv) => turn.legal.contains(&mv.code()),
        Err(_) => false,
    }
}

/// One replay of the recorded game.
struct GameRun {
    /// Starting both players, every turn, and dropping the players.
    whole: Duration,
    /// The turns alone.
    turns: Duration,
    /// Fuel the turns used (sandboxed players only).
    fuel: u64,
    /// Faults and replies that are not a legal move.
    bad: usize,
    /// The last fault, in words.
    fault: Option<String>,
}

/// Plays the recorded requests to two fresh players of `entrant` (one per
/// side, as in the real game), turn by turn.
fn replay_game(entrant: &dyn Entrant, game: &[Turn]) -> GameRun {
    let mut bad = 0;
    let mut fault = None;
    let start = Instant::now();
    let mut players: Vec<Option<Box<dyn Player>>> = (0..2u8)
        .map(|side| {
            let setup = GameSetup {
                game: "othello".to_string(),
                mode: "std".to_string(),
                seed: SEED,
                match_id: 0,
                game_index: 0,
                side,
                fuel_per_ms: None,
                tick_based: false,
            };
            match entrant.spawn(&setup) {
                Ok(player) => Some(player),
                Err(error) => {
                    fault = Some(format!("cannot start: {error}"));
                    None
                }
            }
        })
        .collect();
    let mut turns = Duration::ZERO;
    let mut fuel = 0;
    for turn in game {
        let Some(player) = players[usize::from(turn.side)].as_mut() else {
            bad += 1;
            continue;
        };
        let before = Instant::now();
        let result = player.turn(&turn.request, TURN_BUDGET_US);
        turns += before.elapsed();
        if let Ok(answer) = &result {
            fuel += answer.spent.fuel.unwrap_or(0);
        }
        match result {
            Ok(answer) if legal_reply(turn, &answer.line) => {}
            Ok(answer) => {
                bad += 1;
                fault = Some(format!("not a legal move: {}", answer.line));
            }
            Err(error) => {
                bad += 1;
                fault = Some(error.fault.to_string());
            }
        }
    }
    drop(black_box(players));
    GameRun {
        whole: start.elapsed(),
        turns,
        fuel,
        bad,
        fault,
    }
}

/// (a): per-turn round trips.
struct TurnStats {
    /// Median over games of (whole game ÷ turns), µs.
    amortised_us: f64,
    /// Median over games of (turns alone ÷ turns), µs.
    turn_only_us: f64,
    /// 10th percentile over games of (whole game ÷ turns), µs: less
    /// sensitive than the median to a busy machine.
    p10_us: f64,
    /// Fuel per turn, for sandboxed players.
    fuel_per_turn: Option<f64>,
    games: usize,
    bad: usize,
    fault: Option<String>,
}

fn measure_turns(entrant: &dyn Entrant, game: &[Turn], runs: Runs) -> TurnStats {
    let n = game.len().max(1) as f64;
    let runs = runs.run(|| replay_game(entrant, game));
    let fault = runs.iter().rev().find_map(|run| run.fault.clone());
    TurnStats {
        amortised_us: median(runs.iter().map(|run| micros(run.whole) / n)),
        turn_only_us: median(runs.iter().map(|run| micros(run.turns) / n)),
        p10_us: Summary::of(runs.iter().map(|run| micros(run.whole) / n).collect()).p10,
        fuel_per_turn: runs.first().filter(|run| run.fuel > 0).map(|run| run.fuel as f64 / n),
        games: runs.len(),
        bad: runs.iter().map(|run| run.bad).sum(),
        fault,
    }
}

/// (b): whole matches through the referee.
struct MatchStats {
    /// Median match time, ms.
    median_ms: f64,
    /// 10th percentile of the match time, ms.
    p10_ms: f64,
    matches: usize,
    /// Matches that failed on the host or had a game ending in a fault.
    bad: usize,
    fault: Option<String>,
}

fn measure_matches(entrant: &dyn Entrant, variant: Variant, runs: Runs) -> MatchStats {
    let mut settings = MatchSettings::new(variant, SEED);
    settings.fuel_per_ms = Some(DEFAULT_FUEL_PER_MS);
    let runs = runs.run(|| {
        let start = Instant::now();
        let played = play_match(&settings, [entrant, entrant]);
        let elapsed = start.elapsed();
        let fault = match played {
            Err(error) => Some(error.to_string()),
            Ok(played) => played
                .replay
                .games
                .iter()
                .find(|game| game.reason.is_fault())
                .map(|game| format!("{}: {}", game.reason, game.detail.as_deref().unwrap_or(""))),
        };
        (elapsed, fault)
    });
    MatchStats {
        median_ms: median(runs.iter().map(|(elapsed, _)| micros(*elapsed) / 1000.0)),
        p10_ms: Summary::of(runs.iter().map(|(elapsed, _)| micros(*elapsed) / 1000.0).collect()).p10,
        matches: runs.len(),
        bad: runs.iter().filter(|(_, fault)| fault.is_some()).count(),
        fault: runs.iter().rev().find_map(|(_, fault)| fault.clone()),
    }
}

/// (c): the sandbox's instantiation and module cache.
struct CacheStats {
    instantiate: Summary,
    drop: Summary,
    drop_after_turn: Summary,
    load_cached: Summary,
    by_digest: Summary,
    load_disk: Summary,
    check: Summary,
    errors: usize,
}

/// Percentiles of some samples.
struct Summary {
    p10: f64,
    median: f64,
    p90: f64,
    n: usize,
}

impl Summary {
    fn of(mut samples: Vec<f64>) -> Summary {
        samples.sort_by(f64::total_cmp);
        let at = |q: f64| {
            samples
                .get(((samples.len() as f64 - 1.0) * q).round() as usize)
                .copied()
        };
        Summary {
            p10: at(0.1).unwrap_or(f64::NAN),
            median: at(0.5).unwrap_or(f64::NAN),
            p90: at(0.9).unwrap_or(f64::NAN),
            n: samples.len(),
        }
    }
}

fn measure_cache(sandbox: &Sandbox, module: &BotModule, wasm: &[u8], request: &str) -> CacheStats {
    const BATCH: u64 = 32;
    const BATCHES: u64 = 40;
    let mut instantiate = Vec::new();
    let mut dropping = Vec::new();
    let mut errors = 0;
    // The first batch warms up the pool's slots and is not counted.
    for batch in 0..=BATCHES {
        let mut live = Vec::new();
        for i in 0..BATCH {
            let env = BotEnv {
                seed: batch * BATCH + i,
                vars: vec![
                    ("ARBITER_GAME".to_string(), "othello".to_string()),
                    ("ARBITER_MODE".to_string(), "std".to_string()),
                ],
                start_time_ns: CLOCK_ORIGIN_NS,
                ..BotEnv::default()
            };
            let start = Instant::now();
            let made = sandbox.instantiate(module, env);
            let elapsed = start.elapsed();
            match made {
                Ok(instance) => {
                    live.push(instance);
                    if batch > 0 {
                        instantiate.push(micros(elapsed));
                    }
                }
                Err(_) => errors += 1,
            }
        }
        for instance in live {
            let start = Instant::now();
            drop(black_box(instance));
            if batch > 0 {
                dropping.push(micros(start.elapsed()));
            }
        }
    }
    let timed = |runs: usize, f: &mut dyn FnMut() -> bool| {
        let mut samples = Vec::new();
        let mut errors = 0;
        for i in 0..=runs {
            let start = Instant::now();
            let ok = f();
            let elapsed = start.elapsed();
            errors += usize::from(!ok);
            if i > 0 {
                samples.push(micros(elapsed));
            }
        }
        (Summary::of(samples), errors)
    };
    // A bot that has answered a turn is paused inside its write, with its
    // runtime set up and its memory touched: dropping it unwinds that and
    // resets the slot.
    let mut drop_after_turn = Vec::new();
    for i in 0..=200u64 {
        let env = BotEnv {
            seed: i,
            vars: Vec::new(),
            start_time_ns: CLOCK_ORIGIN_NS,
            ..BotEnv::default()
        };
        let Ok(mut instance) = sandbox.instantiate(module, env) else {
            errors += 1;
            continue;
        };
        errors += usize::from(instance.turn(request.as_bytes(), 100 * DEFAULT_FUEL_PER_MS).is_err());
        let start = Instant::now();
        drop(black_box(instance));
        if i > 0 {
            drop_after_turn.push(micros(start.elapsed()));
        }
    }
    let (load_cached, load_errors) = timed(200, &mut || sandbox.load(black_box(wasm)).is_ok());
    let sha256 = sandbox.inspect(wasm).map(|info| info.sha256).unwrap_or_default();
    let (by_digest, digest_errors) = timed(200, &mut || sandbox.cached(black_box(&sha256)).is_some());
    let (check, check_errors) = timed(50, &mut || sandbox.inspect(black_box(wasm)).is_ok());

    // A sandbox that keeps nothing in memory: every load reads the compiled
    // artifact from its disk cache (as after a restart). Its first load
    // compiles and is not timed.
    let dir = tempfile::tempdir().expect("a temporary directory");
    let on_disk = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new(ARBITER, ["__compile-module"]),
        cache_dir: Some(dir.path().to_path_buf()),
        memory_cache_entries: 0,
        instance_slots: 1,
        ..Default::default()
    })
    .expect("the second sandbox starts");
    let (load_disk, disk_errors) = timed(30, &mut || on_disk.load(black_box(wasm)).is_ok());

    CacheStats {
        instantiate: Summary::of(instantiate),
        drop: Summary::of(dropping),
        drop_after_turn: Summary::of(drop_after_turn),
        load_cached,
        by_digest,
        load_disk,
        check,
        errors: errors + load_errors + digest_errors + check_errors + disk_errors,
    }
}

/// All measurements of one form.
struct FormResult {
    name: &'static str,
    turns: TurnStats,
    matches: MatchStats,
}

fn report(results: &[FormResult], cache: Option<&CacheStats>, first_load: Duration, module_bytes: usize) {
    let Some(base) = results.first() else {
        return;
    };
    let base_turn = base.turns.amortised_us;
    let base_match = base.matches.median_ms;
    println!();
    println!("(a) per-turn round trip over the recorded game, fresh players per game, median over games of");
    println!("    turn = (start both players + every request→reply + drop them) ÷ turns");
    println!("    turns only = the same without start and drop; p10 = 10th percentile of `turn`");
    println!("(b) full matches through play_match, both participants in that form (2 legs, seed {SEED}):");
    println!("    median match time, its 10th percentile, and matches/s = 1 / median");
    println!();
    println!(
        "{:<27} {:>8} {:>10} {:>7} {:>9} {:>5} │ {:>8} {:>7} {:>9} {:>9} {:>7} │ {:>6}",
        "form",
        "turn µs",
        "turns only",
        "p10",
        "× in-proc",
        "games",
        "ms/match",
        "p10",
        "matches/s",
        "× in-proc",
        "matches",
        "faults"
    );
    for r in results {
        let (t, m) = (&r.turns, &r.matches);
        println!(
            "{:<27} {:>8.1} {:>10.1} {:>7.1} {:>9.2} {:>5} │ {:>8.2} {:>7.2} {:>9.1} {:>9.2} {:>7} │ {:>6}",
            r.name,
            t.amortised_us,
            t.turn_only_us,
            t.p10_us,
            t.amortised_us / base_turn,
            t.games,
            m.median_ms,
            m.p10_ms,
            1000.0 / m.median_ms,
            m.median_ms / base_match,
            m.matches,
            t.bad + m.bad,
        );
    }
    for r in results {
        if let Some(fault) = &r.turns.fault {
            println!("  ! {} (turns): {fault}", r.name);
        }
        if let Some(fault) = &r.matches.fault {
            println!("  ! {} (matches): {fault}", r.name);
        }
        if let Some(fuel) = r.turns.fuel_per_turn {
            println!(
                "  {}: {fuel:.0} fuel per turn ({:.1} virtual µs; {:.0} fuel per real µs of turn)",
                r.name,
                fuel * 1000.0 / DEFAULT_FUEL_PER_MS as f64,
                fuel / r.turns.turn_only_us
            );
        }
    }

    if let Some(cache) = cache {
        println!();
        println!(
            "(c) sandbox, module already loaded / cached ({} KiB module)",
            module_bytes / 1024
        );
        let line = |what: &str, s: &Summary| {
            println!(
                "  {what:<54} median {:>8.1} µs   p90 {:>8.1} µs   n {}",
                s.median, s.p90, s.n
            );
        };
        line("Sandbox::instantiate (loaded module)", &cache.instantiate);
        line("drop of a fresh BotInstance", &cache.drop);
        line("drop of a BotInstance after its first turn", &cache.drop_after_turn);
        line(
            "Sandbox::load (in the memory cache: SHA-256 + lookup)",
            &cache.load_cached,
        );
        line("Sandbox::cached (in the memory cache, by digest)", &cache.by_digest);
        line("Sandbox::load (disk cache only: check + artifact)", &cache.load_disk);
        line("Sandbox::inspect alone (not run on a memory hit)", &cache.check);
        println!(
            "  {:<54} {:>15.1} ms (once, at setup)",
            "first Sandbox::load (compiles in a child)",
            micros(first_load) / 1000.0
        );
        if cache.errors > 0 {
            println!("  ! {} sandbox calls failed", cache.errors);
        }
    }

    let find = |name: &str| results.iter().find(|r| r.name == name);
    let verdict = |met: bool| if met { "met" } else { "MISSED" };
    println!();
    println!("targets (per-turn medians from the `turn µs` column of this run; p10 ratios for comparison)");
    if let Some(sandboxed) = find(SANDBOXED) {
        let sandbox_turn = sandboxed.turns.amortised_us;
        let ratio = sandbox_turn / base_turn;
        println!(
            "  sandboxed turn within {TARGET_SANDBOX_VS_IN_PROCESS}× of in-process native: \
             {sandbox_turn:.1} µs vs {base_turn:.1} µs = {ratio:.2}× (p10 {:.2}×) — {}",
            sandboxed.turns.p10_us / base.turns.p10_us,
            verdict(ratio <= TARGET_SANDBOX_VS_IN_PROCESS)
        );
        if let Some(per_game) = find(PER_GAME) {
            let speedup = per_game.turns.amortised_us / sandbox_turn;
            println!(
                "  sandboxed at least {TARGET_PER_GAME_VS_SANDBOX}× faster than a subprocess per game: \
                 {:.1} µs vs {sandbox_turn:.1} µs = {speedup:.2}× (p10 {:.2}×) — {}",
                per_game.turns.amortised_us,
                per_game.turns.p10_us / sandboxed.turns.p10_us,
                verdict(speedup >= TARGET_PER_GAME_VS_SANDBOX)
            );
        }
        if let Some(per_move) = find(PER_MOVE) {
            println!(
                "  (for reference: a subprocess per move is {:.0}× slower than sandboxed per turn)",
                per_move.turns.amortised_us / sandbox_turn
            );
        }
    }
    if let Some(cache) = cache {
        let instantiate = cache.instantiate.median;
        println!(
            "  instantiation under {TARGET_INSTANTIATE_US} µs: median {instantiate:.1} µs — {}",
            verdict(instantiate < TARGET_INSTANTIATE_US)
        );
    }
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn median(values: impl Iterator<Item = f64>) -> f64 {
    Summary::of(values.collect()).median
}
