//! Remote bots on the server: URLs inside the host's network are refused
//! without a connection unless the operator allows them, and a remote bot
//! (the Python HTTP bot of `examples/`, a real server on loopback) plays on
//! a remote ladder of its own, never touching a fuel-clock leaderboard or
//! rating.

mod support;

use std::io::{BufRead, BufReader, ErrorKind};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;
use support::{Options, StatusCode, TestServer, backends, wait_for};

fn url_form(name: &str, ladders: &str, url: &str) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new()
        .text("name", name.to_owned())
        .text("ladders", ladders.to_owned())
        .text("url", url.to_owned())
}

/// Asserts that nothing connected to `listener`.
fn saw_nothing(listener: &TcpListener) {
    listener.set_nonblocking(true).expect("non-blocking");
    match listener.accept() {
        Err(err) if err.kind() == ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("a connection came from {peer}"),
        Err(err) => panic!("accept failed: {err}"),
    }
}

#[tokio::test]
async fn urls_inside_the_network_are_refused_without_a_connection() {
    let server = TestServer::start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("address").port();
    for (url, kind) in [
        (format!("http://127.0.0.1:{port}/"), "Loopback"),
        (format!("http://localhost:{port}/"), "Loopback"),
        (format!("http://[::ffff:127.0.0.1]:{port}/"), "Loopback"),
        (format!("http://0.0.0.0:{port}/"), "This host on this network"),
        (format!("ws://127.0.0.1:{port}/"), "Loopback"),
        ("http://[::1]/".to_owned(), "Loopback"),
        ("http://10.0.0.1/".to_owned(), "Private-Use"),
        ("http://169.254.169.254/latest/meta-data/".to_owned(), "Link Local"),
    ] {
        let (status, body) = api
            .post_multipart("/api/bots", url_form("probe", "tictactoe", &url))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{url}: {body}");
        let error = body["error"].as_str().unwrap_or_default();
        assert!(error.contains(kind), "{url}: {error}");
        // The server's flag is for its operator, not for a visitor.
        assert!(!error.contains("--allow-private-bot-urls"), "{url}: {error}");
    }
    saw_nothing(&listener);
    let (status, body) = api
        .post_multipart("/api/bots", url_form("probe", "tictactoe", "ftp://example.org/"))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // The site's form, without JavaScript: refused with the reason, then a
    // public URL registered (nothing connects to it: no worker runs here).
    // Another user: every registration, refused or not, counts against the
    // upload rate limit (so resolving names is bounded per user).
    let bea = server.signup("bea").await;
    let site_form = |url: &str| {
        reqwest::multipart::Form::new()
            .text("csrf", bea.csrf.clone().expect("a CSRF token"))
            .text("name", "siteremote")
            .text("ladders", "othello:std")
            .text("url", url.to_owned())
    };
    let refused = bea
        .raw(support::Method::POST, "/upload")
        .multipart(site_form(&format!("http://127.0.0.1:{port}/")))
        .send()
        .await
        .expect("answered");
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let page = refused.text().await.expect("a page");
    assert!(page.contains("Loopback"), "{page}");
    let accepted = bea
        .raw(support::Method::POST, "/upload")
        .multipart(site_form("https://93.184.215.14/bot"))
        .send()
        .await
        .expect("answered");
    // Redirected (303) to the bot's page.
    assert_eq!(accepted.status(), StatusCode::OK);
    assert_eq!(accepted.url().path(), "/bots/siteremote");
    let (_, site_bot) = api.get("/api/bots/siteremote").await;
    assert_eq!(site_bot["versions"][0]["status"], "active", "{site_bot}");
    assert_eq!(
        site_bot["versions"][0]["ladders"],
        serde_json::json!(["remote:othello:std"])
    );
    let module = site_bot["versions"][0]["module"].as_str().unwrap_or_default();
    assert!(module.starts_with("remote bot: HTTP server"), "{site_bot}");
    assert!(
        !site_bot.to_string().contains("93.184.215.14"),
        "the URL is not published: {site_bot}"
    );
    saw_nothing(&listener);

    let (_, bots) = api.get("/api/bots").await;
    assert!(
        !bots["bots"]
            .as_array()
            .expect("bots")
            .iter()
            .any(|b| b["name"] == "probe"),
        "nothing was stored: {bots}"
    );
}

/// A port of loopback nothing listens on.
fn support_closed_port() -> std::net::SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address")
}

/// The example HTTP bot, on a free port of loopback.
struct PythonBot {
    child: Child,
    url: String,
}

