//! The rules of the games Arbiter plays: tic-tac-toe, the five Othello
//! modes (`std`, `anti`, `grand`, `octagon`, `reversi`), and skirmish, a
//! small tick-based strategy game under fog of war ([`skirmish`]).
//!
//! Each game is a state machine behind the [`Game`] trait: it says which
//! sides must act, builds the exact request line each side receives, parses a
//! reply into an action (or says precisely why it cannot), and applies the
//! actions of one step together. Turn-based games ask one side per step; a
//! simultaneous-move game asks both, and the referee needs no change for it.
//!
//! ```
//! use arbiter_games::othello::{Mode, Position};
//!
//! let start = Position::start(Mode::Std);
//! assert_eq!(start.legal_squares(), vec![19, 26, 37, 44]);
//! assert_eq!(start.perft(3), 56);
//! ```
//!
//! # Guarantees
//!
//! - Pure and deterministic: no I/O, no clocks, no global state; the same
//!   seed gives the same opening on every platform (the crate builds for
//!   `wasm32-wasip1`, so bots can reuse these rules).
//! - Nothing a bot writes can make this crate panic: every reply is parsed
//!   into an action or a [`ReplyError`], and every action is checked before it
//!   is applied.
//!
//! It does not measure time or enforce budgets: that is the referee's job;
//! requests merely show the clock values the referee hands in.
#![deny(missing_docs)]

mod catalogue;
pub mod othello;
mod reply;
pub mod skirmish;
pub mod tictactoe;
mod variant;

pub use catalogue::{BoardListing, GameListing, ModeListing, catalogue};
pub use reply::ReplyError;
pub use variant::{BadBudget, Budget, UnknownVariant, Variant};

use serde::{Deserialize, Serialize};

/// A seat in one game. `First` moves first (Othello's black, tic-tac-toe's X).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(into = "u8", try_from = "u8")]
pub enum Side {
    /// Moves first: black, X, start position 1.
    First,
    /// Moves second: white, O, start position 2.
    Second,
}

impl Side {
    /// Both sides, first one first.
    pub const BOTH: [Side; 2] = [Side::First, Side::Second];

    /// 0 for [`Side::First`], 1 for [`Side::Second`].
    pub fn index(self) -> usize {
        match self {
            Side::First => 0,
            Side::Second => 1,
        }
    }

    /// The other side.
    pub fn other(self) -> Side {
        match self {
            Side::First => Side::Second,
            Side::Second => Side::First,
        }
    }
}

impl From<Side> for u8 {
    fn from(side: Side) -> u8 {
        side.index() as u8
    }
}

impl TryFrom<u8> for Side {
    type Error = String;
    fn try_from(value: u8) -> Result<Side, String> {
        match value {
            0 => Ok(Side::First),
            1 => Ok(Side::Second),
            other => Err(format!("side must be 0 or 1, not {other}")),
        }
    }
}

/// Why a game ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum FinishReason {
    /// Othello: played out, scored by discs.
    Discs,
    /// Tic-tac-toe: three in a row.
    Line,
    /// Tic-tac-toe: full grid without a line.
    Draw,
    /// A side ran out of its turn budget or game bank.
    Timeout,
    /// A side answered an illegal move.
    IllegalMove,
    /// A side answered something that is not a valid reply.
    BadReply,
    /// A side crashed or exited without answering.
    Crash,
    /// Skirmish: a side lost all its buildings (both at once: a draw).
    Elimination,
    /// Skirmish: the tick limit was reached and the scores decided.
    Score,
    /// A person playing a bot gave the game up.
    Resigned,
}

impl FinishReason {
    /// Whether this reason is a fault of the losing side.
    pub fn is_fault(self) -> bool {
        matches!(
            self,
            FinishReason::Timeout | FinishReason::IllegalMove | FinishReason::BadReply | FinishReason::Crash
        )
    }

    /// The name used in replays and tables, e.g. `illegal_move`.
    pub fn as_str(self) -> &'static str {
        match self {
            FinishReason::Discs => "discs",
            FinishReason::Line => "line",
            FinishReason::Draw => "draw",
            FinishReason::Timeout => "timeout",
            FinishReason::IllegalMove => "illegal_move",
            FinishReason::BadReply => "bad_reply",
            FinishReason::Crash => "crash",
            FinishReason::Elimination => "elimination",
            FinishReason::Score => "score",
            FinishReason::Resigned => "resigned",
        }
    }
}

