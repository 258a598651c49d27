//! What the ladder's pipeline costs on top of playing, and what one Othello
//! match costs at the ladder's default time control.
//!
//! 1. **Ladder pipeline.** A fresh [`Core`] on a temporary SQLite data folder
//!    (its sandbox compiles with the `arbiter` binary), the house bots
//!    seeded; N ranked matches `othello-random` – `othello-greedy` on
//!    `othello:std` are queued (sides alternating, seed 1000 + i), then W
//!    in-process workers ([`worker::run`]) are started and timed until all N
//!    are `finished` (polled every 20 ms): claim, sandbox, compressed replay,
//!    logs and Glicko-2 ratings on SQLite (the blob store being a local
//!    folder, each replay is a row of the database, see
//!    [`arbiter_ladder::replays`]).
//! 2. **`arbiter play` baseline.** The same two house modules as
//!    [`WasmBot`]s, the same N matches (same seeds and sides) through
//!    [`play_match`] on W threads, each replay written to a file, as
//!    `arbiter play` does.
//!
//!    Both run with W = 1 and W = 2, in R rounds that alternate pipeline
//!    and play (this machine's speed drifts from one minute to the next, so
//!    each ratio compares runs seconds apart), after a warm-up of 20
//!    uncounted matches each (so compiling the modules is not measured). It
//!    prints matches per second, pipeline / play per round and its median
//!    (the target: the ladder keeps at least 70% of play's throughput), the
//!    process's CPU ms per match, and the pipeline's CPU ms per match by
//!    thread: the match threads, the database's threads and the async
//!    runtime's.
//! 3. **One `othello-ab-strong` mirror match at the default control**
//!    (1000 ms per move, 10 000 ms per leg, virtual): M matches on one
//!    thread, real seconds and the thread's CPU seconds per match, and the
//!    virtual seconds both bots used (the replays' `spent.us`).
//!
//! Run with `cargo bench -p arbiter --bench pipeline` (about a minute
//! after the build). Settings: `ARBITER_BENCH_PIPELINE_MATCHES`
//! (N, default 600), `ARBITER_BENCH_ROUNDS` (R, default 4),
//! `ARBITER_BENCH_STRONG_MATCHES` (M, default 3). Nothing
//! here asserts on time; wall-clock figures on a busy machine are noisy, so
//! the load average is printed first and last.

#[path = "../tests/common/ladder.rs"]
#[allow(dead_code, reason = "the bench plays its matches its own way")]
mod ladder;

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use arbiter_games::Variant;
use arbiter_games::othello::Mode;
use arbiter_ladder::core::Core;
use arbiter_ladder::model::{LadderId, MatchKind};
use arbiter_ladder::queue::{self, NewMatch};
use arbiter_ladder::worker::{self, WorkerConfig};
use arbiter_referee::{MatchSettings, PlayedMatch, WasmBot, play_match};
use arbiter_sandbox::{CompilerCommand, DEFAULT_FUEL_PER_MS, Sandbox, SandboxConfig};
use tokio::sync::watch;

/// The arbiter binary: the sandbox's compiler child.
const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
const LADDER: &str = "othello:std";
const VARIANT: Variant = Variant::Othello(Mode::Std);
const BOTS: [&str; 2] = ["othello-random", "othello-greedy"];
const STRONG: &str = "othello-ab-strong";
const WARMUP: usize = 20;
/// Seed of counted match i is `SEED + i` (warm-up matches use 1..=20).
const SEED: u64 = 1000;
/// The target for pipeline / play.
const TARGET: f64 = 0.70;

