//! House bot `skirmish-rush` (see the crate docs).

fn main() {
    arbiter_bots::run("skirmish-rush");
}
