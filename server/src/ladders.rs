//! Ladders: one per (game, mode), each with its own leaderboard.

use crate::error::ApiError;
use arbiter_games::Variant;

/// Every ladder's name, e.g. `othello:std`, `tictactoe:standard`.
pub fn names() -> Vec<String> {
    Variant::ALL.iter().map(ToString::to_string).collect()
}

/// Reads a ladder name (`othello:anti`, `othello` = `othello:std`,
/// `tictactoe`), answering 400 with the list of ladders otherwise.
pub fn parse(name: &str) -> Result<Variant, ApiError> {
    name.parse::<Variant>()
        .map_err(|_| ApiError::BadRequest(format!("unknown ladder {name:?}: ladders are {}", names().join(", "))))
}

/// The canonical name of a ladder.
pub fn name(variant: Variant) -> String {
    variant.to_string()
}
