//! Round-robin tournaments with a crosstable: the JSON face of
//! [`arbiter_ladder::tournaments`].

use crate::api::accounts::JsonBody;
use crate::error::{ApiError, ApiResult};
use crate::extract::sent_csrf;
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::tournaments::{self, TournamentRequest};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;
use std::collections::BTreeMap;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tournaments", get(list).post(create))
        .route("/tournaments/{id}", get(detail))
}

/// The body of a new tournament: the request and the session's CSRF token.
#[derive(serde::Deserialize)]
struct NewTournament {
    #[serde(flatten)]
    request: TournamentRequest,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /api/tournaments` {name, ladder, bots, matches_per_pair}: every pair
/// of the bots' active versions plays `matches_per_pair` matches.
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<NewTournament>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let created = tournaments::create(&state.core, caller.user_id, &body.request).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "tournament": {"id": created.id, "matches": created.matches}})),
    ))
}

/// `GET /api/tournaments`.
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let rows = sqlx::query(
        "SELECT t.id, t.name, t.ladder, u.name, t.matches_per_pair, t.created_ms FROM tournaments t \
         JOIN users u ON u.id = t.owner_id ORDER BY t.id DESC LIMIT 100",
    )
    .fetch_all(&state.core.db.pool)
    .await?;
    let mut out = Vec::new();
    for row in rows {
        out.push(json!({
            "id": row.try_get::<i64, _>(0)?, "name": row.try_get::<String, _>(1)?, "ladder": row.try_get::<String, _>(2)?,
            "owner": row.try_get::<String, _>(3)?, "matches_per_pair": row.try_get::<i64, _>(4)?,
            "created_ms": row.try_get::<i64, _>(5)?,
        }));
    }
    Ok(Json(json!({"ok": true, "tournaments": out})))
}

/// `GET /api/tournaments/{id}`: entries, standings and the crosstable
/// (`crosstable[a][b]` = points of `a` against `b`, from finished matches).
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let id = crate::api::matches::parse_id(&id)?;
    let pool = &state.core.db.pool;
    let header = sqlx::query("SELECT name, ladder, matches_per_pair FROM tournaments WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("tournament {id}")))?;
    let table = arbiter_ladder::crosstable::crosstable(pool, id).await?;
    let mut cross: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
    for ((a, b), points) in &table.cross {
        cross.entry(a.as_str()).or_default().insert(b.as_str(), *points);
    }
    let standings = table.standings();
    let (total, finished) = (table.matches, table.finished);
    Ok(Json(json!({
        "ok": true,
        "tournament": {
            "id": id, "name": header.try_get::<String, _>(0)?, "ladder": header.try_get::<String, _>(1)?,
            "matches_per_pair": header.try_get::<i64, _>(2)?, "matches": total, "finished": finished,
        },
        "standings": standings.iter().map(|(bot, points, played)| json!({"bot": bot, "points": points, "matches": played})).collect::<Vec<_>>(),
        "crosstable": cross,
    })))
}
