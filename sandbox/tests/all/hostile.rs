//! Bots that misbehave at run time. Each asserts the exact fault and that
//! the host still serves a well-behaved bot afterwards.

use arbiter_sandbox::{BadReplyReason, CrashReason, FaultKind, Sandbox, SandboxConfig, TrapKind};

use crate::support::{FUEL, assert_host_fine, bot, config, env, load, wasm, wat_bot};

fn fault_of(start: &str, extra: &str) -> (FaultKind, u64) {
    let mut b = bot(&wat_bot(start, extra));
    let f = b.turn(b"request", FUEL).expect_err("the turn faults");
    (f.kind, f.fuel_used)
}

fn crash(start: &str, extra: &str) -> CrashReason {
    match fault_of(start, extra).0 {
        FaultKind::Crash(r) => r,
        other => panic!("expected a crash, got {other:?}"),
    }
}

/// Writes a u64 as 16 hex digits at `at`.
const HEX: &str = r#"
  (func $hex (param $v i64) (param $at i32)
    (local $i i32) (local $d i32)
    (loop $l
      (local.set $d (i32.wrap_i64 (i64.and (i64.shr_u (local.get $v)
        (i64.extend_i32_u (i32.sub (i32.const 60) (i32.mul (local.get $i) (i32.const 4))))) (i64.const 15))))
      (i32.store8 (i32.add (local.get $at) (local.get $i))
        (i32.add (local.get $d) (select (i32.const 48) (i32.const 87) (i32.lt_u (local.get $d) (i32.const 10)))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $l (i32.lt_u (local.get $i) (i32.const 16)))))"#;

#[test]
fn infinite_loop_times_out_and_stays_paused() {
    let mut b = bot(&wat_bot("(loop $l (br $l))", ""));
    for _ in 0..3 {
        let f = b.turn(b"go", FUEL).expect_err("times out");
        assert_eq!(f.kind, FaultKind::Timeout);
        assert_eq!(f.fuel_used, FUEL);
    }
    assert_host_fine();
}

#[test]
fn loop_around_a_host_call_times_out() {
    assert_eq!(
        fault_of("(loop $l (drop (call $sched_yield)) (br $l))", ""),
        (FaultKind::Timeout, FUEL)
    );
    assert_host_fine();
}

#[test]
fn clock_reading_loop_times_out() {
    let start = "(loop $l (drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 64))) (br $l))";
    assert_eq!(fault_of(start, ""), (FaultKind::Timeout, FUEL));
    assert_host_fine();
}

#[test]
fn memory_bomb_grow_fails_then_trap_is_a_memory_crash() {
    let start = "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 16)) (i32.const -1)))) unreachable";
    assert_eq!(crash(start, ""), CrashReason::MemoryLimit(TrapKind::Unreachable));
    assert_host_fine();
}

#[test]
fn table_bomb_grow_fails_then_trap_is_a_memory_crash() {
    let start =
        "(loop $l (br_if $l (i32.ne (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1)))) unreachable";
    assert_eq!(
        crash(start, "(table $t 1 funcref)"),
        CrashReason::MemoryLimit(TrapKind::Unreachable)
    );
    assert_host_fine();
}

/// 16 MiB filled and 8 MiB copied per round. Fuel is charged per byte, so
/// the budget runs out after two rounds. Were a bulk instruction one
/// instruction's worth of fuel, only the wall-clock backstop (a crash, over a
/// second away) would stop this bot.
#[test]
fn bulk_memory_is_charged_by_length() {
    let start = "(drop (memory.grow (i32.const 256)))
        (loop $l
          (memory.fill (i32.const 0) (i32.const 7) (i32.const 16777216))
          (memory.copy (i32.const 0) (i32.const 8388608) (i32.const 8388608))
          (br $l))";
    assert_eq!(fault_of(start, ""), (FaultKind::Timeout, FUEL));
    assert_host_fine();
}

/// The same for tables: 60 000 elements filled and 30 000 copied per round,
/// charged per element.
#[test]
fn bulk_table_instructions_are_charged_by_length() {
    let start = "(drop (table.grow $t (ref.null func) (i32.const 60000)))
        (loop $l
          (table.fill $t (i32.const 0) (ref.null func) (i32.const 60000))
          (table.copy $t $t (i32.const 0) (i32.const 30000) (i32.const 30000))
          (br $l))";
    assert_eq!(fault_of(start, "(table $t 1 funcref)"), (FaultKind::Timeout, FUEL));
    assert_host_fine();
}

#[test]
fn deep_recursion_is_a_stack_overflow() {
    let extra = "(func $rec (param i32) (result i32)
        (i32.add (call $rec (i32.add (local.get 0) (i32.const 1))) (i32.const 1)))";
    assert_eq!(
        crash("(drop (call $rec (i32.const 0)))", extra),
        CrashReason::StackOverflow { limit: 1024 * 1024 }
    );
    assert_host_fine();
}

