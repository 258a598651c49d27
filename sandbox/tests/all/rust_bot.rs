//! Real Rust bots (std, `read_line` / `println!`) built for wasm32-wasip1.

use arbiter_sandbox::{CrashReason, FaultKind, TrapKind};

use crate::support::{FUEL, env, rust_bot, sandbox};

fn echo_bot(seed: u64) -> arbiter_sandbox::BotInstance {
    let module = sandbox().load(&rust_bot("echo")).expect("the echo bot loads");
    sandbox().instantiate(&module, env(seed)).expect("instantiates")
}

fn line(r: &arbiter_sandbox::TurnReply) -> String {
    String::from_utf8(r.line.clone()).expect("utf-8")
}

#[test]
fn plain_std_loop_bot_works() {
    let mut b = echo_bot(1);
    for i in 0..5 {
        let req = format!("{{\"turn\":{i}}}");
        let r = b.turn(req.as_bytes(), FUEL).expect("replies");
        assert_eq!(line(&r), req);
        assert!(r.fuel_used > 0);
    }
    let r = b.turn(b"sum 1 2 3 -4", FUEL).expect("replies");
    assert_eq!(line(&r), "{\"sum\":2}");
}

#[test]
fn sees_args_env_and_virtual_time() {
    let mut b = echo_bot(1);
    let info = line(&b.turn(b"info", FUEL).expect("replies"));
    assert!(info.contains(r#"args=["bot"]"#), "{info}");
    assert!(
        info.contains(r#"env=["ARBITER_GAME=test", "ARBITER_MODE=plain"]"#),
        "{info}"
    );
    let now: u128 = info
        .split_whitespace()
        .find_map(|w| w.strip_prefix("now="))
        .and_then(|n| n.parse().ok())
        .expect("now=");
    let origin = u128::from(env(1).start_time_ns);
    assert!(now > origin && now < origin + 5_000_000, "{info}");
}

#[test]
fn sleep_is_virtual() {
    let mut b = echo_bot(1);
    let started = std::time::Instant::now();
    let r = b.turn(b"sleep 3", FUEL).expect("replies");
    assert_eq!(line(&r), "slept 3");
    assert!(r.fuel_used >= 30_000_000);
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
    let f = b.turn(b"sleep 1000", FUEL).expect_err("sleeps past the budget");
    assert_eq!(f.kind, FaultKind::Timeout);
}

#[test]
fn panic_is_a_crash_with_the_message_on_stderr() {
    let mut b = echo_bot(1);
    b.turn(b"hello", FUEL).expect("replies");
    let f = b.turn(b"panic", FUEL).expect_err("crashes");
    assert_eq!(f.kind, FaultKind::Crash(CrashReason::Trap(TrapKind::Unreachable)));
    let log = String::from_utf8_lossy(b.stderr()).into_owned();
    assert!(log.contains("asked to panic"), "{log}");
    // A later turn starts a fresh instance.
    assert_eq!(line(&b.turn(b"again", FUEL).expect("replies")), "again");
}

#[test]
fn heavy_turn_times_out_then_resumes() {
    let mut b = echo_bot(1);
    let f = b.turn(b"spin 100000000", FUEL).expect_err("too slow");
    assert_eq!(f.kind, FaultKind::Timeout);
    // The late "spun" line comes first (paused bots hand over every line);
    // resumed, the bot answers the next request.
    let late = b.turn(b"next", 100 * FUEL).expect("finishes the spin");
    assert!(line(&late).starts_with("spun"), "{}", line(&late));
    let r = b.resume(100 * FUEL - late.fuel_used).expect("catches up");
    assert_eq!(line(&r), "next");
}

#[test]
fn one_shot_rust_bot_restarts() {
    let module = sandbox().load(&rust_bot("oneshot")).expect("loads");
    let mut b = sandbox().instantiate(&module, env(1)).expect("instantiates");
    for i in 0..3 {
        let r = b.turn(format!("{i}").as_bytes(), FUEL).expect("replies");
        assert_eq!(line(&r), format!("once:{i}"));
    }
}
