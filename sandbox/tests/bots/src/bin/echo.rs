//! Echo bot: a plain `read_line` / `println!` loop using std, as a bot
//! author would write it. Commands (one per request line):
//! `info` (args, env, a random number, clocks), `sleep MS`, `spin N`,
//! `panic`, `stderr N`, `sum ...` (parses numbers); anything else is echoed.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

fn main() {
    let start = Instant::now();
    let stdin = std::io::stdin();
    let mut line = String::new();
    let mut turns = 0u64;
    let mut seen: HashMap<String, u32> = HashMap::new();
    loop {
        line.clear();
        if stdin.lock().read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        turns += 1;
        let req = line.trim_end();
        *seen.entry(req.to_string()).or_default() += 1;
        let mut words = req.split_whitespace();
        let reply = match words.next().unwrap_or("") {
            "info" => {
                let mut r = [0u8; 8];
                // HashMap's RandomState already used random_get; ask again.
                let rand = std::collections::hash_map::RandomState::new();
                use std::hash::BuildHasher;
                r.copy_from_slice(&rand.hash_one(1u8).to_le_bytes());
                let args: Vec<String> = std::env::args().collect();
                let env: Vec<String> = std::env::vars().map(|(k, v)| format!("{k}={v}")).collect();
                let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
                format!(
                    "args={args:?} env={env:?} rand={} now={now} elapsed={} turns={turns}",
                    u64::from_le_bytes(r),
                    start.elapsed().as_nanos()
                )
            }
            "sleep" => {
                let ms: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                let t = Instant::now();
                std::thread::sleep(Duration::from_millis(ms));
                format!("slept {}", t.elapsed().as_millis())
            }
            "spin" => {
                let n: u64 = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                let mut x = 1u64;
                for i in 0..n {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(i));
                }
                format!("spun {x}")
            }
            "panic" => panic!("asked to panic"),
            "stderr" => {
                let n: usize = words.next().and_then(|w| w.parse().ok()).unwrap_or(0);
                let chunk = "x".repeat(1000);
                for _ in 0..n / 1000 {
                    eprintln!("{chunk}");
                }
                "logged".to_string()
            }
            "sum" => {
                let s: i64 = words.filter_map(|w| w.trim_matches(|c: char| !c.is_ascii_digit() && c != '-').parse::<i64>().ok()).sum();
                format!("{{\"sum\":{s}}}")
            }
            _ => req.to_string(),
        };
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{reply}");
        let _ = out.flush();
    }
}
