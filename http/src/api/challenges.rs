//! `POST /api/challenges`: the JSON face of [`arbiter_ladder::challenges`].

use crate::error::ApiResult;
use crate::extract::JsonBody;
use crate::extract::sent_csrf;
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::challenges::{self, ChallengeRequest};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::routing::post;
use axum::{Json, Router};
use serde_json::{Value, json};

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/challenges", post(create))
}

/// The body of a challenge: the request and the session's CSRF token.
#[derive(serde::Deserialize)]
struct Challenge {
    #[serde(flatten)]
    request: ChallengeRequest,
    #[serde(default)]
    csrf: Option<String>,
}

/// `POST /api/challenges` {bot, opponent, ladder, time?}: queues a match
/// ahead of ranked ones, with the ladder's time control or a longer one it
/// offers; 201 with its id.
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Challenge>,
) -> ApiResult<(StatusCode, Json<Value>)> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let id = challenges::create(&state.core, caller.user_id, &body.request).await?;
    Ok((
        StatusCode::CREATED,
        Json(json!({"ok": true, "match": {"id": id, "url": format!("/api/matches/{id}")}})),
    ))
}
