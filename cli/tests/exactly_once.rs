//! Exactly-once matches: workers in this process and `arbiter worker`
//! processes share one queue; one process is killed (SIGKILL) while it
//! holds a running match; every match still ends finished and rated exactly
//! once, and the ratings equal a recomputation from the match log. Host
//! failures end `failed`, unrated. A ladder's time control reaches only the
//! matches queued after it changes.
//!
//! Each scenario runs on SQLite, and on PostgreSQL when `TEST_PG_URL` is set
//! (CI sets it; each run gets a database of its own, dropped afterwards).

mod support;

use arbiter_ladder::blobs::Blobs;
use arbiter_ladder::core::Core;
use arbiter_ladder::db::{Backend, Db};
use arbiter_ladder::events::Events;
use arbiter_ladder::metrics::Metrics;
use arbiter_ladder::model::{LadderId, MatchKind};
use arbiter_ladder::queue;
use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem, recompute};
use arbiter_ladder::worker::{self, LEASE_ENV, WorkerConfig};
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};
use sqlx::Row;
use std::collections::HashMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use support::{PgDatabase, exit_code, send_signal};
use tokio::sync::watch;

const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
const LADDER: &str = "othello:std";
/// Short, so that the killed worker's match is taken over quickly.
const LEASE_MS: u64 = 1500;

/// The scenarios are CPU-heavy (2 cores): one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime")
}

/// `TEST_PG_URL`, if PostgreSQL tests are wanted.
fn pg_url() -> Option<String> {
    std::env::var("TEST_PG_URL").ok().filter(|url| !url.is_empty())
}

/// A data directory, a database and a [`Core`] on them whose sandbox
/// compiles with the `arbiter` binary (this test binary cannot).
struct Ladder {
    dir: tempfile::TempDir,
    core: Core,
    /// `DATABASE_URL` for worker processes (PostgreSQL only).
    database_url: Option<String>,
    pg: Option<PgDatabase>,
}

impl Ladder {
    async fn open(backend: Backend) -> Ladder {
        let dir = tempfile::tempdir().expect("tempdir");
        let (db, pg) = match backend {
            Backend::Sqlite => (
                Db::open_sqlite(&dir.path().join("arbiter.db")).await.expect("sqlite"),
                None,
            ),
            Backend::Postgres => {
                let pg = PgDatabase::create().await;
                (Db::connect(&pg.url).await.expect("postgres"), Some(pg))
            }
        };
        Ladder::on(dir, db, pg).await
    }

    /// A ladder on the PostgreSQL database at `url`.
    async fn open_url(url: &str) -> Ladder {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::connect(url).await.expect("postgres");
        let mut ladder = Ladder::on(dir, db, None).await;
        ladder.database_url = Some(url.to_owned());
        ladder
    }

    async fn on(dir: tempfile::TempDir, db: Db, pg: Option<PgDatabase>) -> Ladder {
        let sandbox = Sandbox::new(SandboxConfig {
            compiler: CompilerCommand::embedded_in(ARBITER),
            cache_dir: Some(dir.path().join("compiled")),
            ..SandboxConfig::default()
        })
        .expect("sandbox");
        let core = Core {
            handles: arbiter_ladder::core::Handles {
                db,
                blobs: Blobs::open(&dir.path().join("blobs")).expect("blobs"),
                metrics: Metrics::new(&sandbox),
                sandbox,
                events: Events::default(),
                rating: RatingSystem::Glicko2,
                remote_urls: arbiter_remote::AddressPolicy::PUBLIC_ONLY,
                budgets: Default::default(),
            },
            agents: Default::default(),
            people: Default::default(),
        };
        arbiter_ladder::house::seed(&core).await.expect("house bots");
        Ladder {
            database_url: pg.as_ref().map(|pg| pg.url.clone()),
            dir,
            core,
            pg,
        }
    }

    fn data(&self) -> &Path {
        self.dir.path()
    }

    /// Active version ids on [`LADDER`], by bot name.
    async fn versions(&self) -> HashMap<String, i64> {
        let rows = sqlx::query(
            "SELECT b.name, v.id FROM versions v JOIN bots b ON b.id = v.bot_id \
             JOIN version_ladders vl ON vl.version_id = v.id WHERE vl.ladder = $1 AND v.status = 'active'",
        )
        .bind(LADDER)
        .fetch_all(&self.core.db.pool)
        .await
        .expect("versions");
        rows.iter()
            .map(|r| (r.try_get(0).expect("name"), r.try_get(1).expect("id")))
            .collect()
    }

    /// `arbiter serve --data DIR --workers 1 --no-schedule` with the short
    /// lease.
    fn spawn_serve_process(&self, log: &str) -> Child {
        self.spawn(
            log,
            &["serve", "--listen", "127.0.0.1:0", "--workers", "1", "--no-schedule"],
        )
    }

    /// `arbiter worker --data DIR --slots 1` with the short lease.
    fn spawn_worker_process(&self, log: &str) -> Child {
        self.spawn_worker_process_with(log, &[])
    }

    /// [`Self::spawn_worker_process`] with more arguments.
    fn spawn_worker_process_with(&self, log: &str, args: &[&str]) -> Child {
        let mut all = vec!["worker", "--slots", "1"];
        all.extend_from_slice(args);
        self.spawn(log, &all)
    }

