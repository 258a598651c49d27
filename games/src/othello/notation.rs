//! Square names (`d3`, `J0`), pass spellings and the reply parser.

use super::{Mode, Move, Square};
use crate::ReplyError;
use crate::reply::{object, short_json};

/// The spellings of a pass, compared case-insensitively (besides the number -1).
pub const PASS_NAMES: [&str; 4] = ["pass", "pa", "ps", "--"];

/// The name of a square: column letter and row number, `a1`, `d3`, `j10`.
pub fn square_name(square: Square, size: u8) -> String {
    let column = (b'a' + square % size) as char;
    let row = square / size + 1;
    format!("{column}{row}")
}

/// Reads a square name case-insensitively: a column letter and a row
/// number; on 10×10 the tenth row may be written `10` or `0` (`j10` = `J0`).
pub fn parse_square(name: &str, size: u8) -> Option<Square> {
    let bytes = name.as_bytes();
    let (&letter, digits) = bytes.split_first()?;
    let column = letter.to_ascii_lowercase().checked_sub(b'a')?;
    if column >= size || digits.is_empty() || digits.len() > 2 || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let number: u8 = std::str::from_utf8(digits).ok()?.parse().ok()?;
    let row = match (number, size) {
        (0, 10) if digits.len() == 1 => 10,
        (n, _) if (1..=size).contains(&n) && !(digits.len() == 2 && digits[0] == b'0') => n,
        _ => return None,
    };
    Some((row - 1) * size + column)
}

/// Parses a reply line: `{"move": 19}`, `{"move": "d3"}`, `{"move": -1}`,
/// `{"move": "pass"}` (or `PA`, `PS`, `--`). Extra fields are ignored.
pub fn parse_reply(line: &str, mode: Mode) -> Result<Move, ReplyError> {
    let size = mode.board_size();
    let reply = object(line)?;
    let value = reply.get("move").ok_or(ReplyError::MissingField("move"))?;
    match value {
        serde_json::Value::Number(number) => {
            let cells = i64::from(size) * i64::from(size);
            // JSON does not tell integers from floats: 19.0 and 1.9e1 are 19.
            let whole = number.as_i64().or_else(|| {
                number
                    .as_f64()
                    .filter(|f| f.fract() == 0.0 && f.abs() < 1e6)
                    .map(|f| f as i64)
            });
            match whole {
                Some(-1) => Ok(Move::Pass),
                Some(n) if (0..cells).contains(&n) => Ok(Move::Place(n as Square)),
                _ => Err(ReplyError::NotASquare {
                    value: number.to_string(),
                    size,
                }),
            }
        }
        serde_json::Value::String(text) => {
            if PASS_NAMES.iter().any(|pass| text.eq_ignore_ascii_case(pass)) {
                return Ok(Move::Pass);
            }
            parse_square(text, size)
                .map(Move::Place)
                .ok_or_else(|| ReplyError::UnknownName {
                    value: text.clone(),
                    example: if size == 10 { "\"j10\"" } else { "\"d3\"" },
                })
        }
        other => Err(ReplyError::WrongType {
            field: "move",
            expected: "a square number, a square name or a pass",
            found: short_json(other),
        }),
    }
}

/// A move in transcript notation: a square name, or `--` for a pass.
pub fn move_name(mv: Move, size: u8) -> String {
    match mv {
        Move::Place(square) => square_name(square, size),
        Move::Pass => "--".to_string(),
    }
}
