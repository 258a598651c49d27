//! `arbiter check FILE.wasm`: what a bot author is told about a module.
//!
//! Every test writes a module to a temporary folder, runs the real binary on
//! it and reads what it prints: rejections explain themselves in words and
//! exit with 1; the house bots are accepted and exit with 0.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Instant;

#[path = "common/hostile_loops.rs"]
mod hostile_loops;
#[path = "common/skirmish_bots.rs"]
mod skirmish_bots;
mod support;

/// What `arbiter check` said.
struct Checked {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Checked {
    fn show(&self) -> String {
        format!(
            "exit code {:?}\n--- stdout\n{}--- stderr\n{}",
            self.code, self.stdout, self.stderr
        )
    }

    /// Asserts a rejection (exit code 1, `rejected: ...` on stdout) and
    /// returns its report.
    fn rejected(&self) -> &str {
        assert_eq!(self.code, Some(1), "a rejection exits with 1\n{}", self.show());
        assert!(
            self.stdout.starts_with("rejected: "),
            "a rejection starts with `rejected: `\n{}",
            self.show()
        );
        &self.stdout
    }
}

fn checked(output: Output) -> Checked {
    Checked {
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn command(dir: &Path, name: &str, wasm: &[u8], game: Option<&str>) -> Command {
    let file = dir.join(format!("{name}.wasm"));
    std::fs::write(&file, wasm).expect("the temporary folder is writable");
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command.arg("check").arg(&file);
    // The verdict must not depend on how the caller debugs Rust programs.
    command.env_remove("RUST_BACKTRACE").env_remove("RUST_LIB_BACKTRACE");
    if let Some(game) = game {
        command.args(["--game", game]);
    }
    command
}

/// Runs `arbiter check NAME.wasm [--game GAME]`.
fn check(name: &str, wasm: &[u8], game: Option<&str>) -> Checked {
    check_with_env(name, wasm, game, &[])
}

/// Runs `arbiter check NAME.wasm [--game GAME]` with extra environment
/// variables, and asserts that it leaves nothing in its temporary folder.
fn check_with_env(name: &str, wasm: &[u8], game: Option<&str>, vars: &[(&str, &str)]) -> Checked {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("the temporary folder is writable");
    let output = command(dir.path(), name, wasm, game)
        .envs(vars.iter().copied())
        .env("TMPDIR", &tmp)
        .output()
        .expect("arbiter runs");
    let checked = checked(output);
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .expect("the temporary folder is readable")
        .map(|entry| entry.map(|e| e.file_name()))
        .collect();
    assert!(
        left.is_empty(),
        "arbiter check leaves its temporary files behind: {left:?}\n{}",
        checked.show()
    );
    checked
}

fn wasm(wat: &str) -> Vec<u8> {
    wat::parse_str(wat).expect("test WAT parses")
}

/// A WASI bot with the given `_start` body (plus extra items such as data
/// segments).
///
/// Memory: the input iovec at 0 (buffer 1024.., 60 000 bytes), nread at 16,
/// the output iovec at 32, nwritten at 48; data goes from 512.
fn wat_bot(start: &str, extra: &str) -> Vec<u8> {
    wasm(&format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
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
  {extra}
  (func (export "_start") {start}))"#
    ))
}

/// A bot that answers every request with `line` (a newline is added).
fn fixed_reply_bot(line: &str) -> Vec<u8> {
    let data = format!("{line}\n");
    let escaped: String = data.bytes().map(|b| format!("\\{b:02x}")).collect();
    wat_bot(
        &format!(
            "(loop $l (drop (call $read)) (call $write (i32.const 1) (i32.const 512) (i32.const {})) (br $l))",
            data.len()
        ),
        &format!(r#"(data (i32.const 512) "{escaped}")"#),
    )
}

#[test]
fn a_forbidden_import_is_named() {
    let module = wasm(
        r#"(module
  (import "env" "foo" (func (param i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")))"#,
    );
    let out = check("imports_env", &module, None);
    let report = out.rejected();
    assert!(report.contains("env.foo"), "the import is named\n{}", out.show());
    assert!(
        report.contains("wasi_snapshot_preview1"),
        "says what may be imported\n{}",
        out.show()
    );
}

#[test]
fn a_module_without_start_is_rejected() {
    let module = wasm(r#"(module (memory (export "memory") 1) (func (export "main")))"#);
    let out = check("no_start", &module, None);
    let report = out.rejected();
    assert!(report.contains("_start"), "names the missing export\n{}", out.show());
}

#[test]
fn random_bytes_are_not_a_module() {
    // xorshift bytes: deterministic, and no `\0asm` header.
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect();
    assert!(!bytes.starts_with(b"\0asm"));
    let out = check("noise", &bytes, None);
    let report = out.rejected();
    assert!(
        report.contains("not a WebAssembly module"),
        "says it is not wasm\n{}",
        out.show()
    );
}

/// Asserts a rejection for running out of time on the bot's first turn.
fn assert_ran_out_of_time(out: &Checked) {
    let report = out.rejected();
    assert!(
        report.contains("timeout") && report.contains("ran out of time"),
        "says it ran out of time\n{}",
        out.show()
    );
    assert!(
        !report.contains("backstop"),
        "a fuel timeout, not the backstop\n{}",
        out.show()
    );
    assert!(report.contains("its turn 1"), "names the turn\n{}", out.show());
}

#[test]
fn an_infinite_loop_on_the_first_turn_runs_out_of_time() {
    // Each pass of the loop burns 200 fuel in a few machine instructions, so
    // the fuel runs out long before the wall-clock backstop could fire.
    let body = "(drop (i32.const 0)) ".repeat(200);
    let module = wat_bot(&format!("(drop (call $read)) (loop $l {body} (br $l))"), "");
    assert_ran_out_of_time(&check("spinner", &module, None));
}

/// Regression: the plainest infinite loop burns fuel far slower than
/// `FUEL_PER_MS` per real millisecond (about 0.5 M fuel/ms measured here,
/// against 10 M), so with the backstop at 5 × the budget + 1 s it fired
/// first and the bot was told it crashed instead of running out of time.
#[test]
fn a_tight_infinite_loop_runs_out_of_time() {
    let module = wat_bot("(drop (call $read)) (loop $l (br $l))", "");
    assert_ran_out_of_time(&check("tight_spinner", &module, Some("tictactoe")));
}

/// Regression: a bot that loops on `memory.grow` at the memory limit
/// (each grow a call into the host that fails) was charged one instruction
/// per grow, burned 0.04 fuel per nanosecond and reached the wall-clock
/// backstop on its first move (Othello's 1 s: after 51 s, a crash) instead
/// of running out of time. Grows are charged for the host's work now, and
/// so are WASI calls (a tight `fd_write` of nothing, here); each check's
/// real time is printed (`--nocapture`), measured, not asserted.
#[test]
fn host_work_loops_on_the_first_turn_run_out_of_time() {
    let grow_to_limit = "(loop $g (br_if $g (i32.ne (memory.grow (i32.const 16)) (i32.const -1))))";
    for (name, start) in [
        (
            "failing_grow_loop",
            format!("(drop (call $read)) {grow_to_limit} (loop $l (drop (memory.grow (i32.const 16))) (br $l))"),
        ),
        (
            "empty_write_loop",
            "(drop (call $read)) (loop $l (call $write (i32.const 2) (i32.const 512) (i32.const 0)) (br $l))".into(),
        ),
    ] {
        let started = Instant::now();
        let out = check(name, &wat_bot(&start, ""), None);
        println!("arbiter check {name}.wasm: {:.2} s", started.elapsed().as_secs_f64());
        assert_ran_out_of_time(&out);
    }
}

#[test]
fn unreachable_on_the_first_turn_is_a_crash() {
    let module = wat_bot("(drop (call $read)) unreachable", "");
    let out = check("trapper", &module, None);
    let report = out.rejected();
    assert!(
        report.contains("crash") && report.contains("trap") && report.contains("unreachable"),
        "says it crashed on a trap\n{}",
        out.show()
    );
    assert!(report.contains("its turn 1"), "names the turn\n{}", out.show());
}

#[test]
fn a_reply_that_is_not_json_is_quoted() {
    let out = check("chatty", &fixed_reply_bot("hello, referee"), None);
    let report = out.rejected();
    assert!(report.contains("bad_reply"), "says the reply is bad\n{}", out.show());
    assert!(
        report.contains("\"hello, referee\""),
        "quotes the reply\n{}",
        out.show()
    );
    assert!(
        report.contains("not JSON"),
        "says what is wrong with it\n{}",
        out.show()
    );
}

#[test]
fn exiting_before_replying_is_a_crash() {
    let module = wat_bot("(drop (call $read)) (call $proc_exit (i32.const 3))", "");
    let out = check("quitter", &module, None);
    let report = out.rejected();
    assert!(
        report.contains("crash") && report.contains("exited with code 3 before replying"),
        "says it exited before replying\n{}",
        out.show()
    );

    // Returning from `_start` without a word is exiting too.
    let out = check("mute", &wat_bot("(drop (call $read))", ""), None);
    let report = out.rejected();
    assert!(
        report.contains("crash") && report.contains("before replying"),
        "says it exited before replying\n{}",
        out.show()
    );
}

#[test]
fn a_crash_shows_the_last_lines_of_stderr() {
    let log: String = (1..=15).map(|i| format!("log line {i:02}\n")).collect();
    let start = format!(
        "(drop (call $read)) (call $write (i32.const 2) (i32.const 512) (i32.const {})) unreachable",
        log.len()
    );
    let module = wat_bot(
        &start,
        &format!(r#"(data (i32.const 512) "{}")"#, log.replace('\n', "\\n")),
    );
    let out = check("logger", &module, None);
    let report = out.rejected();
    assert!(report.contains("crash"), "says it crashed\n{}", out.show());
    assert!(
        report.contains("last lines of the bot's stderr"),
        "shows stderr\n{}",
        out.show()
    );
    assert!(
        report.contains("log line 15"),
        "shows the last line it wrote\n{}",
        out.show()
    );
    assert!(
        !report.contains("log line 01"),
        "shows the last lines only\n{}",
        out.show()
    );
    let shown = report.lines().filter(|l| l.starts_with("  | ")).count();
    assert!(
        (1..=arbiter_ladder::check::STDERR_LINES).contains(&shown),
        "{shown} lines\n{}",
        out.show()
    );
}

/// With `RUST_BACKTRACE=1` in the server's environment, the crash note the
/// sandbox appends to the bot's stderr (`{e:?}` of the wasmtime error) carries
/// the host's own Rust backtrace: host source paths and wasmtime internals go
/// to the bot author, and they push the bot's own last lines out of the
/// report.
#[test]
fn a_crash_report_never_shows_host_internals() {
    let log = "about to crash\n";
    let start = format!(
        "(drop (call $read)) (call $write (i32.const 2) (i32.const 512) (i32.const {})) unreachable",
        log.len()
    );
    let module = wat_bot(
        &start,
        &format!(r#"(data (i32.const 512) "{}")"#, log.replace('\n', "\\n")),
    );
    let out = check_with_env("logger", &module, None, &[("RUST_BACKTRACE", "1")]);
    let report = out.rejected();
    assert!(
        report.contains("about to crash"),
        "shows the bot's line\n{}",
        out.show()
    );
    for host in ["wasmtime_internal", "/rustc/", ".cargo/registry", "std::panicking"] {
        assert!(!report.contains(host), "shows host internals ({host})\n{}", out.show());
    }
}

#[test]
fn every_house_bot_is_accepted_on_its_ladder() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    assert_eq!(arbiter_house::ALL.len(), 10);
    // Two at a time: most of the time is spent compiling and in smoke
    // matches, and more checks at once on two cores would starve the
    // timing-sensitive tests running beside this one.
    for pair in arbiter_house::ALL.chunks(2) {
        let children: Vec<_> = pair
            .iter()
            .map(|bot| {
                let game = match bot.game() {
                    "othello" => "othello:std",
                    other => other,
                };
                let child = command(dir.path(), bot.name, bot.wasm(), Some(game))
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .expect("arbiter runs");
                (bot.name, child)
            })
            .collect();
        for (name, child) in children {
            let out = checked(child.wait_with_output().expect("arbiter finishes"));
            assert_eq!(out.code, Some(0), "{name} is accepted\n{}", out.show());
            assert!(out.stdout.starts_with("accepted"), "{name}\n{}", out.show());
            let sha = sha256_hex(arbiter_house::find(name).expect("house bot").wasm());
            assert!(out.stdout.contains(&sha), "{name}: reports its sha256\n{}", out.show());
            assert!(out.stdout.contains("smoke match against"), "{name}\n{}", out.show());
            assert!(
                out.stdout.contains("smoke match: "),
                "{name}: says how long it took\n{}",
                out.show()
            );
        }
    }
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// `arbiter check` of every hostile loop is refused as a timeout on its
/// first move, at the ladder's own per-move cap (Othello's 1 s), with the
/// smoke match's time control and the times it took in its report. The real time of each check is printed (run with
/// `--nocapture` to see it; it is measured, not asserted): with Othello's
/// 10 s per move a plain loop took about two minutes, and a fill loop ran for
/// more than fifteen.
#[test]
fn hostile_loops_are_refused_as_timeouts_within_seconds() {
    for (name, wat) in hostile_loops::corpus() {
        let started = Instant::now();
        let out = check(name, &wasm(&wat), None);
        println!("arbiter check {name}.wasm: {:.2} s", started.elapsed().as_secs_f64());
        assert_ran_out_of_time(&out);
        assert!(
            out.stdout
                .contains("a game's first move may take 1000 ms of virtual time, the ladder's own cap"),
            "states the first move's cap\n{}",
            out.show()
        );
        assert!(
            out.stdout.contains(
                "its time control: 1000 ms for each game's first move (the ladder's own cap), then 100 ms per move \
                 and 400 ms per game"
            ),
            "states the smoke match's time control\n{}",
            out.show()
        );
        assert!(
            out.stdout.contains("module checks and compilation: ") && out.stdout.contains("smoke match: "),
            "says how long it took\n{}",
            out.show()
        );
    }
}

/// A bot that builds its tables on its first move (600 virtual ms, over the
/// check's short control, within Othello's 1 s per move) and then answers
/// at once plays within the ladder's control: `arbiter check` accepts it,
/// and says that the smoke match's result does not matter.
#[test]
fn a_long_first_move_within_the_ladders_cap_is_accepted() {
    let started = Instant::now();
    let out = check(
        "othello_setup",
        &skirmish_bots::wasm("othello_setup"),
        Some("othello:std"),
    );
    println!(
        "arbiter check othello_setup.wasm: {:.2} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(out.code, Some(0), "accepted\n{}", out.show());
    assert!(out.stdout.starts_with("accepted"), "{}", out.show());
    assert!(!out.stdout.contains("warning"), "no warning: {}", out.show());
    assert!(
        out.stdout.contains("the smoke match's result does not matter"),
        "says a loss is fine\n{}",
        out.show()
    );
}

/// A move after the first that outruns only the check's short control (300
/// virtual ms on the third move, within Othello's 1 s) is accepted with a
/// warning naming the move and its time.
#[test]
fn a_later_move_over_the_short_control_is_accepted_with_a_warning() {
    let out = check(
        "othello_slow_third",
        &skirmish_bots::wasm("othello_slow_third"),
        Some("othello:std"),
    );
    assert_eq!(out.code, Some(0), "accepted\n{}", out.show());
    assert!(out.stdout.starts_with("accepted"), "{}", out.show());
    let warning = out
        .stdout
        .lines()
        .find(|line| line.starts_with("warning: in the smoke match"))
        .unwrap_or_else(|| panic!("a warning about the slow move\n{}", out.show()));
    assert!(
        warning.contains("(game 1 as black, its turn 3)")
            && warning.contains("after 100 ms of virtual time")
            && warning.contains("the ladder allows 1000 ms per move and 10000 ms per game"),
        "names the move, its time and the ladder's control: {warning}"
    );
}

/// The server's upload check accepts the bot with a long first move too,
/// and still refuses a loop on the first move, as a timeout.
#[tokio::test(flavor = "multi_thread")]
async fn the_server_accepts_a_long_first_move_and_refuses_a_loop() {
    let server = support::TestServer::start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    let slow = skirmish_bots::wasm("othello_setup");
    let version = support::upload_and_check(&api, "ann-tables", "othello:std,othello:anti", &slow).await;
    assert_eq!(version["version"]["status"], "active", "{version}");
    let (name, wat) = hostile_loops::corpus().swap_remove(0);
    let version = support::upload_and_check(&api, "ann-loop", "othello:std", &wasm(&wat)).await;
    assert_eq!(version["version"]["status"], "rejected", "{name}: {version}");
    let reason = version["version"]["reason"].as_str().unwrap_or("");
    assert!(
        reason.contains("timeout") && reason.contains("its turn 1") && reason.contains("1000 ms"),
        "{name}: {reason}"
    );
}
