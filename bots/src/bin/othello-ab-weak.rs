//! House bot `othello-ab-weak` (see the crate docs): the strategy of its own name.

fn main() {
    arbiter_bots::run(env!("CARGO_BIN_NAME"));
}
