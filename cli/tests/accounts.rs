//! Accounts against the real server: sign-up, sign-in, sign-out, API tokens,
//! and the hostile requests around them (forged cross-site posts, missing
//! CSRF tokens, password guessing, names with markup or SQL in them, bodies
//! too large or not JSON). Each test runs on every backend of
//! [`support::backends`].

mod support;

use reqwest::header::{CACHE_CONTROL, SET_COOKIE};
use serde_json::{Value, json};
use support::{Client, Method, Options, PASSWORD, StatusCode, TestServer, backends, check_envelope};

/// Sends a sign-up of `name` with `request` (a `POST /api/users`), checks
/// it is answered 201 and returns the answer and its `Set-Cookie` header.
async fn sign_up_for_cookie(request: reqwest::RequestBuilder, name: &str) -> (reqwest::Response, String) {
    let response = request
        .json(&json!({ "name": name, "password": PASSWORD }))
        .send()
        .await
        .expect("sign-up answers");
    assert_eq!(response.status(), StatusCode::CREATED);
    let cookie = response
        .headers()
        .get(SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    (response, cookie)
}

/// The error message of a refusal.
fn error(body: &Value) -> &str {
    body["error"].as_str().unwrap_or_default()
}

/// Signs `client` in as `name` with `password`.
async fn sign_in(client: &Client, name: &str, password: &str) -> (StatusCode, Value) {
    client
        .post_json("/api/sessions", &json!({ "name": name, "password": password }))
        .await
}

#[tokio::test]
async fn sign_up_sign_in_tokens_and_sign_out() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;

        // Sign up, and look at the cookie a browser gets.
        let browser = server.client();
        let (response, cookie) = sign_up_for_cookie(browser.raw(Method::POST, "/api/users"), "Ann_Lee").await;
        for part in ["arbiter_session=", "HttpOnly", "SameSite=Lax", "Path=/"] {
            assert!(cookie.contains(part), "{part} in {cookie}");
        }
        assert_eq!(
            response.headers().get(CACHE_CONTROL).map(|v| v.as_bytes()),
            Some(&b"no-store"[..])
        );
        let body: Value = response.json().await.expect("JSON");
        assert_eq!(body["user"]["name"], "Ann_Lee");
        let id = body["user"]["id"].as_i64().expect("an id");
        let csrf = body["csrf"].as_str().expect("a CSRF token").to_owned();
        let mut ann = browser;
        ann.csrf = Some(csrf.clone());

        // The session knows who it is.
        let (status, me) = ann.get("/api/me").await;
        assert_eq!(status, StatusCode::OK, "{me}");
        assert_eq!(me["user"], json!({ "id": id, "name": "Ann_Lee" }));
        assert_eq!(me["csrf"], csrf.as_str());

        // A token, shown once; the API client needs no CSRF token.
        let first = server.token(&ann).await;
        assert!(first.starts_with("arb_"), "{first}");
        let api = server.token_client(&first);
        let (status, me) = api.get("/api/me").await;
        assert_eq!(status, StatusCode::OK, "{me}");
        assert_eq!(me["user"]["id"], id);
        assert!(me.get("csrf").is_none(), "no CSRF token for token callers: {me}");

        // A token caller may reissue its own; the old one stops at once.
        let (status, body) = api.post_json("/api/tokens", &json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let second = body["token"].as_str().expect("a token").to_owned();
        assert_ne!(second, first);
        let (status, body) = api.get("/api/me").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert!(error(&body).contains("reissued"), "{body}");
        let (status, _) = server.token_client(&second).get("/api/me").await;
        assert_eq!(status, StatusCode::OK);
        // So does the session's reissue.
        let third = server.token(&ann).await;
        assert_eq!(
            server.token_client(&second).get("/api/me").await.0,
            StatusCode::UNAUTHORIZED
        );
        assert_eq!(server.token_client(&third).get("/api/me").await.0, StatusCode::OK);
        assert_eq!(server.count("api_tokens").await, 1, "one token per user");

        // Sign in elsewhere (names are case-insensitive), then sign out here.
        let laptop = server.client();
        let (status, body) = sign_in(&laptop, "ann_lee", PASSWORD).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["user"], json!({ "id": id, "name": "Ann_Lee" }));
        assert_ne!(body["csrf"], csrf.as_str(), "every session has its own CSRF token");
        let (status, body) = ann.delete("/api/sessions").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(ann.get("/api/me").await.0, StatusCode::UNAUTHORIZED, "signed out");
        assert_eq!(
            laptop.get("/api/me").await.0,
            StatusCode::OK,
            "the other session lives on"
        );
        assert_eq!(
            server.token_client(&third).get("/api/me").await.0,
            StatusCode::OK,
            "and the token"
        );

        // The public profile.
        let (status, body) = server.client().get("/api/users/ANN_LEE").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["user"]["id"], id);
        assert_eq!(body["user"]["name"], "Ann_Lee");
        assert!(
            body["user"]["created_ms"]
                .as_i64()
                .is_some_and(|ms| ms > 1_700_000_000_000),
            "{body}"
        );
        assert!(body["user"].get("password_hash").is_none());
        let (status, _) = server.client().get("/api/users/nobody").await;
        assert_eq!(status, StatusCode::NOT_FOUND);

        // Anonymous callers are told to sign in.
        let (status, body) = server.client().get("/api/me").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
        assert!(
            !server.output().contains(PASSWORD),
            "the password never reaches the log"
        );
    }
}

