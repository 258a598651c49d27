//! Round-robin tournaments with a crosstable: the JSON face of
//! [`arbiter_ladder::tournaments`].

use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::extract::sent_csrf;
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::model::TournamentId;
use arbiter_ladder::tournaments::{self, TournamentRequest};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

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

/// `GET /api/tournaments`: the newest tournaments.
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let tournaments = tournaments::list(&state.core.db).await?;
    Ok(Json(json!({"ok": true, "tournaments": tournaments})))
}

/// `GET /api/tournaments/{id}`: entries, standings and the crosstable
/// (`crosstable[a][b]` = points of `a` against `b`, from finished matches).
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<Value>> {
    let id = crate::api::matches::parse_id(&id)?;
    let detail = tournaments::detail(&state.core.db, TournamentId(id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("tournament {id}")))?;
    Ok(Json(json!({
        "ok": true,
        "tournament": detail.progress(),
        "standings": detail.standings(),
        "crosstable": detail.crosstable(),
    })))
}
