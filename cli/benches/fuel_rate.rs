//! How much wasmtime fuel per real millisecond different kinds of bot code
//! burn in the real sandbox (`SandboxConfig::default()`), i.e. what one
//! virtual millisecond ([`DEFAULT_FUEL_PER_MS`] fuel) is on this machine's
//! cores. The rows are every house Othello bot playing whole matches against
//! itself through the referee (fuel summed from the replays' turns, timed
//! over whole matches, so instantiation and the referee are included), then
//! one turn each of WAT bots that never reply and run until their budget (or
//! the wall-clock backstop, set to about 10 s for these rows) stops them: an
//! empty loop, a counting loop, `memory.fill` and `memory.copy` of tens of
//! MiB, and `table.fill`/`table.copy` on a 60 000-element table. Each row
//! prints the fuel the sandbox metered, real and CPU seconds (CPU time of
//! the thread the bots run on, which a busy machine disturbs less), million
//! fuel per real and per CPU millisecond, real and CPU milliseconds per
//! virtual millisecond, and how the last turn or match ended (a backstop
//! crash means the fuel clock did not stop the bot in time). Run with
//! `cargo bench -p arbiter --bench fuel_rate` (under a minute after
//! the build); the load average is printed before and after.

use std::time::{Duration, Instant};

use arbiter_games::Variant;
use arbiter_house::HouseBot;
use arbiter_referee::wasm::CLOCK_ORIGIN_NS;
use arbiter_referee::{MatchSettings, WasmBot, play_match};
use arbiter_sandbox::{BotEnv, CompilerCommand, CrashReason, DEFAULT_FUEL_PER_MS, FaultKind, Sandbox, SandboxConfig};

/// The arbiter binary: the sandbox's compiler child.
const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
/// Matches per house bot: at least this many, then more until the time.
const MIN_MATCHES: usize = 1;
const MAX_MATCHES: usize = 5000;
const MATCH_TIME: Duration = Duration::from_secs(3);

/// Real time the synthetic turns may take before the wall-clock backstop
/// stops them: each row's sandbox gets the backstop factor that gives this.
const SYNTHETIC_BACKSTOP: Duration = Duration::from_secs(10);

/// One measured workload.
struct Row {
    workload: String,
    fuel: u64,
    real: Duration,
    /// CPU time of this thread (the bots run on it) over the same spans.
    cpu: Duration,
    /// How the (last) turn or match ended.
    ended: String,
}

fn main() {
    println!("fuel_rate: fuel per real ms in the sandbox; 1 virtual ms = {DEFAULT_FUEL_PER_MS} fuel");
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_else(|_| "unknown".into());
    println!("nproc {cores}, load average {}", load.trim());

    let config = SandboxConfig {
        compiler: CompilerCommand::new(ARBITER, ["__compile-module"]),
        ..SandboxConfig::default()
    };
    let sandbox = Sandbox::new(config.clone()).expect("the sandbox starts");

    let mut rows = Vec::new();
    for bot in arbiter_house::ALL.iter().filter(|bot| bot.game() == "othello") {
        rows.push(house_row(&sandbox, bot));
        eprintln!("measured {}", bot.name);
    }
    for (name, wat, budget) in synthetic() {
        // The default config but for the backstop, so that a turn the fuel
        // clock fails to stop ends after SYNTHETIC_BACKSTOP.
        let budget_ms = (budget / DEFAULT_FUEL_PER_MS).max(1);
        let allowed =
            u64::try_from(SYNTHETIC_BACKSTOP.saturating_sub(config.backstop_grace).as_millis()).unwrap_or(u64::MAX);
        let factor = u32::try_from(allowed / budget_ms)
            .unwrap_or(u32::MAX)
            .clamp(1, config.backstop_factor);
        let sandbox = Sandbox::new(SandboxConfig {
            backstop_factor: factor,
            instance_slots: 2,
            ..config.clone()
        })
        .expect("the synthetic rows' sandbox starts");
        rows.push(wat_row(&sandbox, &format!("{name} (backstop {factor}×)"), &wat, budget));
        eprintln!("measured {name}");
    }
    report(&rows);
    let load = std::fs::read_to_string("/proc/loadavg").unwrap_or_else(|_| "unknown".into());
    println!("load average after: {}", load.trim());
}

