//! The API refuses what its OpenAPI document does not allow, in process
//! (the router answering `oneshot` requests): numbers outside their
//! documented bounds and words outside their enums are 400s, unknown body
//! properties and query parameters are 400s (every body schema says
//! `additionalProperties: false`), and header fields over the stated size
//! are a 431, each with the JSON error envelope.

use crate::support;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use serde_json::{Value, json};
use tower::ServiceExt;

/// The whole application on a fresh SQLite database in `dir`.
async fn app(dir: &tempfile::TempDir) -> axum::Router {
    support::app(support::open_core(dir).await)
}

/// The status and JSON body of `request`.
async fn answer(app: &axum::Router, request: Request<Body>) -> (StatusCode, Value) {
    let response = app.clone().oneshot(request).await.expect("an answer");
    let status = response.status();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 20)
        .await
        .expect("a body");
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|e| panic!("{status}: not JSON ({e}): {}", String::from_utf8_lossy(&bytes)));
    (status, body)
}

async fn get(app: &axum::Router, uri: &str) -> (StatusCode, Value) {
    answer(app, Request::get(uri).body(Body::empty()).expect("a request")).await
}

async fn post_json(app: &axum::Router, uri: &str, body: &Value) -> (StatusCode, Value) {
    let request = Request::builder()
        .method(Method::POST)
        .uri(uri)
        .header("content-type", "application/json")
        .body(Body::from(body.to_string()))
        .expect("a request");
    answer(app, request).await
}

/// A refusal with the envelope and a message containing `words`.
fn assert_refused(what: &str, (status, body): (StatusCode, Value), expected: StatusCode, words: &str) {
    assert_eq!(status, expected, "{what}: {body}");
    assert_eq!(body["ok"], json!(false), "{what}: {body}");
    let error = body["error"].as_str().unwrap_or_default();
    assert!(error.contains(words), "{what}: {error:?} does not say {words:?}");
}

#[tokio::test]
async fn numbers_outside_their_documented_bounds_are_400() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = app(&dir).await;
    let board = "/api/ladders/othello:std/leaderboard";
    for (uri, words) in [
        (format!("{board}?offset=-5"), "offset must be between 0 and"),
        (format!("{board}?offset=1000000001"), "offset must be between 0 and"),
        (format!("{board}?limit=0"), "limit must be between 1 and 500"),
        (format!("{board}?limit=501"), "limit must be between 1 and 500"),
        ("/api/matches?before=-5".into(), "before must be between 0 and"),
        ("/api/matches?limit=201".into(), "limit must be between 1 and 200"),
        ("/api/matches?limit=x".into(), "limit"),
        ("/api/events?match=0".into(), "match must be between 1 and"),
    ] {
        assert_refused(&uri, get(&app, &uri).await, StatusCode::BAD_REQUEST, words);
    }
    // A path segment that is not an id names nothing: a 404.
    for uri in [
        "/api/versions/-1",
        "/api/versions/0",
        "/api/matches/0",
        "/api/tournaments/None",
    ] {
        assert_refused(uri, get(&app, uri).await, StatusCode::NOT_FOUND, "not found");
    }
    // The bounds themselves are allowed.
    for uri in [
        format!("{board}?offset=0&limit=1"),
        format!("{board}?offset=1000000000&limit=500"),
        "/api/matches?before=0&limit=200".into(),
        "/api/matches?before=7&limit=1".into(),
    ] {
        let (status, body) = get(&app, &uri).await;
        assert_eq!(status, StatusCode::OK, "{uri}: {body}");
    }
}

#[tokio::test]
async fn words_outside_their_enum_are_400() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = app(&dir).await;
    let board = "/api/ladders/othello:std/leaderboard";
    for sort in ["", "Rating", "elo", "rating%20"] {
        let uri = format!("{board}?sort={sort}");
        assert_refused(
            &uri,
            get(&app, &uri).await,
            StatusCode::BAD_REQUEST,
            "sort must be fitted, conservative or rating",
        );
    }
    for sort in ["fitted", "rating", "conservative"] {
        let (status, body) = get(&app, &format!("{board}?sort={sort}")).await;
        assert_eq!((status, &body["sort"]), (StatusCode::OK, &json!(sort)), "{body}");
    }
    let (status, body) = get(&app, board).await;
    assert_eq!(status, StatusCode::OK, "no sort: the default order: {body}");
    for uri in ["/api/matches?status=done", "/api/matches/1/frames?game=3"] {
        let (status, body) = get(&app, uri).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{uri}: {body}");
    }
}