#[tokio::test]
async fn wrong_password_and_unknown_name_get_the_same_401() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        server.signup("bob").await;
        let client = server.client();
        let (status, wrong_password) = sign_in(&client, "bob", "not the password").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{wrong_password}");
        let (status, unknown_name) = sign_in(&client, "bobby", PASSWORD).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{unknown_name}");
        assert_eq!(wrong_password, unknown_name, "nothing tells which was wrong");
        let (status, malformed_name) = sign_in(&client, "<b>", PASSWORD).await;
        assert_eq!((status, &malformed_name), (StatusCode::UNAUTHORIZED, &unknown_name));
        assert_eq!(
            client.get("/api/me").await.0,
            StatusCode::UNAUTHORIZED,
            "no session was made"
        );
    }
}

#[tokio::test]
async fn names_are_unique_in_any_case() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        server.signup("Carol").await;
        let users = server.count("users").await;
        for name in ["Carol", "carol", "CAROL"] {
            let (status, body) = server
                .client()
                .post_json("/api/users", &json!({ "name": name, "password": "another password" }))
                .await;
            assert_eq!(status, StatusCode::CONFLICT, "{name}: {body}");
            assert!(error(&body).contains("taken"), "{body}");
        }
        assert_eq!(server.count("users").await, users);
    }
}

#[tokio::test]
async fn bad_names_and_passwords_are_refused_naming_the_rule() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        server.signup("dave").await;
        let users = server.count("users").await;
        let client = server.client();
        let bad_names = [
            "",
            "ab",
            &"x".repeat(33),
            "two words",
            "<script>alert(1)</script>",
            "<b>bold</b>",
            "\"onmouseover=alert(1)",
            "x'; DROP TABLE users;--",
            "dave' OR '1'='1",
            "émile",
            "tab\tname",
            "nul\0name",
            "../../etc",
        ];
        for name in bad_names {
            let (status, body) = client
                .post_json("/api/users", &json!({ "name": name, "password": PASSWORD }))
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{name:?}: {body}");
            assert!(error(&body).contains("3 to 32"), "the rule is named: {body}");
            assert!(!error(&body).contains('<'), "the input is not echoed: {body}");
        }
        for password in ["", "short", "1234567", &"p".repeat(257)] {
            let (status, body) = client
                .post_json("/api/users", &json!({ "name": "erin", "password": password }))
                .await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{} characters: {body}", password.len());
            assert!(error(&body).contains("8 to 256"), "the rule is named: {body}");
        }
        for wrong_shape in [
            json!({ "name": 42, "password": PASSWORD }),
            json!({ "name": "erin" }),
            json!(["erin"]),
        ] {
            let (status, body) = client.post_json("/api/users", &wrong_shape).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{wrong_shape}: {body}");
        }
        // SQL in a name reaches no query as SQL: the table and its rows are
        // intact, and a lookup by such a name is just "not found".
        assert_eq!(server.count("users").await, users);
        let (status, _) = client.get("/api/users/x'%3B%20DROP%20TABLE%20users%3B--").await;
        assert_eq!(status, StatusCode::NOT_FOUND);
        let (status, body) = sign_in(&client, "dave", PASSWORD).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // The longest and shortest good names and passwords pass.
        let longest = "Z".repeat(32);
        for (name, password) in [("eve", "8 chars!"), (longest.as_str(), &"é".repeat(256)[..])] {
            let (status, body) = server
                .client()
                .post_json("/api/users", &json!({ "name": name, "password": password }))
                .await;
            assert_eq!(status, StatusCode::CREATED, "{name}: {body}");
        }
    }
}

