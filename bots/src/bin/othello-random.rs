//! House bot `othello-random` (see the crate docs). It names its strategy directly,
//! so the module holds that bot's code only.

use arbiter_sdk::{Rng, othello};

fn main() {
    let mut bot = arbiter_bots::othello::Random(Rng::from_host());
    arbiter_sdk::serve(move |line: &str| othello::answer(&mut bot, line));
}
