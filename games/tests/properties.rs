//! Property tests: the bitboard rules against the simple reference of
//! `support/reference.rs` on random positions of every mode, seeded
//! openings, request round trips, and tic-tac-toe against a tiny reference.

#[path = "support/reference.rs"]
mod reference;

use arbiter_games::othello::{self, IllegalMove, Mode, Move, Othello, Position};
use arbiter_games::tictactoe::{self, Action, TicTacToe};
use arbiter_games::{FinishReason, Game, RequestContext, Side};
use proptest::prelude::*;
use proptest::sample::Index;
use reference::Kind;

// ---------------------------------------------------------------------------
// Othello
// ---------------------------------------------------------------------------

fn kind(mode: Mode) -> Kind {
    Kind::from_name(mode.as_str()).expect("every mode has a reference")
}

fn any_mode() -> impl Strategy<Value = Mode> {
    prop::sample::select(Mode::ALL.to_vec())
}

fn context() -> RequestContext {
    RequestContext {
        match_id: 42,
        game_index: 1,
        participants: [1, 0],
        remaining_ms: 12_345,
        budget_ms: 1_000,
    }
}

/// Checks that `position` and the reference agree on everything, and that
/// `play` accepts exactly the reference's legal moves with the same result.
fn agree(position: &Position, expected: &reference::Board) -> Result<(), TestCaseError> {
    let mode = position.mode();
    prop_assert_eq!(position.board(), expected.cells(), "board");
    prop_assert_eq!(position.to_move().code(), expected.to_move, "colour to move");
    let placed = position.placed();
    prop_assert_eq!([u32::from(placed[0]), u32::from(placed[1])], expected.placed, "placed");
    prop_assert_eq!(position.counts(), expected.counts(), "disc counts");
    let legal: Vec<usize> = position.legal_squares().into_iter().map(usize::from).collect();
    let expected_legal = expected.legal_moves();
    prop_assert_eq!(&legal, &expected_legal, "legal moves");
    for color in [othello::Color::Black, othello::Color::White] {
        let bits = position.legal_bits_for(color);
        let squares: Vec<usize> = othello::squares(bits).map(usize::from).collect();
        prop_assert_eq!(
            squares,
            expected.legal_moves_for(color.code()),
            "legal moves of {:?}",
            color
        );
    }
    let is_over = expected.is_over();
    prop_assert_eq!(position.is_over(), is_over, "is_over");
    prop_assert_eq!(position.must_pass(), expected.must_pass(), "must_pass");

    for square in 0..expected.squares() {
        let played = position.play(Move::Place(square as u8));
        let after = if expected_legal.contains(&square) {
            expected.play(square)
        } else {
            None
        };
        match after {
            Some(after) => {
                let next = played.map_err(|e| TestCaseError::fail(format!("{mode}: legal {square} refused: {e}")))?;
                prop_assert_eq!(next.board(), after.cells(), "board after {}", square);
                prop_assert_eq!(next.to_move().code(), after.to_move, "colour to move after {}", square);
                let placed = next.placed();
                prop_assert_eq!(
                    [u32::from(placed[0]), u32::from(placed[1])],
                    after.placed,
                    "placed after {}",
                    square
                );
            }
            None => {
                let error = match played {
                    Ok(_) => return Err(TestCaseError::fail(format!("{mode}: illegal {square} accepted"))),
                    Err(error) => error,
                };
                if !is_over {
                    if expected.is_blocked(square) {
                        prop_assert!(matches!(error, IllegalMove::Blocked(_)), "{square}: {error:?}");
                    } else if expected.is_occupied(square) {
                        prop_assert!(matches!(error, IllegalMove::Occupied(_)), "{square}: {error:?}");
                    }
                }
            }
        }
    }
    for off_board in [expected.squares(), 127, 128, 255] {
        let square = off_board as u8;
        prop_assert_eq!(position.play(Move::Place(square)), Err(IllegalMove::OffBoard(square)));
    }
    match expected.pass() {
        Some(after) => {
            let next = position
                .play(Move::Pass)
                .map_err(|e| TestCaseError::fail(format!("{mode}: needed pass refused: {e}")))?;
            prop_assert_eq!(next.to_move().code(), after.to_move);
            prop_assert_eq!(next.board(), after.cells());
        }
        None => prop_assert!(
            position.play(Move::Pass).is_err(),
            "{mode}: pass accepted with moves or at the end"
        ),
    }

    // The request describes this very position and survives a JSON round trip.
    let request = othello::Request::new(position, &[], &context());
    let legal_codes: Vec<i32> = legal.iter().map(|&square| square as i32).collect();
    prop_assert_eq!(&request.legal_moves, &legal_codes);
    let parsed: othello::Request = serde_json::from_str(&request.to_line())
        .map_err(|e| TestCaseError::fail(format!("request does not parse back: {e}")))?;
    prop_assert_eq!(&parsed, &request);
    prop_assert_eq!(parsed.position(), Ok(*position));
    Ok(())
}

