//! Host work a bot can repeat is charged fuel at least at the rate plain
//! WebAssembly burns it, so the fuel clock, not the wall-clock backstop,
//! judges every loop of it: failed `memory.grow` and `table.grow` (and
//! grows by nothing), and tight loops of cheap WASI calls, in both timeout
//! modes and on a first move's larger budget. Each loop here must end as a
//! [`FaultKind::Timeout`] charged exactly its budget, under a backstop that
//! allows [`BACKSTOP_FACTOR`] times the budget in real time (the backstop
//! deciding would be a [`CrashReason::Backstop`]). Successful growth is
//! charged too, and bounded by the memory limit.
//!
//! `calibrate` (run by `cargo bench -p arbiter-sandbox --bench host_costs`)
//! prints what each operation costs the host in nanoseconds and what it is
//! charged in fuel.

use std::time::{Duration, Instant};

use arbiter_sandbox::{BotEnv, CrashReason, FaultKind, OnTimeout, Sandbox, SandboxConfig, TurnFault};

use crate::support::{assert_host_fine, config, env, wasm, wat_bot};

/// The backstop of these tests: real time allowed per virtual time of a
/// budget, the default, with no grace (the default's 1 s would hide a
/// loop ten times too cheap). A loop charged too little for its host
/// work, such as failing grows charged as one instruction (0.04 fuel per
/// nanosecond), reaches it.
const BACKSTOP_FACTOR: u32 = 50;

/// 100 virtual ms: the smoke match's move cap; a backstop of 5 s.
const BUDGET: u64 = 1_000_000_000;

/// Grows memory to the 256 MiB limit, 16 pages at a time.
const GROW_TO_LIMIT: &str = "(loop $g (br_if $g (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))";

/// A table of 1 element, to be grown.
const TABLE: &str = "(table $t 1 funcref)";

/// Grows the table to the 100 000-element limit, 1 000 at a time.
const GROW_TABLE_TO_LIMIT: &str =
    "(loop $g (br_if $g (i32.ne (table.grow $t (ref.null func) (i32.const 1000)) (i32.const -1))))";

fn sandbox(backstop_factor: u32) -> Sandbox {
    Sandbox::new(SandboxConfig {
        backstop_factor,
        backstop_grace: Duration::ZERO,
        instance_slots: 4,
        ..config()
    })
    .expect("sandbox")
}

/// Runs one turn of `start` with `budget` under `on_timeout`; the fault and
/// the real time it took.
fn run(
    sb: &Sandbox,
    start: &str,
    extra: &str,
    budget: u64,
    on_timeout: OnTimeout,
) -> (Result<u64, TurnFault>, Duration) {
    let module = sb.load(&wasm(&wat_bot(start, extra))).expect("loads");
    let mut b = sb
        .instantiate(&module, BotEnv { on_timeout, ..env(1) })
        .expect("instantiates");
    let started = Instant::now();
    let result = b.turn(b"request", budget).map(|r| r.fuel_used);
    (result, started.elapsed())
}

/// `start` loops until its budget runs out: a timeout charged exactly the
/// budget, in both timeout modes, never the backstop.
fn assert_judged_by_fuel(name: &str, start: &str, extra: &str) {
    let sb = sandbox(BACKSTOP_FACTOR);
    for on_timeout in [OnTimeout::Stop, OnTimeout::Pause] {
        let (result, took) = run(&sb, start, extra, BUDGET, on_timeout);
        let fault = result.expect_err("the loop never replies");
        eprintln!("{name} ({on_timeout:?}): {:?} after {took:.2?}", fault.kind);
        assert!(
            !matches!(fault.kind, FaultKind::Crash(CrashReason::Backstop { .. })),
            "{name} ({on_timeout:?}): the wall-clock backstop decided after {took:.2?}, not the fuel clock"
        );
        assert_eq!(fault.kind, FaultKind::Timeout, "{name} ({on_timeout:?})");
        assert_eq!(fault.fuel_used, BUDGET, "{name} ({on_timeout:?})");
    }
    assert_host_fine();
}

