//! House bot `skirmish-economy` (see the crate docs).

fn main() {
    arbiter_bots::run("skirmish-economy");
}
