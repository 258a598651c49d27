//! Where each error type lives, and how errors reach a client.
//!
//! - Bot faults are not errors: the referee records them in the match.
//! - Library crates return their own typed errors (`ReplyError`,
//!   `ModuleError`, `HostError`, …).
//! - Handlers return [`ApiError`]: client errors (4xx) say what was wrong in
//!   words; server errors (5xx) are logged with their cause and answered with
//!   a generic message, so no internals leak.
//! - Every refusal is JSON `{"ok": false, "error": "..."}` with the fitting
//!   status (ladder.md).

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// An API error: a status and, for client errors, a message a person can
/// act on.
#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 400: the request is malformed or a field is invalid.
    #[error("{0}")]
    BadRequest(String),
    /// 401: no credentials, or bad ones.
    #[error("{0}")]
    Unauthorized(String),
    /// 403: signed in, but not allowed (not your bot, bad CSRF token).
    #[error("{0}")]
    Forbidden(String),
    /// 404: no such thing.
    #[error("{0}")]
    NotFound(String),
    /// 409: conflicts with what exists (name taken, same module twice).
    #[error("{0}")]
    Conflict(String),
    /// 413: the body is over the limit.
    #[error("{0}")]
    TooLarge(String),
    /// 429: over a rate limit; answered with `Retry-After` (seconds until
    /// the limit lets a request through again).
    #[error("{message}")]
    TooManyRequests {
        /// What was limited, in words.
        message: String,
        /// Seconds until a retry can succeed (at least 1).
        retry_after_s: u64,
    },
    /// 503: storage is unavailable.
    #[error("storage unavailable")]
    Unavailable(String),
    /// 500: anything else; the cause is logged, not shown.
    #[error("internal error")]
    Internal(String),
}

impl ApiError {
    /// The HTTP status.
    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::Unauthorized(_) => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A 404 naming what was not found.
    pub fn not_found(what: impl std::fmt::Display) -> ApiError {
        ApiError::NotFound(format!("{what} not found"))
    }
}

impl From<sqlx::Error> for ApiError {
    fn from(error: sqlx::Error) -> ApiError {
        if crate::db::is_unavailable(&error) {
            ApiError::Unavailable(error.to_string())
        } else {
            ApiError::Internal(error.to_string())
        }
    }
}

impl From<std::io::Error> for ApiError {
    fn from(error: std::io::Error) -> ApiError {
        ApiError::Unavailable(error.to_string())
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        match &self {
            ApiError::Internal(cause) | ApiError::Unavailable(cause) => {
                tracing::error!(status = %self.status(), %cause, "request failed");
            }
            _ => {}
        }
        let body = serde_json::json!({ "ok": false, "error": self.to_string() });
        let mut response = (self.status(), Json(body)).into_response();
        if let ApiError::TooManyRequests { retry_after_s, .. } = self {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, retry_after_s.max(1).into());
        }
        response
    }
}

/// What handlers return.
pub type ApiResult<T> = Result<T, ApiError>;
