//! Matches: lists, details, replays (JSON and Othello transcript) and the
//! owner-only logs.

use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::error::Error;
use arbiter_referee::Replay;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/matches", get(list))
        .route("/matches/{id}", get(detail))
        .route(
            "/matches/{id}/replay",
            get(replay).layer(tower_http::compression::CompressionLayer::new()),
        )
        .route("/matches/{id}/transcript", get(transcript))
        .route(
            "/matches/{id}/frames",
            get(frames).layer(tower_http::compression::CompressionLayer::new()),
        )
        .route(
            "/matches/{id}/training.jsonl",
            get(training).layer(tower_http::compression::CompressionLayer::new()),
        )
        .route("/matches/{id}/logs", get(logs))
}

/// Reads a match id from the path.
pub fn parse_id(id: &str) -> Result<i64, ApiError> {
    id.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError(Error::Invalid(format!("{id:?} is not a match id"))))
}

/// The columns [`match_json`] reads, with the joins they need; callers add
/// `WHERE …`.
pub const SELECT: &str = "SELECT m.id, m.ladder, m.kind, m.status, m.created_ms, m.started_ms, m.finished_ms, \
      m.winner, m.score_a, m.score_b, m.reasons, m.error, m.attempts, m.tournament_id, \
      m.a_version, ab.name AS a_bot, av.number AS a_number, m.a_before, m.a_after, \
      m.b_version, bb.name AS b_bot, bv.number AS b_number, m.b_before, m.b_after, m.replay_sha256 \
    FROM matches m \
    JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
    JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id ";

/// The ids of the newest `$2` matches of bot `$1` (either side), through the
/// per-side indexes: an `OR` over both sides scans every match.
const BOT_MATCH_IDS: &str = "SELECT id FROM ( \
      SELECT id FROM (SELECT id FROM matches WHERE a_version IN (SELECT id FROM versions WHERE bot_id = $1) \
                      ORDER BY id DESC LIMIT $2) AS a \
      UNION \
      SELECT id FROM (SELECT id FROM matches WHERE b_version IN (SELECT id FROM versions WHERE bot_id = $1) \
                      ORDER BY id DESC LIMIT $2) AS b \
    ) AS both_sides ORDER BY id DESC LIMIT $2";

/// A match row as the API shows it.
pub fn match_json(row: &sqlx::any::AnyRow) -> Result<Value, sqlx::Error> {
    let reasons: Value = row
        .try_get::<Option<String>, _>("reasons")?
        .and_then(|r| serde_json::from_str(&r).ok())
        .unwrap_or(Value::Null);
    let participant = |p: &str| -> Result<Value, sqlx::Error> {
        Ok(json!({
            "version_id": row.try_get::<i64, _>(format!("{p}_version").as_str())?,
            "bot": row.try_get::<String, _>(format!("{p}_bot").as_str())?,
            "version": row.try_get::<i64, _>(format!("{p}_number").as_str())?,
            "rating_before": row.try_get::<Option<f64>, _>(format!("{p}_before").as_str())?,
            "rating_after": row.try_get::<Option<f64>, _>(format!("{p}_after").as_str())?,
        }))
    };
    let id: i64 = row.try_get("id")?;
    let has_replay = row.try_get::<Option<String>, _>("replay_sha256")?.is_some();
    Ok(json!({
        "id": id,
        "ladder": row.try_get::<String, _>("ladder")?,
        "kind": row.try_get::<String, _>("kind")?,
        "status": row.try_get::<String, _>("status")?,
        "created_ms": row.try_get::<i64, _>("created_ms")?,
        "started_ms": row.try_get::<Option<i64>, _>("started_ms")?,
        "finished_ms": row.try_get::<Option<i64>, _>("finished_ms")?,
        "participants": [participant("a")?, participant("b")?],
        "winner": row.try_get::<Option<i64>, _>("winner")?,
        "scores": [row.try_get::<Option<i64>, _>("score_a")?, row.try_get::<Option<i64>, _>("score_b")?],
        "reasons": reasons,
        "error": row.try_get::<Option<String>, _>("error")?,
        "attempts": row.try_get::<i64, _>("attempts")?,
        "tournament_id": row.try_get::<Option<i64>, _>("tournament_id")?,
        "replay": has_replay.then(|| format!("/api/matches/{id}/replay")),
    }))
}

/// The latest matches of a bot (any of its versions).
pub async fn recent_for_bot(state: &AppState, bot_id: i64, limit: i64) -> Result<Vec<Value>, sqlx::Error> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE m.id IN ({BOT_MATCH_IDS}) ORDER BY m.id DESC LIMIT $2"
    )))
    .bind(bot_id)
    .bind(limit)
    .fetch_all(&state.core.db.pool)
    .await?;
    rows.iter().map(match_json).collect()
}

