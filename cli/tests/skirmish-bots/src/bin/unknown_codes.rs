//! Unknown orders and unknown codes for its own units, every tick.
fn main() {
    arbiter_skirmish_test_bots::serve(|line| {
        let own = arbiter_skirmish_test_bots::own(line);
        let mut actions = Vec::new();
        for (i, id) in own.iter().enumerate() {
            actions.push(match i % 3 {
                0 => format!("{{\"do\":\"train\",\"unit\":{id},\"code\":\"zzzz\"}}"),
                1 => format!("{{\"do\":\"dance\",\"unit\":{id}}}"),
                _ => format!("{{\"do\":\"build\",\"unit\":{id},\"code\":\"castle\",\"x\":3,\"y\":3}}"),
            });
        }
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &actions);
    });
}