#[tokio::test]
async fn forged_cross_site_requests_change_nothing() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        let frank = server.signup("frank").await;
        let token = server.token(&frank).await;
        let csrf = frank.csrf.clone().expect("a CSRF token");
        // The attacker's page can make the browser send the cookie, and
        // (say it leaked) even the CSRF token: the browser still says where
        // the request came from.
        let forgeries = [
            ("Origin", "http://evil.example"),
            ("Sec-Fetch-Site", "cross-site"),
            ("Origin", "null"),
        ];
        for (header, value) in forgeries {
            let forged = frank
                .request(Method::POST, "/api/tokens")
                .header(header, value)
                .json(&json!({ "csrf": csrf }));
            let (status, body) = frank.send(forged).await;
            assert_eq!(status, StatusCode::FORBIDDEN, "{header}: {value}: {body}");
            assert!(error(&body).contains("cross-site"), "{body}");
            let forged = frank.request(Method::DELETE, "/api/sessions").header(header, value);
            assert_eq!(frank.send(forged).await.0, StatusCode::FORBIDDEN, "{header}: {value}");
            let stranger = server.client();
            let forged = stranger
                .raw(Method::POST, "/api/users")
                .header(header, value)
                .json(&json!({ "name": "mallory", "password": PASSWORD }));
            assert_eq!(
                stranger.send(forged).await.0,
                StatusCode::FORBIDDEN,
                "{header}: {value}"
            );
        }
        // Nothing changed: the token, the session and the user list.
        assert_eq!(server.token_client(&token).get("/api/me").await.0, StatusCode::OK);
        assert_eq!(frank.get("/api/me").await.0, StatusCode::OK);
        assert_eq!(server.client().get("/api/users/mallory").await.0, StatusCode::NOT_FOUND);
        // The site's own pages pass, and API clients are not browsers.
        let same_site = frank
            .request(Method::POST, "/api/tokens")
            .header("Origin", server.base_url.as_str())
            .json(&json!({}));
        assert_eq!(frank.send(same_site).await.0, StatusCode::CREATED);
        let fresh = server.token(&frank).await;
        let api = server.token_client(&fresh);
        let cross_origin = api
            .request(Method::POST, "/api/tokens")
            .header("Origin", "http://evil.example");
        assert_eq!(api.send(cross_origin).await.0, StatusCode::CREATED);
    }
}

#[tokio::test]
async fn session_requests_need_the_csrf_token() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        let grace = server.signup("grace").await;
        let csrf = grace.csrf.clone().expect("a CSRF token");
        let bare = grace.without_csrf();
        let (status, body) = bare.post_json("/api/tokens", &json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
        assert!(error(&body).contains("CSRF"), "{body}");
        let (status, _) = bare
            .send(
                bare.request(Method::POST, "/api/tokens")
                    .header("X-CSRF-Token", "0".repeat(64)),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "a wrong token");
        let (status, _) = bare.delete("/api/sessions").await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(server.count("api_tokens").await, 0, "no token was issued");
        // The JSON field works as well as the header.
        let (status, body) = bare.post_json("/api/tokens", &json!({ "csrf": csrf })).await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        // Another session's CSRF token is no good here.
        let other = server.client();
        let (_, signed_in) = sign_in(&other, "grace", PASSWORD).await;
        let stolen = signed_in["csrf"].as_str().unwrap_or_default();
        let (status, _) = bare
            .send(
                bare.request(Method::DELETE, "/api/sessions")
                    .header("X-CSRF-Token", stolen),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN);
        assert_eq!(grace.get("/api/me").await.0, StatusCode::OK, "still signed in");
    }
}