/// Plays `moves` from the start of `mode` on both implementations.
fn replay(mode: Mode, moves: &[Move]) -> Result<(Position, reference::Board), TestCaseError> {
    let mut position = Position::start(mode);
    let mut expected = reference::Board::start(kind(mode));
    for &mv in moves {
        position = position
            .play(mv)
            .map_err(|e| TestCaseError::fail(format!("{mode}: {mv:?} refused: {e}")))?;
        expected = match mv {
            Move::Place(square) => expected.play(usize::from(square)),
            Move::Pass => expected.pass(),
        }
        .ok_or_else(|| TestCaseError::fail(format!("{mode}: reference refuses {mv:?}")))?;
    }
    Ok((position, expected))
}

/// Where a random game starts: the mode's start or a seeded opening.
fn any_origin() -> impl Strategy<Value = Option<u64>> {
    prop::option::of(any::<u64>())
}

/// Enough plies to finish most games on every board (passes included).
const MAX_PLIES: usize = 140;

proptest! {
    // Each case checks up to 140 positions square by square; 128 cases take
    // about 4 s in a debug build.
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// Random legal play from the start or a seeded opening: both
    /// implementations agree on every position along the way.
    #[test]
    fn random_play_matches_the_reference(
        mode in any_mode(),
        origin in any_origin(),
        choices in prop::collection::vec(any::<Index>(), 0..MAX_PLIES),
    ) {
        let opening = origin.map(|seed| othello::opening(mode, seed)).unwrap_or_default();
        let (mut position, mut expected) = replay(mode, &opening)?;
        for choice in &choices {
            agree(&position, &expected)?;
            if expected.is_over() {
                break;
            }
            let legal = expected.legal_moves();
            let mv = if legal.is_empty() { Move::Pass } else { Move::Place(legal[choice.index(legal.len())] as u8) };
            position = position.play(mv).map_err(|e| TestCaseError::fail(format!("{mode}: {mv:?} refused: {e}")))?;
            expected = match mv {
                Move::Place(square) => expected.play(usize::from(square)),
                Move::Pass => expected.pass(),
            }.ok_or_else(|| TestCaseError::fail(format!("{mode}: reference refuses {mv:?}")))?;
        }
        agree(&position, &expected)?;
    }

    /// Arbitrary boards, not only reachable ones: long lines, discs in every
    /// corner, reversi centre phases and 32-disc caps.
    #[test]
    fn arbitrary_boards_match_the_reference(
        mode in any_mode(),
        cells in prop::collection::vec(prop::sample::select(vec![0u8, 0, 1, 2]), 100),
        fill_centre in any::<bool>(),
        white_to_move in any::<bool>(),
        placed in [prop_oneof![Just(32u16), Just(31u16), 0u16..=32], prop_oneof![Just(32u16), Just(31u16), 0u16..=32]],
    ) {
        let size = usize::from(mode.board_size());
        let mut board = cells[..size * size].to_vec();
        for &square in mode.blocked_squares() {
            board[usize::from(square)] = 0;
        }
        if mode == Mode::Reversi && fill_centre {
            // Most random boards leave a centre square empty: also test
            // reversi past its centre phase.
            for square in reference::REVERSI_CENTRE {
                board[square] = board[square].max(1);
            }
        }
        let color = if white_to_move { othello::Color::White } else { othello::Color::Black };
        let position = Position::from_board(mode, &board, color, Some(placed))
            .map_err(|e| TestCaseError::fail(format!("{mode}: board refused: {e}")))?;
        let expected = reference::Board::from_cells(kind(mode), &board, color.code(), placed.map(u32::from))
            .ok_or_else(|| TestCaseError::fail("reference refuses the board"))?;
        agree(&position, &expected)?;
    }

    /// Openings: 8 legal moves without a pass (12 placements in reversi),
    /// the same for the same seed, and the leg starts where they lead.
    #[test]
    fn openings_are_legal_and_seeded(mode in any_mode(), seed in any::<u64>()) {
        let opening = othello::opening(mode, seed);
        prop_assert_eq!(&othello::opening(mode, seed), &opening, "same seed, same opening");
        let placements = opening.iter().filter(|mv| **mv != Move::Pass).count();
        if mode == Mode::Reversi {
            prop_assert_eq!(placements, 12);
        } else {
            prop_assert_eq!(opening.len(), 8);
            prop_assert_eq!(placements, 8, "no pass in {:?}", opening);
        }
        let (position, expected) = replay(mode, &opening)?;
        prop_assert_eq!(position.placed().iter().sum::<u16>(), if mode == Mode::Reversi { 12 } else { 8 });
        prop_assert!(!expected.is_over(), "an opening never ends the leg");
        let leg = Othello::new(mode, seed);
        prop_assert_eq!(leg.opening(), &opening[..]);
        prop_assert_eq!(leg.position(), &position);
        let record = leg.record();
        let codes: Vec<i32> = opening.iter().map(|mv| mv.code()).collect();
        prop_assert_eq!(record.opening_moves, codes);
    }
}