/// Filters of `GET /api/matches`.
#[derive(serde::Deserialize)]
struct Filter {
    ladder: Option<String>,
    status: Option<String>,
    bot: Option<String>,
    before: Option<i64>,
    limit: Option<i64>,
}

/// `GET /api/matches?ladder=&status=&bot=&before=&limit=`: newest first.
async fn list(State(state): State<AppState>, Query(filter): Query<Filter>) -> ApiResult<Json<Value>> {
    let limit = filter.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError(Error::Invalid("limit must be between 1 and 200".into())));
    }
    let ladder = match filter.ladder.as_deref() {
        Some(l) => arbiter_ladder::ladders::name(arbiter_ladder::ladders::parse(l)?),
        None => String::new(),
    };
    let status = filter.status.unwrap_or_default();
    if !["", "queued", "running", "finished", "failed"].contains(&status.as_str()) {
        return Err(ApiError(Error::Invalid(
            "status is one of queued, running, finished, failed".into(),
        )));
    }
    let bot_id: i64 = match filter.bot.as_deref() {
        Some(name) => sqlx::query_scalar("SELECT id FROM bots WHERE name_key = $1")
            .bind(name.to_lowercase())
            .fetch_optional(&state.core.db.pool)
            .await?
            .ok_or_else(|| ApiError::not_found(format!("bot {name:?}")))?,
        None => 0,
    };
    let rows = filtered(&state, &ladder, &status, bot_id, filter.before.unwrap_or(0), limit).await?;
    let matches: Vec<Value> = rows.iter().map(match_json).collect::<Result<_, _>>()?;
    Ok(Json(json!({"ok": true, "matches": matches})))
}

/// Matches newest first, filtered by ladder, status and bot (empty or 0 for
/// any) and below id `before` (0 for none). Each filter given becomes a plain
/// condition the planner can use an index for; the values are always bound.
pub async fn filtered(
    state: &AppState,
    ladder: &str,
    status: &str,
    bot_id: i64,
    before: i64,
    limit: i64,
) -> Result<Vec<sqlx::any::AnyRow>, sqlx::Error> {
    let mut conditions = vec!["($1 = '' OR m.ladder = $1)"];
    conditions.push(if status.is_empty() { "$2 = ''" } else { "m.status = $2" });
    conditions.push(if bot_id != 0 {
        "m.id IN (SELECT id FROM matches WHERE a_version IN (SELECT id FROM versions WHERE bot_id = $3) \
         UNION SELECT id FROM matches WHERE b_version IN (SELECT id FROM versions WHERE bot_id = $3))"
    } else {
        "$3 = 0"
    });
    conditions.push("($4 = 0 OR m.id < $4)");
    let sql = format!(
        "{SELECT} WHERE {} ORDER BY m.id DESC LIMIT $5",
        conditions.join(" AND ")
    );
    sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(ladder)
        .bind(status)
        .bind(bot_id)
        .bind(before)
        .bind(limit)
        .fetch_all(&state.core.db.pool)
        .await
}

async fn fetch(state: &AppState, id: i64) -> ApiResult<sqlx::any::AnyRow> {
    sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT} WHERE m.id = $1")))
        .bind(id)
        .fetch_optional(&state.core.db.pool)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("match {id}")))
}

/// `GET /api/matches/{id}`.
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let row = fetch(&state, parse_id(&id)?).await?;
    Ok(Json(json!({"ok": true, "match": match_json(&row)?})))
}

/// The replay bytes of a finished match.
pub async fn replay_bytes(state: &AppState, id: i64) -> ApiResult<Vec<u8>> {
    let row = fetch(state, id).await?;
    let key: Option<String> = row.try_get("replay_sha256")?;
    let key = key.ok_or_else(|| ApiError(Error::NotFound(format!("match {id} has no replay yet"))))?;
    state
        .core
        .blobs
        .run(move |blobs| blobs.get_zstd(&key))
        .await?
        .ok_or_else(|| {
            ApiError(Error::Unavailable(format!(
                "the replay of match {id} is missing from storage"
            )))
        })
}

#[derive(serde::Deserialize)]
struct Download {
    download: Option<String>,
}

/// `GET /api/matches/{id}/replay[?download=1]`: the replay JSON.
async fn replay(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<Download>,
) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let bytes = replay_bytes(&state, id).await?;
    let disposition = if q.download.is_some() {
        format!("attachment; filename=\"arbiter-match-{id}.json\"")
    } else {
        format!("inline; filename=\"arbiter-match-{id}.json\"")
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        bytes,
    )
        .into_response())
}

