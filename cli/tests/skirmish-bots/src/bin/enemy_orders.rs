//! Orders units that are not its own: every id from 1 to 200 that is not
//! its own, or every enemy in vision, told to move to the map's corner (at
//! most 32 per tick, the ids rotating).
fn main() {
    let mut next = 1i64;
    arbiter_skirmish_test_bots::serve(|line| {
        let own = arbiter_skirmish_test_bots::own(line);
        let mut targets = arbiter_skirmish_test_bots::enemies(line);
        while targets.len() < 32 {
            if !own.contains(&next) && !targets.contains(&next) {
                targets.push(next);
            }
            next = next % 200 + 1;
        }
        let actions: Vec<String> = targets
            .iter()
            .take(32)
            .map(|id| format!("{{\"do\":\"move\",\"unit\":{id},\"x\":0,\"y\":0}}"))
            .collect();
        arbiter_skirmish_test_bots::reply(arbiter_skirmish_test_bots::tick(line), &actions);
    });
}
