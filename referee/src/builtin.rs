//! Built-in opponents that run in-process: for local play and tests.
//!
//! They read the same request JSON as any bot and answer with the same reply
//! JSON, so they exercise the whole protocol. Their random choices are seeded
//! from the match seed, the game and the side, so they are reproducible.

use crate::in_process::{InProcess, ReplyFn};
use crate::player::GameSetup;
use arbiter_games::Variant;
use arbiter_games::othello::{self, Mode, Position, squares};
use arbiter_games::tictactoe;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::sync::Arc;

/// The built-in bots of a variant, weakest first.
pub fn names(variant: Variant) -> &'static [&'static str] {
    match variant {
        Variant::TicTacToe => &["random", "perfect"],
        Variant::Othello(_) => &["random", "greedy"],
    }
}

/// The built-in bot `name` for `variant`, if there is one.
pub fn entrant(variant: Variant, name: &str) -> Option<Arc<InProcess>> {
    if !names(variant).contains(&name) {
        return None;
    }
    let name = name.to_string();
    let label = format!("builtin:{name}");
    Some(Arc::new(InProcess::new(label, move |setup: &GameSetup| -> ReplyFn {
        let rng = seeded(setup);
        match (variant, name.as_str()) {
            (Variant::TicTacToe, "perfect") => Box::new(tictactoe_reply(rng, true)),
            (Variant::TicTacToe, _) => Box::new(tictactoe_reply(rng, false)),
            (Variant::Othello(_), "greedy") => Box::new(othello_reply(rng, true)),
            (Variant::Othello(_), _) => Box::new(othello_reply(rng, false)),
        }
    })))
}

fn seeded(setup: &GameSetup) -> ChaCha8Rng {
    let mut rng = ChaCha8Rng::seed_from_u64(setup.seed);
    rng.set_stream(u64::from(setup.game_index) * 2 + u64::from(setup.side) + 1);
    rng
}

fn pick<T: Copy>(rng: &mut ChaCha8Rng, items: &[T]) -> Option<T> {
    if items.is_empty() {
        return None;
    }
    Some(items[(rng.next_u64() % items.len() as u64) as usize])
}

/// Othello: a random legal move, or the move that leaves the best disc count
/// (most discs; fewest in anti), ties broken at random.
fn othello_reply(mut rng: ChaCha8Rng, greedy: bool) -> impl FnMut(&str) -> String {
    move |line| {
        let Ok(request) = serde_json::from_str::<othello::Request>(line) else {
            return r#"{"move":-1}"#.to_string();
        };
        let Ok(position) = request.position() else {
            return r#"{"move":-1}"#.to_string();
        };
        let legal: Vec<u8> = squares(position.legal_bits()).collect();
        let choices = if greedy {
            best_by_discs(&position, &legal)
        } else {
            legal
        };
        let mv = pick(&mut rng, &choices).map_or(-1, i32::from);
        format!(r#"{{"move":{mv}}}"#)
    }
}

fn best_by_discs(position: &Position, legal: &[u8]) -> Vec<u8> {
    let me = position.to_move().index();
    let anti = position.mode() == Mode::Anti;
    let score = |&square: &u8| {
        let discs = i64::from(position.place_unchecked(square).counts()[me]);
        if anti { -discs } else { discs }
    };
    let best = legal.iter().map(score).max();
    legal
        .iter()
        .copied()
        .filter(|square| Some(score(square)) == best)
        .collect()
}

/// Tic-tac-toe: a random empty cell, or a perfect (minimax) one.
fn tictactoe_reply(mut rng: ChaCha8Rng, perfect: bool) -> impl FnMut(&str) -> String {
    move |line| {
        let Ok(request) = serde_json::from_str::<serde_json::Value>(line) else {
            return "{}".to_string();
        };
        let Some(board) = request.get("board").and_then(|b| b.as_object()) else {
            return r#"{"name":"builtin"}"#.to_string();
        };
        let mut position = tictactoe::Position::new();
        // Replay the marks in an order that alternates X and O.
        let marks = |mark: &str| -> Vec<u8> {
            (0..9)
                .filter(|&cell| board.get(&tictactoe::cell_name(cell)).and_then(|v| v.as_str()) == Some(mark))
                .collect()
        };
        let (xs, os) = (marks("X"), marks("O"));
        for i in 0..xs.len().max(os.len()) {
            for cell in [xs.get(i), os.get(i)].into_iter().flatten() {
                position = position.play(*cell).unwrap_or(position);
            }
        }
        let legal = position.legal_cells();
        let choices = if perfect { best_cells(&position, &legal) } else { legal };
        match pick(&mut rng, &choices) {
            Some(cell) => format!(
                r#"{{"name":"builtin","play":"{}","error":null}}"#,
                tictactoe::cell_name(cell)
            ),
            None => r#"{"name":"builtin","play":null}"#.to_string(),
        }
    }
}

fn best_cells(position: &tictactoe::Position, legal: &[u8]) -> Vec<u8> {
    let values: Vec<i32> = legal
        .iter()
        .map(|&cell| position.play(cell).map_or(i32::MIN, |next| -negamax(&next)))
        .collect();
    let best = values.iter().copied().max();
    legal
        .iter()
        .zip(&values)
        .filter(|(_, v)| Some(**v) == best)
        .map(|(c, _)| *c)
        .collect()
}

/// The value of a position for the side to move: 1 win, 0 draw, -1 loss.
fn negamax(position: &tictactoe::Position) -> i32 {
    if position.winner().is_some() {
        return -1;
    }
    let legal = position.legal_cells();
    if legal.is_empty() {
        return 0;
    }
    legal
        .iter()
        .filter_map(|&cell| position.play(cell).ok())
        .map(|next| -negamax(&next))
        .max()
        .unwrap_or(0)
}
