//! How a ladder [`Error`] reaches a client: every refusal is JSON
//! `{"ok": false, "error": "..."}` with the fitting status (ladder.md);
//! failures of storage or of the host are logged with their cause and
//! answered with a generic message, so no internals leak.

use arbiter_ladder::error::Error;
use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};

/// A ladder [`Error`] as an HTTP answer. Its `Display` is what the client
/// reads ([`Error::public_message`]): a failure's cause goes to the log
/// only.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.public_message())]
pub struct ApiError(pub Error);

impl ApiError {
    /// The HTTP status of the error's kind.
    pub fn status(&self) -> StatusCode {
        match &self.0 {
            Error::Invalid(_) => StatusCode::BAD_REQUEST,
            Error::Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            Error::Forbidden(_) => StatusCode::FORBIDDEN,
            Error::NotFound(_) => StatusCode::NOT_FOUND,
            Error::Conflict(_) => StatusCode::CONFLICT,
            Error::TooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            Error::Busy { .. } | Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            Error::Internal(_) | Error::Host(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    /// A 404 naming what was not found.
    pub fn not_found(what: impl std::fmt::Display) -> ApiError {
        ApiError(Error::not_found(what))
    }
}

impl From<Error> for ApiError {
    fn from(error: Error) -> ApiError {
        ApiError(error)
    }
}

impl From<std::io::Error> for ApiError {
    fn from(error: std::io::Error) -> ApiError {
        ApiError(error.into())
    }
}

/// Why a request was answered 503, carried in the answer's extensions for
/// [`crate::middleware::count_request`], which logs it once per outage
/// rather than once per request.
#[derive(Clone, Debug)]
pub struct UnavailableCause(pub String);

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        if let Error::Internal(cause) | Error::Host(cause) = &self.0 {
            tracing::error!(status = %self.status(), %cause, "request failed");
        }
        let body = crate::api::Refusal::new(self.0.public_message());
        let mut response = (self.status(), Json(body)).into_response();
        if let Error::Unavailable(cause) = &self.0 {
            response.extensions_mut().insert(UnavailableCause(cause.to_string()));
        }
        if let Error::RateLimited { retry_after_s, .. } | Error::Busy { retry_after_s, .. } = self.0 {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, retry_after_s.max(1).into());
        }
        response
    }
}

/// What handlers return.
pub type ApiResult<T> = Result<T, ApiError>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A host failure answers like any internal failure: 500, and none of
    /// its cause in what the client reads.
    #[test]
    fn a_host_failure_answers_500_without_its_cause() {
        let error = ApiError(Error::Host("cannot start the WebAssembly sandbox: no memory".into()));
        assert_eq!(error.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(error.to_string(), "internal error");
        assert_eq!(error.into_response().status(), StatusCode::INTERNAL_SERVER_ERROR);
    }

    /// A busy server answers 503 with when to try again, in the client's
    /// own words (not the storage outage's generic message).
    #[test]
    fn busy_answers_503_with_retry_after() {
        let error = ApiError(Error::Busy {
            message: "decoding as many photos as it can".into(),
            retry_after_s: 2,
        });
        assert_eq!(error.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(error.to_string(), "decoding as many photos as it can");
        let response = error.into_response();
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(response.headers()[axum::http::header::RETRY_AFTER], "2");
        assert!(response.extensions().get::<UnavailableCause>().is_none());
    }

    /// A refusal reaches the client in its own words.
    #[test]
    fn a_refusal_answers_in_its_own_words() {
        let error = ApiError::not_found("bot x");
        assert_eq!(error.status(), StatusCode::NOT_FOUND);
        assert_eq!(error.to_string(), "bot x not found");
    }
}