    /// `arbiter ARGS… --data DIR` on this ladder's database, with the short
    /// lease, its log in DIR/`log`.
    fn spawn(&self, log: &str, args: &[&str]) -> Child {
        let mut command = Command::new(ARBITER);
        command
            .args(args)
            .arg("--data")
            .arg(self.data())
            .env(LEASE_ENV, LEASE_MS.to_string())
            .env("RUST_LOG", "arbiter_ladder=debug,arbiter_http=debug")
            .env_remove("DATABASE_URL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(self.data().join(log)).expect("log file"));
        if let Some(url) = &self.database_url {
            command.env("DATABASE_URL", url);
        }
        command.spawn().expect("arbiter worker starts")
    }

    async fn scalar(&self, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(&self.core.db.pool).await.expect(sql)
    }

    /// The last lines of every process's log.
    fn logs(&self) -> String {
        let mut out = String::new();
        let mut logs: Vec<_> = std::fs::read_dir(self.data())
            .map(|dir| {
                dir.filter_map(|entry| entry.ok()?.file_name().into_string().ok())
                    .filter(|name| name.ends_with(".log"))
                    .collect()
            })
            .unwrap_or_default();
        logs.sort();
        for log in logs {
            if let Ok(text) = std::fs::read_to_string(self.data().join(&log)) {
                let lines: Vec<&str> = text.lines().collect();
                out += &format!(
                    "--- {log} (last 30 lines) ---\n{}\n",
                    lines[lines.len().saturating_sub(30)..].join("\n")
                );
            }
        }
        out
    }
}

/// Prints every process's log when the scenario fails (a failed wait says
/// what it waited for, the logs say why).
struct LogsOnFailure<'a>(&'a Ladder);

impl Drop for LogsOnFailure<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.0.logs());
        }
    }
}

/// Kills a worker process on drop (a failing test leaves none behind).
struct Reaper(Vec<Child>);

