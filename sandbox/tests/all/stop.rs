//! `OnTimeout::Stop`: wasmtime stops a bot at exactly its budget, whatever
//! its instructions cost. Each hostile loop here (plain, after reading the
//! request, bulk memory and table instructions of the largest sizes the
//! limits allow) ends as a timeout charged exactly the budget, and the
//! bot's clock has advanced by exactly the budget too: nothing is estimated.

use arbiter_sandbox::{BotEnv, BotInstance, FaultKind, OnTimeout};

use crate::support::{assert_host_fine, env, load, sandbox, wat_bot};

/// 200 virtual ms: the smoke game's move cap.
const BUDGET: u64 = 2_000_000_000;

fn stopping_bot(start: &str, extra: &str) -> BotInstance {
    let env = BotEnv {
        on_timeout: OnTimeout::Stop,
        ..env(1)
    };
    sandbox()
        .instantiate(&load(&wat_bot(start, extra)), env)
        .expect("instantiates")
}

/// Plays one turn of `start`, which must time out, and checks the charge
/// and the clock.
fn assert_stopped_at_budget(start: &str, extra: &str) {
    let mut b = stopping_bot(start, extra);
    let f = b.turn(b"request", BUDGET).expect_err("times out");
    assert_eq!(f.kind, FaultKind::Timeout, "{start}");
    assert_eq!(f.fuel_used, BUDGET, "{start}");
    // 10 000 000 fuel per virtual ms: the clock moved by exactly the budget.
    assert_eq!(b.clock_ns(), BUDGET / 10, "{start}");
    assert_host_fine();
}

/// Grows memory to the 256 MiB limit (4 096 pages).
const GROW_TO_LIMIT: &str = "(drop (memory.grow (i32.const 4094)))";

#[test]
fn plain_loop_is_stopped_at_its_budget() {
    assert_stopped_at_budget("(loop $l (br $l))", "");
}

#[test]
fn loop_after_reading_the_request_is_stopped_at_its_budget() {
    assert_stopped_at_budget("(drop (call $read)) (loop $l (br $l))", "");
}

#[test]
fn memory_fill_loop_of_the_whole_memory_is_stopped_at_its_budget() {
    let start =
        format!("{GROW_TO_LIMIT} (loop $l (memory.fill (i32.const 0) (i32.const 7) (i32.const 268435456)) (br $l))");
    assert_stopped_at_budget(&start, "");
}

#[test]
fn memory_copy_loop_of_half_the_memory_is_stopped_at_its_budget() {
    let start = format!(
        "{GROW_TO_LIMIT} (loop $l (memory.copy (i32.const 0) (i32.const 134217728) (i32.const 134217728)) (br $l))"
    );
    assert_stopped_at_budget(&start, "");
}

#[test]
fn table_fill_and_copy_loop_is_stopped_at_its_budget() {
    let start = "(loop $l
          (table.fill $t (i32.const 0) (ref.null func) (i32.const 100000))
          (table.copy $t $t (i32.const 0) (i32.const 50000) (i32.const 50000))
          (br $l))";
    assert_stopped_at_budget(start, "(table $t 100000 funcref)");
}

/// A bot stopped for a timeout is gone; its next turn starts a fresh
/// instance, which sees only the new request.
#[test]
fn a_stopped_bot_starts_afresh_at_its_next_turn() {
    // Echoes every request, but spins forever on one that starts with `l`.
    let start = "(loop $turn
          (drop (call $read))
          (if (i32.eq (i32.load8_u (i32.const 1024)) (i32.const 108))
            (then (loop $spin (br $spin))))
          (call $write (i32.const 1) (i32.const 1024) (i32.load (i32.const 16)))
          (br $turn))";
    let mut b = stopping_bot(start, "");
    assert_eq!(b.turn(b"echo 1", BUDGET).expect("echoes").line, b"echo 1");
    let f = b.turn(b"loop", BUDGET).expect_err("spins");
    assert_eq!((f.kind, f.fuel_used), (FaultKind::Timeout, BUDGET));
    assert_eq!(
        b.turn(b"echo 2", BUDGET).expect("a fresh instance echoes").line,
        b"echo 2"
    );
}

/// Budgets run out in host calls too: a bot sleeping through its budget is
/// charged exactly the budget.
#[test]
fn sleeping_through_the_budget_is_charged_exactly_the_budget() {
    // poll_oneoff on one clock subscription of an hour.
    let start = "(i64.store (i32.const 64) (i64.const 7)) (i32.store8 (i32.const 72) (i32.const 0))
         (i32.store (i32.const 80) (i32.const 1)) (i64.store (i32.const 88) (i64.const 3600000000000))
         (i64.store (i32.const 96) (i64.const 0)) (i32.store16 (i32.const 104) (i32.const 0))
         (drop (call $poll_oneoff (i32.const 64) (i32.const 256) (i32.const 1) (i32.const 300)))
         (loop $l (br $l))";
    let mut b = stopping_bot(start, "");
    let f = b.turn(b"request", BUDGET).expect_err("sleeps too long");
    assert_eq!((f.kind, f.fuel_used), (FaultKind::Timeout, BUDGET));
}
