//! The harness of the ladder's in-process tests: a [`Ladder`] (a real
//! [`Core`] from [`Core::open`] on a temporary data folder, on SQLite or on
//! a PostgreSQL database of its own, with the house bots seeded), helpers
//! for the steps a test takes (sign up, upload and check, queue, play with
//! a worker, read rows back), and a small test runner ([`run_tests`]) for a
//! `harness = false` test whose `main` can also be the sandbox's compiler
//! child (see `core.rs`).

pub mod pg;

use arbiter_ladder::accounts::{self, Credentials, SignedIn};
use arbiter_ladder::core::Core;
use arbiter_ladder::db::Backend;
use arbiter_ladder::model::{LadderId, MatchKind};
use arbiter_ladder::queue::{self, NewMatch};
use arbiter_ladder::ratings::{Rating, RatingSystem};
use arbiter_ladder::uploads::{self, Upload, Uploaded};
use arbiter_ladder::worker::{self, WorkerConfig};
use pg::PgDatabase;
use sqlx::Row;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// The password every test user has.
pub const PASSWORD: &str = "correct horse battery staple";
/// The tic-tac-toe ladder: its matches take milliseconds.
pub const TTT: &str = "tictactoe:standard";
/// How long a test waits for a worker before it gives up (a hang guard,
/// not a timing assertion: the matches take well under a second).
pub const PLAY_LIMIT: Duration = Duration::from_secs(120);

/// A fresh ladder: a temporary data folder, its database (SQLite in the
/// folder, or a PostgreSQL database of its own, dropped afterwards) and a
/// [`Core`] on them with the house bots seeded.
pub struct Ladder {
    /// The core under test. (Declared first: dropped before the database.)
    pub core: Core,
    /// The engine it runs on.
    pub backend: Backend,
    _pg: Option<PgDatabase>,
    _dir: tempfile::TempDir,
}

impl Ladder {
    /// Opens a ladder on `backend` with [`Core::open`], as `arbiter serve`
    /// does, and seeds the house bots.
    pub async fn open(backend: Backend) -> Ladder {
        let dir = tempfile::Builder::new()
            .prefix("arbiter-ladder-test-")
            .tempdir()
            .expect("a temporary folder");
        let pg = match backend {
            Backend::Sqlite => None,
            Backend::Postgres => Some(PgDatabase::create().await),
        };
        let core = Core::open(
            &dir.path().join("data"),
            pg.as_ref().map(|pg| pg.url.as_str()),
            None,
            RatingSystem::Glicko2,
            arbiter_sandbox::CompilerCommand::embedded_in(std::env::current_exe().expect("this test's executable")),
        )
        .await
        .expect("the core opens");
        assert_eq!(core.db.backend, backend);
        arbiter_ladder::house::seed(&core)
            .await
            .expect("the house bots are seeded");
        Ladder {
            core,
            backend,
            _pg: pg,
            _dir: dir,
        }
    }

    /// Signs `name` up (from an address of its own) with [`PASSWORD`].
    pub async fn sign_up(&self, name: &str) -> SignedIn {
        accounts::sign_up(&self.core, &format!("ip-of-{name}"), &credentials(name, PASSWORD), None)
            .await
            .unwrap_or_else(|e| panic!("{name} signs up: {e:?}"))
    }

    /// Uploads the house bot `house`'s module as `user`'s bot `bot` on
    /// `ladder`.
    pub async fn upload(
        &self,
        user: i64,
        bot: &str,
        ladder: &str,
        house: &str,
    ) -> arbiter_ladder::error::Result<Uploaded> {
        uploads::upload(
            &self.core,
            user,
            Upload {
                name: Some(bot.to_owned()),
                ladders: vec![ladder.to_owned()],
                module: Some(house_wasm(house).to_vec()),
                url: None,
                agent: false,
            },
        )
        .await
    }

    /// Runs the checker once on `version` (as `run_checker` does for each
    /// pending version) and returns the status it left.
    pub async fn check(&self, version: i64) -> String {
        arbiter_ladder::versions::check_one(&self.core, version)
            .await
            .expect("the check runs");
        self.version_status(version).await
    }

    /// Uploads (as [`Ladder::upload`]) and checks; panics unless the
    /// version ends `active`. Returns the version id.
    pub async fn upload_active(&self, user: i64, bot: &str, ladder: &str, house: &str) -> i64 {
        let uploaded = self
            .upload(user, bot, ladder, house)
            .await
            .unwrap_or_else(|e| panic!("uploading {bot}: {e:?}"));
        assert_eq!(
            self.check(uploaded.version_id).await,
            "active",
            "{bot} passes its check"
        );
        uploaded.version_id
    }

    /// A version's status.
    pub async fn version_status(&self, version: i64) -> String {
        sqlx::query_scalar("SELECT status FROM versions WHERE id = $1")
            .bind(version)
            .fetch_one(&self.core.db.pool)
            .await
            .expect("the version exists")
    }

