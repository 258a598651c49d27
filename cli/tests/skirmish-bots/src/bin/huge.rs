//! Replies with a line of 100 000 bytes (over the 64 KiB a reply may have).
fn main() {
    arbiter_skirmish_test_bots::serve(|line| {
        let padding = "x".repeat(100_000);
        println!(
            "{{\"t\":\"act\",\"tick\":{},\"actions\":[],\"pad\":\"{padding}\"}}",
            arbiter_skirmish_test_bots::tick(line)
        );
    });
}
