//! The whole application: the JSON API under `/api`, the site, `/metrics`,
//! and the layers around them.

use crate::middleware;
use crate::server::AppState;
use axum::Router;
use axum::extract::{DefaultBodyLimit, State};
use axum::http::header::CONTENT_TYPE;
use axum::response::{IntoResponse, Response};
use axum::routing::get;

/// Bodies of requests other than uploads are small.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The whole application: the JSON API under `/api` and the site.
pub fn app(state: AppState) -> Router {
    let upload_limit = state.core.max_module_bytes() + crate::upload_form::FORM_OVERHEAD;
    Router::new()
        .nest("/api", crate::api::router(upload_limit))
        .merge(crate::site::router(upload_limit))
        .route("/metrics", get(metrics))
        // Live games are answered by the front end whose hall leads.
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            crate::forward::live_requests,
        ))
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            middleware::count_request,
        ))
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(middleware::refuse_cross_site))
        .layer(axum::middleware::from_fn(middleware::refuse_large_headers))
        .layer(axum::middleware::from_fn(middleware::json_errors))
        .layer(axum::middleware::from_fn(middleware::close_after_refusing_a_body))
        .layer(axum::middleware::from_fn(middleware::no_sniffing))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            middleware::BODY_TIMEOUT,
        ))
        // Outermost: it compresses each answer as the layers above left it.
        .layer(middleware::compression())
        .with_state(state)
}

/// What `arbiter worker --metrics` serves: `GET /metrics` for `core`
/// alone (its requests counted like `serve`'s).
pub fn metrics_router(core: arbiter_ladder::core::Core) -> Router {
    let metrics = core.metrics.clone();
    Router::new()
        .route("/metrics", get(move || async move { metrics_of(&core).await }))
        .layer(axum::middleware::from_fn(
            move |request: axum::extract::Request, next: axum::middleware::Next| {
                let metrics = metrics.clone();
                async move { middleware::counted(&metrics, request, next).await }
            },
        ))
}

/// `GET /metrics`: this process's metrics in Prometheus's text format
/// (ladder.md lists them).
async fn metrics(State(state): State<AppState>) -> Response {
    metrics_of(&state.core).await
}

/// `core`'s metrics as an answer.
async fn metrics_of(core: &arbiter_ladder::core::Core) -> Response {
    let mut text = core.metrics.render(&core.db).await;
    text.push_str(&arbiter_ladder::budget::render_metrics(core));
    ([(CONTENT_TYPE, arbiter_ladder::metrics::CONTENT_TYPE)], text).into_response()
}
