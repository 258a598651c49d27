//! Accounts: sign-up, sign-in, sign-out, API tokens, public profiles, and
//! the cross-site guard around every unsafe request.
//!
//! | method and path | who | answer |
//! |---|---|---|
//! | `POST /api/users` `{name, password}` | anyone | 201, `user`, `csrf`, session cookie |
//! | `POST /api/sessions` `{name, password}` | anyone | 200, `user`, `csrf`, session cookie |
//! | `DELETE /api/sessions` | session (+CSRF) | 200, cookie cleared |
//! | `GET /api/me` | signed in | `user`, and `csrf` for sessions |
//! | `POST /api/tokens` | signed in (+CSRF for sessions) | 201, `token` (shown once) |
//! | `GET /api/users/{name}` | anyone | `user` with `created_ms` |
//!
//! CSRF protection is two locks: [`refuse_cross_site`] turns away unsafe
//! requests a browser marks as coming from another site, and every
//! state-changing request on a session must echo the session's CSRF token
//! (`X-CSRF-Token` header or `csrf` JSON field). API clients sending
//! `Authorization: Bearer` need neither: a browser cannot forge that header.

use crate::error::{ApiError, ApiResult};
use crate::extract::{ClientIp, SessionCookie, sent_csrf, session_secret};
use crate::server::AppState;
use arbiter_ladder::accounts::{self, SignedIn};
use arbiter_ladder::accounts::{Credentials, name_key};
use arbiter_ladder::auth::{Caller, Via, end_session, issue_api_token};
use arbiter_ladder::error::Error;
use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Path, Request, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, HOST, ORIGIN};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use sqlx::Row;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/users", post(sign_up))
        .route("/users/{name}", get(profile))
        .route("/sessions", post(sign_in).delete(sign_out))
        .route("/me", get(me))
        .route("/tokens", post(issue_token))
        .method_not_allowed_fallback(method_not_allowed)
}

/// Answers a known path asked with the wrong method: 405 as JSON.
pub async fn method_not_allowed(method: Method) -> Response {
    let body = json!({ "ok": false, "error": format!("this endpoint does not accept {method}") });
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
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
            super::MAX_BODY_BYTES / 1024
        ))),
        _ => ApiError(Error::Invalid(format!("bad JSON body: {}", rejection.body_text()))),
    }
}

/// A JSON body that may be absent (an empty body reads as `T::default()`).
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
                        super::MAX_BODY_BYTES / 1024
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
        serde_json::from_slice(&bytes)
            .map(OptionalJsonBody)
            .map_err(|e| ApiError(Error::Invalid(format!("bad JSON body: {e}"))))
    }
}

/// A body that may carry the CSRF token.
#[derive(Debug, Default, Deserialize)]
pub struct CsrfField {
    /// The session's CSRF token.
    pub csrf: Option<String>,
}

/// `Cache-Control: no-store`, for answers that carry secrets.
fn no_store() -> [(axum::http::HeaderName, HeaderValue); 1] {
    [(CACHE_CONTROL, HeaderValue::from_static("no-store"))]
}

/// `POST /users`: creates an account and signs it in.
async fn sign_up(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Credentials>,
) -> ApiResult<Response> {
    let signed_in = accounts::sign_up(&state.core, &ip, &body, session_secret(&headers)).await?;
    Ok((StatusCode::CREATED, signed_in_answer(&state, signed_in)?).into_response())
}

/// `POST /sessions`: signs in with a name and a password.
async fn sign_in(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Credentials>,
) -> ApiResult<Response> {
    let signed_in = accounts::sign_in(&state.core, &ip, &body, session_secret(&headers)).await?;
    signed_in_answer(&state, signed_in)
}

/// The session cookie and `{user, csrf}` of a new session.
fn signed_in_answer(state: &AppState, signed_in: SignedIn) -> ApiResult<Response> {
    let body = json!({
        "ok": true,
        "user": { "id": signed_in.user_id, "name": signed_in.name },
        "csrf": signed_in.csrf,
    });
    Ok((
        SessionCookie::set(signed_in.secret, state.config.secure_cookies),
        no_store(),
        Json(body),
    )
        .into_response())
}

/// `DELETE /sessions`: signs out (the session ends on the server too).
async fn sign_out(State(state): State<AppState>, caller: Caller, headers: HeaderMap) -> ApiResult<Response> {
    if !caller.is_session() {
        return Err(ApiError(Error::Invalid(
            "this request used an API token, not a session: reissue the token to revoke it".into(),
        )));
    }
    caller.check_csrf(sent_csrf(&headers, None))?;
    if let Some(secret) = session_secret(&headers) {
        end_session(&state.core.db, &secret).await?;
    }
    Ok((
        SessionCookie::clear(state.config.secure_cookies),
        Json(json!({ "ok": true })),
    )
        .into_response())
}

