//! How a request says who sent it: the bearer token or the session cookie
//! (made into a [`Caller`] by the ladder), the CSRF token it echoes, the
//! `Set-Cookie` of a session, and the client's address behind trusted
//! proxies.

use crate::error::ApiError;
use crate::server::AppState;
use arbiter_ladder::auth::{self, CSRF_HEADER, Caller, SESSION_COOKIE, SESSION_MS};
use arbiter_ladder::error::Error;
use axum::Json;
use axum::extract::rejection::JsonRejection;
use axum::extract::{ConnectInfo, FromRequest, FromRequestParts, Request};
use axum::http::StatusCode;
use axum::http::header::{AUTHORIZATION, HeaderMap, HeaderValue, SET_COOKIE};
use axum::http::request::Parts;
use axum::response::{IntoResponseParts, ResponseParts};
use axum_extra::extract::CookieJar;
use serde::de::DeserializeOwned;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};

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
    Some(token.ok_or_else(|| {
        ApiError(Error::Unauthenticated(
            "the Authorization header must be `Bearer <token>`".into(),
        ))
    }))
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
            .map_err(|e| ApiError(Error::Internal(format!("bad cookie header: {e}"))))?;
        parts.headers_mut().append(SET_COOKIE, value);
        Ok(parts)
    }
}

/// The caller of a request, if any credentials are valid: an API token in
/// `Authorization: Bearer`, else the session cookie. A request that sends a
/// bearer token that is not valid is refused (401) even if it has a cookie.
pub async fn caller(parts: &Parts, state: &AppState) -> Result<Option<Caller>, ApiError> {
    let db = &state.core.db;
    if let Some(token) = bearer_token(&parts.headers) {
        return Ok(Some(auth::caller_by_token(db, token?).await?));
    }
    match session_secret(&parts.headers) {
        Some(secret) => Ok(auth::caller_by_session(db, &secret).await?),
        None => Ok(None),
    }
}

impl FromRequestParts<AppState> for Caller {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Caller, ApiError> {
        caller(parts, state).await?.ok_or_else(|| {
            ApiError(Error::Unauthenticated(
                "sign in, or send an API token as `Authorization: Bearer <token>`".into(),
            ))
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

/// The client, for per-client limits: the TCP peer, or behind trusted
/// proxies the address they forwarded (see [`client_address`]), as
/// [`arbiter_ladder::quota::client_key`] names it (an IPv4 address, or an
/// IPv6 prefix of [`ServerConfig::ipv6_client_prefix`](crate::server::ServerConfig::ipv6_client_prefix)
/// bits); `"unknown"` when the server was not started with connect info
/// (in-process tests).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClientIp(pub String);

impl FromRequestParts<AppState> for ClientIp {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<ClientIp, Infallible> {
        let ip = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|ConnectInfo(addr)| client_address(addr.ip(), &parts.headers, &state.config.trusted_proxies));
        Ok(ClientIp(ip.map_or_else(
            || "unknown".to_owned(),
            |ip| arbiter_ladder::quota::client_key(ip, state.config.ipv6_client_prefix),
        )))
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

/// A JSON request body whose rejections are [`ApiError`]s: 413 over the body
/// limit, 400 for anything else (wrong content type, bad syntax, missing or
/// mistyped fields), each saying what was wrong.
#[derive(Clone, Copy, Debug, Default)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<JsonBody<T>, ApiError> {
        match Json::<T>::from_request(request, state).await {
            Ok(Json(value)) => Ok(JsonBody(value)),
            Err(rejection) => Err(json_rejection(&rejection)),
        }
    }
}

/// The [`ApiError`] for a refused JSON body.
pub fn json_rejection(rejection: &JsonRejection) -> ApiError {
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError(Error::Invalid(
            "send the body as JSON with `Content-Type: application/json`".into(),
        )),
        _ if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE => ApiError(Error::TooLarge(format!(
            "the request body is over the limit of {} KiB",
            crate::router::MAX_BODY_BYTES / 1024
        ))),
        _ => ApiError(Error::Invalid(format!("bad JSON body: {}", rejection.body_text()))),
    }
}

/// A JSON body that may be absent (an empty body or `null` reads as
/// `T::default()`).
#[derive(Clone, Copy, Debug, Default)]
pub struct OptionalJsonBody<T>(pub T);

impl<T: DeserializeOwned + Default, S: Send + Sync> FromRequest<S> for OptionalJsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &S) -> Result<OptionalJsonBody<T>, ApiError> {
        let bytes = axum::body::Bytes::from_request(request, state)
            .await
            .map_err(|rejection| {
                if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
                    ApiError(Error::TooLarge(format!(
                        "the request body is over the limit of {} KiB",
                        crate::router::MAX_BODY_BYTES / 1024
                    )))
                } else {
                    ApiError(Error::Invalid(format!(
                        "cannot read the body: {}",
                        rejection.body_text()
                    )))
                }
            })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(OptionalJsonBody(T::default()));
        }
        // `null` is no body too (the document allows it).
        serde_json::from_slice::<Option<T>>(&bytes)
            .map(|body| OptionalJsonBody(body.unwrap_or_default()))
            .map_err(|e| ApiError(Error::Invalid(format!("bad JSON body: {e}"))))
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
                matches!(bearer_token(&headers), Some(Err(ApiError(Error::Unauthenticated(_))))),
                "{bad}"
            );
        }
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
}
