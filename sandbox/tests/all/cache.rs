//! The compiler child process and the compile caches.

use std::time::Duration;

use arbiter_sandbox::{CompilerCommand, ModuleError, Sandbox, SandboxConfig};

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
    let m = first.load(&bytes).expect("compiles");
    let files: Vec<_> = std::fs::read_dir(dir.path()).expect("dir").collect();
    assert_eq!(files.len(), 1);
    // A second sandbox on the same directory needs no compiler.
    let second = Sandbox::new(SandboxConfig {
        compiler: CompilerCommand::new("/nonexistent/arbiter-compile", Vec::<String>::new()),
        ..cfg
    })
    .expect("sandbox");
    let m2 = second.load(&bytes).expect("from the disk cache");
    assert_eq!(m.sha256(), m2.sha256());
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
        "compilation took longer than 1 s; make the module (or its largest functions) smaller"
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
