//! Ladders and their leaderboards.

use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_games::Variant;
use arbiter_ladder::error::Error;
use arbiter_ladder::ladders;
use arbiter_ladder::ratings::PROVISIONAL_RD;
use axum::extract::{Path, Query, State};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use sqlx::Row;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/ladders", get(list))
        .route("/ladders/{ladder}/leaderboard", get(leaderboard))
}

/// `GET /api/ladders`: every ladder with its number of active versions and
/// its time control (and the longer ones a challenge may ask for).
async fn list(State(state): State<AppState>) -> ApiResult<Json<Value>> {
    let mut out = Vec::new();
    let times = ladders::time_controls(&state.core.db).await?;
    for variant in Variant::ALL {
        let name = ladders::name(variant);
        let active: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM version_ladders l JOIN versions v ON v.id = l.version_id \
             WHERE l.ladder = $1 AND v.status = 'active'",
        )
        .bind(&name)
        .fetch_one(&state.core.db.pool)
        .await?;
        let (game, mode) = name.split_once(':').unwrap_or((name.as_str(), ""));
        let time = times
            .get(&name)
            .copied()
            .unwrap_or_else(|| ladders::TimeControl::default_for(variant));
        let longer: Vec<String> = variant.longer_budgets().iter().map(ToString::to_string).collect();
        out.push(json!({
            "name": name, "game": game, "mode": mode, "active_bots": active,
            "time_control": time, "challenge_time_controls": longer,
        }));
    }
    Ok(Json(json!({"ok": true, "ladders": out})))
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

/// How a leaderboard is ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// Established versions by rating, then provisional ones (deviation ≥
    /// 110) by rating.
    #[default]
    Rating,
    /// By conservative rating, rating − 2·deviation: the value the version
    /// is 97.5% sure to be above, so an uncertain version ranks low until
    /// its matches show otherwise.
    Conservative,
}

impl Sort {
    /// `rating` or `conservative`; anything else is a client error.
    pub fn parse(text: Option<&str>) -> Result<Sort, ApiError> {
        match text {
            None | Some("" | "rating") => Ok(Sort::Rating),
            Some("conservative") => Ok(Sort::Conservative),
            Some(other) => Err(ApiError(Error::Invalid(format!(
                "sort must be rating or conservative, not {other:?}"
            )))),
        }
    }

    /// The query value.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Rating => "rating",
            Sort::Conservative => "conservative",
        }
    }
}

/// One leaderboard's rows, best first as `sort` says.
pub async fn rows(
    state: &AppState,
    ladder: &str,
    sort: Sort,
    limit: i64,
    offset: i64,
) -> Result<Vec<Value>, sqlx::Error> {
    // `$4`: the provisional deviation, which only the default order uses.
    let order = match sort {
        Sort::Rating => "CASE WHEN r.deviation >= $4 THEN 1 ELSE 0 END, r.rating DESC, r.version_id",
        Sort::Conservative => "r.rating - 2 * r.deviation DESC, r.version_id",
    };
    let sql = format!(
        "SELECT r.version_id, b.name, u.name, v.number, r.rating, r.deviation, r.wins, r.draws, r.losses, r.last_played_ms \
         FROM ratings r \
         JOIN versions v ON v.id = r.version_id \
         JOIN bots b ON b.id = v.bot_id \
         JOIN users u ON u.id = b.owner_id \
         WHERE r.ladder = $1 AND v.status = 'active' \
         ORDER BY {order} \
         LIMIT $2 OFFSET $3"
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(ladder)
        .bind(limit)
        .bind(offset);
    if sort == Sort::Rating {
        query = query.bind(PROVISIONAL_RD);
    }
    let rows = query.fetch_all(&state.core.db.pool).await?;
    let mut out = Vec::with_capacity(rows.len());
    for (i, row) in rows.iter().enumerate() {
        let rating: f64 = row.try_get(4)?;
        let deviation: f64 = row.try_get(5)?;
        let (wins, draws, losses): (i64, i64, i64) = (row.try_get(6)?, row.try_get(7)?, row.try_get(8)?);
        out.push(json!({
            "rank": offset + i as i64 + 1,
            "version_id": row.try_get::<i64, _>(0)?,
            "bot": row.try_get::<String, _>(1)?,
            "owner": row.try_get::<String, _>(2)?,
            "version": row.try_get::<i64, _>(3)?,
            "rating": rating,
            "deviation": deviation,
            "low": rating - 2.0 * deviation,
            "high": rating + 2.0 * deviation,
            "conservative": rating - 2.0 * deviation,
            "provisional": deviation >= PROVISIONAL_RD,
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "matches": wins + draws + losses,
            "last_played_ms": row.try_get::<Option<i64>, _>(9)?,
        }));
    }
    Ok(out)
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
    let entries = rows(&state, &name, sort, limit, offset).await?;
    Ok(Json(
        json!({"ok": true, "ladder": name, "sort": sort.as_str(), "entries": entries}),
    ))
}
