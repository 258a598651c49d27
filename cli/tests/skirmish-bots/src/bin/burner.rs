//! Computes for ten times its tick's budget on every observation, then
//! answers it: every reply comes long after its tick.
fn main() {
    arbiter_skirmish_test_bots::serve(|line| {
        let budget = arbiter_skirmish_test_bots::number(line, "deadlineMs").unwrap_or(20);
        arbiter_skirmish_test_bots::burn(10 * budget as u128);
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &[]);
    });
}
