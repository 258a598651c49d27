//! House bot `othello-ab-weak` (see the crate docs).

fn main() {
    arbiter_bots::run("othello-ab-weak");
}
