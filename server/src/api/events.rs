//! The events API.

use crate::server::AppState;
use axum::Router;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
}
