//! Limits a stranger cannot get around: live event streams are capped per
//! address (and in all), and a stream of a match that does not exist is a
//! 404 rather than a stream that never ends.

mod support;

use std::time::{Duration, Instant};
use support::{Backend, Method, Options};

#[tokio::test(flavor = "multi_thread")]
async fn event_streams_are_capped_per_address_and_unknown_matches_are_404() {
    let server = Options::on(Backend::Sqlite)
        .arg("--trusted-proxy")
        .arg("127.0.0.1")
        .start()
        .await;
    let client = server.client();
    let (status, body) = client.get("/api/events?match=999999").await;
    assert_eq!(status.as_u16(), 404, "{body}");
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("match 999999")),
        "{body}"
    );

    let open = |address: &'static str| {
        let client = client.clone();
        async move {
            client
                .raw(Method::GET, "/api/events")
                .header("X-Forwarded-For", address)
                .send()
                .await
                .expect("an answer")
        }
    };
    let mut streams = Vec::new();
    for _ in 0..arbiter_http::api::events::STREAMS_PER_ADDRESS {
        let response = open("203.0.113.9").await;
        assert_eq!(response.status().as_u16(), 200);
        streams.push(response);
    }
    let refused = open("203.0.113.9").await;
    assert_eq!(refused.status().as_u16(), 429, "one stream too many from one address");
    assert!(refused.headers().contains_key("retry-after"));
    let body: serde_json::Value = refused.json().await.expect("JSON");
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("live streams")),
        "{body}"
    );
    // Another address is not affected.
    let other = open("198.51.100.3").await;
    assert_eq!(other.status().as_u16(), 200);
    // A closed stream gives its slot back (once the server notices, at the
    // latest at its next keep-alive).
    drop(streams.pop());
    let start = Instant::now();
    loop {
        let response = open("203.0.113.9").await;
        if response.status().as_u16() == 200 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(40),
            "the closed stream's slot never came back"
        );
        tokio::time::sleep(Duration::from_millis(500)).await;
    }
    eprintln!("slot back after {:.1} s", start.elapsed().as_secs_f64());
}

/// Ratings move only for bots whose owners agreed to play: those of the
/// ladder's own (ranked) matches. A tournament or a challenge may pit bots
/// of owners who never asked for it; it is played and counted in its
/// standings, but moves no rating. (Any user used to be able to move
/// anyone's ratings with a tournament of strangers' bots.)
#[tokio::test(flavor = "multi_thread")]
async fn tournaments_and_challenges_move_no_ratings() {
    let server = Options::on(Backend::Sqlite).workers(2).start().await;
    let mallory = server.signup("mallory").await;
    let token = server.token(&mallory).await;
    let api = server.token_client(&token);
    let db = server.db().await;
    let ratings = || async {
        sqlx::query_as::<_, (String, f64, f64)>(
            "SELECT b.name, r.rating, r.deviation FROM ratings r JOIN versions v ON v.id = r.version_id \
             JOIN bots b ON b.id = v.bot_id WHERE r.ladder = 'tictactoe:standard' ORDER BY b.name",
        )
        .fetch_all(&db.pool)
        .await
        .expect("ratings")
    };

    // A tournament of two strangers' bots (the house's).
    let before = ratings().await;
    let (status, body) = api
        .post_json(
            "/api/tournaments",
            &serde_json::json!({"name": "not mine", "ladder": "tictactoe", "bots": ["tictactoe-perfect", "tictactoe-random"], "matches_per_pair": 2}),
        )
        .await;
    assert_eq!(status.as_u16(), 201, "{body}");
    let tournament = body["tournament"]["id"].as_i64().expect("id");
    support::wait_for(
        &api,
        &format!("/api/tournaments/{tournament}"),
        Duration::from_secs(120),
        |b| b["tournament"]["finished"] == 2,
    )
    .await;

    // A challenge of a stranger's bot with one of mallory's own.
    let version = support::upload_and_check(&api, "mallory-bot", "tictactoe", support::house("tictactoe-random")).await;
    assert_eq!(version["version"]["status"], "active", "{version}");
    let before_challenge = ratings().await;
    let id = support::challenge_and_wait(&api, "mallory-bot", "tictactoe-perfect", "tictactoe").await;

    assert_eq!(ratings().await, before_challenge, "a challenge moves no rating");
    let played: Vec<_> = before
        .iter()
        .filter(|(name, _, _)| name.starts_with("tictactoe-"))
        .collect();
    let after = ratings().await;
    for (name, rating, deviation) in played {
        let now = after.iter().find(|(n, _, _)| n == name).expect("still rated");
        assert_eq!(
            (now.1, now.2),
            (*rating, *deviation),
            "{name}: a tournament moves no rating"
        );
    }
    let (rated, finished): (i64, i64) = sqlx::query_as(
        "SELECT COALESCE(SUM(rated), 0), COUNT(*) FROM matches WHERE kind IN ('tournament', 'challenge') AND status = 'finished'",
    )
    .fetch_one(&db.pool)
    .await
    .expect("counts");
    assert_eq!(
        (rated, finished),
        (0, 3),
        "match {id} and the tournament's two, all unrated"
    );
}

