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

/// A browser without JavaScript: forms post to the site itself, with a
/// hidden CSRF field, and answer 303 to the page of the result. (Every
/// form used to be script-only: without scripts the sign-in form was sent
/// as a GET with the password in the URL.)
#[tokio::test]
async fn every_form_works_without_javascript() {
    let server = TestServer::start().await;
    let browser = NoScript::new(&server.url(""));

    // Sign up: the page sets the form token's cookie and carries it.
    let (status, signup) = browser.get("/signup").await;
    assert_eq!(status, StatusCode::OK);
    assert!(signup.contains(r#"method="post" action="/signup""#), "{signup}");
    let token = hidden(&signup, "csrf");
    assert!(!token.is_empty(), "the sign-up form carries its token");

    // Without the token: refused, nothing created.
    let (status, _, page) = browser
        .post("/signup", &[("name", "nojs"), ("password", "long enough")])
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("expired"), "{page}");
    // A bad password: the form again, with the reason and the name kept.
    let (status, _, page) = browser
        .post("/signup", &[("name", "nojs"), ("password", "short"), ("csrf", &token)])
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains("a password is 8 to 256 characters long"), "{page}");
    assert!(page.contains(r#"value="nojs""#), "the name is kept: {page}");
    let (status, location, page) = browser
        .post(
            "/signup",
            &[
                ("name", "nojs"),
                ("password", "long enough"),
                ("csrf", &token),
                ("next", "/upload"),
            ],
        )
        .await;
    assert_eq!(
        (status, location.as_str()),
        (StatusCode::SEE_OTHER, "/upload"),
        "{page}"
    );

    // Signed in: the upload form carries the session's CSRF token.
    let (status, upload) = browser.get("/upload").await;
    assert_eq!(status, StatusCode::OK);
    let csrf = hidden(&upload, "csrf");
    let form = Form::new()
        .text("csrf", csrf.clone())
        .text("name", "nojs_bot")
        .text("ladders", "tictactoe")
        .part(
            "module",
            Part::bytes(support::house("tictactoe-random").to_vec()).file_name("bot.wasm"),
        );
    let (status, location, page) = browser
        .send(browser.http.post(browser.url("/upload")).multipart(form))
        .await;
    assert_eq!(
        (status, location.as_str()),
        (StatusCode::SEE_OTHER, "/bots/nojs_bot"),
        "{page}"
    );
    let (status, bot) = browser.get("/bots/nojs_bot").await;
    assert_eq!(status, StatusCode::OK);
    assert!(bot.contains("nojs_bot"));
    // An upload without the token stores nothing.
    let form = Form::new()
        .text("name", "nojs_other")
        .text("ladders", "tictactoe")
        .part(
            "module",
            Part::bytes(support::house("tictactoe-random").to_vec()).file_name("bot.wasm"),
        );
    let (status, _, page) = browser
        .send(browser.http.post(browser.url("/upload")).multipart(form))
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(
        page.contains(r#"href="/upload""#),
        "the error page leads back to the form: {page}"
    );
    assert_eq!(browser.get("/bots/nojs_other").await.0, StatusCode::NOT_FOUND);
    // An upload with no ladder ticked: the form again, with the message and
    // the name kept.
    let form = Form::new().text("csrf", csrf.clone()).text("name", "nojs_again").part(
        "module",
        Part::bytes(support::house("tictactoe-random").to_vec()).file_name("bot.wasm"),
    );
    let (status, _, page) = browser
        .send(browser.http.post(browser.url("/upload")).multipart(form))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{page}");
    assert!(page.contains(r#"id="upload-form""#), "the form again: {page}");
    assert!(page.contains("The upload was refused"), "{page}");
    assert!(page.contains(r#"value="nojs_again""#), "the name is kept: {page}");
    // A new version of one's bot starts with its ladders ticked.
    let (_, upload) = browser.get("/upload?bot=nojs_bot").await;
    assert!(
        upload.contains(r#"name="ladders" value="tictactoe:standard" checked"#),
        "{upload}"
    );

    // A challenge that cannot be played says why, with a way back.
    let (status, _, page) = browser
        .post(
            "/challenge",
            &[
                ("csrf", &csrf),
                ("bot", "othello-greedy"),
                ("opponent", "othello-random"),
                ("ladder", "othello:std"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{page}");
    assert!(page.contains("othello-greedy is not your bot"), "{page}");
    assert!(page.contains(r#"href="/challenge""#), "{page}");

    // A tournament: 303 to its page.
    let (status, location, page) = browser
        .post(
            "/tournaments",
            &[
                ("csrf", &csrf),
                ("name", "no script cup"),
                ("ladder", "othello:std"),
                ("bots", "othello-greedy, othello-random"),
                ("matches_per_pair", "2"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{page}");
    assert!(location.starts_with("/tournaments/"), "{location}");
    let (status, cup) = browser.get(&location).await;
    assert_eq!(status, StatusCode::OK);
    assert!(cup.contains("no script cup"));

    // An API token: POST-redirect-GET to the account page, which shows it
    // once; it works, and a reload neither shows it again nor issues another.
    let (status, location, page) = browser.post("/account/token", &[("csrf", &csrf)]).await;
    assert_eq!(
        (status, location.as_str()),
        (StatusCode::SEE_OTHER, "/account"),
        "{page}"
    );
    assert!(!page.contains("arb_"), "the token is not in the redirect: {page}");
    let (status, page) = browser.get("/account").await;
    assert_eq!(status, StatusCode::OK);
    let api_token = hidden_by_id(&page, "token-output");
    assert!(api_token.starts_with("arb_"), "{page}");
    let (_, again) = browser.get("/account").await;
    assert!(!again.contains(&api_token), "shown once: {again}");
    assert!(again.contains(r#"id="token-box" hidden"#), "{again}");
    let api = server.token_client(&api_token);
    let (status, me) = api.get("/api/me").await;
    assert_eq!(
        (status, me["user"]["name"].as_str()),
        (StatusCode::OK, Some("nojs")),
        "{me}"
    );

    // Signed in, error pages show the signed-in header.
    for path in [
        "/matches/999999",
        "/bots/no-such-bot",
        "/ladders/no-such-ladder",
        "/no/such/page",
    ] {
        let (status, page) = browser.get(path).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{path}");
        assert!(page.contains(r#"data-user="nojs""#), "{path}: {page}");
    }

    // Sign out, then sign in again (a wrong password first).
    let (status, location, _) = browser.post("/signout", &[("csrf", &csrf)]).await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/"));
    let (status, location, _) = browser.send(browser.http.get(browser.url("/account"))).await;
    assert!(
        status.is_redirection() && location.starts_with("/signin"),
        "{status} {location}"
    );
    let (_, signin) = browser.get("/signin?next=/account").await;
    let token = hidden(&signin, "csrf");
    let (status, _, page) = browser
        .post(
            "/signin",
            &[
                ("name", "nojs"),
                ("password", "wrong one!"),
                ("csrf", &token),
                ("next", "/account"),
            ],
        )
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{page}");
    assert!(page.contains("wrong name or password"), "{page}");
    let (status, location, _) = browser
        .post(
            "/signin",
            &[
                ("name", "nojs"),
                ("password", "long enough"),
                ("csrf", &token),
                ("next", "/account"),
            ],
        )
        .await;
    assert_eq!((status, location.as_str()), (StatusCode::SEE_OTHER, "/account"));
    let (status, account) = browser.get("/account").await;
    assert_eq!(status, StatusCode::OK);
    assert!(account.contains("nojs_bot"), "{account}");

    // Another site cannot post the sign-in form.
    let request = browser
        .http
        .post(browser.url("/signin"))
        .header("Origin", "http://evil.example")
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(urlencode(&[
            ("name", "nojs"),
            ("password", "long enough"),
            ("csrf", &token),
        ]));
    let (status, _, _) = browser.send(request).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// A browser with cookies that does not follow redirects or run scripts.
struct NoScript {
    http: reqwest::Client,
    base: String,
}

impl NoScript {
    fn new(base: &str) -> NoScript {
        arbiter_ladder::install_tls_provider();
        let http = reqwest::Client::builder()
            .cookie_store(true)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .build()
            .expect("a client");
        NoScript {
            http,
            base: base.trim_end_matches('/').to_owned(),
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Status, `Location` and body.
    async fn send(&self, request: reqwest::RequestBuilder) -> (StatusCode, String, String) {
        let response = request.send().await.expect("an answer");
        let status = response.status();
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_owned();
        (status, location, response.text().await.expect("a body"))
    }

    async fn get(&self, path: &str) -> (StatusCode, String) {
        let (status, _, body) = self.send(self.http.get(self.url(path))).await;
        (status, body)
    }

    /// Posts a form as a browser does (same-origin: no `Origin` check fails).
    async fn post(&self, path: &str, fields: &[(&str, &str)]) -> (StatusCode, String, String) {
        let request = self
            .http
            .post(self.url(path))
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(urlencode(fields));
        self.send(request).await
    }
}

fn urlencode(fields: &[(&str, &str)]) -> String {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
                b' ' => "+".to_owned(),
                other => format!("%{other:02X}"),
            })
            .collect()
    };
    fields
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// The value of the first hidden input called `name` in `html`.
fn hidden(html: &str, name: &str) -> String {
    let marker = format!(r#"type="hidden" name="{name}" value=""#);
    let start = html.find(&marker).map(|i| i + marker.len()).expect("the hidden field");
    html[start..].split('"').next().unwrap_or_default().to_owned()
}

/// The `value` of the element with `id`.
fn hidden_by_id(html: &str, id: &str) -> String {
    let start = html.find(&format!(r#"id="{id}""#)).expect("the element");
    let rest = &html[start..];
    let value = rest.find(r#"value=""#).map(|i| i + 7).expect("a value");
    rest[value..].split('"').next().unwrap_or_default().to_owned()
}