#[test]
fn failing_memory_grow_loop_is_judged_by_fuel() {
    let start = format!("{GROW_TO_LIMIT} (loop $l (drop (memory.grow (i32.const 16))) (br $l))");
    assert_judged_by_fuel("failing memory.grow 16", &start, "");
    let start = format!("{GROW_TO_LIMIT} (loop $l (drop (memory.grow (i32.const 1))) (br $l))");
    assert_judged_by_fuel("failing memory.grow 1", &start, "");
}

#[test]
fn memory_grow_by_nothing_loop_is_judged_by_fuel() {
    assert_judged_by_fuel(
        "memory.grow 0",
        "(loop $l (drop (memory.grow (i32.const 0))) (br $l))",
        "",
    );
}

/// Grows to the limit a page at a time, then exits after replying: every
/// turn starts a fresh instance that grows again (memory never shrinks, so
/// this is the most growth a bot can churn). A successful grow costs the
/// host more than a failed one (about 1.4 µs in a test build, for
/// [`GROW_FUEL`] fuel: 0.2 fuel per nanosecond), but it is bounded by the
/// memory limit: at most 4 096 per instance, a few milliseconds per turn,
/// far inside the backstop's one-second grace. Every turn replies.
#[test]
fn successful_grow_churn_is_bounded_by_the_memory_limit() {
    let start = "(loop $l (br_if $l (i32.ne (memory.grow (i32.const 1)) (i32.const -1))))
        (call $echo) (call $proc_exit (i32.const 0))";
    let sb = sandbox(BACKSTOP_FACTOR);
    let module = sb.load(&wasm(&wat_bot(start, ""))).expect("loads");
    let mut b = sb.instantiate(&module, env(1)).expect("instantiates");
    let started = Instant::now();
    let mut fuel = 0;
    for i in 0..20 {
        let request = format!("{i}");
        let reply = b.turn(request.as_bytes(), BUDGET).expect("replies");
        assert_eq!(reply.line, request.as_bytes());
        fuel += reply.fuel_used;
    }
    eprintln!(
        "20 turns of growing 4 095 pages one at a time: {fuel} fuel in {:.2?}",
        started.elapsed()
    );
    assert!(
        fuel >= 20 * 4_095 * GROW_FUEL,
        "every successful grow is charged: {fuel}"
    );
    assert_host_fine();
}

/// What `memory.grow` and `table.grow` are charged (`GROW_FUEL` in
/// `sandbox/src/config.rs`).
const GROW_FUEL: u64 = 255;

#[test]
fn failing_table_grow_loop_is_judged_by_fuel() {
    let start = format!("{GROW_TABLE_TO_LIMIT} (loop $l (drop (table.grow $t (ref.null func) (i32.const 1))) (br $l))");
    assert_judged_by_fuel("failing table.grow 1", &start, TABLE);
    assert_judged_by_fuel(
        "table.grow 0",
        "(loop $l (drop (table.grow $t (ref.null func) (i32.const 0))) (br $l))",
        TABLE,
    );
}

/// Tight loops of the cheapest WASI calls: each does next to nothing but
/// costs the host a call.
#[test]
fn tight_wasi_call_loops_are_judged_by_fuel() {
    for (name, call) in WASI_LOOPS {
        let start = format!("(loop $l {call} (br $l))");
        assert_judged_by_fuel(name, &start, "");
    }
}

/// The cheapest repeatable WASI calls, as WAT statements.
const WASI_LOOPS: [(&str, &str); 4] = [
    (
        "clock_time_get",
        "(drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 64)))",
    ),
    (
        "random_get of 0 bytes",
        "(drop (call $random_get (i32.const 64) (i32.const 0)))",
    ),
    (
        "fd_write of 0 bytes",
        "(call $write (i32.const 2) (i32.const 512) (i32.const 0))",
    ),
    ("sched_yield", "(drop (call $sched_yield))"),
];

/// The first move of a game may have the ladder's whole move cap (1 s for
/// Othello, ten times the smoke match's 100 ms): a failing-grow loop there
/// is judged by fuel too, under the default backstop (50 times, 1 s grace).
#[test]
fn failing_grow_loop_with_a_first_move_budget_is_judged_by_fuel() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 4,
        ..config()
    })
    .expect("sandbox");
    let start = format!("{GROW_TO_LIMIT} (loop $l (drop (memory.grow (i32.const 16))) (br $l))");
    let first_move = 10_000_000_000;
    let (result, took) = run(&sb, &start, "", first_move, OnTimeout::Stop);
    let fault = result.expect_err("never replies");
    eprintln!(
        "failing memory.grow 16 on a 1 s first move: {:?} after {took:.2?}",
        fault.kind
    );
    assert_eq!((fault.kind, fault.fuel_used), (FaultKind::Timeout, first_move));
}

