//! Ladders and their leaderboards: the JSON face of
//! [`arbiter_ladder::leaderboard`].

use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::ladders;
use arbiter_ladder::leaderboard::{self, Sort};
use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ladders", get(list))
        .route("/ladders/{ladder}/leaderboard", get(leaderboard))
}

/// `GET /api/ladders`: every ladder with its number of active versions and
/// its time control (and the longer ones a challenge may ask for).
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let ladders = leaderboard::ladders(&state.core.db).await?;
    Ok(Json(json!({"ok": true, "ladders": ladders})))
}

/// Paging of a list.
#[derive(serde::Deserialize)]
pub struct Page {
    /// Rows to return (1–500, default 100).
    pub limit: Option<i64>,
    /// Rows to skip.
    pub offset: Option<i64>,
    /// `rating` (the default) or `conservative`.
    pub sort: Option<String>,
}

/// `GET /api/ladders/{ladder}/leaderboard?limit=&offset=&sort=`.
async fn leaderboard(
    State(state): State<AppState>,
    Path(ladder): Path<String>,
    Query(page): Query<Page>,
) -> ApiResult<Json<Value>> {
    let variant = ladders::parse(&ladder)?;
    let name = ladders::name(variant);
    let limit = page.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError(Error::Invalid("limit must be between 1 and 500".into())));
    }
    let offset = page.offset.unwrap_or(0).max(0);
    let sort = Sort::parse(page.sort.as_deref())?;
    let entries = leaderboard::rows(&state.core.db, &name, sort, limit, offset).await?;
    Ok(Json(
        json!({"ok": true, "ladder": name, "sort": sort.as_str(), "entries": entries}),
    ))
}