#[tokio::test]
async fn a_burst_of_failed_sign_ins_is_limited() {
    for backend in backends() {
        // Behind a proxy on this machine, so each request can come "from" an
        // address of its own (X-Forwarded-For).
        let server = Options::on(backend)
            .arg("--trusted-proxy")
            .arg("127.0.0.1")
            .start()
            .await;
        server.signup("heidi").await;
        server.signup("ivan").await;
        let client = server.client();
        let sign_in_from = |address: &'static str, name: &'static str, password: String| {
            let client = client.clone();
            async move {
                let request = client
                    .raw(Method::POST, "/api/sessions")
                    .header("X-Forwarded-For", address)
                    .json(&json!({ "name": name, "password": password }));
                let response = request.send().await.expect("an answer");
                let status = response.status();
                let retry_after = response
                    .headers()
                    .get("retry-after")
                    .and_then(|v| v.to_str().ok())
                    .and_then(|v| v.parse::<u64>().ok());
                let nosniff = response
                    .headers()
                    .get("x-content-type-options")
                    .is_some_and(|v| v == "nosniff");
                let body: Value = response.json().await.expect("JSON");
                (status, body, retry_after, nosniff)
            }
        };
        let mut statuses = Vec::new();
        for n in 0..20 {
            let (status, body, retry_after, nosniff) =
                sign_in_from("203.0.113.7", "heidi", format!("guess number {n}")).await;
            assert!(matches!(status.as_u16(), 401 | 429), "{status}: {body}");
            assert!(nosniff, "every JSON answer says nosniff");
            if status == StatusCode::TOO_MANY_REQUESTS {
                assert!(error(&body).contains("too many"), "{body}");
                let wait = retry_after.expect("a 429 says when to retry");
                assert!((1..=60).contains(&wait), "Retry-After {wait}");
            }
            statuses.push(status.as_u16());
        }
        assert_eq!(statuses[..10], [401; 10], "{statuses:?}");
        assert_eq!(statuses[10..], [429; 10], "{statuses:?}");
        // The guesser's address is locked out of the name for now, even
        // with the right password...
        let (status, ..) = sign_in_from("203.0.113.7", "HEIDI", PASSWORD.to_owned()).await;
        assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
        // ...but the owner, signing in from elsewhere, is not: a stranger
        // cannot lock an account out (it used to be locked for everyone).
        let (status, body, ..) = sign_in_from("198.51.100.20", "heidi", PASSWORD.to_owned()).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        // Other names are not limited, and right sign-ins do not count.
        for _ in 0..3 {
            assert_eq!(sign_in(&server.client(), "ivan", PASSWORD).await.0, StatusCode::OK);
        }
    }
}

#[tokio::test]
async fn bodies_that_are_not_good_json_get_json_errors() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        let client = server.client();
        let judy = server.signup("judy").await;

        // Over the 64 KiB limit: 413 before any work is done.
        let huge = json!({ "name": "judy2", "password": "x".repeat(70 * 1024) });
        let (status, body) = client.post_json("/api/users", &huge).await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{body}");
        let (status, _) = judy
            .send(judy.request(Method::POST, "/api/tokens").body("x".repeat(70 * 1024)))
            .await;
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE);

        // Not JSON, not an object, or not said to be JSON.
        for text in ["{\"name\": \"judy2\", ", "not json", "", "null", "[1, 2]"] {
            let request = client
                .raw(Method::POST, "/api/users")
                .header("Content-Type", "application/json")
                .body(text);
            let (status, body) = client.send(request).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{text:?}: {body}");
        }
        let request = client
            .raw(Method::POST, "/api/sessions")
            .body(json!({ "name": "judy", "password": PASSWORD }).to_string());
        let (status, body) = client.send(request).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "no Content-Type: {body}");
        assert!(error(&body).contains("Content-Type"), "{body}");
        let (status, body) = judy.send(judy.request(Method::POST, "/api/tokens").body("{oops")).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");

        // Unknown endpoints, wrong methods, bad credentials: JSON too.
        for (method, path, expected) in [
            (Method::GET, "/api/no/such/endpoint", StatusCode::NOT_FOUND),
            (Method::POST, "/api/nothing-here", StatusCode::NOT_FOUND),
            (Method::GET, "/api/sessions", StatusCode::METHOD_NOT_ALLOWED),
            (Method::PUT, "/api/users", StatusCode::METHOD_NOT_ALLOWED),
            (Method::GET, "/api/me", StatusCode::UNAUTHORIZED),
        ] {
            let (status, body) = client.send(client.raw(method.clone(), path)).await;
            assert_eq!(status, expected, "{method} {path}: {body}");
        }
        for authorization in ["Basic anVkeTpwdw==", "Bearer", "Bearer arb_0000", "Token abc"] {
            let request = client
                .raw(Method::GET, "/api/me")
                .header("Authorization", authorization);
            let (status, body) = client.send(request).await;
            assert_eq!(status, StatusCode::UNAUTHORIZED, "{authorization}: {body}");
        }
        // A bad token is refused even next to a good session cookie.
        let (status, _) = judy.with_token("arb_forged").get("/api/me").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        // A token caller has no session to end.
        let token = server.token(&judy).await;
        let (status, body) = server.token_client(&token).delete("/api/sessions").await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    }
}

