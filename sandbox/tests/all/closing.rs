//! The end of a game: a bot waiting for its next request sees end of file
//! on stdin and may exit by itself; one that does not is stopped after a
//! small fuel allowance, and one that was not waiting is not resumed.

use arbiter_sandbox::FaultKind;

use crate::support::{FUEL, assert_host_fine, bot, echo_wat, env, rust_bot, sandbox, wat_bot};

/// Answers requests until stdin ends, then says goodbye on stderr.
fn polite_wat() -> String {
    wat_bot(
        r#"(local $n i32)
        (loop $l
          (local.set $n (call $read))
          (if (i32.eqz (local.get $n))
            (then (call $write (i32.const 2) (i32.const 512) (i32.const 4)) (return)))
          (call $write (i32.const 1) (i32.const 1024) (local.get $n))
          (br $l))"#,
        r#"(data (i32.const 512) "bye\n")"#,
    )
}

#[test]
fn a_std_rust_bot_exits_when_stdin_closes() {
    let module = sandbox().load(&rust_bot("echo")).expect("loads");
    let mut b = sandbox().instantiate(&module, env(1)).expect("instantiates");
    b.turn(b"hello", FUEL).expect("replies");
    assert!(b.close(), "a read_line loop ends at end of file");
}

#[test]
fn a_bot_can_write_last_words_to_stderr() {
    let mut b = bot(&polite_wat());
    let reply = b.turn(b"ping", FUEL).expect("replies");
    assert_eq!(reply.line, b"ping");
    assert!(b.close(), "the bot returns from _start");
    assert!(
        b.stderr().ends_with(b"bye\n"),
        "stderr: {:?}",
        String::from_utf8_lossy(b.stderr())
    );
}

#[test]
fn a_bot_that_ignores_end_of_file_is_stopped() {
    // Reads (and echoes nothing) forever; spins without a host call.
    let spinner = wat_bot(
        r#"(local $n i32)
        (loop $l
          (local.set $n (call $read))
          (if (i32.eqz (local.get $n)) (then (loop $spin (br $spin))))
          (call $write (i32.const 1) (i32.const 1024) (local.get $n))
          (br $l))"#,
        "",
    );
    for wat in [echo_wat(), spinner] {
        let mut b = bot(&wat);
        b.turn(b"ping", FUEL).expect("replies");
        assert!(!b.close(), "the bot never exits");
    }
    assert_host_fine();
}

#[test]
fn a_bot_that_timed_out_is_not_resumed_to_close() {
    // Each request costs about 100 000 fuel (12 000 rounds of 8
    // instructions), then the bot notes on stderr that it got that far. With
    // a 50 000 budget it times out half-way; resumed, it would finish within
    // the closing allowance.
    let slow = wat_bot(
        r#"(local $i i32)
        (loop $l
          (drop (call $read))
          (local.set $i (i32.const 0))
          (loop $burn
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br_if $burn (i32.lt_u (local.get $i) (i32.const 12000))))
          (call $write (i32.const 2) (i32.const 512) (i32.const 8))
          (call $write (i32.const 1) (i32.const 520) (i32.const 3))
          (br $l))"#,
        r#"(data (i32.const 512) "resumed\nok\n")"#,
    );
    let mut b = bot(&slow);
    let fault = b.turn(b"go", 50_000).expect_err("too slow for the budget");
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert!(!b.close(), "a bot that was not waiting is not run again");
    assert!(
        !String::from_utf8_lossy(b.stderr()).contains("resumed"),
        "stderr: {:?}",
        String::from_utf8_lossy(b.stderr())
    );

    // The control: given the budget, the same bot finishes the request.
    let mut b = bot(&slow);
    let reply = b.turn(b"go", FUEL).expect("replies");
    assert_eq!(reply.line, b"ok");
    assert!(String::from_utf8_lossy(b.stderr()).contains("resumed"));
}
