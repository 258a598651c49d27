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
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, create))
        .routes(routes!(detail))
}

/// The body of a new tournament: the request and the session's CSRF token.
#[derive(serde::Deserialize)]
struct NewTournament {
    #[serde(flatten)]
    request: TournamentRequest,
    #[serde(default)]
    csrf: Option<String>,
}

/// The body of a new tournament as documented (what [`NewTournament`]
/// reads).
#[derive(ToSchema)]
#[schema(as = NewTournament)]
#[expect(dead_code, reason = "a schema of what the handler reads, never built")]
struct NewTournamentDoc {
    /// The tournament's name.
    name: String,
    /// The ladder, e.g. `othello:std`.
    ladder: String,
    /// The bots, by name.
    bots: Vec<String>,
    /// Matches each pair plays (default 1).
    matches_per_pair: Option<i64>,
    /// The session's CSRF token (not needed with an API token).
    csrf: Option<String>,
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
    request_body = NewTournamentDoc,
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
    let created = tournaments::create(&state.core, caller.user_id, &body.request).await?;
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
    let id = crate::api::matches::parse_id(&id)?;
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
