//! The `arbiter` command line, run as a user would.

use std::path::Path;
use std::process::{Command, Output};

fn arbiter(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .output()
        .expect("arbiter runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn every_subcommand_has_help_with_examples() {
    for sub in [
        &["play"][..],
        &["position"],
        &["perft"],
        &["replay", "show"],
        &["replay", "export"],
        &["ladders", "time"],
        &["simulate"],
        &["serve"],
        &["worker"],
        &["new"],
    ] {
        let mut args = sub.to_vec();
        args.push("--help");
        let output = arbiter(&args);
        assert!(output.status.success(), "{sub:?}");
        assert!(stdout(&output).contains("Example"), "{sub:?}: {}", stdout(&output));
    }
}

#[test]
fn perft_prints_the_leaf_count() {
    let output = arbiter(&["perft", "othello", "6"]);
    assert_eq!(stdout(&output).trim(), "8200");
    let output = arbiter(&["perft", "tictactoe", "9"]);
    assert_eq!(stdout(&output).trim(), "255168");
}

#[test]
fn position_prints_the_request_after_moves() {
    let output = arbiter(&["position", "othello", "--moves", "f5 d6"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let request: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(request["color"], 1);
    assert_eq!(request["revision"], 2);
    assert_eq!(request["history"][1]["move"], 43);
    let same = arbiter(&["position", "othello", "--moves", "37,43"]);
    assert_eq!(stdout(&same), stdout(&output), "numbers and names agree");
}

#[test]
fn position_refuses_an_illegal_sequence_naming_the_move() {
    let output = arbiter(&["position", "othello", "--moves", "f5 d6 a1"]);
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("move 3 (a1) is illegal: a1 flips nothing"),
        "{}",
        stderr(&output)
    );
    let output = arbiter(&["position", "tictactoe", "--moves", "1-1 1-1"]);
    assert!(
        stderr(&output).contains("move 2 (1-1) is illegal"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn position_reads_a_board() {
    let mut board = vec![0; 64];
    board[27] = 2;
    board[28] = 1;
    board[35] = 1;
    board[36] = 2;
    let board = serde_json::to_string(&board).expect("json");
    let output = arbiter(&["position", "othello", "--board", &board, "--color", "1"]);
    let request: serde_json::Value = serde_json::from_str(&stdout(&output)).expect("JSON");
    assert_eq!(request["legal_moves"], serde_json::json!([19, 26, 37, 44]));
}

#[test]
fn play_writes_replays_and_a_table_and_replay_show_reads_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replays");
    let output = arbiter(&[
        "play",
        "othello:grand",
        "builtin:othello-greedy",
        "builtin:othello-random",
        "--matches",
        "4",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    assert!(
        table.contains("builtin:othello-greedy") && table.contains("Elo difference"),
        "{table}"
    );
    assert_eq!(std::fs::read_dir(&out).expect("replays written").count(), 4);
    let shown = arbiter(&["replay", "show", out.join("match-0001.json").to_str().expect("utf-8")]);
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert!(stdout(&shown).contains("othello:grand"), "{}", stdout(&shown));
}

/// Runs `arbiter ARGS` with `tmp` as its temporary folder.
fn arbiter_in(tmp: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .args(args)
        .env("TMPDIR", tmp)
        .output()
        .expect("arbiter runs")
}

#[test]
fn sandboxed_play_then_verify_and_nothing_left_in_tmp() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tempdir is writable");
    let out = dir.path().join("replays");
    let out = out.to_str().expect("utf-8 path");
    let (perfect, random) = ("house:tictactoe-perfect", "house:tictactoe-random");
    let played = arbiter_in(
        &tmp,
        &["play", "tictactoe", perfect, random, "--matches", "1", "--out", out],
    );
    assert!(played.status.success(), "{}", stderr(&played));
    assert!(stdout(&played).contains(perfect), "{}", stdout(&played));
    let replay = Path::new(out).join("match-0001.json");
    let replay_arg = replay.to_str().expect("utf-8 path");

    let verified = arbiter_in(&tmp, &["verify", replay_arg, perfect, random]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    assert!(stdout(&verified).starts_with("verified: "), "{}", stdout(&verified));

    // The wrong bots, and a replay whose first fuel count was changed: a
    // verdict (exit code 1) that says why, not an error (2).
    let swapped = arbiter_in(&tmp, &["verify", replay_arg, random, perfect]);
    assert_eq!(swapped.status.code(), Some(1), "{}", stderr(&swapped));
    assert!(
        stdout(&swapped).starts_with(&format!("not verified: participant 0 is {random} (module "))
            && stdout(&swapped).contains(&format!("but the replay was played by {perfect} (module ")),
        "{}",
        stdout(&swapped)
    );
    let json = std::fs::read_to_string(&replay).expect("replay written");
    let at = json.find("\"fuel\": ").expect("a fuel count") + "\"fuel\": ".len();
    let digits = json[at..].find(|c: char| !c.is_ascii_digit()).expect("a number");
    let fuel: u64 = json[at..at + digits].parse().expect("a number");
    let tampered = format!("{}{}{}", &json[..at], fuel + 1, &json[at + digits..]);
    let tampered_path = dir.path().join("tampered.json");
    std::fs::write(&tampered_path, tampered).expect("written");
    let tampered = arbiter_in(
        &tmp,
        &["verify", tampered_path.to_str().expect("utf-8 path"), perfect, random],
    );
    assert_eq!(tampered.status.code(), Some(1), "{}", stderr(&tampered));
    assert!(stdout(&tampered).starts_with("not verified: "), "{}", stdout(&tampered));

    let left: Vec<_> = std::fs::read_dir(&tmp)
        .expect("tmp is readable")
        .map(|entry| entry.map(|e| e.file_name()))
        .collect();
    assert!(
        left.is_empty(),
        "play and verify leave temporary files behind: {left:?}"
    );
}

/// Skirmish from the command line: a sandboxed match, its replay verified
/// (records re-simulated, then re-run), tampered with (an accepted order
/// moved to another tick: the re-simulation says where), exported as
/// training data, and one side's observation at a tick printed.
#[test]
fn skirmish_play_verify_export_and_position() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replays");
    let out = out.to_str().expect("utf-8 path");
    let (a, b) = ("house:skirmish-rush", "house:skirmish-economy");
    let played = arbiter(&["play", "skirmish", a, b, "--matches", "1", "--out", out]);
    assert!(played.status.success(), "{}", stderr(&played));
    assert!(stdout(&played).contains("skirmish:standard"), "{}", stdout(&played));
    let replay = Path::new(out).join("match-0001.json");
    let replay_arg = replay.to_str().expect("utf-8 path");

    let shown = arbiter(&["replay", "show", replay_arg]);
    assert!(
        stdout(&shown).contains("ms per tick, 1000 ms at tick 0"),
        "{}",
        stdout(&shown)
    );
    assert!(stdout(&shown).contains(" ticks, skipped 0 + 0"), "{}", stdout(&shown));

    let verified = arbiter(&["verify", replay_arg, a, b]);
    assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));

    // The first tick with an accepted order loses it: the next digest or
    // the outcome no longer match.
    let mut json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&replay).expect("replay written")).expect("json");
    let ticks = json["games"][0]["record"]["game"]["ticks"]
        .as_array_mut()
        .expect("ticks");
    let tick = ticks
        .iter_mut()
        .find(|t| t["sides"][0]["accepted"].as_array().is_some_and(|a| !a.is_empty()))
        .expect("an accepted order");
    tick["sides"][0]["accepted"] = serde_json::json!([]);
    let tampered_path = dir.path().join("tampered.json");
    std::fs::write(&tampered_path, serde_json::to_vec(&json).expect("json")).expect("written");
    let tampered = arbiter(&["verify", tampered_path.to_str().expect("utf-8 path"), a, b]);
    assert_eq!(tampered.status.code(), Some(1), "{}", stdout(&tampered));
    assert!(
        stdout(&tampered).starts_with("not verified: game 0: "),
        "{}",
        stdout(&tampered)
    );

    let export = arbiter(&["replay", "export", "--jsonl", replay_arg]);
    assert!(export.status.success(), "{}", stderr(&export));
    let lines: Vec<serde_json::Value> = stdout(&export)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&replay).expect("replay")).expect("json");
    let ticks: usize = (0..2)
        .map(|g| {
            json["games"][g]["record"]["game"]["ticks"]
                .as_array()
                .map_or(0, Vec::len)
        })
        .sum();
    assert_eq!(lines.len(), 2 * ticks, "one line per tick and side");
    assert_eq!(
        (lines[0]["game"].as_u64(), lines[0]["tick"].as_u64()),
        (Some(1), Some(0))
    );
    let line = lines
        .iter()
        .find(|l| l["game"] == 2 && l["tick"] == 140 && l["side"] == 2)
        .expect("game 2, tick 140, side 2");

    let position = arbiter(&[
        "position", "skirmish", "--replay", replay_arg, "--game", "2", "--tick", "140", "--side", "2",
    ]);
    assert!(position.status.success(), "{}", stderr(&position));
    let observation: serde_json::Value = serde_json::from_str(stdout(&position).trim()).expect("an observation");
    assert_eq!(observation, line["obs"], "the same observation as the training line");
    assert_eq!(
        (observation["tick"].as_u64(), observation["me"].as_u64()),
        (Some(140), Some(2))
    );

    let missing = arbiter(&[
        "replay",
        "export",
        "--jsonl",
        replay_arg.replace("match-0001", "none").as_str(),
    ]);
    assert_eq!(missing.status.code(), Some(2), "a missing file is an error");
}

