//! Who is calling: passwords, session cookies, API tokens, CSRF tokens,
//! client addresses and rate limits.
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
//!   the session's CSRF token ([`Caller::check_csrf`]); on top of that
//!   `api::accounts::refuse_cross_site` refuses unsafe methods that a browser
//!   marks as cross-site.
//!
//! # Not covered
//!
//! - The client address ([`ClientIp`]) is the TCP peer, unless that peer is
//!   one of the configured trusted proxies (`arbiter serve --trusted-proxy`):
//!   then it is the last `X-Forwarded-For` entry that is not a trusted proxy.
//!   Without that setting, every client behind a proxy shares the proxy's
//!   address and its rate limits.
//! - The session cookie is marked `Secure` only with `--secure-cookies`
//!   (for a site served over HTTPS); on plain HTTP it travels in clear text.

use crate::blobs::sha256_hex;
use crate::db::now_ms;
use crate::error::ApiError;
use crate::server::AppState;
use axum::extract::{ConnectInfo, FromRequestParts};
use axum::http::header::{AUTHORIZATION, HeaderMap, HeaderValue, SET_COOKIE};
use axum::http::request::Parts;
use axum::response::{IntoResponseParts, ResponseParts};
use axum_extra::extract::CookieJar;
use sqlx::Row;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

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
    /// (`csrf` field or `X-CSRF-Token` header, see [`sent_csrf`]); API
    /// tokens need none. Answers 403 when it is missing or wrong.
    pub fn check_csrf(&self, sent: Option<&str>) -> Result<(), ApiError> {
        match &self.via {
            Via::Token => Ok(()),
            Via::Session { csrf } if sent.is_some_and(|sent| same_secret(sent, csrf)) => Ok(()),
            Via::Session { .. } => Err(ApiError::Forbidden(
                "missing or wrong CSRF token: send the X-CSRF-Token header (reload the page and try again)".into(),
            )),
        }
    }

    /// Whether the caller came with the session cookie.
    pub fn is_session(&self) -> bool {
        matches!(self.via, Via::Session { .. })
    }
}

/// The CSRF token a request sent: the `X-CSRF-Token` header, else the body's
/// `csrf` field (`field`).
pub fn sent_csrf<'a>(headers: &'a HeaderMap, field: Option<&'a str>) -> Option<&'a str> {
    headers.get(CSRF_HEADER).and_then(|value| value.to_str().ok()).or(field)
}

