//! House bot `othello-greedy` (see the crate docs).

fn main() {
    arbiter_bots::run("othello-greedy");
}
