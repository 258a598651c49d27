//! Reply parsing, table-driven: every form the specs allow, and each kind of
//! bad reply with the exact `ReplyError` it gives.

use arbiter_games::othello::{self, Mode, Move, Othello};
use arbiter_games::tictactoe::{self, Action, TicTacToe};
use arbiter_games::{Game, ReplyError, Side};

const EIGHT: [Mode; 3] = [Mode::Std, Mode::Anti, Mode::Reversi];
const TEN: [Mode; 2] = [Mode::Grand, Mode::Octagon];

// ---------------------------------------------------------------------------
// Othello: valid replies
// ---------------------------------------------------------------------------

#[test]
fn othello_square_numbers_and_names() {
    // (reply, modes, expected square)
    let cases: &[(&str, &[Mode], u8)] = &[
        (r#"{"move": 19}"#, &EIGHT, 19),
        (r#"{"move": 0}"#, &EIGHT, 0),
        (r#"{"move": 63}"#, &EIGHT, 63),
        (r#"{"move": 64}"#, &TEN, 64),
        (r#"{"move": 99}"#, &TEN, 99),
        (r#"{"move": "d3"}"#, &EIGHT, 19),
        (r#"{"move": "D3"}"#, &EIGHT, 19),
        (r#"{"move": "f5"}"#, &EIGHT, 37),
        (r#"{"move": "a1"}"#, &EIGHT, 0),
        (r#"{"move": "h1"}"#, &EIGHT, 7),
        (r#"{"move": "a2"}"#, &EIGHT, 8),
        (r#"{"move": "H8"}"#, &EIGHT, 63),
        (r#"{"move": "d3"}"#, &TEN, 23),
        (r#"{"move": "a1"}"#, &TEN, 0),
        (r#"{"move": "j1"}"#, &TEN, 9),
        (r#"{"move": "a2"}"#, &TEN, 10),
        (r#"{"move": "j10"}"#, &TEN, 99),
        (r#"{"move": "J10"}"#, &TEN, 99),
        (r#"{"move": "J0"}"#, &TEN, 99),
        (r#"{"move": "j0"}"#, &TEN, 99),
        (r#"{"move": "a10"}"#, &TEN, 90),
        (r#"{"move": "A0"}"#, &TEN, 90),
        (r#"{"move": "e9"}"#, &TEN, 84),
        // Extra fields are ignored, wherever they are.
        (
            r#"{"name": "bot", "move": 19, "eval": 0.25, "pv": ["d3", "c5"]}"#,
            &EIGHT,
            19,
        ),
        (r#"{"move": "d3", "move_ms": 12, "debug": null}"#, &EIGHT, 19),
        // Whitespace around and inside the JSON.
        ("  {\"move\":19}  ", &EIGHT, 19),
        ("\t{ \"move\" :\n \"d3\" }\r\n", &EIGHT, 19),
        ("{\"move\":19}\n", &EIGHT, 19),
    ];
    for &(line, modes, square) in cases {
        for &mode in modes {
            assert_eq!(
                othello::parse_reply(line, mode),
                Ok(Move::Place(square)),
                "{mode}: {line:?}"
            );
        }
    }
}

#[test]
fn othello_every_pass_form_is_a_pass_in_every_mode() {
    let passes = [
        r#"{"move": -1}"#,
        r#"{"move": "pass"}"#,
        r#"{"move": "PASS"}"#,
        r#"{"move": "Pass"}"#,
        r#"{"move": "PA"}"#,
        r#"{"move": "pa"}"#,
        r#"{"move": "Pa"}"#,
        r#"{"move": "PS"}"#,
        r#"{"move": "ps"}"#,
        r#"{"move": "--"}"#,
        r#" {"move": -1, "why": "no moves"} "#,
    ];
    for line in passes {
        for mode in Mode::ALL {
            assert_eq!(othello::parse_reply(line, mode), Ok(Move::Pass), "{mode}: {line:?}");
        }
    }
}

#[test]
fn othello_leg_parses_with_its_own_board_size() {
    let reply = r#"{"move": "j10"}"#;
    assert_eq!(
        Othello::new(Mode::Grand, 1).parse_reply(Side::First, reply),
        Ok(Move::Place(99))
    );
    assert_eq!(
        Othello::new(Mode::Octagon, 1).parse_reply(Side::Second, r#"{"move":"d3"}"#),
        Ok(Move::Place(23))
    );
    assert!(matches!(
        Othello::new(Mode::Std, 1).parse_reply(Side::First, reply),
        Err(ReplyError::UnknownName { .. })
    ));
}

// ---------------------------------------------------------------------------
// Othello: invalid replies
// ---------------------------------------------------------------------------

/// What a bad reply must give.
#[derive(Debug)]
enum Expect {
    NotJson,
    NotAnObject(&'static str),
    MissingMove,
    WrongType(&'static str),
    NotASquare(&'static str),
    UnknownName(&'static str),
}

fn check(line: &str, mode: Mode, expect: &Expect) {
    let result = othello::parse_reply(line, mode);
    let size = mode.board_size();
    let example = if size == 10 { "\"j10\"" } else { "\"d3\"" };
    let ok = match (&result, expect) {
        (Err(ReplyError::NotJson { .. }), Expect::NotJson) => true,
        (Err(ReplyError::NotAnObject(found)), Expect::NotAnObject(want)) => found == want,
        (Err(ReplyError::MissingField("move")), Expect::MissingMove) => true,
        (Err(ReplyError::WrongType { field, found, .. }), Expect::WrongType(want)) => *field == "move" && found == want,
        (Err(ReplyError::NotASquare { value, size: got }), Expect::NotASquare(want)) => value == want && *got == size,
        (Err(ReplyError::UnknownName { value, example: got }), Expect::UnknownName(want)) => {
            value == want && *got == example
        }
        _ => false,
    };
    assert!(ok, "{mode}: {line:?} gave {result:?}, expected {expect:?}");
    // The message names the offending input (NotJson: see
    // `not_json_error_names_the_input`; a missing field names the field).
    let message = result.expect_err("an error").to_string();
    let named = match expect {
        Expect::NotJson => None,
        Expect::MissingMove => Some("move"),
        Expect::NotAnObject(text) | Expect::WrongType(text) | Expect::NotASquare(text) | Expect::UnknownName(text) => {
            Some(*text)
        }
    };
    if let Some(named) = named {
        assert!(
            message.contains(named),
            "{mode}: message {message:?} does not name {named:?}"
        );
    }
}

#[test]
fn othello_bad_replies_give_the_exact_error() {
    use Expect::*;
    let all = &Mode::ALL[..];
    let cases: &[(&str, &[Mode], Expect)] = &[
        // Not JSON at all.
        ("d3", all, NotJson),
        ("", all, NotJson),
        ("   ", all, NotJson),
        ("{move: 19}", all, NotJson),
        (r#"{"move": 19"#, all, NotJson),
        (r#"{"move": 19}{"move": 20}"#, all, NotJson),
        (r#"{"move": 19} x"#, all, NotJson),
        ("{\"move\": 19}\u{0}", all, NotJson),
        // JSON, but not an object.
        ("[19]", all, NotAnObject("[19]")),
        (r#"[{"move": 19}]"#, all, NotAnObject(r#"[{"move":19}]"#)),
        (r#""d3""#, all, NotAnObject(r#""d3""#)),
        ("19", all, NotAnObject("19")),
        ("-1", all, NotAnObject("-1")),
        ("null", all, NotAnObject("null")),
        ("true", all, NotAnObject("true")),
        // No move.
        ("{}", all, MissingMove),
        (r#"{"Move": 19}"#, all, MissingMove),
        (r#"{"play": "d3"}"#, all, MissingMove),
        // A move of the wrong type.
        (r#"{"move": null}"#, all, WrongType("null")),
        (r#"{"move": true}"#, all, WrongType("true")),
        (r#"{"move": false}"#, all, WrongType("false")),
        (r#"{"move": [19]}"#, all, WrongType("[19]")),
        (r#"{"move": {"square": 19}}"#, all, WrongType(r#"{"square":19}"#)),
        // Numbers that are not squares.
        (r#"{"move": 19.5}"#, all, NotASquare("19.5")),
        (r#"{"move": 64}"#, &EIGHT, NotASquare("64")),
        (r#"{"move": 99}"#, &EIGHT, NotASquare("99")),
        (r#"{"move": 100}"#, &TEN, NotASquare("100")),
        (r#"{"move": 255}"#, all, NotASquare("255")),
        (r#"{"move": 256}"#, all, NotASquare("256")),
        (
            r#"{"move": 18446744073709551615}"#,
            all,
            NotASquare("18446744073709551615"),
        ),
        (r#"{"move": -2}"#, all, NotASquare("-2")),
        (
            r#"{"move": -9223372036854775808}"#,
            all,
            NotASquare("-9223372036854775808"),
        ),
        // Strings that are neither a square name nor a pass.
        (r#"{"move": "i1"}"#, &EIGHT, UnknownName("i1")),
        (r#"{"move": "a9"}"#, &EIGHT, UnknownName("a9")),
        (r#"{"move": "a0"}"#, &EIGHT, UnknownName("a0")),
        (r#"{"move": "a10"}"#, &EIGHT, UnknownName("a10")),
        (r#"{"move": "k1"}"#, &TEN, UnknownName("k1")),
        (r#"{"move": "a11"}"#, &TEN, UnknownName("a11")),
        (r#"{"move": "a00"}"#, &TEN, UnknownName("a00")),
        (r#"{"move": "a01"}"#, all, UnknownName("a01")),
        (r#"{"move": "d03"}"#, all, UnknownName("d03")),
        (r#"{"move": "d"}"#, all, UnknownName("d")),
        (r#"{"move": ""}"#, all, UnknownName("")),
        (r#"{"move": "d3x"}"#, all, UnknownName("d3x")),
        (r#"{"move": "3d"}"#, all, UnknownName("3d")),
        (r#"{"move": " d3"}"#, all, UnknownName(" d3")),
        (r#"{"move": "d3 "}"#, all, UnknownName("d3 ")),
        (r#"{"move": "d-3"}"#, all, UnknownName("d-3")),
        (r#"{"move": "19"}"#, all, UnknownName("19")),
        (r#"{"move": "-1"}"#, all, UnknownName("-1")),
        (r#"{"move": "passe"}"#, all, UnknownName("passe")),
        (r#"{"move": "p"}"#, all, UnknownName("p")),
        (r#"{"move": "-"}"#, all, UnknownName("-")),
        (r#"{"move": "ä3"}"#, all, UnknownName("ä3")),
    ];
    for (line, modes, expect) in cases {
        for &mode in *modes {
            check(line, mode, expect);
        }
    }
}

/// `NotJson` names what the bot wrote, not only the parser's complaint.
#[test]
fn not_json_error_names_the_input() {
    for line in ["d3", "{move: 19}", "pass"] {
        let error = othello::parse_reply(line, Mode::Std).expect_err("not JSON");
        assert!(matches!(error, ReplyError::NotJson { .. }));
        assert!(error.to_string().contains(line), "{error} does not name {line:?}");
        let error = tictactoe::parse_play(line).expect_err("not JSON");
        assert!(error.to_string().contains(line), "{error} does not name {line:?}");
    }
}

/// JSON does not tell integers from floats, so a whole number in any spelling
/// names its square; a fraction is not a square.
#[test]
fn whole_numbers_in_any_spelling_name_their_square() {
    for (written, expected) in [
        ("19.0", Move::Place(19)),
        ("1.9e1", Move::Place(19)),
        ("-1.0", Move::Pass),
        ("-0", Move::Place(0)),
    ] {
        let line = format!(r#"{{"move": {written}}}"#);
        assert_eq!(othello::parse_reply(&line, Mode::Std), Ok(expected), "{line}");
    }
    for written in ["19.5", "1e9", "-2.0"] {
        let line = format!(r#"{{"move": {written}}}"#);
        let error = othello::parse_reply(&line, Mode::Std).expect_err("not a square");
        assert!(matches!(error, ReplyError::NotASquare { .. }), "{line} gave {error:?}");
    }
}

// ---------------------------------------------------------------------------
// Tic-tac-toe
// ---------------------------------------------------------------------------

#[test]
fn tictactoe_every_cell_name() {
    for row in 0..3u8 {
        for column in 0..3u8 {
            let name = format!("{row}-{column}");
            let cell = row * 3 + column;
            for line in [
                format!(r#"{{"play":"{name}"}}"#),
                format!(r#"{{"name":"","play":"{name}","error":null}}"#),
                format!(" {{ \"error\": \"none\", \"play\" : \"{name}\" }}\n"),
            ] {
                assert_eq!(tictactoe::parse_play(&line), Ok(cell), "{line:?}");
            }
        }
    }
}

#[test]
fn tictactoe_bad_plays_give_the_exact_error() {
    let not_a_cell = [
        "3-0", "0-3", "0_1", "00", "0-", "-1", "", " 0-1", "0-1 ", "0--1", "1-1-1", "x", "a-b", "１-１",
    ];
    for name in not_a_cell {
        let line = format!(r#"{{"name":"bot","play":"{name}","error":null}}"#);
        let error = tictactoe::parse_play(&line).expect_err(name);
        assert_eq!(error, ReplyError::NotACell(name.to_string()), "{line}");
        assert!(error.to_string().contains(name), "{error} does not name {name:?}");
    }
    let wrong_type = [
        ("5", "5"),
        ("true", "true"),
        (r#"["0-1"]"#, r#"["0-1"]"#),
        (r#"{"r":0}"#, r#"{"r":0}"#),
        ("1.5", "1.5"),
    ];
    for (value, found) in wrong_type {
        let line = format!(r#"{{"play":{value}}}"#);
        let error = tictactoe::parse_play(&line).expect_err(value);
        assert!(
            matches!(&error, ReplyError::WrongType { field: "play", found: got, .. } if got == found),
            "{line} gave {error:?}"
        );
        assert!(error.to_string().contains(found), "{error} does not name {found:?}");
    }
    for line in [
        r#"{"play":null}"#,
        r#"{"name":"x","play":null,"error":null}"#,
        "{}",
        r#"{"move":"0-1"}"#,
    ] {
        assert_eq!(
            tictactoe::parse_play(line),
            Err(ReplyError::MissingField("play")),
            "{line}"
        );
    }
    for (line, found) in [(r#"["0-1"]"#, r#"["0-1"]"#), (r#""0-1""#, r#""0-1""#), ("null", "null")] {
        assert_eq!(
            tictactoe::parse_play(line),
            Err(ReplyError::NotAnObject(found.to_string())),
            "{line}"
        );
    }
    for line in ["0-1", "", "{play: \"0-1\"}", r#"{"play":"0-1""#] {
        assert!(
            matches!(tictactoe::parse_play(line), Err(ReplyError::NotJson { .. })),
            "{line}"
        );
    }
}

#[test]
fn tictactoe_init_reply_accepts_anything() {
    let game = TicTacToe::new();
    for line in [
        "garbage",
        "",
        "{}",
        r#"{"name":"my-bot"}"#,
        r#"{"name":"x","play":null,"error":null}"#,
        "\u{0}\u{ff}",
    ] {
        for side in Side::BOTH {
            assert_eq!(game.parse_reply(side, line), Ok(Action::Hello), "{side:?}: {line:?}");
        }
    }
}

#[test]
fn tictactoe_turn_replies_go_through_parse_play_after_init() {
    let mut game = TicTacToe::new();
    game.apply(&[(Side::First, Action::Hello), (Side::Second, Action::Hello)], 0)
        .expect("init");
    assert_eq!(game.parse_reply(Side::First, r#"{"play":"1-1"}"#), Ok(Action::Mark(4)));
    assert!(matches!(
        game.parse_reply(Side::First, "garbage"),
        Err(ReplyError::NotJson { .. })
    ));
    assert_eq!(
        game.parse_reply(Side::First, r#"{"name":"bot"}"#),
        Err(ReplyError::MissingField("play"))
    );
}
