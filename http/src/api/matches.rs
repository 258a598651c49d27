//! Matches: lists, details, replays (JSON and Othello transcript) and the
//! owner-only logs.

use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::error::Error;
use arbiter_ladder::matches::{self, MatchFilter};
use arbiter_ladder::model::{BotId, MatchId, MatchStatus, UserId};
use arbiter_referee::Replay;
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

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

/// `value` as JSON: how the typed rows of the ladder become the API's
/// bodies.
fn to_json(value: &impl serde::Serialize) -> ApiResult<Value> {
    serde_json::to_value(value).map_err(|e| ApiError(Error::Internal(e.to_string())))
}

/// The latest `limit` matches of a bot (any of its versions), newest first,
/// each as `GET /api/matches/{id}` shows it.
pub async fn recent_for_bot(state: &AppState, bot_id: i64, limit: i64) -> ApiResult<Vec<Value>> {
    let recent = matches::recent_for_bot(&state.core.db, BotId(bot_id), limit).await?;
    recent.iter().map(to_json).collect()
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
        Some(l) => Some(arbiter_ladder::ladders::name(arbiter_ladder::ladders::parse(l)?)),
        None => None,
    };
    let status = match filter.status.as_deref() {
        None | Some("") => None,
        Some(status) => Some(status.parse::<MatchStatus>().map_err(|_| {
            ApiError(Error::Invalid(
                "status is one of queued, running, finished, failed".into(),
            ))
        })?),
    };
    let bot = match filter.bot.as_deref() {
        Some(name) => Some(matches::bot_named(&state.core.db, name).await?),
        None => None,
    };
    let filter = MatchFilter {
        ladder,
        status,
        bot,
        tournament: None,
        before: filter.before.filter(|&before| before != 0).map(MatchId),
        limit,
    };
    let list = matches::list(&state.core.db, &filter).await?;
    Ok(Json(json!({"ok": true, "matches": to_json(&list)?})))
}

/// `GET /api/matches/{id}`.
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let id = MatchId(parse_id(&id)?);
    let found = matches::find(&state.core.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("match {id}")))?;
    Ok(Json(json!({"ok": true, "match": to_json(&found)?})))
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
    let bytes = matches::replay_bytes(&state.core, MatchId(id)).await?;
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
    let bytes = matches::replay_bytes(&state.core, MatchId(id)).await?;
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
    let bytes = matches::replay_bytes(&state.core, MatchId(id)).await?;
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
    let id = MatchId(id);
    let mine = matches::sides_owned_by(&state.core.db, id, UserId(caller.user_id)).await?;
    if mine.is_empty() {
        return Err(ApiError(Error::Forbidden(
            "logs are shown only to the owners of the bots in the match".into(),
        )));
    }
    let logs = matches::logs(&state.core.db, id, &mine).await?;
    Ok(Json(json!({"ok": true, "logs": to_json(&logs)?})))
}
