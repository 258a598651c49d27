//! The check behind the `parse_reply` fuzz target (`games/fuzz`) and its
//! corpus replay (`tests/fuzz_corpus.rs`): whatever bytes a bot writes, the
//! reply parsers and `play` must not panic, and whatever they accept must be
//! on the board.

use arbiter_games::othello::{self, Mode, Move};
use arbiter_games::tictactoe::{self, Action, TicTacToe};
use arbiter_games::{Game, Side};

/// Feeds `data` (as lossy UTF-8) to every reply parser and, when a parse
/// gives a move, plays it on the start position. Panics on a broken
/// guarantee.
pub fn check(data: &[u8]) {
    let line = String::from_utf8_lossy(data);
    for mode in Mode::ALL {
        check_othello(&line, mode);
    }
    check_tictactoe(&line);
}

fn check_othello(line: &str, mode: Mode) {
    let cells = u32::from(mode.board_size()).pow(2);
    let start = othello::Position::start(mode);
    match othello::parse_reply(line, mode) {
        Ok(Move::Place(square)) => {
            assert!(
                u32::from(square) < cells,
                "{mode}: {line:?} parsed to square {square}, off the board"
            );
            let size = mode.board_size();
            assert_eq!(
                othello::parse_square(&othello::square_name(square, size), size),
                Some(square)
            );
            let legal = start.legal_squares().contains(&square);
            match start.play(Move::Place(square)) {
                Ok(next) => {
                    assert!(legal, "{mode}: play accepted {square}, which is not legal");
                    assert_eq!(next.placed().iter().sum::<u16>(), 1, "{mode}: one disc placed");
                }
                Err(error) => {
                    assert!(!legal, "{mode}: play rejected legal {square}: {error}");
                    assert!(!error.to_string().is_empty());
                }
            }
        }
        Ok(Move::Pass) => {
            // Nobody must pass at the start: the pass parses but is refused.
            assert!(start.play(Move::Pass).is_err(), "{mode}: pass accepted at the start");
        }
        Err(error) => assert!(!error.to_string().is_empty(), "{mode}: empty error message"),
    }
}

fn check_tictactoe(line: &str) {
    match tictactoe::parse_play(line) {
        Ok(cell) => {
            assert!(cell < 9, "{line:?} parsed to cell {cell}, off the grid");
            assert!(
                tictactoe::Position::new().play(cell).is_ok(),
                "cell {cell} refused on the empty grid"
            );
            assert_eq!(
                tictactoe::parse_play(&format!(r#"{{"play":"{}"}}"#, tictactoe::cell_name(cell))),
                Ok(cell)
            );
        }
        Err(error) => assert!(!error.to_string().is_empty(), "empty error message"),
    }
    // The init answer is read but never checked.
    assert_eq!(TicTacToe::new().parse_reply(Side::First, line), Ok(Action::Hello));
}