/// `bot` against itself in Othello std matches (seeds 0, 1, ...) until
/// [`MATCH_TIME`]: fuel of every turn in the replays over the matches' time.
fn house_row(sandbox: &Sandbox, bot: &HouseBot) -> Row {
    let module = sandbox.load(bot.wasm()).expect("the house module loads");
    let entrant = WasmBot::new(sandbox.clone(), module, format!("house:{}", bot.name));
    let variant: Variant = "othello:std".parse().expect("othello:std is a variant");
    let (mut fuel, mut real, mut cpu) = (0u64, Duration::ZERO, Duration::ZERO);
    let (mut matches, mut faults) = (0usize, 0usize);
    let mut ended = String::from("ok");
    while matches < MAX_MATCHES && (matches < MIN_MATCHES || real < MATCH_TIME) {
        let mut settings = MatchSettings::new(variant, matches as u64);
        settings.fuel_per_ms = Some(sandbox.config().fuel_per_ms);
        let (start, cpu_start) = (Instant::now(), thread_cpu());
        let played = play_match(&settings, [&entrant, &entrant]);
        real += start.elapsed();
        cpu += thread_cpu().saturating_sub(cpu_start);
        matches += 1;
        let played = match played {
            Ok(played) => played,
            Err(error) => {
                faults += 1;
                ended = format!("host error: {error}");
                continue;
            }
        };
        for game in &played.replay.games {
            fuel += game.turns.iter().filter_map(|turn| turn.spent.fuel).sum::<u64>();
            if game.reason.is_fault() {
                faults += 1;
                ended = format!("{}: {}", game.reason, game.detail.as_deref().unwrap_or(""));
            }
        }
    }
    Row {
        workload: format!("{} ×{matches} matches", bot.name),
        fuel,
        real,
        cpu,
        ended: if faults == 0 {
            ended
        } else {
            format!("{faults} faults; last {ended}")
        },
    }
}

/// The synthetic bots: name, WAT and the fuel budget of their one turn.
fn synthetic() -> Vec<(&'static str, String, u64)> {
    const MIB: u32 = 1 << 20;
    let memory = "(memory (export \"memory\") 1024)";
    let table = "(memory (export \"memory\") 1)
  (table $t 60000 funcref)
  (elem declare func $f)
  (func $f)";
    vec![
        ("empty loop", bot(memory, "(loop $l (br $l))"), 2_000_000_000),
        (
            "counting loop",
            bot(
                memory,
                "(local $i i64)
    (loop $l
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br_if $l (i64.ne (local.get $i) (i64.const -1))))",
            ),
            5_000_000_000,
        ),
        (
            "memory.fill 64 MiB",
            bot(memory, &format!("(loop $l {} (br $l))", fill(0, 64 * MIB))),
            15_000_000_000,
        ),
        (
            // The source is written first: untouched pages would all read
            // the kernel's one zero page, from cache.
            "memory.copy 32 MiB",
            bot(
                memory,
                &format!(
                    "{} (loop $l (memory.copy (i32.const {half}) (i32.const 0) (i32.const {half})) (br $l))",
                    fill(0, 64 * MIB),
                    half = 32 * MIB
                ),
            ),
            15_000_000_000,
        ),
        (
            "table.fill 60 000",
            bot(
                table,
                "(loop $l (table.fill $t (i32.const 0) (ref.func $f) (i32.const 60000)) (br $l))",
            ),
            2_000_000_000,
        ),
        (
            "table.copy 30 000",
            bot(
                table,
                "(table.fill $t (i32.const 0) (ref.func $f) (i32.const 60000))
    (loop $l (table.copy $t $t (i32.const 30000) (i32.const 0) (i32.const 30000)) (br $l))",
            ),
            2_000_000_000,
        ),
    ]
}

