//! The ladder server under load, through the real `arbiter serve` binary.
//!
//! 1. **Match throughput.** `arbiter serve --workers 2` (scheduler on) on a
//!    fresh data directory plays the house bots; after a warm-up it counts the
//!    matches that finished in a fixed window (by `finished_ms`, read from the
//!    server's SQLite file) and reports matches per second overall and per
//!    ladder, match durations (`finished_ms − started_ms`), the queue depth
//!    and the server's CPU use.
//! 2. **Read latency on a big ladder.** It generates a database of 1 000
//!    users, 10 000 bots (one active version each, spread over the six
//!    ladders, with ratings) and 1 000 000 finished rated matches straight
//!    into SQLite (the schema comes from a first `arbiter serve --workers 0
//!    --no-schedule`), then starts `arbiter serve --workers 0 --no-schedule`
//!    on it and times the leaderboard API (sequential, then 8 concurrent
//!    clients), the match lists, the API and site pages of two bots (the one
//!    with most matches on `othello:std`, ~16 000, and one with the median
//!    number, ~170), the home, ladder and match pages.
//!
//!    The generator writes in large transactions with multi-row prepared
//!    INSERTs (`synchronous = OFF`, rollback journal in memory, WAL restored
//!    at the end). Matches are played out by an Elo simulation, so each
//!    match's before/after ratings, the ratings rows and their win/draw/loss
//!    counts agree; opponents are picked with a skew (a ladder's first
//!    versions play far more), and one version in 20 is new (a few matches
//!    at the very end, still provisional). Ids, names and values come from a
//!    fixed seed: every run generates the same database.
//!
//! Run with `cargo bench -p arbiter --bench ladder` (three to four
//! minutes after the build). Nothing here asserts on time; latencies are
//! measured by the client over loopback with keep-alive, so they are the
//! server's time plus well under a millisecond.
//!
//! `cargo bench -p arbiter --bench ladder -- throughput` (or `-- api`)
//! runs one part only. Settings, from the environment:
//!
//! | variable | default | meaning |
//! |---|---|---|
//! | `ARBITER_BENCH_SECONDS` | 60 | throughput window, seconds |
//! | `ARBITER_BENCH_WARMUP` | 10 | throughput warm-up, seconds |
//! | `ARBITER_BENCH_MATCHES` | 1000000 | matches generated |
//! | `ARBITER_BENCH_BOTS` | 10000 | bots (one version each) generated |
//! | `ARBITER_BENCH_USERS` | 1000 | users generated |
//! | `ARBITER_BENCH_REQUESTS` | 500 | sequential requests per endpoint (each also stops after 10 s) |
//! | `ARBITER_BENCH_DATA` | a temporary directory | keep the generated data directory here, and reuse it when it already holds the generated data |
//! | `ARBITER_BENCH_SQL` | none | SQL run on the generated database before the server starts (try an index on a copy: it stays in a kept directory) |

use std::collections::{BTreeMap, VecDeque};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, PoisonError, mpsc};
use std::time::{Duration, Instant};

use anyhow::Context;
use arbiter_games::Variant;
use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteSynchronous};
use sqlx::{AssertSqlSafe, Connection, Row};

/// The server binary, built with the bench profile.
const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
/// How long `arbiter serve` may take to print `listening on`.
const STARTUP_TIMEOUT: Duration = Duration::from_secs(180);
/// The leaderboard every latency figure is about.
const LADDER: &str = "othello:std";
/// Each endpoint's sequential run stops after this long even if it has not
/// made all its requests (a slow page would otherwise take minutes).
const ENDPOINT_BUDGET: Duration = Duration::from_secs(10);
/// Clients of the concurrent leaderboard run.
const CONCURRENT_CLIENTS: usize = 8;
/// How long the concurrent run lasts.
const CONCURRENT_TIME: Duration = Duration::from_secs(8);
/// The latency the site's pages aim for (reported, never asserted).
const PAGE_TARGET_MS: f64 = 50.0;

fn main() -> anyhow::Result<()> {
    let words: Vec<String> = std::env::args().skip(1).filter(|arg| !arg.starts_with('-')).collect();
    let selected = |part: &str| words.is_empty() || words.iter().any(|word| part.contains(word.as_str()));
    let settings = Settings::from_env()?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    println!("ladder benchmark: {ARBITER}");
    println!("machine: {cores} cores, load average {}", load_average());
    let started = Instant::now();
    if selected("throughput") {
        runtime.block_on(throughput(&settings))?;
    }
    if selected("api") {
        runtime.block_on(read_latency(&settings))?;
    }
    println!();
    println!(
        "total {:.0} s; load average now {}",
        started.elapsed().as_secs_f64(),
        load_average()
    );
    Ok(())
}

/// What the environment asks for.
struct Settings {
    window: Duration,
    warmup: Duration,
    users: usize,
    bots: usize,
    matches: usize,
    requests: usize,
    data: Option<PathBuf>,
    extra_sql: Option<String>,
}

impl Settings {
    fn from_env() -> anyhow::Result<Settings> {
        fn number(name: &str, default: usize) -> anyhow::Result<usize> {
            match std::env::var(name) {
                Ok(value) if !value.trim().is_empty() => value
                    .trim()
                    .parse()
                    .with_context(|| format!("{name}={value:?} is not a number")),
                _ => Ok(default),
            }
        }
        let settings = Settings {
            window: Duration::from_secs(number("ARBITER_BENCH_SECONDS", 60)?.max(1) as u64),
            warmup: Duration::from_secs(number("ARBITER_BENCH_WARMUP", 10)? as u64),
            users: number("ARBITER_BENCH_USERS", 1_000)?.max(1),
            bots: number("ARBITER_BENCH_BOTS", 10_000)?.max(2 * Variant::ALL.len()),
            matches: number("ARBITER_BENCH_MATCHES", 1_000_000)?.max(1),
            requests: number("ARBITER_BENCH_REQUESTS", 500)?.max(1),
            data: std::env::var_os("ARBITER_BENCH_DATA")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
            extra_sql: std::env::var("ARBITER_BENCH_SQL").ok().filter(|s| !s.trim().is_empty()),
        };
        Ok(settings)
    }
}