/// Reads from `stream` until the server answers or closes; returns what it
/// sent and how long that took.
async fn until_answered(stream: &mut tokio::net::TcpStream) -> (String, Duration) {
    use tokio::io::AsyncReadExt;
    let start = Instant::now();
    let mut got = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        match tokio::time::timeout(Duration::from_secs(40), stream.read(&mut buffer)).await {
            Ok(Ok(0)) | Ok(Err(_)) => break,
            Ok(Ok(n)) => {
                got.extend_from_slice(&buffer[..n]);
                if got.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(_) => panic!("the server held the connection for 40 s"),
        }
    }
    (String::from_utf8_lossy(&got).into_owned(), start.elapsed())
}

/// A request whose headers never finish, or whose body stalls, is not held
/// open: the connection is closed (or the request refused) within the
/// header timeout or the body's stall timeout. (Both used to be held
/// indefinitely, 90 s and more.)
#[tokio::test(flavor = "multi_thread")]
async fn unfinished_requests_are_not_held_open() {
    use tokio::io::AsyncWriteExt;
    let server = Options::on(Backend::Sqlite).start().await;
    let headers = async {
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
        stream
            .write_all(b"GET /api/health HTTP/1.1\r\nHost: arbiter\r\nX-Slow: ")
            .await
            .expect("write");
        until_answered(&mut stream).await
    };
    let body = async {
        let mut stream = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
        stream
            .write_all(
                b"POST /api/sessions HTTP/1.1\r\nHost: arbiter\r\nContent-Type: application/json\r\n\
                  Content-Length: 100\r\n\r\n{\"name\": ",
            )
            .await
            .expect("write");
        until_answered(&mut stream).await
    };
    let ((_, header_wait), (answer, body_wait)) = tokio::join!(headers, body);
    eprintln!("unfinished headers closed after {header_wait:?}; stalled body answered after {body_wait:?}");
    let header_limit = arbiter_http::server::HEADER_READ_TIMEOUT + Duration::from_secs(5);
    assert!(header_wait < header_limit, "headers held {header_wait:?}");
    let body_limit = arbiter_http::middleware::BODY_TIMEOUT + Duration::from_secs(5);
    assert!(body_wait < body_limit, "body held {body_wait:?}");
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 4"),
        "a stalled body is refused, not served: {answer}"
    );
}