#[test]
fn play_finishes_when_a_native_bot_crashes() {
    let dir = tempfile::tempdir().expect("tempdir");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../referee/tests/bots/othello_first.py");
    let bot = format!("cmd:python3 {} crash white", script.display());
    let output = arbiter(&[
        "play",
        "othello",
        &bot,
        "builtin:othello-random",
        "--matches",
        "2",
        "--out",
        dir.path().to_str().expect("utf-8"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let table = stdout(&output);
    let faulty_line = table
        .lines()
        .find(|l| l.starts_with("python3"))
        .expect("row for the native bot");
    assert!(
        faulty_line.trim_end().ends_with('2'),
        "two faults (one white leg per match): {table}"
    );
}

#[test]
fn bad_arguments_get_a_clear_error() {
    let output = arbiter(&["play", "chess", "builtin:othello-random", "builtin:othello-random"]);
    assert!(!output.status.success());
    assert!(stderr(&output).contains("unknown game"), "{}", stderr(&output));
    let output = arbiter(&["play", "othello", "builtin:nobody", "builtin:othello-random"]);
    assert!(stderr(&output).contains("no house bot"), "{}", stderr(&output));
    let output = arbiter(&["replay", "show", "/nonexistent.json"]);
    assert!(stderr(&output).contains("cannot read"), "{}", stderr(&output));
}

/// `arbiter ladders time` keeps a ladder's time control in the database;
/// `list` shows it, and a malformed control is refused with the form it
/// takes.
#[test]
fn ladders_time_sets_a_ladders_control_and_list_shows_it() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().to_str().expect("a UTF-8 path");
    let listed = arbiter(&["ladders", "list", "--data", data]);
    assert!(listed.status.success(), "{}", stderr(&listed));
    assert!(
        stdout(&listed).contains("othello:std          1000 ms per move, 10000 ms per game"),
        "the defaults: {}",
        stdout(&listed)
    );
    let set = arbiter(&["ladders", "time", "othello:anti", "2000/20000", "--data", data]);
    assert!(set.status.success(), "{}", stderr(&set));
    let listed = stdout(&arbiter(&["ladders", "list", "--data", data]));
    assert!(
        listed.contains("othello:anti         2000 ms per move, 20000 ms per game (10000000 fuel per ms)"),
        "{listed}"
    );
    assert!(
        listed.contains("othello:std          1000 ms per move"),
        "only that ladder: {listed}"
    );
    let bad = arbiter(&["ladders", "time", "othello:anti", "5000/100", "--data", data]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(stderr(&bad).contains("expected MOVE_MS/BANK_MS"), "{}", stderr(&bad));
}

/// `arbiter play --time` plays with that control and the replays record
/// it; without it, the ladder's default.
#[test]
fn play_time_sets_the_control_the_replays_record() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let out = dir.path().join("replays");
    let out_arg = out.to_str().expect("a UTF-8 path");
    let bots = ["builtin:tictactoe-random", "builtin:tictactoe-perfect"];
    let read = |name: &str| -> serde_json::Value {
        let text = std::fs::read_to_string(out.join(name)).expect("a replay");
        serde_json::from_str(&text).expect("JSON")
    };
    let played = arbiter(&[
        "play",
        "tictactoe",
        bots[0],
        bots[1],
        "-n",
        "1",
        "--out",
        out_arg,
        "--time",
        "300/900",
    ]);
    assert!(played.status.success(), "{}", stderr(&played));
    let settings = &read("match-0001.json")["settings"];
    assert_eq!(
        (settings["turn_ms"].as_u64(), settings["bank_ms"].as_u64()),
        (Some(300), Some(900))
    );
    let played = arbiter(&["play", "tictactoe", bots[0], bots[1], "-n", "1", "--out", out_arg]);
    assert!(played.status.success(), "{}", stderr(&played));
    let settings = &read("match-0001.json")["settings"];
    assert_eq!(
        (settings["turn_ms"].as_u64(), settings["bank_ms"].as_u64()),
        (Some(100), Some(1000))
    );
}

/// `play --sprt` stops once the test decides, counts matches in seed order
/// (so one job and four give the same verdict after the same matches), and
/// prints the LLR with its bounds; a clean sweep gets a finite lower bound.
#[test]
fn play_sprt_decides_the_same_whatever_the_jobs() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replays");
    let out = out.to_str().expect("utf-8 path");
    let run = |jobs: &str| {
        let output = arbiter(&[
            "play",
            "othello",
            "builtin:othello-greedy",
            "builtin:othello-random",
            "--sprt",
            "0,50",
            "-j",
            jobs,
            "--out",
            out,
        ]);
        assert!(output.status.success(), "{}", stderr(&output));
        let text = stdout(&output);
        let verdict = text
            .lines()
            .find(|line| line.starts_with("SPRT"))
            .unwrap_or_else(|| panic!("an SPRT line: {text}"))
            .to_owned();
        let llr = text
            .lines()
            .find(|line| line.starts_with("LLR"))
            .unwrap_or_else(|| panic!("an LLR line: {text}"))
            .to_owned();
        (verdict, llr)
    };
    let (verdict, llr) = run("1");
    assert!(verdict.contains("H1 accepted (Elo ≥ 50) after"), "{verdict}");
    assert!(llr.contains("bounds -2.944, 2.944"), "{llr}");
    assert_eq!(run("4"), (verdict, llr), "the verdict does not depend on the jobs");

    let refused = arbiter(&[
        "play",
        "othello",
        "builtin:othello-greedy",
        "builtin:othello-random",
        "--sprt",
        "5,0",
    ]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("ELO1 must be above ELO0"),
        "{}",
        stderr(&refused)
    );

    let swept = arbiter(&[
        "play",
        "othello",
        "builtin:othello-ab-medium",
        "builtin:othello-random",
        "-n",
        "12",
        "--out",
        out,
    ]);
    let text = stdout(&swept);
    assert!(
        text.contains("at least +") && text.contains("with 95% confidence"),
        "a sweep gets a finite lower bound: {text}"
    );
}

/// `arbiter simulate` compares the matchmakers in a table, pairs them by
/// seed with a sign test, and draws τ and error against matches as SVG.
#[test]
fn simulate_prints_a_table_and_draws_svg() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("plots");
    let output = arbiter(&[
        "simulate",
        "--bots",
        "8",
        "--runs",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
        "--per-seed",
        dir.path().join("seeds.csv").to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    // One row per seed and matchmaker, after the header.
    let csv = std::fs::read_to_string(dir.path().join("seeds.csv")).expect("the per-seed CSV");
    let lines: Vec<&str> = csv.lines().collect();
    assert!(lines[0].starts_with("seed,matchmaker,matches,"), "{csv}");
    assert_eq!(lines.len(), 1 + 2 * 4, "{csv}");
    assert!(
        lines[1].starts_with("1000,round-robin,") && lines[2].starts_with("1001,round-robin,"),
        "{csv}"
    );
    let columns = lines[0].split(',').count();
    assert!(lines.iter().all(|l| l.split(',').count() == columns), "{csv}");
    for row in [
        "fit cover",
        "de-str. scale",
        "Wilcoxon p = ",
        "round-robin",
        "halite",
        "information",
        "ours",
        "τ≥0.85 held",
        "held out for reporting",
        "paired by seed (sign test",
    ] {
        assert!(text.contains(row), "{row}: {text}");
    }
    for file in ["tau.svg", "error.svg"] {
        let svg = std::fs::read_to_string(out.join(file)).expect("an SVG");
        assert!(
            svg.starts_with("<svg") && svg.contains("<polyline") && svg.trim_end().ends_with("</svg>"),
            "{file}: {}",
            &svg[..svg.len().min(300)]
        );
    }
    let refused = arbiter(&["simulate", "--bots", "1"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("--bots must be at least 2"),
        "{}",
        stderr(&refused)
    );
}

/// `arbiter new` writes a kit's template under the bot's name, with the
/// kit's whole README and its setup script, refuses a folder that is not
/// empty, an unknown language and a bad name.
#[test]
fn new_writes_a_kit_template_named_after_the_bot() {
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let list = arbiter(&["new", "--list"]);
    assert!(stdout(&list).contains("c"), "{}", stdout(&list));
    let dir = tmp.path().join("nova");
    let made = arbiter(&["new", "c", "Nova_1", "--dir", dir.to_str().expect("utf-8")]);
    assert!(made.status.success(), "{}", stderr(&made));
    for file in [
        "build.sh",
        "bot.c",
        "arbiter.c",
        "arbiter.h",
        "README.md",
        "KIT-README.md",
        "setup.sh",
    ] {
        assert!(dir.join(file).is_file(), "{file} is written");
    }
    let kit = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../kits/c");
    for (written, source) in [("KIT-README.md", "README.md"), ("setup.sh", "setup.sh")] {
        assert_eq!(
            std::fs::read(dir.join(written)).expect("written"),
            std::fs::read(kit.join(source)).expect("the kit's file"),
            "{written} is the kit's whole {source}"
        );
    }
    let all: String = ["README.md", "bot.c"]
        .iter()
        .map(|f| std::fs::read_to_string(dir.join(f)).expect("text"))
        .collect();
    assert!(
        all.contains("Nova_1") && !all.contains("my-bot"),
        "the placeholder is replaced"
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.join("build.sh"))
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "build.sh is executable");
        let mode = std::fs::metadata(dir.join("setup.sh"))
            .expect("metadata")
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "setup.sh is executable");
    }
    let again = arbiter(&["new", "c", "Nova_1", "--dir", dir.to_str().expect("utf-8")]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("not empty"), "{}", stderr(&again));
    let unknown = arbiter(&["new", "cobol", "nova"]);
    assert!(
        stderr(&unknown).contains("no kit for \"cobol\""),
        "{}",
        stderr(&unknown)
    );
    let bad = arbiter(&["new", "c", "x"]);
    assert!(stderr(&bad).contains("3 to 32 characters"), "{}", stderr(&bad));
    // The Rust kit: a cargo project carrying the SDK and the rules, named
    // after the bot, which must then be a name cargo takes.
    let rust = tmp.path().join("nova-rs");
    let made = arbiter(&["new", "rust", "nova-rs", "--dir", rust.to_str().expect("utf-8")]);
    assert!(made.status.success(), "{}", stderr(&made));
    let manifest = std::fs::read_to_string(rust.join("Cargo.toml")).expect("Cargo.toml");
    assert!(manifest.contains("name = \"nova-rs\""), "{manifest}");
    for file in [
        "Cargo.lock",
        "src/main.rs",
        "arbiter/sdk/Cargo.toml",
        "arbiter/games/src/lib.rs",
    ] {
        assert!(rust.join(file).is_file(), "{file} is written");
    }
    let digit = arbiter(&[
        "new",
        "rust",
        "9lives",
        "--dir",
        tmp.path().join("nine").to_str().expect("utf-8"),
    ]);
    assert_eq!(digit.status.code(), Some(2));
    assert!(
        stderr(&digit).contains("starts with a digit, which a cargo package name cannot"),
        "{}",
        stderr(&digit)
    );
}

