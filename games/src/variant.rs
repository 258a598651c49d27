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
    /// Skirmish (mode `standard`: the built-in 48×48 map
    /// [`Variant::SKIRMISH_MAP`]).
    Skirmish,
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
    /// The map of `skirmish:standard`.
    pub const SKIRMISH_MAP: &'static str = "duel48";

    /// Every variant, for listings.
    pub const ALL: [Variant; 7] = [
        Variant::TicTacToe,
        Variant::Othello(Mode::Std),
        Variant::Othello(Mode::Anti),
        Variant::Othello(Mode::Grand),
        Variant::Othello(Mode::Octagon),
        Variant::Othello(Mode::Reversi),
        Variant::Skirmish,
    ];

    /// The game's name: `tictactoe`, `othello` or `skirmish`.
    pub fn game(self) -> &'static str {
        match self {
            Variant::TicTacToe => "tictactoe",
            Variant::Othello(_) => "othello",
            Variant::Skirmish => "skirmish",
        }
    }

    /// The mode's name: `standard` for tic-tac-toe and skirmish, else the
    /// Othello mode.
    pub fn mode(self) -> &'static str {
        match self {
            Variant::TicTacToe | Variant::Skirmish => "standard",
            Variant::Othello(mode) => mode.as_str(),
        }
    }

    /// The game's title: `Tic-tac-toe`, `Othello` or `Skirmish`.
    pub fn title(self) -> &'static str {
        match self {
            Variant::TicTacToe => "Tic-tac-toe",
            Variant::Othello(_) => "Othello",
            Variant::Skirmish => "Skirmish",
        }
    }

    /// What listings call the mode: `standard`, or the Othello mode's
    /// [`Mode::label`] such as `anti (fewest discs wins)`.
    pub fn mode_label(self) -> &'static str {
        match self {
            Variant::TicTacToe | Variant::Skirmish => "standard",
            Variant::Othello(mode) => mode.label(),
        }
    }

    /// What listings call the two sides: `X`/`O`, `Black`/`White`,
    /// `Side 1`/`Side 2`.
    pub fn side_names(self) -> [&'static str; 2] {
        match self {
            Variant::TicTacToe => ["X", "O"],
            Variant::Othello(_) => ["Black", "White"],
            Variant::Skirmish => ["Side 1", "Side 2"],
        }
    }

    /// One sentence on the variant, for listings.
    pub fn description(self) -> &'static str {
        match self {
            Variant::TicTacToe => "Tic-tac-toe on 3×3; a match totals the points of two games.",
            Variant::Othello(mode) => mode.description(),
            Variant::Skirmish => {
                "A small real-time strategy game on a 48×48 map under fog of war; both sides act every tick."
            }
        }
    }

    /// The games' names, each once, in the order of [`Variant::ALL`].
    pub fn games() -> Vec<&'static str> {
        let mut games: Vec<&'static str> = Vec::new();
        for variant in Variant::ALL {
            if !games.contains(&variant.game()) {
                games.push(variant.game());
            }
        }
        games
    }

    /// The modes of `game`, in the order of [`Variant::ALL`] (empty for an
    /// unknown game).
    pub fn modes_of(game: &str) -> Vec<Variant> {
        Variant::ALL.into_iter().filter(|v| v.game() == game).collect()
    }

    /// What a `GAME[:MODE]` may be, for help and error texts:
    /// `tictactoe, othello[:std|anti|grand|octagon|reversi] or skirmish`
    /// (a game of one mode is shown by its name alone).
    pub fn expected() -> String {
        let games: Vec<String> = Variant::games()
            .into_iter()
            .map(|game| {
                let modes: Vec<&str> = Variant::modes_of(game).into_iter().map(Variant::mode).collect();
                if modes.len() > 1 {
                    format!("{game}[:{}]", modes.join("|"))
                } else {
                    game.to_string()
                }
            })
            .collect();
        match games.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => games.concat(),
        }
    }

    /// Whether both sides act every tick under a per-tick budget (skirmish)
    /// rather than taking turns against a per-game bank.
    pub fn is_tick_based(self) -> bool {
        matches!(self, Variant::Skirmish)
    }

    /// The default time control of a hosted ladder and of `arbiter play`:
    /// tic-tac-toe 100 ms per turn and 1 s per game; Othello on 8×8 1 s per
    /// move and 10 s per leg, on 10×10 1.5 s and 15 s. Virtual time, per
    /// side. (FlipSight's own defaults, 10 s and 60 s, are among
    /// [`Variant::longer_budgets`].) Skirmish, which has no bank, reads a
    /// budget as the per-tick budget and the set-up budget of tick 0: 20 ms
    /// and 1 000 ms.
    pub fn default_budget(self) -> Budget {
        match self {
            Variant::TicTacToe => Budget::new(100, 1_000),
            Variant::Skirmish => Budget::new(crate::skirmish::DEADLINE_MS, crate::skirmish::FIRST_DEADLINE_MS),
            Variant::Othello(mode) if mode.board_size() == 10 => Budget::new(1_500, 15_000),
            Variant::Othello(_) => Budget::new(1_000, 10_000),
        }
    }

    /// How the variant's scores compare: fewer discs win in anti Othello,
    /// more everywhere else. Every winner is read through it (see
    /// [`Scoring::winner`](crate::Scoring::winner)).
    pub fn scoring(self) -> crate::Scoring {
        match self {
            Variant::Othello(mode) => mode.scoring(),
            Variant::TicTacToe | Variant::Skirmish => crate::Scoring::HigherWins,
        }
    }

    /// The longer time controls a challenge may ask for, shortest first:
    /// tic-tac-toe 1 s / 5 s (the spec's own); Othello 5 s / 30 s and
    /// 10 s / 60 s (FlipSight's); skirmish 100 ms per tick, 5 s at tick 0.
    pub fn longer_budgets(self) -> &'static [Budget] {
        const TICTACTOE: [Budget; 1] = [Budget::new(1_000, 5_000)];
        const OTHELLO: [Budget; 2] = [Budget::new(5_000, 30_000), Budget::new(10_000, 60_000)];
        const SKIRMISH: [Budget; 1] = [Budget::new(100, 5_000)];
        match self {
            Variant::TicTacToe => &TICTACTOE,
            Variant::Othello(_) => &OTHELLO,
            Variant::Skirmish => &SKIRMISH,
        }
    }
}

