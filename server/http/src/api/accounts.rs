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
//! | `PUT /api/me/password` `{current_password, new_password}` | signed in (+CSRF) | 200; every session and the API token revoked, a session caller gets a new session |
//! | `DELETE /api/me` `{password, confirm}` | signed in (+CSRF) | 200; the account deleted (see `arbiter_ladder::accounts`), cookie cleared |
//!
//! CSRF protection is two locks: [`refuse_cross_site`] turns away unsafe
//! requests a browser marks as coming from another site, and every
//! state-changing request on a session must echo the session's CSRF token
//! (`X-CSRF-Token` header or `csrf` JSON field). API clients sending
//! `Authorization: Bearer` need neither: a browser cannot forge that header.

use crate::api::{ErrorResponse, Refusal, True};
use crate::error::{ApiError, ApiResult};
use crate::extract::{ClientIp, JsonBody, OptionalJsonBody, SessionCookie, sent_csrf, session_secret};
use crate::server::AppState;
use arbiter_ladder::accounts::Credentials;
use arbiter_ladder::accounts::{self, Profile, SignedIn};
use arbiter_ladder::auth::{Caller, Via, end_session, issue_api_token};
use arbiter_ladder::error::Error;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::header::CACHE_CONTROL;
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(sign_up))
        .routes(routes!(profile))
        .routes(routes!(sign_in, sign_out))
        .routes(routes!(me, delete_account))
        .routes(routes!(change_password))
        .routes(routes!(issue_token))
}

/// Answers a known path asked with the wrong method: 405 as JSON.
pub async fn method_not_allowed(method: Method) -> Response {
    let body = Refusal::new(format!("this endpoint does not accept {method}"));
    (StatusCode::METHOD_NOT_ALLOWED, Json(body)).into_response()
}

/// `Cache-Control: no-store`, for answers that carry secrets.
fn no_store() -> [(axum::http::HeaderName, HeaderValue); 1] {
    [(CACHE_CONTROL, HeaderValue::from_static("no-store"))]
}

/// A name and a password, to sign up or sign in, and what the site's form
/// sends along (any other property is refused).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = Credentials)]
pub struct CredentialsBody {
    /// The user name: 3 to 32 letters (A-Z, a-z), digits, `_` or `-`.
    #[schema(pattern = "^[A-Za-z0-9_-]{3,32}$")]
    pub name: String,
    /// The password, in clear: 8 to 256 characters.
    #[schema(min_length = 8, max_length = 256)]
    pub password: String,
    /// The site's sign-in form token, which its form sends along; the API
    /// does not need it and ignores it.
    #[serde(default)]
    pub csrf: Option<String>,
    /// The page the site's form goes to next; the API ignores it.
    #[serde(default)]
    pub next: Option<String>,
}

impl From<CredentialsBody> for Credentials {
    fn from(body: CredentialsBody) -> Credentials {
        Credentials {
            name: body.name,
            password: body.password,
        }
    }
}

/// A user as the caller sees themself: id and name.
#[derive(Debug, Serialize, ToSchema)]
pub struct UserRef {
    /// The user's id.
    pub id: i64,
    /// The user's name.
    pub name: String,
}

/// A new session: the user and the session's CSRF token (the cookie is
/// set alongside).
#[derive(Debug, Serialize, ToSchema)]
pub struct SignedInBody {
    /// `true`.
    pub ok: True,
    /// Who signed in.
    pub user: UserRef,
    /// The session's CSRF token, to echo in `X-CSRF-Token` or `csrf`.
    pub csrf: String,
}

/// How the caller is signed in.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ViaKind {
    /// A session cookie.
    Session,
    /// An API token.
    Token,
}

/// `GET /api/me`: the caller, and the session's CSRF token for a session.
#[derive(Debug, Serialize, ToSchema)]
pub struct MeBody {
    /// `true`.
    pub ok: True,
    /// The caller.
    pub user: UserRef,
    /// `session` or `token`.
    pub via: ViaKind,
    /// The session's CSRF token (sessions only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csrf: Option<String>,
}

/// A new API token, shown once.
#[derive(Debug, Serialize, ToSchema)]
pub struct TokenBody {
    /// `true`.
    pub ok: True,
    /// The token, for `Authorization: Bearer`.
    pub token: String,
}

