//! A panic's backtrace names file and line: the test program re-runs itself
//! with `RUST_BACKTRACE=1` and a panic, built as the executable is (the same
//! profile's line tables, the same link arguments from `build.rs`:
//! compressed debug sections).

use std::process::Command;

/// Set in the child run: panic instead of checking.
const PANIC_NOW: &str = "ARBITER_TEST_PANIC_NOW";

/// Panics; never inlined, so it is a frame of its own.
#[inline(never)]
fn panic_here() {
    panic!("a panic on purpose, to read its backtrace");
}

#[test]
fn a_panic_backtrace_names_file_and_line() {
    if std::env::var_os(PANIC_NOW).is_some() {
        panic_here();
        return;
    }
    let exe = std::env::current_exe().expect("the test program's path");
    let output = Command::new(exe)
        .args([
            "--exact",
            "backtraces::a_panic_backtrace_names_file_and_line",
            "--nocapture",
        ])
        .env(PANIC_NOW, "1")
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("the test program runs again");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "the child should have panicked: {stderr}");
    // "panicked at cli/src/backtraces.rs:LINE:COL:" comes from the panic's
    // location, compiled in, not from debug info: it gives the line to find.
    let file = file!();
    let line = stderr
        .split(&format!("panicked at {file}:"))
        .nth(1)
        .and_then(|rest| rest.split(':').next())
        .unwrap_or_else(|| panic!("no panic message naming {file}: {stderr}"));
    // The backtrace's frame of `panic_here`, then "at ./src/backtraces.rs:LINE:COL":
    // that second line exists only when the line tables are there and readable.
    let mut lines = stderr.lines();
    assert!(
        lines.by_ref().any(|l| l.contains("backtraces::panic_here")),
        "no backtrace frame names panic_here: {stderr}"
    );
    // The path is shown relative to the working directory when it is under it.
    let name = file.rsplit('/').next().unwrap_or(file);
    let at = lines.next().unwrap_or_default().trim_start();
    assert!(
        at.starts_with("at ") && at.contains(&format!("/{name}:{line}:")),
        "the frame of panic_here gives no file:line ({file}:{line}) but {at:?}: {stderr}"
    );
}
