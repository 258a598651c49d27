//! Round-robin tournaments with a crosstable: the JSON face of
//! [`arbiter_ladder::tournaments`].

use crate::api::{ErrorResponse, True};
use crate::error::{ApiError, ApiResult};
use crate::extract::JsonBody;
use crate::extract::sent_csrf;
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::model::TournamentId;
use arbiter_ladder::tournaments::{self, Progress, Standing, Tournament, TournamentRequest};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Serialize;
use std::collections::BTreeMap;
use utoipa::{PartialSchema, ToSchema};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(detail))
}

/// The body of a new tournament: the request and the session's CSRF
/// token. Any other property is refused.
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
struct NewTournament {
    /// The tournament's name, 1 to 80 characters, not all spaces.
    #[schema(min_length = 1, max_length = 80, pattern = "\\S")]
    name: String,
    /// The ladder, e.g. `othello:std`.
    #[schema(value_type = crate::api::ladders::LadderName)]
    ladder: String,
    /// The bots, by name: 2 to 16 different ones.
    #[schema(schema_with = bot_names)]
    bots: Vec<String>,
    /// Matches each pair plays (default 1).
    #[serde(default, deserialize_with = "crate::api::optional_integer")]
    #[schema(minimum = 1, maximum = 10)]
    matches_per_pair: Option<i64>,
    /// The session's CSRF token (not needed with an API token).
    #[serde(default)]
    csrf: Option<String>,
}

/// The schema of [`NewTournament::bots`]: 2 to 16 different names.
fn bot_names() -> utoipa::openapi::schema::Array {
    utoipa::openapi::schema::ArrayBuilder::new()
        .items(String::schema())
        .min_items(Some(2))
        .max_items(Some(tournaments::MAX_BOTS))
        .unique_items(true)
        .description(Some("The bots, by name: 2 to 16 different ones."))
        .build()
}

/// A new tournament: its id and how many matches it queued.
#[derive(Debug, Serialize, ToSchema)]
pub struct CreatedTournament {
    /// The tournament's id.
    pub id: i64,
    /// Matches queued.
    pub matches: i64,
}

/// `POST /api/tournaments`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentCreated {
    /// `true`.
    pub ok: True,
    /// The tournament.
    pub tournament: CreatedTournament,
}

/// `GET /api/tournaments`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentList {
    /// `true`.
    pub ok: True,
    /// The newest tournaments.
    pub tournaments: Vec<Tournament>,
}

/// `GET /api/tournaments/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct TournamentDetail<'a> {
    /// `true`.
    pub ok: True,
    /// Its progress.
    pub tournament: Progress,
    /// Points per bot, best first.
    pub standings: Vec<Standing>,
    /// `crosstable[a][b]`: points of `a` against `b`.
    pub crosstable: BTreeMap<&'a str, BTreeMap<&'a str, f64>>,
}

/// `POST /api/tournaments` {name, ladder, bots, matches_per_pair}: every pair
/// of the bots' active versions plays `matches_per_pair` matches.
#[utoipa::path(post, path = "/tournaments", tag = "tournaments", summary = "A round-robin tournament",
    security(("bearer" = []), ("session" = [])),
    request_body = NewTournament,
    responses(
        (status = 201, description = "created; its matches are queued", body = TournamentCreated),
        (status = 403, response = ErrorResponse),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<NewTournament>,
) -> ApiResult<(StatusCode, Json<TournamentCreated>)> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let request = TournamentRequest {
        name: body.name,
        ladder: body.ladder,
        bots: body.bots,
        matches_per_pair: body.matches_per_pair.unwrap_or(1),
    };
    let created = tournaments::create(&state.core, caller.user_id, &request).await?;
    Ok((
        StatusCode::CREATED,
        Json(TournamentCreated {
            ok: True,
            tournament: CreatedTournament {
                id: created.id,
                matches: created.matches,
            },
        }),
    ))
}

/// `GET /api/tournaments`: the newest tournaments.
#[utoipa::path(get, path = "/tournaments", tag = "tournaments", summary = "Tournaments",
    responses(
        (status = 200, description = "the newest tournaments", body = TournamentList),
    ))]
async fn list(State(state): State<AppState>) -> ApiResult<Json<TournamentList>> {
    let tournaments = tournaments::list(&state.core.db).await?;
    Ok(Json(TournamentList { ok: True, tournaments }))
}

/// `GET /api/tournaments/{id}`: entries, standings and the crosstable
/// (`crosstable[a][b]` = points of `a` against `b`, from finished matches).
#[utoipa::path(get, path = "/tournaments/{id}", tag = "tournaments", summary = "Standings and crosstable",
    params(("id" = i64, Path, description = "tournament id", minimum = 1)),
    responses(
        (status = 200, description = "the tournament", body = TournamentDetail),
    ))]
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let id = crate::api::path_id("tournament", &id)?;
    let detail = tournaments::detail(&state.core.db, TournamentId(id))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("tournament {id}")))?;
    Ok(Json(TournamentDetail {
        ok: True,
        tournament: detail.progress(),
        standings: detail.standings(),
        crosstable: detail.crosstable(),
    })
    .into_response())
}
