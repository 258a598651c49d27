//! House bot `tictactoe-random` (see the crate docs).

fn main() {
    arbiter_bots::run("tictactoe-random");
}
