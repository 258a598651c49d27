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
use crate::extract::{ClientIp, CsrfField, JsonBody, OptionalJsonBody, SessionCookie, sent_csrf, session_secret};
use crate::server::AppState;
use arbiter_ladder::accounts::Credentials;
use arbiter_ladder::accounts::{self, SignedIn};
use arbiter_ladder::auth::{Caller, Via, end_session, issue_api_token};
use arbiter_ladder::error::Error;
use axum::extract::{Path, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

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
    let user = accounts::profile(&state.core.db, &name).await?;
    Ok(Json(json!({ "ok": true, "user": user })))
}
