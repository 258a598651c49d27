//! Time management on the bot's clock.

use std::time::{Duration, Instant};

/// The time a bot may use for the current move, started when the request
/// arrived.
///
/// In the sandbox [`Instant`] is the virtual clock (fuel converted to
/// milliseconds), so the same decisions are taken on every machine.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    started: Instant,
    budget: Duration,
    remaining: Duration,
}

impl Clock {
    /// Starts the clock for a move that may take `budget_ms` out of
    /// `remaining_ms` left in the game.
    pub fn start(budget_ms: u64, remaining_ms: u64) -> Clock {
        Clock {
            started: Instant::now(),
            budget: Duration::from_millis(budget_ms),
            remaining: Duration::from_millis(remaining_ms),
        }
    }

    /// Time spent on this move so far.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }

    /// The most this move may take.
    pub fn budget(&self) -> Duration {
        self.budget
    }

    /// A target for this move: the bank shared over `moves_left` moves,
    /// never more than half the move's budget nor more than `cap`.
    pub fn target(&self, moves_left: u32, cap: Duration) -> Duration {
        let share = self.remaining / moves_left.max(1);
        share.min(self.budget / 2).min(cap)
    }

    /// Whether `target` has been used up.
    pub fn is_past(&self, target: Duration) -> bool {
        self.elapsed() >= target
    }
}