#[tokio::test]
async fn unknown_body_properties_and_query_parameters_are_400_as_documented() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = app(&dir).await;
    // The rule is in the document: every request body schema forbids
    // other properties.
    let document = arbiter_http::api::openapi::document();
    for name in [
        "Credentials",
        "ChallengeRequest",
        "NewTournament",
        "CsrfBody",
        "UploadForm",
    ] {
        let schema = &document["components"]["schemas"][name];
        assert_eq!(schema["additionalProperties"], json!(false), "{name}: {schema}");
    }
    let extra = json!({"name": "ann_a", "password": "a-long-password", "admin": true});
    assert_refused(
        "sign-up with an extra property",
        post_json(&app, "/api/users", &extra).await,
        StatusCode::BAD_REQUEST,
        "unknown field `admin`",
    );
    // What the site's sign-up form sends is all documented.
    let plain = json!({"name": "ann_a", "password": "a-long-password", "csrf": "t", "next": "/"});
    let (status, body) = post_json(&app, "/api/users", &plain).await;
    assert_eq!(status, StatusCode::CREATED, "without it: {body}");
    // Query parameters: what an operation does not list is refused, also
    // on operations that take none.
    for (uri, words) in [
        ("/api/tournaments?limit=-1", "unknown query parameter \"limit\""),
        (
            "/api/ladders/othello:std/leaderboard?page=2",
            "unknown query parameter \"page\"",
        ),
        (
            "/api/matches?ladder=othello:std&sort=rating",
            "unknown query parameter \"sort\"",
        ),
        ("/api/bots?x", "unknown query parameter \"x\""),
    ] {
        assert_refused(uri, get(&app, uri).await, StatusCode::BAD_REQUEST, words);
    }
    let (status, body) = get(&app, "/api/tournaments").await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn header_fields_over_the_limit_are_431() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = app(&dir).await;
    let limit = arbiter_http::middleware::MAX_HEADER_BYTES;
    let request = |size: usize, uri: &str| {
        Request::get(uri)
            .header("x-padding", "a".repeat(size))
            .body(Body::empty())
            .expect("a request")
    };
    let (status, _) = answer(&app, request(limit - 100, "/api/health")).await;
    assert_eq!(status, StatusCode::OK, "under the limit");
    let (status, body) = answer(&app, request(200 * 1024, "/api/health")).await;
    assert_eq!(status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, "{body}");
    assert_eq!(body["ok"], json!(false), "{body}");
    assert!(body["error"].as_str().is_some_and(|e| e.contains("32 KiB")), "{body}");
    // The site's pages too (not as JSON).
    let response = app.clone().oneshot(request(200 * 1024, "/")).await.expect("an answer");
    assert_eq!(response.status(), StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    // The document states the limit and lists the status.
    let document = arbiter_http::api::openapi::document();
    let description = document["info"]["description"].as_str().unwrap_or_default();
    assert!(description.contains("32 KiB"), "{description}");
    assert!(document["paths"]["/api/health"]["get"]["responses"]["431"].is_object());
}

/// A POST with a JSON body `text` from a signed-in session.
async fn post_signed_in(app: &axum::Router, session: &(String, String), uri: &str, text: &str) -> (StatusCode, Value) {
    send_signed_in(app, session, Method::POST, uri, text).await
}

/// A request with a JSON body `text` from a signed-in session.
async fn send_signed_in(
    app: &axum::Router,
    session: &(String, String),
    method: Method,
    uri: &str,
    text: &str,
) -> (StatusCode, Value) {
    let (cookie, csrf) = session;
    let request = Request::builder()
        .method(method)
        .uri(uri)
        .header("content-type", "application/json")
        .header("cookie", cookie)
        .header("x-csrf-token", csrf)
        .body(Body::from(text.to_owned()))
        .expect("a request");
    answer(app, request).await
}

