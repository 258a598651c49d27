//! Live events: what the server tells watchers (server-sent events).

use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
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
        /// The turn's number in the match, from 0 (both games counted).
        n: usize,
        /// Game (leg) of the match.
        game: u8,
        /// Side that moved.
        side: u8,
        /// The move in the game's notation.
        action: Option<String>,
        /// The fault, if the turn ended in one.
        fault: Option<String>,
    },
    /// A skirmish tick was played in a running match.
    Tick {
        /// Match id.
        id: i64,
        /// Game (leg) of the match.
        game: u8,
        /// The tick played.
        tick: u32,
        /// Every few ticks, the map as spectators see it then
        /// ([`arbiter_referee::frames::LiveFrame`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        state: Option<serde_json::Value>,
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
///
/// It also keeps the turns so far of every match this process is playing,
/// so that a watcher who comes in the middle of a match sees it from its
/// first move ([`Events::so_far`]).
#[derive(Clone, Debug)]
pub struct Events {
    sender: broadcast::Sender<Event>,
    playing: Arc<Mutex<HashMap<i64, Vec<Event>>>>,
}

impl Default for Events {
    fn default() -> Events {
        Events {
            sender: broadcast::channel(1024).0,
            playing: Arc::default(),
        }
    }
}

/// A match being played by this process: its turns are kept while this
/// lives.
#[derive(Debug)]
pub struct Playing {
    events: Events,
    id: i64,
}

impl Drop for Playing {
    fn drop(&mut self) {
        self.events.playing().remove(&self.id);
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

    fn playing(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Vec<Event>>> {
        self.playing.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Starts keeping the turns of match `id` until the guard is dropped.
    pub fn play(&self, id: i64) -> Playing {
        self.playing().insert(id, Vec::new());
        Playing {
            events: self.clone(),
            id,
        }
    }

    /// Records that a skirmish tick of match `id` (one being played) was
    /// played and sends it to the watchers, if any.
    /// A tick that carries a `state` is kept until the next such one, so a
    /// watcher who comes later draws the map at once.
    pub fn tick(&self, id: i64, game: u8, tick: u32, state: Option<serde_json::Value>) {
        let mut playing = self.playing();
        let Some(kept) = playing.get_mut(&id) else { return };
        let with_state = state.is_some();
        let event = Event::Tick { id, game, tick, state };
        if self.watched() {
            self.send(event.clone());
        }
        if with_state {
            kept.clear();
            kept.push(event);
        }
    }

    /// Records a turn of match `id` (one being played, see [`Events::play`])
    /// and sends it to the watchers, if any.
    pub fn turn(&self, id: i64, game: u8, side: u8, action: Option<&str>, fault: Option<&str>) {
        let mut playing = self.playing();
        let Some(turns) = playing.get_mut(&id) else { return };
        let event = Event::Turn {
            id,
            n: turns.len(),
            game,
            side,
            action: action.map(str::to_owned),
            fault: fault.map(str::to_owned),
        };
        if self.watched() {
            self.send(event.clone());
        }
        turns.push(event);
    }

    /// The turns played so far in match `id`, if this process is playing
    /// it (empty otherwise).
    pub fn so_far(&self, id: i64) -> Vec<Event> {
        self.playing().get(&id).cloned().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A watcher who comes late gets the turns so far, numbered; a match
    /// this process is not playing has none, and a finished one is
    /// forgotten.
    #[test]
    fn the_turns_of_a_match_being_played_are_kept_until_it_ends() {
        let events = Events::default();
        events.turn(7, 0, 0, Some("d3"), None);
        assert!(events.so_far(7).is_empty(), "not being played: nothing kept");
        let playing = events.play(7);
        events.turn(7, 0, 0, Some("d3"), None);
        let mut watcher = events.subscribe();
        events.turn(7, 0, 1, None, Some("timeout"));
        let so_far = events.so_far(7);
        let numbers: Vec<usize> = so_far
            .iter()
            .map(|event| match event {
                Event::Turn { n, .. } => *n,
                _ => usize::MAX,
            })
            .collect();
        assert_eq!(numbers, [0, 1]);
        assert!(matches!(
            watcher.try_recv(),
            Ok(Event::Turn { n: 1, side: 1, ref fault, .. }) if fault.as_deref() == Some("timeout")
        ));
        assert!(events.so_far(8).is_empty());
        drop(playing);
        assert!(events.so_far(7).is_empty(), "forgotten once it ends");
    }
}
