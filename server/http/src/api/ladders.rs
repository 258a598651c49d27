//! Ladders and their leaderboards: the JSON face of
//! [`arbiter_ladder::leaderboard`].

use crate::api::ApiQuery;
use crate::api::True;
use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::ladders;
use arbiter_ladder::leaderboard::{self, LadderSummary, LeaderboardRow, Sort};
use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(list)).routes(routes!(leaderboard))
}

/// A ladder's canonical name, one of the ladders the server runs (the
/// schema of every `ladder` parameter and body property). The game alone
/// (`othello` for `othello:std`) and other letter cases are read too.
pub struct LadderName;

impl utoipa::PartialSchema for LadderName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(ladders::names()))
            .description(Some(
                "a ladder's canonical name; the game alone (`othello` for `othello:std`) and other letter cases are read too",
            ))
            .into()
    }
}

impl ToSchema for LadderName {}

/// Any ladder's canonical name, the remote bots' ladders (`remote:…`)
/// included: the schema of a leaderboard's `ladder`.
pub struct AnyLadderName;

impl utoipa::PartialSchema for AnyLadderName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .enum_values(Some(ladders::all_names()))
            .description(Some(
                "a ladder's canonical name: a fuel-clock ladder (`othello:std`) or a remote bots' ladder \
                 (`remote:othello:std`); the game alone and other letter cases are read too",
            ))
            .into()
    }
}

impl ToSchema for AnyLadderName {}

/// `GET /api/ladders`.
#[derive(Debug, Serialize, ToSchema)]
pub struct LadderList {
    /// `true`.
    pub ok: True,
    /// Every ladder.
    pub ladders: Vec<LadderSummary>,
}

/// The order of a leaderboard, as `?sort=` names it: exactly one of these
/// words (anything else, the empty word included, is a 400).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum SortName {
    /// By the rating fitted to the ladder's whole rated log (`fitted`, the
    /// headline the site shows in bold), the default; versions without a
    /// rated match last.
    Fitted,
    /// By Glicko-2's rating − 2·RD.
    Conservative,
    /// By the Glicko-2 rating alone.
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

impl From<SortName> for Sort {
    fn from(name: SortName) -> Sort {
        match name {
            SortName::Fitted => Sort::Fitted,
            SortName::Rating => Sort::Rating,
            SortName::Conservative => Sort::Conservative,
        }
    }
}

impl From<Sort> for SortName {
    fn from(sort: Sort) -> SortName {
        match sort {
            Sort::Fitted => SortName::Fitted,
            Sort::Rating => SortName::Rating,
            Sort::Conservative => SortName::Conservative,
        }
    }
}

/// The most rows a leaderboard answers at once.
pub const MAX_LIMIT: i64 = 500;

/// Paging and order of a leaderboard (any other parameter is refused).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Page {
    /// Rows to return (1–[`MAX_LIMIT`], default 100).
    pub limit: Option<i64>,
    /// Rows to skip (0–[`MAX_OFFSET`], default 0).
    pub offset: Option<i64>,
    /// The order, a word of [`SortName`]: `fitted` (the default),
    /// `conservative` or `rating`.
    pub sort: Option<String>,
}

/// `GET /api/ladders/{ladder}/leaderboard?limit=&offset=&sort=`.
#[utoipa::path(get, path = "/ladders/{ladder}/leaderboard", tag = "ladders",
    summary = "A leaderboard: rank, the fitted rating ± its 95% interval (the headline, and the default order), Glicko-2 rating ± 2·RD and rating − 2·RD, W/D/L, matches, provisional",
    params(
        ("ladder" = AnyLadderName, Path, description = "e.g. othello:std, or remote:othello:std for the remote bots' board"),
        ("sort" = Option<SortName>, Query, description = "fitted (the default: by `fitted`, the rating fitted to the ladder's whole rated log, versions without a rated match last), conservative (by Glicko-2 rating − 2·RD) or rating (by Glicko-2 rating alone); provisional versions stand in place in every order, marked `provisional`"),
        ("limit" = Option<i64>, Query, description = "rows, default 100", minimum = 1, maximum = 500),
        ("offset" = Option<i64>, Query, description = "rows to skip, default 0", minimum = 0, maximum = 1000000000),
    ),
    responses(
        (status = 200, description = "the leaderboard", body = Leaderboard),
    ))]
async fn leaderboard(
    State(state): State<AppState>,
    Path(ladder): Path<String>,
    ApiQuery(page): ApiQuery<Page>,
) -> ApiResult<Json<Leaderboard>> {
    let name = ladders::canonical(&ladder)?;
    let limit = crate::api::in_range("limit", page.limit, 100, 1..=MAX_LIMIT)?;
    // Ranks count from `offset`: a bound keeps them far from overflowing.
    let offset = crate::api::in_range("offset", page.offset, 0, 0..=MAX_OFFSET)?;
    let sort = match page.sort.as_deref() {
        None => Sort::default(),
        Some("fitted") => SortName::Fitted.into(),
        Some("rating") => SortName::Rating.into(),
        Some("conservative") => SortName::Conservative.into(),
        // The empty word too: it is not in the enum.
        Some(other) => {
            return Err(ApiError(Error::Invalid(format!(
                "sort must be fitted, conservative or rating, not {other:?}"
            ))));
        }
    };
    let entries = leaderboard::rows(&state.core.db, &name, sort, limit, offset).await?;
    Ok(Json(Leaderboard {
        ok: True,
        ladder: name,
        sort: sort.into(),
        entries,
    }))
}
