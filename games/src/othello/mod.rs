//! The Othello family: `std`, `anti`, `grand`, `octagon` and `reversi`.
//!
//! [`Position`] is the pure rules (bitboards, legal moves, flips, perft);
//! [`Othello`] is one leg as the referee plays it: a seeded 12-disc opening,
//! the FlipSight request JSON field for field, the reply parser and scoring.

mod notation;
mod opening;
mod position;

pub use notation::{PASS_NAMES, move_name, parse_reply, parse_square, square_name};
pub use opening::opening;
pub use position::{IllegalMove, Move, OCTAGON_BLOCKED, Position, REVERSI_DISCS, Square, square_bit, squares};

use crate::{FinishReason, Game, IllegalAction, Outcome, ReplyError, RequestContext, Scoring, Side};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

/// An Othello mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Standard 8×8; more discs win.
    Std,
    /// 8×8; fewer discs win.
    Anti,
    /// 10×10.
    Grand,
    /// 10×10 without three squares in each corner.
    Octagon,
    /// Classic reversi: empty start, centre squares first, 32 discs each.
    Reversi,
}

impl Mode {
    /// Every mode.
    pub const ALL: [Mode; 5] = [Mode::Std, Mode::Anti, Mode::Grand, Mode::Octagon, Mode::Reversi];

    /// The name bots see in `game_mode`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Std => "std",
            Mode::Anti => "anti",
            Mode::Grand => "grand",
            Mode::Octagon => "octagon",
            Mode::Reversi => "reversi",
        }
    }

    /// 8 or 10.
    pub fn board_size(self) -> u8 {
        match self {
            Mode::Std | Mode::Anti | Mode::Reversi => 8,
            Mode::Grand | Mode::Octagon => 10,
        }
    }

    /// Squares nobody can play: octagon's corners, none elsewhere.
    pub fn blocked_squares(self) -> &'static [Square] {
        match self {
            Mode::Octagon => &OCTAGON_BLOCKED,
            _ => &[],
        }
    }

    /// What listings call the mode: `standard`, `anti (fewest discs wins)`,
    /// `grand 10×10`, `octagon 10×10`, `reversi (empty start)`.
    pub fn label(self) -> &'static str {
        match self {
            Mode::Std => "standard",
            Mode::Anti => "anti (fewest discs wins)",
            Mode::Grand => "grand 10×10",
            Mode::Octagon => "octagon 10×10",
            Mode::Reversi => "reversi (empty start)",
        }
    }

    /// One sentence on what sets the mode apart, for listings.
    pub fn description(self) -> &'static str {
        match self {
            Mode::Std => "Othello on 8×8; more discs win.",
            Mode::Anti => "Othello on 8×8; fewer discs win.",
            Mode::Grand => "Othello on 10×10.",
            Mode::Octagon => "Othello on 10×10 without three squares in each corner.",
            Mode::Reversi => "Classic reversi: an empty board, the four centre squares first, 32 discs each.",
        }
    }

    /// Whether the board starts empty and the four centre squares are
    /// filled first (reversi's centre phase).
    pub fn starts_empty(self) -> bool {
        matches!(self, Mode::Reversi)
    }

    /// Playable squares: 64, 100 or 88.
    pub fn playable_squares(self) -> u32 {
        u32::from(self.board_size()).pow(2) - self.blocked_squares().len() as u32
    }

    /// Fixed `result_discs` of a forfeited leg, as [loser, winner].
    pub fn result_discs(self) -> [u32; 2] {
        match self {
            Mode::Anti => [64, 0],
            mode => [0, mode.playable_squares()],
        }
    }

    /// More discs win, or fewer in `anti`.
    pub fn scoring(self) -> Scoring {
        match self {
            Mode::Anti => Scoring::LowerWins,
            _ => Scoring::HigherWins,
        }
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;
    fn from_str(text: &str) -> Result<Mode, String> {
        Mode::ALL
            .into_iter()
            .find(|mode| mode.as_str().eq_ignore_ascii_case(text))
            .ok_or_else(|| format!("unknown othello mode {text:?}"))
    }
}

/// A disc colour. Black (1) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Color {
    /// 1 in requests.
    Black,
    /// 2 in requests.
    White,
}

impl Color {
    /// 0 for black, 1 for white.
    pub fn index(self) -> usize {
        match self {
            Color::Black => 0,
            Color::White => 1,
        }
    }

    /// 1 for black, 2 for white, as in requests.
    pub fn code(self) -> u8 {
        self.index() as u8 + 1
    }

