//! Tic-tac-toe house bots.

use arbiter_sdk::tictactoe::{Bot, Cell, Position};
use arbiter_sdk::{Clock, Rng};

/// Plays a random empty cell.
pub struct Random(pub Rng);

impl Bot for Random {
    fn name(&self) -> &str {
        "tictactoe-random"
    }

    fn play(&mut self, position: &Position, _clock: &Clock) -> Cell {
        let legal = position.legal_cells();
        self.0.pick(&legal).copied().unwrap_or(0)
    }
}

/// Plays a best cell by minimax (random among equals): never loses.
pub struct Perfect(pub Rng);

impl Bot for Perfect {
    fn name(&self) -> &str {
        "tictactoe-perfect"
    }

    fn play(&mut self, position: &Position, _clock: &Clock) -> Cell {
        let legal = position.legal_cells();
        let values: Vec<i32> = legal
            .iter()
            .map(|&cell| position.play(cell).map_or(i32::MIN, |next| -negamax(&next)))
            .collect();
        let best = values.iter().copied().max();
        let choices: Vec<Cell> = legal
            .iter()
            .zip(&values)
            .filter(|(_, v)| Some(**v) == best)
            .map(|(c, _)| *c)
            .collect();
        self.0.pick(&choices).copied().unwrap_or(0)
    }
}

/// The value of a position for the side to move: 1 win, 0 draw, -1 loss.
pub fn negamax(position: &Position) -> i32 {
    if position.winner().is_some() {
        return -1;
    }
    position
        .legal_cells()
        .iter()
        .filter_map(|&cell| position.play(cell).ok())
        .map(|next| -negamax(&next))
        .max()
        .unwrap_or(0)
}
