//! Othello house bots, for all five modes.

use arbiter_sdk::othello::{Bot, Mode, Move, Position, Request, square_bit, squares};
use arbiter_sdk::{Clock, Rng};
use std::time::Duration;

fn legal_of(request: &Request) -> Vec<u8> {
    request
        .legal_moves
        .iter()
        .filter_map(|&m| u8::try_from(m).ok())
        .collect()
}

/// Plays a random legal move.
pub struct Random(pub Rng);

impl Bot for Random {
    fn choose(&mut self, request: &Request, _clock: &Clock) -> Move {
        self.0
            .pick(&legal_of(request))
            .map_or(Move::Pass, |&square| Move::Place(square))
    }
}

/// Plays the move that leaves it the most discs (the fewest in anti),
/// random among equals.
pub struct Greedy(pub Rng);

impl Bot for Greedy {
    fn choose(&mut self, request: &Request, _clock: &Clock) -> Move {
        let Ok(position) = request.position() else {
            return Move::Pass;
        };
        let me = position.to_move().index();
        let sign = if position.mode() == Mode::Anti { -1 } else { 1 };
        let legal = legal_of(request);
        let score = |&square: &u8| sign * position.place_unchecked(square).counts()[me] as i32;
        let best = legal.iter().map(score).max();
        let choices: Vec<u8> = legal.iter().copied().filter(|s| Some(score(s)) == best).collect();
        self.0.pick(&choices).map_or(Move::Pass, |&square| Move::Place(square))
    }
}

/// Nodes searched per millisecond of a move's target: about three quarters
/// of what the WebAssembly build searches per virtual millisecond at the
/// ladders' default 10 M fuel per ms (measured over whole games: 3 650 to
/// 4 050 on 8×8 boards, 770 to 820 on the 10×10 boards of grand and
/// octagon).
pub fn nodes_per_ms(mode: Mode) -> u64 {
    if mode.board_size() == 10 { 600 } else { 3_000 }
}

/// Alpha-beta search with iterative deepening. It stops on a budget of
/// nodes worked out from the request's `budget_ms` and `remaining_ms`, not
/// on the clock, so it chooses the same move natively and sandboxed, on any
/// machine; in the sandbox the clock is a safety net at the move's whole
/// budget.
pub struct AlphaBeta {
    /// Deepest iteration.
    pub max_depth: u32,
    /// Most time per move.
    pub cap: Duration,
}

impl AlphaBeta {
    /// Depth ≤ 2, a few milliseconds a move.
    pub fn weak() -> AlphaBeta {
        AlphaBeta {
            max_depth: 2,
            cap: Duration::from_millis(5),
        }
    }

    /// Up to 20 ms a move.
    pub fn medium() -> AlphaBeta {
        AlphaBeta {
            max_depth: 64,
            cap: Duration::from_millis(20),
        }
    }

    /// Up to 80 ms a move.
    pub fn strong() -> AlphaBeta {
        AlphaBeta {
            max_depth: 64,
            cap: Duration::from_millis(80),
        }
    }
}

impl Bot for AlphaBeta {
    fn choose(&mut self, request: &Request, clock: &Clock) -> Move {
        let Ok(position) = request.position() else {
            return Move::Pass;
        };
        let legal: Vec<u8> = squares(position.legal_bits()).collect();
        match legal.as_slice() {
            [] => return Move::Pass,
            [only] => return Move::Place(*only),
            _ => {}
        }
        let empties = position.mode().playable_squares() - position.counts().iter().sum::<u32>();
        let target = clock.target(empties / 2 + 1, self.cap);
        let node_budget = u64::try_from(target.as_millis())
            .unwrap_or(u64::MAX)
            .saturating_mul(nodes_per_ms(position.mode()))
            .max(1);
        let mut search = Search {
            clock,
            node_budget,
            nodes: 0,
            stopped: false,
        };
        let mut best = legal[0];
        for depth in 1..=self.max_depth {
            let mut alpha = -INF;
            let mut depth_best = None;
            for &square in &ordered(&position, &legal) {
                let value = -search.negamax(&position.place_unchecked(square), depth - 1, -INF, -alpha);
                if search.stopped {
                    break;
                }
                if value > alpha {
                    alpha = value;
                    depth_best = Some(square);
                }
            }
            if search.stopped {
                break;
            }
            if let Some(square) = depth_best {
                best = square;
            }
            // The next iteration costs several times this one.
            if depth >= empties || search.nodes * 4 > node_budget {
                break;
            }
        }
        Move::Place(best)
    }
}

