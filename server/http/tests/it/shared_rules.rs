//! Rules the ladder decides once, seen through the API and the site in
//! process (the router answering `oneshot` requests): both ask the same
//! ladder function, so both give the same answer.
//!
//! - `the_upload_limit_is_the_sandbox_module_limit`: the API and the site
//!   refuse a module over the core's sandbox limit with a 413 before the
//!   sandbox sees it, and the upload page states that limit.
//! - `logs_are_read_by_owners_on_the_api_and_the_site_alike`: the owner of a
//!   bot reads its stderr on both; a stranger is refused on the API and sees
//!   none on the match page, nor does a signed-out visitor.

use crate::support;
use arbiter_ladder::accounts::{self, Credentials, SignedIn};
use arbiter_ladder::auth::{SESSION_COOKIE, issue_api_token};
use arbiter_ladder::core::Core;
use arbiter_sandbox::{Sandbox, SandboxConfig};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

async fn sign_up(core: &Core, name: &str) -> SignedIn {
    let credentials = Credentials {
        name: name.to_owned(),
        password: "a-long-password".to_owned(),
    };
    accounts::sign_up(core, "192.0.2.1", &credentials, None)
        .await
        .expect("signed up")
}

/// Status and body text of `request`.
async fn answer(app: &axum::Router, request: Request<Body>) -> (StatusCode, String) {
    let response = app.clone().oneshot(request).await.expect("an answer");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 4 << 20)
        .await
        .expect("a body");
    (status, String::from_utf8_lossy(&bytes).into_owned())
}

fn json(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// A multipart upload form of a module of `size` bytes named `name` for
/// tic-tac-toe, with `csrf` if given.
fn upload_form(size: usize, csrf: Option<&str>) -> (String, Vec<u8>) {
    let boundary = "arbiter-test-boundary";
    let mut body = Vec::new();
    let mut text = |name: &str, value: &str| {
        body.extend_from_slice(
            format!("--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n").as_bytes(),
        );
    };
    text("name", "big_bot");
    text("ladders", "tictactoe");
    if let Some(csrf) = csrf {
        text("csrf", csrf);
    }
    body.extend_from_slice(
        format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"module\"; filename=\"bot.wasm\"\r\n\
             Content-Type: application/wasm\r\n\r\n"
        )
        .as_bytes(),
    );
    let mut module = b"\0asm\x01\0\0\0".to_vec();
    module.resize(size, 0);
    body.extend_from_slice(&module);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    (format!("multipart/form-data; boundary={boundary}"), body)
}

#[tokio::test]
async fn the_upload_limit_is_the_sandbox_module_limit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut core = support::open_core(&dir).await;
    // A server whose sandbox takes modules of at most 4 KiB.
    let config = SandboxConfig {
        max_module_bytes: 4096,
        max_component_bytes: 4096,
        ..core.sandbox.config().clone()
    };
    core.sandbox = Sandbox::new(config).expect("a sandbox");
    assert_eq!(core.max_module_bytes(), 4096);
    let ann = sign_up(&core, "ann").await;
    let token = issue_api_token(&core.db, ann.user_id).await.expect("a token");
    let app = support::app(core);

    // The API: 413 naming the limit, not the sandbox's 400 after reading it.
    let (content_type, body) = upload_form(5000, None);
    let request = Request::builder()
        .method(Method::POST)
        .uri("/api/bots")
        .header(header::AUTHORIZATION, format!("Bearer {token}"))
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .expect("a request");
    let (status, text) = answer(&app, request).await;
    assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{text}");
    let error = json(&text)["error"].as_str().unwrap_or_default().to_owned();
    assert!(error.contains("the limit is 4096"), "{error}");

    // The site's upload form: the same refusal, shown on the form again.
    let cookie = format!("{SESSION_COOKIE}={}", ann.secret);
    let (content_type, body) = upload_form(5000, Some(&ann.csrf));
    let request = Request::builder()
        .method(Method::POST)
        .uri("/upload")
        .header(header::COOKIE, &cookie)
        .header(header::CONTENT_TYPE, content_type)
        .body(Body::from(body))
        .expect("a request");
    let (_, page) = answer(&app, request).await;
    assert!(page.contains("the limit is 4096"), "{page}");

    // The upload page states the limit it enforces (4 KiB rounds up to 1 MiB).
    let request = Request::get("/upload")
        .header(header::COOKIE, &cookie)
        .body(Body::empty())
        .expect("a request");
    let (status, page) = answer(&app, request).await;
    assert_eq!(status, StatusCode::OK);
    assert!(page.contains("1 MiB"), "{page}");
    assert!(!page.contains("16 MiB"), "{page}");
}

