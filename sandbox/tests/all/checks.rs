//! Modules refused at upload, each with the exact error variant.

use arbiter_sandbox::ModuleError;

use crate::support::{assert_host_fine, sandbox, wasm, wat_bot};

fn refused(wat: &str) -> ModuleError {
    let bytes = wasm(wat);
    let err = sandbox().inspect(&bytes).expect_err("check refuses");
    assert_eq!(sandbox().load(&bytes).expect_err("load refuses"), err);
    assert!(!err.is_host_failure(), "{err}");
    err
}

#[test]
fn forbidden_import_is_named() {
    let err = refused(r#"(module (import "env" "foo" (func)) (memory (export "memory") 1) (func (export "_start")))"#);
    assert_eq!(
        err,
        ModuleError::ForbiddenImport {
            module: "env".into(),
            name: "foo".into()
        }
    );
    assert_eq!(
        err.to_string(),
        "import `env.foo` is not provided: bots may import only wasi_snapshot_preview1 functions"
    );
}

#[test]
fn unknown_wasi_function_and_imported_memory_are_forbidden() {
    let err = refused(
        r#"(module (import "wasi_snapshot_preview1" "thread_spawn" (func (param i32) (result i32)))
           (memory (export "memory") 1) (func (export "_start")))"#,
    );
    assert!(matches!(err, ModuleError::ForbiddenImport { ref name, .. } if name == "thread_spawn"));
    let err =
        refused(r#"(module (import "env" "memory" (memory 1)) (export "memory" (memory 0)) (func (export "_start")))"#);
    assert!(matches!(err, ModuleError::ForbiddenImport { ref name, .. } if name == "memory"));
}

#[test]
fn wrong_wasi_signature() {
    let err = refused(
        r#"(module (import "wasi_snapshot_preview1" "fd_write" (func (param i32) (result i32)))
           (memory (export "memory") 1) (func (export "_start")))"#,
    );
    assert!(
        matches!(err, ModuleError::ImportSignature { ref name, .. } if name == "fd_write"),
        "{err}"
    );
}

