//! Native players against small Python bots in `tests/bots/`: replies,
//! one-shot restarts, every transport fault, stderr capping, and no process
//! left behind.

use std::path::Path;
use std::time::{Duration, Instant};

use arbiter_referee::native::{AfterTimeout, MAX_STDERR, NativeCommand, NativeError, NativeProcess, STDERR_TRUNCATED};
use arbiter_referee::player::{Entrant, Fault, GameSetup, Player, SpawnError};
use nix::errno::Errno;
use nix::sys::signal::kill;
use nix::unistd::Pid;

/// A generous budget for turns that must succeed (Python starts in ~30 ms,
/// slower when the tests run in parallel).
const SLOW_OK_US: u64 = 10_000_000;

fn setup() -> GameSetup {
    GameSetup {
        game: "tictactoe".to_owned(),
        mode: "std".to_owned(),
        seed: 7,
        match_id: 1,
        game_index: 0,
        side: 0,
        fuel_per_ms: None,
        tick_based: false,
    }
}

fn command(bot: &str) -> NativeCommand {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/bots").join(bot);
    let path = path.to_str().expect("test paths are UTF-8");
    NativeCommand::parse(&format!("python3 {}", shell_words::quote(path))).expect("a valid command")
}

fn start(bot: &str) -> NativeProcess {
    command(bot).start(&setup()).expect("the bot starts")
}

fn fault(player: &mut impl Player, request: &str, budget_us: u64) -> Fault {
    match player.turn(request, budget_us) {
        Ok(answer) => panic!("expected a fault, got reply {:?}", answer.line),
        Err(err) => err.fault,
    }
}

/// Whether no process `pid` exists any more (ESRCH).
fn gone(pid: u32) -> bool {
    let pid = Pid::from_raw(i32::try_from(pid).expect("pid fits"));
    kill(pid, None) == Err(Errno::ESRCH)
}

/// Whether `pid` (not our child) is dead: gone, or a zombie for its new parent.
fn dead(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(") ")
            .is_some_and(|(_, rest)| rest.starts_with('Z') || rest.starts_with('X')),
    }
}

fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(3);
    while !check() {
        assert!(Instant::now() < until, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn parse_splits_words_and_rejects_empty_or_unbalanced() {
    let cmd = NativeCommand::parse("python3 'my bot.py' --fast").expect("valid");
    assert_eq!(cmd.argv(), ["python3", "my bot.py", "--fast"]);
    assert_eq!(cmd.name(), "python3 'my bot.py' --fast");
    assert_eq!(NativeCommand::parse(""), Err(NativeError::Empty));
    assert_eq!(NativeCommand::parse("   "), Err(NativeError::Empty));
    assert!(matches!(
        NativeCommand::parse("python3 'bot.py"),
        Err(NativeError::Parse { .. })
    ));
}

#[test]
fn info_is_native_and_not_reproducible() {
    let info = command("echo.py").info();
    assert_eq!(info.kind, "native");
    assert!(!info.reproducible);
    assert_eq!(info.sha256, None);
    assert!(info.name.starts_with("python3 "));
}

#[test]
fn looping_bot_answers_each_turn_in_order_with_its_environment() {
    let mut player = command("echo.py").spawn(&setup()).expect("starts");
    for turn in 1..=5 {
        let answer = player.turn("{\"t\":\"go\"}", SLOW_OK_US).expect("a reply");
        let reply: serde_json::Value = serde_json::from_str(&answer.line).expect("json");
        assert_eq!(reply["turn"], turn);
        assert_eq!(reply["req"], "{\"t\":\"go\"}");
        assert_eq!(reply["game"], "tictactoe");
        assert_eq!(reply["mode"], "std");
        assert!(answer.spent.us > 0);
        assert!(answer.spent.us <= SLOW_OK_US);
        assert_eq!(answer.spent.fuel, None);
    }
    let answer = player.turn("crlf", SLOW_OK_US).expect("a reply");
    assert!(answer.line.ends_with('}'), "\\r stripped: {:?}", answer.line);
}

#[test]
fn one_shot_bot_is_started_afresh_every_turn() {
    let mut player = start("oneshot.py");
    let mut pids = Vec::new();
    for turn in 0..6 {
        let request = format!("req {turn}");
        let answer = player.turn(&request, SLOW_OK_US).expect("a reply");
        let reply: serde_json::Value = serde_json::from_str(&answer.line).expect("json");
        assert_eq!(reply["req"], request.as_str());
        pids.push(reply["pid"].as_u64().expect("pid"));
    }
    pids.dedup();
    assert_eq!(pids.len(), 6, "one process per turn: {pids:?}");
    let last = player.pid().expect("running");
    drop(player);
    assert!(gone(last));
}

#[test]
fn bot_that_fails_after_replying_crashes_at_its_next_turn() {
    let mut player = start("reply_then_fail.py");
    player.turn("a", SLOW_OK_US).expect("first reply");
    match fault(&mut player, "b", SLOW_OK_US) {
        Fault::Crash(why) => assert!(why.contains("exit status 3"), "{why}"),
        other => panic!("expected a crash, got {other:?}"),
    }
}

#[test]
fn bot_that_raises_crashes_and_keeps_its_traceback() {
    let mut player = start("crash.py");
    match fault(&mut player, "go", SLOW_OK_US) {
        Fault::Crash(why) => assert!(why.contains("exited before replying"), "{why}"),
        other => panic!("expected a crash, got {other:?}"),
    }
    let stderr = String::from_utf8_lossy(&player.stderr()).into_owned();
    assert!(stderr.contains("RuntimeError: boom"), "{stderr}");
    // Stopped for good.
    assert!(matches!(fault(&mut player, "go", SLOW_OK_US), Fault::Crash(_)));
    assert_eq!(player.pid(), None);
}

#[test]
fn bot_that_exits_at_once_crashes() {
    let mut player = start("exit_now.py");
    assert!(matches!(fault(&mut player, "go", SLOW_OK_US), Fault::Crash(_)));
}

#[test]
fn hanging_bot_times_out_and_its_process_group_is_killed() {
    let mut player = start("hang.py");
    let pid = player.pid().expect("running");
    // The bot's grandchild, from its stderr.
    let mut grandchild = None;
    eventually("the bot names its child", || {
        let stderr = String::from_utf8_lossy(&player.stderr()).into_owned();
        grandchild = stderr
            .strip_prefix("child ")
            .and_then(|rest| rest.trim().parse::<u32>().ok());
        grandchild.is_some()
    });
    let started = Instant::now();
    let err = player.turn("go", 200_000).expect_err("no reply");
    let took = started.elapsed();
    assert_eq!(err.fault, Fault::Timeout);
    assert!(err.spent.us >= 200_000, "{:?}", err.spent);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    assert!(gone(pid), "the bot is killed and reaped at the timeout");
    let grandchild = grandchild.expect("found above");
    eventually("the grandchild is dead", || dead(grandchild));
    assert!(matches!(fault(&mut player, "go", SLOW_OK_US), Fault::Crash(_)));
}

#[test]
fn with_continue_a_late_reply_comes_first_and_resume_reads_the_next() {
    let mut player = command("echo.py")
        .after_timeout(AfterTimeout::Continue)
        .start(&setup())
        .expect("starts");
    player.turn("warm-up", SLOW_OK_US).expect("a reply");
    assert_eq!(fault(&mut player, "sleep:0.3", 50_000), Fault::Timeout);
    let pid = player.pid().expect("still running");
    let late = player.turn("next", SLOW_OK_US).expect("the late reply");
    let reply: serde_json::Value = serde_json::from_str(&late.line).expect("json");
    assert_eq!(
        reply["req"], "sleep:0.3",
        "every line is handed over, the late one first"
    );
    let answer = player.resume(SLOW_OK_US).expect("the next reply");
    let reply: serde_json::Value = serde_json::from_str(&answer.line).expect("json");
    assert_eq!(reply["req"], "next");
    let err = player.resume(50_000).expect_err("nothing more to read");
    assert_eq!(err.fault, Fault::Timeout);
    assert_eq!(player.pid(), Some(pid));
    drop(player);
    assert!(gone(pid));
}

#[test]
fn line_longer_than_64_kib_is_a_bad_reply() {
    let mut player = start("long_line.py");
    let pid = player.pid().expect("running");
    match fault(&mut player, "go", SLOW_OK_US) {
        Fault::BadReply(why) => assert!(why.contains("65536"), "{why}"),
        other => panic!("expected a bad reply, got {other:?}"),
    }
    assert!(gone(pid));
}

#[test]
fn non_utf8_line_is_a_bad_reply() {
    let mut player = start("bad_utf8.py");
    assert!(matches!(fault(&mut player, "go", SLOW_OK_US), Fault::BadReply(_)));
}

#[test]
fn stderr_is_capped_with_a_marker_and_the_bot_is_not_blocked() {
    let mut player = start("stderr_flood.py");
    player.turn("go", SLOW_OK_US).expect("a reply despite the flood");
    let marker = format!("\n{STDERR_TRUNCATED}\n");
    eventually("stderr is truncated", || player.stderr().ends_with(marker.as_bytes()));
    let stderr = player.stderr();
    assert!(stderr.len() <= MAX_STDERR + marker.len(), "{}", stderr.len());
    assert!(stderr.starts_with(b"log line"));
    player.turn("again", SLOW_OK_US).expect("still replying");
}

#[test]
fn missing_program_is_the_bots_crash() {
    let cmd = NativeCommand::parse("/nonexistent/arbiter-bot --fast").expect("valid");
    match cmd.spawn(&setup()) {
        Err(SpawnError::Bot(Fault::Crash(why))) => {
            assert!(why.contains("/nonexistent/arbiter-bot"), "{why}");
            assert!(why.contains("No such file or directory"), "{why}");
        }
        Err(other) => panic!("expected the bot's crash, got {other:?}"),
        Ok(_) => panic!("a missing program started"),
    }
}

#[test]
fn dropping_a_running_bot_kills_and_reaps_it() {
    let player = start("echo.py");
    let pid = player.pid().expect("running");
    assert!(!gone(pid));
    drop(player);
    assert!(gone(pid), "no zombie left");
}
