//! Round-robin tournaments with a crosstable.

use crate::api::accounts::JsonBody;
use crate::api::challenges::{active_version, random_seed};
use crate::auth::{Caller, rate_limit, sent_csrf};
use crate::db::now_ms;
use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;
use std::collections::BTreeMap;

/// Queue priority of tournament matches.
pub const TOURNAMENT_PRIORITY: i64 = 5;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/tournaments", get(list).post(create))
        .route("/tournaments/{id}", get(detail))
}

#[derive(serde::Deserialize)]
struct NewTournament {
    name: String,
    ladder: String,
    bots: Vec<String>,
    #[serde(default = "one")]
    matches_per_pair: i64,
    #[serde(default)]
    csrf: Option<String>,
}

fn one() -> i64 {
    1
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
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(ApiError::BadRequest("a tournament name has 1 to 80 characters".into()));
    }
    if !(1..=10).contains(&body.matches_per_pair) {
        return Err(ApiError::BadRequest("matches_per_pair must be between 1 and 10".into()));
    }
    let mut bots = body.bots.clone();
    bots.sort_by_key(|b| b.to_lowercase());
    bots.dedup_by_key(|b| b.to_lowercase());
    if !(2..=16).contains(&bots.len()) {
        return Err(ApiError::BadRequest("a tournament has 2 to 16 different bots".into()));
    }
    let ladder = crate::ladders::name(crate::ladders::parse(&body.ladder)?);
    let mut entries = Vec::new();
    for bot in &bots {
        entries.push(active_version(&state, bot, &ladder).await?.0);
    }
    rate_limit(&state, &format!("tournament:{}", caller.user_id), 2, 60_000).await?;
    let mut tx = state.core.db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO tournaments (ladder, name, owner_id, matches_per_pair, created_ms) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&ladder)
    .bind(name)
    .bind(caller.user_id)
    .bind(body.matches_per_pair)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    for version in &entries {
        sqlx::query("INSERT INTO tournament_entries (tournament_id, version_id) VALUES ($1, $2)")
            .bind(id)
            .bind(version)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    let mut queued = 0;
    for (i, &a) in entries.iter().enumerate() {
        for &b in &entries[i + 1..] {
            for n in 0..body.matches_per_pair {
                let (first, second) = if n % 2 == 0 { (a, b) } else { (b, a) };
                let new = crate::worker::NewMatch {
                    ladder: &ladder,
                    a_version: first,
                    b_version: second,
                    seed: random_seed()?,
                    kind: "tournament",
                    priority: TOURNAMENT_PRIORITY,
                    tournament_id: Some(id),
                    budget: None,
                };
                crate::worker::enqueue(&state.core.db, &new).await?;
                queued += 1;
            }
        }
    }
    crate::worker::wake_workers();
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "tournament": {"id": id, "matches": queued}})),
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
    let table = crate::crosstable::crosstable(pool, id).await?;
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
