//! Who is calling: passwords, sessions, API tokens, CSRF tokens and rate
//! limits. (How a web request carries them is `arbiter-http`'s `extract`.)
//!
//! Secrets (session cookies, API tokens) are 32 random bytes in hex, shown
//! once and stored only as their SHA-256, so a copy of the database signs
//! nobody in. Passwords are Argon2 hashes.
//!
//! # How a request proves who it is
//!
//! - `Authorization: Bearer <token>`: an API token ([`issue_api_token`]). One
//!   live token per user; issuing a new one revokes the old at once. A request
//!   with a bearer token is judged by the token alone, cookie or not.
//! - The session cookie [`SESSION_COOKIE`] (HttpOnly, `SameSite=Lax`), made by
//!   [`create_session`]. Every state-changing request on a session must echo
//!   the session's CSRF token ([`Caller::check_csrf`]); on top of that the
//!   web layer refuses unsafe methods that a browser marks as cross-site.
//!
//! # Not covered
//!
//! - The client address (for rate limits) is the TCP peer, unless that peer is
//!   one of the configured trusted proxies (`arbiter serve --trusted-proxy`):
//!   then it is the last `X-Forwarded-For` entry that is not a trusted proxy.
//!   Without that setting, every client behind a proxy shares the proxy's
//!   address and its rate limits.
//! - The session cookie is marked `Secure` only with `--secure-cookies`
//!   (for a site served over HTTPS); on plain HTTP it travels in clear text.

use crate::blobs::sha256_hex;
use crate::db::Db;
use crate::db::now_ms;
use crate::error::Error;
use sqlx::Row;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "arbiter_session";
/// How long a session lasts: 30 days.
pub const SESSION_MS: i64 = 30 * 24 * 3600 * 1000;
/// The header a session caller sends its CSRF token in (a JSON `csrf` field
/// works too where the endpoint takes a body).
pub const CSRF_HEADER: &str = "x-csrf-token";
/// API tokens start with this, so secret scanners and people can tell them
/// from other hex strings.
pub const TOKEN_PREFIX: &str = "arb_";
/// Rate-limit events older than this are swept from every bucket now and
/// then: no window passed to [`rate_limit`] may be longer.
pub const MAX_RATE_WINDOW_MS: i64 = 24 * 3600 * 1000;

/// A new random secret: 32 bytes as 64 hex characters.
pub fn new_secret() -> Result<String, Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The stored form of a secret.
pub fn secret_hash(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

/// Hashes a password with Argon2 (slow on purpose: call it off the async
/// threads, e.g. in `spawn_blocking`).
pub fn hash_password(password: &str) -> Result<String, Error> {
    use argon2::PasswordHasher;
    argon2::Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|e| Error::Internal(format!("cannot hash a password: {e}")))
}

/// Whether `password` matches the Argon2 `hash`. An empty or malformed hash
/// (the house account's) matches nothing.
pub fn verify_password(password: &str, hash: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::PasswordHash::new(hash).is_ok_and(|parsed| {
        argon2::Argon2::default()
            .verify_password(password.as_bytes(), &parsed)
            .is_ok()
    })
}

/// Compares two secrets in time that depends only on their lengths.
pub fn same_secret(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// How a caller proved who they are.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Via {
    /// `Authorization: Bearer <token>`.
    Token,
    /// The session cookie; forms must echo `csrf`.
    Session {
        /// The session's CSRF token.
        csrf: String,
    },
}

/// A signed-in caller. Extracting it answers 401 when there are no (valid)
/// credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The user's id.
    pub user_id: i64,
    /// The user's name.
    pub name: String,
    /// How they signed in.
    pub via: Via,
}

impl Caller {
    /// Checks the CSRF token a session-authenticated form or request sent
    /// (the `csrf` field or the [`CSRF_HEADER`] header); API
    /// tokens need none. Answers 403 when it is missing or wrong.
    pub fn check_csrf(&self, sent: Option<&str>) -> Result<(), Error> {
        match &self.via {
            Via::Token => Ok(()),
            Via::Session { csrf } if sent.is_some_and(|sent| same_secret(sent, csrf)) => Ok(()),
            Via::Session { .. } => Err(Error::Forbidden(
                "missing or wrong CSRF token: send the X-CSRF-Token header (reload the page and try again)".into(),
            )),
        }
    }

    /// Whether the caller came with the session cookie.
    pub fn is_session(&self) -> bool {
        matches!(self.via, Via::Session { .. })
    }
}

