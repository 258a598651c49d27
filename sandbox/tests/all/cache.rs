//! The compiler child process and the compile caches.

use std::time::Duration;

use arbiter_sandbox::{CacheStats, CompilerCommand, ModuleError, Sandbox, SandboxConfig};

use crate::support::{FUEL, config, echo_wat, env, wasm};

#[test]
fn artifacts_are_cached_on_disk_and_reused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        instance_slots: 4,
        ..config()
    };
    let bytes = wasm(&echo_wat());
    let first = Sandbox::new(cfg.clone()).expect("sandbox");
    assert_eq!(first.cache_stats(), CacheStats::default());
    let m = first.load(&bytes).expect("compiles");
    // One artifact, beside the folder of compiled functions.
    let artifacts = std::fs::read_dir(dir.path())
        .expect("dir")
        .filter(|f| {
            f.as_ref()
                .is_ok_and(|f| f.path().extension().is_some_and(|e| e == "cwasm"))
        })
        .count();
    assert_eq!(artifacts, 1);
    first.load(&bytes).expect("from memory");
    assert!(first.cached(m.sha256()).is_some());
    assert!(first.cached(&"0".repeat(64)).is_none());
    assert_eq!(
        first.cache_stats(),
        CacheStats {
            memory_hits: 2,
            disk_hits: 0,
            compiles: 1
        }
    );
    // A second sandbox on the same directory needs no compiler.
    let second = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new("/nonexistent/arbiter-compile", Vec::<String>::new()),
        ..cfg
    })
    .expect("sandbox");
    let m2 = second.load(&bytes).expect("from the disk cache");
    assert_eq!(m.sha256(), m2.sha256());
    assert_eq!(
        second.cache_stats(),
        CacheStats {
            memory_hits: 0,
            disk_hits: 1,
            compiles: 0
        }
    );
    let mut b = second.instantiate(&m2, env(1)).expect("instantiates");
    assert_eq!(b.turn(b"cached", FUEL).expect("replies").line, b"cached");
}

#[test]
fn missing_compiler_is_a_host_failure() {
    let sb = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new("/nonexistent/arbiter-compile", Vec::<String>::new()),
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let err = sb.load(&wasm(&echo_wat())).expect_err("no compiler");
    assert!(err.is_host_failure(), "{err}");
}

#[test]
fn slow_compilation_is_killed() {
    // A "compiler" that never finishes stands in for a compile bomb.
    let sb = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new("sleep", ["30"]),
        compile_timeout: Duration::from_millis(200),
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let started = std::time::Instant::now();
    let err = sb.load(&wasm(&echo_wat())).expect_err("too slow");
    assert_eq!(err, ModuleError::CompileTimeout { secs: 1 });
    assert_eq!(
        err.to_string(),
        "compilation took longer than 1 s of CPU time; make the module (or its largest functions) smaller"
    );
    assert!(started.elapsed() < Duration::from_secs(5));
}

#[test]
fn compiler_out_of_memory_is_reported() {
    let sb = Sandbox::new(SandboxConfig {
        compile_memory_bytes: 1024 * 1024,
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    // A distinct module, so no cache entry exists.
    let err = sb
        .load(&wasm(&crate::support::wat_bot(
            "(call $echo) (drop (i32.const 77))",
            "",
        )))
        .expect_err("no memory to compile");
    assert_eq!(err, ModuleError::CompileOutOfMemory { mib: 1 }, "{err}");
}

#[test]
fn instance_slots_are_limited() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let m = sb.load(&wasm(&echo_wat())).expect("loads");
    let a = sb.instantiate(&m, env(1)).expect("first");
    let _b = sb.instantiate(&m, env(1)).expect("second");
    let err = sb.instantiate(&m, env(1)).expect_err("no slot left");
    assert!(matches!(err, arbiter_sandbox::SandboxError::NoInstanceSlot(2)), "{err}");
    drop(a);
    sb.instantiate(&m, env(1)).expect("a slot is free again");
}

/// The echo bot with a function of its own, so that each `n` is a
/// different module.
fn echo_variant(n: u32) -> Vec<u8> {
    wasm(&crate::support::wat_bot(
        "(loop $l (call $echo) (br $l))",
        &format!("(func $variant (result i32) (i32.const {n}))"),
    ))
}

#[test]
fn a_loaded_module_is_found_by_its_digest() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let bytes = echo_variant(1);
    let sha = sb.inspect(&bytes).expect("valid").sha256;
    assert!(sb.cached(&sha).is_none(), "not loaded yet");
    sb.load(&bytes).expect("compiles");
    let module = sb.cached(&sha).expect("loaded, so kept");
    assert_eq!(module.sha256(), sha);
    let mut b = sb.instantiate(&module, env(1)).expect("instantiates");
    assert_eq!(b.turn(b"found", FUEL).expect("replies").line, b"found");
    assert!(sb.cached(&"0".repeat(64)).is_none());
    assert!(sb.cached("not a digest").is_none());
}

#[test]
fn the_memory_cache_forgets_the_least_recently_used_module() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 2,
        memory_cache_entries: 2,
        ..config()
    })
    .expect("sandbox");
    let [a, b, c] = [1, 2, 3].map(echo_variant);
    let [sha_a, sha_b, sha_c] = [&a, &b, &c].map(|m| sb.inspect(m).expect("valid").sha256);
    sb.load(&a).expect("compiles");
    sb.load(&b).expect("compiles");
    // A is used again, so B is now the least recently used: C pushes it out.
    assert!(sb.cached(&sha_a).is_some());
    sb.load(&c).expect("compiles");
    assert!(sb.cached(&sha_a).is_some(), "used recently, kept");
    assert!(sb.cached(&sha_b).is_none(), "least recently used, forgotten");
    assert!(sb.cached(&sha_c).is_some(), "just loaded, kept");
}

/// A compile reports the CPU time its child used (what counts against the
/// CPU limit, and what a server accounts to the uploader).
#[test]
fn a_compile_reports_its_cpu_time() {
    let sb = Sandbox::new(SandboxConfig {
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    let module = sb
        .load(&wasm(&crate::support::wat_bot(
            "(call $echo) (drop (i32.const 78))",
            "",
        )))
        .expect("loads");
    let compilation = module.compilation().expect("compiled now");
    let cpu = compilation.cpu_seconds.expect("read from /proc");
    assert!(cpu >= 0.0 && cpu <= sb.config().compile_timeout.as_secs_f64(), "{cpu}");
    // Found compiled: no compile, no CPU.
    let again = sb
        .load(&wasm(&crate::support::wat_bot(
            "(call $echo) (drop (i32.const 78))",
            "",
        )))
        .expect("loads");
    assert!(
        again
            .compilation()
            .is_none_or(|c| c.cpu_seconds == compilation.cpu_seconds)
    );
}
