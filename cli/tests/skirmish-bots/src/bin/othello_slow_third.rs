//! An Othello bot that thinks for 300 virtual ms on its third move of each
//! game (over the check's short control of 100 ms, within the ladder's 1 s)
//! and answers every other move at once.
fn main() {
    arbiter_skirmish_test_bots::serve_othello(|moves| if moves == 3 { 300 } else { 0 });
}
