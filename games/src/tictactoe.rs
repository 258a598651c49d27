//! Tic-tac-toe with the botsarena message format.

use crate::reply::{object, short_json};
use crate::{FinishReason, Game, IllegalAction, Outcome, ReplyError, RequestContext, Scoring, Side};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A cell, `row * 3 + column`, named `"R-C"`.
pub type Cell = u8;

const LINES: [[Cell; 3]; 8] = [
    [0, 1, 2],
    [3, 4, 5],
    [6, 7, 8],
    [0, 3, 6],
    [1, 4, 7],
    [2, 5, 8],
    [0, 4, 8],
    [2, 4, 6],
];

/// The name of a cell, e.g. `"0-2"` for the top right.
pub fn cell_name(cell: Cell) -> String {
    format!("{}-{}", cell / 3, cell % 3)
}

/// Reads `"R-C"` with R and C in 0..2.
pub fn parse_cell(name: &str) -> Option<Cell> {
    match name.as_bytes() {
        [row @ b'0'..=b'2', b'-', column @ b'0'..=b'2'] => Some((row - b'0') * 3 + (column - b'0')),
        _ => None,
    }
}

/// A tic-tac-toe grid and the side to move. X (the first side) moves first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Position {
    marks: [u16; 2],
}

impl Position {
    /// The empty grid.
    pub fn new() -> Position {
        Position::default()
    }

    /// The side to move: X after an even number of marks.
    pub fn to_move(&self) -> Side {
        if (self.marks[0] | self.marks[1]).count_ones().is_multiple_of(2) {
            Side::First
        } else {
            Side::Second
        }
    }

    /// The mark on a cell, if any.
    pub fn mark(&self, cell: Cell) -> Option<Side> {
        Side::BOTH
            .into_iter()
            .find(|side| self.marks[side.index()] & (1 << cell) != 0)
    }

    /// The side with three in a row, if any.
    pub fn winner(&self) -> Option<Side> {
        Side::BOTH.into_iter().find(|side| {
            let marks = self.marks[side.index()];
            LINES
                .iter()
                .any(|line| line.iter().all(|&cell| marks & (1 << cell) != 0))
        })
    }

    /// Whether the game is over: a line or a full grid.
    pub fn is_over(&self) -> bool {
        self.winner().is_some() || (self.marks[0] | self.marks[1]) == 0x1ff
    }

    /// Empty cells while the game goes on, ascending.
    pub fn legal_cells(&self) -> Vec<Cell> {
        if self.is_over() {
            return Vec::new();
        }
        let taken = self.marks[0] | self.marks[1];
        (0..9).filter(|cell| taken & (1 << cell) == 0).collect()
    }

    /// Marks `cell` for the side to move, checking it first.
    pub fn play(&self, cell: Cell) -> Result<Position, String> {
        if self.is_over() {
            return Err("the game is over".to_string());
        }
        if cell >= 9 {
            return Err(format!("cell {cell} is off the grid"));
        }
        if let Some(side) = self.mark(cell) {
            return Err(format!("{} is taken by {}", cell_name(cell), mark_name(side)));
        }
        let mut next = *self;
        next.marks[self.to_move().index()] |= 1 << cell;
        Ok(next)
    }

    /// Counts the leaves of the move tree `depth` plies deep; a finished game
    /// is one leaf.
    pub fn perft(&self, depth: u32) -> u64 {
        if depth == 0 || self.is_over() {
            return 1;
        }
        self.legal_cells()
            .into_iter()
            .filter_map(|cell| self.play(cell).ok())
            .map(|next| next.perft(depth - 1))
            .sum()
    }

    /// The grid as bots see it: the nine `"R-C"` keys mapped to `""`, `"X"`
    /// or `"O"`, in key order.
    pub fn board(&self) -> BTreeMap<String, &'static str> {
        (0..9)
            .map(|cell| (cell_name(cell), self.mark(cell).map_or("", mark_name)))
            .collect()
    }
}

/// `"X"` for the first side, `"O"` for the second.
pub fn mark_name(side: Side) -> &'static str {
    match side {
        Side::First => "X",
        Side::Second => "O",
    }
}

/// The messages a bot receives, field for field as botsarena sends them.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Request {
    /// String id of this game.
    #[serde(rename = "game-id")]
    pub game_id: String,
    /// `init` or `play-turn`.
    pub action: &'static str,
    /// Always `tictactoe`.
    pub game: &'static str,
    /// Always 2.
    pub players: u8,
    /// `""` at init, then the grid.
    pub board: Board,
    /// The bot's mark; absent at init.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub you: Option<&'static str>,
    /// 0 for the side that moves first in this game, 1 for the other.
    #[serde(rename = "player-index")]
    pub player_index: u8,
}

