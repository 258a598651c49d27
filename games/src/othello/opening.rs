//! Seeded random openings: the 12-disc start of every leg.

use super::{Mode, Move, Position, squares};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// Plies of random moves after the 4-disc start (std, anti, grand, octagon).
const RANDOM_MOVES: usize = 8;
/// Random placements from the empty board in reversi.
const REVERSI_PLACEMENTS: u16 = 12;

/// The opening of every leg of a match with this seed: 8 random legal moves
/// from the start (no pass), or 12 random placements in reversi. The same
/// mode and seed give the same opening everywhere.
pub fn opening(mode: Mode, seed: u64) -> Vec<Move> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    loop {
        if let Some(moves) = draw(mode, &mut rng) {
            return moves;
        }
    }
}

/// One attempt; `None` when it ran into a pass (or, in reversi, a game end).
fn draw(mode: Mode, rng: &mut ChaCha8Rng) -> Option<Vec<Move>> {
    let mut position = Position::start(mode);
    let mut moves = Vec::new();
    loop {
        let placed = position.placed();
        let done = match mode {
            Mode::Reversi => placed[0] + placed[1] >= REVERSI_PLACEMENTS,
            _ => moves.len() >= RANDOM_MOVES,
        };
        if done {
            return Some(moves);
        }
        let legal = position.legal_bits();
        let mv = if legal == 0 {
            if mode != Mode::Reversi || position.is_over() {
                return None;
            }
            Move::Pass
        } else {
            let count = u64::from(legal.count_ones());
            let pick = (rng.next_u64() % count) as usize;
            Move::Place(squares(legal).nth(pick)?)
        };
        position = position.play(mv).ok()?;
        moves.push(mv);
    }
}
