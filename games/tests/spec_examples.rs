//! The examples and test vectors of othello.md and tictactoe.md, reproduced
//! exactly.

use arbiter_games::othello::{self, Mode, Move, Othello, Position};
use arbiter_games::tictactoe::{self, TicTacToe};
use arbiter_games::{FinishReason, Game, RequestContext, Side};

fn context(match_id: u64, remaining_ms: u64, budget_ms: u64) -> RequestContext {
    RequestContext {
        match_id,
        game_index: 0,
        participants: [0, 1],
        remaining_ms,
        budget_ms,
    }
}

#[test]
fn othello_request_example_is_reproduced_byte_for_byte() {
    let expected = r#"{"board":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,1,0,0,0,0,0,0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"color":1,"legal_moves":[19,26,37,44],"game_mode":"std","board_size":8,"blocked_squares":[],"placed":{"1":0,"2":0},"remaining_ms":60000,"match_id":123,"leg":0,"revision":0,"history":[],"round_no":null,"room_created_at":null,"budget_ms":10000}"#;
    let leg = Othello::from_position(Position::start(Mode::Std));
    assert_eq!(leg.request(Side::First, &context(123, 60_000, 10_000)), expected);
}

#[test]
fn othello_request_round_trips_through_its_type() {
    let leg = Othello::new(Mode::Octagon, 7);
    let line = leg.request(Side::First, &context(9, 1_000, 900));
    let parsed: othello::Request = serde_json::from_str(&line).expect("request parses");
    assert_eq!(parsed.position().expect("valid position"), *leg.position());
    assert_eq!(parsed.blocked_squares, vec![0, 1, 10, 8, 9, 19, 80, 90, 91, 89, 98, 99]);
}

#[test]
fn coordinates_match_the_spec() {
    let sq = |name, size| othello::parse_square(name, size);
    assert_eq!(sq("a1", 8), Some(0));
    assert_eq!(sq("h1", 8), Some(7));
    assert_eq!(sq("a2", 8), Some(8));
    assert_eq!(sq("h8", 8), Some(63));
    assert_eq!(sq("d3", 8), Some(19));
    assert_eq!(sq("f5", 8), Some(37));
    assert_eq!(sq("a1", 10), Some(0));
    assert_eq!(sq("j1", 10), Some(9));
    assert_eq!(sq("a2", 10), Some(10));
    assert_eq!(sq("j10", 10), Some(99));
    assert_eq!(sq("J0", 10), Some(99));
    assert_eq!(sq("d3", 10), Some(23));
    assert_eq!(sq("D3", 8), Some(19));
}

#[test]
fn start_positions_match_the_spec() {
    let board = Position::start(Mode::Std).board();
    assert_eq!((board[27], board[28], board[35], board[36]), (2, 1, 1, 2));
    assert_eq!(Position::start(Mode::Std).legal_squares(), vec![19, 26, 37, 44]);
    for mode in [Mode::Grand, Mode::Octagon] {
        let board = Position::start(mode).board();
        assert_eq!((board[44], board[45], board[54], board[55]), (2, 1, 1, 2));
    }
    assert!(Position::start(Mode::Reversi).board().iter().all(|&cell| cell == 0));
    assert_eq!(Position::start(Mode::Reversi).legal_squares(), vec![27, 28, 35, 36]);
}

#[test]
fn perft_from_the_standard_start_is_the_published_sequence() {
    let start = Position::start(Mode::Std);
    let expected = [4, 12, 56, 244, 1396, 8200, 55092, 390216];
    for (depth, &leaves) in (1..).zip(expected.iter()) {
        assert_eq!(start.perft(depth), leaves, "perft({depth})");
    }
    assert_eq!(Position::start(Mode::Anti).perft(8), 390216, "anti has the same moves");
}