/// Measures, for each repeatable host operation, its cost in real time
/// and the fuel it is charged, against a plain counting loop: a
/// measurement, run by `cargo bench -p arbiter-sandbox --bench host_costs`.
#[allow(dead_code, reason = "run by benches/host_costs.rs, not as a test")]
pub fn calibrate() {
    const N: u32 = 200_000;
    let sb = sandbox(1_000_000);
    let counted = |body: &str| {
        format!(
            "(loop $l {body}
               (local.set $i (i32.add (local.get $i) (i32.const 1)))
               (br_if $l (i32.lt_u (local.get $i) (i32.const {N}))))
             (call $echo) (loop $w (br $w))"
        )
    };
    let measure = |setup: &str, body: &str, extra: &str| {
        let start = format!("(local $i i32) {setup} {}", counted(body));
        let mut best = (Duration::MAX, 0);
        for _ in 0..5 {
            let (result, took) = run(&sb, &start, extra, u64::MAX / 4, OnTimeout::Stop);
            let fuel = result.expect("replies");
            if took < best.0 {
                best = (took, fuel);
            }
        }
        best
    };
    let (base_time, base_fuel) = measure("", "", "");
    let (setup_time, setup_fuel) = measure(GROW_TO_LIMIT, "", "");
    let (table_setup_time, table_setup_fuel) = measure(GROW_TABLE_TO_LIMIT, "", TABLE);
    eprintln!(
        "counting loop: {:.1} ns and {} fuel per iteration, {:.2} fuel/ns",
        base_time.as_nanos() as f64 / f64::from(N),
        base_fuel / u64::from(N),
        base_fuel as f64 / base_time.as_nanos() as f64
    );
    let mut cases: Vec<(&str, &str, String, &str, Duration, u64)> = vec![
        (
            "failing memory.grow 16",
            GROW_TO_LIMIT,
            "(drop (memory.grow (i32.const 16)))".into(),
            "",
            setup_time,
            setup_fuel,
        ),
        (
            "failing memory.grow 1",
            GROW_TO_LIMIT,
            "(drop (memory.grow (i32.const 1)))".into(),
            "",
            setup_time,
            setup_fuel,
        ),
        (
            "memory.grow 0",
            "",
            "(drop (memory.grow (i32.const 0)))".into(),
            "",
            base_time,
            base_fuel,
        ),
        (
            "failing table.grow 1",
            GROW_TABLE_TO_LIMIT,
            "(drop (table.grow $t (ref.null func) (i32.const 1)))".into(),
            TABLE,
            table_setup_time,
            table_setup_fuel,
        ),
        (
            "table.grow 0",
            "",
            "(drop (table.grow $t (ref.null func) (i32.const 0)))".into(),
            TABLE,
            base_time,
            base_fuel,
        ),
    ];
    for (name, call) in WASI_LOOPS {
        cases.push((name, "", call.into(), "", base_time, base_fuel));
    }
    for (name, setup, body, extra, t0, f0) in cases {
        let (t, f) = measure(setup, &body, extra);
        let ns = t.saturating_sub(t0).as_nanos() as f64 / f64::from(N);
        let fuel = f.saturating_sub(f0) as f64 / f64::from(N);
        eprintln!(
            "{name}: {ns:.0} ns, charged {fuel:.0} fuel: {:.2} fuel/ns (the loop: {:.2} fuel/ns)",
            fuel / ns,
            f as f64 / t.as_nanos() as f64
        );
    }
    // Successful growth: 4 095 one-page grows per instance.
    let (t, f) = measure("", "(drop (memory.grow (i32.const 1)))", "");
    eprintln!(
        "memory.grow 1 (4 095 succeed, the rest fail): {:.2} fuel/ns overall",
        f as f64 / t.as_nanos() as f64
    );
}