/// `play --sprt` reads each game's winner by the game's own rule: in anti
/// Othello fewer discs win, so greedy (which plays anti as anti) against
/// random lands on the H1 side, as the table and its Elo figure say (the
/// SPRT used to compare raw disc counts and accepted H0).
#[test]
fn play_sprt_on_anti_takes_the_winner_from_the_rules() {
    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replays");
    let output = arbiter(&[
        "play",
        "othello:anti",
        "builtin:othello-greedy",
        "builtin:othello-random",
        "--sprt",
        "0,50",
        "-j",
        "2",
        "--out",
        out.to_str().expect("utf-8 path"),
    ]);
    assert!(output.status.success(), "{}", stderr(&output));
    let text = stdout(&output);
    assert!(text.contains("H1 accepted (Elo ≥ 50)"), "{text}");
    let row = |name: &str| -> Vec<u32> {
        text.lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("a row for {name}: {text}"))
            .split_whitespace()
            .skip(1)
            .take(3)
            .map(|n| n.parse().expect("W D L"))
            .collect()
    };
    let greedy = row("builtin:othello-greedy ");
    assert!(
        greedy[0] > greedy[2],
        "the table agrees: greedy wins more than it loses: {text}"
    );
    assert!(
        text.contains("Elo difference (builtin:othello-greedy − builtin:othello-random): +"),
        "and its Elo figure is positive: {text}"
    );
}

