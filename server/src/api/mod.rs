//! The JSON API under `/api`, described by `/api/openapi.json`.
//!
//! One module per resource: accounts (users, sessions, tokens), bots and
//! versions, ladders and leaderboards, matches and replays, challenges,
//! tournaments, live events.

pub mod accounts;
pub mod bots;
pub mod challenges;
pub mod events;
pub mod ladders;
pub mod matches;
pub mod openapi;
pub mod tournaments;

use crate::error::ApiError;
use crate::server::AppState;
use axum::Router;
use axum::extract::DefaultBodyLimit;

/// Bodies of requests other than uploads are small.
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// The whole application: the JSON API under `/api` and the site.
pub fn router(state: AppState) -> Router {
    let upload_limit = state.config.max_upload_bytes + bots::FORM_OVERHEAD;
    let api = Router::new()
        .merge(accounts::router())
        .merge(bots::router().layer(DefaultBodyLimit::max(upload_limit)))
        .merge(ladders::router())
        .merge(matches::router())
        .merge(challenges::router())
        .merge(tournaments::router())
        .merge(events::router())
        .merge(openapi::router())
        .fallback(|| async { ApiError::NotFound("no such API endpoint".into()) });
    Router::new()
        .nest("/api", api)
        .merge(crate::site::router())
        .layer(DefaultBodyLimit::max(MAX_BODY_BYTES))
        .layer(axum::middleware::from_fn(accounts::refuse_cross_site))
        .layer(axum::middleware::from_fn(accounts::json_errors))
        .with_state(state)
}
