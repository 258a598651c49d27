//! `POST /api/challenges`: the JSON face of [`arbiter_ladder::challenges`].

use crate::api::{ErrorResponse, True};
use crate::error::ApiResult;
use crate::extract::JsonBody;
use crate::extract::sent_csrf;
use crate::server::AppState;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::challenges::{self, ChallengeRequest};
use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(create))
}

/// The body of a challenge: the request and the session's CSRF token.
/// Any other property is refused.
#[derive(serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = ChallengeRequest)]
struct Challenge {
    /// The caller's bot.
    bot: String,
    /// The bot challenged.
    opponent: String,
    /// The ladder, e.g. `othello:std`, or a remote ladder
    /// (`remote:othello:std`) for remote and agent bots.
    #[schema(value_type = crate::api::ladders::AnyLadderName)]
    ladder: String,
    /// `ladder` (default) or one of the ladder's challenge_time_controls,
    /// MOVE_MS/BANK_MS, e.g. 10000/60000.
    #[serde(default)]
    #[schema(schema_with = time_controls)]
    time: Option<String>,
    /// The session's CSRF token (not needed with an API token).
    #[serde(default)]
    csrf: Option<String>,
}

/// The schema of [`Challenge::time`]: `ladder` or a longer time control
/// some ladder offers (which ones each ladder offers, `GET /api/ladders`
/// lists; another is a 400).
fn time_controls() -> utoipa::openapi::schema::Object {
    let mut words = vec!["ladder".to_owned()];
    for variant in arbiter_games::Variant::ALL {
        for budget in variant.longer_budgets() {
            let word = budget.to_string();
            if !words.contains(&word) {
                words.push(word);
            }
        }
    }
    utoipa::openapi::schema::ObjectBuilder::new()
        .schema_type(utoipa::openapi::schema::Type::String)
        .enum_values(Some(words))
        .description(Some(
            "`ladder` (default) or one of the ladder's challenge_time_controls, MOVE_MS/BANK_MS, e.g. 10000/60000",
        ))
        .build()
}

/// The queued match.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeMatch {
    /// The match's id.
    pub id: i64,
    /// Where to follow it: `/api/matches/{id}`.
    pub url: String,
}

/// `POST /api/challenges`: the queued match.
#[derive(Debug, Serialize, ToSchema)]
pub struct ChallengeCreated {
    /// `true`.
    pub ok: True,
    /// The match.
    #[serde(rename = "match")]
    pub match_: ChallengeMatch,
}

/// `POST /api/challenges` {bot, opponent, ladder, time?}: queues a match
/// ahead of ranked ones, with the ladder's time control or a longer one it
/// offers; 201 with its id.
#[utoipa::path(post, path = "/challenges", tag = "matches",
    summary = "Challenge another bot with one of yours; jumps the queue",
    security(("bearer" = []), ("session" = [])),
    request_body = Challenge,
    responses(
        (status = 201, description = "queued", body = ChallengeCreated),
        (status = 403, response = ErrorResponse),
    ))]
async fn create(
    State(state): State<AppState>,
    caller: Caller,
    headers: HeaderMap,
    JsonBody(body): JsonBody<Challenge>,
) -> ApiResult<(StatusCode, Json<ChallengeCreated>)> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let request = ChallengeRequest {
        bot: body.bot,
        opponent: body.opponent,
        ladder: body.ladder,
        time: body.time,
    };
    let id = challenges::create(&state.core, caller.user_id, &request).await?;
    Ok((
        StatusCode::CREATED,
        Json(ChallengeCreated {
            ok: True,
            match_: ChallengeMatch {
                id,
                url: format!("/api/matches/{id}"),
            },
        }),
    ))
}