// ---------------------------------------------------------------------------
// Part 1: matches per second.

async fn throughput(settings: &Settings) -> anyhow::Result<()> {
    println!();
    println!("== 1. match throughput: arbiter serve --workers 2, scheduler on, house bots ==");
    let dir = tempfile::Builder::new().prefix("arbiter-bench-").tempdir()?;
    let data = dir.path().join("data");
    let booting = Instant::now();
    let server = Server::start(&data, &["--workers", "2"])?;
    println!(
        "server up in {:.2} s at {}; warm-up {} s, window {} s (ARBITER_BENCH_SECONDS)",
        booting.elapsed().as_secs_f64(),
        server.base_url,
        settings.warmup.as_secs(),
        settings.window.as_secs()
    );
    let mut db = open(&data.join("arbiter.db")).await?;
    tokio::time::sleep(settings.warmup).await;

    let t0 = now_ms();
    let cpu0 = server.cpu_seconds();
    let window_start = Instant::now();
    let mut queued_samples = Vec::new();
    let mut next_note = Duration::from_secs(15);
    while window_start.elapsed() < settings.window {
        let queued: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status = 'queued'")
            .fetch_one(&mut db)
            .await?;
        queued_samples.push(queued);
        if window_start.elapsed() >= next_note {
            let done: i64 =
                sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished' AND finished_ms >= $1")
                    .bind(t0)
                    .fetch_one(&mut db)
                    .await?;
            eprintln!(
                "  … {:.0} s: {done} matches finished",
                window_start.elapsed().as_secs_f64()
            );
            next_note += Duration::from_secs(15);
        }
        let left = settings.window.saturating_sub(window_start.elapsed());
        tokio::time::sleep(left.min(Duration::from_millis(500))).await;
    }
    let t1 = now_ms();
    let cpu1 = server.cpu_seconds();
    let seconds = (t1 - t0) as f64 / 1000.0;

    let rows = sqlx::query(
        "SELECT ladder, finished_ms - started_ms FROM matches \
         WHERE status = 'finished' AND finished_ms >= $1 AND finished_ms < $2",
    )
    .bind(t0)
    .bind(t1)
    .fetch_all(&mut db)
    .await?;
    let mut per_ladder: BTreeMap<String, Vec<f64>> = Variant::ALL.iter().map(|v| (v.to_string(), Vec::new())).collect();
    for row in &rows {
        let duration: Option<i64> = row.try_get(1)?;
        per_ladder
            .entry(row.try_get(0)?)
            .or_default()
            .push(duration.unwrap_or(0) as f64);
    }
    let scheduled_rows =
        sqlx::query("SELECT ladder, COUNT(*) FROM matches WHERE created_ms >= $1 AND created_ms < $2 GROUP BY ladder")
            .bind(t0)
            .bind(t1)
            .fetch_all(&mut db)
            .await?;
    let mut scheduled: BTreeMap<String, i64> = BTreeMap::new();
    for row in &scheduled_rows {
        scheduled.insert(row.try_get(0)?, row.try_get(1)?);
    }
    let failed: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM matches WHERE status = 'failed' AND finished_ms >= $1 AND finished_ms < $2",
    )
    .bind(t0)
    .bind(t1)
    .fetch_one(&mut db)
    .await?;
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished' AND finished_ms < $1")
        .bind(t0)
        .fetch_one(&mut db)
        .await?;
    db.close().await?;
    server.stop();

    let all: Vec<f64> = per_ladder.values().flatten().copied().collect();
    println!();
    println!(
        "{:<20} {:>8} {:>10} {:>11} {:>10} {:>10} {:>10} {:>10}",
        "ladder", "matches", "matches/s", "mean ms", "p50 ms", "p90 ms", "max ms", "queued"
    );
    let line = |name: &str, durations: &[f64], queued: i64| {
        let mut sorted = durations.to_vec();
        sorted.sort_by(f64::total_cmp);
        let mean = if sorted.is_empty() {
            f64::NAN
        } else {
            sorted.iter().sum::<f64>() / sorted.len() as f64
        };
        println!(
            "{:<20} {:>8} {:>10.2} {:>11.0} {:>10.0} {:>10.0} {:>10.0} {:>10}",
            name,
            sorted.len(),
            sorted.len() as f64 / seconds,
            mean,
            percentile(&sorted, 0.5),
            percentile(&sorted, 0.9),
            sorted.last().copied().unwrap_or(f64::NAN),
            queued
        );
    };
    for (ladder, durations) in &per_ladder {
        line(ladder, durations, scheduled.get(ladder).copied().unwrap_or(0));
    }
    line("all ladders", &all, scheduled.values().sum());
    println!(
        "window {seconds:.1} s; {before} matches finished during start-up and warm-up; {failed} failed in the window; \
         queued = matches the scheduler queued in the window"
    );
    let starved = queued_samples.iter().filter(|&&q| q == 0).count();
    let mean_queued = queued_samples.iter().sum::<i64>() as f64 / queued_samples.len().max(1) as f64;
    println!(
        "queue: {mean_queued:.1} matches queued on average; empty in {starved} of {} samples (empty = workers wait for the scheduler)",
        queued_samples.len()
    );
    if let (Some(cpu0), Some(cpu1)) = (cpu0, cpu1) {
        let cpu = cpu1 - cpu0;
        println!(
            "server CPU: {:.1} s in {seconds:.1} s = {:.0}% of one core ({:.0}% of the machine); {:.1} CPU-ms per match",
            cpu,
            100.0 * cpu / seconds,
            100.0 * cpu / seconds / std::thread::available_parallelism().map_or(1, usize::from) as f64,
            1000.0 * cpu / all.len().max(1) as f64
        );
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Part 2: read latency on a big database.

async fn read_latency(settings: &Settings) -> anyhow::Result<()> {
    println!();
    println!(
        "== 2. read latency: {} versions, {} matches, arbiter serve --workers 0 --no-schedule ==",
        settings.bots, settings.matches
    );
    let temp = tempfile::Builder::new().prefix("arbiter-bench-").tempdir()?;
    let data = settings.data.clone().unwrap_or_else(|| temp.path().join("data"));
    let db_path = data.join("arbiter.db");
    let existing = if db_path.exists() {
        let mut db = open(&db_path).await?;
        let n: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches")
            .fetch_one(&mut db)
            .await?;
        db.close().await?;
        n
    } else {
        0
    };
    if existing >= settings.matches as i64 {
        println!("reusing {} ({existing} matches): generation skipped", data.display());
    } else {
        anyhow::ensure!(
            existing == 0,
            "{} holds {existing} matches, fewer than asked for: remove it or point ARBITER_BENCH_DATA elsewhere",
            data.display()
        );
        // The server makes the schema and registers the house bots.
        let schema = Instant::now();
        Server::start(&data, &["--workers", "0", "--no-schedule"])?.stop();
        println!(
            "schema: arbiter serve created it in {:.2} s",
            schema.elapsed().as_secs_f64()
        );
        let report = generate(&db_path, settings).await?;
        println!(
            "generated {} users, {} bots/versions, {} matches in {:.1} s ({:.0} matches/s); database {:.0} MB",
            report.users,
            report.versions,
            report.matches,
            report.seconds,
            report.matches as f64 / report.seconds,
            file_mb(&db_path)
        );
        if settings.data.is_some() {
            println!("kept in {} (ARBITER_BENCH_DATA)", data.display());
        }
    }
    if let Some(sql) = &settings.extra_sql {
        let mut db = open(&db_path).await?;
        let applying = Instant::now();
        sqlx::raw_sql(AssertSqlSafe(sql.clone())).execute(&mut db).await?;
        db.close().await?;
        println!(
            "applied ARBITER_BENCH_SQL in {:.2} s: {sql}",
            applying.elapsed().as_secs_f64()
        );
    }

    let picks = pick_subjects(&db_path).await?;
    let booting = Instant::now();
    let server = Server::start(&data, &["--workers", "0", "--no-schedule"])?;
    println!(
        "server up in {:.2} s at {}",
        booting.elapsed().as_secs_f64(),
        server.base_url
    );
    arbiter_ladder::install_tls_provider();
    let client = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(120))
        .pool_max_idle_per_host(64)
        .build()?;
    let site = {
        let response = client.get(server.url("/")).send().await?;
        let html = response
            .headers()
            .get(reqwest::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/html"));
        response.status().is_success() && html
    };
    if !site {
        println!("the site's pages do not answer yet: only the API is measured");
    }

    let top = &picks.top;
    let typical = &picks.typical;
    println!(
        "subjects: top bot {} ({} matches on {LADDER}), typical bot {} ({} matches), {} match pages",
        top.0,
        top.1,
        typical.0,
        typical.1,
        picks.match_ids.len()
    );
    let mut endpoints: Vec<(String, Vec<String>, bool)> = vec![
        (
            format!("GET /api/ladders/{LADDER}/leaderboard"),
            vec![format!("/api/ladders/{LADDER}/leaderboard")],
            false,
        ),
        (
            "GET /api/matches?limit=50".into(),
            vec!["/api/matches?limit=50".into()],
            false,
        ),
        (
            "GET /api/matches?status=finished".into(),
            vec!["/api/matches?status=finished&limit=50".into()],
            false,
        ),
        (
            "GET /api/matches?bot=(top)&limit=50".into(),
            vec![format!("/api/matches?bot={}&limit=50", top.0)],
            false,
        ),
        (
            "GET /api/matches?bot=(typical)&limit=50".into(),
            vec![format!("/api/matches?bot={}&limit=50", typical.0)],
            false,
        ),
        (
            format!("GET /api/bots/(top) {}", top.0),
            vec![format!("/api/bots/{}", top.0)],
            false,
        ),
        (
            format!("GET /api/bots/(typical) {}", typical.0),
            vec![format!("/api/bots/{}", typical.0)],
            false,
        ),
    ];
    if site {
        endpoints.extend([
            ("page /".to_string(), vec!["/".to_string()], true),
            (
                format!("page /ladders/{LADDER}"),
                vec![format!("/ladders/{LADDER}")],
                true,
            ),
            (
                format!("page /ladders/{LADDER}?fragment=rows"),
                vec![format!("/ladders/{LADDER}?fragment=rows")],
                true,
            ),
            (
                format!("page /bots/(top) {}", top.0),
                vec![format!("/bots/{}", top.0)],
                true,
            ),
            (
                format!("page /bots/(typical) {}", typical.0),
                vec![format!("/bots/{}", typical.0)],
                true,
            ),
            (
                "page /matches/{id} (random ids)".to_string(),
                picks.match_ids.iter().map(|id| format!("/matches/{id}")).collect(),
                true,
            ),
        ]);
    }

    println!();
    println!(
        "{:<44} {:>5} {:>9} {:>9} {:>9} {:>9} {:>9}  note",
        "sequential, after 5 warm-up requests", "n", "p50 ms", "p99 ms", "max ms", "mean ms", "KiB"
    );
    let mut slow = Vec::new();
    for (label, paths, page) in &endpoints {
        let urls: Vec<String> = paths.iter().map(|p| server.url(p)).collect();
        let sample = sequential(&client, &urls, settings.requests).await;
        let p50 = sample.percentile_ms(0.5);
        let mut note = String::new();
        if let Some(error) = &sample.first_error {
            note = format!("{} errors, first: {error}", sample.errors);
        } else if sample.latencies.len() < settings.requests {
            note = "stopped at the time budget".into();
        }
        if *page {
            let verdict = if p50 < PAGE_TARGET_MS { "meets" } else { "MISSES" };
            note = format!("{verdict} {PAGE_TARGET_MS:.0} ms target {note}");
        }
        if p50 >= PAGE_TARGET_MS {
            slow.push(label.clone());
        }
        println!(
            "{:<44} {:>5} {:>9.2} {:>9.2} {:>9.2} {:>9.2} {:>9.1}  {}",
            label,
            sample.latencies.len(),
            p50,
            sample.percentile_ms(0.99),
            sample.percentile_ms(1.0),
            sample.mean_ms(),
            sample.bytes as f64 / sample.latencies.len().max(1) as f64 / 1024.0,
            note.trim()
        );
    }

    let url = server.url(&format!("/api/ladders/{LADDER}/leaderboard"));
    let (sample, wall) = concurrent(&client, &url, CONCURRENT_CLIENTS, CONCURRENT_TIME).await;
    println!();
    println!(
        "concurrent: {CONCURRENT_CLIENTS} clients on GET /api/ladders/{LADDER}/leaderboard for {:.1} s: \
         {} requests, {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms{}",
        wall.as_secs_f64(),
        sample.latencies.len(),
        sample.latencies.len() as f64 / wall.as_secs_f64(),
        sample.percentile_ms(0.5),
        sample.percentile_ms(0.99),
        sample.percentile_ms(1.0),
        match &sample.first_error {
            Some(error) => format!(", {} errors, first: {error}", sample.errors),
            None => String::new(),
        }
    );
    if !slow.is_empty() {
        println!("p50 at or above {PAGE_TARGET_MS:.0} ms: {}", slow.join("; "));
    }
    drop(server);
    drop(temp);
    Ok(())
}

/// The bots and matches the latency runs look at.
struct Subjects {
    /// The bot with most matches on [`LADDER`], and that number.
    top: (String, i64),
    /// A bot with the median number of matches on [`LADDER`].
    typical: (String, i64),
    /// Random finished matches.
    match_ids: Vec<i64>,
}

async fn pick_subjects(db_path: &Path) -> anyhow::Result<Subjects> {
    let mut db = open(db_path).await?;
    let by_matches = "SELECT b.name, r.wins + r.draws + r.losses AS n FROM ratings r \
         JOIN versions v ON v.id = r.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE r.ladder = $1 AND v.status = 'active'";
    let top: (String, i64) = sqlx::query_as(AssertSqlSafe(format!("{by_matches} ORDER BY n DESC, b.id LIMIT 1")))
        .bind(LADDER)
        .fetch_one(&mut db)
        .await?;
    let count: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM ({by_matches})")))
        .bind(LADDER)
        .fetch_one(&mut db)
        .await?;
    let typical: (String, i64) = sqlx::query_as(AssertSqlSafe(format!(
        "{by_matches} ORDER BY n, b.id LIMIT 1 OFFSET $2"
    )))
    .bind(LADDER)
    .bind(count / 2)
    .fetch_one(&mut db)
    .await?;
    let (low, high): (i64, i64) =
        sqlx::query_as("SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0) FROM matches WHERE status = 'finished'")
            .fetch_one(&mut db)
            .await?;
    db.close().await?;
    let mut rng = Rng(0x5eed_1ad0);
    let match_ids = (0..64)
        .map(|_| low + rng.below((high - low + 1).max(1) as u64) as i64)
        .collect();
    Ok(Subjects {
        top,
        typical,
        match_ids,
    })
}

/// Latencies of one run.
#[derive(Default)]
struct Sample {
    latencies: Vec<Duration>,
    bytes: usize,
    errors: usize,
    first_error: Option<String>,
}

impl Sample {
    fn percentile_ms(&self, q: f64) -> f64 {
        let mut sorted: Vec<f64> = self.latencies.iter().map(|d| d.as_secs_f64() * 1000.0).collect();
        sorted.sort_by(f64::total_cmp);
        percentile(&sorted, q)
    }

    fn mean_ms(&self) -> f64 {
        let total: Duration = self.latencies.iter().sum();
        total.as_secs_f64() * 1000.0 / self.latencies.len().max(1) as f64
    }

    fn merge(&mut self, other: Sample) {
        self.latencies.extend(other.latencies);
        self.bytes += other.bytes;
        self.errors += other.errors;
        if self.first_error.is_none() {
            self.first_error = other.first_error;
        }
    }
}

/// One GET: its latency (the whole body read) and size, or why it failed.
async fn get(client: &reqwest::Client, url: &str) -> Result<(Duration, usize), String> {
    let started = Instant::now();
    let response = client.get(url).send().await.map_err(|e| e.to_string())?;
    let status = response.status();
    let body = response.bytes().await.map_err(|e| e.to_string())?;
    let elapsed = started.elapsed();
    if !status.is_success() {
        let text = String::from_utf8_lossy(&body[..body.len().min(200)]).into_owned();
        return Err(format!("{status}: {text}"));
    }
    Ok((elapsed, body.len()))
}

/// `requests` GETs one after the other, cycling through `urls`, after a
/// short warm-up; stops early at [`ENDPOINT_BUDGET`].
async fn sequential(client: &reqwest::Client, urls: &[String], requests: usize) -> Sample {
    let warm = Instant::now();
    for url in urls.iter().cycle().take(5) {
        let _ = get(client, url).await;
        if warm.elapsed() > ENDPOINT_BUDGET / 4 {
            break;
        }
    }
    let mut sample = Sample::default();
    let started = Instant::now();
    for url in urls.iter().cycle().take(requests) {
        record(&mut sample, get(client, url).await);
        if started.elapsed() > ENDPOINT_BUDGET && sample.latencies.len() >= 5 {
            break;
        }
    }
    sample
}

fn record(sample: &mut Sample, result: Result<(Duration, usize), String>) {
    match result {
        Ok((latency, bytes)) => {
            sample.latencies.push(latency);
            sample.bytes += bytes;
        }
        Err(error) => {
            sample.errors += 1;
            sample.first_error.get_or_insert(error);
        }
    }
}

/// `clients` loops GETting `url` for `time`.
async fn concurrent(client: &reqwest::Client, url: &str, clients: usize, time: Duration) -> (Sample, Duration) {
    for _ in 0..clients {
        let _ = get(client, url).await;
    }
    let started = Instant::now();
    let deadline = started + time;
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let (client, url) = (client.clone(), url.to_string());
        tasks.spawn(async move {
            let mut sample = Sample::default();
            while Instant::now() < deadline {
                record(&mut sample, get(&client, &url).await);
            }
            sample
        });
    }
    let mut total = Sample::default();
    while let Some(joined) = tasks.join_next().await {
        match joined {
            Ok(sample) => total.merge(sample),
            Err(error) => {
                total.errors += 1;
                total.first_error.get_or_insert(error.to_string());
            }
        }
    }
    (total, started.elapsed())
}

