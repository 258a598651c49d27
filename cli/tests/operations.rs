//! Operating the server: `arbiter serve` stops cleanly on SIGTERM, the
//! signal systemd, docker and Kubernetes send (it used to die on the spot,
//! leaving its matches `running` until their lease expired, each counting a
//! lost attempt); it says whether it is live and ready; its metrics parse
//! as Prometheus text and move as matches finish; while its database is
//! down, web requests answer 503 within their timeout, and the log says
//! when the database went away and came back.

mod support;

use std::collections::HashMap;
use std::time::{Duration, Instant};
use support::{Backend, Options, PgCluster, TestServer};

/// Polls `count` (a `SELECT COUNT(*)`) until it is positive, at most `limit`.
async fn until_positive(db: &arbiter_ladder::db::Db, count: &'static str, limit: Duration) {
    let start = Instant::now();
    loop {
        let n: i64 = sqlx::query_scalar(count).fetch_one(&db.pool).await.expect(count);
        if n > 0 {
            return;
        }
        assert!(start.elapsed() < limit, "timed out waiting for {count}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn scalar(db: &arbiter_ladder::db::Db, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&db.pool).await.expect(sql)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sigterm_stops_serve_with_no_match_left_running() {
    // No grace: the running matches go back to the queue at once.
    let options = Options::on(Backend::Sqlite).workers(2).schedule(true);
    let mut server = TestServer::start_opts(options.arg("--grace").arg("0")).await;
    let db = server.db().await;
    until_positive(
        &db,
        "SELECT COUNT(*) FROM matches WHERE status = 'running'",
        Duration::from_secs(120),
    )
    .await;
    server.signal("TERM");
    let code = server.exit_code(Duration::from_secs(30)).await;
    assert_eq!(code, Some(0), "a graceful stop exits 0");
    assert_eq!(
        scalar(&db, "SELECT COUNT(*) FROM matches WHERE status = 'running'").await,
        0,
        "no match left running"
    );
    assert_eq!(
        scalar(
            &db,
            "SELECT COUNT(*) FROM matches WHERE status = 'queued' AND (attempts <> 0 OR started_ms IS NOT NULL)"
        )
        .await,
        0,
        "the matches put back have no attempt counted"
    );
}

/// Liveness answers while the process serves; readiness only while the
/// database answers with every migration this binary knows.
#[tokio::test(flavor = "multi_thread")]
async fn health_and_readiness() {
    let server = TestServer::start_opts(Options::on(Backend::Sqlite)).await;
    let client = server.client();
    let (status, body) = client.get("/api/health").await;
    assert_eq!(
        (status.as_u16(), body["status"].as_str()),
        (200, Some("live")),
        "{body}"
    );
    let (status, body) = client.get("/api/ready").await;
    assert_eq!(
        (status.as_u16(), body["status"].as_str()),
        (200, Some("ready")),
        "{body}"
    );
    // A database behind this binary's schema (as after a downgrade).
    let db = server.db().await;
    sqlx::query("DELETE FROM _sqlx_migrations WHERE version = (SELECT MAX(version) FROM _sqlx_migrations)")
        .execute(&db.pool)
        .await
        .expect("forget a migration");
    let (status, body) = client.get("/api/ready").await;
    assert_eq!(status.as_u16(), 503, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("schema is at migration")),
        "says why: {body}"
    );
    let (status, _) = client.get("/api/health").await;
    assert_eq!(status.as_u16(), 200, "still live");
}

/// The samples of a Prometheus text exposition, `name{labels}` to value
/// (comments skipped). Panics on a sample line without a number.
fn samples(text: &str) -> HashMap<String, f64> {
    text.lines()
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(|line| {
            let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("a sample: {line}"));
            let value = value.parse().unwrap_or_else(|_| panic!("a number: {line}"));
            (series.to_owned(), value)
        })
        .collect()
}

