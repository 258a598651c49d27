//! Othello bots: the request type, moves, the rules and the loop.

pub use arbiter_games::othello::{
    Color, HistoryEntry, IllegalMove, Mode, Move, OCTAGON_BLOCKED, Placed, Position, Request, Square, move_name,
    parse_square, square_bit, square_name, squares,
};

use crate::Clock;

/// An Othello bot.
pub trait Bot {
    /// Chooses a move for the colour to move in `request`. It must be one of
    /// `request.legal_moves`, or [`Move::Pass`] when that list is empty.
    fn choose(&mut self, request: &Request, clock: &Clock) -> Move;
}

/// The reply line for a move: `{"move":19}` or `{"move":-1}`.
pub fn reply_line(mv: Move) -> String {
    format!("{{\"move\":{}}}", mv.code())
}

/// Answers one request line with `bot`. A line that is not a request gets
/// an explanation on stderr and a pass.
pub fn answer(bot: &mut impl Bot, line: &str) -> String {
    match serde_json::from_str::<Request>(line) {
        Ok(request) => {
            let clock = Clock::start(request.budget_ms, request.remaining_ms);
            reply_line(bot.choose(&request, &clock))
        }
        Err(error) => {
            eprintln!("cannot read request: {error}");
            reply_line(Move::Pass)
        }
    }
}

/// Runs `bot` over stdin and stdout until stdin ends.
pub fn run(mut bot: impl Bot) {
    crate::serve(|line| answer(&mut bot, line));
}
