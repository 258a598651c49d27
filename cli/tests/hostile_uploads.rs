//! Hostile requests against bots, versions and matches: each gets the right
//! status and a JSON error, and changes nothing.

mod support;

use reqwest::multipart::{Form, Part};
use serde_json::json;
use support::{Backend, Client, Method, StatusCode, TestServer, backends};

fn form(name: &str, ladders: &str, wasm: &[u8]) -> Form {
    Form::new()
        .text("name", name.to_string())
        .text("ladders", ladders.to_string())
        .part("module", Part::bytes(wasm.to_vec()).file_name("bot.wasm"))
}

fn greedy() -> &'static [u8] {
    arbiter_house::find("othello-greedy").expect("house bot").wasm()
}

/// The rows that a refused request must not have added.
async fn footprint(server: &TestServer) -> (i64, i64, i64) {
    (
        server.count("bots").await,
        server.count("versions").await,
        server.count("matches").await,
    )
}

/// Announces a 41 MiB upload (above a component's 40 MiB), sends 64 KiB of
/// it and returns the status the server answers with.
async fn oversized_upload(server: &TestServer, token: &str) -> u16 {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.expect("connects");
    let head = format!(
        "POST /api/bots HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: multipart/form-data; boundary=B\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        41 * 1024 * 1024
    );
    socket.write_all(head.as_bytes()).await.expect("writes");
    let _ = socket.write_all(&vec![b'x'; 64 * 1024]).await;
    let mut answer = vec![0u8; 1024];
    let n = tokio::time::timeout(std::time::Duration::from_secs(30), socket.read(&mut answer))
        .await
        .expect("answers without waiting for the whole body")
        .expect("reads");
    let text = String::from_utf8_lossy(&answer[..n]);
    text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0)
}