/// The bearer token of a request: `None` without an `Authorization` header,
/// `Some(Err)` when the header is not `Bearer <token>` (the scheme is
/// case-insensitive).
pub fn bearer_token(headers: &HeaderMap) -> Option<Result<&str, ApiError>> {
    let header = headers.get(AUTHORIZATION)?;
    let token = header.to_str().ok().and_then(|value| {
        let (scheme, token) = value.split_once(' ')?;
        let token = token.trim();
        (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
    });
    Some(token.ok_or_else(|| ApiError::Unauthorized("the Authorization header must be `Bearer <token>`".into())))
}

/// The session cookie's value, if the request has one.
pub fn session_secret(headers: &HeaderMap) -> Option<String> {
    CookieJar::from_headers(headers)
        .get(SESSION_COOKIE)
        .map(|cookie| cookie.value().to_owned())
}

/// A `Set-Cookie` response part: sets the session cookie, or clears it.
#[derive(Clone, Debug)]
pub struct SessionCookie {
    secret: Option<String>,
    secure: bool,
}

impl SessionCookie {
    /// Sets the cookie to `secret` for [`SESSION_MS`] (HttpOnly,
    /// `SameSite=Lax`, `Path=/`, and `Secure` when `secure`).
    pub fn set(secret: String, secure: bool) -> SessionCookie {
        SessionCookie {
            secret: Some(secret),
            secure,
        }
    }

    /// Tells the browser to forget the cookie.
    pub fn clear(secure: bool) -> SessionCookie {
        SessionCookie { secret: None, secure }
    }

    /// The `Set-Cookie` header value.
    pub fn header_value(&self) -> String {
        let (value, max_age) = match &self.secret {
            Some(secret) => (secret.as_str(), SESSION_MS / 1000),
            None => ("", 0),
        };
        let secure = if self.secure { "; Secure" } else { "" };
        format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{secure}")
    }
}

impl IntoResponseParts for SessionCookie {
    type Error = ApiError;

    fn into_response_parts(self, mut parts: ResponseParts) -> Result<ResponseParts, ApiError> {
        let value = HeaderValue::from_str(&self.header_value())
            .map_err(|e| ApiError::Internal(format!("bad cookie header: {e}")))?;
        parts.headers_mut().append(SET_COOKIE, value);
        Ok(parts)
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

/// Ends the session whose cookie value is `secret` (nothing if there is
/// none).
pub async fn end_session(state: &AppState, secret: &str) -> Result<(), ApiError> {
    sqlx::query("DELETE FROM sessions WHERE token_hash = $1")
        .bind(secret_hash(secret))
        .execute(&state.core.db.pool)
        .await?;
    Ok(())
}

/// Deletes `user_id`'s expired sessions.
pub async fn sweep_sessions(state: &AppState, user_id: i64) -> Result<(), ApiError> {
    sqlx::query("DELETE FROM sessions WHERE user_id = $1 AND expires_ms <= $2")
        .bind(user_id)
        .bind(now_ms())
        .execute(&state.core.db.pool)
        .await?;
    Ok(())
}

/// Issues a new API token for `user_id` and returns it (the only time it is
/// seen). It replaces the user's previous token, which stops working at once.
pub async fn issue_api_token(state: &AppState, user_id: i64) -> Result<String, ApiError> {
    let token = format!("{TOKEN_PREFIX}{}", new_secret()?);
    sqlx::query(
        "INSERT INTO api_tokens (user_id, token_hash, created_ms) VALUES ($1, $2, $3) \
         ON CONFLICT (user_id) DO UPDATE SET token_hash = excluded.token_hash, created_ms = excluded.created_ms",
    )
    .bind(user_id)
    .bind(secret_hash(&token))
    .bind(now_ms())
    .execute(&state.core.db.pool)
    .await?;
    Ok(token)
}

/// The caller of a request, if any credentials are valid: an API token in
/// `Authorization: Bearer`, else the session cookie. A request that sends a
/// bearer token that is not valid is refused (401) even if it has a cookie.
pub async fn caller(parts: &Parts, state: &AppState) -> Result<Option<Caller>, ApiError> {
    if let Some(token) = bearer_token(&parts.headers) {
        let row = sqlx::query(
            "SELECT u.id, u.name FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_hash = $1",
        )
        .bind(secret_hash(token?))
        .fetch_optional(&state.core.db.pool)
        .await?;
        let row = row.ok_or_else(|| {
            ApiError::Unauthorized(
                "this API token is not valid: it may have been reissued, which revokes the old one".into(),
            )
        })?;
        return Ok(Some(Caller {
            user_id: row.try_get(0)?,
            name: row.try_get(1)?,
            via: Via::Token,
        }));
    }
    let Some(secret) = session_secret(&parts.headers) else {
        return Ok(None);
    };
    let row = sqlx::query(
        "SELECT u.id, u.name, s.csrf FROM sessions s JOIN users u ON u.id = s.user_id \
         WHERE s.token_hash = $1 AND s.expires_ms > $2",
    )
    .bind(secret_hash(&secret))
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
        caller(parts, state).await?.ok_or_else(|| {
            ApiError::Unauthorized("sign in, or send an API token as `Authorization: Bearer <token>`".into())
        })
    }
}

/// A caller who may be anonymous. A bad bearer token is still refused (401).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MaybeCaller(pub Option<Caller>);

impl FromRequestParts<AppState> for MaybeCaller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<MaybeCaller, ApiError> {
        Ok(MaybeCaller(caller(parts, state).await?))
    }
}

/// The client's address, for rate limits: the TCP peer, or behind trusted
/// proxies the address they forwarded (see [`client_address`]); `"unknown"`
/// when the server was not started with connect info (in-process tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIp(pub String);

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<ClientIp, Infallible> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| client_address(addr.ip(), &parts.headers, &state.config.trusted_proxies));
        Ok(ClientIp(ip.map_or_else(|| "unknown".to_owned(), |ip| ip.to_string())))
    }
}

