//! Arbitrary bytes as a bot's reply line: the Othello parser in every mode,
//! the tic-tac-toe parser, and `play` on a start position with whatever they
//! accept. The check itself lives in `games/tests/support/fuzz_check.rs`,
//! shared with the corpus replay test `games/tests/fuzz_corpus.rs`.

#![no_main]

#[path = "../../tests/support/fuzz_check.rs"]
mod fuzz_check;

libfuzzer_sys::fuzz_target!(|data: &[u8]| fuzz_check::check(data));
