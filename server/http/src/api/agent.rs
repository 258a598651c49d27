//! The agent API (FlipSight's, `docs/spec/remote.md`): an agent bot's
//! connector calls `POST /api/agent` with its bot token and an `action`,
//! and listens to `GET /api/agent/stream`. The hall
//! ([`arbiter_ladder::agent::Hall`]) holds the matches; this module reads
//! requests and writes answers in the seed's shapes: every answer, refusals
//! included, carries `server_now_ms`, and a refusal is
//! `{"error": …, "ok": false, "server_now_ms": …}` in the seed's words.

use crate::api::False;
use crate::error::ApiError;
use crate::server::AppState;
use arbiter_games::othello::Mode;
use arbiter_ladder::agent::{AgentBot, Environment, Hall, Target};
use arbiter_ladder::error::Error;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::convert::Infallible;
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(action)).routes(routes!(stream))
}

/// A refusal of the agent API: the API's refusal with the server's time.
#[derive(Debug, Serialize, ToSchema)]
pub struct AgentRefusal {
    /// Why, in the seed's words (`stale_revision`, `not_your_turn`,
    /// `illegal_move`, `invalid bot credential`, …).
    pub error: String,
    /// `false`.
    pub ok: False,
    /// The server's clock, Unix milliseconds.
    pub server_now_ms: i64,
}

/// An error answered in the agent API's shape.
struct AgentError {
    error: ApiError,
    now: i64,
}

impl IntoResponse for AgentError {
    fn into_response(self) -> Response {
        let error = self.error.to_string();
        // The API's status, headers (Retry-After) and logging; the body
        // gains the server's time.
        let (parts, _) = self.error.into_response().into_parts();
        let body = AgentRefusal {
            error,
            ok: False,
            server_now_ms: self.now,
        };
        (parts, Json(body)).into_response()
    }
}

type AgentResult<T> = Result<T, AgentError>;

/// The bot whose token the request carries: 401 without one, or for a
/// token that is not a live bot token (a user's API token included).
async fn agent_bot(state: &AppState, headers: &HeaderMap) -> Result<AgentBot, Error> {
    let token = match crate::extract::bearer_token(headers) {
        Some(Ok(token)) => token,
        Some(Err(_)) | None => {
            return Err(Error::Unauthenticated(
                "invalid bot credential: send the bot token as `Authorization: Bearer <bot token>`".into(),
            ));
        }
    };
    state.core.agents.authenticate(&state.core, token).await
}

/// What `agent_poll`'s `environment` may say.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentBody {
    /// The connector's CPU.
    #[schema(max_length = 120)]
    cpu: Option<String>,
    /// Its operating system.
    #[schema(max_length = 120)]
    os: Option<String>,
    /// The engine's name.
    #[schema(max_length = 120)]
    engine: Option<String>,
    /// Practising: out of automatic matching, and its matches meanwhile
    /// are unrated.
    practice: Option<bool>,
}

/// A move: a square number (`-1` passes), or a name (`d3`, `D3`, `j10`,
/// `J0`, `pass`, `PA`, `PS`, `--`).
#[derive(Debug, Deserialize, ToSchema)]
#[serde(untagged)]
pub enum MoveBody {
    /// A square number, `0..size²`, or `-1` to pass.
    Square(i64),
    /// A square's name or a pass's.
    Name(String),
}