// ---------------------------------------------------------------------------
// The data generator.

struct Generated {
    users: usize,
    versions: usize,
    matches: usize,
    seconds: f64,
}

/// A value of a generated row.
enum Val {
    I(i64),
    F(f64),
    N,
    T(&'static str),
    S(String),
}

/// Rows of one table, inserted many per statement.
struct Inserter {
    head: &'static str,
    row: &'static str,
    columns: usize,
    per_statement: usize,
    values: Vec<Val>,
    sql: String,
}

impl Inserter {
    /// `head` is `INSERT INTO t (…) VALUES`, `row` one row's placeholders,
    /// e.g. `(?, ?, 'x')`: a value is pushed for each `?`.
    fn new(head: &'static str, row: &'static str) -> Inserter {
        let columns = row.matches('?').count();
        // SQLite allows 32 766 parameters per statement.
        let per_statement = (30_000 / columns).min(1_000);
        Inserter {
            head,
            row,
            columns,
            per_statement,
            values: Vec::with_capacity(per_statement * columns),
            sql: Inserter::statement(head, row, per_statement),
        }
    }

    fn statement(head: &str, row: &str, rows: usize) -> String {
        let mut sql = String::with_capacity(head.len() + rows * (row.len() + 1));
        sql.push_str(head);
        for i in 0..rows {
            sql.push_str(if i == 0 { " " } else { "," });
            sql.push_str(row);
        }
        sql
    }

