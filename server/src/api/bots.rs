//! Bots and versions: upload, list, inspect, retire.

use crate::api::accounts::OptionalJsonBody;
use crate::auth::{Caller, MaybeCaller, rate_limit, sent_csrf};
use crate::blobs::sha256_hex;
use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use crate::{ladders, versions};
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;

/// Room for the form's other fields and boundaries on top of the module.
pub const FORM_OVERHEAD: usize = 64 * 1024;

/// Uploads per user per minute.
pub const UPLOADS_PER_MINUTE: i64 = 10;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/bots", get(list).post(upload))
        .route("/bots/{name}", get(detail))
        .route("/bots/{name}/retire", post(retire))
        .route("/versions/{id}", get(version))
}

/// Checks a bot name: 3–32 letters, digits, `_` or `-`.
pub fn valid_bot_name(name: &str) -> Result<(), ApiError> {
    let ok = (3..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(ApiError::BadRequest(
            "a bot name has 3 to 32 characters: letters, digits, `_` and `-`".into(),
        ))
    }
}

/// What an upload form carries.
struct Upload {
    name: Option<String>,
    ladders: Vec<String>,
    module: Option<Vec<u8>>,
    csrf: Option<String>,
}

async fn read_upload(mut form: Multipart, limit: usize) -> ApiResult<Upload> {
    let mut upload = Upload {
        name: None,
        ladders: Vec::new(),
        module: None,
        csrf: None,
    };
    let body_error = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::TooLarge(format!("the upload is larger than {} MiB", limit / (1024 * 1024)))
        } else {
            ApiError::BadRequest(format!("malformed multipart form: {}", e.body_text()))
        }
    };
    while let Some(field) = form.next_field().await.map_err(body_error)? {
        let field_name = field.name().unwrap_or("").to_string();
        match field_name.as_str() {
            "module" => {
                let bytes = field.bytes().await.map_err(body_error)?;
                if bytes.len() > limit {
                    return Err(ApiError::TooLarge(format!(
                        "the module is {} bytes; the limit is {limit}",
                        bytes.len()
                    )));
                }
                upload.module = Some(bytes.to_vec());
            }
            "name" | "ladders" | "ladder" | "csrf" => {
                let text = field.text().await.map_err(body_error)?;
                match field_name.as_str() {
                    "name" => upload.name = Some(text.trim().to_string()),
                    "csrf" => upload.csrf = Some(text),
                    _ => upload.ladders.extend(
                        text.split([',', ' '])
                            .map(str::trim)
                            .filter(|s| !s.is_empty())
                            .map(String::from),
                    ),
                }
            }
            other => return Err(ApiError::BadRequest(format!("unexpected form field {other:?}"))),
        }
    }
    Ok(upload)
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
        return Err(ApiError::TooLarge(format!(
            "the upload is larger than {} MiB",
            limit / (1024 * 1024)
        )));
    }
    let upload = read_upload(form, limit).await?;
    caller.check_csrf(sent_csrf(&headers, upload.csrf.as_deref()))?;
    let name = upload
        .name
        .ok_or_else(|| ApiError::BadRequest("the form needs a `name` field".into()))?;
    valid_bot_name(&name)?;
    if upload.ladders.is_empty() {
        return Err(ApiError::BadRequest(format!(
            "tick at least one ladder (`ladders` field): {}",
            ladders::names().join(", ")
        )));
    }
    let mut ladder_names = Vec::new();
    for ladder in &upload.ladders {
        let name = ladders::name(ladders::parse(ladder)?);
        if !ladder_names.contains(&name) {
            ladder_names.push(name);
        }
    }
    let module = upload
        .module
        .ok_or_else(|| ApiError::BadRequest("the form needs a `module` file (.wasm)".into()))?;
    if !module.starts_with(b"\0asm") {
        return Err(ApiError::BadRequest(
            "the module is not WebAssembly (a .wasm file starts with \\0asm): build it with --target wasm32-wasip1"
                .into(),
        ));
    }
    rate_limit(
        &state,
        &format!("upload:{}", caller.user_id),
        UPLOADS_PER_MINUTE,
        60_000,
    )
    .await?;
    let sandbox = state.core.sandbox.clone();
    let checked = {
        let module = module.clone();
        tokio::task::spawn_blocking(move || sandbox.check(&module))
            .await
            .map_err(|e| ApiError::Internal(e.to_string()))?
    };
    if let Err(error) = checked {
        if error.is_host_failure() {
            return Err(ApiError::Internal(error.to_string()));
        }
        return Err(ApiError::BadRequest(format!("the module was refused: {error}")));
    }
    let sha256 = sha256_hex(&module);
    let module_len = module.len();
    let stored = state.core.blobs.run(move |blobs| blobs.put(&module)).await?;
    debug_assert_eq!(stored, sha256);

    let mut tx = state.core.db.begin_write().await?;
    let bot_id = match versions::find_bot(&mut tx, &name).await? {
        Some((id, owner)) if owner == caller.user_id => id,
        Some(_) => return Err(ApiError::Forbidden(format!("the bot {name} belongs to someone else"))),
        None => versions::ensure_bot(&mut tx, caller.user_id, &name).await?,
    };
    let duplicate: Option<i64> = sqlx::query_scalar("SELECT number FROM versions WHERE bot_id = $1 AND sha256 = $2")
        .bind(bot_id)
        .bind(&sha256)
        .fetch_optional(&mut *tx)
        .await?;
    if let Some(number) = duplicate {
        return Err(ApiError::Conflict(format!(
            "this module is already version {number} of {name}"
        )));
    }
    let version_id = versions::insert_version(&mut tx, bot_id, &sha256, module_len, &ladder_names, "checking").await?;
    sqlx::query("UPDATE bots SET retired = 0 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    let number: i64 = sqlx::query_scalar("SELECT number FROM versions WHERE id = $1")
        .bind(version_id)
        .fetch_one(&mut *tx)
        .await?;
    tx.commit().await?;
    versions::wake_checker();
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({
            "ok": true,
            "bot": {"id": bot_id, "name": name},
            "version": {"id": version_id, "number": number, "sha256": sha256, "status": "checking", "ladders": ladder_names},
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
                "provisional": deviation >= crate::ratings::PROVISIONAL_RD,
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
        .map_err(|_| ApiError::BadRequest(format!("{id:?} is not a version id")))?;
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
    let mut tx = state.core.db.begin_write().await?;
    let (bot_id, owner) = versions::find_bot(&mut tx, &name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("bot {name:?}")))?;
    if owner != caller.user_id {
        return Err(ApiError::Forbidden(format!("the bot {name} belongs to someone else")));
    }
    sqlx::query("UPDATE bots SET retired = 1 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    let retired =
        sqlx::query("UPDATE versions SET status = 'retired' WHERE bot_id = $1 AND status IN ('active', 'checking')")
            .bind(bot_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    tx.commit().await?;
    Ok(Json(json!({"ok": true, "retired_versions": retired})))
}
