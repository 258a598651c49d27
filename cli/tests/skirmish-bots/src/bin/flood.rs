//! 10 000 actions every tick: 33 unreadable ones, then a `train` order for
//! its town hall (index 33, past the 32 the referee reads), then more
//! unreadable ones. Nothing it sends may ever be applied.
fn main() {
    let mut hall = None;
    arbiter_skirmish_test_bots::serve(|line| {
        let own = arbiter_skirmish_test_bots::own(line);
        // The town hall is the first unit listed at tick 0 (lowest id).
        let hall = *hall.get_or_insert_with(|| own.first().copied().unwrap_or(0));
        let mut actions = vec!["{}".to_string(); 10_000];
        actions[33] = format!("{{\"do\":\"train\",\"unit\":{hall},\"code\":\"hpea\"}}");
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &actions);
    });
}