/// `board` of a request: an empty string at init, then the grid.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum Board {
    /// At init: `""`.
    Empty(&'static str),
    /// The nine cells.
    Grid(BTreeMap<String, &'static str>),
}

/// An action: the init answer (read, never checked) or a mark on a cell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The answer to the init message.
    Hello,
    /// Mark this cell.
    Mark(Cell),
}

/// One game of tic-tac-toe as the referee plays it: first an init message to
/// both sides (it counts as a turn), then the moves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TicTacToe {
    greeted: bool,
    position: Position,
    moves: Vec<Cell>,
}

impl TicTacToe {
    /// A new game, before the init messages.
    pub fn new() -> TicTacToe {
        TicTacToe::default()
    }

    /// The current grid.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The game id bots see: unique per match and game.
    pub fn game_id(context: &RequestContext) -> String {
        (context.match_id * 2 + u64::from(context.game_index)).to_string()
    }
}

/// Parses a reply to a play-turn message: only `play` is read.
pub fn parse_play(line: &str) -> Result<Cell, ReplyError> {
    let reply = object(line)?;
    match reply.get("play") {
        None | Some(serde_json::Value::Null) => Err(ReplyError::MissingField("play")),
        Some(serde_json::Value::String(name)) => parse_cell(name).ok_or_else(|| ReplyError::NotACell(name.clone())),
        Some(other) => Err(ReplyError::WrongType {
            field: "play",
            expected: "a cell name like \"0-2\"",
            found: short_json(other),
        }),
    }
}

/// What a replay keeps of one tic-tac-toe game besides its turns. The
/// fields are in the order a replay writes them (by name).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TicTacToeRecord {
    /// The grid at the end: each cell (`a1` … `c3`) to `X`, `O` or `""`.
    pub final_board: BTreeMap<String, String>,
    /// The marks in the order played, as cell names.
    pub moves: Vec<String>,
}

impl Game for TicTacToe {
    type Action = Action;

    fn to_act(&self) -> Vec<Side> {
        if !self.greeted {
            Side::BOTH.to_vec()
        } else if self.position.is_over() {
            Vec::new()
        } else {
            vec![self.position.to_move()]
        }
    }

    fn request(&self, side: Side, context: &RequestContext) -> String {
        let request = Request {
            game_id: TicTacToe::game_id(context),
            action: if self.greeted { "play-turn" } else { "init" },
            game: "tictactoe",
            players: 2,
            board: if self.greeted {
                Board::Grid(self.position.board())
            } else {
                Board::Empty("")
            },
            you: self.greeted.then(|| mark_name(side)),
            player_index: side.index() as u8,
        };
        serde_json::to_string(&request).unwrap_or_default()
    }

    fn parse_reply(&self, _side: Side, line: &str) -> Result<Action, ReplyError> {
        if self.greeted {
            parse_play(line).map(Action::Mark)
        } else {
            Ok(Action::Hello)
        }
    }

    fn apply(&mut self, actions: &[(Side, Action)], _at_ms: u64) -> Result<(), IllegalAction> {
        if !self.greeted {
            self.greeted = true;
            return Ok(());
        }
        let side = self.position.to_move();
        match actions {
            &[(acting, Action::Mark(cell))] if acting == side => {
                self.position = self
                    .position
                    .play(cell)
                    .map_err(|reason| IllegalAction { side, reason })?;
                self.moves.push(cell);
                Ok(())
            }
            _ => Err(IllegalAction {
                side,
                reason: "expected one mark from the side to move".to_string(),
            }),
        }
    }

    fn outcome(&self) -> Option<Outcome> {
        if !self.greeted || !self.position.is_over() {
            return None;
        }
        Some(match self.position.winner() {
            Some(winner) => {
                let mut scores = [0, 0];
                scores[winner.index()] = 2;
                Outcome {
                    scores,
                    reason: FinishReason::Line,
                    faulted: None,
                }
            }
            None => Outcome {
                scores: [1, 1],
                reason: FinishReason::Draw,
                faulted: None,
            },
        })
    }

    fn forfeit(&self, loser: Side, reason: FinishReason) -> Outcome {
        let mut scores = [2, 2];
        scores[loser.index()] = 0;
        Outcome {
            scores,
            reason,
            faulted: Some(loser),
        }
    }

    fn scoring(&self) -> Scoring {
        Scoring::HigherWins
    }

    fn notation(&self, action: &Action) -> String {
        match action {
            Action::Hello => "hello".to_string(),
            Action::Mark(cell) => cell_name(*cell),
        }
    }

    type Record = TicTacToeRecord;

    fn record(&self) -> TicTacToeRecord {
        TicTacToeRecord {
            final_board: self
                .position
                .board()
                .into_iter()
                .map(|(cell, mark)| (cell, mark.to_owned()))
                .collect(),
            moves: self.moves.iter().map(|&cell| cell_name(cell)).collect(),
        }
    }
}