/// The crash note tells the author where the bot was, in its own function
/// names, and nothing of the host's frames.
#[test]
fn a_crash_note_names_the_bots_functions() {
    let mut b = bot(&wat_bot(
        "(call $deep_inside_the_bot)",
        "(func $deep_inside_the_bot unreachable)",
    ));
    let fault = b.turn(b"go", FUEL).expect_err("traps");
    assert_eq!(fault.kind, FaultKind::Crash(CrashReason::Trap(TrapKind::Unreachable)));
    let stderr = String::from_utf8_lossy(b.stderr());
    assert!(stderr.contains("deep_inside_the_bot"), "stderr: {stderr}");
    assert!(!stderr.contains("arbiter_sandbox"), "host frames leaked: {stderr}");
}

#[test]
fn traps_are_crashes_with_their_kind() {
    assert_eq!(crash("unreachable", ""), CrashReason::Trap(TrapKind::Unreachable));
    assert_eq!(
        crash("(drop (i32.div_s (i32.const 1) (i32.const 0)))", ""),
        CrashReason::Trap(TrapKind::IntegerDivisionByZero)
    );
    assert_eq!(
        crash("(drop (i32.load (i32.const 0x7ffffff0)))", ""),
        CrashReason::Trap(TrapKind::MemoryOutOfBounds)
    );
    assert_host_fine();
}

#[test]
fn trap_note_goes_to_stderr() {
    let mut b = bot(&wat_bot("unreachable", ""));
    b.turn(b"x", FUEL).expect_err("crashes");
    let log = String::from_utf8_lossy(b.stderr()).into_owned();
    assert!(log.contains("[arbiter: crashed: trap"), "{log}");
}