/// The body of `POST /api/agent`: the `action` and its fields.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(tag = "action", rename_all = "snake_case", deny_unknown_fields)]
pub enum AgentRequest {
    /// The bots, this bot's matches, and itself; records `environment`.
    AgentPoll {
        /// What the connector runs on, and whether it practises.
        environment: Option<EnvironmentBody>,
    },
    /// Challenges a bot (by id or name) to a match of `game_mode`.
    AgentChallenge {
        /// The bot challenged.
        #[schema(minimum = 1)]
        target_id: Option<i64>,
        /// Or its name.
        target_name: Option<String>,
        /// `std` (the default), `anti`, `octagon`, `grand` or `reversi`.
        game_mode: Option<String>,
    },
    /// Accepts a pending challenge where this bot is `bot_b`.
    AgentAccept {
        /// The match.
        match_id: i64,
    },
    /// Declines it.
    AgentReject {
        /// The match.
        match_id: i64,
    },
    /// Plays a move in one leg, computed for `revision`.
    AgentMove {
        /// The match.
        match_id: i64,
        /// `0` or `1`.
        #[schema(minimum = 0, maximum = 1)]
        leg: i64,
        /// The leg's revision the move was computed for.
        #[schema(minimum = 0)]
        revision: i64,
        /// The move.
        #[serde(rename = "move")]
        #[schema(rename = "move")]
        square: MoveBody,
        /// Games against people only (not served here): refused.
        round_no: Option<i64>,
        /// Games against people only (not served here): refused.
        room_created_at: Option<String>,
    },
}

/// The actions, as the seed names them.
const ACTIONS: [&str; 5] = [
    "agent_poll",
    "agent_challenge",
    "agent_accept",
    "agent_reject",
    "agent_move",
];

/// Reads the body as the seed does: `JSON object required`, `unknown
/// action`, then the action's fields (400 naming what is wrong).
fn read_request(body: &[u8]) -> Result<AgentRequest, Error> {
    let value: Value = serde_json::from_slice(body).map_err(|_| Error::Invalid("JSON object required".into()))?;
    let Some(object) = value.as_object() else {
        return Err(Error::Invalid("JSON object required".into()));
    };
    let known = object
        .get("action")
        .and_then(Value::as_str)
        .is_some_and(|action| ACTIONS.contains(&action));
    if !known {
        return Err(Error::Invalid(format!(
            "unknown action: `action` is one of {}",
            ACTIONS.join(", ")
        )));
    }
    serde_json::from_value(value).map_err(|e| Error::Invalid(e.to_string()))
}

/// `POST /api/agent`: one action of an agent bot (FlipSight's agent API,
/// field for field). Every answer carries `server_now_ms`.
#[utoipa::path(post, path = "/agent", tag = "agent",
    summary = "The agent API: an agent bot polls, challenges, accepts, rejects and moves (Bearer: its bot token)",
    security(("bot_token" = [])),
    request_body(content = AgentRequest, content_type = "application/json"),
    responses(
        (status = 200, description = "done: `agent_poll` answers bots, matches, me, bot; `agent_challenge` the \
            match_id; the others the match's id, status and bots", body = Object),
        (status = 400, description = "not a JSON object, an unknown action or a bad field", body = AgentRefusal),
        (status = 401, description = "invalid bot credential", body = AgentRefusal),
        (status = 409, description = "refused in the seed's words: stale_revision, not_your_turn, illegal_move, \
            leg_finished, match not running, unsupported game mode, bot busy, …; nothing changed", body = AgentRefusal),
        (status = 413, description = "request too large", body = AgentRefusal),
        (status = 429, description = "too many requests", body = AgentRefusal),
        (status = 503, description = "storage unavailable: retry with growing back-off", body = AgentRefusal),
    ))]
async fn action(State(state): State<AppState>, headers: HeaderMap, body: Bytes) -> AgentResult<Response> {
    let hall = &state.core.agents;
    let refuse = |error: Error| AgentError {
        error: ApiError(error),
        now: hall.now(),
    };
    let bot = agent_bot(&state, &headers).await.map_err(refuse)?;
    let request = read_request(&body).map_err(refuse)?;
    if let AgentRequest::AgentPoll { environment } = request {
        // The most frequent request: its answer is written from bytes
        // serialised once for every poll of the second.
        let environment = environment.map(|e| Environment {
            cpu: e.cpu,
            os: e.os,
            engine: e.engine,
            practice: e.practice.unwrap_or(false),
        });
        let bytes = hall.poll_answer(&state.core, &bot, environment).await.map_err(refuse)?;
        return Ok(([(CONTENT_TYPE, "application/json")], bytes).into_response());
    }
    answer(&state, hall, &bot, request)
        .await
        .map(|value| Json(value).into_response())
        .map_err(refuse)
}

