//! House bot `othello-ab-strong` (see the crate docs).

fn main() {
    arbiter_bots::run("othello-ab-strong");
}