#[test]
fn output_flood_without_newline_is_a_bad_reply() {
    let start = "(loop $l (call $write (i32.const 1) (i32.const 512) (i32.const 8)) (br $l))";
    let (kind, _) = fault_of(start, r#"(data (i32.const 512) "xxxxxxxx")"#);
    assert_eq!(kind, FaultKind::BadReply(BadReplyReason::LineTooLong { limit: 65536 }));
    assert_host_fine();
}

#[test]
fn huge_reply_line_is_a_bad_reply() {
    let start = "(call $write (i32.const 1) (i32.const 4096) (i32.const 100000)) (loop $l (br $l))";
    let (kind, _) = fault_of(start, "");
    assert_eq!(kind, FaultKind::BadReply(BadReplyReason::LineTooLong { limit: 65536 }));
    assert_host_fine();
}

#[test]
fn reply_of_exactly_the_limit_is_accepted() {
    // 65 536 'a' then a newline, written in two calls.
    let start = "(memory.fill (i32.const 4096) (i32.const 97) (i32.const 65536))
        (i32.store8 (i32.const 69632) (i32.const 10))
        (call $write (i32.const 1) (i32.const 4096) (i32.const 65536))
        (call $write (i32.const 1) (i32.const 69632) (i32.const 1))
        (loop $l (br $l))";
    let mut b = bot(&wat_bot(start, ""));
    let r = b.turn(b"x", FUEL).expect("replies");
    assert_eq!(r.line.len(), 65536);
}

#[test]
fn non_utf8_bytes_pass_through() {
    let start = "(call $write (i32.const 1) (i32.const 512) (i32.const 5)) (loop $l (br $l))";
    let mut b = bot(&wat_bot(start, r#"(data (i32.const 512) "\ff\fe\00a\n")"#));
    assert_eq!(b.turn(b"x", FUEL).expect("replies").line, b"\xff\xfe\0a");
}

#[test]
fn two_lines_in_one_write_answer_two_turns() {
    let start = "(call $write (i32.const 1) (i32.const 512) (i32.const 4)) (loop $l (br $l))";
    let mut b = bot(&wat_bot(start, r#"(data (i32.const 512) "a\nb\n")"#));
    assert_eq!(b.turn(b"1", FUEL).expect("first").line, b"a");
    assert_eq!(b.turn(b"2", FUEL).expect("second").line, b"b");
    assert_eq!(b.turn(b"3", FUEL).expect_err("then loops").kind, FaultKind::Timeout);
}

#[test]
fn one_shot_bot_is_restarted_every_turn() {
    for start in ["(call $echo)", "(call $echo) (call $proc_exit (i32.const 0))"] {
        let mut b = bot(&wat_bot(start, ""));
        for i in 0..4 {
            let req = format!("turn {i}");
            assert_eq!(b.turn(req.as_bytes(), FUEL).expect("replies").line, req.as_bytes());
        }
    }
    assert_host_fine();
}

#[test]
fn exit_before_replying_is_a_crash() {
    assert_eq!(
        crash("(call $proc_exit (i32.const 3))", ""),
        CrashReason::ExitBeforeReply { code: 3 }
    );
    assert_eq!(
        crash("(drop (call $read))", ""),
        CrashReason::ExitBeforeReply { code: 0 }
    );
    assert_host_fine();
}

#[test]
fn reading_stdin_in_a_loop_is_waiting_without_replying() {
    let (kind, _) = fault_of("(loop $l (drop (call $read)) (br $l))", "");
    assert_eq!(kind, FaultKind::BadReply(BadReplyReason::WaitedForInput));
    assert_host_fine();
}

/// A clock subscription at 64 for `ns` (relative, monotonic clock).
fn sleep(ns: u64) -> String {
    format!(
        "(i64.store (i32.const 64) (i64.const 7)) (i32.store8 (i32.const 72) (i32.const 0))
         (i32.store (i32.const 80) (i32.const 1)) (i64.store (i32.const 88) (i64.const {ns}))
         (i64.store (i32.const 96) (i64.const 0)) (i32.store16 (i32.const 104) (i32.const 0))
         (drop (call $poll_oneoff (i32.const 64) (i32.const 256) (i32.const 1) (i32.const 300)))"
    )
}

#[test]
fn sleeping_through_the_budget_is_a_timeout() {
    let start = format!("(drop (call $read)) {} (call $echo)", sleep(3_600_000_000_000));
    assert_eq!(fault_of(&start, ""), (FaultKind::Timeout, FUEL));
    assert_host_fine();
}

#[test]
fn a_short_sleep_is_charged_as_computing() {
    let start = format!(
        "(drop (call $read)) {} (call $write (i32.const 1) (i32.const 512) (i32.const 3)) (loop $l (br $l))",
        sleep(2_000_000)
    );
    let mut b = bot(&wat_bot(&start, r#"(data (i32.const 512) "ok\n")"#));
    let r = b.turn(b"x", FUEL).expect("replies");
    assert_eq!(r.line, b"ok");
    assert!(r.fuel_used >= 20_000_000 && r.fuel_used < 21_000_000, "{}", r.fuel_used);
}

#[test]
fn stderr_flood_is_capped_with_a_marker() {
    let start = "(local $i i32)
        (loop $l (call $write (i32.const 2) (i32.const 4096) (i32.const 1000))
          (local.set $i (i32.add (local.get $i) (i32.const 1)))
          (br_if $l (i32.lt_u (local.get $i) (i32.const 200))))
        (loop $e (call $echo) (br $e))";
    let mut b = bot(&wat_bot(start, ""));
    assert_eq!(b.turn(b"hi", FUEL).expect("replies").line, b"hi");
    let log = b.stderr();
    assert!(log.len() < 64 * 1024 + 100, "{}", log.len());
    assert!(String::from_utf8_lossy(log).contains("[arbiter: stderr truncated after 65536 bytes]"));
    assert_host_fine();
}

#[test]
fn timed_out_bot_resumes_and_its_late_reply_comes_first() {
    // Reads a request, spins 10M iterations (about 80M fuel, more than FUEL), echoes it.
    let start = "(local $i i32)
        (loop $turn
          (local.set $i (i32.const 0))
          (drop (call $read))
          (loop $spin
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br_if $spin (i32.lt_u (local.get $i) (i32.const 10000000))))
          (call $write (i32.const 1) (i32.const 1024) (i32.load (i32.const 16)))
          (br $turn))";
    let mut b = bot(&wat_bot(start, ""));
    let f = b.turn(b"first", FUEL).expect_err("too slow");
    assert_eq!((f.kind, f.fuel_used), (FaultKind::Timeout, FUEL));
    // Paused bots hand over every line: the late answer to "first" comes
    // first, the referee tells it by its content and resumes the bot.
    let late = b.turn(b"second", 4 * FUEL).expect("finishes the first request");
    assert_eq!(late.line, b"first");
    assert!(late.fuel_used < FUEL, "{}", late.fuel_used);
    let left = 4 * FUEL - late.fuel_used;
    let r = b.resume(left).expect("answers the second request");
    assert_eq!(r.line, b"second");
    assert!(r.fuel_used > FUEL / 2 && r.fuel_used <= left, "{}", r.fuel_used);
    // With nothing left to read, resuming asks for input without a reply.
    let f = b.resume(4 * FUEL).expect_err("nothing to answer");
    assert!(matches!(f.kind, FaultKind::BadReply(_)), "{f:?}");
}

#[test]
fn a_bot_behind_may_answer_only_the_newest_request() {
    // Reads whatever is waiting, spins 10M iterations, echoes the last
    // line it read: a bot that catches up by answering the newest request.
    let start = "(local $i i32) (local $n i32) (local $end i32) (local $p i32)
        (loop $turn
          (local.set $i (i32.const 0))
          (local.set $n (call $read))
          (loop $spin
            (local.set $i (i32.add (local.get $i) (i32.const 1)))
            (br_if $spin (i32.lt_u (local.get $i) (i32.const 10000000))))
          ;; the last line of what was read: after the last but one newline
          (local.set $end (i32.sub (i32.add (i32.const 1024) (local.get $n)) (i32.const 1)))
          (local.set $p (local.get $end))
          (block $found
            (loop $back
              (br_if $found (i32.le_u (local.get $p) (i32.const 1024)))
              (br_if $found (i32.eq (i32.load8_u (i32.sub (local.get $p) (i32.const 1))) (i32.const 10)))
              (local.set $p (i32.sub (local.get $p) (i32.const 1)))
              (br $back)))
          (call $write (i32.const 1) (local.get $p) (i32.add (i32.sub (local.get $end) (local.get $p)) (i32.const 1)))
          (br $turn))";
    let mut b = bot(&wat_bot(start, ""));
    // About 80M fuel for "one": two budgets of 30M are not enough.
    for request in [&b"one"[..], b"two"] {
        let f = b.turn(request, 30_000_000).expect_err("too slow");
        assert_eq!((f.kind, f.fuel_used), (FaultKind::Timeout, 30_000_000));
    }
    let late = b.turn(b"three", 4 * FUEL).expect("answers the first");
    assert_eq!(late.line, b"one");
    // "two" and "three" wait on stdin: the bot reads both at once and
    // answers the newest.
    let r = b.resume(4 * FUEL - late.fuel_used).expect("answers the newest");
    assert_eq!(r.line, b"three");
}

#[test]
fn wall_clock_backstop_is_a_crash() {
    let sb = Sandbox::new(SandboxConfig {
        backstop_factor: 0,
        backstop_grace: std::time::Duration::ZERO,
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let module = sb.load(&wasm(&wat_bot("(loop $l (br $l))", ""))).expect("loads");
    let mut b = sb.instantiate(&module, env(1)).expect("instantiates");
    let f = b.turn(b"x", u64::MAX / 4).expect_err("stopped");
    assert!(
        matches!(f.kind, FaultKind::Crash(CrashReason::Backstop { .. })),
        "{f:?}"
    );
    assert_host_fine();
}

fn hex_reply(start: &str, seed: u64, turns: usize) -> Vec<Vec<u8>> {
    let module = load(&wat_bot(start, HEX));
    let mut b = crate::support::sandbox()
        .instantiate(&module, env(seed))
        .expect("instantiates");
    (0..turns)
        .map(|i| b.turn(format!("{i}").as_bytes(), FUEL).expect("replies").line)
        .collect()
}

#[test]
fn random_get_is_seeded() {
    let start = "(loop $l (drop (call $read))
        (drop (call $random_get (i32.const 64) (i32.const 8)))
        (call $hex (i64.load (i32.const 64)) (i32.const 512))
        (i32.store8 (i32.const 528) (i32.const 10))
        (call $write (i32.const 1) (i32.const 512) (i32.const 17)) (br $l))";
    let a = hex_reply(start, 7, 3);
    assert_eq!(a, hex_reply(start, 7, 3));
    assert_ne!(a, hex_reply(start, 8, 3));
    assert_ne!(a[0], a[1]);
}

#[test]
fn clocks_are_virtual_and_deterministic() {
    let start = "(loop $l (drop (call $read))
        (drop (call $clock_time_get (i32.const 0) (i64.const 0) (i32.const 64)))
        (call $hex (i64.load (i32.const 64)) (i32.const 512))
        (drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 64)))
        (call $hex (i64.load (i32.const 64)) (i32.const 529))
        (i32.store8 (i32.const 528) (i32.const 32))
        (i32.store8 (i32.const 545) (i32.const 10))
        (call $write (i32.const 1) (i32.const 512) (i32.const 34)) (br $l))";
    let a = hex_reply(start, 1, 3);
    assert_eq!(a, hex_reply(start, 1, 3));
    let times: Vec<(u64, u64)> = a
        .iter()
        .map(|l| {
            let s = String::from_utf8_lossy(l).into_owned();
            let (r, m) = s.split_once(' ').expect("two clocks");
            (
                u64::from_str_radix(r, 16).expect("hex"),
                u64::from_str_radix(m, 16).expect("hex"),
            )
        })
        .collect();
    let origin = env(1).start_time_ns;
    for w in times.windows(2) {
        assert!(w[1].0 > w[0].0 && w[1].1 > w[0].1, "{times:?}");
    }
    // Only host calls advanced the clock: a few microseconds, not real time.
    assert!(times[0].0 > origin && times[2].1 - origin < 1_000_000, "{times:?}");
}

#[test]
fn cpu_time_clocks_count_the_bots_virtual_time_from_zero() {
    // Process (2) and thread (3) CPU time, then the monotonic clock (1).
    let start = "(loop $l (drop (call $read))
        (drop (call $clock_time_get (i32.const 2) (i64.const 0) (i32.const 64)))
        (call $hex (i64.load (i32.const 64)) (i32.const 512))
        (drop (call $clock_time_get (i32.const 3) (i64.const 0) (i32.const 64)))
        (call $hex (i64.load (i32.const 64)) (i32.const 529))
        (drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 64)))
        (call $hex (i64.load (i32.const 64)) (i32.const 546))
        (i32.store8 (i32.const 528) (i32.const 32))
        (i32.store8 (i32.const 545) (i32.const 32))
        (i32.store8 (i32.const 562) (i32.const 10))
        (call $write (i32.const 1) (i32.const 512) (i32.const 51)) (br $l))";
    let a = hex_reply(start, 1, 3);
    assert_eq!(a, hex_reply(start, 1, 3), "deterministic");
    let origin = env(1).start_time_ns;
    let times: Vec<[u64; 3]> = a
        .iter()
        .map(|l| {
            let s = String::from_utf8_lossy(l).into_owned();
            let v: Vec<u64> = s
                .split(' ')
                .map(|h| u64::from_str_radix(h.trim(), 16).expect("hex"))
                .collect();
            [v[0], v[1], v[2]]
        })
        .collect();
    for t in &times {
        // From 0, not the date: the bot's used time, which the monotonic
        // clock adds to its origin.
        assert!(t[0] > 0 && t[0] < 1_000_000, "{times:?}");
        assert!(t[0] < t[1], "the thread clock read later: {times:?}");
        assert!(t[2] > origin && t[2] - origin > t[1], "{times:?}");
    }
    for w in times.windows(2) {
        assert!(w[1][0] > w[0][0], "{times:?}");
    }
}

/// A bot that, on a request starting with `w`, fills 2 MB of memory (the
/// region where a Rust bot's stack, data and heap live) and a table slot,
/// then answers `1` if any of it is set, else `0`.
const LEFTOVERS: &str = "(local $at i32) (local $seen i64)
    (drop (memory.grow (i32.const 32)))
    (loop $turn
      (drop (call $read))
      (if (i32.eq (i32.load8_u (i32.const 1024)) (i32.const 119))
        (then
          (memory.fill (i32.const 65536) (i32.const 171) (i32.const 2097152))
          (table.set $t (i32.const 0) (ref.func $mark))))
      (local.set $seen (i64.extend_i32_u (i32.eqz (ref.is_null (table.get $t (i32.const 0))))))
      (local.set $at (i32.const 65536))
      (loop $scan
        (local.set $seen (i64.or (local.get $seen) (i64.load (local.get $at))))
        (local.set $at (i32.add (local.get $at) (i32.const 8)))
        (br_if $scan (i32.lt_u (local.get $at) (i32.const 2162688))))
      (i32.store8 (i32.const 64) (select (i32.const 49) (i32.const 48) (i64.ne (local.get $seen) (i64.const 0))))
      (i32.store8 (i32.const 65) (i32.const 10))
      (call $write (i32.const 1) (i32.const 64) (i32.const 2))
      (br $turn))";

/// Slots are reused, and the pages a bot touched may stay resident for the
/// next one: each new bot still starts from zeroed memory and a null table.
#[test]
fn a_reused_slot_starts_clean() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 1,
        ..config()
    })
    .expect("sandbox");
    let extra = "(table $t 1 funcref) (elem declare func $mark) (func $mark)";
    let module = sb.load(&wasm(&wat_bot(LEFTOVERS, extra))).expect("loads");
    for round in 0..3 {
        let mut b = sb.instantiate(&module, env(round)).expect("the one slot is free again");
        assert_eq!(b.turn(b"read", FUEL).expect("replies").line, b"0", "round {round}");
        assert_eq!(b.turn(b"write", FUEL).expect("replies").line, b"1", "round {round}");
        assert_eq!(b.turn(b"read", FUEL).expect("replies").line, b"1", "round {round}");
    }
}
