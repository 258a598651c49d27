//! Sandbox overhead: one turn round trip with a Rust bot that parses a
//! ~1 KB request, and instantiating a bot from a cached module.
//!
//! Run with `cargo bench -p arbiter-sandbox --bench turn`.

use std::path::PathBuf;
use std::process::Command;

use arbiter_sandbox::{BotEnv, CompilerCommand, Sandbox, SandboxConfig};
use criterion::{Criterion, criterion_group, criterion_main};

fn echo_bot() -> Vec<u8> {
    let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bots/Cargo.toml");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sandbox-test-bots");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--offline",
            "--target",
            "wasm32-wasip1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building the test bots failed");
    std::fs::read(target.join("wasm32-wasip1/release/echo.wasm")).expect("echo.wasm")
}

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
        start_time_ns: 0,
    };

    // ~1 KB request: "sum" and 250 numbers, parsed and summed by the bot.
    let mut request = String::from("sum");
    for i in 0..250 {
        request.push_str(&format!(" {}", i * 37 % 1000));
    }
    println!("request: {} bytes", request.len());
    let mut bot = sandbox.instantiate(&module, env.clone()).expect("instantiates");
    let budget = 1_000_000_000;
    c.bench_function("turn_roundtrip_1kb_sum", |b| {
        b.iter(|| {
            let r = bot.turn(request.as_bytes(), budget).expect("replies");
            std::hint::black_box(r.line);
        })
    });
    let r = bot.turn(request.as_bytes(), budget).expect("replies");
    println!("fuel per turn: {}", r.fuel_used);

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

criterion_group!(benches, bench);
criterion_main!(benches);