/// A user's public profile.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileBody {
    /// `true`.
    pub ok: True,
    /// The profile.
    pub user: Profile,
}

/// `POST /users`: creates an account and signs it in.
#[utoipa::path(post, path = "/users", tag = "accounts",
    summary = "Sign up; sets the session cookie (409 for a name that is taken)",
    request_body = CredentialsBody,
    responses(
        (status = 201, description = "signed up and in", body = SignedInBody),
        (status = 409, response = ErrorResponse),
    ))]
async fn sign_up(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    JsonBody(body): JsonBody<CredentialsBody>,
) -> ApiResult<Response> {
    let body = Credentials::from(body);
    let signed_in = accounts::sign_up(&state.core, &ip, &body, session_secret(&headers)).await?;
    Ok((StatusCode::CREATED, signed_in_answer(&state, signed_in)?).into_response())
}

/// `POST /sessions`: signs in with a name and a password.
#[utoipa::path(post, path = "/sessions", tag = "accounts",
    summary = "Sign in; sets the session cookie (401 for a wrong name or password)",
    request_body = CredentialsBody,
    responses(
        (status = 200, description = "signed in", body = SignedInBody),
    ))]
async fn sign_in(
    State(state): State<AppState>,
    ClientIp(ip): ClientIp,
    headers: HeaderMap,
    JsonBody(body): JsonBody<CredentialsBody>,
) -> ApiResult<Response> {
    let body = Credentials::from(body);
    let signed_in = accounts::sign_in(&state.core, &ip, &body, session_secret(&headers)).await?;
    signed_in_answer(&state, signed_in)
}

/// The session cookie and `{user, csrf}` of a new session.
fn signed_in_answer(state: &AppState, signed_in: SignedIn) -> ApiResult<Response> {
    let body = SignedInBody {
        ok: True,
        user: UserRef {
            id: signed_in.user_id,
            name: signed_in.name,
        },
        csrf: signed_in.csrf,
    };
    Ok((
        SessionCookie::set(signed_in.secret, state.config.secure_cookies),
        no_store(),
        Json(body),
    )
        .into_response())
}

/// `DELETE /sessions`: signs out (the session ends on the server too).
#[utoipa::path(delete, path = "/sessions", tag = "accounts", summary = "Sign out",
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 200, description = "signed out; the cookie is cleared", body = crate::api::Done),
        (status = 403, response = ErrorResponse),
    ))]
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
        Json(crate::api::Done { ok: True }),
    )
        .into_response())
}

/// `GET /me`: who the caller is (and the CSRF token of their session).
#[utoipa::path(get, path = "/me", tag = "accounts",
    summary = "The signed-in user (and the session's CSRF token)",
    security(("bearer" = []), ("session" = [])),
    responses(
        (status = 200, description = "the caller", body = MeBody),
        (status = 403, response = ErrorResponse),
    ))]
async fn me(caller: Caller) -> ApiResult<Response> {
    let user = UserRef {
        id: caller.user_id,
        name: caller.name,
    };
    let body = match caller.via {
        Via::Session { csrf } => MeBody {
            ok: True,
            user,
            via: ViaKind::Session,
            csrf: Some(csrf),
        },
        Via::Token => MeBody {
            ok: True,
            user,
            via: ViaKind::Token,
            csrf: None,
        },
    };
    Ok((no_store(), Json(body)).into_response())
}

/// `POST /tokens`: a new API token, shown once; the previous one stops
/// working.
#[utoipa::path(post, path = "/tokens", tag = "accounts",
    summary = "Issue an API token, shown once; revokes the previous one",
    security(("bearer" = []), ("session" = [])),
    request_body(content = Option<crate::api::CsrfBody>, description = "the session's CSRF token (optional; or `X-CSRF-Token`)"),
    responses(
        (status = 201, description = "the new token", body = TokenBody),
        (status = 403, response = ErrorResponse),
    ))]
async fn issue_token(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    OptionalJsonBody(body): OptionalJsonBody<crate::api::CsrfBody>,
) -> ApiResult<Response> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let token = issue_api_token(&state.core.db, caller.user_id).await?;
    let body = TokenBody { ok: True, token };
    Ok((StatusCode::CREATED, no_store(), Json(body)).into_response())
}

