//! my-bot: an Arbiter bot. It plays greedy Othello in every mode (the move
//! that flips the most discs, the fewest in `anti`) and perfect
//! tic-tac-toe (minimax); ties go to the first candidate, so its moves
//! depend on the request alone and the native build plays what `bot.wasm`
//! plays. Replace `choose` and `play` with your own.

use arbiter_sdk::Clock;
use arbiter_sdk::othello::{self, Mode, Move, Request};
use arbiter_sdk::tictactoe::{self, Cell, Position};

/// The Othello bot.
struct Greedy;

impl othello::Bot for Greedy {
    fn choose(&mut self, request: &Request, _clock: &Clock) -> Move {
        let Ok(position) = request.position() else {
            // A request the rules cannot read: the first legal move.
            return first_legal(request);
        };
        let me = position.to_move().index();
        let sign = if position.mode() == Mode::Anti { -1 } else { 1 };
        let mut best: Option<(i32, u8)> = None;
        for square in request.legal_moves.iter().filter_map(|&m| u8::try_from(m).ok()) {
            let score = sign * position.place_unchecked(square).counts()[me] as i32;
            if best.is_none_or(|(b, _)| score > b) {
                best = Some((score, square));
            }
        }
        best.map_or(Move::Pass, |(_, square)| Move::Place(square))
    }
}

/// The first legal move of `request`, or a pass.
fn first_legal(request: &Request) -> Move {
    request
        .legal_moves
        .first()
        .and_then(|&m| u8::try_from(m).ok())
        .map_or(Move::Pass, Move::Place)
}

/// The tic-tac-toe bot.
struct Perfect;

impl tictactoe::Bot for Perfect {
    fn name(&self) -> &str {
        "my-bot"
    }

    fn play(&mut self, position: &Position, _clock: &Clock) -> Cell {
        let mut best: Option<(i32, Cell)> = None;
        for cell in position.legal_cells() {
            let Ok(next) = position.play(cell) else { continue };
            let value = -negamax(&next);
            if best.is_none_or(|(b, _)| value > b) {
                best = Some((value, cell));
            }
        }
        best.map_or(0, |(_, cell)| cell)
    }
}

/// The value of `position` for the side to move: 1 win, 0 draw, -1 loss.
fn negamax(position: &Position) -> i32 {
    if position.winner().is_some() {
        return -1;
    }
    position
        .legal_cells()
        .into_iter()
        .filter_map(|cell| position.play(cell).ok())
        .map(|next| -negamax(&next))
        .max()
        .unwrap_or(0)
}

fn main() {
    // The referee names the game in ARBITER_GAME, in the sandbox and for
    // a native `cmd:` bot alike.
    match std::env::var("ARBITER_GAME").as_deref() {
        Ok("tictactoe") => tictactoe::run(Perfect),
        _ => othello::run(Greedy),
    }
}
