//! Why a reply line is not a valid reply.

/// A reply that could not be read as an action. Each variant names the
/// offending input so a bot author can fix it; it costs the bot the game as
/// `bad_reply`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// The line is not JSON at all.
    #[error("reply {line:?} is not JSON ({reason})")]
    NotJson {
        /// The line, cut to 40 characters.
        line: String,
        /// What the JSON parser said.
        reason: String,
    },
    /// The line is JSON but not an object.
    #[error("reply must be a JSON object, got {0}")]
    NotAnObject(String),
    /// A required field is missing.
    #[error("reply has no `{0}` field")]
    MissingField(&'static str),
    /// A field has the wrong JSON type.
    #[error("`{field}` must be {expected}, got {found}")]
    WrongType {
        /// The field.
        field: &'static str,
        /// What was expected, in words.
        expected: &'static str,
        /// What came, as JSON.
        found: String,
    },
    /// A number that is not a square of the board.
    #[error("{value} is not a square of the {size}x{size} board (0..{last}, or -1 to pass)", last = u16::from(*size) * u16::from(*size) - 1)]
    NotASquare {
        /// The number, as JSON.
        value: String,
        /// The board size.
        size: u8,
    },
    /// A string that is neither a square name nor a pass.
    #[error("{value:?} is not a square name like {example} or a pass (\"pass\", \"PA\", \"PS\", \"--\", -1)")]
    UnknownName {
        /// The string as written, cut to 40 characters.
        value: String,
        /// An example of a valid name on this board.
        example: &'static str,
    },
    /// Tic-tac-toe: a `play` value that is not `"R-C"` with R and C in 0..2.
    #[error("{0:?} is not a cell like \"0-2\" (row-column, each 0..2)")]
    NotACell(String),
}

/// Parses `line` as a JSON object, for reply parsers.
pub(crate) fn object(line: &str) -> Result<serde_json::Map<String, serde_json::Value>, ReplyError> {
    let value: serde_json::Value = serde_json::from_str(line).map_err(|e| ReplyError::NotJson {
        line: shorten(line),
        reason: e.to_string(),
    })?;
    match value {
        serde_json::Value::Object(map) => Ok(map),
        other => Err(ReplyError::NotAnObject(short_json(&other))),
    }
}

/// A JSON value shortened for an error message.
pub(crate) fn short_json(value: &serde_json::Value) -> String {
    shorten(&value.to_string())
}

/// `text` cut to at most 40 bytes (at a character boundary), with `…` when cut.
pub(crate) fn shorten(text: &str) -> String {
    if text.len() <= 40 {
        text.to_string()
    } else {
        let cut = (0..=40).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        format!("{}…", &text[..cut])
    }
}
