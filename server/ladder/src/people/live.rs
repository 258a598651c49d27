//! A game in memory while it is played: who plays what ([`Head`]), its
//! state as the person's moves and the bot's change it ([`LiveState`]),
//! and its view for the page.

use super::board::Board;
use super::{Clock, GameView, Holder};
use arbiter_games::{Side, Variant};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::watch;

/// What a game is, live or stored: who plays what.
pub(super) struct Head {
    pub(super) id: i64,
    pub(super) bot: String,
    pub(super) variant: Variant,
    pub(super) person: String,
    pub(super) person_side: Side,
    pub(super) clock: Clock,
}

impl Head {
    /// The view of this game at `board` after `moves`, as an ended game
    /// shows it (nobody to move, no legal square, no clock, no result):
    /// the caller fills in what it knows besides.
    pub(super) fn view(&self, board: &Board, moves: Vec<String>, status: &'static str, move_limit_ms: u64) -> GameView {
        let counts = board.counts();
        GameView {
            id: self.id,
            bot: self.bot.clone(),
            variant: self.variant.to_string(),
            person: self.person.clone(),
            person_colour: board.side_name(self.person_side),
            bot_colour: board.side_name(self.person_side.other()),
            person_first: self.person_side == Side::First,
            clock: self.clock.as_str().to_owned(),
            status,
            revision: u32::try_from(moves.len()).unwrap_or(u32::MAX),
            to_move: None,
            rows: board.rows(),
            legal: Vec::new(),
            counts: [
                counts[self.person_side.index()],
                counts[self.person_side.other().index()],
            ],
            clock_left_ms: None,
            move_limit_ms,
            move_left_ms: None,
            moves,
            result: None,
            reason: None,
            notice: None,
        }
    }
}

/// A live game.
pub struct Live {
    pub(super) head: Head,
    /// The stored form of the person's key ([`crate::auth::secret_hash`]).
    pub(super) key_hash: String,
    pub(super) idle_ms: u64,
    pub(super) state: Mutex<LiveState>,
    /// Wakes the person's turn (a move, a resignation, a stop).
    pub(super) wake: Condvar,
    /// Counts every change (a move, the person's turn opening, the end),
    /// for pages that wait for one.
    pub(super) changes: watch::Sender<u64>,
}

/// What changes as a game is played.
pub(super) struct LiveState {
    /// The position after [`LiveState::moves`].
    pub(super) board: Board,
    /// The account the game belongs to, if any (set at the start, or when
    /// a guest claims it).
    pub(super) user_id: Option<i64>,
    /// Every move accepted, in order: their number is the revision.
    pub(super) moves: Vec<String>,
    /// The person's turn is open (the referee waits for their move).
    pub(super) waiting: bool,
    /// The person's move, for the referee to take.
    pub(super) reply: Option<String>,
    /// The person's clock left, not counting the open turn.
    pub(super) clock_left_ms: Option<u64>,
    /// When the open turn started in this process.
    pub(super) turn_started: Option<Instant>,
    /// Time the person spent on the open turn before this process resumed
    /// the game (it counts against their clock and the move limit).
    pub(super) turn_spent_ms: u64,
    /// A move is being saved: the turn neither ends nor times out meanwhile.
    pub(super) saving: bool,
    pub(super) resigned: bool,
    /// The game is to be released (the server stops, or another front end
    /// leads now) at the person's next turn.
    pub(super) stopping: bool,
    /// While the referee plays a resumed game again: its progress through
    /// the saved moves.
    pub(super) replay: Option<Replaying>,
    /// Why the replay of a resumed game went another way than the saved
    /// moves (the game is then aborted).
    pub(super) diverged: Option<String>,
    pub(super) ended: Option<Ended>,
}

/// The referee's progress through a resumed game's saved moves.
pub(super) struct Replaying {
    /// The position after the first `at` saved moves.
    pub(super) board: Board,
    /// Saved moves played again so far.
    pub(super) at: usize,
}

/// How a game ended, for its page while it stays in memory.
#[derive(Clone, Debug)]
pub(super) struct Ended {
    pub(super) status: &'static str,
    pub(super) result: Option<&'static str>,
    pub(super) reason: String,
    pub(super) notice: Option<String>,
    pub(super) at: Instant,
}

impl LiveState {
    /// The moves so far: the revision a move is made on.
    pub(super) fn revision(&self) -> u32 {
        u32::try_from(self.moves.len()).unwrap_or(u32::MAX)
    }

    /// What the person spent on the open turn so far, milliseconds.
    pub(super) fn thought_ms(&self) -> u64 {
        let here = self.turn_started.map_or(0, |started| {
            u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)
        });
        self.turn_spent_ms.saturating_add(here)
    }
}

impl Live {
    pub(super) fn lock(&self) -> MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tells waiting pages that the game changed.
    pub(super) fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// Whether `key` is this game's person's.
    pub(super) fn is_key(&self, key: &str) -> bool {
        crate::auth::same_secret(&self.key_hash, &crate::auth::secret_hash(key))
    }

    /// Whether `holder` holds this game's key or is its account.
    pub(super) fn is_person(&self, holder: &Holder) -> bool {
        holder.key.as_deref().is_some_and(|key| self.is_key(key))
            || holder.user_id.is_some_and(|user| self.lock().user_id == Some(user))
    }

    /// The game as its page shows it now.
    pub(super) fn view(&self) -> GameView {
        let state = self.lock();
        let head = &self.head;
        let mut view = head.view(&state.board, state.moves.clone(), "running", self.idle_ms);
        let to_move = state.board.to_move();
        let person_to_move = state.ended.is_none() && state.waiting && to_move == Some(head.person_side);
        if let Some(ended) = &state.ended {
            view.status = ended.status;
            view.result = ended.result;
            view.reason = Some(ended.reason.clone());
            view.notice = ended.notice.clone();
        } else {
            view.to_move = to_move.map(|side| if side == head.person_side { "person" } else { "bot" });
        }
        if person_to_move {
            view.legal = state.board.legal();
        }
        let thought = person_to_move.then(|| state.thought_ms());
        view.clock_left_ms = state
            .clock_left_ms
            .map(|left| left.saturating_sub(thought.unwrap_or(0)));
        view.move_left_ms = thought.map(|spent| self.idle_ms.saturating_sub(spent));
        view
    }
}
