//! Bots and versions: upload, list, inspect, retire.

use crate::api::accounts::OptionalJsonBody;
use crate::error::{ApiError, ApiResult};
use crate::extract::{MaybeCaller, sent_csrf};
use crate::server::AppState;
use crate::upload_form::read_upload;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::error::Error;
use arbiter_ladder::uploads;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;

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
                "status": "checking", "ladders": uploaded.ladders,
            },
        })),
    ))
}

/// `GET /api/bots`: every bot with its active version.
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let rows = sqlx::query(
        "SELECT b.name, u.name, b.retired, \
           (SELECT number FROM versions v WHERE v.bot_id = b.id AND v.status = 'active' ORDER BY number DESC LIMIT 1), \
           (SELECT COUNT(*) FROM versions v WHERE v.bot_id = b.id) \
         FROM bots b JOIN users u ON u.id = b.owner_id ORDER BY b.name_key LIMIT 1000",
    )
    .fetch_all(&state.core.db.pool)
    .await?;
    let mut bots = Vec::with_capacity(rows.len());
    for row in rows {
        bots.push(json!({
            "name": row.try_get::<String, _>(0)?,
            "owner": row.try_get::<String, _>(1)?,
            "retired": row.try_get::<i64, _>(2)? != 0,
            "active_version": row.try_get::<Option<i64>, _>(3)?,
            "versions": row.try_get::<i64, _>(4)?,
        }));
    }
    Ok(Json(json!({"ok": true, "bots": bots})))
}

/// One version as the API shows it; `stderr` only to the owner.
fn version_json(row: &sqlx::any::AnyRow, owner_view: bool) -> Result<Value, sqlx::Error> {
    let ladders: Value = serde_json::from_str(&row.try_get::<String, _>("ladders")?).unwrap_or(Value::Null);
    let mut version = json!({
        "id": row.try_get::<i64, _>("id")?,
        "number": row.try_get::<i64, _>("number")?,
        "sha256": row.try_get::<String, _>("sha256")?,
        "status": row.try_get::<String, _>("status")?,
        "reason": row.try_get::<Option<String>, _>("reason")?,
        "ladders": ladders,
        "created_ms": row.try_get::<i64, _>("created_ms")?,
        "checked_ms": row.try_get::<Option<i64>, _>("checked_ms")?,
    });
    if owner_view {
        version["stderr"] = json!(row.try_get::<Option<String>, _>("stderr")?);
    }
    Ok(version)
}

/// `GET /api/bots/{name}`: the bot, its versions (with ratings) and its
/// recent matches.
async fn detail(
    State(state): State<AppState>,
    Path(name): Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> ApiResult<Json<Value>> {
    let pool = &state.core.db.pool;
    let bot = sqlx::query(
        "SELECT b.id, b.name, u.name, b.owner_id, b.retired, b.created_ms FROM bots b JOIN users u ON u.id = b.owner_id \
         WHERE b.name_key = $1",
    )
    .bind(name.to_lowercase())
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| ApiError::not_found(format!("bot {name:?}")))?;
    let bot_id: i64 = bot.try_get(0)?;
    let owner_id: i64 = bot.try_get(3)?;
    let owner_view = caller.as_ref().is_some_and(|c| c.user_id == owner_id);
    let rows = sqlx::query(
        "SELECT id, number, sha256, status, reason, stderr, ladders, created_ms, checked_ms FROM versions \
         WHERE bot_id = $1 ORDER BY number DESC",
    )
    .bind(bot_id)
    .fetch_all(pool)
    .await?;
    let mut versions = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut version = version_json(row, owner_view)?;
        let id: i64 = row.try_get("id")?;
        let ratings = sqlx::query(
            "SELECT ladder, rating, deviation, wins, draws, losses FROM ratings WHERE version_id = $1 ORDER BY ladder",
        )
        .bind(id)
        .fetch_all(pool)
        .await?;
        let mut list = Vec::new();
        for r in ratings {
            let deviation: f64 = r.try_get(2)?;
            list.push(json!({
                "ladder": r.try_get::<String, _>(0)?,
                "rating": r.try_get::<f64, _>(1)?,
                "deviation": deviation,
                "provisional": deviation >= arbiter_ladder::ratings::PROVISIONAL_RD,
                "wins": r.try_get::<i64, _>(3)?,
                "draws": r.try_get::<i64, _>(4)?,
                "losses": r.try_get::<i64, _>(5)?,
            }));
        }
        version["ratings"] = Value::Array(list);
        versions.push(version);
    }
    let matches = crate::api::matches::recent_for_bot(&state, bot_id, 20).await?;
    Ok(Json(json!({
        "ok": true,
        "bot": {
            "id": bot_id,
            "name": bot.try_get::<String, _>(1)?,
            "owner": bot.try_get::<String, _>(2)?,
            "retired": bot.try_get::<i64, _>(4)? != 0,
            "created_ms": bot.try_get::<i64, _>(5)?,
        },
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
    let row = sqlx::query(
        "SELECT v.id, v.number, v.sha256, v.status, v.reason, v.stderr, v.ladders, v.created_ms, v.checked_ms, \
                b.name AS bot, b.owner_id AS owner_id \
         FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = $1",
    )
    .bind(id)
    .fetch_optional(&state.core.db.pool)
    .await?
    .ok_or_else(|| ApiError::not_found(format!("version {id}")))?;
    let owner_id: i64 = row.try_get("owner_id")?;
    let mut version = version_json(&row, caller.is_some_and(|c| c.user_id == owner_id))?;
    version["bot"] = json!(row.try_get::<String, _>("bot")?);
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
