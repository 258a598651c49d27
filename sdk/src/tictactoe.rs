//! Tic-tac-toe bots: the botsarena messages, the rules and the loop.

pub use arbiter_games::Side;
pub use arbiter_games::tictactoe::{Cell, Position, cell_name, mark_name, parse_cell};

use crate::Clock;
use serde::Deserialize;
use std::collections::BTreeMap;

/// A message from the referee.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Message {
    /// `init` or `play-turn`.
    pub action: String,
    /// The grid at `play-turn` (`""` at init).
    #[serde(default)]
    pub board: serde_json::Value,
    /// `"X"` or `"O"` at `play-turn`.
    #[serde(default)]
    pub you: Option<String>,
    /// 0 for the side that moves first.
    #[serde(rename = "player-index")]
    pub player_index: u8,
}

impl Message {
    /// The grid of a `play-turn` message as a position (X moves first).
    pub fn position(&self) -> Option<Position> {
        let cells: BTreeMap<String, String> = serde_json::from_value(self.board.clone()).ok()?;
        let marked = |mark: &str| -> Vec<Cell> {
            (0..9)
                .filter(|&cell| cells.get(&cell_name(cell)).map(String::as_str) == Some(mark))
                .collect()
        };
        let (xs, os) = (marked("X"), marked("O"));
        if xs.len() < os.len() || xs.len() > os.len() + 1 {
            return None;
        }
        let mut position = Position::new();
        for (i, &x) in xs.iter().enumerate() {
            position = position.play(x).ok()?;
            if let Some(&o) = os.get(i) {
                position = position.play(o).ok()?;
            }
        }
        Some(position)
    }
}

/// A tic-tac-toe bot.
pub trait Bot {
    /// The name sent in answer to `init`.
    fn name(&self) -> &str;
    /// Chooses an empty cell for the side to move.
    fn play(&mut self, position: &Position, clock: &Clock) -> Cell;
}

/// Answers one message line with `bot`.
pub fn answer(bot: &mut impl Bot, line: &str) -> String {
    let name = serde_json::to_string(bot.name()).unwrap_or_else(|_| "\"bot\"".to_string());
    let message: Message = match serde_json::from_str(line) {
        Ok(message) => message,
        Err(error) => {
            eprintln!("cannot read message: {error}");
            return format!("{{\"name\":{name},\"play\":null,\"error\":\"unreadable message\"}}");
        }
    };
    if message.action == "init" {
        return format!("{{\"name\":{name}}}");
    }
    let Some(position) = message.position() else {
        eprintln!("cannot read the board of: {line}");
        return format!("{{\"name\":{name},\"play\":null,\"error\":\"unreadable board\"}}");
    };
    let clock = Clock::start(1_000, 5_000);
    let cell = bot.play(&position, &clock);
    format!("{{\"name\":{name},\"play\":\"{}\",\"error\":null}}", cell_name(cell))
}

/// Runs `bot` over stdin and stdout until stdin ends.
pub fn run(mut bot: impl Bot) {
    crate::serve(|line| answer(&mut bot, line));
}