#[test]
fn square_bit_is_the_single_bit_of_its_square() {
    for square in 0..128u8 {
        assert_eq!(othello::square_bit(square), 1u128 << square, "square {square}");
    }
}

#[test]
fn openings_depend_on_the_seed() {
    for mode in Mode::ALL {
        let distinct: std::collections::HashSet<Vec<Move>> = (0..16).map(|seed| othello::opening(mode, seed)).collect();
        assert!(
            distinct.len() > 8,
            "{mode}: only {} distinct openings from 16 seeds",
            distinct.len()
        );
    }
}

#[test]
fn reversi_cap_leaves_a_colour_without_moves() {
    // A reachable-looking reversi board where black has placed all 32 discs
    // and white still has a move: black passes, white plays.
    let mut board = vec![1u8; 64];
    board[0] = 0;
    board[7] = 2; // white brackets h2..h7 from h8
    board[63] = 0;
    let position = Position::from_board(Mode::Reversi, &board, othello::Color::Black, Some([32, 30])).expect("board");
    let expected = reference::Board::from_cells(Kind::Reversi, &board, 1, [32, 30]).expect("board");
    assert_eq!(expected.legal_moves(), Vec::<usize>::new());
    assert!(expected.must_pass());
    assert_eq!(position.legal_squares(), Vec::<u8>::new());
    assert!(position.must_pass());
    assert_eq!(position.play(Move::Place(0)), Err(IllegalMove::NoDiscsLeft));
    let white = position.play(Move::Pass).expect("black passes");
    assert_eq!(
        white.legal_squares().into_iter().map(usize::from).collect::<Vec<_>>(),
        expected.pass().expect("pass").legal_moves()
    );
}

// ---------------------------------------------------------------------------
// Tic-tac-toe
// ---------------------------------------------------------------------------

/// Tic-tac-toe written out plainly: 0 empty, 1 X, 2 O.
#[derive(Clone, Copy, Debug, Default)]
struct Grid([u8; 9]);