impl std::fmt::Display for FinishReason {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the scores of a game's sides compare.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Scoring {
    /// More is better (discs, points).
    HigherWins,
    /// Fewer is better (anti Othello).
    LowerWins,
}

impl Scoring {
    /// Compares `a` to `b`: `Greater` means `a` wins.
    pub fn compare(self, a: u32, b: u32) -> std::cmp::Ordering {
        match self {
            Scoring::HigherWins => a.cmp(&b),
            Scoring::LowerWins => b.cmp(&a),
        }
    }

    /// The index (0 or 1) of the winner of `scores` under this rule, or
    /// `None` for a draw: the one place a game's or a match's winner is
    /// read from its scores (anti Othello: fewer discs wins).
    pub fn winner(self, scores: [u32; 2]) -> Option<usize> {
        match self.compare(scores[0], scores[1]) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        }
    }

    /// The points `scores[0]` earns against `scores[1]` under this rule: 1
    /// for a win, ½ for a draw, 0 for a loss.
    pub fn points(self, scores: [u32; 2]) -> f64 {
        match self.winner(scores) {
            Some(0) => 1.0,
            Some(_) => 0.0,
            None => 0.5,
        }
    }
}

/// The end of one game: a score per side and why it ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// Score of each side, indexed by [`Side::index`]: discs in Othello
    /// (`result_discs` after a forfeit), half-points in tic-tac-toe (2 win,
    /// 1 draw, 0 loss).
    pub scores: [u32; 2],
    /// Why the game ended.
    pub reason: FinishReason,
    /// The side whose fault ended the game, if any.
    pub faulted: Option<Side>,
}

/// What the referee tells a game about the side it builds a request for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestContext {
    /// The match id.
    pub match_id: u64,
    /// Which game of the match (Othello's leg), 0 or 1.
    pub game_index: u8,
    /// Participant number (0 or 1) sitting on each side in this game.
    pub participants: [u8; 2],
    /// The side's bank left in this game, in milliseconds.
    pub remaining_ms: u64,
    /// The most this turn may take, in milliseconds.
    pub budget_ms: u64,
}

/// An action that broke the rules, with the reason in words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct IllegalAction {
    /// The side that played it.
    pub side: Side,
    /// What was wrong, e.g. `d3 flips nothing`.
    pub reason: String,
}

/// A game as the referee plays it: a state machine of steps.
///
/// In each step the sides in [`Game::to_act`] each get a request, their
/// replies are parsed, and [`Game::apply`] applies the actions together.
pub trait Game: Clone + Send + 'static {
    /// What a side does in one step.
    type Action: Copy + Eq + std::fmt::Debug + Send;

    /// The sides that must answer in this step; none once the game is over.
    fn to_act(&self) -> Vec<Side>;

    /// The request line (JSON, no newline) `side` receives now.
    fn request(&self, side: Side, context: &RequestContext) -> String;

    /// Parses `side`'s reply line into an action. Never panics.
    fn parse_reply(&self, side: Side, line: &str) -> Result<Self::Action, ReplyError>;

    /// Applies one action per side in [`Game::to_act`] (same order), checking
    /// each first. `at_ms` is the game's virtual time when the step ended.
    /// On error the state is unchanged.
    fn apply(&mut self, actions: &[(Side, Self::Action)], at_ms: u64) -> Result<(), IllegalAction>;

    /// The outcome once the game is over.
    fn outcome(&self) -> Option<Outcome>;

    /// The outcome when `loser` forfeits for `reason`.
    fn forfeit(&self, loser: Side, reason: FinishReason) -> Outcome;

    /// How scores compare in this game.
    fn scoring(&self) -> Scoring;

    /// The action in the game's notation, for replays (`d3`, `pass`, `1-1`).
    fn notation(&self, action: &Self::Action) -> String;

    /// What a replay keeps of this game besides its turns: a typed record
    /// per game ([`tictactoe::TicTacToeRecord`], [`othello::OthelloRecord`]).
    type Record: serde::Serialize + serde::de::DeserializeOwned + Clone + PartialEq + std::fmt::Debug;

    /// This game's record as a replay keeps it.
    fn record(&self) -> Self::Record;
}