/// `memory.fill` of `len` bytes from `at` with a non-zero byte.
fn fill(at: u32, len: u32) -> String {
    format!("(memory.fill (i32.const {at}) (i32.const 0x55) (i32.const {len}))")
}

/// A module with `items` (memory, table, ...) whose `_start` runs `body`
/// and never replies: no imports needed.
fn bot(items: &str, body: &str) -> String {
    format!("(module\n  {items}\n  (func (export \"_start\")\n    {body}))")
}

/// One turn of the WAT bot with `budget` fuel, timed around `turn` alone.
fn wat_row(sandbox: &Sandbox, name: &str, wat: &str, budget: u64) -> Row {
    let wasm = wat::parse_str(wat).expect("the benchmark's WAT parses");
    let module = sandbox.load(&wasm).expect("the benchmark's module loads");
    let env = BotEnv {
        start_time_ns: CLOCK_ORIGIN_NS,
        ..BotEnv::default()
    };
    let mut instance = sandbox.instantiate(&module, env).expect("the module instantiates");
    let (start, cpu_start) = (Instant::now(), thread_cpu());
    let result = instance.turn(b"{}", budget);
    let (real, cpu) = (start.elapsed(), thread_cpu().saturating_sub(cpu_start));
    let (fuel, ended) = match result {
        Ok(reply) => (reply.fuel_used, "replied".to_string()),
        Err(fault) => {
            let ended = match &fault.kind {
                FaultKind::Timeout => "timeout (budget used)".to_string(),
                FaultKind::Crash(CrashReason::Backstop { ms }) => format!("BACKSTOP crash after {ms} ms"),
                other => other.to_string(),
            };
            (fault.fuel_used, ended)
        }
    };
    Row {
        workload: name.to_string(),
        fuel,
        real,
        cpu,
        ended,
    }
}

/// CPU time this thread has run, from `/proc/thread-self/schedstat` (zero
/// where there is none: the CPU columns then read `inf`).
fn thread_cpu() -> Duration {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap_or_default();
    let ns = text.split_whitespace().next().and_then(|ns| ns.parse().ok());
    Duration::from_nanos(ns.unwrap_or(0))
}

fn report(rows: &[Row]) {
    println!();
    println!(
        "{:<38} {:>12} {:>7} {:>7} {:>13} {:>11} {:>12} {:>10}  ended",
        "workload", "fuel", "real s", "cpu s", "Mfuel/real ms", "real ms/vms", "Mfuel/cpu ms", "cpu ms/vms"
    );
    for row in rows {
        let rate = |time: Duration| row.fuel as f64 / (time.as_secs_f64() * 1000.0);
        let (real, cpu) = (rate(row.real), rate(row.cpu));
        let per_vms = |rate: f64| DEFAULT_FUEL_PER_MS as f64 / rate;
        println!(
            "{:<38} {:>12} {:>7.3} {:>7.3} {:>13.2} {:>11.2} {:>12.2} {:>10.2}  {}",
            row.workload,
            row.fuel,
            row.real.as_secs_f64(),
            row.cpu.as_secs_f64(),
            real / 1e6,
            per_vms(real),
            cpu / 1e6,
            per_vms(cpu),
            row.ended
        );
    }
    println!();
    println!("Mfuel/real ms: million fuel (as the sandbox metered it) per real millisecond; Mfuel/cpu ms:");
    println!("the same per millisecond of CPU time of the thread running the bots (steadier on a busy machine);");
    println!("real ms/vms, cpu ms/vms: real (CPU) milliseconds one virtual ms ({DEFAULT_FUEL_PER_MS} fuel) takes");
}