const INF: i32 = 1_000_000;
const WIN: i32 = 100_000;

struct Search<'a> {
    clock: &'a Clock,
    node_budget: u64,
    nodes: u64,
    stopped: bool,
}

impl Search<'_> {
    fn negamax(&mut self, position: &Position, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        self.nodes += 1;
        // The safety net only where the clock is virtual (the sandbox), so
        // a native run on a busy machine still chooses the same moves.
        let past_budget =
            cfg!(target_os = "wasi") && self.nodes.is_multiple_of(512) && self.clock.is_past(self.clock.budget());
        if self.nodes >= self.node_budget || past_budget {
            self.stopped = true;
        }
        if self.stopped {
            return 0;
        }
        let legal = position.legal_bits();
        if legal == 0 {
            let passed = position.pass_unchecked();
            if passed.legal_bits() == 0 {
                return final_score(position);
            }
            return -self.negamax(&passed, depth, -beta, -alpha);
        }
        if depth == 0 {
            return evaluate(position);
        }
        let moves: Vec<u8> = squares(legal).collect();
        let mut best = -INF;
        for square in ordered(position, &moves) {
            let value = -self.negamax(&position.place_unchecked(square), depth - 1, -beta, -alpha);
            best = best.max(value);
            alpha = alpha.max(value);
            if alpha >= beta || self.stopped {
                break;
            }
        }
        best
    }
}

/// Corners first, then the rest in square order.
fn ordered(position: &Position, moves: &[u8]) -> Vec<u8> {
    let corners = corner_bits(position.mode());
    let (mut first, rest): (Vec<u8>, Vec<u8>) = moves.iter().partition(|&&s| corners & square_bit(s) != 0);
    first.extend(rest);
    first
}

fn corner_bits(mode: Mode) -> u128 {
    let squares: &[u8] = match mode {
        Mode::Std | Mode::Anti | Mode::Reversi => &[0, 7, 56, 63],
        Mode::Grand => &[0, 9, 90, 99],
        Mode::Octagon => &[2, 11, 20, 7, 18, 29, 70, 81, 92, 79, 88, 97],
    };
    squares.iter().fold(0, |bits, &s| bits | square_bit(s))
}

/// The final result for the side to move: a win is worth more than any
/// evaluation.
fn final_score(position: &Position) -> i32 {
    let me = position.to_move().index();
    let counts = position.counts();
    let mut diff = counts[me] as i32 - counts[1 - me] as i32;
    if position.mode() == Mode::Anti {
        diff = -diff;
    }
    diff.signum() * WIN + diff
}

/// A heuristic value for the side to move: mobility, corners and (late in
/// the game) discs.
fn evaluate(position: &Position) -> i32 {
    let me = position.to_move();
    let mobility = position.legal_bits().count_ones() as i32 - position.legal_bits_for(me.other()).count_ones() as i32;
    let discs = position.discs();
    let corners = corner_bits(position.mode());
    let corner =
        (discs[me.index()] & corners).count_ones() as i32 - (discs[me.other().index()] & corners).count_ones() as i32;
    let counts = position.counts();
    let disc = counts[me.index()] as i32 - counts[me.other().index()] as i32;
    let filled = (counts[0] + counts[1]) as i32;
    let phase = filled * 100 / position.mode().playable_squares() as i32;
    match position.mode() {
        Mode::Anti => 4 * mobility - 10 * corner - disc * phase / 25,
        _ => 4 * mobility + 25 * corner + disc * phase / 50,
    }
}
