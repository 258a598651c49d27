//! Live events: what the server tells watchers (server-sent events).

use serde::Serialize;
use tokio::sync::broadcast;

/// Something that happened, as sent to watchers.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// A worker started a match.
    MatchStarted {
        /// Match id.
        id: i64,
        /// Ladder name.
        ladder: String,
    },
    /// A move was played in a running match.
    Turn {
        /// Match id.
        id: i64,
        /// Game (leg) of the match.
        game: u8,
        /// Side that moved.
        side: u8,
        /// The move in the game's notation.
        action: Option<String>,
        /// The fault, if the turn ended in one.
        fault: Option<String>,
    },
    /// A match finished (or failed).
    MatchFinished {
        /// Match id.
        id: i64,
        /// Ladder name.
        ladder: String,
        /// `finished` or `failed`.
        status: String,
    },
    /// An uploaded version was checked.
    VersionChecked {
        /// Version id.
        id: i64,
        /// `active` or `rejected`.
        status: String,
    },
}

/// The broadcast channel of events. Watchers that fall behind miss events
/// (and are told so by the SSE stream), they never slow the server down.
#[derive(Clone, Debug)]
pub struct Events {
    sender: broadcast::Sender<Event>,
}

impl Default for Events {
    fn default() -> Events {
        Events {
            sender: broadcast::channel(1024).0,
        }
    }
}

impl Events {
    /// Sends `event` to every current watcher.
    pub fn send(&self, event: Event) {
        let _ = self.sender.send(event);
    }

    /// Whether anyone watches now: an event nobody watches need not be
    /// built.
    pub fn watched(&self) -> bool {
        self.sender.receiver_count() > 0
    }

    /// A new watcher.
    pub fn subscribe(&self) -> broadcast::Receiver<Event> {
        self.sender.subscribe()
    }
}
