//! The JSON API under `/api`, described by `/api/openapi.json`.
//!
//! One module per resource: accounts (users, sessions, tokens), bots and
//! versions, ladders and leaderboards, matches and replays, challenges,
//! tournaments, live events.

pub mod accounts;
pub mod bots;
pub mod challenges;
pub mod events;
pub mod health;
pub mod ladders;
pub mod matches;
pub mod openapi;
pub mod tournaments;

use crate::error::ApiError;
use crate::server::AppState;
use arbiter_ladder::error::Error;
use axum::Router;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, TRANSFER_ENCODING, X_CONTENT_TYPE_OPTIONS};
use axum::http::{HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// Bodies of requests other than uploads are small.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The whole application: the JSON API under `/api` and the site.
pub fn router(state: AppState) -> Router {
    let upload_limit = state.config.max_upload_bytes + crate::upload_form::FORM_OVERHEAD;
    let api = Router::new()
        .merge(accounts::router())
        .merge(bots::router().layer(DefaultBodyLimit::max(upload_limit)))
        .merge(ladders::router())
        .merge(matches::router())
        .merge(challenges::router())
        .merge(tournaments::router())
        .merge(events::router())
        .merge(openapi::router())
        .merge(health::router())
        .fallback(|| async { ApiError(Error::NotFound("no such API endpoint".into())) });
    Router::new()
        .nest("/api", api)
        .merge(crate::site::router(upload_limit))
        .route("/metrics", get(metrics))
        .layer(axum::middleware::from_fn_with_state(state.clone(), count_request))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(accounts::refuse_cross_site))
        .layer(axum::middleware::from_fn(accounts::json_errors))
        .layer(axum::middleware::from_fn(close_after_refusing_a_body))
        .layer(axum::middleware::from_fn(no_sniffing))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(BODY_TIMEOUT))
        .with_state(state)
}

/// How long a request's body may stall (no new bytes) before the request
/// fails: a client cannot hold a connection open by never finishing a body.
/// (Headers have [`crate::server::HEADER_READ_TIMEOUT`] in all.)
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// Every answer, JSON included, is to be read as the type it says it is.
async fn no_sniffing(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// Answers a refused request that came with a body with `Connection: close`.
///
/// A refusal may come before the body is read (a cross-site post, an
/// upload announced as too large, a rate limit): the server then drops the
/// connection rather than read an unwanted body, and a client that sent the
/// next request on the same connection would see it fail instead of getting
/// an answer. With the header the client opens a new connection.
async fn close_after_refusing_a_body(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let has_body = headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|length| length > 0);
    let mut response = next.run(request).await;
    if has_body && (response.status().is_client_error() || response.status().is_server_error()) {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// What `arbiter worker --metrics` serves: `GET /metrics` for `core`
/// alone.
pub fn metrics_router(core: arbiter_ladder::core::Core) -> Router {
    Router::new().route("/metrics", get(move || async move { metrics_of(&core).await }))
}

/// `GET /metrics`: this process's metrics in Prometheus's text format
/// (ladder.md lists them).
async fn metrics(State(state): State<AppState>) -> Response {
    metrics_of(&state.core).await
}

/// `core`'s metrics as an answer.
async fn metrics_of(core: &arbiter_ladder::core::Core) -> Response {
    let text = core.metrics.render(&core.db).await;
    ([(CONTENT_TYPE, arbiter_ladder::metrics::CONTENT_TYPE)], text).into_response()
}

/// Counts every request by method, route pattern and status, and times it.
async fn count_request(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let started = std::time::Instant::now();
    // Any token is a method: only the standard ones get a series each.
    let method = match *request.method() {
        Method::GET | Method::HEAD | Method::POST | Method::PUT | Method::DELETE | Method::PATCH | Method::OPTIONS => {
            request.method().as_str().to_owned()
        }
        _ => "other".to_owned(),
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let response = next.run(request).await;
    state
        .core
        .metrics
        .http_request(&method, &route, response.status().as_u16(), started.elapsed());
    response
}