/// `GET /users/{name}`: a user's public profile.
#[utoipa::path(get, path = "/users/{name}", tag = "accounts", summary = "A user's public profile",
    params(("name" = String, Path, description = "user name")),
    responses(
        (status = 200, description = "the profile", body = ProfileBody),
    ))]
async fn profile(State(state): State<AppState>, Path(name): Path<String>) -> ApiResult<Json<ProfileBody>> {
    let user = accounts::profile(&state.core.db, &name).await?;
    Ok(Json(ProfileBody { ok: True, user }))
}

/// `PUT /api/me/password`: the current password and the new one (any
/// other property is refused).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PasswordBody {
    /// The password now.
    #[schema(min_length = 1, max_length = 256)]
    pub current_password: String,
    /// The new password: 8 to 256 characters, not the current one.
    #[schema(min_length = 8, max_length = 256)]
    pub new_password: String,
    /// The session's CSRF token (or `X-CSRF-Token`; not needed with an API
    /// token).
    #[serde(default)]
    pub csrf: Option<String>,
}

/// A password changed: every other session and the API token no longer
/// work.
#[derive(Debug, Serialize, ToSchema)]
pub struct PasswordChangedBody {
    /// `true`.
    pub ok: True,
    /// The new session's CSRF token, when the change came from a session
    /// (its cookie is set alongside); absent for an API token caller, whose
    /// token is revoked with the change.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub csrf: Option<String>,
}

/// `PUT /me/password`: changes the caller's password.
#[utoipa::path(put, path = "/me/password", tag = "accounts",
    summary = "Change your password: revokes every session and the API token (a session caller gets a new session); 403 for a wrong current password",
    security(("bearer" = []), ("session" = [])),
    request_body = PasswordBody,
    responses(
        (status = 200, description = "changed", body = PasswordChangedBody),
        (status = 403, response = ErrorResponse),
    ))]
async fn change_password(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<PasswordBody>,
) -> ApiResult<Response> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let change = accounts::PasswordChange {
        current_password: body.current_password,
        new_password: body.new_password,
    };
    let session = caller.is_session();
    let signed_in = accounts::change_password(&state.core, caller.user_id, &change, session).await?;
    Ok(match signed_in {
        Some(signed_in) => (
            SessionCookie::set(signed_in.secret, state.config.secure_cookies),
            no_store(),
            Json(PasswordChangedBody {
                ok: True,
                csrf: Some(signed_in.csrf),
            }),
        )
            .into_response(),
        None => (no_store(), Json(PasswordChangedBody { ok: True, csrf: None })).into_response(),
    })
}

/// `DELETE /api/me`: the password and the user name typed again (any
/// other property is refused).
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteAccountBody {
    /// The account's password.
    #[schema(min_length = 1, max_length = 256)]
    pub password: String,
    /// The account's user name, typed to confirm (any letter case).
    pub confirm: String,
    /// The session's CSRF token (or `X-CSRF-Token`; not needed with an API
    /// token).
    #[serde(default)]
    pub csrf: Option<String>,
}

/// What deleting the account did.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountDeletedBody {
    /// `true`.
    pub ok: True,
    /// The account's bots, retired (their matches, replays and ratings
    /// kept, shown as owned by "deleted user").
    pub bots_retired: u64,
    /// Games people played whose person now reads "deleted user".
    pub people_games_anonymised: u64,
}

/// `DELETE /me`: deletes the caller's account.
#[utoipa::path(delete, path = "/me", tag = "accounts",
    summary = "Delete your account: sessions and tokens deleted, bots retired and kept as deleted user's (400 unless confirm is your name, 403 for a wrong password)",
    security(("bearer" = []), ("session" = [])),
    request_body = DeleteAccountBody,
    responses(
        (status = 200, description = "deleted; the cookie is cleared", body = AccountDeletedBody),
        (status = 403, response = ErrorResponse),
    ))]
async fn delete_account(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<DeleteAccountBody>,
) -> ApiResult<Response> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let deletion = accounts::Deletion {
        password: body.password,
        confirm: body.confirm,
    };
    let deleted = accounts::delete_account(&state.core, caller.user_id, &deletion).await?;
    Ok((
        SessionCookie::clear(state.config.secure_cookies),
        Json(AccountDeletedBody {
            ok: True,
            bots_retired: deleted.bots_retired,
            people_games_anonymised: deleted.people_games_anonymised,
        }),
    )
        .into_response())
}
