//! What an upload check costs: `arbiter check` (the real binary, as a bot
//! author runs it, compiling from a cold cache every time) on every module of
//! the hostile loop corpus (`tests/common/hostile_loops.rs`: loops that never
//! answer, bulk memory and table instructions of the largest sizes) and on
//! every house bot, each on its ladder. Prints each check's real time, its
//! verdict's first line and the worst case of each group: the target is a
//! verdict within 15 s for any module.
//!
//! Run with `cargo bench -p arbiter --bench checks`. Nothing here
//! asserts on time; the load average is printed first and last.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "../tests/common/hostile_loops.rs"]
mod hostile_loops;

const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");

/// Runs `arbiter check` on `wasm` as `name`, in a fresh temporary folder (so
/// nothing is cached): its real time and the first line it printed.
fn check(dir: &Path, name: &str, wasm: &[u8], game: &str) -> (Duration, String) {
    let file = dir.join(format!("{name}.wasm"));
    std::fs::write(&file, wasm).expect("the temporary folder is writable");
    let tmp = tempfile::tempdir().expect("a temporary folder");
    let started = Instant::now();
    let out = Command::new(ARBITER)
        .arg("check")
        .arg(&file)
        .args(["--game", game])
        .env("TMPDIR", tmp.path())
        .output()
        .expect("arbiter runs");
    let elapsed = started.elapsed();
    let first = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or("(nothing printed)")
        .chars()
        .take(100)
        .collect();
    (elapsed, first)
}

/// A module's name, the real time of its check and the verdict's first line.
type Checked = (String, Duration, String);

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}

fn main() {
    println!(
        "checks: arbiter check, cold, per module; load average {}",
        load_average()
    );
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut groups: Vec<(&str, Vec<Checked>)> = Vec::new();
    let hostile = hostile_loops::corpus()
        .into_iter()
        .map(|(name, wat)| {
            let wasm = wat::parse_str(&wat).expect("the corpus parses");
            let (time, verdict) = check(dir.path(), name, &wasm, "othello:std");
            (name.to_string(), time, verdict)
        })
        .collect();
    groups.push(("hostile loops (othello:std)", hostile));
    let house = arbiter_house::ALL
        .iter()
        .map(|bot| {
            let game = if bot.game() == "othello" {
                "othello:std"
            } else {
                bot.game()
            };
            let (time, verdict) = check(dir.path(), bot.name, bot.wasm(), game);
            (bot.name.to_string(), time, verdict)
        })
        .collect();
    groups.push(("house bots (their ladders)", house));
    for (group, rows) in &groups {
        println!("\n== {group} ==");
        for (name, time, verdict) in rows {
            println!("{name:<22} {:>6.2} s  {verdict}", time.as_secs_f64());
        }
        let worst = rows.iter().map(|(_, time, _)| *time).max().unwrap_or_default();
        println!("worst: {:.2} s (target: within 15 s)", worst.as_secs_f64());
    }
    println!("\nload average after: {}", load_average());
}
