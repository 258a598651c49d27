//! Which game and mode: the name of a ladder, such as `othello:anti`.

use crate::othello::Mode;
use std::fmt;
use std::str::FromStr;

/// A game and its mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Variant {
    /// Tic-tac-toe (mode `standard`).
    TicTacToe,
    /// Othello in one of its five modes.
    Othello(Mode),
}

/// Time limits of one side in one game, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Budget {
    /// The most one turn may take.
    pub turn_ms: u64,
    /// The bank for the whole game.
    pub bank_ms: u64,
}

impl Variant {
    /// Every variant, for listings.
    pub const ALL: [Variant; 6] = [
        Variant::TicTacToe,
        Variant::Othello(Mode::Std),
        Variant::Othello(Mode::Anti),
        Variant::Othello(Mode::Grand),
        Variant::Othello(Mode::Octagon),
        Variant::Othello(Mode::Reversi),
    ];

    /// The game's name: `tictactoe` or `othello`.
    pub fn game(self) -> &'static str {
        match self {
            Variant::TicTacToe => "tictactoe",
            Variant::Othello(_) => "othello",
        }
    }

    /// The mode's name: `standard` for tic-tac-toe, else the Othello mode.
    pub fn mode(self) -> &'static str {
        match self {
            Variant::TicTacToe => "standard",
            Variant::Othello(mode) => mode.as_str(),
        }
    }

    /// The default budgets of the game's spec: tic-tac-toe 1 s per turn and
    /// 5 s per game; Othello 10 s per move and 60 s per leg.
    pub fn default_budget(self) -> Budget {
        match self {
            Variant::TicTacToe => Budget {
                turn_ms: 1_000,
                bank_ms: 5_000,
            },
            Variant::Othello(_) => Budget {
                turn_ms: 10_000,
                bank_ms: 60_000,
            },
        }
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.game(), self.mode())
    }
}

/// A `GAME[:MODE]` that names no variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game {0:?}: expected tictactoe or othello[:std|anti|grand|octagon|reversi]")]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;

    /// Parses `tictactoe`, `tictactoe:standard`, `othello` (= `othello:std`)
    /// or `othello:MODE`, case-insensitively.
    fn from_str(text: &str) -> Result<Variant, UnknownVariant> {
        let lower = text.trim().to_ascii_lowercase();
        let (game, mode) = match lower.split_once(':') {
            Some((game, mode)) => (game, Some(mode)),
            None => (lower.as_str(), None),
        };
        match (game, mode) {
            ("tictactoe", None | Some("standard")) => Ok(Variant::TicTacToe),
            ("othello", None) => Ok(Variant::Othello(Mode::Std)),
            ("othello", Some(mode)) => mode
                .parse()
                .map(Variant::Othello)
                .map_err(|_| UnknownVariant(text.to_string())),
            _ => Err(UnknownVariant(text.to_string())),
        }
    }
}