impl PythonBot {
    fn start() -> PythonBot {
        let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/http_bot.py");
        let mut child = Command::new("python3")
            .arg(&example)
            .args(["--port", "0"])
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("piped"))
            .read_line(&mut line)
            .expect("the bot says where it listens");
        let url = line.trim().strip_prefix("listening on ").expect("a URL").to_owned();
        PythonBot { child, url }
    }
}

impl Drop for PythonBot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
async fn a_remote_bot_plays_its_own_ladder_and_never_a_fuel_clock_one() {
    for backend in backends() {
        let bot = PythonBot::start();
        let server = Options::on(backend)
            .workers(2)
            .schedule(true)
            .arg("--allow-private-bot-urls")
            .start()
            .await;
        let ann = server.signup("ann").await;
        let api = server.token_client(&server.token(&ann).await);
        let (status, body) = api
            .post_multipart(
                "/api/bots",
                url_form("pyremote", "tictactoe,othello:std,othello:anti", &bot.url),
            )
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["version"]["status"], "active", "{body}");
        assert_eq!(
            body["version"]["ladders"],
            serde_json::json!(["remote:tictactoe:standard", "remote:othello:std", "remote:othello:anti"])
        );
        let version = body["version"]["id"].as_i64().expect("version id");
        let db = server.db().await;

        // It plays rated matches on its remote ladders against house bots,
        // in at most two matches at once over all of them.
        let board = "/api/ladders/remote:tictactoe:standard/leaderboard";
        let started = std::time::Instant::now();
        let mut most_at_once = 0;
        let found = loop {
            let in_flight: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM matches WHERE status IN ('queued', 'running') AND (a_version = $1 OR b_version = $1)",
            )
            .bind(version)
            .fetch_one(&db.pool)
            .await
            .expect("count");
            assert!(in_flight <= 2, "{in_flight} matches at once");
            most_at_once = most_at_once.max(in_flight);
            let (_, found) = api.get(board).await;
            let played = found["entries"].as_array().is_some_and(|rows| {
                rows.iter()
                    .any(|r| r["bot"] == "pyremote" && r["matches"].as_i64().unwrap_or(0) >= 2)
            });
            if played {
                break found;
            }
            assert!(
                started.elapsed() < Duration::from_secs(180),
                "no two rated matches: {found}"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        };
        assert!(most_at_once >= 1, "it was seen playing");
        let row = found["entries"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["bot"] == "pyremote"))
            .expect("a row")
            .clone();
        assert!(
            row["wins"].as_i64().unwrap_or(0) > 0,
            "it plays well enough to win: {row}"
        );

        // Never on a fuel-clock board, never in a fuel-clock match.
        let (_, fuel) = api.get("/api/ladders/tictactoe:standard/leaderboard").await;
        assert!(
            !fuel["entries"]
                .as_array()
                .expect("rows")
                .iter()
                .any(|r| r["bot"] == "pyremote"),
            "{fuel}"
        );
        let mixed: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM matches WHERE ladder NOT LIKE 'remote:%' AND (a_version = $1 OR b_version = $1)",
        )
        .bind(version)
        .fetch_one(&db.pool)
        .await
        .expect("count");
        assert_eq!(mixed, 0);
        let ratings: Vec<String> = sqlx::query_scalar("SELECT ladder FROM ratings WHERE version_id = $1")
            .bind(version)
            .fetch_all(&db.pool)
            .await
            .expect("ratings");
        let mut ratings = ratings;
        ratings.sort();
        assert_eq!(
            ratings,
            ["remote:othello:anti", "remote:othello:std", "remote:tictactoe:standard"]
        );
        // Remote matches are between the remote bot and a house bot only:
        // house bots never play each other there.
        let house_only: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM matches m WHERE m.ladder LIKE 'remote:%' AND NOT EXISTS \
             (SELECT 1 FROM versions v WHERE v.remote_url IS NOT NULL AND v.id IN (m.a_version, m.b_version))",
        )
        .fetch_one(&db.pool)
        .await
        .expect("count");
        assert_eq!(house_only, 0);

        // Its replays say they cannot be re-run; `verify` re-checks them.
        let (_, matches) = api
            .get("/api/matches?ladder=remote:tictactoe:standard&status=finished")
            .await;
        let id = matches["matches"][0]["id"].as_i64().expect("a finished match");
        let replay = server
            .client()
            .raw(support::Method::GET, &format!("/api/matches/{id}/replay"))
            .send()
            .await
            .expect("replay")
            .bytes()
            .await
            .expect("body");
        let parsed: Value = serde_json::from_slice(&replay).expect("JSON replay");
        assert_eq!(parsed["reproducible"], false);
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("remote.json");
        std::fs::write(&path, &replay).expect("written");
        let verified = Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .arg("verify")
            .arg(&path)
            .output()
            .expect("arbiter runs");
        let said = String::from_utf8_lossy(&verified.stdout);
        assert!(verified.status.success(), "{said}");
        assert!(said.contains("checked: every move is legal"), "{said}");

        // A remote bot whose URL fails a whole match is paused, with the
        // reason on its page, and resumed by posting its URL again.
        let gone = format!("http://{}/", support_closed_port());
        let (status, body) = api
            .post_multipart("/api/bots", url_form("gonebot", "tictactoe", &gone))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let paused = wait_for(&api, "/api/bots/gonebot", Duration::from_secs(120), |b| {
            b["versions"][0]["status"] == "paused"
        })
        .await;
        let reason = paused["versions"][0]["reason"].as_str().unwrap_or_default();
        assert!(reason.contains("failed every game"), "{paused}");
        assert!(reason.contains("cannot connect"), "{paused}");
        let (status, body) = api
            .post_multipart("/api/bots", url_form("gonebot", "tictactoe", &gone))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        assert_eq!(body["version"]["status"], "active", "{body}");
        assert_eq!(body["version"]["number"], 1, "the same version, resumed: {body}");

        // The remote board is on the home page, marked as such.
        let html = server
            .client()
            .raw(support::Method::GET, "/")
            .send()
            .await
            .expect("home")
            .text()
            .await
            .expect("html");
        assert!(
            html.contains("Remote bots · wall clock"),
            "the home page shows the remote boards"
        );
        assert!(html.contains("/ladders/remote:tictactoe:standard"));

        // Automatic matching off: once its matches end, it gets no more.
        let (status, body) = api
            .send_json(
                support::Method::PUT,
                "/api/bots/pyremote/profile",
                &serde_json::json!({"auto_match": false}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let count = |sql: &'static str| {
            let db = &db;
            async move {
                sqlx::query_scalar::<_, i64>(sql)
                    .bind(version)
                    .fetch_one(&db.pool)
                    .await
                    .expect(sql)
            }
        };
        let in_flight = "SELECT COUNT(*) FROM matches WHERE status IN ('queued', 'running') \
                         AND (a_version = $1 OR b_version = $1)";
        let all = "SELECT COUNT(*) FROM matches WHERE a_version = $1 OR b_version = $1";
        let started = std::time::Instant::now();
        while count(in_flight).await > 0 {
            assert!(started.elapsed() < Duration::from_secs(120), "its matches end");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let before = count(all).await;
        // Eight scheduler ticks.
        tokio::time::sleep(Duration::from_secs(2)).await;
        assert_eq!(count(all).await, before, "no match was queued for it");

        // Stopped, its remote ratings recompute from the log like the
        // others, with no difference.
        let mut server = server;
        server.signal("TERM");
        assert_eq!(server.exit_code(Duration::from_secs(60)).await, Some(0));
        let differences = arbiter_ladder::ratings::recompute(&db, arbiter_ladder::ratings::RatingSystem::Glicko2)
            .await
            .expect("recompute");
        assert!(differences.is_empty(), "{differences:?}");
        let remote_rated: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE rated = 1 AND ladder LIKE 'remote:%'")
                .fetch_one(&db.pool)
                .await
                .expect("count");
        assert!(remote_rated >= 2, "{remote_rated} rated remote matches in the log");
    }
}

