//! House bot `othello-ab-weak` (see the crate docs). It names its strategy directly,
//! so the module holds that bot's code only.

use arbiter_sdk::othello;

fn main() {
    let mut bot = arbiter_bots::othello::AlphaBeta::weak();
    arbiter_sdk::serve(move |line: &str| othello::answer(&mut bot, line));
}
