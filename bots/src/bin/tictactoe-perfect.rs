//! House bot `tictactoe-perfect` (see the crate docs). It names its strategy directly,
//! so the module holds that bot's code only.

use arbiter_sdk::{Rng, tictactoe};

fn main() {
    let mut bot = arbiter_bots::tictactoe::Perfect(Rng::from_host());
    arbiter_sdk::serve(move |line: &str| tictactoe::answer(&mut bot, line));
}
