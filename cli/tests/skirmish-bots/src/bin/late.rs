//! Answers every third tick late: it computes for one and a half times the
//! tick's budget first, so its reply comes early in the next tick, before
//! it reads that tick's observation. Its other replies are on time (and
//! empty).
fn main() {
    arbiter_skirmish_test_bots::serve(|line| {
        let tick = arbiter_skirmish_test_bots::tick(line);
        let budget = arbiter_skirmish_test_bots::number(line, "deadlineMs").unwrap_or(20);
        if tick > 0 && tick % 3 == 0 {
            arbiter_skirmish_test_bots::burn(3 * budget as u128 / 2);
        }
        arbiter_skirmish_test_bots::reply(tick, &[]);
    });
}
