//! Accounts: sign-up, sign-in, sign-out, API tokens.

use crate::server::AppState;
use axum::Router;
use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
}

/// Refuses state-changing requests that a browser marks as cross-site.
pub async fn refuse_cross_site(request: Request, next: Next) -> Response {
    next.run(request).await
}
