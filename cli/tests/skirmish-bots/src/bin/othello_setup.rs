//! An Othello bot with a one-time set-up: 600 virtual ms on its first move
//! of each game (more than the check's short control, well within the
//! ladder's 1 s per move), then every move at once.
fn main() {
    arbiter_skirmish_test_bots::serve_othello(|moves| if moves == 1 { 600 } else { 0 });
}
