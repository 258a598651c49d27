//! Sandbox overhead: one turn round trip with a Rust bot that parses a
//! ~1 KB request, the same with a hand-written bot that only echoes it (the
//! host's share), the echo bot reading the clock ten times a turn (what a
//! host call that does not pause costs), a hand-written one-shot bot (echo,
//! then `proc_exit(0)`: a fresh instance every turn), and instantiating a
//! bot from a cached module.
//!
//! Run with `cargo bench -p arbiter-sandbox --bench turn`.

use std::path::PathBuf;

use arbiter_sandbox::{BotEnv, BotInstance, CompilerCommand, Sandbox, SandboxConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn echo_bot() -> Vec<u8> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bots/Cargo.toml");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sandbox-test-bots");
    let status = arbiter_wasm_build::command(&target)
        .args(["--release", "--offline", "--manifest-path"])
        .arg(&manifest)
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the test bots failed");
    std::fs::read(arbiter_wasm_build::output_dir(&target, "release").join("echo.wasm")).expect("echo.wasm")
}

/// A hand-written bot whose `_start` is `start`, with `$echo`: one
/// `fd_read` of whatever stdin has, one `fd_write` of it back (no parsing,
/// no allocation).
fn echo_wat(start: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (memory (export "memory") 2)
  (func $echo
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 60000))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
    (i32.store (i32.const 32) (i32.const 1024))
    (i32.store (i32.const 36) (i32.load (i32.const 16)))
    (drop (call $fd_write (i32.const 1) (i32.const 32) (i32.const 1) (i32.const 48))))
  (func (export "_start") {start}))"#
    )
}

/// Echoes forever: the host's share of a turn.
const RAW_ECHO: &str = "(loop $turn (call $echo) (br $turn))";

/// Echoes forever, reading the clock ten times a turn: the cost of a host
/// call that does not pause the bot.
const ECHO_TEN_CLOCK_READS: &str = "(loop $turn (call $echo)
  (loop $read (drop (call $clock_time_get (i32.const 1) (i64.const 0) (i32.const 64)))
    (i32.store (i32.const 72) (i32.add (i32.load (i32.const 72)) (i32.const 1)))
    (br_if $read (i32.lt_u (i32.load (i32.const 72)) (i32.const 10))))
  (i32.store (i32.const 72) (i32.const 0))
  (br $turn))";

/// Echoes one request, then exits with `proc_exit(0)`, as a C bot calling
/// `exit(0)` does: the sandbox starts a fresh instance for every turn.
const ONE_SHOT: &str = "(call $echo) (call $proc_exit (i32.const 0))";

fn bench(c: &mut Criterion) {
    let sandbox = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new(env!("CARGO_BIN_EXE_arbiter-compile"), Vec::<String>::new()),
        instance_slots: 8,
        ..SandboxConfig::default()
    })
    .expect("sandbox");
    let module = sandbox.load(&echo_bot()).expect("loads");
    let env = BotEnv {
        seed: 1,
        vars: vec![("ARBITER_GAME".into(), "bench".into())],
        ..BotEnv::default()
    };

    // ~1 KB request: "sum" and 250 numbers, parsed and summed by the bot.
    let mut request = String::from("sum");
    for i in 0..250 {
        request.push_str(&format!(" {}", i * 37 % 1000));
    }
    println!("request: {} bytes", request.len());
    let mut bot = sandbox.instantiate(&module, env.clone()).expect("instantiates");
    bench_turns(c, "turn_roundtrip_1kb_sum", &mut bot, &request);
    let r = bot.turn(request.as_bytes(), BUDGET).expect("replies");
    println!("fuel per turn: {}", r.fuel_used);

    // The host's share alone: a hand-written bot whose only work is one
    // fd_read of the request and one fd_write of it back.
    let mut raw = wat_bot(&sandbox, RAW_ECHO, &env);
    bench_turns(c, "turn_roundtrip_1kb_raw_echo", &mut raw, &request);

    let mut clock = wat_bot(&sandbox, ECHO_TEN_CLOCK_READS, &env);
    bench_turns(c, "turn_roundtrip_1kb_echo_10_clock_reads", &mut clock, &request);

    let mut one_shot = wat_bot(&sandbox, ONE_SHOT, &env);
    bench_turns(c, "turn_roundtrip_1kb_one_shot", &mut one_shot, &request);

    c.bench_function("instantiate_from_cached_module", |b| {
        b.iter(|| {
            let bot = sandbox.instantiate(&module, env.clone()).expect("instantiates");
            drop(std::hint::black_box(bot));
        })
    });
    let bytes = echo_bot();
    c.bench_function("load_from_memory_cache", |b| {
        b.iter(|| std::hint::black_box(sandbox.load(&bytes).expect("cached")))
    });
}

/// Fuel for every benchmarked turn: far more than any of them uses.
const BUDGET: u64 = 1_000_000_000;

/// A running instance of the [`echo_wat`] bot with `_start` body `start`.
fn wat_bot(sandbox: &Sandbox, start: &str, env: &BotEnv) -> BotInstance {
    let module = sandbox
        .load(&wat::parse_str(echo_wat(start)).expect("valid WAT"))
        .expect("loads");
    sandbox.instantiate(&module, env.clone()).expect("instantiates")
}

/// Benchmarks one turn of `bot` with `request`.
fn bench_turns(c: &mut Criterion, name: &str, bot: &mut BotInstance, request: &str) {
    c.bench_function(name, |b| {
        b.iter(|| {
            let r = bot.turn(request.as_bytes(), BUDGET).expect("replies");
            std::hint::black_box(r.line);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
