//! House bot `othello-ab-medium` (see the crate docs).

fn main() {
    arbiter_bots::run("othello-ab-medium");
}
