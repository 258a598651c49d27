//! Account and bot management through the JSON API, in process (issue 42,
//! item 5): `PUT /api/me/password` and `DELETE /api/me` are in the OpenAPI
//! document with closed bodies, refuse bad input with 4xx JSON (never a
//! 500), revoke what they say; `POST /api/bots/{name}/unretire` answers
//! 409 for a bot that is not retired; the site's `?saved=` confirmation is
//! a fixed text, never the query's.

use crate::support;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::{Value, json};
use tower::ServiceExt;

/// Status, `Set-Cookie` and JSON body of a request.
async fn send(
    app: &axum::Router,
    method: Method,
    uri: &str,
    auth: &[(&str, &str)],
    body: Option<&str>,
) -> (StatusCode, Option<String>, Value) {
    let mut request = Request::builder().method(method).uri(uri);
    for (name, value) in auth {
        request = request.header(*name, *value);
    }
    if body.is_some() {
        request = request.header(header::CONTENT_TYPE, "application/json");
    }
    let request = request
        .body(body.map_or_else(Body::empty, |b| Body::from(b.to_owned())))
        .expect("a request");
    let response = app.clone().oneshot(request).await.expect("an answer");
    let status = response.status();
    let cookie = response
        .headers()
        .get(header::SET_COOKIE)
        .and_then(|v| v.to_str().ok())
        .map(|v| v.split(';').next().unwrap_or_default().to_owned());
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .expect("a body");
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let json = if uri.starts_with("/api/") {
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{uri} answered {status}, not JSON ({e}): {text}"))
    } else {
        Value::String(text)
    };
    (status, cookie, json)
}

/// Signs `name` up; the session's cookie pair and CSRF token.
async fn sign_up(app: &axum::Router, name: &str, password: &str) -> (String, String) {
    let body = json!({"name": name, "password": password}).to_string();
    let (status, cookie, json) = send(app, Method::POST, "/api/users", &[], Some(&body)).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    (
        cookie.expect("a session cookie"),
        json["csrf"].as_str().expect("csrf").to_owned(),
    )
}

