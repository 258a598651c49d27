//! What each host operation a bot can repeat costs the host, against the
//! fuel it is charged, beside a plain counting loop measured in the same
//! run (`sandbox/tests/all/host_costs.rs`, `calibrate`; the figures behind
//! `host_call_fuel` and the grows' cost in `docs/spec/protocol.md`).
//!
//! Run with `cargo bench -p arbiter-sandbox --bench host_costs`.

#[path = "../tests/all/support.rs"]
#[allow(dead_code, reason = "the tests' helpers; this measurement uses a few")]
mod support;

#[path = "../tests/all/host_costs.rs"]
#[allow(dead_code, reason = "the tests' loops; this measurement runs `calibrate` only")]
mod host_costs;

fn main() {
    host_costs::calibrate();
}