/// Who sent a request that reached us from `peer`. A peer that is not in
/// `trusted` is the client (its `X-Forwarded-For` is ignored: anyone can
/// send one). From a trusted proxy, the `X-Forwarded-For` entries are read
/// from the right (each proxy appends the address it saw) and the first
/// one that is not itself a trusted proxy is the client; an entry that is
/// not an IP address stops the walk at the last address known good.
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpAddr]) -> IpAddr {
    let mut client = peer;
    if !trusted.contains(&peer) {
        return client;
    }
    let hops = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','));
    for hop in hops.rev() {
        match hop.trim().parse::<IpAddr>() {
            Ok(ip) => {
                client = ip;
                if !trusted.contains(&ip) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    client
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
    pub async fn forgive(&self, state: &AppState) -> Result<(), ApiError> {
        sqlx::query("DELETE FROM rate_events WHERE bucket = $1 AND at_ms = $2")
            .bind(&self.bucket)
            .bind(self.at_ms)
            .execute(&state.core.db.pool)
            .await?;
        Ok(())
    }
}

/// Counts an event in `bucket` and refuses it with 429 when `max` already
/// happened in the last `window_ms` (at most [`MAX_RATE_WINDOW_MS`]). Shared
/// by every process on the database.
pub async fn rate_limit(state: &AppState, bucket: &str, max: i64, window_ms: i64) -> Result<(), ApiError> {
    rate_limit_event(state, bucket, max, window_ms).await.map(drop)
}

/// [`rate_limit`], returning the counted event so it can be forgiven.
pub async fn rate_limit_event(state: &AppState, bucket: &str, max: i64, window_ms: i64) -> Result<RateEvent, ApiError> {
    let db = &state.core.db;
    let now = now_ms();
    let mut tx = db.begin_write().await?;
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
        return Err(ApiError::TooManyRequests {
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
    fn bearer_tokens_are_parsed_case_insensitively_and_others_refused() {
        let mut headers = HeaderMap::new();
        assert!(bearer_token(&headers).is_none());
        headers.insert(AUTHORIZATION, HeaderValue::from_static("bearer  arb_abc "));
        assert_eq!(bearer_token(&headers).and_then(Result::ok), Some("arb_abc"));
        for bad in ["Basic dXNlcjpwdw==", "Bearer", "Bearer ", "arb_abc"] {
            headers.insert(AUTHORIZATION, HeaderValue::from_static(bad));
            assert!(
                matches!(bearer_token(&headers), Some(Err(ApiError::Unauthorized(_)))),
                "{bad}"
            );
        }
    }

    #[test]
    fn csrf_is_checked_for_sessions_only() {
        let session = Caller {
            user_id: 1,
            name: "ann".into(),
            via: Via::Session { csrf: "abc".into() },
        };
        assert!(session.check_csrf(Some("abc")).is_ok());
        assert!(matches!(session.check_csrf(Some("abd")), Err(ApiError::Forbidden(_))));
        assert!(matches!(session.check_csrf(Some("ab")), Err(ApiError::Forbidden(_))));
        assert!(matches!(session.check_csrf(None), Err(ApiError::Forbidden(_))));
        let token = Caller {
            via: Via::Token,
            ..session
        };
        assert!(token.check_csrf(None).is_ok());
    }

    #[test]
    fn the_header_wins_over_the_field() {
        let mut headers = HeaderMap::new();
        assert_eq!(sent_csrf(&headers, Some("field")), Some("field"));
        headers.insert(CSRF_HEADER, HeaderValue::from_static("header"));
        assert_eq!(sent_csrf(&headers, Some("field")), Some("header"));
    }

    #[test]
    fn session_cookies_are_http_only_and_same_site() {
        let set = SessionCookie::set("s3cret".into(), false).header_value();
        assert_eq!(
            set,
            format!(
                "arbiter_session=s3cret; Path=/; HttpOnly; SameSite=Lax; Max-Age={}",
                SESSION_MS / 1000
            )
        );
        assert!(SessionCookie::clear(false).header_value().ends_with("Max-Age=0"));
        let secure = SessionCookie::set("s3cret".into(), true).header_value();
        assert!(secure.ends_with("; Secure"), "{secure}");
        assert!(SessionCookie::clear(true).header_value().ends_with("Max-Age=0; Secure"));
    }

    #[test]
    fn the_client_is_the_peer_unless_the_peer_is_a_trusted_proxy() {
        let ip = |s: &str| s.parse::<IpAddr>().expect("an address");
        let with = |xff: &[&str]| {
            let mut headers = HeaderMap::new();
            for value in xff {
                headers.append("x-forwarded-for", HeaderValue::from_str(value).expect("a header"));
            }
            headers
        };
        let proxy = ip("10.0.0.2");
        let trusted = [proxy, ip("10.0.0.3")];
        // Untrusted peers: their header is ignored, spoofed or not.
        assert_eq!(
            client_address(ip("203.0.113.9"), &with(&["1.2.3.4"]), &trusted),
            ip("203.0.113.9")
        );
        assert_eq!(client_address(ip("203.0.113.9"), &with(&[]), &[]), ip("203.0.113.9"));
        // Through one proxy: the address it appended.
        assert_eq!(
            client_address(proxy, &with(&["198.51.100.7"]), &trusted),
            ip("198.51.100.7")
        );
        // A client that sends its own header cannot choose its address: the
        // proxy appends the real one, which is read first from the right.
        assert_eq!(
            client_address(proxy, &with(&["6.6.6.6, 198.51.100.7"]), &trusted),
            ip("198.51.100.7")
        );
        // Through two trusted proxies, in one header or in two.
        assert_eq!(
            client_address(proxy, &with(&["198.51.100.7, 10.0.0.3"]), &trusted),
            ip("198.51.100.7")
        );
        assert_eq!(
            client_address(proxy, &with(&["6.6.6.6, 198.51.100.7", "10.0.0.3"]), &trusted),
            ip("198.51.100.7")
        );
        // IPv6, and garbage: the walk stops at the last good address.
        assert_eq!(
            client_address(proxy, &with(&["2001:db8::1"]), &trusted),
            ip("2001:db8::1")
        );
        assert_eq!(client_address(proxy, &with(&["not-an-ip"]), &trusted), proxy);
        assert_eq!(
            client_address(proxy, &with(&["198.51.100.7, junk, 10.0.0.3"]), &trusted),
            ip("10.0.0.3")
        );
        // A trusted proxy that forwarded nothing is the client.
        assert_eq!(client_address(proxy, &with(&[]), &trusted), proxy);
    }

    #[test]
    fn windows_read_as_words() {
        assert_eq!(human_window(60_000), "minute");
        assert_eq!(human_window(3_600_000), "hour");
        assert_eq!(human_window(600_000), "10 minutes");
        assert_eq!(human_window(1_500), "1 s");
    }
}
