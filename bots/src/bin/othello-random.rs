//! House bot `othello-random` (see the crate docs).

fn main() {
    arbiter_bots::run("othello-random");
}