impl Budget {
    /// A per-turn cap and a per-game bank, in virtual milliseconds.
    pub const fn new(turn_ms: u64, bank_ms: u64) -> Budget {
        Budget { turn_ms, bank_ms }
    }
}

impl fmt::Display for Budget {
    /// `TURN_MS/BANK_MS`, the form [`Budget::from_str`] reads.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.turn_ms, self.bank_ms)
    }
}

/// A time control that is not `TURN_MS/BANK_MS` with `0 < TURN_MS <= BANK_MS`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("bad time control {0:?}: expected MOVE_MS/BANK_MS, e.g. 1000/10000, with 0 < MOVE_MS <= BANK_MS <= 3600000")]
pub struct BadBudget(pub String);

impl FromStr for Budget {
    type Err = BadBudget;

    /// Reads `TURN_MS/BANK_MS` in milliseconds, e.g. `1000/10000`; the bank
    /// is at most an hour.
    fn from_str(text: &str) -> Result<Budget, BadBudget> {
        let bad = || BadBudget(text.to_string());
        let (turn, bank) = text.trim().split_once('/').ok_or_else(bad)?;
        let turn_ms: u64 = turn.trim().parse().map_err(|_| bad())?;
        let bank_ms: u64 = bank.trim().parse().map_err(|_| bad())?;
        if turn_ms == 0 || turn_ms > bank_ms || bank_ms > 3_600_000 {
            return Err(bad());
        }
        Ok(Budget { turn_ms, bank_ms })
    }
}

impl fmt::Display for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.game(), self.mode())
    }
}

/// A `GAME[:MODE]` that names no variant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown game {:?}: expected {}", .0, Variant::expected())]
pub struct UnknownVariant(pub String);

impl FromStr for Variant {
    type Err = UnknownVariant;

    /// Parses `tictactoe`, `tictactoe:standard`, `othello` (= `othello:std`)
    /// `othello:MODE`, `skirmish` or `skirmish:standard`,
    /// case-insensitively.
    fn from_str(text: &str) -> Result<Variant, UnknownVariant> {
        let lower = text.trim().to_ascii_lowercase();
        let (game, mode) = match lower.split_once(':') {
            Some((game, mode)) => (game, Some(mode)),
            None => (lower.as_str(), None),
        };
        match (game, mode) {
            ("tictactoe", None | Some("standard")) => Ok(Variant::TicTacToe),
            ("skirmish", None | Some("standard")) => Ok(Variant::Skirmish),
            ("othello", None) => Ok(Variant::Othello(Mode::Std)),
            ("othello", Some(mode)) => mode
                .parse()
                .map(Variant::Othello)
                .map_err(|_| UnknownVariant(text.to_string())),
            _ => Err(UnknownVariant(text.to_string())),
        }
    }
}
