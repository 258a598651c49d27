//! Targets it cannot see: every tick, each own unit is told to gather the
//! mine farthest in the id order (seen at tick 0 only), to attack an id
//! just past the highest it knows, and to gather a tree tile in the far
//! corner.
fn main() {
    let mut mines = Vec::new();
    let mut size = (0i64, 0i64);
    arbiter_skirmish_test_bots::serve(|line| {
        if arbiter_skirmish_test_bots::tick(line) == 0 {
            mines = arbiter_skirmish_test_bots::mines(line);
            size = (
                arbiter_skirmish_test_bots::number(line, "w").unwrap_or(32),
                arbiter_skirmish_test_bots::number(line, "h").unwrap_or(32),
            );
        }
        let own = arbiter_skirmish_test_bots::own(line);
        let far_mine = mines.last().copied().unwrap_or(0);
        let unknown = own.iter().max().copied().unwrap_or(0) + 50;
        let mut actions = Vec::new();
        for (i, id) in own.iter().enumerate() {
            actions.push(match i % 3 {
                0 => format!("{{\"do\":\"gather\",\"unit\":{id},\"target\":{far_mine}}}"),
                1 => format!("{{\"do\":\"attack\",\"unit\":{id},\"target\":{unknown}}}"),
                _ => format!(
                    "{{\"do\":\"gather\",\"unit\":{id},\"target\":{{\"x\":{},\"y\":{}}}}}",
                    size.0 - 1,
                    size.1 - 1
                ),
            });
        }
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &actions);
    });
}
