//! House bot `othello-ab-medium` (see the crate docs). It names its strategy directly,
//! so the module holds that bot's code only.

use arbiter_sdk::othello;

fn main() {
    let mut bot = arbiter_bots::othello::AlphaBeta::medium();
    arbiter_sdk::serve(move |line: &str| othello::answer(&mut bot, line));
}