async fn answer(state: &AppState, hall: &Hall, bot: &AgentBot, request: AgentRequest) -> Result<Value, Error> {
    let core = &state.core;
    let with_match = |summary: Value| json!({ "ok": true, "match": summary, "server_now_ms": hall.now() });
    match request {
        AgentRequest::AgentPoll { .. } => Err(Error::Internal("a poll is answered by poll_answer".into())),
        AgentRequest::AgentChallenge {
            target_id,
            target_name,
            game_mode,
        } => {
            let target = match (target_id, target_name) {
                (Some(id), _) => Target::Id(id),
                (None, Some(name)) => Target::Name(name),
                (None, None) => return Err(Error::Invalid("give target_id or target_name".into())),
            };
            let mode = match game_mode.as_deref() {
                None => Mode::Std,
                Some(text) => text
                    .parse::<Mode>()
                    .map_err(|_| Error::Conflict("unsupported game mode".into()))?,
            };
            let id = hall.challenge(core, bot, target, mode).await?;
            Ok(json!({ "ok": true, "match_id": id, "server_now_ms": hall.now() }))
        }
        AgentRequest::AgentAccept { match_id } => hall.accept(core, bot, match_id).await.map(with_match),
        AgentRequest::AgentReject { match_id } => hall.reject(core, bot, match_id).await.map(with_match),
        AgentRequest::AgentMove {
            match_id,
            leg,
            revision,
            square,
            round_no,
            room_created_at,
        } => {
            if match_id < 0 || round_no.is_some() || room_created_at.is_some() {
                // Games against people (negative ids) are not served here.
                return Err(Error::Conflict("match not running".into()));
            }
            let value = match square {
                MoveBody::Square(n) => json!(n),
                MoveBody::Name(name) => json!(name),
            };
            hall.play(core, bot, match_id, leg, revision, &value)
                .await
                .map(with_match)
        }
    }
}

/// The content type of the event stream: one JSON object per line.
const NDJSON: &str = "application/x-ndjson";

/// `GET /api/agent/stream`: the bot's event stream, NDJSON: `hello` first,
/// then `match` (the whole match object) whenever one of its matches
/// changes, and `ping` every 10 s. The bot is online while it is open; 429
/// past 3 open streams of one bot.
#[utoipa::path(get, path = "/agent/stream", tag = "agent",
    summary = "An agent bot's event stream (NDJSON: hello, match, ping every 10 s; 429 past 3 streams per bot)",
    security(("bot_token" = [])),
    responses(
        (status = 200, description = "the stream, one JSON object per line", content_type = "application/x-ndjson", body = String),
        (status = 401, description = "invalid bot credential", body = AgentRefusal),
        (status = 429, description = "too many streams", body = AgentRefusal),
        (status = 503, description = "storage unavailable: retry with growing back-off", body = AgentRefusal),
    ))]