fn main() {
    let matches = setting("ARBITER_BENCH_PIPELINE_MATCHES", 600);
    let rounds = setting("ARBITER_BENCH_ROUNDS", 4).max(1);
    let strong_matches = setting("ARBITER_BENCH_STRONG_MATCHES", 3);
    println!(
        "pipeline benchmark: {} vs {} on {LADDER}, {matches} matches per run",
        BOTS[0], BOTS[1]
    );
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("nproc {cores}, /proc/loadavg {}", load_average());
    let started = Instant::now();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let dir = tempfile::tempdir().expect("a temporary folder");
    let core = runtime.block_on(ladder::open_core(dir.path()));
    let versions = runtime.block_on(ladder::active_versions(&core, LADDER, BOTS));

    // The baseline's own sandbox, as `arbiter play` makes one.
    let sandbox = sandbox(None);
    let bots = BOTS.map(|name| house_bot(&sandbox, name));
    let replays = dir.path().join("replays");
    std::fs::create_dir_all(&replays).expect("the replay folder");

    let warm = Instant::now();
    let warmup: Vec<u64> = (1..=WARMUP as u64).collect();
    runtime.block_on(pipeline(&core, versions, &warmup, 2));
    play_all(&bots, &warmup, 2, &replays);
    println!(
        "warm-up: {WARMUP} matches each way in {:.1} s",
        warm.elapsed().as_secs_f64()
    );

    let seeds: Vec<u64> = (0..matches as u64).map(|i| SEED + i).collect();
    let mut rows = Vec::new();
    for round in 1..=rounds {
        for workers in [1, 2] {
            let cpu0 = cpu_seconds("self");
            let (ladder, threads) = runtime.block_on(pipeline(&core, versions, &seeds, workers));
            let cpu1 = cpu_seconds("self");
            let play = play_all(&bots, &seeds, workers, &replays);
            let cpu = [cpu1 - cpu0, cpu_seconds("self") - cpu1].map(|s| s * 1e3 / matches as f64);
            let threads = threads.map(|s| s * 1e3 / matches as f64);
            println!("round {round}, W = {workers} done; /proc/loadavg {}", load_average());
            rows.push((round, workers, ladder, play, cpu, threads));
        }
    }
    println!();
    println!("== ladder pipeline vs arbiter play: {matches} matches per run, matches/s ==");
    println!(
        "round  W  pipeline      play  pipeline/play  target {TARGET:.2}  CPU ms/match: pipeline (match threads, database, runtime), play"
    );
    let mut ratios: [Vec<f64>; 2] = Default::default();
    for (round, workers, ladder, play, [cpu_ladder, cpu_play], [matches_cpu, database, runtime]) in rows {
        let [ladder, play] = [ladder, play].map(|d| matches as f64 / d.as_secs_f64());
        let ratio = ladder / play;
        ratios[workers - 1].push(ratio);
        let verdict = if ratio >= TARGET { "met" } else { "NOT met" };
        println!(
            "{round:>5} {workers:>2} {ladder:>9.1} {play:>9.1} {ratio:>14.3}  {verdict:>9}  \
             {cpu_ladder:>5.2} ({matches_cpu:.2}, {database:.2}, {runtime:.2}), {cpu_play:.2}"
        );
    }
    for (w, ratios) in ratios.iter_mut().enumerate() {
        ratios.sort_by(f64::total_cmp);
        let (low, high) = (ratios[0], ratios[ratios.len() - 1]);
        let median = median(ratios);
        let verdict = if median >= TARGET { "met" } else { "NOT met" };
        println!(
            "W = {}: median pipeline/play {median:.3} (range {low:.3}–{high:.3}) over {} rounds: {verdict}",
            w + 1,
            ratios.len()
        );
    }
    strong(&sandbox, strong_matches);
    println!();
    println!(
        "total {:.0} s; /proc/loadavg now {}",
        started.elapsed().as_secs_f64(),
        load_average()
    );
}

/// Part 3: `othello-ab-strong` against itself at the default control.
fn strong(sandbox: &Sandbox, matches: usize) {
    println!();
    println!("== {STRONG} vs itself, {VARIANT} at its default control, one thread ==");
    let bot = house_bot(sandbox, STRONG);
    let budget = VARIANT.default_budget();
    println!(
        "budget {} ms per move, {} ms per leg (virtual)",
        budget.turn_ms, budget.bank_ms
    );
    let mut sums = [0.0; 3];
    for i in 0..matches as u64 {
        let (cpu0, t0) = (cpu_seconds("thread-self"), Instant::now());
        let seed = SEED + i;
        let played = play_one(&bot, &bot, seed);
        let (real, cpu) = (t0.elapsed().as_secs_f64(), cpu_seconds("thread-self") - cpu0);
        let spent = virtual_seconds(&played);
        let turns: usize = played.replay.games.iter().map(|g| g.turns.len()).sum();
        let reasons: Vec<&str> = played.replay.games.iter().map(|g| g.reason.as_str()).collect();
        let ended = reasons.join("/");
        println!("seed {seed}: {real:.2} s real, {cpu:.2} s CPU, {spent:.2} s virtual, {turns} turns, ended {ended}");
        sums = [sums[0] + real, sums[1] + cpu, sums[2] + spent];
    }
    if matches > 0 {
        let [real, cpu, spent] = sums.map(|s| s / matches as f64);
        println!(
            "per match: {real:.2} s real, {cpu:.2} s CPU (one core), {spent:.2} s virtual; CPU/virtual {:.2}",
            cpu / spent
        );
    }
}

/// A number from the environment, or `default`.
fn setting(name: &str, default: usize) -> usize {
    let value = std::env::var(name).unwrap_or_default();
    let value = value.trim();
    if value.is_empty() {
        return default;
    }
    value
        .parse()
        .unwrap_or_else(|_| panic!("{name}={value:?} is not a number"))
}

/// A sandbox whose compiler child is the `arbiter` binary.
fn sandbox(cache_dir: Option<&Path>) -> Sandbox {
    Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::embedded_in(ARBITER),
        cache_dir: cache_dir.map(Path::to_path_buf),
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts")
}

fn house_bot(sandbox: &Sandbox, name: &str) -> WasmBot {
    let house = arbiter_house::find(name).expect("a house bot");
    let module = sandbox.load(house.wasm()).expect("the house module loads");
    WasmBot::new(sandbox.clone(), module, format!("house:{name}"))
}