async fn refused(client: &Client, request: reqwest::RequestBuilder, status: StatusCode, words: &str) {
    let (got, body) = client.send(request).await;
    assert_eq!(got, status, "{body}");
    let error = body["error"].as_str().unwrap_or("");
    assert!(
        error.to_lowercase().contains(&words.to_lowercase()),
        "expected {words:?} in {error:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn hostile_uploads_are_refused_with_reasons_and_change_nothing() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        let ann = server.signup("ann").await;
        let api = server.token_client(&server.token(&ann).await);
        let before = footprint(&server).await;
        let up = |f: Form| api.request(Method::POST, "/api/bots").multipart(f);

        // 1. Not WebAssembly.
        refused(
            &api,
            up(form("annbot", "othello:std", b"#!/bin/sh\necho hi\n")),
            StatusCode::BAD_REQUEST,
            "not WebAssembly",
        )
        .await;
        // 2. WebAssembly that breaks the contract (imports something forbidden).
        let forbidden = wat::parse_str(
            r#"(module (import "env" "system" (func)) (memory (export "memory") 1) (func (export "_start")))"#,
        )
        .expect("wat");
        refused(
            &api,
            up(form("annbot", "othello:std", &forbidden)),
            StatusCode::BAD_REQUEST,
            "env",
        )
        .await;
        // 3. Over the size limit: refused from the announced length, before
        // the body is read (sent by hand: a client that insists on writing
        // all 41 MiB first may see the connection closed instead).
        let token = api.token.clone().expect("token");
        assert_eq!(oversized_upload(&server, &token).await, 413);
        // 4. Missing fields.
        let no_module = Form::new().text("name", "annbot").text("ladders", "othello:std");
        refused(&api, up(no_module), StatusCode::BAD_REQUEST, "module").await;
        let no_name = Form::new()
            .text("ladders", "othello:std")
            .part("module", Part::bytes(greedy().to_vec()));
        refused(&api, up(no_name), StatusCode::BAD_REQUEST, "name").await;
        refused(
            &api,
            up(form("annbot", "", greedy())),
            StatusCode::BAD_REQUEST,
            "ladder",
        )
        .await;
        // 5. An unknown ladder.
        refused(
            &api,
            up(form("annbot", "chess:std", greedy())),
            StatusCode::BAD_REQUEST,
            "unknown ladder",
        )
        .await;
        // 6. HTML and script in the bot name; SQL metacharacters; path tricks.
        for name in [
            "<script>alert(1)</script>",
            "x'; DROP TABLE bots;--",
            "../../etc/passwd",
            "a",
            "名前",
        ] {
            refused(
                &api,
                up(form(name, "othello:std", greedy())),
                StatusCode::BAD_REQUEST,
                "bot name",
            )
            .await;
        }
        // 7. Malformed multipart: a boundary that never closes.
        let broken = api
            .request(Method::POST, "/api/bots")
            .header("content-type", "multipart/form-data; boundary=XYZ")
            .body("--XYZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nannbot\r\n--XYZ");
        refused(&api, broken, StatusCode::BAD_REQUEST, "multipart").await;
        // 8. No credentials at all.
        let anonymous = server.client();
        refused(
            &anonymous,
            anonymous
                .request(Method::POST, "/api/bots")
                .multipart(form("annbot", "othello:std", greedy())),
            StatusCode::UNAUTHORIZED,
            "sign in",
        )
        .await;
        // 9. A forged cross-site form post with ann's session cookie.
        let forged = ann
            .raw(Method::POST, "/api/bots")
            .header("origin", "http://evil.example")
            .multipart(form("annbot", "othello:std", greedy()));
        let response = forged.send().await.expect("an answer, not a dropped connection");
        assert_eq!(response.status(), StatusCode::FORBIDDEN);
        // Refused before its body was read: the connection is not reused.
        // (The next request on it used to fail to send, under load.)
        assert_eq!(
            response.headers().get("connection").and_then(|v| v.to_str().ok()),
            Some("close")
        );
        // 10. A session upload without the CSRF token.
        let (status, _) = ann
            .without_csrf()
            .post_multipart("/api/bots", form("annbot", "othello:std", greedy()))
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(footprint(&server).await, before, "nothing was stored");

        // A good upload, then: the same module twice (409), another user's
        // bot (403), retiring another user's bot (403).
        let (status, body) = api
            .post_multipart("/api/bots", form("annbot", "othello:std", greedy()))
            .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{body}");
        let after_upload = footprint(&server).await;
        refused(
            &api,
            up(form("annbot", "othello:std", greedy())),
            StatusCode::CONFLICT,
            "already version",
        )
        .await;
        let bob = server.signup("bob").await;
        let bob_api = server.token_client(&server.token(&bob).await);
        let random = arbiter_house::find("othello-random").expect("house").wasm();
        refused(
            &bob_api,
            bob_api
                .request(Method::POST, "/api/bots")
                .multipart(form("ANNBOT", "othello:std", random)),
            StatusCode::FORBIDDEN,
            "belongs to someone else",
        )
        .await;
        refused(
            &bob_api,
            bob_api
                .request(Method::POST, "/api/bots/annbot/retire")
                .json(&json!({})),
            StatusCode::FORBIDDEN,
            "someone else",
        )
        .await;
        assert_eq!(footprint(&server).await, after_upload, "nothing changed");

        // 11. Ids that are not ids (they name nothing), and ids of nothing.
        for path in [
            "/api/matches/abc",
            "/api/matches/-1",
            "/api/matches/1%20OR%201=1",
            "/api/versions/1;DROP",
            "/api/tournaments/0",
            "/api/matches/999999",
            "/api/versions/999999",
            "/api/bots/nobody-here",
            "/api/matches/999999/replay",
            "/api/bots/..%2F..%2Fetc%2Fpasswd",
        ] {
            let (status, _) = api.get(path).await;
            assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        }
        // 12. Bad query parameters.
        let (status, _) = api.get("/api/matches?limit=100000").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        let (status, _) = api.get("/api/ladders/othello:nope/leaderboard").await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        // 13. Challenges with someone else's bot, an unknown bot, oneself.
        let (status, _) = bob_api
            .post_json(
                "/api/challenges",
                &json!({"bot": "annbot", "opponent": "othello-random", "ladder": "othello:std"}),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        let (status, _) = api
            .post_json(
                "/api/challenges",
                &json!({"bot": "ghost", "opponent": "othello-random", "ladder": "othello:std"}),
            )
            .await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, _) = api
            .post_json("/api/challenges", &json!({"bot": "annbot", "ladder": "othello:std"}))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "a missing field");
        assert_eq!(footprint(&server).await, after_upload, "no match was queued");
        if backend == Backend::Sqlite {
            // 14. A burst of uploads over the rate limit (once is enough).
            let mut statuses = Vec::new();
            for n in 0..12 {
                let name = format!("burst{n}");
                let (status, _) = api
                    .post_multipart("/api/bots", form(&name, "othello:std", random))
                    .await;
                statuses.push(status);
            }
            assert!(statuses.contains(&StatusCode::TOO_MANY_REQUESTS), "{statuses:?}");
        }
    }
}