async fn stream(State(state): State<AppState>, headers: HeaderMap) -> AgentResult<Response> {
    let hall = state.core.agents.clone();
    let refuse = |error: Error| AgentError {
        error: ApiError(error),
        now: hall.now(),
    };
    let bot = agent_bot(&state, &headers).await.map_err(refuse)?;
    let mut events = hall.subscribe(&bot).map_err(refuse)?;
    let (lines, receiver) = tokio::sync::mpsc::channel::<Result<Bytes, Infallible>>(16);
    let ping = Duration::from_millis(u64::try_from(hall.rules().ping_ms).unwrap_or(10_000));
    let line = |value: Value| Ok(Bytes::from(format!("{value}\n")));
    let hello = json!({ "type": "hello", "bot_id": bot.id, "server_now_ms": hall.now() });
    tokio::spawn(async move {
        if lines.send(line(hello)).await.is_err() {
            return;
        }
        let mut pings = tokio::time::interval_at(tokio::time::Instant::now() + ping, ping);
        loop {
            let event = tokio::select! {
                () = lines.closed() => break,
                _ = pings.tick() => json!({ "type": "ping", "server_now_ms": hall.now() }),
                change = events.changes.recv() => match change {
                    // The match's text is built once per change for every
                    // stream; the keys in the order a serialised `Value`
                    // has them, as the other events.
                    Ok(id) => match hall.match_view_text(bot.id, id) {
                        Some(view) => {
                            let event = format!(
                                "{{\"match\":{view},\"server_now_ms\":{},\"type\":\"match\"}}\n",
                                hall.now()
                            );
                            if lines.send(Ok(Bytes::from(event))).await.is_err() {
                                break;
                            }
                            continue;
                        }
                        None => continue,
                    },
                    // Missed changes: a ping makes the connector poll.
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {
                        json!({ "type": "ping", "server_now_ms": hall.now() })
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => break,
                },
            };
            if lines.send(line(event)).await.is_err() {
                break;
            }
        }
        // `events` drops here: the bot has one stream fewer.
        drop(events);
    });
    let body = Body::from_stream(tokio_stream::wrappers::ReceiverStream::new(receiver));
    let mut response = body.into_response();
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static(NDJSON));
    response
        .headers_mut()
        .insert("cache-control", HeaderValue::from_static("no-store"));
    // Proxies that buffer (nginx) would hold the events back.
    response
        .headers_mut()
        .insert("x-accel-buffering", HeaderValue::from_static("no"));
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_read_as_the_seed_writes_them() {
        let moved = read_request(br#"{"action":"agent_move","match_id":123,"leg":1,"revision":0,"move":"d3"}"#);
        assert!(
            matches!(moved, Ok(AgentRequest::AgentMove { match_id: 123, leg: 1, revision: 0, square: MoveBody::Name(ref n), .. }) if n == "d3"),
            "{moved:?}"
        );
        let passed = read_request(br#"{"action":"agent_move","match_id":1,"leg":0,"revision":4,"move":-1}"#);
        assert!(
            matches!(
                passed,
                Ok(AgentRequest::AgentMove {
                    square: MoveBody::Square(-1),
                    ..
                })
            ),
            "{passed:?}"
        );
        let polled =
            read_request(br#"{"action":"agent_poll","environment":{"cpu":"Apple M4","engine":"E","os":"Darwin"}}"#);
        assert!(
            matches!(polled, Ok(AgentRequest::AgentPoll { environment: Some(_) })),
            "{polled:?}"
        );
        for (body, error) in [
            (&b"[1]"[..], "JSON object required"),
            (b"not json", "JSON object required"),
            (b"{}", "unknown action"),
            (br#"{"action":"agent_dance"}"#, "unknown action"),
            (br#"{"action":"agent_accept"}"#, "match_id"),
            (br#"{"action":"agent_accept","match_id":1,"extra":2}"#, "extra"),
        ] {
            let refused = read_request(body).expect_err("refused");
            assert!(refused.to_string().contains(error), "{refused} for {body:?}");
        }
    }

    #[tokio::test]
    async fn refusals_carry_the_servers_time() {
        let response = AgentError {
            error: ApiError(Error::Conflict("stale_revision".into())),
            now: 1_800_000_000_000,
        }
        .into_response();
        assert_eq!(response.status(), axum::http::StatusCode::CONFLICT);
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .expect("a body");
        assert_eq!(
            std::str::from_utf8(&body).expect("text"),
            r#"{"error":"stale_revision","ok":false,"server_now_ms":1800000000000}"#
        );
    }
}
