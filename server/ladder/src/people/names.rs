//! Guest names: what a guest may call themselves in a game.

use crate::error::{Error, Result};

/// Characters a guest name may not hold: bidirectional controls (which can
/// make a name read as another) and invisible ones (zero-width spaces and
/// joiners, word joiners, the byte-order mark, the soft hyphen).
fn hidden_or_bidi(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The longest guest name, in characters (the " (guest)" the site adds is
/// not counted).
pub const MAX_GUEST_NAME_CHARS: usize = 32;

/// A guest's name, trimmed (empty: "Guest"), or why it is refused: longer
/// than [`MAX_GUEST_NAME_CHARS`], or holding control, bidirectional or
/// invisible characters.
pub fn check_guest_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() {
        return Ok("Guest".to_owned());
    }
    let chars = name.chars().count();
    if chars > MAX_GUEST_NAME_CHARS {
        return Err(Error::Invalid(format!(
            "a guest name is at most {MAX_GUEST_NAME_CHARS} characters; this one has {chars}"
        )));
    }
    if name.chars().any(|c| c.is_control() || hidden_or_bidi(c)) {
        return Err(Error::Invalid(
            "a guest name may not hold control, invisible or text-direction characters".to_owned(),
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guest_names_are_bounded_on_the_name_alone_and_free_of_hidden_characters() {
        assert_eq!(check_guest_name("  ").expect("empty is Guest"), "Guest");
        let longest = "x".repeat(MAX_GUEST_NAME_CHARS);
        assert_eq!(check_guest_name(&longest).expect("32 characters pass"), longest);
        assert!(check_guest_name(&"x".repeat(MAX_GUEST_NAME_CHARS + 1)).is_err());
        assert_eq!(check_guest_name("Zoë 🦊").expect("letters and emoji pass"), "Zoë 🦊");
        for bad in [
            "abc\u{202E}cba",
            "\u{200B}",
            "\u{200B}\u{200C}\u{2060}",
            "a\u{2066}b",
            "a\u{FEFF}",
            "a\nb",
        ] {
            assert!(check_guest_name(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