/// Queues one match per seed (sides alternating), runs `workers` workers
/// until all are finished, stops them; returns the time from the workers'
/// start to the last match finished, and the CPU seconds the match
/// threads, the database's threads and the runtime's threads used
/// meanwhile.
async fn pipeline(core: &Core, versions: [i64; 2], seeds: &[u64], workers: usize) -> (Duration, [f64; 3]) {
    let mut first = None;
    for (i, &seed) in seeds.iter().enumerate() {
        let [a, b] = sides(i, versions);
        let new = NewMatch {
            ladder: &LadderId::from(LADDER),
            a_version: a,
            b_version: b,
            seed: i64::try_from(seed).expect("a small seed"),
            kind: MatchKind::Ranked,
            priority: 0,
            tournament_id: None,
            budget: None,
        };
        let id = queue::enqueue(&core.db, &new).await.expect("the match is queued");
        first.get_or_insert(id);
    }
    let first = first.expect("at least one match");
    let wanted = i64::try_from(seeds.len()).expect("a small count");
    let (stop_tx, stop_rx) = watch::channel(false);
    let before = thread_cpu();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for n in 0..workers {
        let config = WorkerConfig::new(format!("bench-{first}-{n}"));
        tasks.spawn(worker::run(core.clone(), config, stop_rx.clone()));
    }
    let elapsed = loop {
        let (finished, failed): (i64, i64) = sqlx::query_as(
            "SELECT COALESCE(SUM(CASE WHEN status = 'finished' THEN 1 ELSE 0 END), 0), \
             COALESCE(SUM(CASE WHEN status = 'failed' THEN 1 ELSE 0 END), 0) FROM matches WHERE id >= $1",
        )
        .bind(first)
        .fetch_one(&core.db.pool)
        .await
        .expect("the count");
        assert_eq!(failed, 0, "a benchmark match failed");
        if finished >= wanted {
            break started.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    // Read before the workers stop: their match threads end with them.
    let after = thread_cpu();
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    let mut used = [0.0; 3];
    for (tid, (name, seconds)) in after {
        let class = match name.as_str() {
            name if name.starts_with("match-") => 0,
            name if name.starts_with("sqlx-sqlite") => 1,
            name if name.starts_with("tokio-") => 2,
            _ => continue,
        };
        used[class] += seconds - before.get(&tid).map_or(0.0, |(_, seconds)| *seconds);
    }
    (elapsed, used)
}

/// Each thread of this process: its id, name and CPU seconds so far.
fn thread_cpu() -> std::collections::HashMap<String, (String, f64)> {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Default::default();
    };
    tasks
        .flatten()
        .map(|task| {
            let tid = task.file_name().to_string_lossy().into_owned();
            let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            let seconds = cpu_seconds(&format!("self/task/{tid}"));
            (tid, (name.trim().to_owned(), seconds))
        })
        .collect()
}

/// The median of sorted, non-empty `values`.
fn median(values: &[f64]) -> f64 {
    let mid = values.len() / 2;
    if values.len().is_multiple_of(2) {
        (values[mid - 1] + values[mid]) / 2.0
    } else {
        values[mid]
    }
}

/// Plays one match per seed (sides alternating) on `threads` threads, as
/// `arbiter play` does, writing each replay; returns the time taken.
fn play_all(bots: &[WasmBot; 2], seeds: &[u64], threads: usize, out: &Path) -> Duration {
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(&seed) = seeds.get(i) else { break };
                    let [a, b] = sides(i, [&bots[0], &bots[1]]);
                    let played = play_one(a, b, seed);
                    let path = out.join(format!("match-{:04}.json", i + 1));
                    std::fs::write(path, played.replay.to_json()).expect("the replay is written");
                }
            });
        }
    });
    started.elapsed()
}

/// Match `i`'s participants: the pair as given for even `i`, swapped for odd.
fn sides<T: Copy>(i: usize, [a, b]: [T; 2]) -> [T; 2] {
    if i.is_multiple_of(2) { [a, b] } else { [b, a] }
}

/// One match at the ladder's default control and fuel rate.
fn play_one(a: &WasmBot, b: &WasmBot, seed: u64) -> PlayedMatch {
    let mut settings = MatchSettings::new(VARIANT, seed);
    settings.match_id = seed;
    settings.fuel_per_ms = Some(DEFAULT_FUEL_PER_MS);
    play_match(&settings, [a, b]).expect("the match is played")
}

/// The virtual time both bots were charged, in seconds.
fn virtual_seconds(played: &PlayedMatch) -> f64 {
    let us: u64 = played
        .replay
        .games
        .iter()
        .flat_map(|game| &game.turns)
        .map(|turn| turn.spent.us)
        .sum();
    us as f64 / 1e6
}

/// User plus system CPU seconds of `/proc/WHICH` (`self`: this process,
/// `thread-self`: the calling thread, `self/task/TID`: one thread), counted
/// in clock ticks of 1/100 s (`USER_HZ`).
fn cpu_seconds(which: &str) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{which}/stat")).unwrap_or_default();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .map_or(Vec::new(), |(_, rest)| rest.split_whitespace().collect());
    // utime and stime are fields 14 and 15; field 3 is fields[0].
    let ticks: f64 = fields
        .get(11..13)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_owned())
}
