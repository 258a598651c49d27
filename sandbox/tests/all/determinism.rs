//! Same module, seed and requests ⇒ same replies and fuel, run after run.

use crate::support::{FUEL, env, rust_bot, sandbox};

fn transcript(seed: u64) -> Vec<Result<(Vec<u8>, u64), String>> {
    let module = sandbox().load(&rust_bot("echo")).expect("loads");
    let mut b = sandbox().instantiate(&module, env(seed)).expect("instantiates");
    let requests: &[(&[u8], u64)] = &[
        (b"info", FUEL),
        (b"{\"x\":[1,2,3]}", FUEL),
        (b"spin 10000", FUEL),
        (b"sleep 1", FUEL),
        (b"spin 100000000", FUEL),
        (b"info", 100 * FUEL),
        (b"stderr 5000", FUEL),
        (b"info", FUEL),
    ];
    requests
        .iter()
        .map(|(req, budget)| {
            b.turn(req, *budget)
                .map(|r| (r.line, r.fuel_used))
                .map_err(|f| format!("{f:?}"))
        })
        .collect()
}

#[test]
fn same_inputs_same_replies_and_fuel() {
    let a = transcript(99);
    let b = transcript(99);
    assert_eq!(a, b);
    assert!(a[4].is_err(), "the heavy turn times out: {:?}", a[4]);
    assert_ne!(a, transcript(100), "the seed matters");
}
