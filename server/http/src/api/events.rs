//! Live events as server-sent events.

use crate::api::ApiQuery;
use crate::error::{ApiError, ApiResult};
use crate::extract::ClientIp;
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::events::Event;
use arbiter_ladder::quota::{Full, Held, Quota};
use axum::extract::State;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use std::convert::Infallible;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// Event streams one address may hold open at once.
pub const STREAMS_PER_ADDRESS: usize = 8;
/// Event streams the server holds open at once, from everyone.
pub const STREAMS_IN_ALL: usize = 512;

/// The open event streams, by client (cheap to clone; clones share them).
#[derive(Clone, Debug)]
pub struct Streams {
    open: Quota,
}

impl Default for Streams {
    fn default() -> Streams {
        Streams {
            open: Quota::new(STREAMS_PER_ADDRESS, STREAMS_IN_ALL),
        }
    }
}

impl Streams {
    /// A place for a new stream from `address`, held while the stream
    /// lives, unless that address or the server holds too many already.
    fn open(&self, address: &str) -> ApiResult<Held> {
        self.open.take(address).map_err(|full| {
            ApiError(Error::RateLimited {
                message: match full {
                    Full::Key(n) => {
                        format!("too many live streams: at most {n} at once from one address; close one first")
                    }
                    Full::Total(_) => "too many live streams on this server; try again shortly".into(),
                },
                retry_after_s: 10,
            })
        })
    }
}

/// An event as a server-sent event named after its type.
fn sse(event: &Event) -> SseEvent {
    let name = match event {
        Event::MatchStarted { .. } => "match_started",
        Event::Turn { .. } => "turn",
        Event::Tick { .. } => "tick",
        Event::MatchFinished { .. } => "match_finished",
        Event::VersionChecked { .. } => "version_checked",
    };
    let data = serde_json::to_string(event).unwrap_or_default();
    SseEvent::default().event(name).data(data)
}

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(stream))
}

/// The query of `GET /api/events` (any other parameter is refused).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Filter {
    /// Only events of this match.
    #[serde(rename = "match")]
    match_id: Option<i64>,
}

fn concerns(event: &Event, match_id: Option<i64>) -> bool {
    let Some(wanted) = match_id else { return true };
    match event {
        Event::MatchStarted { id, .. }
        | Event::Turn { id, .. }
        | Event::Tick { id, .. }
        | Event::MatchFinished { id, .. } => *id == wanted,
        Event::VersionChecked { .. } => false,
    }
}

/// `GET /api/events[?match=ID]`: a stream of JSON events (`match_started`,
/// `turn`, `tick` (skirmish), `match_finished`, `version_checked`). With
/// `?match=` of a match this server is playing, the stream starts with the
/// turns played so far (each `turn` has its number `n` in the match), or a
/// skirmish match's latest `tick`. A watcher that falls
/// behind gets a `lagged` event and continues. 404 for a match that does not
/// exist; 429 past [`STREAMS_PER_ADDRESS`] streams from one address or
/// [`STREAMS_IN_ALL`] in all.
#[utoipa::path(get, path = "/events", tag = "matches",
    summary = "Live events (server-sent events); with ?match=, the turns so far first (429 past 8 streams per address)",
    params(("match" = Option<i64>, Query, description = "only this match's events (404 for an unknown match)", minimum = 1)),
    responses(
        (status = 200, description = "the stream", content_type = "text/event-stream", body = String),
    ))]
async fn stream(
    State(state): State<AppState>,
    ClientIp(address): ClientIp,
    ApiQuery(filter): ApiQuery<Filter>,
) -> ApiResult<Sse<impl tokio_stream::Stream<Item = Result<SseEvent, Infallible>>>> {
    if let Some(id) = filter.match_id {
        crate::api::in_range("match", Some(id), id, 1..=i64::MAX)?;
    }
    if let Some(id) = filter.match_id
        && !arbiter_ladder::matches::exists(&state.core.db, arbiter_ladder::model::MatchId(id)).await?
    {
        return Err(ApiError::not_found(format!("match {id}")));
    }
    let slot = state.streams.open(&address)?;
    // Subscribe first, then take the turns so far: a turn sent in between
    // is in both, and the live copy is skipped by its number.
    let live = BroadcastStream::new(state.core.events.subscribe());
    let so_far = filter
        .match_id
        .map(|id| state.core.events.so_far(id))
        .unwrap_or_default();
    let seen = so_far.len();
    let earlier = tokio_stream::iter(so_far.into_iter().map(|event| Ok(sse(&event))));
    let events = earlier.chain(live.filter_map(move |item| {
        // Held as long as the stream: dropped when the client goes.
        let _slot = &slot;
        match item {
            Ok(Event::Turn { n, .. }) if n < seen => None,
            Ok(event) if concerns(&event, filter.match_id) => Some(Ok(sse(&event))),
            Ok(_) => None,
            Err(_) => Some(Ok(SseEvent::default().event("lagged").data("{}"))),
        }
    }));
    Ok(Sse::new(events).keep_alive(KeepAlive::default()))
}
