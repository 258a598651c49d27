//! Operating the server: `arbiter serve` stops cleanly on SIGTERM, the
//! signal systemd, docker and Kubernetes send (it used to die on the spot,
//! leaving its matches `running` until their lease expired, each counting a
//! lost attempt).

mod support;

use std::time::{Duration, Instant};
use support::{Backend, Options, TestServer};

/// Polls `count` (a `SELECT COUNT(*)`) until it is positive, at most `limit`.
async fn until_positive(db: &arbiter_server::db::Db, count: &'static str, limit: Duration) {
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

async fn scalar(db: &arbiter_server::db::Db, sql: &'static str) -> i64 {
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