#[tokio::test]
async fn bodies_are_read_as_their_schema_allows() {
    let dir = tempfile::tempdir().expect("a directory");
    let app = app(&dir).await;
    let request = Request::builder()
        .method(Method::POST)
        .uri("/api/users")
        .header("content-type", "application/json")
        .body(Body::from(
            json!({"name": "ann_b", "password": "a-long-password"}).to_string(),
        ))
        .expect("a request");
    let response = app.clone().oneshot(request).await.expect("an answer");
    assert_eq!(response.status(), StatusCode::CREATED);
    let cookie = response.headers()["set-cookie"]
        .to_str()
        .expect("a cookie")
        .split(';')
        .next()
        .unwrap_or_default()
        .to_owned();
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 16)
        .await
        .expect("a body");
    let body: Value = serde_json::from_slice(&bytes).expect("JSON");
    let session = (cookie, body["csrf"].as_str().expect("a CSRF token").to_owned());
    // An optional body may be `null` (the schema allows it): the request
    // gets as far as the bot, which does not exist.
    let (status, body) = post_signed_in(&app, &session, "/api/bots/nobody/retire", "null").await;
    assert_eq!(status, StatusCode::NOT_FOUND, "{body}");
    assert_refused(
        "an unknown property in an optional body",
        post_signed_in(&app, &session, "/api/bots/nobody/retire", r#"{"force": true}"#).await,
        StatusCode::BAD_REQUEST,
        "unknown field `force`",
    );
    // An integer is an integer however it is written, as JSON Schema says;
    // a fraction is not.
    let tournament = |per_pair: &str| {
        format!(
            r#"{{"name": "cup", "ladder": "othello:std", "bots": ["nobody", "noone"], "matches_per_pair": {per_pair}}}"#
        )
    };
    for per_pair in ["2", "2.0"] {
        let (status, body) = post_signed_in(&app, &session, "/api/tournaments", &tournament(per_pair)).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{per_pair}: {body}");
    }
    assert_refused(
        "a fraction",
        post_signed_in(&app, &session, "/api/tournaments", &tournament("2.5")).await,
        StatusCode::BAD_REQUEST,
        "2.5 is not an integer",
    );
    for concurrent in ["3", "3.0"] {
        let body = format!(r#"{{"concurrent_matches": {concurrent}}}"#);
        let (status, answer) = send_signed_in(&app, &session, Method::PUT, "/api/bots/nobody/profile", &body).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{concurrent}: {answer}");
    }
    assert_refused(
        "a fraction of a match",
        send_signed_in(
            &app,
            &session,
            Method::PUT,
            "/api/bots/nobody/profile",
            r#"{"concurrent_matches": 2.5}"#,
        )
        .await,
        StatusCode::BAD_REQUEST,
        "2.5 is not an integer",
    );
}

/// A match's `reasons` are documented as what they are: per game, the
/// finish reason and who faulted (not an untyped value).
#[tokio::test]
async fn match_reasons_are_documented_per_game() {
    let dir = tempfile::tempdir().expect("tempdir");
    let app = app(&dir).await;
    let (status, doc) = get(&app, "/api/openapi.json").await;
    assert_eq!(status, StatusCode::OK);
    let schemas = &doc["components"]["schemas"];
    let reasons = &schemas["MatchSummary"]["properties"]["reasons"];
    assert!(
        reasons.to_string().contains("#/components/schemas/GameFinish"),
        "{reasons}"
    );
    let finish = &schemas["GameFinish"];
    let mut properties: Vec<&str> = finish["properties"]
        .as_object()
        .map(|p| p.keys().map(String::as_str).collect())
        .unwrap_or_default();
    properties.sort_unstable();
    assert_eq!(
        properties,
        ["faulted_participant", "faulted_side", "game", "reason"],
        "{finish}"
    );
}