impl Grid {
    fn mover(&self) -> u8 {
        let marks = self.0.iter().filter(|&&cell| cell != 0).count();
        if marks % 2 == 0 { 1 } else { 2 }
    }

    fn winner(&self) -> Option<u8> {
        let at = |row: usize, column: usize| self.0[row * 3 + column];
        let mut lines = Vec::new();
        for i in 0..3 {
            lines.push([at(i, 0), at(i, 1), at(i, 2)]);
            lines.push([at(0, i), at(1, i), at(2, i)]);
        }
        lines.push([at(0, 0), at(1, 1), at(2, 2)]);
        lines.push([at(0, 2), at(1, 1), at(2, 0)]);
        lines
            .into_iter()
            .find(|line| line[0] != 0 && line[0] == line[1] && line[1] == line[2])
            .map(|line| line[0])
    }

    fn is_over(&self) -> bool {
        self.winner().is_some() || self.0.iter().all(|&cell| cell != 0)
    }

    fn legal(&self) -> Vec<u8> {
        if self.is_over() {
            return Vec::new();
        }
        (0..9).filter(|&cell| self.0[usize::from(cell)] == 0).collect()
    }
}

fn side_code(side: Side) -> u8 {
    side.index() as u8 + 1
}

proptest! {
    /// Random games: winner, end, legal cells and marks agree with the plain
    /// grid; taken cells, off-grid cells and moves after the end are refused;
    /// the `Game` wrapper scores the end the same way.
    #[test]
    fn tictactoe_matches_the_reference(choices in prop::collection::vec(any::<Index>(), 0..12), probe in 9u8..) {
        let mut position = tictactoe::Position::new();
        let mut grid = Grid::default();
        let mut game = TicTacToe::new();
        game.apply(&[(Side::First, Action::Hello), (Side::Second, Action::Hello)], 0)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        for choice in &choices {
            prop_assert_eq!(position.winner().map(side_code), grid.winner());
            prop_assert_eq!(position.is_over(), grid.is_over());
            prop_assert_eq!(position.legal_cells(), grid.legal());
            prop_assert_eq!(side_code(position.to_move()), grid.mover());
            for cell in 0..9u8 {
                prop_assert_eq!(position.mark(cell).map(side_code).unwrap_or(0), grid.0[usize::from(cell)]);
                let legal = grid.legal().contains(&cell);
                prop_assert_eq!(position.play(cell).is_ok(), legal, "cell {}", cell);
            }
            prop_assert!(position.play(probe).is_err(), "off-grid {} accepted", probe);
            prop_assert_eq!(game.to_act(), if grid.is_over() { vec![] } else { vec![position.to_move()] });
            if grid.is_over() {
                break;
            }
            let legal = grid.legal();
            let cell = legal[choice.index(legal.len())];
            let side = position.to_move();
            let reply = format!(r#"{{"name":"bot","play":"{}","error":null}}"#, tictactoe::cell_name(cell));
            let action = game.parse_reply(side, &reply).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(action, Action::Mark(cell));
            game.apply(&[(side, action)], 0).map_err(|e| TestCaseError::fail(e.to_string()))?;
            position = position.play(cell).map_err(TestCaseError::fail)?;
            grid.0[usize::from(cell)] = grid.mover();
            prop_assert_eq!(game.position(), &position);
        }
        match (grid.is_over(), grid.winner(), game.outcome()) {
            (false, _, None) => {}
            (true, Some(winner), Some(outcome)) => {
                let mut scores = [0, 0];
                scores[usize::from(winner - 1)] = 2;
                prop_assert_eq!(outcome.scores, scores);
                prop_assert_eq!(outcome.reason, FinishReason::Line);
            }
            (true, None, Some(outcome)) => {
                prop_assert_eq!(outcome.scores, [1, 1]);
                prop_assert_eq!(outcome.reason, FinishReason::Draw);
            }
            (over, winner, outcome) => {
                return Err(TestCaseError::fail(format!("over {over}, winner {winner:?}, outcome {outcome:?}")));
            }
        }
    }
}
