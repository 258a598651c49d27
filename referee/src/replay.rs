//! The replay format: everything needed to show, check and re-run a match.
//!
//! A replay is JSON with a header (game, mode, seed, budgets, `FUEL_PER_MS`,
//! both entrants with their module digests, engine version) and, per game,
//! every turn: the SHA-256 of the request, the reply, the move, the time or
//! fuel used and any fault, then the outcome. [`FORMAT_VERSION`] changes
//! whenever the meaning of a field does.

use crate::player::{EntrantInfo, Spent};
use crate::skirmish::SkirmishRecord;
use arbiter_games::othello::OthelloRecord;
use arbiter_games::tictactoe::TicTacToeRecord;
use arbiter_games::{FinishReason, Side};
use serde::{Deserialize, Serialize};

/// The replay format's name, the first field of every replay.
pub const FORMAT: &str = "arbiter-replay";
/// The replay format's version.
pub const FORMAT_VERSION: u32 = 1;
/// Replies longer than this are cut in replays (the game still saw all of it).
pub const MAX_REPLY_IN_REPLAY: usize = 4096;

/// A whole match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replay {
    /// Always [`FORMAT`].
    pub format: String,
    /// [`FORMAT_VERSION`] when written.
    pub version: u32,
    /// `tictactoe` or `othello`.
    pub game: String,
    /// The mode, e.g. `std`.
    pub mode: String,
    /// The match seed (openings, bots' random streams).
    pub seed: u64,
    /// The match id.
    pub match_id: u64,
    /// Budgets and the fuel clock.
    pub settings: ReplaySettings,
    /// The program that refereed it, e.g. `arbiter 0.1.0`.
    pub engine: String,
    /// Participant 0 and participant 1.
    pub participants: [EntrantInfo; 2],
    /// Whether re-running the match must give this replay again (false when
    /// a bot ran on wall-clock time).
    pub reproducible: bool,
    /// The two games (legs), in order.
    pub games: Vec<GameRecord>,
    /// The match result.
    pub result: MatchResult,
}

/// Budgets a match was played with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReplaySettings {
    /// Per-turn cap, milliseconds.
    pub turn_ms: u64,
    /// Per-game bank per side, milliseconds.
    pub bank_ms: u64,
    /// The cap of each side's first move of a game when it has its own (the
    /// upload check's smoke match); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_turn_ms: Option<u64>,
    /// Fuel per virtual millisecond, when sandboxed bots took part.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fuel_per_ms: Option<u64>,
    /// Othello played from the mode's start position, not the seeded
    /// opening (games against people); absent otherwise.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub standard_opening: bool,
}

/// One game (leg) of a match.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// 0 or 1.
    pub index: u8,
    /// The participant on each side: `[0, 1]` in game 0, `[1, 0]` in game 1.
    pub sides: [u8; 2],
    /// Every turn, in order.
    pub turns: Vec<TurnRecord>,
    /// Score of each side (discs, or half-points in tic-tac-toe).
    pub scores: [u32; 2],
    /// Why the game ended.
    pub reason: FinishReason,
    /// The side whose fault ended the game.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faulted: Option<Side>,
    /// The fault in words, e.g. `d3 flips nothing`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// What the game keeps besides its turns, typed by game.
    pub record: GameSpecificRecord,
}

/// What a replay keeps of one game besides its turns, one type per game.
///
/// # Bytes
///
/// Replays are verified byte for byte, and these records were first
/// written as untyped JSON objects: a record is therefore written as that
/// object was, every object's keys in name order at every depth (the rules'
/// skirmish types declare theirs in another order). Reading tells the games
/// apart by their fields; a record of none of these shapes (another
/// version's) is kept as [`GameSpecificRecord::Unread`], so such a replay
/// still loads and writes out unchanged.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum GameSpecificRecord {
    /// A skirmish game: the rules' record plus time spent and ticks skipped.
    Skirmish(Box<SkirmishRecord>),
    /// An Othello game (leg): opening, transcript, final board and discs.
    Othello(OthelloRecord),
    /// A tic-tac-toe game: the moves and the final grid.
    TicTacToe(TicTacToeRecord),
    /// A record this program does not read, kept as stored.
    Unread(serde_json::Value),
}

