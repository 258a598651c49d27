//! House bot `skirmish-defence` (see the crate docs). It names its strategy directly,
//! so the module holds that bot's code only.

use arbiter_sdk::{Rng, skirmish};

fn main() {
    let mut bot = arbiter_bots::skirmish::Defence::new(Rng::from_host());
    arbiter_sdk::serve(move |line: &str| skirmish::answer(&mut bot, line));
}
