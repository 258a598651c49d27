//! What the test bots share: reading observation lines (and Othello requests) and
//! picking ids out of them without a JSON library (the observation's field
//! order is fixed by the spec).

use std::io::{BufRead, Write};

/// The integer after `"key":` in `line`, if any.
pub fn number(line: &str, key: &str) -> Option<i64> {
    let pattern = format!("\"{key}\":");
    let start = line.find(&pattern)? + pattern.len();
    let digits: String = line[start..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    digits.parse().ok()
}

/// The tick an observation line is for.
pub fn tick(line: &str) -> i64 {
    number(line, "tick").unwrap_or(-1)
}

/// The `id`s of the objects listed in the array `"key":[...]`, which ends
/// where `"next"` starts.
pub fn ids(line: &str, key: &str, next: &str) -> Vec<i64> {
    let Some(start) = line.find(&format!("\"{key}\":[")) else {
        return Vec::new();
    };
    let end = line[start..].find(&format!("\"{next}\":")).map_or(line.len(), |e| start + e);
    line[start..end]
        .match_indices("{\"id\":")
        .filter_map(|(at, _)| number(&line[start + at..], "id"))
        .collect()
}

/// The side's own units and buildings.
pub fn own(line: &str) -> Vec<i64> {
    ids(line, "units", "visibleEnemies")
}

/// The enemies in vision.
pub fn enemies(line: &str) -> Vec<i64> {
    ids(line, "visibleEnemies", "mines")
}

/// The mines in vision (every mine at tick 0).
pub fn mines(line: &str) -> Vec<i64> {
    ids(line, "mines", "cleared")
}

/// Writes one reply line for `tick` with `actions` (JSON objects joined).
pub fn reply(tick: i64, actions: &[String]) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{{\"t\":\"act\",\"tick\":{tick},\"actions\":[{}]}}", actions.join(","));
    let _ = out.flush();
}

/// Calls `answer` with every observation line until stdin ends.
pub fn serve(mut answer: impl FnMut(&str)) {
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { return };
        answer(&line);
    }
}

/// Virtual milliseconds since some origin (the sandbox's fuel clock).
pub fn now_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// Computes until `ms` virtual milliseconds have passed.
pub fn burn(ms: u128) {
    let until = now_ms() + ms;
    let mut x = 1u64;
    while now_ms() < until {
        for _ in 0..1000 {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
    }
}

/// The first square of an Othello request's `legal_moves`, or -1 (a pass)
/// when the list is empty.
pub fn first_legal_move(line: &str) -> i64 {
    let Some(start) = line.find("\"legal_moves\":[") else {
        return -1;
    };
    let list = &line[start + "\"legal_moves\":[".len()..];
    let digits: String = list.chars().take_while(char::is_ascii_digit).collect();
    digits.parse().unwrap_or(-1)
}

/// Answers every Othello request with its first legal move, after
/// computing for `spend_ms(move_number)` virtual milliseconds (moves
/// counted from 1 within the game).
pub fn serve_othello(mut spend_ms: impl FnMut(u32) -> u128) {
    let mut moves = 0u32;
    serve(|line| {
        moves += 1;
        burn(spend_ms(moves));
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{{\"move\":{}}}", first_legal_move(line));
        let _ = out.flush();
    });
}