impl Serialize for GameSpecificRecord {
    /// As the JSON object it always was: keys in name order at every depth.
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error;
        let value = match self {
            GameSpecificRecord::Skirmish(record) => serde_json::to_value(record),
            GameSpecificRecord::Othello(record) => serde_json::to_value(record),
            GameSpecificRecord::TicTacToe(record) => serde_json::to_value(record),
            GameSpecificRecord::Unread(value) => return value.serialize(serializer),
        }
        .map_err(S::Error::custom)?;
        value.serialize(serializer)
    }
}

impl GameSpecificRecord {
    /// The skirmish record, if this is a skirmish game's.
    pub fn skirmish(&self) -> Option<&SkirmishRecord> {
        match self {
            GameSpecificRecord::Skirmish(record) => Some(record),
            _ => None,
        }
    }

    /// The Othello record, if this is an Othello game's.
    pub fn othello(&self) -> Option<&OthelloRecord> {
        match self {
            GameSpecificRecord::Othello(record) => Some(record),
            _ => None,
        }
    }

    /// The tic-tac-toe record, if this is a tic-tac-toe game's.
    pub fn tictactoe(&self) -> Option<&TicTacToeRecord> {
        match self {
            GameSpecificRecord::TicTacToe(record) => Some(record),
            _ => None,
        }
    }

    /// The game's moves in one line of notation, for games that have one
    /// (Othello: `f5d6c3…`).
    pub fn transcript(&self) -> Option<&str> {
        self.othello().map(|record| record.transcript.as_str())
    }
}

impl From<OthelloRecord> for GameSpecificRecord {
    fn from(record: OthelloRecord) -> GameSpecificRecord {
        GameSpecificRecord::Othello(record)
    }
}

impl From<TicTacToeRecord> for GameSpecificRecord {
    fn from(record: TicTacToeRecord) -> GameSpecificRecord {
        GameSpecificRecord::TicTacToe(record)
    }
}

impl From<SkirmishRecord> for GameSpecificRecord {
    fn from(record: SkirmishRecord) -> GameSpecificRecord {
        GameSpecificRecord::Skirmish(Box::new(record))
    }
}

/// One turn of one side.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRecord {
    /// The side that was asked.
    pub side: Side,
    /// Hex SHA-256 of the request line it received.
    pub request_sha256: String,
    /// Its reply line (cut at [`MAX_REPLY_IN_REPLAY`] bytes), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    /// The move in the game's notation, if the reply parsed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub action: Option<String>,
    /// Time (and fuel) the turn cost.
    pub spent: Spent,
    /// The fault this turn ended in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fault: Option<FinishReason>,
    /// When the turn ended on the server's clock (Unix milliseconds), for
    /// matches played on it (agent bots' matches); absent from matches the
    /// referee plays, whose replays are the same bytes on any clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<i64>,
}

/// The result of a match, per participant.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct MatchResult {
    /// Sum of each participant's game scores.
    pub totals: [u32; 2],
    /// Match points: 1, ½ or 0.
    pub points: [f64; 2],
    /// The winning participant; none for a draw.
    pub winner: Option<u8>,
}

impl Replay {
    /// The replay as pretty JSON bytes, ending in a newline. The same replay
    /// always gives the same bytes.
    pub fn to_json(&self) -> Vec<u8> {
        let mut bytes = serde_json::to_vec_pretty(self).unwrap_or_default();
        bytes.push(b'\n');
        bytes
    }

    /// The game and mode it was played in; `None` for a game or mode this
    /// build does not know.
    pub fn variant(&self) -> Option<arbiter_games::Variant> {
        format!("{}:{}", self.game, self.mode).parse().ok()
    }