/// Creates a session for `user_id`; returns the cookie value and the CSRF
/// token.
pub async fn create_session(db: &Db, user_id: i64) -> Result<(String, String), Error> {
    let secret = new_secret()?;
    let csrf = new_secret()?;
    sqlx::query("INSERT INTO sessions (token_hash, user_id, csrf, expires_ms) VALUES ($1, $2, $3, $4)")
        .bind(secret_hash(&secret))
        .bind(user_id)
        .bind(csrf.clone())
        .bind(now_ms() + SESSION_MS)
        .execute(&db.pool)
        .await?;
    Ok((secret, csrf))
}

/// Ends the session whose cookie value is `secret` (nothing if there is
/// none).
pub async fn end_session(db: &Db, secret: &str) -> Result<(), Error> {
    sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
        .bind(secret_hash(secret))
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Deletes `user_id`'s expired sessions.
pub async fn sweep_sessions(db: &Db, user_id: i64) -> Result<(), Error> {
    sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND expires_ms <= $2")
        .bind(user_id)
        .bind(now_ms())
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Issues a new API token for `user_id` and returns it (the only time it is
/// seen). It replaces the user's previous token, which stops working at once.
pub async fn issue_api_token(db: &Db, user_id: i64) -> Result<String, Error> {
    replace_token(db, TokenTable::Api, user_id).await
}

/// The tables of one-per-holder tokens: a user's API token, an agent
/// bot's bot token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenTable {
    /// `api_tokens`, one per user; tokens start with [`TOKEN_PREFIX`].
    Api,
    /// `bot_tokens`, one per agent bot; tokens start with
    /// [`crate::agent::tokens::BOT_TOKEN_PREFIX`].
    Bot,
}

/// A new token for `holder` in `table`, replacing (and so revoking) the one
/// it had; only its hash is stored.
pub(crate) async fn replace_token(db: &Db, table: TokenTable, holder: i64) -> Result<String, Error> {
    let (prefix, upsert) = match table {
        TokenTable::Api => (
            TOKEN_PREFIX,
            "INSERT INTO api_tokens (user_id, token_hash, created_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (user_id) DO UPDATE SET token_hash = excluded.token_hash, created_ms = excluded.created_ms",
        ),
        TokenTable::Bot => (
            crate::agent::tokens::BOT_TOKEN_PREFIX,
            "INSERT INTO bot_tokens (bot_id, token_hash, created_ms) VALUES ($1, $2, $3) \
             ON CONFLICT (bot_id) DO UPDATE SET token_hash = excluded.token_hash, created_ms = excluded.created_ms",
        ),
    };
    let token = format!("{prefix}{}", new_secret()?);
    sqlx::query(upsert)
        .bind(holder)
        .bind(secret_hash(&token))
        .bind(now_ms())
        .execute(&db.pool)
        .await?;
    Ok(token)
}

/// The caller an API token belongs to. A token that is not valid (never
/// issued, or reissued since) is refused as [`Error::Unauthenticated`]; so
/// is a bot token, with a message of its own.
pub async fn caller_by_token(db: &Db, token: &str) -> Result<Caller, Error> {
    if token.starts_with(crate::agent::tokens::BOT_TOKEN_PREFIX) {
        // A bot's token speaks for the bot on the agent API only.
        return Err(Error::Unauthenticated(format!(
            "this is a bot token ({}…): it works only on the agent API (/api/agent); \
             user endpoints take your account's API token or a signed-in session",
            crate::agent::tokens::BOT_TOKEN_PREFIX
        )));
    }
    let row =
        sqlx::query("SELECT u.id, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1")
            .bind(secret_hash(token))
            .fetch_optional(&db.pool)
            .await?;
    let row = row.ok_or_else(|| {
        Error::Unauthenticated(
            "this API token is not valid: it may have been reissued, which revokes the old one".into(),
        )
    })?;
    Ok(Caller {
        user_id: row.try_get(0)?,
        name: row.try_get(1)?,
        via: Via::Token,
    })
}

/// The caller a live session belongs to, if the session exists and has not
/// expired.
pub async fn caller_by_session(db: &Db, secret: &str) -> Result<Option<Caller>, Error> {
    let row = sqlx::query(
        "SELECT u.id, u.name, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id \
         WHERE s.token_hash = $1 AND s.expires_ms > $2",
    )
    .bind(secret_hash(secret))
    .bind(now_ms())
    .fetch_optional(&db.pool)
    .await?;
    Ok(match row {
        Some(row) => Some(Caller {
            user_id: row.try_get(0)?,
            name: row.try_get(1)?,
            via: Via::Session { csrf: row.try_get(2)? },
        }),
        None => None,
    })
}

/// One counted event of a rate limit, which [`RateEvent::forgive`] can take
/// back (a sign-in that turned out right should not count against anyone).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RateEvent {
    /// The bucket it was counted in.
    pub bucket: String,
    /// When.
    pub at_ms: i64,
}

impl RateEvent {
    /// Un-counts the event.
    pub async fn forgive(&self, db: &Db) -> Result<(), Error> {
        sqlx::query("DELETE FROM rate_events WHERE bucket = $1 AND at_ms = $2")
            .bind(&self.bucket)
            .bind(self.at_ms)
            .execute(&db.pool)
            .await?;
        Ok(())
    }
}

/// Counts an event in `bucket` and refuses it with 429 when `max` already
/// happened in the last `window_ms` (at most [`MAX_RATE_WINDOW_MS`]). Shared
/// by every process on the database.
pub async fn rate_limit(db: &Db, bucket: &str, max: i64, window_ms: i64) -> Result<(), Error> {
    rate_limit_event(db, bucket, max, window_ms).await.map(drop)
}

/// [`rate_limit`], returning the counted event so it can be forgiven.
pub async fn rate_limit_event(db: &Db, bucket: &str, max: i64, window_ms: i64) -> Result<RateEvent, Error> {
    let now = now_ms();
    let mut tx = db.begin_write().await?;
    if db.backend == crate::db::Backend::Postgres {
        // Counting and adding are one step per bucket: without the lock,
        // two transactions would both count the same events under READ
        // COMMITTED and both pass the last place. (SQLite's writers take
        // turns already: `begin_write`.)
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(bucket)
            .execute(&mut *tx)
            .await?;
    }
    sqlx::query("DELETE FROM rate_events WHERE bucket = $1 AND at_ms <= $2")
        .bind(bucket)
        .bind(now - window_ms)
        .execute(&mut *tx)
        .await?;
    if now % 128 == 0 {
        // Now and then, forget the buckets nobody hits any more.
        sqlx::query("DELETE FROM rate_events WHERE at_ms <= $1")
            .bind(now - MAX_RATE_WINDOW_MS)
            .execute(&mut *tx)
            .await?;
    }
    let (count, oldest): (i64, Option<i64>) =
        sqlx::query_as("SELECT COUNT(*), MIN(at_ms) FROM rate_events WHERE bucket = $1")
            .bind(bucket)
            .fetch_one(&mut *tx)
            .await?;
    if count >= max {
        tx.commit().await?;
        // The oldest counted event leaves the window first.
        let wait_ms = u64::try_from(oldest.map_or(window_ms, |at| at + window_ms - now)).unwrap_or(0);
        let retry_after_s = wait_ms.div_ceil(1000).max(1);
        return Err(Error::RateLimited {
            message: format!(
                "too many requests: at most {max} per {}; try again in {retry_after_s} s",
                human_window(window_ms)
            ),
            retry_after_s,
        });
    }
    sqlx::query("INSERT INTO rate_events (bucket, at_ms) VALUES ($1, $2)")
        .bind(bucket)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(RateEvent {
        bucket: bucket.to_owned(),
        at_ms: now,
    })
}

/// `window_ms` in words: "minute", "10 minutes", "hour", "30 s".
fn human_window(window_ms: i64) -> String {
    let seconds = (window_ms / 1000).max(1);
    match seconds {
        60 => "minute".into(),
        3600 => "hour".into(),
        86400 => "day".into(),
        s if s % 3600 == 0 => format!("{} hours", s / 3600),
        s if s % 60 == 0 => format!("{} minutes", s / 60),
        s => format!("{s} s"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csrf_is_checked_for_sessions_only() {
        let session = Caller {
            user_id: 1,
            name: "ann".into(),
            via: Via::Session { csrf: "abc".into() },
        };
        assert!(session.check_csrf(Some("abc")).is_ok());
        assert!(matches!(session.check_csrf(Some("abd")), Err(Error::Forbidden(_))));
        assert!(matches!(session.check_csrf(Some("ab")), Err(Error::Forbidden(_))));
        assert!(matches!(session.check_csrf(None), Err(Error::Forbidden(_))));
        let token = Caller {
            via: Via::Token,
            ..session
        };
        assert!(token.check_csrf(None).is_ok());
    }

    #[test]
    fn windows_read_as_words() {
        assert_eq!(human_window(60_000), "minute");
        assert_eq!(human_window(3_600_000), "hour");
        assert_eq!(human_window(600_000), "10 minutes");
        assert_eq!(human_window(1_500), "1 s");
    }
}