/// The sum of every series of metric `name`.
fn total(samples: &HashMap<String, f64>, name: &str) -> f64 {
    samples
        .iter()
        .filter(|(series, _)| series.split('{').next() == Some(name))
        .map(|(_, value)| value)
        .sum()
}

/// Checks `text` with Prometheus's own `promtool check metrics` (the text
/// format's parser and its naming rules). Without promtool installed the
/// check is skipped, except in CI (`CI` set), where it fails.
fn promtool_accepts(text: &str) {
    use std::io::Write;
    let child = std::process::Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(error) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "promtool (Debian package prometheus) is needed in CI: {error}"
            );
            eprintln!("promtool is not installed: the metrics are not checked by Prometheus's parser");
            return;
        }
    };
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(text.as_bytes())
        .expect("promtool reads");
    let output = child.wait_with_output().expect("promtool runs");
    assert!(
        output.status.success(),
        "promtool check metrics refuses the metrics:\n{}{}\n---\n{text}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// `GET /metrics` parses as Prometheus text, and its counters move when
/// matches finish: started and finished matches, match durations, module
/// loads, HTTP requests by route; the queue's depth is read from the
/// database.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_parse_and_move_as_matches_finish() {
    let server = Options::on(Backend::Sqlite).workers(1).schedule(true).start().await;
    let http = support::http();
    let scrape = || async {
        let response = http.get(server.url("/metrics")).send().await.expect("GET /metrics");
        assert_eq!(response.status().as_u16(), 200);
        let content_type = response.headers()["content-type"].to_str().expect("ascii").to_owned();
        assert!(content_type.starts_with("text/plain; version=0.0.4"), "{content_type}");
        let text = response.text().await.expect("a body");
        promtool_accepts(&text);
        samples(&text)
    };
    let before = scrape().await;
    assert_eq!(before["arbiter_database_up"], 1.0);
    let db = server.db().await;
    let finished_before = total(&before, "arbiter_matches_finished_total");
    // Two more matches than the first scrape saw.
    let start = Instant::now();
    loop {
        let finished: i64 = scalar(&db, "SELECT COUNT(*) FROM matches WHERE status = 'finished'").await;
        if finished as f64 >= finished_before + 2.0 {
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(120), "matches do not finish");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let after = scrape().await;
    let finished_after = total(&after, "arbiter_matches_finished_total");
    assert!(
        finished_after >= finished_before + 2.0,
        "finished {finished_before} then {finished_after}"
    );
    assert!(total(&after, "arbiter_matches_started_total") >= finished_after);
    assert_eq!(
        total(&after, "arbiter_match_duration_seconds_count"),
        finished_after,
        "one duration per finished match"
    );
    assert!(total(&after, "arbiter_match_duration_seconds_sum") > 0.0);
    assert!(
        after[r#"arbiter_module_loads_total{source="compile"}"#] >= 1.0,
        "the house bots were compiled"
    );
    assert!(
        total(&after, "arbiter_module_loads_total") >= 2.0 * finished_after,
        "both participants' modules are loaded (or found) for every match"
    );
    assert!(
        after[r#"arbiter_http_requests_total{method="GET",route="/metrics",status="200"}"#] >= 1.0,
        "the first scrape was counted"
    );
    assert!(
        total(&after, "arbiter_queue_matches") >= 1.0,
        "the scheduler keeps matches queued: {after:?}"
    );
    assert_eq!(after["arbiter_database_up"], 1.0);

    // A worker process serves its own metrics with `--metrics ADDR`.
    let mut worker = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(["worker", "--slots", "1", "--metrics", "127.0.0.1:0", "--data"])
        .arg(&server.data_dir)
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("arbiter worker starts");
    let stdout = worker.stdout.take().expect("stdout");
    let url = tokio::task::spawn_blocking(move || {
        use std::io::BufRead;
        let mut line = String::new();
        std::io::BufReader::new(stdout).read_line(&mut line).expect("a line");
        line
    })
    .await
    .expect("read");
    let url = url
        .trim()
        .strip_prefix("metrics on ")
        .unwrap_or_else(|| panic!("the worker says where its metrics are: {url:?}"))
        .to_owned();
    let start = Instant::now();
    loop {
        let text = http
            .get(&url)
            .send()
            .await
            .expect("GET the worker's metrics")
            .text()
            .await
            .expect("a body");
        promtool_accepts(&text);
        let samples = samples(&text);
        assert_eq!(samples["arbiter_database_up"], 1.0);
        if total(&samples, "arbiter_matches_started_total") >= 1.0 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the worker never counts a match: {samples:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    support::send_signal(&worker, "TERM");
    assert_eq!(support::exit_code(&mut worker, Duration::from_secs(20)).await, Some(0));
}

/// `--log-format json`: every log line is a JSON object with a level and a
/// message.
#[tokio::test(flavor = "multi_thread")]
async fn json_logs() {
    let server = Options::on(Backend::Sqlite)
        .arg("--log-format")
        .arg("json")
        .start()
        .await;
    let output = server.output();
    let logs: Vec<&str> = output
        .lines()
        .filter(|line| !line.starts_with("listening on"))
        .collect();
    assert!(!logs.is_empty(), "the server logs at start:\n{output}");
    for line in logs {
        let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
        assert!(
            value["level"].is_string() && value["message"].is_string(),
            "a level and a message: {line}"
        );
    }
}

/// With its database down, a web request answers 503 (JSON, the API's
/// envelope) within `--web-db-timeout`, not after 30 s; the log says once
/// that the database went away and once that it came back; then requests
/// answer again.
#[tokio::test(flavor = "multi_thread")]
async fn a_web_request_during_a_database_outage_answers_503_within_its_timeout() {
    if std::env::var_os(support::TEST_PG_URL).is_none_or(|url| url.is_empty()) {
        eprintln!("TEST_PG_URL is not set: skipping the PostgreSQL outage test");
        return;
    }
    let cluster = tokio::task::spawn_blocking(PgCluster::start).await.expect("a cluster");
    let options = Options {
        database_url: Some(cluster.url()),
        ..Options::on(Backend::Postgres)
    };
    let timeout = Duration::from_secs(2);
    let server = options.arg("--web-db-timeout").arg("2").start().await;
    let client = server.client();
    let (status, body) = client.get("/api/ladders").await;
    assert_eq!(status.as_u16(), 200, "{body}");

    cluster.stop_immediately();
    for path in ["/api/ladders", "/api/bots"] {
        let start = Instant::now();
        let (status, body) = client.get(path).await;
        let took = start.elapsed();
        assert_eq!(status.as_u16(), 503, "{path} during the outage: {body}");
        assert_eq!(body["error"], "storage unavailable", "{body}");
        assert!(
            took < timeout + Duration::from_millis(1500),
            "{path} answered after {took:?}; the timeout is {timeout:?}"
        );
        eprintln!("{path} during the outage: 503 after {took:?}");
    }
    let (status, body) = client.get("/api/ready").await;
    assert_eq!(status.as_u16(), 503, "not ready: {body}");
    let (status, _) = client.get("/api/health").await;
    assert_eq!(status.as_u16(), 200, "still live");
    let logged = |what: &'static str| {
        let output = &server;
        async move {
            let start = Instant::now();
            while !output.output().contains(what) {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "the log never says {what:?}:\n{}",
                    output.output()
                );
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    };
    logged("the database does not answer").await;

    cluster.start_again();
    let start = Instant::now();
    loop {
        let (status, body) = client.get("/api/ladders").await;
        if status.as_u16() == 200 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "still {status} after the database came back: {body}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    logged("the database answers again").await;
    let output = server.output();
    assert_eq!(
        output.matches("the database does not answer").count(),
        1,
        "one line when it goes away:\n{output}"
    );
    assert_eq!(
        output.matches("the database answers again").count(),
        1,
        "one line when it comes back:\n{output}"
    );
}

/// An `arbiter` process started as a service manager would: its log
/// (stderr) goes to a file, and its stdout is read until the line that
/// says where it answers.
struct Logged {
    child: std::process::Child,
    /// The file its stderr goes to.
    log: std::path::PathBuf,
    /// The rest of the stdout line starting with the announcement.
    announced: String,
}

impl Logged {
    /// Starts `arbiter ARGS` (DATABASE_URL set to `database_url` or
    /// removed) and waits for its stdout line starting with `announce`.
    async fn start(
        args: &[&str],
        database_url: Option<&str>,
        log: std::path::PathBuf,
        announce: &'static str,
    ) -> Logged {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"));
        command
            .args(args)
            .env_remove("DATABASE_URL")
            .env_remove("NO_COLOR")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log file"));
        if let Some(url) = database_url {
            command.env("DATABASE_URL", url);
        }
        let mut child = command.spawn().expect("arbiter starts");
        let stdout = child.stdout.take().expect("stdout");
        let reader = tokio::task::spawn_blocking(move || {
            use std::io::BufRead;
            let mut lines = std::io::BufReader::new(stdout).lines();
            let line = lines.find_map(|line| line.ok()?.strip_prefix(announce).map(str::to_owned));
            // Keep draining so the process never blocks on a full pipe.
            std::thread::spawn(move || lines.for_each(drop));
            line
        });
        let announced = tokio::time::timeout(support::STARTUP_TIMEOUT, reader)
            .await
            .ok()
            .and_then(Result::ok)
            .flatten();
        let Some(announced) = announced else {
            let _ = child.kill();
            panic!(
                "arbiter {args:?} never said {announce:?}; its log:\n{}",
                std::fs::read_to_string(&log).unwrap_or_default()
            );
        };
        Logged { child, log, announced }
    }

    /// The log so far.
    fn log(&self) -> String {
        std::fs::read_to_string(&self.log).expect("the log file")
    }

    /// Waits (at most 20 s) for the log to contain `what`.
    async fn logged(&self, what: &str) {
        let start = Instant::now();
        while !self.log().contains(what) {
            assert!(
                start.elapsed() < Duration::from_secs(20),
                "the log never says {what:?}:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// SIGTERM, then its exit code.
    async fn stop(mut self) -> Option<i32> {
        support::send_signal(&self.child, "TERM");
        support::exit_code(&mut self.child, Duration::from_secs(30)).await
    }
}

impl Drop for Logged {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET url` with a 2 s client timeout (a scrape must answer within a
/// second whatever the database does; twice that is the generous bound):
/// its samples, or a panic if it did not answer in time.
async fn scrape_within_2s(url: &str) -> HashMap<String, f64> {
    arbiter_ladder::install_tls_provider();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .build()
        .expect("a client");
    let response = client
        .get(url)
        .send()
        .await
        .unwrap_or_else(|e| panic!("GET {url} within 2 s: {e}"));
    assert_eq!(response.status().as_u16(), 200, "GET {url}");
    let text = response
        .text()
        .await
        .unwrap_or_else(|e| panic!("GET {url}: the body within 2 s: {e}"));
    promtool_accepts(&text);
    samples(&text)
}

/// The metric names the operator's table in docs/spec/ladder.md lists.
fn documented_metrics() -> Vec<String> {
    let spec = include_str!("../../docs/spec/ladder.md");
    let names: Vec<String> = spec
        .lines()
        .filter_map(|line| line.strip_prefix("| `arbiter_"))
        .filter_map(|rest| Some(format!("arbiter_{}", rest.split('`').next()?)))
        .collect();
    assert!(names.len() >= 10, "the metrics table of ladder.md: {names:?}");
    names
}

/// A fresh worker's first scrape (no match played, no request answered
/// before it) passes `promtool check metrics` and has a sample of every
/// metric ladder.md documents, the counters of every ladder at 0; and its
/// first log line, written to a file, names the worker, its slots and its
/// database, with no terminal escape codes anywhere in the file.
#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_worker_shows_every_documented_metric_and_says_who_it_is() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data");
    // The database exists, with no match queued: the worker plays nothing.
    arbiter_ladder::db::Db::open_sqlite(&{
        std::fs::create_dir_all(&data).expect("the data folder");
        data.join("arbiter.db")
    })
    .await
    .expect("a database");
    let data_arg = data.display().to_string();
    let worker = Logged::start(
        &[
            "worker",
            "--slots",
            "2",
            "--metrics",
            "127.0.0.1:0",
            "--data",
            &data_arg,
        ],
        None,
        dir.path().join("worker.log"),
        "metrics on ",
    )
    .await;
    let first = scrape_within_2s(&worker.announced).await;
    for name in documented_metrics() {
        let present = first.keys().any(|series| {
            let metric = series.split('{').next().unwrap_or(series);
            metric == name || metric == format!("{name}_bucket") || metric == format!("{name}_count")
        });
        assert!(
            present,
            "{name} is documented but missing from the first scrape: {first:?}"
        );
    }
    for ladder in ["tictactoe:standard", "othello:std", "skirmish:standard"] {
        for counter in [
            "arbiter_matches_started_total",
            "arbiter_matches_failed_total",
            "arbiter_match_retries_total",
            "arbiter_lease_expiries_total",
        ] {
            let series = format!(r#"{counter}{{ladder="{ladder}"}}"#);
            assert_eq!(first.get(&series), Some(&0.0), "{series} at 0 from the start");
        }
    }
    for verdict in ["active", "rejected", "error"] {
        let series = format!(r#"arbiter_check_duration_seconds_count{{verdict="{verdict}"}}"#);
        assert_eq!(first.get(&series), Some(&0.0), "{series} at 0 from the start");
    }
    assert_eq!(first["arbiter_database_up"], 1.0);
    assert_eq!(
        first[r#"arbiter_queue_matches{kind="ranked",ladder="othello:std",status="queued"}"#],
        0.0
    );

    let log = worker.log();
    let line = log.lines().next().unwrap_or_default();
    let pid = worker.child.id();
    assert!(
        line.contains(&format!(
            "arbiter {} worker worker-{pid}: 2 slots",
            env!("CARGO_PKG_VERSION")
        )),
        "the first line says which worker this is: {line}"
    );
    assert!(line.contains(&format!("database SQLite {}", data.display())), "{line}");
    assert!(line.contains(&format!("metrics on {}", worker.announced)), "{line}");
    assert_eq!(worker.stop().await, Some(0));
    let log = std::fs::read_to_string(dir.path().join("worker.log")).expect("the log");
    assert!(!log.contains('\u{1b}'), "no escape codes in a log file:\n{log:?}");
    assert!(
        !log.contains("answering 503") && !log.contains("get 503"),
        "a worker serves no web requests:\n{log}"
    );
}

/// `serve`'s first log line says its version, where it listens, its
/// database and blob store and that it has no in-process workers; in a
/// file, no escape codes; a front end's stop does not talk of matches.
#[tokio::test(flavor = "multi_thread")]
async fn serve_says_where_it_listens_first() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data").display().to_string();
    let serve = Logged::start(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "0",
            "--no-schedule",
            "--data",
            &data,
        ],
        None,
        dir.path().join("serve.log"),
        "listening on ",
    )
    .await;
    let address = serve.announced.clone();
    let log = serve.log();
    let line = log.lines().next().unwrap_or_default();
    assert!(
        line.contains(&format!(
            "arbiter {} serve: listening on {address}; database SQLite {data}/arbiter.db; blobs in the folder {data}/blobs; no in-process workers",
            env!("CARGO_PKG_VERSION")
        )),
        "the first line says where it listens: {line}"
    );
    assert_eq!(serve.stop().await, Some(0));
    let log = std::fs::read_to_string(dir.path().join("serve.log")).expect("the log");
    assert!(!log.contains('\u{1b}'), "no escape codes in a log file:\n{log:?}");
    assert!(!log.contains("running matches"), "a front end runs no matches:\n{log}");
}

/// On a real PostgreSQL cluster stopped mid-test: `serve --workers 0`'s
/// and a worker's `GET /metrics` each answer within a 2 s client timeout
/// with `arbiter_database_up 0` while it is down, and 1 again after it
/// restarts; web requests get 503, logged once for the outage, not once
/// per request; the worker's log does not talk of 503s; the log counts the
/// time away from the last good answer.
#[tokio::test(flavor = "multi_thread")]
async fn metrics_answer_at_once_during_a_database_outage() {
    if std::env::var_os(support::TEST_PG_URL).is_none_or(|url| url.is_empty()) {
        eprintln!("TEST_PG_URL is not set: skipping the PostgreSQL outage test");
        return;
    }
    let cluster = tokio::task::spawn_blocking(PgCluster::start).await.expect("a cluster");
    let url = cluster.url();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data").display().to_string();
    let serve = Logged::start(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "0",
            "--no-schedule",
            "--web-db-timeout",
            "1",
            "--data",
            &data,
        ],
        Some(&url),
        dir.path().join("serve.log"),
        "listening on ",
    )
    .await;
    let worker = Logged::start(
        &["worker", "--metrics", "127.0.0.1:0", "--data", &data],
        Some(&url),
        dir.path().join("worker.log"),
        "metrics on ",
    )
    .await;
    let serve_metrics = format!("{}/metrics", serve.announced);
    for url in [&serve_metrics, &worker.announced] {
        assert_eq!(scrape_within_2s(url).await["arbiter_database_up"], 1.0, "{url}");
    }

    cluster.stop_immediately();
    // Every scrape during the outage answers in time and says so.
    for _ in 0..3 {
        for url in [&serve_metrics, &worker.announced] {
            let samples = scrape_within_2s(url).await;
            assert_eq!(samples["arbiter_database_up"], 0.0, "{url} during the outage");
            assert!(
                samples.contains_key("arbiter_queue_read_age_seconds"),
                "the last read's age: {samples:?}"
            );
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    let client = support::Client::new(&serve.announced);
    for _ in 0..4 {
        let (status, body) = client.get("/api/ladders").await;
        assert_eq!(status.as_u16(), 503, "{body}");
    }
    for _ in 0..4 {
        let page = support::http()
            .get(format!("{}/", serve.announced))
            .send()
            .await
            .expect("the home page answers");
        assert_eq!(page.status().as_u16(), 503, "a page during the outage");
    }
    let refused = scrape_within_2s(&serve_metrics).await;
    assert!(
        refused[r#"arbiter_http_requests_total{method="GET",route="/api/ladders",status="503"}"#] >= 4.0,
        "503s are counted: {refused:?}"
    );
    serve.logged("the database does not answer").await;
    worker.logged("the database does not answer").await;

    cluster.start_again();
    for url in [&serve_metrics, &worker.announced] {
        let start = Instant::now();
        while scrape_within_2s(url).await["arbiter_database_up"] != 1.0 {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{url}: still down after the database came back"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
    serve.logged("the database answers again").await;
    worker.logged("the database answers again").await;
    let serve_log = serve.log();
    assert_eq!(
        serve_log.matches("answering 503").count(),
        1,
        "one line for the outage's 503s, pages and API alike:\n{serve_log}"
    );
    assert!(
        !serve_log.contains("a page failed") && !serve_log.contains("cannot tell who is viewing"),
        "pages' 503s are not logged one by one:\n{serve_log}"
    );
    assert!(
        serve_log.contains("web requests get 503 until it does") && !serve_log.contains("matches wait"),
        "a front end plays no matches:\n{serve_log}"
    );
    assert!(serve_log.contains("since its last good answer"), "{serve_log}");
    let worker_log = worker.log();
    assert!(
        worker_log.contains("matches wait until it does")
            && !worker_log.contains("answering 503")
            && !worker_log.contains("get 503"),
        "a worker serves no web requests:\n{worker_log}"
    );
    assert_eq!(worker.stop().await, Some(0));
    assert_eq!(serve.stop().await, Some(0));
}

/// Runs `arbiter ratings recompute` on `data` (and `database_url`) and
/// waits at most 5 s for it: its exit code, stdout and stderr.
async fn recompute_within_5s(data: &std::path::Path, database_url: Option<&str>) -> (Option<i32>, String, String) {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .args(["ratings", "recompute", "--data"])
        .arg(data)
        .env_remove("DATABASE_URL")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    if let Some(url) = database_url {
        command.env("DATABASE_URL", url);
    }
    let mut child = command.spawn().expect("arbiter starts");
    let code = support::exit_code(&mut child, Duration::from_secs(5)).await;
    let output = child.wait_with_output().expect("its output");
    (
        code,
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `ratings recompute` never gives a false all-clear: against a folder
/// with no database, a database without the ladder's schema, a ladder
/// with no rated match, or an unreachable server it says so and exits 2
/// within 5 s, creating nothing (it opens read-only and never migrates);
/// the unreachable server's address is named with its password hidden,
/// with the cause.
#[tokio::test(flavor = "multi_thread")]
async fn recompute_refuses_what_it_cannot_compare() {
    let dir = tempfile::tempdir().expect("a temporary folder");

    // No database at all: none is created.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).expect("a folder");
    let (code, stdout, stderr) = recompute_within_5s(&empty, None).await;
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("no database at"), "{stderr}");
    assert!(!stdout.contains("no difference"), "{stdout}");
    assert_eq!(
        std::fs::read_dir(&empty).expect("the folder").count(),
        0,
        "nothing created"
    );

    // A SQLite file that is not the ladder's: left without a schema.
    let other = dir.path().join("other");
    std::fs::create_dir_all(&other).expect("a folder");
    let url = format!("sqlite://{}?mode=rwc", other.join("arbiter.db").display());
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&url).await.expect("a SQLite file");
    sqlx::query("CREATE TABLE notes (text TEXT)")
        .execute(&pool)
        .await
        .expect("a table");
    let (code, stdout, stderr) = recompute_within_5s(&other, None).await;
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("no ladder schema"), "{stderr}");
    let tables: Vec<String> = sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
        .fetch_all(&pool)
        .await
        .expect("the tables");
    assert_eq!(tables, ["notes"], "no schema created");
    pool.close().await;

    // The ladder's schema, no rated match.
    let fresh = dir.path().join("fresh");
    std::fs::create_dir_all(&fresh).expect("a folder");
    drop(
        arbiter_ladder::db::Db::open_sqlite(&fresh.join("arbiter.db"))
            .await
            .expect("a ladder database"),
    );
    let (code, stdout, stderr) = recompute_within_5s(&fresh, None).await;
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(stderr.contains("no rated match"), "{stderr}");

    // Nobody listens: refused at once, address named, password hidden.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("a free port")
        .port();
    let url = format!("postgres://arbiter:hunter2@127.0.0.1:{port}/ladder");
    let (code, stdout, stderr) = recompute_within_5s(&empty, Some(&url)).await;
    assert_eq!(code, Some(2), "{stdout}{stderr}");
    assert!(
        stderr.contains(&format!("postgres://arbiter:***@127.0.0.1:{port}/ladder")),
        "the address: {stderr}"
    );
    assert!(!stderr.contains("hunter2"), "the password is hidden: {stderr}");
    assert!(stderr.contains("refused"), "the cause: {stderr}");

    // An empty PostgreSQL database: no schema, and none created.
    if let Some(pg) = std::env::var_os(support::TEST_PG_URL).filter(|url| !url.is_empty()) {
        let _ = pg;
        let database = support::PgDatabase::create().await;
        let (code, stdout, stderr) = recompute_within_5s(&empty, Some(&database.url)).await;
        assert_eq!(code, Some(2), "{stdout}{stderr}");
        assert!(stderr.contains("no ladder schema"), "{stderr}");
        let pool = sqlx::AnyPool::connect(&database.url).await.expect("the database");
        let tables: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = 'public'")
                .fetch_one(&pool)
                .await
                .expect("the tables");
        assert_eq!(tables, 0, "no schema created");
        pool.close().await;
    } else {
        eprintln!("TEST_PG_URL is not set: the empty PostgreSQL database is not tried");
    }
}

/// One request, `GET path`, on a kept HTTP/1.1 connection.
fn get_request(path: &str) -> String {
    format!("GET {path} HTTP/1.1\r\nHost: arbiter\r\n\r\n")
}

/// Reads one answer from `stream`: `Some(head)` when its head and all of
/// its `Content-Length` body arrived, `None` when the connection ended
/// (or was reset) before.
fn read_answer(stream: &mut std::net::TcpStream) -> Option<String> {
    use std::io::Read;
    stream.set_read_timeout(Some(Duration::from_secs(30))).ok()?;
    let mut head = Vec::new();
    let mut byte = [0; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let length: usize = head.lines().find_map(|line| {
        line.to_ascii_lowercase()
            .strip_prefix("content-length: ")?
            .trim()
            .parse()
            .ok()
    })?;
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    Some(head)
}

/// A SIGTERM while requests are under way and queued (sent on
/// connections the server has not read yet, fresh and kept ones) answers
/// every one of them in full within the grace, and `serve` exits 0 with
/// no panic in its log.
#[tokio::test(flavor = "multi_thread")]
async fn a_sigterm_answers_every_request_already_sent() {
    use std::io::Write;
    const CLIENTS: usize = 500;
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data").display().to_string();
    let serve = Logged::start(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--workers",
            "0",
            "--no-schedule",
            "--grace",
            "10",
            "--data",
            &data,
        ],
        None,
        dir.path().join("serve.log"),
        "listening on ",
    )
    .await;
    let address: std::net::SocketAddr = serve
        .announced
        .trim()
        .trim_start_matches("http://")
        .parse()
        .expect("the address serve announced");
    let sent = std::sync::Arc::new(std::sync::Barrier::new(CLIENTS + 1));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|i| {
            let sent = sent.clone();
            std::thread::spawn(move || {
                // Every fourth on a kept connection, answered once already;
                // every tenth a page that reads the database.
                let path = if i % 3 == 0 { "/api/health" } else { "/" };
                let mut stream = std::net::TcpStream::connect(address).expect("a connection");
                if i % 4 == 0 {
                    stream.write_all(get_request(path).as_bytes()).expect("a first request");
                    read_answer(&mut stream).expect("the first answer");
                }
                let request = stream.write_all(get_request(path).as_bytes());
                sent.wait();
                request.expect("the request sent");
                read_answer(&mut stream)
            })
        })
        .collect();
    let waiting = sent.clone();
    tokio::task::spawn_blocking(move || waiting.wait())
        .await
        .expect("every request sent");
    let signalled = Instant::now();
    let mut serve = serve;
    support::send_signal(&serve.child, "TERM");
    let answers: Vec<Option<String>> = tokio::task::spawn_blocking(move || {
        clients
            .into_iter()
            .map(|client| client.join().expect("a client thread"))
            .collect()
    })
    .await
    .expect("the clients");
    let answered = answers
        .iter()
        .flatten()
        .filter(|head| head.starts_with("HTTP/1.1 200"))
        .count();
    let code = support::exit_code(&mut serve.child, Duration::from_secs(30)).await;
    let took = signalled.elapsed();
    eprintln!("{answered} of {CLIENTS} requests answered in full; serve exited {took:?} after SIGTERM");
    let log = serve.log();
    assert_eq!(answered, CLIENTS, "every request sent is answered: {answers:?}\n{log}");
    assert_eq!(code, Some(0), "a clean exit:\n{log}");
    assert!(!log.contains("panicked"), "no panic:\n{log}");
    assert!(took < Duration::from_secs(10), "within the grace: {took:?}");
}