/// `GET /me`: who the caller is (and the CSRF token of their session).
async fn me(caller: Caller) -> ApiResult<Response> {
    let user = json!({ "id": caller.user_id, "name": caller.name });
    let body = match caller.via {
        Via::Session { csrf } => json!({ "ok": true, "user": user, "via": "session", "csrf": csrf }),
        Via::Token => json!({ "ok": true, "user": user, "via": "token" }),
    };
    Ok((no_store(), Json(body)).into_response())
}

/// `POST /tokens`: a new API token, shown once; the previous one stops
/// working.
async fn issue_token(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    OptionalJsonBody(body): OptionalJsonBody<CsrfField>,
) -> ApiResult<Response> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let token = issue_api_token(&state.core.db, caller.user_id).await?;
    let body = json!({ "ok": true, "token": token });
    Ok((StatusCode::CREATED, no_store(), Json(body)).into_response())
}

/// `GET /users/{name}`: a user's public profile.
async fn profile(State(state): State<AppState>, Path(name): Path<String>) -> ApiResult<Json<Value>> {
    let row = sqlx::query("SELECT id, name, created_ms, is_house FROM users WHERE name_key = $1")
        .bind(name_key(&name))
        .fetch_optional(&state.core.db.pool)
        .await?
        .ok_or_else(|| ApiError::not_found("user"))?;
    let id: i64 = row.try_get(0)?;
    let name: String = row.try_get(1)?;
    let created_ms: i64 = row.try_get(2)?;
    let house: i64 = row.try_get(3)?;
    Ok(Json(json!({
        "ok": true,
        "user": { "id": id, "name": name, "created_ms": created_ms, "house": house != 0 },
    })))
}

/// Makes every refusal under `/api` JSON: an answer of 400 or more whose
/// body is not `application/json` (axum's own rejections, a 405 from a
/// method router, a layer's 413) becomes `{"ok": false, "error": "..."}`
/// with the same status and headers, its text kept as the message when it
/// is short. Other paths (the site's pages) pass untouched.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let is_api = request.uri().path().starts_with("/api/") || request.uri().path() == "/api";
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if !is_api || is_json || response.status().as_u16() < 400 {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 1024)
        .await
        .ok()
        .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    let message = text.unwrap_or_else(|| {
        parts
            .status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_ascii_lowercase()
    });
    let body = serde_json::to_vec(&json!({ "ok": false, "error": message })).unwrap_or_default();
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    // The new body is plain: a compressed original's encoding must go too.
    parts.headers.remove(axum::http::header::CONTENT_ENCODING);
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// Refuses state-changing requests that a browser marks as cross-site.
///
/// For POST, PUT, PATCH and DELETE without `Authorization: Bearer`: 403 when
/// `Sec-Fetch-Site: cross-site`, or when an `Origin` header names another
/// host and port than the `Host` header (an opaque `Origin: null` too).
/// Safe methods and API clients pass untouched.
pub async fn refuse_cross_site(request: Request, next: Next) -> Response {
    match cross_site_refusal(request.method(), request.headers(), request.uri()) {
        Some(why) => ApiError(Error::Forbidden(why.into())).into_response(),
        None => next.run(request).await,
    }
}

/// Why [`refuse_cross_site`] refuses a request, if it does.
fn cross_site_refusal(method: &Method, headers: &HeaderMap, uri: &axum::http::Uri) -> Option<&'static str> {
    if !matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE) {
        return None;
    }
    if crate::extract::bearer_token(headers).is_some_and(|token| token.is_ok()) {
        return None;
    }
    let fetch_site = headers.get("sec-fetch-site").map(HeaderValue::as_bytes);
    if fetch_site.is_some_and(|site| site.eq_ignore_ascii_case(b"cross-site")) {
        return Some("cross-site request refused: this browser request came from another site");
    }
    let origin = headers.get(ORIGIN)?;
    let host = headers
        .get(HOST)
        .and_then(|host| host.to_str().ok())
        .or_else(|| uri.authority().map(|authority| authority.as_str()));
    let same = match (origin.to_str().ok().and_then(origin_authority), host) {
        (Some((scheme, origin)), Some(host)) => origin == authority_with_port(scheme, host),
        _ => false,
    };
    (!same).then_some("cross-site request refused: the Origin header does not match this site")
}

