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
use axum::extract::DefaultBodyLimit;

/// The JSON API's routes, to be nested under `/api` (see
/// [`crate::router::app`]); an unknown path answers a JSON 404.
pub fn router(upload_limit: usize) -> Router<AppState> {
    Router::new()
        .merge(accounts::router())
        .merge(bots::router().layer(DefaultBodyLimit::max(upload_limit)))
        .merge(ladders::router())
        .merge(matches::router())
        .merge(challenges::router())
        .merge(tournaments::router())
        .merge(events::router())
        .merge(openapi::router())
        .merge(health::router())
        .fallback(|| async { ApiError(Error::NotFound("no such API endpoint".into())) })
}