    /// Reads a replay, refusing other formats and newer versions.
    pub fn from_json(bytes: &[u8]) -> Result<Replay, ReplayError> {
        let header: Header = serde_json::from_slice(bytes).map_err(|e| ReplayError::Json(e.to_string()))?;
        if header.format != FORMAT {
            return Err(ReplayError::NotAReplay(header.format));
        }
        if header.version > FORMAT_VERSION {
            return Err(ReplayError::TooNew(header.version));
        }
        serde_json::from_slice(bytes).map_err(|e| ReplayError::Json(e.to_string()))
    }

    /// A readable summary: header, result and one line per game.
    pub fn summary(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        let name = |p: u8| self.participants[usize::from(p)].name.as_str();
        let _ = writeln!(
            out,
            "{}:{}  match {}  seed {}",
            self.game, self.mode, self.match_id, self.seed
        );
        let skirmish = self.variant() == Some(arbiter_games::Variant::Skirmish);
        let _ = writeln!(
            out,
            "budgets: {} ms per {}, {} ms {}{}",
            self.settings.turn_ms,
            if skirmish { "tick" } else { "turn" },
            self.settings.bank_ms,
            if skirmish { "at tick 0" } else { "per game" },
            self.settings
                .fuel_per_ms
                .map(|f| format!(", {f} fuel per ms"))
                .unwrap_or_default()
        );
        for (i, p) in self.participants.iter().enumerate() {
            let digest = p
                .sha256
                .as_deref()
                .map(|s| format!(" sha256 {}", &s[..s.len().min(16)]))
                .unwrap_or_default();
            let _ = writeln!(out, "participant {i}: {} ({}){digest}", p.name, p.kind);
        }
        if !self.reproducible {
            let _ = writeln!(out, "not reproducible: a bot ran on wall-clock time");
        }
        for game in &self.games {
            let _ = write!(
                out,
                "game {}: {} vs {}  {}-{}  {}  ",
                game.index,
                name(game.sides[0]),
                name(game.sides[1]),
                game.scores[0],
                game.scores[1],
                game.reason,
            );
            if let Some(record) = game.record.skirmish() {
                let _ = write!(
                    out,
                    "({} ticks, skipped {} + {}, {} + {} ms)",
                    record.game.ticks.len(),
                    record.skipped[0],
                    record.skipped[1],
                    record.spent[0].us / 1000,
                    record.spent[1].us / 1000
                );
            } else {
                let moves = game.turns.iter().filter(|t| t.action.is_some()).count();
                let used = |side: usize| -> u64 {
                    game.turns
                        .iter()
                        .filter(|t| t.side.index() == side)
                        .map(|t| t.spent.us)
                        .sum::<u64>()
                        / 1000
                };
                let _ = write!(out, "({moves} turns, {} + {} ms)", used(0), used(1));
            }
            if let (Some(side), Some(detail)) = (game.faulted, &game.detail) {
                let _ = write!(out, "  [{} {}: {detail}]", name(game.sides[side.index()]), game.reason);
            }
            out.push('\n');
            if let Some(transcript) = game.record.transcript() {
                let _ = writeln!(out, "  {transcript}");
            }
        }
        let verdict = match self.result.winner {
            Some(p) => format!("{} wins", name(p)),
            None => "draw".to_string(),
        };
        let _ = writeln!(
            out,
            "result: {} {} - {} {}  ({verdict})",
            name(0),
            self.result.totals[0],
            self.result.totals[1],
            name(1)
        );
        out
    }
}

#[derive(Deserialize)]
struct Header {
    format: String,
    version: u32,
}

/// Why bytes are not a readable replay.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// Not JSON of the replay's shape.
    #[error("not a valid replay: {0}")]
    Json(String),
    /// JSON of another format.
    #[error("not an arbiter replay (format {0:?})")]
    NotAReplay(String),
    /// Written by a newer version of Arbiter.
    #[error("replay version {0} is newer than this program understands ({FORMAT_VERSION})")]
    TooNew(u32),
}
