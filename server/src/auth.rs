//! Who is calling: passwords, session cookies, API tokens and the
//! [`Caller`] extractor.
//!
//! Secrets (session cookies, API tokens) are 32 random bytes in hex, shown
//! once and stored only as their SHA-256. Passwords are Argon2 hashes.

use crate::blobs::sha256_hex;
use crate::db::now_ms;
use crate::error::ApiError;
use crate::server::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum_extra::extract::CookieJar;
use sqlx::Row;

/// The session cookie's name.
pub const SESSION_COOKIE: &str = "arbiter_session";
/// How long a session lasts.
pub const SESSION_MS: i64 = 30 * 24 * 3600 * 1000;

/// A new random secret: 32 bytes as 64 hex characters.
pub fn new_secret() -> Result<String, ApiError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| ApiError::Internal(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The stored form of a secret.
pub fn secret_hash(secret: &str) -> String {
    sha256_hex(secret.as_bytes())
}

/// Hashes a password with Argon2 (slow on purpose: call it off the async
/// threads, e.g. in `spawn_blocking`).
pub fn hash_password(password: &str) -> Result<String, ApiError> {
    use argon2::PasswordHasher;
    argon2::Argon2::default()
        .hash_password(password.as_bytes())
        .map(|hash| hash.to_string())
        .map_err(|e| ApiError::Internal(format!("cannot hash a password: {e}")))
}

/// Whether `password` matches the Argon2 `hash`.
pub fn verify_password(password: &str, hash: &str) -> bool {
    use argon2::PasswordVerifier;
    argon2::PasswordHash::new(hash)
        .is_ok_and(|parsed| argon2::Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
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
    /// (`csrf` field or `X-CSRF-Token` header); API tokens need none.
    pub fn check_csrf(&self, sent: Option<&str>) -> Result<(), ApiError> {
        match &self.via {
            Via::Token => Ok(()),
            Via::Session { csrf } if sent == Some(csrf.as_str()) => Ok(()),
            Via::Session { .. } => Err(ApiError::Forbidden("missing or wrong CSRF token: reload the page and try again".into())),
        }
    }
}

/// Creates a session for `user_id`; returns the cookie value and the CSRF
/// token.
pub async fn create_session(state: &AppState, user_id: i64) -> Result<(String, String), ApiError> {
    let secret = new_secret()?;
    let csrf = new_secret()?;
    sqlx::query("INSERT INTO sessions (token_hash, user_id, csrf, expires_ms) VALUES ($1, $2, $3, $4)")
        .bind(secret_hash(&secret))
        .bind(user_id)
        .bind(csrf.clone())
        .bind(now_ms() + SESSION_MS)
        .execute(&state.core.db.pool)
        .await?;
    Ok((secret, csrf))
}

/// The caller of a request, if any credentials are valid: an API token in
/// `Authorization: Bearer`, else the session cookie. A request that sends a
/// bearer token that is not valid is refused even if it has a cookie.
pub async fn caller(parts: &Parts, state: &AppState) -> Result<Option<Caller>, ApiError> {
    if let Some(header) = parts.headers.get(axum::http::header::AUTHORIZATION) {
        let token = header
            .to_str()
            .ok()
            .and_then(|h| h.strip_prefix("Bearer "))
            .map(str::trim)
            .ok_or_else(|| ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into()))?;
        let row = sqlx::query(
            "SELECT u.id, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1",
        )
        .bind(secret_hash(token))
        .fetch_optional(&state.core.db.pool)
        .await?;
        let row = row.ok_or_else(|| ApiError::Unauthorized("this API token is not valid (it may have been reissued)".into()))?;
        return Ok(Some(Caller {
            user_id: row.try_get(0)?,
            name: row.try_get(1)?,
            via: Via::Token,
        }));
    }
    let jar = CookieJar::from_headers(&parts.headers);
    let Some(cookie) = jar.get(SESSION_COOKIE) else { return Ok(None) };
    let row = sqlx::query(
        "SELECT u.id, u.name, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id \
         WHERE s.token_hash = $1 AND s.expires_ms > $2",
    )
    .bind(secret_hash(cookie.value()))
    .bind(now_ms())
    .fetch_optional(&state.core.db.pool)
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

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        caller(parts, state)
            .await?
            .ok_or_else(|| ApiError::Unauthorized("sign in, or send an API token as `Authorization: Bearer <token>`".into()))
    }
}

/// A caller who may be anonymous.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaybeCaller(pub Option<Caller>);

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<MaybeCaller, ApiError> {
        Ok(MaybeCaller(caller(parts, state).await?))
    }
}

/// Counts an event in `bucket` and refuses it with 429 when more than `max`
/// happened in the last `window_ms`. Shared by every process on the database.
pub async fn rate_limit(state: &AppState, bucket: &str, max: i64, window_ms: i64) -> Result<(), ApiError> {
    let db = &state.core.db;
    let now = now_ms();
    let mut tx = db.begin_write().await?;
    sqlx::query("DELETE FROM rate_events WHERE bucket = $1 AND at_ms <= $2")
        .bind(bucket)
        .bind(now - window_ms)
        .execute(&mut *tx)
        .await?;
    let count: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM rate_events WHERE bucket = $1")
        .bind(bucket)
        .fetch_one(&mut *tx)
        .await?;
    if count >= max {
        tx.commit().await?;
        let seconds = (window_ms / 1000).max(1);
        return Err(ApiError::TooManyRequests(format!(
            "too many requests: at most {max} per {seconds} s; try again later"
        )));
    }
    sqlx::query("INSERT INTO rate_events (bucket, at_ms) VALUES ($1, $2)")
        .bind(bucket)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(())
}
