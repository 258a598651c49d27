//! Arbiter's house bots: opponents of graded strength for every ladder.
//!
//! Each bot is a strategy here and a one-line binary in `src/bin/`, built
//! natively (run it as `cmd:'target/release/othello-greedy'`) and to
//! `wasm32-wasip1` for the ladder. They are written with `arbiter-sdk` only,
//! exactly as a bot author would write them. [`answerer`] gives the same
//! bots as in-process reply functions (the command line's `builtin:NAME`).
//!
//! | name | game | strength |
//! |---|---|---|
//! | `tictactoe-random` | tic-tac-toe | random empty cell |
//! | `tictactoe-perfect` | tic-tac-toe | minimax, never loses |
//! | `othello-random` | Othello, all modes | random legal move |
//! | `othello-greedy` | Othello, all modes | best disc count after the move |
//! | `othello-ab-weak` | Othello, all modes | alpha-beta, depth ≤ 2 |
//! | `othello-ab-medium` | Othello, all modes | alpha-beta, ≤ 20 ms a move |
//! | `othello-ab-strong` | Othello, all modes | alpha-beta, ≤ 80 ms a move |
//! | `skirmish-rush` | skirmish | worker rush: two peasants, then each footman, straight at the enemy |
//! | `skirmish-economy` | skirmish | economy, then waves of 8–10 footmen; beats the rush |
//! | `skirmish-defence` | skirmish | economy and a second hall, footmen and riflemen hold the base, late counter-attack; beats both |
#![deny(missing_docs)]

pub mod othello;
pub mod skirmish;
pub mod tictactoe;

use arbiter_sdk::Rng;

/// Every house bot's name, weakest first within each game.
pub const NAMES: [&str; 10] = [
    "tictactoe-random",
    "tictactoe-perfect",
    "othello-random",
    "othello-greedy",
    "othello-ab-weak",
    "othello-ab-medium",
    "othello-ab-strong",
    "skirmish-rush",
    "skirmish-economy",
    "skirmish-defence",
];

/// A reply function: request line in, reply line out.
pub type Answerer = Box<dyn FnMut(&str) -> String + Send>;

/// The house bot `name` as a reply function drawing on `rng`.
pub fn answerer(name: &str, rng: Rng) -> Option<Answerer> {
    use arbiter_sdk::{othello as o, skirmish as s, tictactoe as t};
    Some(match name {
        "tictactoe-random" => {
            let mut bot = tictactoe::Random(rng);
            Box::new(move |line| t::answer(&mut bot, line))
        }
        "tictactoe-perfect" => {
            let mut bot = tictactoe::Perfect(rng);
            Box::new(move |line| t::answer(&mut bot, line))
        }
        "othello-random" => {
            let mut bot = othello::Random(rng);
            Box::new(move |line| o::answer(&mut bot, line))
        }
        "othello-greedy" => {
            let mut bot = othello::Greedy(rng);
            Box::new(move |line| o::answer(&mut bot, line))
        }
        "othello-ab-weak" | "othello-ab-medium" | "othello-ab-strong" => {
            let mut bot = match name {
                "othello-ab-weak" => othello::AlphaBeta::weak(),
                "othello-ab-medium" => othello::AlphaBeta::medium(),
                _ => othello::AlphaBeta::strong(),
            };
            Box::new(move |line| o::answer(&mut bot, line))
        }
        "skirmish-rush" => {
            let mut bot = skirmish::Rush::new(rng);
            Box::new(move |line| s::answer(&mut bot, line))
        }
        "skirmish-economy" => {
            let mut bot = skirmish::Economy::new(rng);
            Box::new(move |line| s::answer(&mut bot, line))
        }
        "skirmish-defence" => {
            let mut bot = skirmish::Defence::new(rng);
            Box::new(move |line| s::answer(&mut bot, line))
        }
        _ => return None,
    })
}

/// Runs the house bot `name` over stdin and stdout, seeded by the host: the
/// `main` of every binary in `src/bin/` and the command line's `house-bot`:
/// one table of strategies. (The house modules are packed together with
/// zstd, so the code each one carries for the others costs the executable
/// little.)
pub fn run(name: &str) {
    match answerer(name, Rng::from_host()) {
        Some(reply) => arbiter_sdk::serve(reply),
        None => eprintln!("no house bot called {name}"),
    }
}
