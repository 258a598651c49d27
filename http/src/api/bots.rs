//! Bots and versions: upload, list, inspect, retire; the JSON face of
//! [`arbiter_ladder::bots`] and [`arbiter_ladder::uploads`].

use crate::error::{ApiError, ApiResult};
use crate::extract::OptionalJsonBody;
use crate::extract::{MaybeCaller, sent_csrf};
use crate::server::AppState;
use crate::upload_form::read_upload;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::bots;
use arbiter_ladder::error::Error;
use arbiter_ladder::model::{UserId, VersionId, VersionStatus};
use arbiter_ladder::uploads;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::upload_form::FORM_OVERHEAD;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/bots", get(list).post(upload))
        .route("/bots/{name}", get(detail))
        .route("/bots/{name}/retire", post(retire))
        .route("/versions/{id}", get(version))
}

/// `POST /api/bots` (multipart: `name`, `ladders`, `module`): creates the
/// bot if the name is new, or adds a version to the caller's bot. The module
/// is checked off the request path; the answer is 202 with the version in
/// `checking`. A module that is not even valid WebAssembly, or breaks the
/// import/export contract, is refused at once and nothing is stored.
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    form: Multipart,
) -> ApiResult<(StatusCode, Json<Value>)> {
    let limit = state.config.max_upload_bytes;
    // Refuse a body announced as too large before reading any of it.
    let announced = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|length| length > limit + FORM_OVERHEAD) {
        return Err(ApiError(Error::TooLarge(format!(
            "the upload is larger than {} MiB",
            limit / (1024 * 1024)
        ))));
    }
    let form = read_upload(form, limit).await?;
    caller.check_csrf(sent_csrf(&headers, form.csrf.as_deref()))?;
    let uploaded = uploads::upload(&state.core, caller.user_id, form.upload).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({
            "ok": true,
            "bot": {"id": uploaded.bot_id, "name": uploaded.name},
            "version": {
                "id": uploaded.version_id, "number": uploaded.number, "sha256": uploaded.sha256,
                "status": VersionStatus::Checking, "ladders": uploaded.ladders,
            },
        })),
    ))
}

/// `GET /api/bots`: every bot with its active version.
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let bots = bots::list(&state.core.db).await?;
    Ok(Json(json!({"ok": true, "bots": bots})))
}

/// `GET /api/bots/{name}`: the bot, its versions (with ratings) and its
/// recent matches.
async fn detail(
    State(state): State<AppState>,
    Path(name): Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> ApiResult<Json<Value>> {
    let bot = bots::by_name(&state.core.db, &name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("bot {name:?}")))?;
    let viewer = caller.map(|c| UserId(c.user_id));
    let versions = bots::versions_with_ratings(&state.core.db, bot.id, bot.owner_id, viewer).await?;
    let bot_id = bot.id.0;
    let matches = crate::api::matches::recent_for_bot(&state, bot_id, 20).await?;
    Ok(Json(json!({
        "ok": true,
        "bot": bot,
        "versions": versions,
        "matches": matches,
    })))
}

/// `GET /api/versions/{id}`: one version (poll it to follow a check).
async fn version(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> ApiResult<Json<Value>> {
    let id: i64 = id
        .parse()
        .map_err(|_| ApiError(Error::Invalid(format!("{id:?} is not a version id"))))?;
    let version = bots::version(&state.core.db, VersionId(id), caller.map(|c| UserId(c.user_id)))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("version {id}")))?;
    Ok(Json(json!({"ok": true, "version": version})))
}

/// The JSON body of a state-changing request from a session: its CSRF token.
#[derive(serde::Deserialize, Default)]
struct CsrfBody {
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /api/bots/{name}/retire`: the owner takes the bot out of
/// matchmaking (its history stays).
async fn retire(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    OptionalJsonBody(body): OptionalJsonBody<CsrfBody>,
) -> ApiResult<Json<Value>> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let retired = uploads::retire(&state.core, caller.user_id, &name).await?;
    Ok(Json(json!({"ok": true, "retired_versions": retired})))
}
