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