    /// The active version of the bot `name` on `ladder`.
    pub async fn active(&self, name: &str, ladder: &str) -> i64 {
        arbiter_ladder::challenges::active_version(&self.core, name, ladder)
            .await
            .unwrap_or_else(|e| panic!("{name} has an active version on {ladder}: {e:?}"))
            .0
    }

    /// Queues a ranked match as the scheduler would.
    pub async fn enqueue_ranked(&self, ladder: &str, a: i64, b: i64, seed: i64) -> i64 {
        let new = NewMatch {
            ladder: &LadderId::from(ladder),
            a_version: a,
            b_version: b,
            seed,
            kind: MatchKind::Ranked,
            priority: 0,
            tournament_id: None,
            budget: None,
        };
        queue::enqueue(&self.core.db, &new).await.expect("the match is queued")
    }

    /// Runs one worker ([`worker::run`]) until every match in `ids` is
    /// `finished` or `failed`, then stops it and waits for it.
    pub async fn play(&self, ids: &[i64]) {
        self.play_with(WorkerConfig::new("core-test".into()), ids).await;
    }

    /// [`Ladder::play`] with `config`.
    pub async fn play_with(&self, config: WorkerConfig, ids: &[i64]) {
        let (stop_tx, stop_rx) = watch::channel(false);
        let task = tokio::spawn(worker::run(self.core.clone(), config, stop_rx));
        let started = Instant::now();
        loop {
            let mut done = 0;
            for &id in ids {
                let status = self.match_row(id).await.status;
                if status == "finished" || status == "failed" {
                    done += 1;
                }
            }
            if done == ids.len() {
                break;
            }
            assert!(
                started.elapsed() < PLAY_LIMIT,
                "the worker did not finish {ids:?} within {PLAY_LIMIT:?}"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let _ = stop_tx.send(true);
        task.await.expect("the worker stops");
    }

    /// One row of `matches`.
    pub async fn match_row(&self, id: i64) -> MatchRow {
        let row = sqlx::query(
            "SELECT status, kind, rated, rated_seq, winner, score_a, score_b, replay_sha256, attempts, \
             a_version, b_version, a_before, a_after, b_before, b_after, priority, tournament_id, error, \
             a_rd_after, b_rd_after, started_ms, claimed_by FROM matches WHERE id = $1",
        )
        .bind(id)
        .fetch_one(&self.core.db.pool)
        .await
        .unwrap_or_else(|e| panic!("match {id}: {e}"));
        let get = |i: usize| row.try_get::<Option<i64>, _>(i).expect("an integer column");
        let real = |i: usize| row.try_get::<Option<f64>, _>(i).expect("a real column");
        MatchRow {
            id,
            status: row.try_get(0).expect("status"),
            kind: row.try_get(1).expect("kind"),
            rated: get(2) == Some(1),
            rated_seq: get(3),
            winner: get(4),
            score: [get(5), get(6)],
            replay_sha256: row.try_get(7).expect("replay_sha256"),
            attempts: get(8).unwrap_or_default(),
            versions: [get(9).unwrap_or_default(), get(10).unwrap_or_default()],
            before: [real(11), real(13)],
            after: [real(12), real(14)],
            rd_after: [real(18), real(19)],
            priority: get(15).unwrap_or_default(),
            tournament_id: get(16),
            error: row.try_get(17).expect("error"),
            started_ms: get(20),
            claimed_by: row.try_get(21).expect("claimed_by"),
        }
    }

    /// A version's stored rating on `ladder` and its wins, draws and
    /// losses; `None` without a row.
    pub async fn rating(&self, version: i64, ladder: &str) -> Option<(Rating, [i64; 3])> {
        let row = sqlx::query(
            "SELECT rating, deviation, volatility, wins, draws, losses FROM ratings \
             WHERE version_id = $1 AND ladder = $2",
        )
        .bind(version)
        .bind(ladder)
        .fetch_optional(&self.core.db.pool)
        .await
        .expect("the ratings table answers")?;
        Some((
            Rating {
                rating: row.try_get(0).expect("rating"),
                deviation: row.try_get(1).expect("deviation"),
                volatility: row.try_get(2).expect("volatility"),
            },
            [
                row.try_get(3).expect("wins"),
                row.try_get(4).expect("draws"),
                row.try_get(5).expect("losses"),
            ],
        ))
    }

    /// `SELECT COUNT(*) ...` with one integer parameter (or none if the
    /// query has no `$1`).
    pub async fn count(&self, sql: &str, param: i64) -> i64 {
        let query = sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql.to_owned()));
        let query = if sql.contains("$1") { query.bind(param) } else { query };
        query
            .fetch_one(&self.core.db.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"))
    }

    /// Runs one statement (test set-up: triggers, tampering).
    pub async fn execute(&self, sql: &str) {
        sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_owned()))
            .execute(&self.core.db.pool)
            .await
            .unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

/// A match as the `matches` table holds it.
#[derive(Clone, Debug)]
pub struct MatchRow {
    /// Its id.
    pub id: i64,
    /// queued, running, finished or failed.
    pub status: String,
    /// ranked, challenge or tournament.
    pub kind: String,
    /// Whether it moved ratings.
    pub rated: bool,
    /// Its place in the order ratings were applied.
    pub rated_seq: Option<i64>,
    /// 0, 1 or `None` (a draw, or not finished).
    pub winner: Option<i64>,
    /// Each participant's total.
    pub score: [Option<i64>; 2],
    /// The replay's blob key.
    pub replay_sha256: Option<String>,
    /// Claims so far.
    pub attempts: i64,
    /// Participant 0's and 1's versions.
    pub versions: [i64; 2],
    /// Ratings before the match (rated matches only).
    pub before: [Option<f64>; 2],
    /// Ratings after it.
    pub after: [Option<f64>; 2],
    /// Deviations after it.
    pub rd_after: [Option<f64>; 2],
    /// Queue priority.
    pub priority: i64,
    /// Its tournament.
    pub tournament_id: Option<i64>,
    /// Why it failed.
    pub error: Option<String>,
    /// When a worker first claimed it.
    pub started_ms: Option<i64>,
    /// The worker holding (or last holding) its claim.
    pub claimed_by: Option<String>,
}

/// A name and password.
pub fn credentials(name: &str, password: &str) -> Credentials {
    Credentials {
        name: name.to_owned(),
        password: password.to_owned(),
    }
}

/// The module of the house bot `name`.
pub fn house_wasm(name: &str) -> &'static [u8] {
    arbiter_house::find(name)
        .unwrap_or_else(|| panic!("no house bot {name}"))
        .wasm()
}

