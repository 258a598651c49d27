//! Everything a Rust bot for Arbiter needs.
//!
//! A bot implements [`othello::Bot`], [`tictactoe::Bot`] or
//! [`skirmish::Bot`] and hands itself
//! to that module's `run`, which reads one request per line from stdin,
//! calls the bot and writes its reply line to stdout. The same source runs
//! natively (for development, `arbiter play ... cmd:'target/release/my-bot'`)
//! and as a `wasm32-wasip1` module on the ladder.
//!
//! ```no_run
//! use arbiter_sdk::othello::{self, Move, Request};
//! use arbiter_sdk::Clock;
//!
//! struct FirstLegal;
//!
//! impl othello::Bot for FirstLegal {
//!     fn choose(&mut self, request: &Request, _clock: &Clock) -> Move {
//!         request.legal_moves.first().map_or(Move::Pass, |&square| Move::Place(square as u8))
//!     }
//! }
//!
//! fn main() {
//!     othello::run(FirstLegal);
//! }
//! ```
//!
//! # Guarantees
//!
//! - The rules are those the referee uses (re-exported from
//!   `arbiter-games`), so a bot's move generator is correct by construction.
//! - [`Clock`] reads the clock the bot runs on: in the sandbox that is the
//!   virtual clock driven by fuel, so a bot that manages its time with it
//!   plays the same moves on every machine.
//! - [`Rng`] is seeded by the host's random source; in the sandbox that is a
//!   stream seeded by the match, so it is reproducible too.
#![deny(missing_docs)]

mod clock;
pub mod othello;
pub mod skirmish;
pub mod tictactoe;

pub use arbiter_games as games;
pub use clock::Clock;

use rand_core::{RngCore, SeedableRng};
use std::io::{BufRead, Write};

/// A random number generator for bots, seeded from the host.
pub struct Rng(rand_chacha::ChaCha8Rng);

impl Rng {
    /// Seeds from the host's random source (`random_get` in the sandbox).
    pub fn from_host() -> Rng {
        let mut seed = [0u8; 32];
        // Without a host source the bot still works, just with a fixed seed.
        let _ = getrandom::fill(&mut seed);
        Rng(rand_chacha::ChaCha8Rng::from_seed(seed))
    }

    /// The generator [`Rng::from_host`] gives a bot in the sandbox whose
    /// random source is seeded with `seed` (the referee's per-game bot
    /// seed): natively, the same stream a sandboxed bot draws, so a bot run
    /// in-process (`builtin:`) makes the same random choices as its
    /// WebAssembly build.
    pub fn as_sandboxed(seed: u64) -> Rng {
        let mut host = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
        let mut bytes = [0u8; 32];
        host.fill_bytes(&mut bytes);
        Rng(rand_chacha::ChaCha8Rng::from_seed(bytes))
    }

    /// A generator with a fixed seed, for tests.
    pub fn seeded(seed: u64) -> Rng {
        Rng(rand_chacha::ChaCha8Rng::seed_from_u64(seed))
    }

    /// A number below `bound` (which must not be 0; 0 gives 0).
    pub fn below(&mut self, bound: usize) -> usize {
        if bound == 0 {
            return 0;
        }
        (self.0.next_u64() % bound as u64) as usize
    }

    /// A random element of `items`.
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

/// Runs the read-reply loop: for each request line, `reply` gives the reply
/// line. Returns when stdin ends. A line that `reply` cannot answer should
/// still get a line (the referee then records a bad reply).
pub fn serve(mut reply: impl FnMut(&str) -> String) {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut line = String::new();
    let mut input = stdin.lock();
    loop {
        line.clear();
        match input.read_line(&mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        let mut answer = reply(line.trim_end_matches(['\n', '\r']));
        // One write of the whole line: one host call, no formatting.
        answer.push('\n');
        if stdout
            .write_all(answer.as_bytes())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return;
        }
    }
}