#[tokio::test]
async fn logs_are_read_by_owners_on_the_api_and_the_site_alike() {
    let dir = tempfile::tempdir().expect("tempdir");
    let core = support::open_core(&dir).await;
    let ann = sign_up(&core, "ann").await;
    let bob = sign_up(&core, "bob").await;
    let eve = sign_up(&core, "eve").await;
    let bots = format!(
        "INSERT INTO bots (id, owner_id, name, name_key, created_ms) VALUES (1, {}, 'annbot', 'annbot', 0), \
         (2, {}, 'bobbot', 'bobbot', 0)",
        ann.user_id, bob.user_id
    );
    for sql in [
        bots.as_str(),
        "INSERT INTO versions (id, bot_id, number, sha256, size, status, ladders, created_ms) VALUES \
         (10, 1, 1, 'x', 1, 'active', '[]', 0), (20, 2, 1, 'y', 1, 'active', '[]', 0)",
        "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, status, created_ms, attempts, started_ms, \
           finished_ms, winner, score_a, score_b) VALUES \
         (1, 'tictactoe:standard', 10, 20, 7, 'challenge', 'finished', 100, 1, 110, 120, 0, 2, 0)",
        "INSERT INTO match_logs (match_id, participant, game, stderr) VALUES \
         (1, 0, 0, 'ann-says-hello'), (1, 1, 0, 'bob-says-hello')",
    ] {
        sqlx::query(sqlx::AssertSqlSafe(sql))
            .execute(&core.db.pool)
            .await
            .expect(sql);
    }
    let tokens = [
        issue_api_token(&core.db, ann.user_id).await.expect("a token"),
        issue_api_token(&core.db, eve.user_id).await.expect("a token"),
    ];
    let app = support::app(core);

    let api_logs = |token: &str| {
        Request::get("/api/matches/1/logs")
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .body(Body::empty())
            .expect("a request")
    };
    let (status, text) = answer(&app, api_logs(&tokens[0])).await;
    assert_eq!(status, StatusCode::OK, "{text}");
    assert_eq!(
        json(&text)["logs"],
        json!([{"participant": 0, "game": 0, "stderr": "ann-says-hello"}])
    );
    let (status, text) = answer(&app, api_logs(&tokens[1])).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{text}");
    assert_eq!(
        json(&text),
        json!({"ok": false, "error": "logs are shown only to the owners of the bots in the match"})
    );

    let page = |session: Option<&str>| {
        let mut request = Request::get("/matches/1");
        if let Some(secret) = session {
            request = request.header(header::COOKIE, format!("{SESSION_COOKIE}={secret}"));
        }
        request.body(Body::empty()).expect("a request")
    };
    let (status, owner_page) = answer(&app, page(Some(&bob.secret))).await;
    assert_eq!(status, StatusCode::OK);
    assert!(owner_page.contains("bob-says-hello"), "{owner_page}");
    assert!(!owner_page.contains("ann-says-hello"), "only the owner's own side");
    for (who, session) in [("a stranger", Some(eve.secret.as_str())), ("a visitor", None)] {
        let (status, text) = answer(&app, page(session)).await;
        assert_eq!(status, StatusCode::OK, "{who}");
        assert!(!text.contains("says-hello"), "{who} sees no logs");
        assert!(!text.contains("Your bot's stderr"), "{who}");
    }
}
