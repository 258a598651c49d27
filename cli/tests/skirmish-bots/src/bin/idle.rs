//! Answers every tick at once with no actions.
fn main() {
    arbiter_skirmish_test_bots::serve(|line| {
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &[]);
    });
}