#[test]
fn the_envelope_check_catches_bare_errors() {
    let caught = std::panic::catch_unwind(|| check_envelope("GET /x", StatusCode::NOT_FOUND, &json!({ "error": "x" })));
    assert!(caught.is_err(), "an error without \"ok\": false is caught");
    check_envelope(
        "GET /x",
        StatusCode::NOT_FOUND,
        &json!({ "ok": false, "error": "no such thing" }),
    );
}

#[test]
fn postgres_urls_get_a_database_of_their_own() {
    use support::with_database;
    assert_eq!(with_database("postgres://u@h:1/postgres", "t"), "postgres://u@h:1/t");
    assert_eq!(with_database("postgres://u@h:1", "t"), "postgres://u@h:1/t");
    assert_eq!(
        with_database("postgres://u@h/x?sslmode=disable", "t"),
        "postgres://u@h/t?sslmode=disable"
    );
}

/// Signs up `name` with `X-Forwarded-For: forwarded`; the status.
async fn sign_up_via(server: &TestServer, name: &str, forwarded: &str) -> StatusCode {
    support::http()
        .post(server.url("/api/users"))
        .header("x-forwarded-for", forwarded)
        .json(&json!({ "name": name, "password": PASSWORD }))
        .send()
        .await
        .expect("the server answers")
        .status()
}

/// Sign-ups are limited per client address. Behind a trusted proxy that
/// address is the one the proxy forwards, so two clients have a limit each;
/// from anyone else `X-Forwarded-For` is ignored, so a made-up one does not
/// get around the limit.
#[tokio::test]
async fn sign_up_limits_follow_the_forwarded_address_only_from_trusted_proxies() {
    let limit = arbiter_ladder::accounts::SIGNUPS_PER_IP_PER_HOUR;
    let proxied = Options::default().arg("--trusted-proxy").arg("127.0.0.1").start().await;
    for n in 0..limit {
        let status = sign_up_via(&proxied, &format!("first{n}"), "198.51.100.1").await;
        assert_eq!(status, StatusCode::CREATED, "sign-up {n}");
    }
    let over = sign_up_via(&proxied, "firstover", "198.51.100.1").await;
    assert_eq!(over, StatusCode::TOO_MANY_REQUESTS);
    // The client cannot pick its address: the proxy appends the real one.
    let spoofed = sign_up_via(&proxied, "spoofer", "203.0.113.5, 198.51.100.1").await;
    assert_eq!(spoofed, StatusCode::TOO_MANY_REQUESTS);
    let other = sign_up_via(&proxied, "second", "198.51.100.2").await;
    assert_eq!(other, StatusCode::CREATED, "another client has its own limit");

    let direct = TestServer::start().await;
    for n in 0..limit {
        let status = sign_up_via(&direct, &format!("direct{n}"), &format!("198.51.100.{n}")).await;
        assert_eq!(status, StatusCode::CREATED, "sign-up {n}");
    }
    let over = sign_up_via(&direct, "directover", "192.0.2.77").await;
    assert_eq!(
        over,
        StatusCode::TOO_MANY_REQUESTS,
        "X-Forwarded-For from an untrusted peer"
    );
}

#[tokio::test]
async fn secure_cookies_are_marked_secure() {
    let server = Options::default().arg("--secure-cookies").start().await;
    let (_, cookie) = sign_up_for_cookie(support::http().post(server.url("/api/users")), "grace").await;
    assert!(cookie.contains("HttpOnly") && cookie.ends_with("; Secure"), "{cookie}");
}
