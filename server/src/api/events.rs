//! Live events as server-sent events.

use crate::events::Event;
use crate::server::AppState;
use axum::Router;
use axum::extract::{Query, State};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::routing::get;
use std::convert::Infallible;
use tokio_stream::StreamExt;
use tokio_stream::wrappers::BroadcastStream;

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/events", get(stream))
}

#[derive(serde::Deserialize)]
struct Filter {
    /// Only events of this match.
    #[serde(rename = "match")]
    match_id: Option<i64>,
}

fn concerns(event: &Event, match_id: Option<i64>) -> bool {
    let Some(wanted) = match_id else { return true };
    match event {
        Event::MatchStarted { id, .. } | Event::Turn { id, .. } | Event::MatchFinished { id, .. } => *id == wanted,
        Event::VersionChecked { .. } => false,
    }
}

/// `GET /api/events[?match=ID]`: a stream of JSON events (`match_started`,
/// `turn`, `match_finished`, `version_checked`). A watcher that falls behind
/// gets a `lagged` event and continues.
async fn stream(
    State(state): State<AppState>,
    Query(filter): Query<Filter>,
) -> Sse<impl tokio_stream::Stream<Item = Result<SseEvent, Infallible>>> {
    let events = BroadcastStream::new(state.core.events.subscribe()).filter_map(move |item| match item {
        Ok(event) if concerns(&event, filter.match_id) => {
            let name = match &event {
                Event::MatchStarted { .. } => "match_started",
                Event::Turn { .. } => "turn",
                Event::MatchFinished { .. } => "match_finished",
                Event::VersionChecked { .. } => "version_checked",
            };
            let data = serde_json::to_string(&event).unwrap_or_default();
            Some(Ok(SseEvent::default().event(name).data(data)))
        }
        Ok(_) => None,
        Err(_) => Some(Ok(SseEvent::default().event("lagged").data("{}"))),
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}