#[test]
fn a_remote_ladders_time_control_is_set_like_any_other() {
    let dir = tempfile::tempdir().expect("tempdir");
    let arbiter = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .args(args)
            .arg("--data")
            .arg(dir.path())
            .env_remove("DATABASE_URL")
            .output()
            .expect("arbiter runs")
    };
    let listed = arbiter(&["ladders", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("remote:othello:std") && l.contains("60000 ms per move, 60000 ms per game")),
        "FlipSight's 60 s per leg by default: {text}"
    );
    assert!(text.contains("remote:skirmish:standard"), "{text}");
    let set = arbiter(&["ladders", "time", "REMOTE:othello", "30000/30000"]);
    assert!(set.status.success(), "{}", String::from_utf8_lossy(&set.stderr));
    assert!(String::from_utf8_lossy(&set.stdout).starts_with("remote:othello:std: 30000 ms per move"));
    let listed = arbiter(&["ladders", "list"]);
    let text = String::from_utf8_lossy(&listed.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("remote:othello:std") && l.contains("30000 ms per move")),
        "{text}"
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with("othello:std ") && l.contains("1000 ms per move")),
        "the fuel-clock ladder keeps its own: {text}"
    );
    let refused = arbiter(&["ladders", "time", "remote:chess", "1/1"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("remote ladders are"));
}
