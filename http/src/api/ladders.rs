//! Ladders and their leaderboards: the JSON face of
//! [`arbiter_ladder::leaderboard`].

use crate::api::True;
use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::ladders;
use arbiter_ladder::leaderboard::{self, LadderSummary, LeaderboardRow, Sort};
use axum::Json;
use axum::extract::{Path, Query, State};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(leaderboard))
}

/// `GET /api/ladders`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LadderList {
    /// `true`.
    pub ok: True,
    /// Every ladder.
    pub ladders: Vec<LadderSummary>,
}

/// The order of a leaderboard.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortName {
    /// By rating − 2·RD, the default; provisional versions stand in place,
    /// marked.
    Conservative,
    /// By rating alone; provisional versions stand in place, marked.
    Rating,
}

/// `GET /api/ladders/{ladder}/leaderboard`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Leaderboard {
    /// `true`.
    pub ok: True,
    /// The ladder's canonical name.
    pub ladder: String,
    /// The order.
    pub sort: SortName,
    /// The rows.
    pub entries: Vec<LeaderboardRow>,
}

/// `GET /api/ladders`: every ladder with its number of active versions and
/// its time control (and the longer ones a challenge may ask for).
#[utoipa::path(get, path = "/ladders", tag = "ladders",
    summary = "Every ladder, with its time control and the longer ones a challenge may choose",
    responses(
        (status = 200, description = "the ladders", body = LadderList),
    ))]
async fn list(State(state): State<AppState>) -> ApiResult<Json<LadderList>> {
    let ladders = leaderboard::ladders(&state.core.db).await?;
    Ok(Json(LadderList { ok: True, ladders }))
}

/// The most rows a leaderboard may skip.
pub const MAX_OFFSET: i64 = 1_000_000_000;

/// Paging of a list.
#[derive(serde::Deserialize)]
pub struct Page {
    /// Rows to return (1–500, default 100).
    pub limit: Option<i64>,
    /// Rows to skip.
    pub offset: Option<i64>,
    /// `conservative` (the default) or `rating`.
    pub sort: Option<String>,
}

/// `GET /api/ladders/{ladder}/leaderboard?limit=&offset=&sort=`.
#[utoipa::path(get, path = "/ladders/{ladder}/leaderboard", tag = "ladders",
    summary = "A leaderboard: rank, rating ± 2·RD, conservative rating (rating − 2·RD), W/D/L, matches, provisional",
    params(
        ("ladder" = String, Path, description = "e.g. othello:std"),
        ("sort" = Option<SortName>, Query, description = "conservative (the default: by rating − 2·RD) or rating (by rating alone); provisional versions stand in place in either, marked `provisional`"),
        ("limit" = Option<i64>, Query, description = "rows, default 100", minimum = 1, maximum = 500),
        ("offset" = Option<i64>, Query, description = "rows to skip, default 0", minimum = 0, maximum = 1000000000),
    ),
    responses(
        (status = 200, description = "the leaderboard", body = Leaderboard),
    ))]
async fn leaderboard(
    State(state): State<AppState>,
    Path(ladder): Path<String>,
    Query(page): Query<Page>,
) -> ApiResult<Json<Leaderboard>> {
    let variant = ladders::parse(&ladder)?;
    let name = ladders::name(variant);
    let limit = page.limit.unwrap_or(100);
    if !(1..=500).contains(&limit) {
        return Err(ApiError(Error::Invalid("limit must be between 1 and 500".into())));
    }
    let offset = page.offset.unwrap_or(0).max(0);
    // Ranks count from `offset`: a bound keeps them far from overflowing.
    if offset > MAX_OFFSET {
        return Err(ApiError(Error::Invalid(format!("offset must be at most {MAX_OFFSET}"))));
    }
    let sort = Sort::parse(page.sort.as_deref())?;
    let entries = leaderboard::rows(&state.core.db, &name, sort, limit, offset).await?;
    let sort = match sort {
        Sort::Rating => SortName::Rating,
        Sort::Conservative => SortName::Conservative,
    };
    Ok(Json(Leaderboard {
        ok: True,
        ladder: name,
        sort,
        entries,
    }))
}
