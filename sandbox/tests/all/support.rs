//! Shared fixtures.

use std::path::PathBuf;
use std::sync::OnceLock;

use arbiter_sandbox::{BotEnv, BotInstance, BotModule, CompilerCommand, OnTimeout, Sandbox, SandboxConfig};

/// Budget of most test turns: 5 virtual ms.
pub const FUEL: u64 = 50_000_000;

pub fn compiler() -> CompilerCommand {
    CompilerCommand::new(env!("CARGO_BIN_EXE_arbiter-compile"), Vec::<String>::new())
}

/// Test settings. Each sandbox made from them compiles into its own
/// temporary folder, removed when it is dropped, so no test sees another's
/// artifacts.
pub fn config() -> SandboxConfig {
    SandboxConfig {
        compiler: compiler(),
        instance_slots: 32,
        ..SandboxConfig::default()
    }
}

/// Compiled modules of the shared sandbox, in the target folder: emptied
/// when the run first asks for it, so a run starts cold and leaves nothing
/// in the system's temporary folder (the shared sandbox is never dropped).
fn cache_dir() -> &'static std::path::Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sandbox-tests-compiled");
        // Whatever a last run left is only a cache: emptying may fail.
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("the target folder is writable");
        dir
    })
}

/// One sandbox shared by the tests that use default limits.
pub fn sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        Sandbox::new(SandboxConfig {
            cache_dir: Some(cache_dir().to_path_buf()),
            ..config()
        })
        .expect("sandbox")
    })
}

pub fn env(seed: u64) -> BotEnv {
    BotEnv {
        seed,
        vars: vec![
            ("ARBITER_GAME".into(), "test".into()),
            ("ARBITER_MODE".into(), "plain".into()),
        ],
        start_time_ns: 1_700_000_000_000_000_000,
        // The sandbox's own tests cover pausing; `Stop` has tests of its own.
        on_timeout: OnTimeout::Pause,
        fuel_per_ms: None,
    }
}

pub fn wasm(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).expect("test WAT parses")
}

pub fn load(wat: &str) -> BotModule {
    sandbox().load(&wasm(wat)).expect("module loads")
}

pub fn bot(wat: &str) -> BotInstance {
    sandbox().instantiate(&load(wat), env(1)).expect("instantiates")
}

/// A WAT bot: WASI imports, a memory, helpers and the given `_start` body
/// (plus extra items).
///
/// Memory: input iovec at 0 (buffer 1024.., 60 000 bytes), nread at 16,
/// output iovec at 32, nwritten at 48, scratch from 64; data may be placed
/// from 512.
pub fn wat_bot(start: &str, extra: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (import "wasi_snapshot_preview1" "clock_time_get" (func $clock_time_get (param i32 i64 i32) (result i32)))
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll_oneoff (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "random_get" (func $random_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "sched_yield" (func $sched_yield (result i32)))
  (memory (export "memory") 2)
  ;; Reads what stdin has (at most 60 000 bytes) to 1024; returns the count.
  (func $read (result i32)
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 60000))
    (if (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16))
      (then unreachable))
    (i32.load (i32.const 16)))
  ;; Writes len bytes at ptr to fd.
  (func $write (param $fd i32) (param $ptr i32) (param $len i32)
    (i32.store (i32.const 32) (local.get $ptr))
    (i32.store (i32.const 36) (local.get $len))
    (drop (call $fd_write (local.get $fd) (i32.const 32) (i32.const 1) (i32.const 48))))
  ;; Echoes one request (the newline included).
  (func $echo
    (call $write (i32.const 1) (i32.const 1024) (call $read)))
  {extra}
  (func (export "_start") {start}))"#
    )
}

/// The WAT echo bot: answers every request with itself.
pub fn echo_wat() -> String {
    wat_bot("(loop $l (call $echo) (br $l))", "")
}

/// The host still serves a well-behaved bot.
pub fn assert_host_fine() {
    let mut b = bot(&echo_wat());
    for i in 0..3 {
        let req = format!("ping {i}");
        let r = b.turn(req.as_bytes(), FUEL).expect("echo replies");
        assert_eq!(r.line, req.as_bytes());
    }
}

/// Builds the Rust test bots (once per test run) and returns the path of
/// `name`.wasm.
pub fn rust_bot(name: &str) -> Vec<u8> {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bots/Cargo.toml");
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("sandbox-test-bots");
        let status = arbiter_wasm_build::command(&target)
            .args(["--release", "--offline", "--manifest-path"])
            .arg(&manifest)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the test bots failed");
        arbiter_wasm_build::output_dir(&target, "release")
    });
    std::fs::read(dir.join(format!("{name}.wasm"))).expect("test bot was built")
}

#[test]
fn public_types_are_send_and_sync_where_promised() {
    fn send_sync<T: Send + Sync>() {}
    fn send<T: Send>() {}
    send_sync::<Sandbox>();
    send_sync::<BotModule>();
    send::<BotInstance>();
}
