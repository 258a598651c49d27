//! Match statistics: W/D/L, score and the Elo difference with its 95%
//! interval.

/// Wins, draws and losses of one side over a series of matches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    /// Matches won.
    pub wins: u32,
    /// Matches drawn.
    pub draws: u32,
    /// Matches lost.
    pub losses: u32,
}

impl Record {
    /// Matches played.
    pub fn matches(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// Points: 1 per win, ½ per draw.
    pub fn points(&self) -> f64 {
        f64::from(self.wins) + f64::from(self.draws) / 2.0
    }

    /// The Elo difference implied by the score, with the 95% interval from
    /// the spread of match results (normal approximation). `None` before any
    /// match.
    pub fn elo(&self) -> Option<(f64, f64, f64)> {
        let n = f64::from(self.matches());
        if n == 0.0 {
            return None;
        }
        let p = self.points() / n;
        let variance = (f64::from(self.wins) * (1.0 - p).powi(2)
            + f64::from(self.draws) * (0.5 - p).powi(2)
            + f64::from(self.losses) * p.powi(2))
            / n;
        let margin = 1.96 * (variance / n).sqrt();
        Some((elo(p), elo(p - margin), elo(p + margin)))
    }
}

/// The Elo difference for an expected score `p`; ±infinity at 0 and 1.
pub fn elo(p: f64) -> f64 {
    if p <= 0.0 {
        f64::NEG_INFINITY
    } else if p >= 1.0 {
        f64::INFINITY
    } else {
        -400.0 * (1.0 / p - 1.0).log10()
    }
}

/// Formats an Elo value: `+35`, `-120`, `+inf`.
pub fn format_elo(value: f64) -> String {
    if value.is_infinite() {
        if value > 0.0 { "+inf".into() } else { "-inf".into() }
    } else {
        format!("{value:+.0}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn even_score_is_zero_elo() {
        let record = Record {
            wins: 5,
            draws: 0,
            losses: 5,
        };
        let (mid, low, high) = record.elo().expect("played");
        assert!(mid.abs() < 1e-9);
        assert!(low < -100.0 && high > 100.0, "{low} {high}");
    }

    #[test]
    fn three_quarters_is_about_191_elo() {
        let record = Record {
            wins: 75,
            draws: 0,
            losses: 25,
        };
        let (mid, low, high) = record.elo().expect("played");
        assert!((mid - 190.85).abs() < 0.1, "{mid}");
        assert!(low < mid && mid < high);
    }

    #[test]
    fn a_clean_sweep_is_infinite() {
        let record = Record {
            wins: 3,
            draws: 0,
            losses: 0,
        };
        assert_eq!(record.elo().map(|e| e.0), Some(f64::INFINITY));
        assert_eq!(format_elo(f64::INFINITY), "+inf");
    }
}
