//! The web site against the real server: every page answers with HTML and
//! the security headers, and user-supplied text that may hold markup — a
//! tournament's name, a rejected bot's reason and stderr — is rendered
//! escaped everywhere. (The browser tests in `web/tests` drive the pages'
//! scripts; this test needs no browser.)

mod support;

use reqwest::multipart::{Form, Part};
use serde_json::json;
use support::{Client, Method, StatusCode, TestServer};

const XSS: &str = "<script>alert(1)</script>";

/// A WASI command that writes `stderr` and exits without answering: it
/// passes the static checks and fails the smoke match.
fn silent_bot(stderr: &str) -> Vec<u8> {
    assert!(stderr.len() < 256);
    let text: String = stderr.bytes().map(|b| format!("\\{b:02x}")).collect();
    let len = format!("\\{:02x}", stderr.len());
    wat::parse_str(format!(
        r#"(module
             (import "wasi_snapshot_preview1" "fd_write" (func $w (param i32 i32 i32 i32) (result i32)))
             (memory (export "memory") 1)
             (data (i32.const 0) "\10\00\00\00{len}\00\00\00")
             (data (i32.const 16) "{text}")
             (func (export "_start") (drop (call $w (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))))"#
    ))
    .expect("valid WebAssembly text")
}

/// GETs `path` as `client`; returns status, headers and body.
async fn page(client: &Client, path: &str) -> (StatusCode, reqwest::header::HeaderMap, String) {
    let response = client.raw(Method::GET, path).send().await.expect("the page answers");
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.text().await.expect("a body"))
}

/// Checks a page: `status`, HTML, the CSP header, and no raw markup from
/// the hostile strings.
async fn check(client: &Client, path: &str, status: StatusCode) -> String {
    let (got, headers, body) = page(client, path).await;
    assert_eq!(got, status, "{path}: {body}");
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(content_type.starts_with("text/html"), "{path}: {content_type}");
    let csp = headers
        .get("content-security-policy")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    assert!(csp.contains("script-src 'self'"), "{path}: CSP {csp:?}");
    assert!(!body.contains(XSS), "{path} contains the raw markup");
    assert!(!body.contains("<img src=x"), "{path} contains the raw markup");
    body
}

#[tokio::test]
async fn every_page_renders_and_escapes_user_text() {
    let server = TestServer::start().await;
    let anonymous = server.client();
    let ann = server.signup("ann_site").await;

    // A bot whose check fails with markup on its stderr.
    let module = silent_bot(&format!("{XSS}<img src=x onerror=alert(2)>\n"));
    let form = Form::new()
        .text("name", "silent_bot")
        .text("ladders", "othello:std")
        .text("csrf", ann.csrf.clone().unwrap_or_default())
        .part("module", Part::bytes(module).file_name("silent.wasm"));
    let (status, body) = ann.post_multipart("/api/bots", form).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let version = body["version"]["id"].as_i64().expect("a version id");
    let mut verdict = String::new();
    for _ in 0..240 {
        let (_, body) = ann.get(&format!("/api/versions/{version}")).await;
        verdict = body["version"]["status"].as_str().unwrap_or_default().to_owned();
        if verdict != "checking" {
            assert!(
                body["version"]["stderr"].as_str().unwrap_or_default().contains(XSS),
                "{body}"
            );
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    }
    assert_eq!(verdict, "rejected");

    // A tournament named like a script (its matches stay queued: no workers).
    let (status, body) = ann
        .post_json(
            "/api/tournaments",
            &json!({"name": format!("{XSS}<img src=x onerror=alert(2)>"), "ladder": "othello:std",
                    "bots": ["othello-greedy", "othello-random"], "matches_per_pair": 1}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let tournament = body["tournament"]["id"].as_i64().expect("a tournament id");
    let (_, body) = anonymous.get("/api/matches?ladder=othello:std&limit=1").await;
    let queued = body["matches"][0]["id"].as_i64().expect("a queued match");

    for client in [&anonymous, &ann] {
        for path in [
            "/".to_owned(),
            "/ladders/othello:std".to_owned(),
            "/ladders/tictactoe".to_owned(),
            "/ladders/othello:std?fragment=rows".to_owned(),
            "/bots/othello-greedy".to_owned(),
            "/bots/silent_bot".to_owned(),
            format!("/matches/{queued}"),
            "/tournaments".to_owned(),
            format!("/tournaments/{tournament}"),
            "/guide".to_owned(),
            "/signin?next=/upload".to_owned(),
            "/signup".to_owned(),
        ] {
            let body = check(client, &path, StatusCode::OK).await;
            if path.starts_with("/tournaments") {
                assert!(
                    body.contains("&#60;script&#62;alert(1)&#60;/script&#62;"),
                    "{path}: the name shows, escaped"
                );
            }
        }
        for path in [
            "/nope",
            "/bots/nobody-here",
            "/matches/999999",
            "/matches/abc",
            "/ladders/chess",
            "/tournaments/0",
        ] {
            check(client, path, StatusCode::NOT_FOUND).await;
        }
    }

    // The owner reads the rejection and the stderr, escaped; others see the
    // reason only.
    let mine = check(&ann, "/bots/silent_bot", StatusCode::OK).await;
    assert!(mine.contains("stderr (only you see this)"));
    assert!(mine.contains("&#60;script&#62;alert(1)"), "the stderr shows, escaped");
    let theirs = check(&anonymous, "/bots/silent_bot", StatusCode::OK).await;
    assert!(!theirs.contains("only you see this"));
    assert!(theirs.contains("rejected"));

    // Signed-in pages; signed out they send to the sign-in page.
    for path in ["/account", "/upload", "/challenge"] {
        let body = check(&ann, path, StatusCode::OK).await;
        assert!(body.contains("name=\"csrf-token\""), "{path}");
        let (status, _, body) = page(&anonymous, path).await;
        assert_eq!(status, StatusCode::OK, "{path} redirects to a page");
        assert!(body.contains("id=\"signin-form\""), "{path} asks to sign in");
    }

    // Assets are embedded and typed.
    for (path, kind) in [
        ("/static/style.css", "text/css"),
        ("/static/site.js", "text/javascript"),
        ("/static/replay.js", "text/javascript"),
        ("/static/othello.js", "text/javascript"),
        ("/static/favicon.svg", "image/svg+xml"),
    ] {
        let (status, headers, body) = page(&anonymous, path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert!(
            headers["content-type"].to_str().unwrap_or_default().starts_with(kind),
            "{path}"
        );
        assert!(!body.is_empty(), "{path}");
    }
    let (status, _, _) = page(&anonymous, "/static/nothing.js").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}
