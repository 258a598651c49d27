//! Replays the seed corpus of the `parse_reply` fuzz target
//! (`games/fuzz/corpus/parse_reply/`) through the same check as the target,
//! so the corpus runs on stable in every `cargo test`.

#[path = "support/fuzz_check.rs"]
mod fuzz_check;

use std::path::Path;

#[test]
fn parse_reply_corpus_passes_the_fuzz_check() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse_reply");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 30, "the corpus has only {} files", files.len());
    for file in &files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        let result = std::panic::catch_unwind(|| fuzz_check::check(&data));
        assert!(result.is_ok(), "{} fails the fuzz check", file.display());
    }
}

/// A corpus of only garbage would never reach `play`: it must keep accepted
/// squares, passes and tic-tac-toe cells.
#[test]
fn corpus_holds_accepted_replies() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/corpus/parse_reply");
    let lines: Vec<String> = std::fs::read_dir(&dir)
        .expect("corpus directory")
        .map(|entry| String::from_utf8_lossy(&std::fs::read(entry.expect("entry").path()).expect("file")).into_owned())
        .collect();
    let mode = arbiter_games::othello::Mode::Std;
    let places = lines
        .iter()
        .filter(|line| {
            matches!(
                arbiter_games::othello::parse_reply(line, mode),
                Ok(arbiter_games::othello::Move::Place(_))
            )
        })
        .count();
    let passes = lines
        .iter()
        .filter(|line| arbiter_games::othello::parse_reply(line, mode) == Ok(arbiter_games::othello::Move::Pass))
        .count();
    let cells = lines
        .iter()
        .filter(|line| arbiter_games::tictactoe::parse_play(line).is_ok())
        .count();
    assert!(
        places >= 5 && passes >= 3 && cells >= 2,
        "places {places}, passes {passes}, cells {cells}"
    );
}