impl Drop for Reaper {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Polls `check` every 50 ms until it gives `Some`, or panics after
/// `timeout` with `what`.
async fn wait_for<T, F: Future<Output = Option<T>>>(timeout: Duration, what: &str, mut check: impl FnMut() -> F) -> T {
    let start = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(
            start.elapsed() < timeout,
            "timed out after {timeout:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The opponents of the scenario: a mix of slow and quick pairs.
const PAIRS: [(&str, &str); 4] = [
    ("othello-ab-medium", "othello-greedy"),
    ("othello-greedy", "othello-random"),
    ("othello-random", "othello-ab-medium"),
    ("othello-ab-weak", "othello-greedy"),
];
const MATCHES: usize = 12;

async fn killed_worker_scenario(backend: Backend) {
    let started = Instant::now();
    let ladder = Ladder::open(backend).await;
    let db = &ladder.core.db;
    let versions = ladder.versions().await;
    let mut ids = Vec::new();
    for n in 0..MATCHES {
        let (a, b) = PAIRS[n % PAIRS.len()];
        let seed = 1000 + i64::try_from(n).expect("small");
        let id = queue::enqueue(
            db,
            &queue::NewMatch {
                ladder: &LadderId::from(LADDER),
                a_version: versions[a],
                b_version: versions[b],
                seed,
                kind: MatchKind::Ranked,
                priority: 0,
                tournament_id: None,
                budget: None,
            },
        )
        .await
        .expect("enqueue");
        ids.push(id);
    }

    // Two worker processes; the first is killed once it holds a match.
    let mut reaper = Reaper(vec![
        ladder.spawn_worker_process("worker-1.log"),
        ladder.spawn_worker_process("worker-2.log"),
    ]);
    let victim = reaper.0[0].id();
    let prefix = format!("worker-{victim}-%");
    let held_now = || async {
        sqlx::query_scalar::<_, i64>("SELECT id FROM matches WHERE status = 'running' AND claimed_by LIKE $1")
            .bind(&prefix)
            .fetch_optional(&db.pool)
            .await
            .expect("poll")
    };
    wait_for(
        Duration::from_secs(60),
        "the first worker process to claim a match",
        held_now,
    )
    .await;
    // Let it get into the match (loading modules, first turns), then kill
    // it. What it holds after its death is what it held when it died.
    tokio::time::sleep(Duration::from_millis(300)).await;
    reaper.0[0].kill().expect("SIGKILL");
    reaper.0[0].wait().expect("reaped");
    let held = held_now()
        .await
        .unwrap_or_else(|| panic!("the killed worker held no match when it died\n{}", ladder.logs()));

    // Two workers in this process.
    let (stop_tx, stop) = watch::channel(false);
    let mut local = Vec::new();
    for n in 0..2 {
        let config = WorkerConfig::new(format!("test-{n}")).with_lease(Duration::from_millis(LEASE_MS));
        local.push(tokio::spawn(worker::run(ladder.core.clone(), config, stop.clone())));
    }

    let finished = wait_for(Duration::from_secs(120), "every match to finish", || async {
        let done = ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status IN ('finished', 'failed')")
            .await;
        (done == i64::try_from(MATCHES).expect("small")).then_some(done)
    })
    .await;
    assert_eq!(finished, 12);

    // Stop: the in-process workers at once, the surviving process on SIGINT.
    stop_tx.send(true).expect("stop");
    for task in local {
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("in-process workers stop promptly")
            .expect("worker task");
    }
    let survivor = reaper.0[1].id();
    let status = Command::new("kill")
        .args(["-INT", &survivor.to_string()])
        .status()
        .expect("kill -INT");
    assert!(status.success());
    let exited = wait_for(Duration::from_secs(10), "the worker process to stop on SIGINT", || {
        let state = reaper.0[1].try_wait().expect("try_wait");
        async move { state }
    })
    .await;
    assert!(exited.success(), "worker process exit: {exited:?}\n{}", ladder.logs());

    let attempts: i64 = sqlx::query_scalar("SELECT attempts FROM matches WHERE id = $1")
        .bind(held)
        .fetch_one(&db.pool)
        .await
        .expect("attempts");
    assert!(
        attempts >= 2,
        "match {held} was held by the killed worker but ran {attempts} time(s)"
    );
    assert_each_match_once(&ladder, MATCHES).await;
    eprintln!(
        "{backend:?}: {MATCHES} matches, worker killed holding match {held} ({attempts} attempts), {:.1} s",
        started.elapsed().as_secs_f64()
    );
    drop(ladder.pg);
}

/// Every one of the ladder's `matches` matches finished and was rated
/// exactly once: one replay each, four logs, one rating update per
/// participant, `rated_seq` unique (and on SQLite contiguous), each
/// version's chain of before/after ratings unbroken, and the ratings equal
/// a recomputation from the match log (in process and with `arbiter ratings
/// recompute`).
async fn assert_each_match_once(ladder: &Ladder, matches: usize) {
    let db = &ladder.core.db;
    let backend = db.backend;
    // Every match finished and rated exactly once.
    let rows = sqlx::query(
        "SELECT id, status, rated, rated_seq, attempts, replay_sha256, error FROM matches ORDER BY rated_seq",
    )
    .fetch_all(&db.pool)
    .await
    .expect("matches");
    let mut seqs = Vec::new();
    for row in &rows {
        let id: i64 = row.try_get(0).expect("id");
        let status: String = row.try_get(1).expect("status");
        let error: Option<String> = row.try_get(6).expect("error");
        assert_eq!(status, "finished", "match {id}: {error:?}\n{}", ladder.logs());
        assert_eq!(row.try_get::<i64, _>(2).expect("rated"), 1, "match {id}");
        seqs.push(row.try_get::<Option<i64>, _>(3).expect("seq").expect("a rated_seq"));
        let replay_key: String = row.try_get::<Option<String>, _>(5).expect("key").expect("a replay");
        let core = &ladder.core;
        let replay = arbiter_ladder::replays::read(&core.db, &core.blobs, &replay_key)
            .await
            .expect("read")
            .expect("replay stored");
        let replay = arbiter_referee::Replay::from_json(&replay).expect("a replay");
        assert_eq!(replay.match_id, u64::try_from(id).expect("id"));
        assert_eq!(replay.games.len(), 2);
    }
    let mut distinct = seqs.clone();
    distinct.dedup();
    assert_eq!(distinct.len(), matches, "rated_seq repeats: {seqs:?}");
    if backend == Backend::Sqlite {
        assert_eq!(
            seqs,
            (1..=i64::try_from(matches).expect("small")).collect::<Vec<i64>>(),
            "rated_seq has gaps"
        );
    }
    assert_eq!(
        ladder.scalar("SELECT COUNT(*) FROM match_logs").await,
        4 * i64::try_from(matches).expect("small"),
        "two participants × two games of logs per match, once"
    );

    // Ratings: one win, draw or loss per participant per match, and each
    // version's chain of before/after values unbroken in rated_seq order.
    let played = ladder
        .scalar(
            "SELECT CAST(COALESCE(SUM(wins + draws + losses), 0) AS BIGINT) FROM ratings WHERE ladder = 'othello:std'",
        )
        .await;
    assert_eq!(played, 2 * i64::try_from(matches).expect("small"));
    let chain = sqlx::query(
        "SELECT a_version, b_version, a_before, a_after, b_before, b_after FROM matches ORDER BY rated_seq",
    )
    .fetch_all(&db.pool)
    .await
    .expect("chain");
    let mut last: HashMap<i64, f64> = HashMap::new();
    for row in &chain {
        for (version, before, after) in [(0, 2, 3), (1, 4, 5)] {
            let version: i64 = row.try_get(version).expect("version");
            let before: f64 = row.try_get(before).expect("before");
            let after: f64 = row.try_get(after).expect("after");
            if let Some(previous) = last.insert(version, after) {
                assert!(
                    (previous - before).abs() < 1e-9,
                    "version {version}: {previous} then {before}"
                );
            }
        }
    }
    let differences = recompute(db, RatingSystem::Glicko2).await.expect("recompute");
    assert!(differences.is_empty(), "{differences:?}");
    // And what the simulator computes (`arbiter simulate` moves ratings
    // with the same RatingBook) for the same log.
    let log = sqlx::query("SELECT a_version, b_version, winner FROM matches WHERE rated = 1 ORDER BY rated_seq")
        .fetch_all(&db.pool)
        .await
        .expect("the log");
    let mut book: RatingBook<i64> = RatingBook::new(RatingSystem::Glicko2);
    for row in &log {
        let winner: Option<i64> = row.try_get(2).expect("winner");
        book.apply(
            &row.try_get(0).expect("a"),
            &row.try_get(1).expect("b"),
            Outcome::from_winner(winner),
        );
    }
    let stored = sqlx::query("SELECT version_id, rating, deviation, volatility FROM ratings WHERE ladder = $1")
        .bind(LADDER)
        .fetch_all(&db.pool)
        .await
        .expect("ratings");
    for row in &stored {
        let version: i64 = row.try_get(0).expect("version");
        let simulated = book.get(&version);
        for (what, stored, simulated) in [
            ("rating", row.try_get::<f64, _>(1).expect("r"), simulated.rating),
            ("deviation", row.try_get::<f64, _>(2).expect("d"), simulated.deviation),
            ("volatility", row.try_get::<f64, _>(3).expect("v"), simulated.volatility),
        ] {
            assert!(
                (stored - simulated).abs() < 1e-6,
                "version {version}: stored {what} {stored}, the simulator's {simulated}"
            );
        }
    }

    let mut command = Command::new(ARBITER);
    command
        .args(["ratings", "recompute", "--data"])
        .arg(ladder.data())
        .env_remove("DATABASE_URL");
    if let Some(url) = &ladder.database_url {
        command.env("DATABASE_URL", url);
    }
    let output = command.output().expect("arbiter ratings recompute");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("no difference"),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // It says how much it compared: every rated match, every stored rating.
    let count =
        |sql: &'static str| async move { sqlx::query_scalar::<_, i64>(sql).fetch_one(&db.pool).await.expect(sql) };
    let rated = count("SELECT COUNT(*) FROM matches WHERE rated = 1").await;
    let ratings = count("SELECT COUNT(*) FROM ratings").await;
    let versions = count("SELECT COUNT(DISTINCT version_id) FROM ratings").await;
    let ladders = count("SELECT COUNT(DISTINCT ladder) FROM ratings").await;
    assert_eq!(rated, matches as i64);
    let summary = format!(
        "{rated} rated match(es) replayed; {ratings} rating(s) of {versions} version(s) on {ladders} ladder(s) compared: no difference"
    );
    assert!(stdout.contains(&summary), "expected {summary:?} in {stdout:?}");
}

async fn host_failure_scenario(backend: Backend) {
    let ladder = Ladder::open(backend).await;
    let db = &ladder.core.db;
    let versions = ladder.versions().await;
    // A version whose module is not in the blob store: a host failure.
    let house: i64 = ladder.scalar("SELECT id FROM users WHERE name_key = 'house'").await;
    let bot: i64 = sqlx::query_scalar(
        "INSERT INTO bots (owner_id, name, name_key, created_ms) VALUES ($1, 'ghost', 'ghost', 0) RETURNING id",
    )
    .bind(house)
    .fetch_one(&db.pool)
    .await
    .expect("bot");
    let ghost: i64 = sqlx::query_scalar(
        "INSERT INTO versions (bot_id, number, sha256, size, status, ladders, created_ms) \
         VALUES ($1, 1, $2, 10, 'active', '[\"othello:std\"]', 0) RETURNING id",
    )
    .bind(bot)
    .bind("ab".repeat(32))
    .fetch_one(&db.pool)
    .await
    .expect("version");
    let greedy = versions["othello-greedy"];
    let id = queue::enqueue(
        db,
        &queue::NewMatch {
            ladder: &LadderId::from(LADDER),
            a_version: ghost,
            b_version: greedy,
            seed: 5,
            kind: MatchKind::Challenge,
            priority: 10,
            tournament_id: None,
            budget: None,
        },
    )
    .await
    .expect("enqueue");

    let (stop_tx, stop) = watch::channel(false);
    let mut config = WorkerConfig::new("test-host".to_string()).with_lease(Duration::from_millis(LEASE_MS));
    config.retry_delay = Duration::from_millis(50);
    let task = tokio::spawn(worker::run(ladder.core.clone(), config.clone(), stop));
    wait_for(Duration::from_secs(30), "the match to fail", || async {
        let status: String = sqlx::query_scalar("SELECT status FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .expect("status");
        (status == "failed").then_some(())
    })
    .await;
    stop_tx.send(true).expect("stop");
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("stops")
        .expect("task");

    let row = sqlx::query("SELECT attempts, rated, rated_seq, error, winner, replay_sha256 FROM matches WHERE id = $1")
        .bind(id)
        .fetch_one(&db.pool)
        .await
        .expect("match");
    assert_eq!(row.try_get::<i64, _>(0).expect("attempts"), config.max_attempts);
    assert_eq!(row.try_get::<i64, _>(1).expect("rated"), 0);
    assert_eq!(row.try_get::<Option<i64>, _>(2).expect("seq"), None);
    let error: String = row.try_get::<Option<String>, _>(3).expect("error").expect("an error");
    assert!(error.contains("missing from the blob store"), "{error}");
    assert_eq!(row.try_get::<Option<i64>, _>(4).expect("winner"), None);
    assert_eq!(row.try_get::<Option<String>, _>(5).expect("replay"), None);
    // Its start is its first attempt's: the retries waited 50 and 100 ms
    // before them (each attempt overwrote it before).
    let (started, finished): (Option<i64>, Option<i64>) =
        sqlx::query_as("SELECT started_ms, finished_ms FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .expect("times");
    let span = finished.expect("finished_ms") - started.expect("started_ms");
    assert!(
        span >= 150,
        "started at the first attempt, {span} ms before it was given up"
    );
    assert_eq!(ladder.scalar("SELECT COUNT(*) FROM match_logs").await, 0);
    assert_eq!(
        ladder
            .scalar("SELECT CAST(COALESCE(SUM(wins + draws + losses), 0) AS BIGINT) FROM ratings")
            .await,
        0,
        "a host failure counted as a result"
    );
    assert!(
        recompute(db, RatingSystem::Glicko2)
            .await
            .expect("recompute")
            .is_empty()
    );
    drop(ladder.pg);
}

#[test]
fn a_killed_worker_never_loses_or_doubles_a_match_on_sqlite() {
    let _serial = serial();
    runtime().block_on(killed_worker_scenario(Backend::Sqlite));
}

#[test]
fn a_killed_worker_never_loses_or_doubles_a_match_on_postgres() {
    if pg_url().is_none() {
        eprintln!("TEST_PG_URL is not set: skipping the PostgreSQL run");
        return;
    }
    let _serial = serial();
    runtime().block_on(killed_worker_scenario(Backend::Postgres));
}

#[test]
fn a_host_failure_ends_failed_and_unrated_on_sqlite() {
    let _serial = serial();
    runtime().block_on(host_failure_scenario(Backend::Sqlite));
}

#[test]
fn a_host_failure_ends_failed_and_unrated_on_postgres() {
    if pg_url().is_none() {
        eprintln!("TEST_PG_URL is not set: skipping the PostgreSQL run");
        return;
    }
    let _serial = serial();
    runtime().block_on(host_failure_scenario(Backend::Postgres));
}

/// A worker told to stop mid-match stops at the next turn and puts the
/// match back in the queue without counting the attempt.
#[test]
fn a_stopped_worker_gives_its_match_back_uncounted() {
    let _serial = serial();
    runtime().block_on(async {
        let ladder = Ladder::open(Backend::Sqlite).await;
        let db = &ladder.core.db;
        let versions = ladder.versions().await;
        let strong = versions["othello-ab-strong"];
        let medium = versions["othello-ab-medium"];
        let id = queue::enqueue(
            db,
            &queue::NewMatch {
                ladder: &LadderId::from(LADDER),
                a_version: strong,
                b_version: medium,
                seed: 9,
                kind: MatchKind::Ranked,
                priority: 0,
                tournament_id: None,
                budget: None,
            },
        )
        .await
        .expect("enqueue");
        let (stop_tx, stop) = watch::channel(false);
        let config = WorkerConfig::new("test-stop".to_string());
        let task = tokio::spawn(worker::run(ladder.core.clone(), config, stop));
        let mut events = ladder.core.events.subscribe();
        // Wait for the first turn: the match is being played.
        tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                if let Ok(arbiter_ladder::events::Event::Turn { id: turn_of, .. }) = events.recv().await {
                    assert_eq!(turn_of, id);
                    return;
                }
            }
        })
        .await
        .expect("a turn is played");
        let asked = Instant::now();
        stop_tx.send(true).expect("stop");
        tokio::time::timeout(Duration::from_secs(10), task)
            .await
            .expect("the worker stops promptly")
            .expect("task");
        let row = sqlx::query("SELECT status, attempts, claimed_by, rated FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .expect("match");
        assert_eq!(row.try_get::<String, _>(0).expect("status"), "queued");
        assert_eq!(row.try_get::<i64, _>(1).expect("attempts"), 0);
        assert_eq!(row.try_get::<Option<String>, _>(2).expect("claimed_by"), None);
        assert_eq!(row.try_get::<i64, _>(3).expect("rated"), 0);
        eprintln!("stopped in {:?}", asked.elapsed());
    });
}

/// A ladder's time control reaches only the matches queued after it
/// changes: a match queued before keeps the old control, one queued after
/// gets the new one, a challenge's longer control is its own. Each replay
/// records the control it was played with and verifies from that alone.
async fn time_control_scenario(backend: Backend) {
    use arbiter_games::{Budget, Variant};
    use arbiter_ladder::ladders::{self, TimeControl};

    let ladder = Ladder::open(backend).await;
    let db = &ladder.core.db;
    let versions = ladder.versions().await;
    let (random, greedy) = (versions["othello-random"], versions["othello-greedy"]);
    let variant: Variant = LADDER.parse().expect("a ladder");
    let default = TimeControl::default_for(variant);
    assert_eq!(ladders::time_control(db, variant).await.expect("read"), default);
    let ladder_id = LadderId::from(LADDER);
    let queue = |seed: i64, budget: Option<Budget>| {
        let new = queue::NewMatch {
            ladder: &ladder_id,
            a_version: random,
            b_version: greedy,
            seed,
            // A longer control is a challenge's; the others are the ladder's.
            kind: if budget.is_some() {
                MatchKind::Challenge
            } else {
                MatchKind::Ranked
            },
            priority: 0,
            tournament_id: None,
            budget,
        };
        async move { queue::enqueue(db, &new).await.expect("enqueue") }
    };
    let before = queue(1, None).await;
    let changed = TimeControl::new(Budget::new(300, 3_000), 7_000_000);
    ladders::set_time_control(db, variant, changed).await.expect("set");
    let after = queue(2, None).await;
    let longer = Budget::new(10_000, 60_000);
    let challenge = queue(3, Some(longer)).await;
    let expected = [
        (before, default),
        (after, changed),
        (challenge, TimeControl::new(longer, changed.fuel_per_ms)),
    ];

    let (stop_tx, stop) = watch::channel(false);
    let worker = tokio::spawn(worker::run(
        ladder.core.clone(),
        WorkerConfig::new("time-control".into()),
        stop,
    ));
    wait_for(Duration::from_secs(120), "the three matches to finish", || async {
        (ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished'")
            .await
            == 3)
            .then_some(())
    })
    .await;
    stop_tx.send(true).expect("stop");
    worker.await.expect("worker stops");

    // Win/draw/loss counts move with the results, mirrored between the two.
    let record = |version: i64| async move {
        let row: (i64, i64, i64) =
            sqlx::query_as("SELECT wins, draws, losses FROM ratings WHERE version_id = $1 AND ladder = $2")
                .bind(version)
                .bind(LADDER)
                .fetch_one(&db.pool)
                .await
                .expect("a ratings row");
        row
    };
    let (random_wdl, greedy_wdl) = (record(random).await, record(greedy).await);
    // The two ranked matches count; the challenge rates nobody.
    let random_wins: i64 = ladder
        .scalar("SELECT COUNT(*) FROM matches WHERE winner = 0 AND kind = 'ranked'")
        .await;
    let greedy_wins: i64 = ladder
        .scalar("SELECT COUNT(*) FROM matches WHERE winner = 1 AND kind = 'ranked'")
        .await;
    assert_eq!(random_wdl.0 + random_wdl.1 + random_wdl.2, 2, "{random_wdl:?}");
    assert_eq!(
        (random_wdl.0, random_wdl.2),
        (random_wins, greedy_wins),
        "{random_wdl:?}"
    );
    assert_eq!(
        (greedy_wdl.0, greedy_wdl.1, greedy_wdl.2),
        (random_wdl.2, random_wdl.1, random_wdl.0)
    );

    for (id, time) in expected {
        let row = sqlx::query("SELECT turn_ms, bank_ms, fuel_per_ms, replay_sha256 FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&db.pool)
            .await
            .expect("the match");
        let stored = TimeControl::from_columns(row.try_get(0).ok(), row.try_get(1).ok(), row.try_get(2).ok());
        assert_eq!(stored, Some(time), "match {id} keeps the control it was queued with");
        let key: String = row.try_get(3).expect("a replay");
        let core = &ladder.core;
        let bytes = arbiter_ladder::replays::read(&core.db, &core.blobs, &key)
            .await
            .expect("read")
            .expect("stored");
        let replay = arbiter_referee::Replay::from_json(&bytes).expect("a replay");
        assert_eq!(
            (
                replay.settings.turn_ms,
                replay.settings.bank_ms,
                replay.settings.fuel_per_ms
            ),
            (time.turn_ms, time.bank_ms, Some(time.fuel_per_ms)),
            "match {id}: the replay records its control"
        );
        let bots: Vec<arbiter_referee::WasmBot> = ["othello-random", "othello-greedy"]
            .iter()
            .map(|name| {
                let module = ladder
                    .core
                    .sandbox
                    .load(arbiter_house::find(name).expect("a house bot").wasm())
                    .expect("loads");
                arbiter_referee::WasmBot::new(ladder.core.sandbox.clone(), module, *name)
            })
            .collect();
        arbiter_referee::verify::verify(&replay, [&bots[0] as &dyn arbiter_referee::Entrant, &bots[1]])
            .expect("the replay verifies");
    }
    drop(ladder.pg);
}

#[test]
fn a_time_control_change_reaches_only_later_matches_on_sqlite() {
    let _serial = serial();
    runtime().block_on(time_control_scenario(Backend::Sqlite));
}

#[test]
fn a_time_control_change_reaches_only_later_matches_on_postgres() {
    let _serial = serial();
    if pg_url().is_none() {
        eprintln!("TEST_PG_URL is not set: PostgreSQL scenario not run");
        return;
    }
    runtime().block_on(time_control_scenario(Backend::Postgres));
}

/// Some match is running.
async fn any_running(ladder: &Ladder) -> Option<()> {
    (ladder
        .scalar("SELECT COUNT(*) FROM matches WHERE status = 'running'")
        .await
        > 0)
    .then_some(())
}

/// No match is left running; those back in the queue have no attempt
/// counted and no start time; finished ones took one attempt.
async fn assert_nothing_running(ladder: &Ladder, when: &str) {
    assert_eq!(
        ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status = 'running'")
            .await,
        0,
        "{when}: no match left running\n{}",
        ladder.logs()
    );
    assert_eq!(
        ladder
            .scalar(
                "SELECT COUNT(*) FROM matches WHERE status = 'queued' AND (attempts <> 0 OR started_ms IS NOT NULL)"
            )
            .await,
        0,
        "{when}: a match back in the queue has no attempt counted and no start time"
    );
    assert_eq!(
        ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished' AND attempts <> 1")
            .await,
        0,
        "{when}: every finished match took one attempt"
    );
}

/// SIGTERM (what systemd, docker and Kubernetes send) stops a worker
/// gracefully: it claims nothing more, the match it plays finishes within
/// the grace period and is recorded, and it exits 0. With no grace the match
/// goes back to the queue with its attempt uncounted and its start time
/// cleared. A second signal exits at once. Before, SIGTERM killed the worker
/// on the spot: its match stayed `running` until the lease expired and
/// counted a lost attempt.
async fn sigterm_scenario() {
    let ladder = Ladder::open(Backend::Sqlite).await;
    let db = &ladder.core.db;
    let versions = ladder.versions().await;
    let (strong, medium) = (versions["othello-ab-strong"], versions["othello-ab-medium"]);
    for seed in 0..6 {
        let new = queue::NewMatch {
            ladder: &LadderId::from(LADDER),
            a_version: strong,
            b_version: medium,
            seed,
            kind: MatchKind::Ranked,
            priority: 0,
            tournament_id: None,
            budget: None,
        };
        queue::enqueue(db, &new).await.expect("enqueue");
    }
    // A grace period long enough: the running match finishes.
    let mut worker = Reaper(vec![
        ladder.spawn_worker_process_with("worker-1.log", &["--grace", "120"]),
    ]);
    wait_for(Duration::from_secs(60), "a running match", || any_running(&ladder)).await;
    send_signal(&worker.0[0], "TERM");
    let code = exit_code(&mut worker.0[0], Duration::from_secs(120)).await;
    assert_eq!(code, Some(0), "a graceful stop exits 0\n{}", ladder.logs());
    assert_nothing_running(&ladder, "after a graceful stop").await;
    let finished = ladder
        .scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished'")
        .await;
    assert!(
        finished >= 1,
        "the running match was finished and recorded\n{}",
        ladder.logs()
    );

    // No grace: the running match goes back to the queue uncounted.
    let mut worker = Reaper(vec![
        ladder.spawn_worker_process_with("worker-2.log", &["--grace", "0"]),
    ]);
    wait_for(Duration::from_secs(60), "a running match", || any_running(&ladder)).await;
    send_signal(&worker.0[0], "TERM");
    let code = exit_code(&mut worker.0[0], Duration::from_secs(30)).await;
    assert_eq!(code, Some(0), "{}", ladder.logs());
    assert_nothing_running(&ladder, "after a stop without grace").await;
    assert_eq!(
        ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished'")
            .await,
        finished,
        "the match it held was not finished: it went back to the queue"
    );

    // A second signal exits at once, even with a long grace period.
    let mut worker = Reaper(vec![
        ladder.spawn_worker_process_with("worker-1.log", &["--grace", "120"]),
    ]);
    wait_for(Duration::from_secs(60), "a running match", || any_running(&ladder)).await;
    send_signal(&worker.0[0], "TERM");
    tokio::time::sleep(Duration::from_millis(300)).await;
    let signalled = Instant::now();
    send_signal(&worker.0[0], "TERM");
    let code = exit_code(&mut worker.0[0], Duration::from_secs(10)).await;
    assert_eq!(code, Some(1), "a forced exit is not a success\n{}", ladder.logs());
    println!(
        "exited {:.2} s after the second signal",
        signalled.elapsed().as_secs_f64()
    );
}

#[test]
fn a_sigterm_stops_a_worker_gracefully_and_a_second_one_at_once() {
    let _serial = serial();
    runtime().block_on(sigterm_scenario());
}

/// The match a process whose claims start with `prefix` is playing now, if
/// any: only a first attempt with `first_only`, else any attempt.
async fn held_by(ladder: &Ladder, prefix: &str, first_only: bool) -> Option<i64> {
    let sql = if first_only {
        "SELECT id FROM matches WHERE status = 'running' AND attempts = 1 AND claimed_by LIKE $1 ORDER BY id LIMIT 1"
    } else {
        "SELECT id FROM matches WHERE status = 'running' AND claimed_by LIKE $1 ORDER BY id LIMIT 1"
    };
    sqlx::query_scalar::<_, i64>(sql)
        .bind(format!("{prefix}%"))
        .fetch_optional(&ladder.core.db.pool)
        .await
        .expect("poll")
}

/// Kills (SIGKILL) `child` once it plays a first-attempt match; returns
/// the match it held when it died and how long after the kill another
/// worker took it over (or it was finished). `None` when the kill struck
/// between two matches (the process had just recorded one and not yet
/// claimed the next): the caller starts another process and tries again.
async fn kill_while_playing(ladder: &Ladder, child: &mut Child, prefix: &str) -> Option<(i64, Duration)> {
    let prefix = format!("{prefix}-{}-", child.id());
    wait_for(Duration::from_secs(90), &format!("{prefix}* to play a match"), || {
        held_by(ladder, &prefix, true)
    })
    .await;
    // Into the match (modules loaded, first turns), then dead. The match
    // may have ended meanwhile and another begun; what counts is what the
    // dead process holds, which nobody else can change within its lease.
    tokio::time::sleep(Duration::from_millis(300)).await;
    child.kill().expect("SIGKILL");
    child.wait().expect("reaped");
    let killed = Instant::now();
    let Some(held) = held_by(ladder, &prefix, false).await else {
        eprintln!("{prefix}* held no match when it died: trying again with another process");
        return None;
    };
    wait_for(
        Duration::from_secs(90),
        &format!("match {held} to be taken over"),
        || async {
            let (status, holder): (String, Option<String>) =
                sqlx::query_as("SELECT status, claimed_by FROM matches WHERE id = $1")
                    .bind(held)
                    .fetch_one(&ladder.core.db.pool)
                    .await
                    .expect("poll");
            let taken = status == "finished" || holder.is_some_and(|holder| !holder.starts_with(&prefix));
            taken.then_some(())
        },
    )
    .await;
    let after = killed.elapsed();
    eprintln!(
        "match {held}: its holder {prefix}* killed, taken over {:.2} s later",
        after.as_secs_f64()
    );
    Some((held, after))
}

/// Faults on PostgreSQL while matches run, on a cluster of its own: kill -9
/// of `arbiter serve` (with an in-process worker) and of an `arbiter
/// worker`, each while it plays, then an abrupt restart of the database
/// (`pg_ctl -m immediate`). Each killed process's match is taken over
/// within the lease; the matches running at the restart finish; afterwards
/// no match is lost, none finished or rated twice, and the ratings equal a
/// recomputation.
async fn faults_scenario() {
    let started = Instant::now();
    let cluster = support::PgCluster::start();
    let ladder = Ladder::open_url(&cluster.url()).await;
    let _logs = LogsOnFailure(&ladder);
    let db = &ladder.core.db;
    let versions = ladder.versions().await;
    for n in 0..FAULT_MATCHES {
        let (a, b) = FAULT_PAIRS[n % FAULT_PAIRS.len()];
        let new = queue::NewMatch {
            ladder: &LadderId::from(LADDER),
            a_version: versions[a],
            b_version: versions[b],
            seed: 2000 + i64::try_from(n).expect("small"),
            kind: MatchKind::Ranked,
            priority: 0,
            tournament_id: None,
            budget: None,
        };
        queue::enqueue(db, &new).await.expect("enqueue");
    }
    let mut reaper = Reaper(vec![
        ladder.spawn_serve_process("serve.log"),
        ladder.spawn_worker_process("worker-1.log"),
        ladder.spawn_worker_process("worker-2.log"),
    ]);

    let serve_kill = loop {
        if let Some(kill) = kill_while_playing(&ladder, &mut reaper.0[0], "serve").await {
            break kill;
        }
        reaper.0[0] = ladder.spawn_serve_process("serve-again.log");
    };
    reaper.0.push(ladder.spawn_serve_process("serve-2.log"));
    let worker_kill = loop {
        if let Some(kill) = kill_while_playing(&ladder, &mut reaper.0[1], "worker").await {
            break kill;
        }
        reaper.0[1] = ladder.spawn_worker_process("worker-1-again.log");
    };
    reaper.0.push(ladder.spawn_worker_process("worker-3.log"));

    // A match on its last attempt (both kills hit it) would lose its lease
    // in the outage (longer than the lease) and be given up as `failed`, as
    // a vanished holder's would be: the restart waits until none is running
    // or queued for it, so that every match must finish.
    let last_attempt = worker::DEFAULT_MAX_ATTEMPTS;
    wait_for(
        Duration::from_secs(120),
        "two running matches, none on its last attempt",
        || async {
            let running = ladder
                .scalar("SELECT COUNT(*) FROM matches WHERE status = 'running'")
                .await;
            let on_last: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM matches WHERE (status = 'running' AND attempts >= $1) \
                 OR (status = 'queued' AND attempts >= $2)",
            )
            .bind(last_attempt)
            .bind(last_attempt - 1)
            .fetch_one(&db.pool)
            .await
            .ok()?;
            (running >= 2 && on_last == 0).then_some(())
        },
    )
    .await;
    let running: Vec<i64> = sqlx::query_scalar("SELECT id FROM matches WHERE status = 'running'")
        .fetch_all(&db.pool)
        .await
        .expect("running");
    cluster.stop_immediately();
    tokio::time::sleep(Duration::from_secs(2)).await;
    cluster.start_again();
    let back = Instant::now();
    wait_for(
        Duration::from_secs(120),
        "the matches running at the restart to finish",
        || async {
            let ids: Vec<String> = running.iter().map(i64::to_string).collect();
            let sql = format!(
                "SELECT COUNT(*) FROM matches WHERE status = 'finished' AND id IN ({})",
                ids.join(", ")
            );
            let finished: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
                .fetch_one(&db.pool)
                .await
                .ok()?;
            (finished == i64::try_from(running.len()).expect("small")).then_some(())
        },
    )
    .await;
    eprintln!(
        "the {} matches running at the restart finished {:.1} s after it",
        running.len(),
        back.elapsed().as_secs_f64()
    );

    wait_for(Duration::from_secs(240), "every match to finish", || async {
        let done = ladder
            .scalar("SELECT COUNT(*) FROM matches WHERE status IN ('finished', 'failed')")
            .await;
        (done == i64::try_from(FAULT_MATCHES).expect("small")).then_some(())
    })
    .await;
    for child in &mut reaper.0[2..] {
        send_signal(child, "TERM");
        let code = exit_code(child, Duration::from_secs(20)).await;
        assert_eq!(code, Some(0), "process {} on SIGTERM\n{}", child.id(), ladder.logs());
    }
    // A killed worker's match is taken over by the first slot that frees
    // after its lease runs out: within the lease, the queue's poll and the
    // longest match (every slot may be playing one), plus a second.
    let longest = ladder
        .scalar("SELECT MAX(finished_ms - started_ms) FROM matches WHERE attempts = 1")
        .await;
    let bound = Duration::from_millis(LEASE_MS + u64::try_from(longest).expect("a duration"))
        + WorkerConfig::new(String::new()).poll
        + Duration::from_secs(1);
    for (held, after) in [serve_kill, worker_kill] {
        assert!(
            after <= bound,
            "match {held} was taken over {after:?} after its holder died; the bound is {bound:?}"
        );
        let attempts: i64 = sqlx::query_scalar("SELECT attempts FROM matches WHERE id = $1")
            .bind(held)
            .fetch_one(&db.pool)
            .await
            .expect("attempts");
        assert!(attempts >= 2, "match {held} was interrupted but ran {attempts} time(s)");
    }
    let log = ladder.logs();
    assert!(
        log.contains("the database does not answer") && log.contains("the database answers again"),
        "the workers log the outage\n{log}"
    );
    assert_each_match_once(&ladder, FAULT_MATCHES).await;
    eprintln!(
        "{FAULT_MATCHES} matches through two kills and a database restart, {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Matches of [`faults_scenario`].
const FAULT_MATCHES: usize = 12;
/// Its opponents: slower than [`PAIRS`], so that matches are running
/// whenever a fault strikes.
const FAULT_PAIRS: [(&str, &str); 3] = [
    ("othello-ab-strong", "othello-ab-medium"),
    ("othello-ab-medium", "othello-ab-strong"),
    ("othello-ab-strong", "othello-greedy"),
];

#[test]
fn kills_and_a_database_restart_lose_or_double_no_match_on_postgres() {
    if pg_url().is_none() {
        eprintln!("TEST_PG_URL is not set: PostgreSQL scenario not run");
        return;
    }
    let _serial = serial();
    runtime().block_on(faults_scenario());
}