    async fn push(&mut self, conn: &mut SqliteConnection, row: impl IntoIterator<Item = Val>) -> anyhow::Result<()> {
        self.values.extend(row);
        if self.values.len() >= self.per_statement * self.columns {
            self.flush(conn).await?;
        }
        Ok(())
    }

    async fn flush(&mut self, conn: &mut SqliteConnection) -> anyhow::Result<()> {
        if self.values.is_empty() {
            return Ok(());
        }
        let rows = self.values.len() / self.columns;
        let sql = if rows == self.per_statement {
            self.sql.clone()
        } else {
            Inserter::statement(self.head, self.row, rows)
        };
        let mut query = sqlx::query(AssertSqlSafe(sql));
        for value in self.values.drain(..) {
            query = match value {
                Val::I(v) => query.bind(v),
                Val::F(v) => query.bind(v),
                Val::N => query.bind(None::<i64>),
                Val::T(v) => query.bind(v),
                Val::S(v) => query.bind(v),
            };
        }
        query.execute(&mut *conn).await?;
        Ok(())
    }
}

/// A small deterministic generator (SplitMix64).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [0, n).
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// Roughly normal (sum of uniforms).
    fn normal(&mut self, mean: f64, sd: f64) -> f64 {
        let sum: f64 = (0..6).map(|_| self.unit()).sum();
        mean + (sum - 3.0) * sd * std::f64::consts::SQRT_2
    }
}