/// Two modules with the same file name from different folders get their
/// folders in `play`'s table and replays, and `verify` names them alike.
#[test]
fn play_names_two_bots_with_one_file_name_apart() {
    let dir = tempfile::tempdir().expect("tempdir");
    let wasm = arbiter_house::find("tictactoe-random").expect("house bot").wasm();
    let mut paths = Vec::new();
    for folder in ["mine", "theirs"] {
        let path = dir.path().join(folder).join("bot.wasm");
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("writable");
        std::fs::write(&path, wasm).expect("writable");
        paths.push(path.to_str().expect("utf-8 path").to_owned());
    }
    let out = dir.path().join("replays");
    let out = out.to_str().expect("utf-8 path");
    let played = arbiter(&["play", "tictactoe", &paths[0], &paths[1], "-n", "1", "--out", out]);
    assert!(played.status.success(), "{}", stderr(&played));
    let text = stdout(&played);
    assert!(
        text.lines().any(|l| l.starts_with("mine/bot ")) && text.lines().any(|l| l.starts_with("theirs/bot ")),
        "{text}"
    );
    let replay = Path::new(out).join("match-0001.json");
    let verified = arbiter(&["verify", replay.to_str().expect("utf-8 path"), &paths[0], &paths[1]]);
    assert_eq!(verified.status.code(), Some(0), "{}", stdout(&verified));
}