#[test]
fn tictactoe_perft_to_the_end_of_the_game() {
    let start = tictactoe::Position::new();
    // From the published counts of games ending at ply 5..9: 1440, 5328, 47952,
    // 72576, 127872 (255168 games in all).
    let expected = [9, 72, 504, 3024, 15120, 56160, 154944, 255168, 255168];
    for (depth, &leaves) in (1..).zip(expected.iter()) {
        assert_eq!(start.perft(depth), leaves, "perft({depth})");
    }
    assert_eq!(start.perft(12), 255168, "every game is over by ply 9");
}

#[test]
fn tictactoe_init_example_is_reproduced() {
    let game = TicTacToe::new();
    let expected = r#"{"game-id":"1126","action":"init","game":"tictactoe","players":2,"board":"","player-index":0}"#;
    assert_eq!(game.request(Side::First, &context(563, 5_000, 1_000)), expected);
    assert_eq!(game.to_act(), vec![Side::First, Side::Second], "both sides get init");
}

#[test]
fn tictactoe_play_turn_example_is_reproduced() {
    let mut game = TicTacToe::new();
    game.apply(
        &[
            (Side::First, tictactoe::Action::Hello),
            (Side::Second, tictactoe::Action::Hello),
        ],
        0,
    )
    .expect("init");
    for cell in ["0-1", "1-1"] {
        let side = game.to_act()[0];
        let action = game
            .parse_reply(side, &format!(r#"{{"play":"{cell}"}}"#))
            .expect("parses");
        game.apply(&[(side, action)], 0).expect("legal");
    }
    let expected = r#"{"game-id":"1126","action":"play-turn","game":"tictactoe","players":2,"board":{"0-0":"","0-1":"X","0-2":"","1-0":"","1-1":"O","1-2":"","2-0":"","2-1":"","2-2":""},"you":"X","player-index":0}"#;
    assert_eq!(game.request(Side::First, &context(563, 5_000, 1_000)), expected);
}

#[test]
fn tictactoe_documented_game_is_a_draw() {
    let mut game = TicTacToe::new();
    game.apply(
        &[
            (Side::First, tictactoe::Action::Hello),
            (Side::Second, tictactoe::Action::Hello),
        ],
        0,
    )
    .expect("init");
    for cell in ["0-1", "1-1", "0-0", "0-2", "2-0", "1-0", "1-2", "2-1", "2-2"] {
        assert!(game.outcome().is_none());
        let side = game.to_act()[0];
        let reply = format!(r#"{{"name":"","play":"{cell}","error":null}}"#);
        let action = game.parse_reply(side, &reply).expect("parses");
        game.apply(&[(side, action)], 0).expect("legal");
    }
    let board = game.position().board();
    let rows: Vec<String> = (0..3)
        .map(|row| (0..3).map(|col| board[&format!("{row}-{col}")]).collect())
        .collect();
    assert_eq!(rows, ["XXO", "OOX", "XOX"]);
    let outcome = game.outcome().expect("over");
    assert_eq!(outcome.reason, FinishReason::Draw);
    assert_eq!(outcome.scores, [1, 1]);
}

#[test]
fn octagon_blocks_its_corners_and_lines_stop_there() {
    let start = Position::start(Mode::Octagon);
    assert_eq!(Mode::Octagon.playable_squares(), 88);
    let blocked = start.play(Move::Place(0)).expect_err("blocked");
    assert!(blocked.to_string().contains("blocked"), "{blocked}");
}

#[test]
fn forfeited_legs_score_result_discs() {
    for (mode, loser, winner) in [
        (Mode::Std, 0, 64),
        (Mode::Reversi, 0, 64),
        (Mode::Grand, 0, 100),
        (Mode::Octagon, 0, 88),
        (Mode::Anti, 64, 0),
    ] {
        let leg = Othello::new(mode, 1);
        let outcome = leg.forfeit(Side::Second, FinishReason::Timeout);
        assert_eq!(outcome.scores, [winner, loser], "{mode}");
        assert_eq!(outcome.faulted, Some(Side::Second));
    }
}