    /// The other colour.
    pub fn other(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }

    /// The colour a side plays: the first side is black.
    pub fn of(side: Side) -> Color {
        match side {
            Side::First => Color::Black,
            Side::Second => Color::White,
        }
    }

    /// The side playing this colour.
    pub fn side(self) -> Side {
        match self {
            Color::Black => Side::First,
            Color::White => Side::Second,
        }
    }

    /// Reads 1 or 2.
    pub fn from_code(code: u8) -> Option<Color> {
        match code {
            1 => Some(Color::Black),
            2 => Some(Color::White),
            _ => None,
        }
    }
}

/// `placed` in a request: discs placed per colour, keyed `"1"` and `"2"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Placed {
    /// Black's discs placed.
    #[serde(rename = "1")]
    pub black: u16,
    /// White's discs placed.
    #[serde(rename = "2")]
    pub white: u16,
}

/// One entry of a request's `history`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryEntry {
    /// 1 or 2.
    pub color: u8,
    /// Participant (0 or 1) who played it.
    pub participant: u8,
    /// The square, or -1 for a pass.
    #[serde(rename = "move")]
    pub mv: i32,
    /// The leg's virtual time when it was played (both sides' spent
    /// milliseconds added up).
    pub at_ms: u64,
}

/// The request a bot receives, field for field (and in field order) as the
/// FlipSight engine protocol sends it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Request {
    /// `size²` cells: 0 empty (blocked squares too), 1 black, 2 white.
    pub board: Vec<u8>,
    /// The colour to move: the bot's colour.
    pub color: u8,
    /// Legal squares, ascending; empty means the bot must pass.
    pub legal_moves: Vec<i32>,
    /// The mode.
    pub game_mode: Mode,
    /// 8 or 10.
    pub board_size: u8,
    /// Octagon's blocked squares (unsorted), empty elsewhere.
    pub blocked_squares: Vec<Square>,
    /// Discs placed so far per colour, opening included.
    pub placed: Placed,
    /// The bot's clock left in this leg.
    pub remaining_ms: u64,
    /// The match id.
    pub match_id: u64,
    /// 0 or 1.
    pub leg: u8,
    /// State number of this leg after the opening, +1 per move or pass.
    pub revision: u32,
    /// Moves played in this leg after the opening.
    pub history: Vec<HistoryEntry>,
    /// Always null; kept for compatibility.
    pub round_no: Option<u32>,
    /// Always null; kept for compatibility.
    pub room_created_at: Option<String>,
    /// The most this move may take.
    pub budget_ms: u64,
}

impl Request {
    /// The request for the colour to move in `position`.
    pub fn new(position: &Position, history: &[HistoryEntry], context: &RequestContext) -> Request {
        let placed = position.placed();
        let mode = position.mode();
        Request {
            board: position.board(),
            color: position.to_move().code(),
            legal_moves: position.legal_squares().into_iter().map(i32::from).collect(),
            game_mode: mode,
            board_size: mode.board_size(),
            blocked_squares: mode.blocked_squares().to_vec(),
            placed: Placed {
                black: placed[0],
                white: placed[1],
            },
            remaining_ms: context.remaining_ms,
            match_id: context.match_id,
            leg: context.game_index,
            revision: history.len() as u32,
            history: history.to_vec(),
            round_no: None,
            room_created_at: None,
            budget_ms: context.budget_ms,
        }
    }

    /// The position this request describes (for bots and tools).
    pub fn position(&self) -> Result<Position, String> {
        let color = Color::from_code(self.color).ok_or_else(|| format!("color must be 1 or 2, not {}", self.color))?;
        Position::from_board(
            self.game_mode,
            &self.board,
            color,
            Some([self.placed.black, self.placed.white]),
        )
    }

    /// The request as one JSON line.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// One played move of a leg, as kept for requests and replays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Played {
    color: Color,
    side: Side,
    mv: Move,
    at_ms: u64,
}

/// One leg of an Othello match, from its opening to the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Othello {
    opening: Vec<Move>,
    position: Position,
    played: Vec<Played>,
}

impl Othello {
    /// A leg starting from the seeded 12-disc opening of `mode`.
    pub fn new(mode: Mode, seed: u64) -> Othello {
        let opening = opening(mode, seed);
        Othello::from_opening(mode, &opening).unwrap_or_else(|_| Othello::from_position(Position::start(mode)))
    }

