//! Match seeds: the one place a queued match's seed is drawn, for ranked
//! matches, challenges and tournaments alike.
//!
//! A seed is 8 bytes from the operating system's random source read as a
//! little-endian integer with the sign bit cleared, so the same bytes give
//! the same seed on every platform (a seed is stored with its match, and a
//! replay is re-run from it).

use crate::error::{Error, Result};

/// A fresh random match seed, never negative. When the operating system
/// gives no randomness, no seed is drawn: [`Error::Internal`], whose cause
/// says so ("no randomness for a match seed: …").
pub fn random_seed() -> Result<i64> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| Error::Internal(format!("no randomness for a match seed: {e}")))?;
    Ok(seed_from_bytes(bytes))
}

/// The seed that `bytes` make: little-endian, sign bit cleared. The same
/// bytes give the same seed on every platform.
pub fn seed_from_bytes(bytes: [u8; 8]) -> i64 {
    i64::from_le_bytes(bytes) & i64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_read_bytes_little_endian_on_every_platform() {
        assert_eq!(seed_from_bytes([1, 0, 0, 0, 0, 0, 0, 0]), 1);
        assert_eq!(seed_from_bytes([0x01, 0x02, 0, 0, 0, 0, 0, 0]), 0x0201);
        // The last byte is the most significant: its top bit (the sign) is cleared.
        assert_eq!(seed_from_bytes([0, 0, 0, 0, 0, 0, 0, 0x80]), 0);
        assert_eq!(seed_from_bytes([0xff; 8]), i64::MAX);
    }

    #[test]
    fn random_seeds_are_never_negative() {
        for _ in 0..64 {
            assert!(random_seed().expect("randomness") >= 0);
        }
    }
}
