//! Players: what the referee talks to. A [`Player`] is one running bot
//! instance for one game; an [`Entrant`] makes a fresh one for every game.

use serde::{Deserialize, Serialize};

/// Time a player spent on one turn, as charged against its clocks.
///
/// `us` is virtual microseconds for sandboxed bots (derived from `fuel`) and
/// wall-clock microseconds for native processes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spent {
    /// Microseconds charged.
    pub us: u64,
    /// Fuel consumed, for sandboxed bots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel: Option<u64>,
}

/// A fault that a bot caused; it costs the bot its own game and nothing else.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The bot used more than its turn budget or its game bank.
    #[error("ran out of time")]
    Timeout,
    /// The bot trapped, exited before replying, overflowed a limit or was
    /// stopped by the wall-clock backstop. The text says which.
    #[error("crashed: {0}")]
    Crash(String),
    /// The bot wrote something that is not a valid reply line (not UTF-8, too
    /// long, asked for input without replying, ...). The text says what.
    #[error("bad reply: {0}")]
    BadReply(String),
    /// The bot stalled the host in a way its fuel clock did not see and the
    /// wall-clock backstop stopped it. Scored as a crash; the match is then
    /// marked as not reproducible.
    #[error("crashed: {0}")]
    Stalled(String),
    /// The host failed during the turn (for example it had no instance slot
    /// to restart a bot). Not the bot's fault: the referee abandons the
    /// match unscored.
    #[error("host failure: {0}")]
    Host(String),
    /// A person playing a bot gave the game up (never a bot's fault).
    #[error("resigned")]
    Resigned,
}

/// A turn that ended in a fault, with the time spent before it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnError {
    /// What went wrong.
    pub fault: Fault,
    /// What the turn cost before the fault.
    pub spent: Spent,
}

/// A reply line (without its trailing newline) and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answer {
    /// The reply, as the bot wrote it, without the line terminator.
    pub line: String,
    /// What producing it cost.
    pub spent: Spent,
}

/// One bot instance for one game.
pub trait Player: Send {
    /// Hands the bot one request line (without newline) and waits for its
    /// reply, charging at most `budget_us` microseconds. A reply that took
    /// longer than the budget is a [`Fault::Timeout`].
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError>;

    /// For tick-based games: waits at most `budget_us` for the bot's next
    /// line without handing it a request, after a reply the referee found
    /// stale or a tick the bot was skipped in. Players that answer every
    /// request at once (in-process ones) have no next line: a
    /// [`Fault::Timeout`] charged nothing.
    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        let _ = budget_us;
        Err(TurnError {
            fault: Fault::Timeout,
            spent: Spent::default(),
        })
    }

    /// What the bot wrote to stderr so far (capped by the player).
    fn stderr(&self) -> Vec<u8>;

    /// The most linear memory a sandboxed bot has used so far, in bytes;
    /// `None` for players without one.
    fn peak_memory_bytes(&self) -> Option<u64> {
        None
    }
}

/// Where a game is played, as far as a new player needs to know.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GameSetup {
    /// Game name, e.g. `othello`.
    pub game: String,
    /// Mode name, e.g. `std`.
    pub mode: String,
    /// The match seed.
    pub seed: u64,
    /// The match id.
    pub match_id: u64,
    /// Which game (leg) of the match, 0 or 1.
    pub game_index: u8,
    /// Which side this player takes in the game, 0 (moves first) or 1.
    pub side: u8,
    /// Fuel per virtual millisecond for sandboxed players, as recorded in
    /// the match; `None` for the sandbox's own setting.
    pub fuel_per_ms: Option<u64>,
    /// A tick-based game (skirmish): a bot out of budget is skipped for the
    /// tick and paused, not stopped, and every line it writes is handed to
    /// the referee (see [`Player::resume`]).
    pub tick_based: bool,
}

/// What kind of bot an entrant is, as recorded in replays.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct EntrantInfo {
    /// A name for tables and replays.
    pub name: String,
    /// `builtin`, `native` or `wasm`.
    pub kind: String,
    /// SHA-256 of the module, for wasm bots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Whether the bot's results can be reproduced exactly (false for native
    /// processes, which run on wall-clock time).
    pub reproducible: bool,
}

/// Why a player could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    /// The bot itself is at fault (for example its command does not exist):
    /// it loses the game.
    #[error(transparent)]
    Bot(#[from] Fault),
    /// The host failed; the match must not be counted.
    #[error("host failure: {0}")]
    Host(String),
}

/// A bot taking part in a match: it makes a fresh [`Player`] for each game.
pub trait Entrant: Send + Sync {
    /// How the bot is described in replays and tables.
    fn info(&self) -> EntrantInfo;

    /// Starts a fresh instance for one game.
    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError>;
}
