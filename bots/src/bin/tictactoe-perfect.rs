//! House bot `tictactoe-perfect` (see the crate docs).

fn main() {
    arbiter_bots::run("tictactoe-perfect");
}