    /// A leg starting after `moves` from the mode's start position.
    pub fn from_opening(mode: Mode, moves: &[Move]) -> Result<Othello, (usize, IllegalMove)> {
        let mut position = Position::start(mode);
        for (index, &mv) in moves.iter().enumerate() {
            position = position.play(mv).map_err(|e| (index, e))?;
        }
        Ok(Othello {
            opening: moves.to_vec(),
            position,
            played: Vec::new(),
        })
    }

    /// A leg starting from any position (no opening recorded).
    pub fn from_position(position: Position) -> Othello {
        Othello {
            opening: Vec::new(),
            position,
            played: Vec::new(),
        }
    }

    /// The current position.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The opening moves this leg started from.
    pub fn opening(&self) -> &[Move] {
        &self.opening
    }

    /// The moves played after the opening.
    pub fn moves(&self) -> impl Iterator<Item = Move> + '_ {
        self.played.iter().map(|played| played.mv)
    }

    /// The whole leg as a transcript: opening and moves, `f5d6c3...`, with
    /// `--` for a pass.
    pub fn transcript(&self) -> String {
        let size = self.position.mode().board_size();
        self.opening
            .iter()
            .copied()
            .chain(self.moves())
            .map(|mv| move_name(mv, size))
            .collect()
    }

    /// The request the colour to move receives.
    pub fn request_for(&self, context: &RequestContext) -> Request {
        let history: Vec<HistoryEntry> = self
            .played
            .iter()
            .map(|played| HistoryEntry {
                color: played.color.code(),
                participant: context.participants[played.side.index()],
                mv: played.mv.code(),
                at_ms: played.at_ms,
            })
            .collect();
        Request::new(&self.position, &history, context)
    }
}

/// What a replay keeps of one Othello game (leg) besides its turns. The
/// fields are in the order a replay writes them (by name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OthelloRecord {
    /// Discs of each side at the end: black (first), white (second).
    pub discs: [u32; 2],
    /// The board at the end as bots see it: 0 empty, 1 black, 2 white.
    pub final_board: Vec<u8>,
    /// The opening in move names, e.g. `f5d6c3d3`.
    pub opening: String,
    /// The opening as the numbers bots use (the square, -1 for a pass).
    pub opening_moves: Vec<i32>,
    /// Every move of the leg, opening included, in move names (`--` for a
    /// pass).
    pub transcript: String,
}

impl Game for Othello {
    type Action = Move;

    fn to_act(&self) -> Vec<Side> {
        if self.position.is_over() {
            Vec::new()
        } else {
            vec![self.position.to_move().side()]
        }
    }

    fn request(&self, _side: Side, context: &RequestContext) -> String {
        self.request_for(context).to_line()
    }

    fn parse_reply(&self, _side: Side, line: &str) -> Result<Move, ReplyError> {
        parse_reply(line, self.position.mode())
    }

    fn apply(&mut self, actions: &[(Side, Move)], at_ms: u64) -> Result<(), IllegalAction> {
        let color = self.position.to_move();
        let side = color.side();
        let &[(acting, mv)] = actions else {
            return Err(IllegalAction {
                side,
                reason: format!("expected one action, got {}", actions.len()),
            });
        };
        if acting != side {
            return Err(IllegalAction {
                side: acting,
                reason: "not this side's turn".to_string(),
            });
        }
        self.position = self.position.play(mv).map_err(|e| IllegalAction {
            side,
            reason: e.to_string(),
        })?;
        self.played.push(Played { color, side, mv, at_ms });
        Ok(())
    }

    fn outcome(&self) -> Option<Outcome> {
        self.position.is_over().then(|| Outcome {
            scores: self.position.counts(),
            reason: FinishReason::Discs,
            faulted: None,
        })
    }

    fn forfeit(&self, loser: Side, reason: FinishReason) -> Outcome {
        let [lost, won] = self.position.mode().result_discs();
        let mut scores = [won, won];
        scores[loser.index()] = lost;
        Outcome {
            scores,
            reason,
            faulted: Some(loser),
        }
    }

    fn scoring(&self) -> Scoring {
        self.position.mode().scoring()
    }

    fn notation(&self, action: &Move) -> String {
        move_name(*action, self.position.mode().board_size())
    }

    type Record = OthelloRecord;

    fn record(&self) -> OthelloRecord {
        let size = self.position.mode().board_size();
        OthelloRecord {
            discs: self.position.counts(),
            final_board: self.position.board(),
            opening: self.opening.iter().map(|&mv| move_name(mv, size)).collect(),
            opening_moves: self.opening.iter().map(|&mv| mv.code()).collect(),
            transcript: self.transcript(),
        }
    }
}
