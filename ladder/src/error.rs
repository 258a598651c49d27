//! Why a ladder step refused or failed.
//!
//! - Bot faults are not errors: the referee records them in the match.
//! - Library crates return their own typed errors (`ReplyError`,
//!   `ModuleError`, `HostError`, …).
//! - The ladder's steps (sign-up, upload, challenge, tournament, …) return
//!   [`Error`]: a refusal says in words what the caller can change; a
//!   failure of storage or of the host keeps its cause for the log and is
//!   not shown to callers. A web layer maps each kind to its status.

/// A refusal or a failure of a ladder step.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Something the caller sent is malformed or out of bounds.
    #[error("{0}")]
    Invalid(String),
    /// No credentials, or credentials that are not valid.
    #[error("{0}")]
    Unauthenticated(String),
    /// Signed in, but not allowed (not your bot, a bad CSRF token).
    #[error("{0}")]
    Forbidden(String),
    /// No such thing.
    #[error("{0}")]
    NotFound(String),
    /// Conflicts with what exists (a name taken, the same module twice).
    #[error("{0}")]
    Conflict(String),
    /// Over a size limit.
    #[error("{0}")]
    TooLarge(String),
    /// Over a rate limit.
    #[error("{message}")]
    RateLimited {
        /// What was limited, in words.
        message: String,
        /// Seconds until a retry can succeed (at least 1).
        retry_after_s: u64,
    },
    /// Storage is unavailable; the cause is for the log.
    #[error("storage unavailable")]
    Unavailable(String),
    /// Anything else; the cause is for the log, not for the caller.
    #[error("internal error")]
    Internal(String),
}

impl Error {
    /// A [`Error::NotFound`] naming what was not found.
    pub fn not_found(what: impl std::fmt::Display) -> Error {
        Error::NotFound(format!("{what} not found"))
    }

    /// Whether this is a failure of the server (storage, host) rather than
    /// a refusal of what the caller asked.
    pub fn is_failure(&self) -> bool {
        matches!(self, Error::Unavailable(_) | Error::Internal(_))
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Error {
        if crate::db::is_unavailable(&error) {
            Error::Unavailable(error.to_string())
        } else {
            Error::Internal(error.to_string())
        }
    }
}

impl From<std::io::Error> for Error {
    fn from(error: std::io::Error) -> Error {
        Error::Unavailable(error.to_string())
    }
}

impl From<crate::replays::ReadError> for Error {
    fn from(error: crate::replays::ReadError) -> Error {
        match error {
            crate::replays::ReadError::Db(error) => error.into(),
            crate::replays::ReadError::Io(error) => error.into(),
        }
    }
}

/// What the ladder's steps return.
pub type Result<T, E = Error> = std::result::Result<T, E>;