/// A generated version, as the simulation moves it.
struct Sim {
    id: i64,
    strength: f64,
    rating: f64,
    played: i64,
    wdl: [i64; 3],
    last_played_ms: Option<i64>,
    /// Uploaded lately: plays only at the end (still provisional).
    new: bool,
}

impl Sim {
    fn deviation(&self) -> f64 {
        (350.0 * 0.93f64.powi(self.played.min(1_000) as i32)).max(45.0)
    }
}

/// Finish reasons of the two games of a match, as the worker writes them.
fn reasons(othello: bool, winner: Option<i64>, timeout: bool) -> &'static str {
    match (othello, winner, timeout) {
        (_, Some(0), true) => {
            r#"[{"game":1,"reason":"timeout","faulted_side":1,"faulted_participant":1},{"game":2,"reason":"timeout","faulted_side":0,"faulted_participant":1}]"#
        }
        (_, Some(_), true) => {
            r#"[{"game":1,"reason":"timeout","faulted_side":0,"faulted_participant":0},{"game":2,"reason":"timeout","faulted_side":1,"faulted_participant":0}]"#
        }
        (true, _, _) => {
            r#"[{"game":1,"reason":"discs","faulted_side":null,"faulted_participant":null},{"game":2,"reason":"discs","faulted_side":null,"faulted_participant":null}]"#
        }
        (false, Some(_), _) => {
            r#"[{"game":1,"reason":"line","faulted_side":null,"faulted_participant":null},{"game":2,"reason":"draw","faulted_side":null,"faulted_participant":null}]"#
        }
        (false, None, _) => {
            r#"[{"game":1,"reason":"draw","faulted_side":null,"faulted_participant":null},{"game":2,"reason":"draw","faulted_side":null,"faulted_participant":null}]"#
        }
    }
}

