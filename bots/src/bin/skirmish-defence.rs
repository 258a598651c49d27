//! House bot `skirmish-defence` (see the crate docs).

fn main() {
    arbiter_bots::run("skirmish-defence");
}