/// One test: a name and an async body run on a fresh [`Ladder`].
pub struct Test {
    /// Its name (the runner prefixes the backend).
    pub name: &'static str,
    /// Its body.
    pub body: fn(Ladder) -> Pin<Box<dyn Future<Output = ()>>>,
}

/// Runs `tests` on SQLite, then on PostgreSQL when `TEST_PG_URL` is set
/// (printing that they are skipped otherwise), one at a time, each on a
/// fresh ladder and a runtime of its own, as `sqlite::NAME` and
/// `postgres::NAME`. Understands what `cargo test` passes on: name filters
/// (substrings, or whole names with `--exact`), `--skip FILTER`, `--list`
/// (one `NAME: test` line each) and `--ignored` (nothing is ignored);
/// other flags are accepted and ignored.
pub fn run_tests(tests: &[Test]) -> ExitCode {
    let mut filters = Vec::new();
    let mut skips = Vec::new();
    let (mut list, mut exact, mut ignored) = (false, false, false);
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--list" => list = true,
            "--exact" => exact = true,
            "--ignored" => ignored = true,
            "--skip" => skips.extend(args.next()),
            "--test-threads" | "--color" | "--format" | "--logfile" | "-Z" => {
                args.next();
            }
            flag if flag.starts_with('-') => {}
            filter => filters.push(filter.to_owned()),
        }
    }
    let pg = pg::test_pg_url().is_some();
    let matches = |name: &str| {
        let wanted = filters.is_empty()
            || filters
                .iter()
                .any(|f| if exact { name == f } else { name.contains(f.as_str()) });
        wanted && !skips.iter().any(|s| name.contains(s.as_str()))
    };
    let mut selected = Vec::new();
    for (prefix, backend) in [("sqlite", Backend::Sqlite), ("postgres", Backend::Postgres)] {
        for test in tests {
            let name = format!("{prefix}::{}", test.name);
            if matches(&name) {
                selected.push((name, backend, test));
            }
        }
    }
    if list {
        for (name, ..) in &selected {
            println!("{name}: test");
        }
        return ExitCode::SUCCESS;
    }
    if ignored {
        selected.clear();
    }
    println!("\nrunning {} tests", selected.len());
    if !pg && selected.iter().any(|(_, backend, _)| *backend == Backend::Postgres) {
        println!("note: TEST_PG_URL is not set: the postgres:: tests are skipped (CI sets it)");
    }
    let (mut passed, mut skipped, mut failed) = (0, 0, Vec::new());
    let started = Instant::now();
    for (name, backend, test) in selected {
        if backend == Backend::Postgres && !pg {
            println!("test {name} ... ignored, TEST_PG_URL is not set");
            skipped += 1;
            continue;
        }
        let t0 = Instant::now();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
            runtime.block_on(async { (test.body)(Ladder::open(backend).await).await })
        }));
        runtime.shutdown_timeout(Duration::from_secs(10));
        let took = t0.elapsed().as_secs_f64();
        match outcome {
            Ok(()) => {
                println!("test {name} ... ok ({took:.1} s)");
                passed += 1;
            }
            Err(_) => {
                println!("test {name} ... FAILED ({took:.1} s)");
                failed.push(name);
            }
        }
    }
    let result = if failed.is_empty() { "ok" } else { "FAILED" };
    if !failed.is_empty() {
        println!("\nfailures:");
        for name in &failed {
            println!("    {name}");
        }
    }
    println!(
        "\ntest result: {result}. {passed} passed; {} failed; {skipped} ignored; 0 measured; 0 filtered out; finished in {:.2}s\n",
        failed.len(),
        started.elapsed().as_secs_f64()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(101)
    }
}
