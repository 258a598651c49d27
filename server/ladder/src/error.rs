//! Why a ladder step refused or failed.
//!
//! - Bot faults are not errors: the referee records them in the match.
//! - Library crates return their own typed errors (`ReplyError`,
//!   `ModuleError`, `HostError`, …).
//! - The ladder's steps (sign-up, upload, challenge, tournament, …) and
//!   every other public function of the ladder (the database, the
//!   scheduler, the checker, opening a [`crate::core::Core`]) return
//!   [`Error`]: a refusal says in words what the caller can change; a
//!   failure of storage or of the host keeps its cause for the log
//!   ([`Error::detail`]) and is not shown to callers
//!   ([`Error::public_message`]). A web layer maps each kind to its status.

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
    /// The server is at its bound for a kind of work (photo decodes):
    /// nothing was done, and the same request may succeed after
    /// `retry_after_s`. Not a failure: nothing is logged.
    #[error("{message}")]
    Busy {
        /// What is busy, in words.
        message: String,
        /// Seconds until a retry may succeed (at least 1).
        retry_after_s: u64,
    },
    /// Storage is unavailable; the cause is for the log.
    #[error("storage unavailable")]
    Unavailable(String),
    /// Anything else; the cause is for the log, not for the caller.
    #[error("internal error")]
    Internal(String),
    /// The host failed: a data folder, database, blob store or sandbox
    /// that cannot be opened, a module check the sandbox could not run.
    /// The message says what and why, with its chain of causes, for an
    /// operator; a web client sees only that the server failed (as for
    /// [`Error::Internal`]).
    #[error("{0}")]
    Host(String),
}

impl Error {
    /// A [`Error::NotFound`] naming what was not found.
    pub fn not_found(what: impl std::fmt::Display) -> Error {
        Error::NotFound(format!("{what} not found"))
    }

    /// A [`Error::Host`] saying `what` failed and why: `error` and each of
    /// its sources in turn, joined by `: ` (as an operator reads a chain of
    /// causes).
    pub fn host(what: impl std::fmt::Display, error: &(dyn std::error::Error + 'static)) -> Error {
        Error::Host(format!("{what}: {}", chain(error)))
    }

    /// Whether this is a failure of the server (storage, host) rather than
    /// a refusal of what the caller asked.
    pub fn is_failure(&self) -> bool {
        matches!(self, Error::Unavailable(_) | Error::Internal(_) | Error::Host(_))
    }

    /// Whether storage could not be reached (the database down, restarting
    /// or out of connections in time, a blob store that fails): what a
    /// client should hear as 503 and background work should retry, rather
    /// than a query or a request that is wrong.
    pub fn is_unavailable(&self) -> bool {
        matches!(self, Error::Unavailable(_))
    }

    /// What a client may read: a refusal's message; for a failure only its
    /// kind (`storage unavailable`, `internal error`), never its cause.
    pub fn public_message(&self) -> String {
        match self {
            // A host failure reads as any other internal failure.
            Error::Host(_) => Error::Internal(String::new()).to_string(),
            error => error.to_string(),
        }
    }

    /// What happened, in full: a refusal's message, or a failure's cause.
    /// For a log line or an operator's terminal, never for a web client
    /// (whose answer is [`Error::public_message`]).
    pub fn detail(&self) -> &str {
        match self {
            Error::Invalid(message)
            | Error::Unauthenticated(message)
            | Error::Forbidden(message)
            | Error::NotFound(message)
            | Error::Conflict(message)
            | Error::TooLarge(message)
            | Error::RateLimited { message, .. }
            | Error::Busy { message, .. }
            | Error::Unavailable(message)
            | Error::Internal(message)
            | Error::Host(message) => message,
        }
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

/// `error` and each of its sources in turn, joined by `: `.
pub(crate) fn chain(error: &(dyn std::error::Error + 'static)) -> String {
    use std::fmt::Write as _;
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let _ = write!(message, ": {cause}");
        source = cause.source();
    }
    message
}

/// What the ladder's steps return.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    /// A database that cannot be reached is a 503's kind with the driver's
    /// words as its detail; a wrong query is an internal failure.
    #[test]
    fn driver_errors_keep_their_classification() {
        let down = Error::from(sqlx::Error::PoolTimedOut);
        assert!(down.is_unavailable() && down.is_failure());
        assert_eq!(down.public_message(), "storage unavailable");
        assert_eq!(down.detail(), sqlx::Error::PoolTimedOut.to_string());
        let wrong = Error::from(sqlx::Error::RowNotFound);
        assert!(!wrong.is_unavailable() && wrong.is_failure());
        assert_eq!(wrong.public_message(), "internal error");
        assert_eq!(wrong.detail(), sqlx::Error::RowNotFound.to_string());
    }

    /// A host failure says what failed and every cause beneath it, to an
    /// operator only.
    #[test]
    fn host_failures_carry_their_chain_of_causes() {
        #[derive(Debug, thiserror::Error)]
        #[error("cannot write the cache")]
        struct Outer(#[source] std::io::Error);
        let error = Error::host("cannot start", &Outer(std::io::Error::other("disk full")));
        assert_eq!(error.to_string(), "cannot start: cannot write the cache: disk full");
        assert_eq!(error.detail(), "cannot start: cannot write the cache: disk full");
        assert_eq!(error.public_message(), "internal error");
        assert!(error.is_failure() && !error.is_unavailable());
    }

    /// A refusal reads the same everywhere.
    #[test]
    fn refusals_are_shown_as_they_are() {
        let refused = Error::not_found("bot x");
        assert_eq!(refused.public_message(), "bot x not found");
        assert_eq!(refused.detail(), "bot x not found");
        assert!(!refused.is_failure());
    }
}