/// A bot that is an HTTP server, written in Python from the docs alone
/// (`examples/http_bot.py`): `arbiter play` plays it by URL, its replay is
/// marked not reproducible, and `verify` re-checks its legality without
/// re-running it (no bots needed), catching a changed move.
#[test]
fn an_http_bot_plays_by_url_and_its_replay_is_rechecked() {
    use std::io::{BufRead, BufReader};
    let example = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/http_bot.py");
    let mut server = Command::new("python3")
        .arg(&example)
        .args(["--port", "0"])
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs");
    let mut line = String::new();
    BufReader::new(server.stdout.take().expect("piped"))
        .read_line(&mut line)
        .expect("the bot says where it listens");
    let url = line.trim().strip_prefix("listening on ").expect("a URL").to_owned();

    let dir = tempfile::tempdir().expect("tempdir");
    let out = dir.path().join("replays");
    let out = out.to_str().expect("utf-8 path");
    let played = arbiter(&[
        "play",
        "tictactoe",
        &url,
        "house:tictactoe-random",
        "-n",
        "2",
        "--out",
        out,
        "--time",
        "1000/5000",
    ]);
    let _ = server.kill();
    let _ = server.wait();
    assert!(played.status.success(), "{}", stderr(&played));
    let table = stdout(&played);
    let row = table.lines().find(|l| l.starts_with(&url)).expect("a row for the URL");
    assert!(row.split_whitespace().last() == Some("0"), "no faults: {table}");

    let replay = Path::new(out).join("match-0001.json");
    let json = std::fs::read_to_string(&replay).expect("replay written");
    assert!(json.contains("\"reproducible\": false"), "{json}");
    assert!(json.contains("\"kind\": \"http\""), "{json}");
    let verified = arbiter(&["verify", replay.to_str().expect("utf-8 path")]);
    assert_eq!(verified.status.code(), Some(0), "{}", stderr(&verified));
    let said = stdout(&verified);
    assert!(said.contains("cannot be re-run"), "{said}");
    assert!(said.contains("checked: every move is legal"), "{said}");

    // The first move the HTTP bot played, moved to another cell.
    let key = r#"\"play\": \""#;
    let at = json.find(key).expect("a recorded play") + key.len();
    let cell = &json[at..at + 3];
    let other = if cell == "0-0" { "2-2" } else { "0-0" };
    let tampered = format!("{}{other}{}", &json[..at], &json[at + 3..]);
    let tampered_path = dir.path().join("tampered.json");
    std::fs::write(&tampered_path, tampered).expect("written");
    let checked = arbiter(&["verify", tampered_path.to_str().expect("utf-8 path")]);
    assert_eq!(checked.status.code(), Some(1), "{}", stdout(&checked));
    assert!(stdout(&checked).contains("not verified: "), "{}", stdout(&checked));
}