/// Fills the database at `path` (schema applied, house bots registered, no
/// server running): users, bots with one active version each on one ladder,
/// ratings, and finished rated matches played out by an Elo simulation, so
/// ratings, records and each match's before/after ratings agree.
async fn generate(path: &Path, settings: &Settings) -> anyhow::Result<Generated> {
    let started = Instant::now();
    let options = SqliteConnectOptions::new()
        .filename(path)
        .foreign_keys(false)
        .synchronous(SqliteSynchronous::Off)
        .pragma("cache_size", "-1048576")
        .pragma("temp_store", "MEMORY");
    let mut conn = SqliteConnection::connect_with(&options).await?;
    // One write of every page instead of two (WAL, then the checkpoint); the
    // server puts WAL back when it opens the database.
    sqlx::query("PRAGMA journal_mode = MEMORY").execute(&mut conn).await?;

    let mut rng = Rng(2026);
    let now = now_ms();
    let day: i64 = 86_400_000;
    let history_start = now - 30 * day;
    let history_end = now - 600_000;
    let ladders: Vec<&'static str> = Variant::ALL
        .iter()
        .map(|v| &*Box::leak(v.to_string().into_boxed_str()))
        .collect();
    let ladders_json: Vec<&'static str> = ladders
        .iter()
        .map(|l| &*Box::leak(format!("[\"{l}\"]").into_boxed_str()))
        .collect();
    let next_id = |table: &'static str| {
        sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!("SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")))
    };
    let first_user = next_id("users").fetch_one(&mut conn).await?;
    let first_bot = next_id("bots").fetch_one(&mut conn).await?;
    let first_version = next_id("versions").fetch_one(&mut conn).await?;
    let first_match = next_id("matches").fetch_one(&mut conn).await?;
    let first_seq: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM matches")
        .fetch_one(&mut conn)
        .await?;

    // Users, bots, versions.
    let mut tx = conn.begin().await?;
    let mut users = Inserter::new(
        "INSERT INTO users (id, name, name_key, password_hash, is_house, created_ms) VALUES",
        "(?, ?, ?, '$argon2id$v=19$m=19456,t=2,p=1$YmVuY2htYXJr$bm90IGEgcmVhbCBoYXNo', 0, ?)",
    );
    for u in 0..settings.users {
        let name = format!("user{u:05}");
        users
            .push(
                &mut tx,
                [
                    Val::I(first_user + u as i64),
                    Val::S(name.clone()),
                    Val::S(name),
                    Val::I(history_start - day + u as i64),
                ],
            )
            .await?;
    }
    users.flush(&mut tx).await?;
    let mut bots = Inserter::new(
        "INSERT INTO bots (id, owner_id, name, name_key, retired, created_ms) VALUES",
        "(?, ?, ?, ?, 0, ?)",
    );
    let mut versions = Inserter::new(
        "INSERT INTO versions (id, bot_id, number, sha256, size, status, ladders, created_ms, checked_ms) VALUES",
        "(?, ?, 1, ?, ?, 'active', ?, ?, ?)",
    );
    let mut version_ladders = Inserter::new("INSERT INTO version_ladders (version_id, ladder) VALUES", "(?, ?)");
    // Each ladder's versions, in id order: the first of each plays most.
    let mut by_ladder: Vec<Vec<Sim>> = (0..ladders.len()).map(|_| Vec::new()).collect();
    for k in 0..settings.bots {
        let (bot_id, version_id) = (first_bot + k as i64, first_version + k as i64);
        let ladder = k % ladders.len();
        let new = k % 20 == 19;
        let created = if new {
            history_end - day + k as i64
        } else {
            history_start + (k as i64) * 1000
        };
        let name = format!("bot-{k:05}");
        bots.push(
            &mut tx,
            [
                Val::I(bot_id),
                Val::I(first_user + (k % settings.users) as i64),
                Val::S(name.clone()),
                Val::S(name),
                Val::I(created),
            ],
        )
        .await?;
        let sha256 = format!(
            "{:016x}{:016x}{:016x}{:016x}",
            rng.next(),
            rng.next(),
            rng.next(),
            rng.next()
        );
        versions
            .push(
                &mut tx,
                [
                    Val::I(version_id),
                    Val::I(bot_id),
                    Val::S(sha256),
                    Val::I(60_000 + rng.below(400_000) as i64),
                    Val::T(ladders_json[ladder]),
                    Val::I(created),
                    Val::I(created + 3_000),
                ],
            )
            .await?;
        version_ladders
            .push(&mut tx, [Val::I(version_id), Val::T(ladders[ladder])])
            .await?;
        by_ladder[ladder].push(Sim {
            id: version_id,
            strength: rng.normal(1500.0, 250.0),
            rating: 1500.0,
            played: 0,
            wdl: [0; 3],
            last_played_ms: None,
            new,
        });
    }
    bots.flush(&mut tx).await?;
    versions.flush(&mut tx).await?;
    version_ladders.flush(&mut tx).await?;
    tx.commit().await?;

    // Matches, played out in order.
    let mut matches = Inserter::new(
        "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, priority, status, created_ms, claimed_by, \
         attempts, started_ms, finished_ms, winner, score_a, score_b, reasons, rated, rated_seq, \
         a_before, a_after, b_before, b_after, a_rd_after, b_rd_after) VALUES",
        "(?, ?, ?, ?, ?, 'ranked', 0, 'finished', ?, 'bench-worker', 1, ?, ?, ?, ?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)",
    );
    let total = settings.matches;
    let late = total - total / 500; // the last 0.2% let new versions in
    let mut tx = conn.begin().await?;
    for i in 0..total {
        if i > 0 && i % 250_000 == 0 {
            matches.flush(&mut tx).await?;
            tx.commit().await?;
            tx = conn.begin().await?;
            eprintln!("  … {i} matches in {:.1} s", started.elapsed().as_secs_f64());
        }
        let l = rng.below(ladders.len() as u64) as usize;
        let pool = &mut by_ladder[l];
        let n = pool.len() as u64;
        let eligible = |s: &Sim| i >= late || !s.new;
        let mut a = loop {
            // Skewed: the ladder's first versions play far more often.
            let k = (n as f64 * rng.unit().powi(3)) as usize;
            if eligible(&pool[k]) {
                break k;
            }
        };
        let mut b = loop {
            let k = rng.below(n) as usize;
            if k != a && eligible(&pool[k]) {
                break k;
            }
        };
        if rng.below(2) == 1 {
            std::mem::swap(&mut a, &mut b);
        }
        let variant = Variant::ALL[l];
        let othello = matches!(variant, Variant::Othello(_));
        let anti = variant.scoring() == arbiter_games::Scoring::LowerWins;
        let (sa, sb) = (pool[a].strength, pool[b].strength);
        let p_a = 1.0 / (1.0 + 10f64.powf((sb - sa) / 400.0));
        let draw = if othello { 0.04 } else { 0.45 };
        let u = rng.unit();
        let winner: Option<i64> = if u < draw {
            None
        } else if (u - draw) / (1.0 - draw) < p_a {
            Some(0)
        } else {
            Some(1)
        };
        let timeout = winner.is_some() && rng.below(200) == 0;
        let (score_a, score_b) = if othello {
            let (win, lose) = {
                let w = 66 + rng.below(50) as i64;
                (w, (128 - w - rng.below(6) as i64).max(0))
            };
            match (winner, anti) {
                (None, _) => (64, 64),
                (Some(0), false) | (Some(1), true) => (win, lose),
                _ => (lose, win),
            }
        } else {
            match winner {
                None => (0, 0),
                Some(0) => (1, 0),
                Some(_) => (0, 1),
            }
        };
        let finished = history_start + ((history_end - history_start) as f64 * i as f64 / total as f64) as i64;
        let duration = if othello {
            1_500 + rng.below(12_000) as i64
        } else {
            20 + rng.below(200) as i64
        };
        let started_ms = finished - duration;
        let created = started_ms - rng.below(3_000) as i64;
        // Elo, K = 32 in placement and 16 after; the stored deviation shrinks
        // with matches played.
        let (ra, rb) = (pool[a].rating, pool[b].rating);
        let expected_a = 1.0 / (1.0 + 10f64.powf((rb - ra) / 400.0));
        let score = match winner {
            Some(0) => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        };
        let k = |s: &Sim| if s.played < 30 { 32.0 } else { 16.0 };
        let (a_after, b_after) = (
            ra + k(&pool[a]) * (score - expected_a),
            rb + k(&pool[b]) * (expected_a - score),
        );
        let (a_slot, b_slot) = match winner {
            Some(0) => (0, 2),
            Some(_) => (2, 0),
            None => (1, 1),
        };
        for (side, after, slot) in [(a, a_after, a_slot), (b, b_after, b_slot)] {
            let sim = &mut pool[side];
            sim.rating = after;
            sim.played += 1;
            sim.wdl[slot] += 1;
            sim.last_played_ms = Some(finished);
        }
        let (a_id, b_id, a_rd, b_rd) = (pool[a].id, pool[b].id, pool[a].deviation(), pool[b].deviation());
        matches
            .push(
                &mut tx,
                [
                    Val::I(first_match + i as i64),
                    Val::T(ladders[l]),
                    Val::I(a_id),
                    Val::I(b_id),
                    Val::I((rng.next() >> 1) as i64),
                    Val::I(created),
                    Val::I(started_ms),
                    Val::I(finished),
                    winner.map_or(Val::N, Val::I),
                    Val::I(score_a),
                    Val::I(score_b),
                    Val::T(reasons(othello, winner, timeout)),
                    Val::I(first_seq + i as i64),
                    Val::F(ra),
                    Val::F(a_after),
                    Val::F(rb),
                    Val::F(b_after),
                    Val::F(a_rd),
                    Val::F(b_rd),
                ],
            )
            .await?;
    }
    matches.flush(&mut tx).await?;
    tx.commit().await?;

    // Ratings as the matches left them.
    let mut tx = conn.begin().await?;
    let mut ratings = Inserter::new(
        "INSERT INTO ratings (version_id, ladder, rating, deviation, volatility, wins, draws, losses, last_played_ms) \
         VALUES",
        "(?, ?, ?, ?, 0.06, ?, ?, ?, ?)",
    );
    for (l, pool) in by_ladder.iter().enumerate() {
        for sim in pool {
            ratings
                .push(
                    &mut tx,
                    [
                        Val::I(sim.id),
                        Val::T(ladders[l]),
                        Val::F(sim.rating),
                        Val::F(sim.deviation()),
                        Val::I(sim.wdl[0]),
                        Val::I(sim.wdl[1]),
                        Val::I(sim.wdl[2]),
                        sim.last_played_ms.map_or(Val::N, Val::I),
                    ],
                )
                .await?;
        }
    }
    ratings.flush(&mut tx).await?;
    tx.commit().await?;
    sqlx::query("PRAGMA journal_mode = WAL").execute(&mut conn).await?;
    conn.close().await?;
    Ok(Generated {
        users: settings.users,
        versions: settings.bots,
        matches: total,
        seconds: started.elapsed().as_secs_f64(),
    })
}