#[tokio::test]
async fn password_change_and_deletion_through_the_api() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = support::app(support::open_core(&dir).await);
    let document = arbiter_http::api::openapi::document();
    assert!(document["paths"]["/api/me/password"]["put"].is_object(), "documented");
    assert!(document["paths"]["/api/me"]["delete"].is_object(), "documented");
    assert!(
        document["paths"]["/api/bots/{name}/unretire"]["post"].is_object(),
        "documented"
    );
    for name in ["PasswordBody", "DeleteAccountBody"] {
        let schema = &document["components"]["schemas"][name];
        assert_eq!(schema["additionalProperties"], json!(false), "{name}: {schema}");
    }

    let (cookie, csrf) = sign_up(&app, "ann_api", "the first password").await;
    let session = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    // Bad input: 4xx with the envelope, never a 500.
    for (body, expected) in [
        ("", StatusCode::BAD_REQUEST),
        ("[]", StatusCode::BAD_REQUEST),
        (
            r#"{"current_password": 5, "new_password": "x"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (r#"{"current_password": "the first password"}"#, StatusCode::BAD_REQUEST),
        (
            r#"{"current_password": "the first password", "new_password": "long enough", "admin": true}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            r#"{"current_password": "the first password", "new_password": "short"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (
            r#"{"current_password": "wrong password", "new_password": "long enough"}"#,
            StatusCode::FORBIDDEN,
        ),
    ] {
        let (status, _, json) = send(&app, Method::PUT, "/api/me/password", &session, Some(body)).await;
        assert_eq!(status, expected, "{body}: {json}");
        assert_eq!(json["ok"], json!(false), "{body}: {json}");
    }
    // No CSRF token: 403; no session: 401.
    let change = r#"{"current_password": "the first password", "new_password": "the second password"}"#;
    let (status, _, _) = send(&app, Method::PUT, "/api/me/password", &session[..1], Some(change)).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _, _) = send(&app, Method::PUT, "/api/me/password", &[], Some(change)).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);

    // With a session: a new session comes back, the old one is gone.
    let (status, renewed, json) = send(&app, Method::PUT, "/api/me/password", &session, Some(change)).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    let renewed = renewed.expect("a new session cookie");
    let new_csrf = json["csrf"].as_str().expect("the new session's csrf").to_owned();
    let (status, _, _) = send(&app, Method::GET, "/api/me", &session[..1], None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the old session is revoked");
    let fresh = [("cookie", renewed.as_str()), ("x-csrf-token", new_csrf.as_str())];
    let (status, _, json) = send(&app, Method::POST, "/api/tokens", &fresh, None).await;
    assert_eq!(status, StatusCode::CREATED, "{json}");
    let token = format!("Bearer {}", json["token"].as_str().expect("a token"));
    let bearer = [("authorization", token.as_str())];

    // With the API token: no session, and the token itself is revoked.
    let change = r#"{"current_password": "the second password", "new_password": "the third password"}"#;
    let (status, set, json) = send(&app, Method::PUT, "/api/me/password", &bearer, Some(change)).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert!(set.is_none() && json.get("csrf").is_none(), "{json}");
    let (status, _, _) = send(&app, Method::GET, "/api/me", &bearer, None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the token is revoked");

    // Deletion: refusals, then the account goes.
    let (cookie, csrf) = sign_up(&app, "bob_api", "bob's own password").await;
    let session = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    for (body, expected) in [
        ("{}", StatusCode::BAD_REQUEST),
        (
            r#"{"password": "bob's own password", "confirm": "ann_api"}"#,
            StatusCode::BAD_REQUEST,
        ),
        (r#"{"password": "not it", "confirm": "bob_api"}"#, StatusCode::FORBIDDEN),
        (
            r#"{"password": "bob's own password", "confirm": "bob_api", "x": 1}"#,
            StatusCode::BAD_REQUEST,
        ),
    ] {
        let (status, _, json) = send(&app, Method::DELETE, "/api/me", &session, Some(body)).await;
        assert_eq!(status, expected, "{body}: {json}");
        assert_eq!(json["ok"], json!(false));
    }
    let (status, _, json) = send(&app, Method::GET, "/api/users/bob_api", &[], None).await;
    assert_eq!(status, StatusCode::OK, "refusals delete nothing: {json}");
    let body = r#"{"password": "bob's own password", "confirm": "BOB_API"}"#;
    let (status, cleared, json) = send(&app, Method::DELETE, "/api/me", &session, Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{json}");
    assert_eq!(
        (json["bots_retired"].clone(), json["people_games_anonymised"].clone()),
        (json!(0), json!(0))
    );
    assert!(cleared.is_some_and(|c| c.ends_with('=')), "the cookie is cleared");
    let (status, _, _) = send(&app, Method::GET, "/api/users/bob_api", &[], None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _, _) = send(&app, Method::GET, "/api/me", &session[..1], None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn unretire_refusals_and_the_saved_confirmation() {
    let dir = tempfile::tempdir().expect("a directory");
    let core = support::open_core(&dir).await;
    arbiter_ladder::house::seed(&core).await.expect("the house bots");
    let app = support::app(core);
    let (cookie, csrf) = sign_up(&app, "cid_api", "cid's password here").await;
    let session = [("cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (status, _, json) = send(&app, Method::POST, "/api/bots/othello-random/unretire", &session, None).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{json}");
    let (status, _, json) = send(&app, Method::POST, "/api/bots/nobody/unretire", &session, Some("{}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{json}");
    let (status, _, json) = send(
        &app,
        Method::POST,
        "/api/bots/nobody/unretire",
        &session,
        Some(r#"{"x": 1}"#),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{json}");

    // The confirmation is one of the fixed texts, announced; anything else
    // in `saved` shows nothing.
    let (status, _, page) = send(&app, Method::GET, "/account?saved=password", &session[..1], None).await;
    assert_eq!(status, StatusCode::OK);
    let page = page.as_str().unwrap_or_default().to_owned();
    assert!(
        page.contains(r#"<p class="saved-box" role="status" id="saved">Saved: your password is changed"#),
        "{page}"
    );
    let (_, _, page) = send(&app, Method::GET, "/account?saved=%3Cb%3Ehi", &session[..1], None).await;
    assert!(!page.as_str().unwrap_or_default().contains("saved-box"));
}
