//! The position of a game against a person, kept beside the referee's from
//! the moves it accepted: what the person's page shows, which squares the
//! person may choose, and the reply line a chosen square becomes.

use arbiter_games::othello::{self, Mode, Move};
use arbiter_games::{Side, Variant, tictactoe};
use arbiter_referee::replay::TurnRecord;
use serde::Serialize;

/// A game's position as the site shows it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Board {
    /// Tic-tac-toe.
    TicTacToe(tictactoe::Position),
    /// Othello in one of its modes.
    Othello(othello::Position),
}

/// One square of the board, for the page and the API.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Square {
    /// Its name in the game's notation (`0-2`, `d3`).
    pub name: String,
    /// What is on it: `X`, `O`, `black`, `white`, `blocked` or empty.
    pub mark: &'static str,
}

impl Board {
    /// The position a game of `variant` starts from: Othello from the
    /// mode's start position, or after the seeded opening when
    /// `random_opening`.
    pub fn start(variant: Variant, seed: u64, random_opening: bool) -> Option<Board> {
        match variant {
            Variant::TicTacToe => Some(Board::TicTacToe(tictactoe::Position::new())),
            Variant::Othello(mode) => {
                let mut position = othello::Position::start(mode);
                if random_opening {
                    for mv in othello::opening(mode, seed) {
                        position = position.play(mv).ok()?;
                    }
                }
                Some(Board::Othello(position))
            }
            Variant::Skirmish => None,
        }
    }

    /// Plays an accepted action in the referee's notation (`hello` greets
    /// and changes nothing); `false` if it does not apply here.
    pub fn apply(&mut self, action: &str) -> bool {
        match self {
            Board::TicTacToe(position) => {
                if action == "hello" {
                    return true;
                }
                let Some(cell) = tictactoe::parse_cell(action) else {
                    return false;
                };
                position.play(cell).map(|next| *position = next).is_ok()
            }
            Board::Othello(position) => {
                let mv = if action == "--" {
                    Move::Pass
                } else {
                    match othello::parse_square(action, position.mode().board_size()) {
                        Some(square) => Move::Place(square),
                        None => return false,
                    }
                };
                position.play(mv).map(|next| *position = next).is_ok()
            }
        }
    }

    /// Plays the move a recorded turn made, if it made one (not a fault,
    /// not tic-tac-toe's greeting), and adds it to `moves`; whether it did.
    pub fn play_turn(&mut self, turn: &TurnRecord, moves: &mut Vec<String>) -> bool {
        let Some(action) = turn.action.as_deref().filter(|a| turn.fault.is_none() && *a != "hello") else {
            return false;
        };
        let played = self.apply(action);
        if played {
            moves.push(action.to_owned());
        }
        played
    }

    /// The side to move, `None` when the game is over.
    pub fn to_move(&self) -> Option<Side> {
        match self {
            Board::TicTacToe(position) => (!position.is_over()).then(|| position.to_move()),
            Board::Othello(position) => (!position.is_over()).then(|| position.to_move().side()),
        }
    }

    /// The legal squares of the side to move, by name (none when it must
    /// pass or the game is over).
    pub fn legal(&self) -> Vec<String> {
        match self {
            Board::TicTacToe(position) => position.legal_cells().into_iter().map(tictactoe::cell_name).collect(),
            Board::Othello(position) => {
                let size = position.mode().board_size();
                position
                    .legal_squares()
                    .into_iter()
                    .map(|square| othello::square_name(square, size))
                    .collect()
            }
        }
    }

    /// Whether the side to move has no square and must pass (Othello).
    pub fn must_pass(&self) -> bool {
        matches!(self, Board::Othello(position) if !position.is_over() && position.must_pass())
    }

    /// Squares in rows, from the top row (row 1 / `0-x`) down.
    pub fn rows(&self) -> Vec<Vec<Square>> {
        match self {
            Board::TicTacToe(position) => (0..3u8)
                .map(|row| {
                    (0..3u8)
                        .map(|column| {
                            let cell = row * 3 + column;
                            Square {
                                name: tictactoe::cell_name(cell),
                                mark: match position.mark(cell) {
                                    Some(side) => tictactoe::mark_name(side),
                                    None => "",
                                },
                            }
                        })
                        .collect()
                })
                .collect(),
            Board::Othello(position) => {
                let mode = position.mode();
                let size = mode.board_size();
                let cells = position.board();
                (0..size)
                    .map(|row| {
                        (0..size)
                            .map(|column| {
                                let square = row * size + column;
                                let mark = if mode.blocked_squares().contains(&square) {
                                    "blocked"
                                } else {
                                    match cells.get(usize::from(square)) {
                                        Some(1) => "black",
                                        Some(2) => "white",
                                        _ => "",
                                    }
                                };
                                Square {
                                    name: othello::square_name(square, size),
                                    mark,
                                }
                            })
                            .collect()
                    })
                    .collect()
            }
        }
    }

    /// Discs or marks of each side (Othello's discs; tic-tac-toe's marks).
    pub fn counts(&self) -> [u32; 2] {
        match self {
            Board::TicTacToe(position) => {
                let mut counts = [0, 0];
                for cell in 0..9 {
                    if let Some(side) = position.mark(cell) {
                        counts[side.index()] += 1;
                    }
                }
                counts
            }
            Board::Othello(position) => position.counts(),
        }
    }

    /// The reply line that plays `square` (a name, any case), if it is a
    /// legal square of the side to move.
    pub fn reply_for(&self, square: &str) -> Option<String> {
        let wanted = square.trim().to_ascii_lowercase();
        let name = self.legal().into_iter().find(|name| *name == wanted)?;
        Some(match self {
            Board::TicTacToe(_) => serde_json::json!({ "play": name }).to_string(),
            Board::Othello(_) => serde_json::json!({ "move": name }).to_string(),
        })
    }

    /// The reply line of a forced pass.
    pub fn pass_reply(&self) -> String {
        serde_json::json!({ "move": "pass" }).to_string()
    }

    /// The name of the side `side` plays: `X`/`O` or `black`/`white`.
    pub fn side_name(&self, side: Side) -> &'static str {
        match self {
            Board::TicTacToe(_) => tictactoe::mark_name(side),
            Board::Othello(_) => match side {
                Side::First => "black",
                Side::Second => "white",
            },
        }
    }

    /// Othello's mode, if Othello.
    pub fn mode(&self) -> Option<Mode> {
        match self {
            Board::Othello(position) => Some(position.mode()),
            Board::TicTacToe(_) => None,
        }
    }
}