#[test]
fn no_start_export() {
    let err = refused(r#"(module (memory (export "memory") 1) (func (export "main")))"#);
    assert_eq!(err, ModuleError::MissingStart);
    let err = refused(r#"(module (memory (export "memory") 1) (func (export "_start") (param i32)))"#);
    assert_eq!(err, ModuleError::StartSignature);
}

#[test]
fn no_memory_export() {
    let err = refused(r#"(module (memory 1) (func (export "_start")))"#);
    assert_eq!(err, ModuleError::MissingMemory);
}

#[test]
fn start_section_that_never_returns_is_refused() {
    let err = refused(
        r#"(module (memory (export "memory") 1) (func $forever (loop $l (br $l)))
           (start $forever) (func (export "_start")))"#,
    );
    assert_eq!(err, ModuleError::StartSection);
    assert_host_fine();
}

#[test]
fn shared_memory_is_refused() {
    let err = refused(r#"(module (memory (export "memory") 1 1 shared) (func (export "_start")))"#);
    assert_eq!(err, ModuleError::SharedMemory);
}

#[test]
fn two_memories_are_refused() {
    let err = refused(r#"(module (memory (export "memory") 1) (memory 1) (func (export "_start")))"#);
    assert_eq!(
        err,
        ModuleError::TooMany {
            what: "memories",
            count: 2
        }
    );
}

#[test]
fn huge_initial_memory_and_table_are_refused() {
    let err = refused(r#"(module (memory (export "memory") 5000) (func (export "_start")))"#);
    assert!(matches!(err, ModuleError::MemoryTooLarge { .. }), "{err}");
    let err = refused(r#"(module (memory (export "memory") 1) (table 200000 funcref) (func (export "_start")))"#);
    assert!(
        matches!(err, ModuleError::TableTooLarge { elements: 200000, .. }),
        "{err}"
    );
}

fn leb(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let b = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(b);
            return;
        }
        out.push(b | 0x80);
    }
}

/// A module with one function, `_start`, of `locals` i32 locals and the
/// given code (without its final `end`), encoded by hand (WAT for a
/// megabyte of code is slow to parse).
fn one_function(locals: usize, code: &[u8]) -> Vec<u8> {
    fn section(id: u8, body: &[u8], out: &mut Vec<u8>) {
        out.push(id);
        leb(body.len(), out);
        out.extend_from_slice(body);
    }
    let mut m = b"\0asm\x01\0\0\0".to_vec();
    section(1, &[1, 0x60, 0, 0], &mut m); // one type: [] -> []
    section(3, &[1, 0], &mut m); // one function of type 0
    section(5, &[1, 0, 1], &mut m); // one memory, min 1
    let mut exports = vec![2];
    exports.extend_from_slice(&[6]);
    exports.extend_from_slice(b"_start");
    exports.extend_from_slice(&[0, 0]);
    exports.extend_from_slice(&[6]);
    exports.extend_from_slice(b"memory");
    exports.extend_from_slice(&[2, 0]);
    section(7, &exports, &mut m);
    let mut body = Vec::new();
    if locals == 0 {
        body.push(0);
    } else {
        body.push(1);
        leb(locals, &mut body);
        body.push(0x7f); // i32
    }
    body.extend_from_slice(code);
    body.push(0x0b);
    let mut section_code = vec![1];
    leb(body.len(), &mut section_code);
    section_code.extend_from_slice(&body);
    section(10, &section_code, &mut m);
    m
}

/// A module with one function whose body is `nops` bytes of `nop`.
fn huge_function(nops: usize) -> Vec<u8> {
    one_function(0, &vec![0x01; nops])
}

/// A compile bomb within every size limit: one function of `bytes` bytes
/// over `locals` locals, a loop that copies locals into each other and
/// branches back to its head every 16 copies, so that every local is live
/// across thousands of edges. 250 kB over 20 000 locals takes about 4 s of
/// compiler CPU, 1 MB about 9 s; 1 MB over 50 000 locals exhausts the
/// compiler's 2 GiB.
fn locals_bomb(bytes: usize, locals: usize) -> Vec<u8> {
    let mut code = vec![0x03, 0x40]; // loop
    let mut i = 0usize;
    while code.len() < bytes {
        code.push(0x20); // local.get
        leb(i % locals, &mut code);
        code.push(0x21); // local.set
        leb((i * 7919 + 1) % locals, &mut code);
        if i.is_multiple_of(16) {
            code.push(0x20);
            leb(i % locals, &mut code);
            code.extend_from_slice(&[0x0d, 0x00]); // br_if 0: the loop's head
        }
        i += 1;
    }
    code.push(0x0b);
    one_function(locals, &code)
}

/// A real compile bomb, not a stand-in: the kernel's CPU limit on the
/// compiler child stops it, and the error says how much CPU it cost. (With
/// the default limit of 12 s of CPU, such a module is refused about 12.5 s
/// after it arrives on an idle machine; the test uses 1 s.)
#[test]
fn compile_bomb_is_stopped_at_the_cpu_limit() {
    use std::time::{Duration, Instant};
    let sb = arbiter_sandbox::Sandbox::new(arbiter_sandbox::SandboxConfig {
        compile_timeout: Duration::from_secs(1),
        instance_slots: 2,
        ..crate::support::config()
    })
    .expect("sandbox");
    let bomb = locals_bomb(250_000, 20_000);
    sb.inspect(&bomb).expect("within every limit the checks know");
    let started = Instant::now();
    let err = sb.load(&bomb).expect_err("too slow to compile");
    eprintln!(
        "a compile bomb under a 1 s CPU limit: {err} after {:.2?}",
        started.elapsed()
    );
    assert_eq!(err, ModuleError::CompileTimeout { secs: 1 });
    assert_eq!(err.compile_cpu_seconds(), Some(1));
}

/// The default CPU limit keeps a compile bomb's verdict within 15 s of
/// real time on an idle machine (the kernel stops a compiler that computes
/// on one core at the limit; process start and reading the module add
/// well under a second), with room for the largest legitimate modules.
#[test]
fn default_compile_limit_answers_within_15_seconds() {
    let c = arbiter_sandbox::SandboxConfig::default();
    assert!(
        c.compile_timeout <= std::time::Duration::from_secs(12),
        "{:?}",
        c.compile_timeout
    );
    assert_eq!(c.component_compile_timeout, std::time::Duration::from_secs(120));
}

#[test]
fn compile_bomb_is_refused_by_size() {
    let small = huge_function(100);
    sandbox().inspect(&small).expect("the hand-made module is valid");
    let bomb = huge_function(1_100_000);
    let started = std::time::Instant::now();
    // Refused by the checks, before any compiling.
    let err = sandbox().load(&bomb).expect_err("refused");
    eprintln!(
        "a function over the size limit: refused after {:.2?}",
        started.elapsed()
    );
    assert_eq!(err.compile_cpu_seconds(), None);
    assert!(
        matches!(
            err,
            ModuleError::FunctionTooLarge {
                index: 0,
                limit: 1_048_576,
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn oversize_module() {
    let mut big = b"\0asm\x01\0\0\0".to_vec();
    big.resize(16 * 1024 * 1024 + 1, 0);
    let err = sandbox().inspect(&big).expect_err("refused");
    assert_eq!(
        err,
        ModuleError::TooLarge {
            size: 16 * 1024 * 1024 + 1,
            limit: 16 * 1024 * 1024
        }
    );
}

#[test]
fn not_wasm_component_and_garbage() {
    assert_eq!(sandbox().inspect(b"#!/bin/sh\necho hi\n"), Err(ModuleError::NotWasm));
    assert_eq!(sandbox().inspect(b""), Err(ModuleError::NotWasm));
    // An empty component: not a command.
    assert_eq!(sandbox().inspect(b"\0asm\x0d\0\x01\0"), Err(ModuleError::MissingRun));
    assert!(matches!(
        sandbox().inspect(b"\0asm\x0d\0\x02\0"),
        Err(ModuleError::ComponentLayer { .. })
    ));
    let err = sandbox().inspect(b"\0asm\x01\0\0\0\x01\xff\xff").expect_err("refused");
    assert!(matches!(err, ModuleError::Invalid(_)), "{err}");
    // Valid structure, invalid code: validation catches it.
    let err =
        refused(r#"(module (memory (export "memory") 1) (func (export "_start") (drop (i32.const 1) (i32.const 2))))"#);
    assert!(matches!(err, ModuleError::Invalid(_)), "{err}");
}

#[test]
fn info_reports_imports_and_sizes() {
    let info = sandbox()
        .inspect(&wasm(&wat_bot("(call $echo)", "")))
        .expect("accepted");
    assert!(info.imports.iter().any(|i| i == "fd_write"));
    assert_eq!(info.memory_min_bytes, 2 * 65536);
    assert!(info.largest_function_body > 0);
    assert_eq!(info.sha256.len(), 64);
}

#[test]
fn every_provided_wasi_function_links() {
    // The module imports every function the host claims to provide, with
    // its WASI signature: check and instantiation agree.
    let sigs: &[(&str, &str, &str)] = &[
        ("args_get", "i32 i32", "i32"),
        ("args_sizes_get", "i32 i32", "i32"),
        ("environ_get", "i32 i32", "i32"),
        ("environ_sizes_get", "i32 i32", "i32"),
        ("clock_res_get", "i32 i32", "i32"),
        ("clock_time_get", "i32 i64 i32", "i32"),
        ("fd_advise", "i32 i64 i64 i32", "i32"),
        ("fd_allocate", "i32 i64 i64", "i32"),
        ("fd_close", "i32", "i32"),
        ("fd_datasync", "i32", "i32"),
        ("fd_fdstat_get", "i32 i32", "i32"),
        ("fd_fdstat_set_flags", "i32 i32", "i32"),
        ("fd_fdstat_set_rights", "i32 i64 i64", "i32"),
        ("fd_filestat_get", "i32 i32", "i32"),
        ("fd_filestat_set_size", "i32 i64", "i32"),
        ("fd_filestat_set_times", "i32 i64 i64 i32", "i32"),
        ("fd_pread", "i32 i32 i32 i64 i32", "i32"),
        ("fd_prestat_get", "i32 i32", "i32"),
        ("fd_prestat_dir_name", "i32 i32 i32", "i32"),
        ("fd_pwrite", "i32 i32 i32 i64 i32", "i32"),
        ("fd_read", "i32 i32 i32 i32", "i32"),
        ("fd_readdir", "i32 i32 i32 i64 i32", "i32"),
        ("fd_renumber", "i32 i32", "i32"),
        ("fd_seek", "i32 i64 i32 i32", "i32"),
        ("fd_sync", "i32", "i32"),
        ("fd_tell", "i32 i32", "i32"),
        ("fd_write", "i32 i32 i32 i32", "i32"),
        ("path_create_directory", "i32 i32 i32", "i32"),
        ("path_filestat_get", "i32 i32 i32 i32 i32", "i32"),
        ("path_filestat_set_times", "i32 i32 i32 i32 i64 i64 i32", "i32"),
        ("path_link", "i32 i32 i32 i32 i32 i32 i32", "i32"),
        ("path_open", "i32 i32 i32 i32 i32 i64 i64 i32 i32", "i32"),
        ("path_readlink", "i32 i32 i32 i32 i32 i32", "i32"),
        ("path_remove_directory", "i32 i32 i32", "i32"),
        ("path_rename", "i32 i32 i32 i32 i32 i32", "i32"),
        ("path_symlink", "i32 i32 i32 i32 i32", "i32"),
        ("path_unlink_file", "i32 i32 i32", "i32"),
        ("poll_oneoff", "i32 i32 i32 i32", "i32"),
        ("proc_exit", "i32", ""),
        ("proc_raise", "i32", "i32"),
        ("random_get", "i32 i32", "i32"),
        ("sched_yield", "", "i32"),
        ("sock_accept", "i32 i32 i32", "i32"),
        ("sock_recv", "i32 i32 i32 i32 i32 i32", "i32"),
        ("sock_send", "i32 i32 i32 i32 i32", "i32"),
        ("sock_shutdown", "i32 i32", "i32"),
    ];
    let imports: String = sigs
        .iter()
        .map(|(n, p, r)| {
            let r = if r.is_empty() {
                String::new()
            } else {
                format!("(result {r})")
            };
            format!("(import \"wasi_snapshot_preview1\" \"{n}\" (func (param {p}) {r}))\n")
        })
        .collect();
    let wat = format!(r#"(module {imports} (memory (export "memory") 1) (func (export "_start")))"#);
    let info = sandbox().inspect(&wasm(&wat)).expect("accepted");
    assert_eq!(info.imports.len(), 46);
    crate::support::bot(&wat);
}