/// `http://Example.com` → `("http", "example.com:80")`; `None` for
/// anything but an `http(s)` origin (`null`, paths, user info).
fn origin_authority(origin: &str) -> Option<(&str, String)> {
    let (scheme, rest) = origin.split_once("://")?;
    let scheme = if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else {
        return None;
    };
    if rest.is_empty() || rest.contains(['/', '@', '?', '#']) {
        return None;
    }
    Some((scheme, authority_with_port(scheme, rest)))
}

/// `host[:port]` lowercased, with the scheme's default port made explicit.
fn authority_with_port(scheme: &str, authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    // A port follows the last colon, unless that colon is inside an IPv6 literal.
    let has_port = authority.rsplit_once(':').is_some_and(|(_, port)| !port.contains(']'));
    if has_port {
        authority
    } else {
        let port = if scheme == "https" { 443 } else { 80 };
        format!("{authority}:{port}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn bare_refusals_under_api_become_json() {
        use tower::ServiceExt;
        let app = Router::new()
            .route(
                "/api/plain",
                get(|| async { (StatusCode::BAD_REQUEST, "Failed to parse the request path") }),
            )
            .route("/api/json", get(|| async { ApiError(Error::Conflict("taken".into())) }))
            .route("/page", get(|| async { (StatusCode::NOT_FOUND, "<h1>not here</h1>") }))
            .layer(axum::middleware::from_fn(json_errors));
        let answer = |path: &'static str, method: Method| {
            let app = app.clone();
            async move {
                let request = axum::http::Request::builder()
                    .method(method)
                    .uri(path)
                    .body(axum::body::Body::empty());
                let response = app.oneshot(request.expect("a request")).await.expect("an answer");
                let status = response.status();
                let bytes = axum::body::to_bytes(response.into_body(), 4096).await.expect("a body");
                (status, String::from_utf8_lossy(&bytes).into_owned())
            }
        };
        let (status, body) = answer("/api/plain", Method::GET).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body, r#"{"error":"Failed to parse the request path","ok":false}"#);
        let (status, body) = answer("/api/plain", Method::POST).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(body, r#"{"error":"method not allowed","ok":false}"#);
        let (_, body) = answer("/api/json", Method::GET).await;
        assert_eq!(body, r#"{"error":"taken","ok":false}"#, "JSON passes untouched");
        let (status, body) = answer("/page", Method::GET).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::NOT_FOUND, "<h1>not here</h1>"),
            "not under /api"
        );
    }

    fn refusal(method: Method, headers: &[(&'static str, &'static str)]) -> Option<&'static str> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        cross_site_refusal(&method, &map, &axum::http::Uri::from_static("/api/tokens"))
    }

    #[test]
    fn cross_site_unsafe_requests_are_refused() {
        let host = ("host", "ladder.example:8080");
        assert!(
            refusal(Method::POST, &[host]).is_none(),
            "no Origin: a non-browser client"
        );
        assert!(refusal(Method::POST, &[host, ("origin", "http://ladder.example:8080")]).is_none());
        assert!(refusal(Method::POST, &[host, ("origin", "HTTP://Ladder.Example:8080")]).is_none());
        assert!(
            refusal(
                Method::POST,
                &[("host", "ladder.example"), ("origin", "https://ladder.example")]
            )
            .is_none()
        );
        assert!(refusal(Method::POST, &[("host", "[::1]:80"), ("origin", "http://[::1]")]).is_none());
        assert!(refusal(Method::POST, &[host, ("sec-fetch-site", "same-origin")]).is_none());
        assert!(
            refusal(Method::GET, &[host, ("origin", "http://evil.example")]).is_none(),
            "safe method"
        );
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(
                refusal(method.clone(), &[host, ("origin", "http://evil.example")]).is_some(),
                "{method}"
            );
        }
        assert!(refusal(Method::POST, &[host, ("origin", "http://ladder.example:8081")]).is_some());
        assert!(
            refusal(
                Method::POST,
                &[host, ("origin", "http://ladder.example:8080.evil.example")]
            )
            .is_some()
        );
        assert!(refusal(Method::POST, &[host, ("origin", "null")]).is_some());
        assert!(refusal(Method::POST, &[host, ("sec-fetch-site", "cross-site")]).is_some());
        assert!(
            refusal(Method::POST, &[("origin", "http://ladder.example:8080")]).is_some(),
            "no Host"
        );
        let api = ("authorization", "Bearer arb_x");
        assert!(refusal(Method::POST, &[host, api, ("origin", "http://evil.example")]).is_none());
        assert!(
            refusal(
                Method::POST,
                &[host, ("authorization", "Basic eA=="), ("sec-fetch-site", "cross-site")]
            )
            .is_some()
        );
    }
}