/// `GET /api/matches/{id}/transcript`: Othello move transcripts, one line
/// per leg (`f5d6c3…`, `--` for a pass).
async fn transcript(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let bytes = replay_bytes(&state, id).await?;
    let replay = Replay::from_json(&bytes).map_err(|e| ApiError(Error::Internal(e.to_string())))?;
    if replay.game != "othello" {
        return Err(ApiError(Error::Invalid(
            "transcripts exist for Othello matches only".into(),
        )));
    }
    let mut text = String::new();
    for game in &replay.games {
        let line = game.record.get("transcript").and_then(Value::as_str).unwrap_or("");
        text.push_str(line);
        text.push('\n');
    }
    let disposition = format!("attachment; filename=\"arbiter-match-{id}.txt\"");
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        text,
    )
        .into_response())
}

/// A finished skirmish match's replay, or the reason it has none.
async fn skirmish_replay(state: &AppState, id: i64) -> ApiResult<Replay> {
    let bytes = replay_bytes(state, id).await?;
    let replay = Replay::from_json(&bytes).map_err(|e| ApiError(Error::Internal(e.to_string())))?;
    if replay.game != "skirmish" {
        return Err(ApiError(Error::Invalid(format!(
            "frames and training data exist for skirmish matches only; match {id} is {}",
            replay.game
        ))));
    }
    Ok(replay)
}

/// `GET /api/matches/{id}/frames?game=N`: a skirmish game (game 1 or 2,
/// default 1) as frames for viewers: the map, the start, what changed in
/// every tick, and the end (re-simulated from the replay's record).
async fn frames(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let games: Vec<&str> = query
        .iter()
        .filter(|(key, _)| key == "game")
        .map(|(_, value)| value.as_str())
        .collect();
    let game = match games.as_slice() {
        [] | ["1"] => 0,
        ["2"] => 1,
        [other] => return Err(ApiError(Error::Invalid(format!("game must be 1 or 2, not {other:?}")))),
        _ => return Err(ApiError(Error::Invalid("give game once: 1 or 2".into()))),
    };
    let replay = skirmish_replay(&state, id).await?;
    let body = tokio::task::spawn_blocking(move || {
        arbiter_referee::frames::frames(&replay, game).map(|frames| serde_json::to_vec(&frames))
    })
    .await
    .map_err(|e| ApiError(Error::Internal(e.to_string())))?
    .map_err(|e| {
        ApiError(Error::Internal(format!(
            "the replay of match {id} does not re-simulate: {e}"
        )))
    })?
    .map_err(|e| ApiError(Error::Internal(e.to_string())))?;
    Ok(([(header::CONTENT_TYPE, "application/json")], body).into_response())
}

/// `GET /api/matches/{id}/training.jsonl`: a skirmish match as training
/// data, one JSON line per game, tick and side (see `arbiter replay export
/// --jsonl`).
async fn training(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let replay = skirmish_replay(&state, id).await?;
    let lines = tokio::task::spawn_blocking(move || arbiter_referee::skirmish::training_lines(&replay))
        .await
        .map_err(|e| ApiError(Error::Internal(e.to_string())))?
        .map_err(|e| {
            ApiError(Error::Internal(format!(
                "the replay of match {id} does not re-simulate: {e}"
            )))
        })?;
    let mut body = lines.join("\n");
    body.push('\n');
    let disposition = format!("attachment; filename=\"arbiter-match-{id}.jsonl\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// `GET /api/matches/{id}/logs`: what the caller's bot wrote to stderr in
/// this match. Only a participating bot's owner may read it.
async fn logs(State(state): State<AppState>, Path(id): Path<String>, caller: Caller) -> ApiResult<Json<Value>> {
    let id = parse_id(&id)?;
    let owners = sqlx::query(
        "SELECT ab.owner_id, bb.owner_id FROM matches m \
         JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
         JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id WHERE m.id = $1",
    )
    .bind(id)
    .fetch_optional(&state.core.db.pool)
    .await?
    .ok_or_else(|| ApiError::not_found(format!("match {id}")))?;
    let mine: Vec<i64> = [0i64, 1]
        .into_iter()
        .filter(|&p| owners.try_get::<i64, _>(p as usize).ok() == Some(caller.user_id))
        .collect();
    if mine.is_empty() {
        return Err(ApiError(Error::Forbidden(
            "logs are shown only to the owners of the bots in the match".into(),
        )));
    }
    let rows =
        sqlx::query("SELECT participant, game, stderr FROM match_logs WHERE match_id = $1 ORDER BY participant, game")
            .bind(id)
            .fetch_all(&state.core.db.pool)
            .await?;
    let mut logs = Vec::new();
    for row in rows {
        let participant: i64 = row.try_get(0)?;
        if mine.contains(&participant) {
            logs.push(json!({"participant": participant, "game": row.try_get::<i64, _>(1)?, "stderr": row.try_get::<String, _>(2)?}));
        }
    }
    Ok(Json(json!({"ok": true, "logs": logs})))
}