// ---------------------------------------------------------------------------
// The server process and small helpers.

/// A running `arbiter serve`, killed when dropped.
struct Server {
    base_url: String,
    child: Child,
    output: Arc<Mutex<VecDeque<String>>>,
}

impl Server {
    /// Starts `arbiter serve --data DATA --listen 127.0.0.1:0 ARGS…` and
    /// waits for its `listening on http://ADDR` line.
    fn start(data: &Path, args: &[&str]) -> anyhow::Result<Server> {
        let mut child = Command::new(ARBITER)
            .arg("serve")
            .arg("--data")
            .arg(data)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot run {ARBITER}"))?;
        let output = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = mpsc::channel();
        let stdout = child.stdout.take().context("piped stdout")?;
        let stderr = child.stderr.take().context("piped stderr")?;
        collect_lines(stdout, Arc::clone(&output), Some(tx));
        collect_lines(stderr, Arc::clone(&output), None);
        let mut server = Server {
            base_url: String::new(),
            child,
            output,
        };
        match rx.recv_timeout(STARTUP_TIMEOUT) {
            Ok(addr) => {
                server.base_url = format!("http://{addr}");
                Ok(server)
            }
            Err(_) => {
                let _ = server.child.kill();
                let status = server.child.wait().map(|s| s.to_string()).unwrap_or_default();
                std::thread::sleep(Duration::from_millis(100));
                anyhow::bail!("arbiter serve did not start ({status}); its output:\n{}", server.tail())
            }
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    fn tail(&self) -> String {
        let output = self.output.lock().unwrap_or_else(PoisonError::into_inner);
        output.iter().cloned().collect::<Vec<_>>().join("\n")
    }

    /// CPU time of the server and its finished children (the compiler
    /// processes), from `/proc`.
    fn cpu_seconds(&self) -> Option<f64> {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).ok()?;
        let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
        // Fields 14–17 (utime, stime, cutime, cstime); field 3 is fields[0].
        let ticks: f64 = fields.get(11..15)?.iter().filter_map(|f| f.parse::<f64>().ok()).sum();
        Some(ticks / clock_ticks())
    }

    /// Stops the server: SIGINT (it shuts down cleanly), then SIGKILL after
    /// 10 s.
    fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        eprintln!("arbiter serve ignored SIGINT for 10 s: killed");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Keeps the last lines of `stream`; the first `listening on http://ADDR`
/// goes to `addr`.
fn collect_lines(
    stream: impl Read + Send + 'static,
    output: Arc<Mutex<VecDeque<String>>>,
    mut addr: Option<mpsc::Sender<SocketAddr>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("listening on http://").nth(1)
                && let Ok(parsed) = rest.trim().parse::<SocketAddr>()
                && let Some(sender) = addr.take()
            {
                let _ = sender.send(parsed);
            }
            let mut output = output.lock().unwrap_or_else(PoisonError::into_inner);
            output.push_back(line);
            if output.len() > 80 {
                output.pop_front();
            }
        }
    });
}

/// A connection to the SQLite file of a data directory.
async fn open(path: &Path) -> anyhow::Result<SqliteConnection> {
    let options = SqliteConnectOptions::new()
        .filename(path)
        .busy_timeout(Duration::from_secs(30));
    SqliteConnection::connect_with(&options)
        .await
        .with_context(|| format!("cannot open {}", path.display()))
}

/// The `q` quantile of sorted values (nearest rank); NaN when empty.
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn now_ms() -> i64 {
    arbiter_ladder::db::now_ms()
}

fn file_mb(path: &Path) -> f64 {
    std::fs::metadata(path).map_or(0.0, |m| m.len() as f64 / 1e6)
}

/// Clock ticks per second of `/proc` times.
fn clock_ticks() -> f64 {
    Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|out| String::from_utf8(out.stdout).ok())
        .and_then(|text| text.trim().parse().ok())
        .unwrap_or(100.0)
}

/// The one-minute load average.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|text| text.split_whitespace().next().map(str::to_owned))
        .unwrap_or_else(|| "?".into())
}