/// A tournament, its entries and its matches are written together: when
/// queuing one of its matches fails, nothing of it is left. (The matches
/// used to be queued after the tournament was committed, so a failure
/// half-way left a tournament with some of its matches.)
#[tokio::test(flavor = "multi_thread")]
async fn a_tournament_that_fails_half_way_leaves_nothing() {
    let server = Options::on(Backend::Sqlite).workers(0).schedule(false).start().await;
    let alice = server.signup("alice").await;
    let db = server.db().await;
    // The third match of any tournament cannot be inserted.
    sqlx::query(
        "CREATE TRIGGER third_match_fails BEFORE INSERT ON matches \
         WHEN NEW.tournament_id IS NOT NULL \
           AND (SELECT COUNT(*) FROM matches WHERE tournament_id = NEW.tournament_id) >= 2 \
         BEGIN SELECT RAISE(ABORT, 'injected failure'); END",
    )
    .execute(&db.pool)
    .await
    .expect("the trigger");
    let before = [
        server.count("tournaments").await,
        server.count("tournament_entries").await,
        server.count("matches").await,
    ];
    let (status, body) = alice
        .post_json(
            "/api/tournaments",
            &serde_json::json!({"name": "half", "ladder": "othello:std", "bots": ["othello-random", "othello-greedy", "othello-ab-weak"], "matches_per_pair": 1}),
        )
        .await;
    assert_eq!(status.as_u16(), 500, "{body}");
    let after = [
        server.count("tournaments").await,
        server.count("tournament_entries").await,
        server.count("matches").await,
    ];
    assert_eq!(after, before, "tournaments, entries, matches: nothing of it is left");

    // Without the trigger the same request makes all three matches.
    sqlx::query("DROP TRIGGER third_match_fails")
        .execute(&db.pool)
        .await
        .expect("drop");
    let (status, body) = alice
        .post_json(
            "/api/tournaments",
            &serde_json::json!({"name": "whole", "ladder": "othello:std", "bots": ["othello-random", "othello-greedy", "othello-ab-weak"], "matches_per_pair": 1}),
        )
        .await;
    assert_eq!(status.as_u16(), 201, "{body}");
    assert_eq!(body["tournament"]["matches"], 3);
    assert_eq!(server.count("matches").await, before[2] + 3);
}

/// A refusal of a compressed route is plain JSON whatever the client
/// accepts: the JSON error envelope replaced a gzipped body but kept its
/// `Content-Encoding: gzip`, which no client could decode (found by
/// schemathesis on `/api/matches/{id}/frames?game=1&game=2`).
#[tokio::test(flavor = "multi_thread")]
async fn refusals_of_compressed_routes_are_readable_json() {
    let server = Options::on(Backend::Sqlite).start().await;
    let client = server.client();
    for path in [
        "/api/matches/1/frames?game=1&game=2",
        "/api/matches/1/frames?game=3",
        "/api/matches/1/replay?download=1&download=2",
        "/api/matches/x/training.jsonl",
    ] {
        let response = client
            .raw(Method::GET, path)
            .header("Accept-Encoding", "gzip")
            .send()
            .await
            .expect("an answer");
        let status = response.status().as_u16();
        assert!((400..500).contains(&status), "{path}: {status}");
        let encoding = response.headers().get("content-encoding").cloned();
        let bytes = response.bytes().await.expect("a body");
        let body: serde_json::Value = match encoding.as_ref().map(|e| e.as_bytes()) {
            None => serde_json::from_slice(&bytes).expect("plain JSON"),
            Some(b"gzip") => {
                assert_eq!(&bytes[..2], b"\x1f\x8b", "{path}: labelled gzip, and gzip");
                continue;
            }
            Some(other) => panic!("{path}: unexpected encoding {other:?}"),
        };
        assert_eq!(body["ok"], false, "{path}: {body}");
        assert!(body["error"].is_string(), "{path}: {body}");
    }
    let (status, body) = client.get("/api/matches/1/frames?game=1&game=2").await;
    assert_eq!(status.as_u16(), 400);
    assert!(
        body["error"].as_str().is_some_and(|e| e.contains("game once")),
        "{body}"
    );
}
