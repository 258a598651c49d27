//! Match statistics: W/D/L, score and the Elo difference with its 95%
//! interval; the sequential test that decides between two Elo hypotheses
//! ([`sprt`]); a rating fitted to a whole log of results
//! ([`bradley_terry`]), with its covariance, and that fit de-stretched
//! for an adaptive design ([`destretch`]); Kendall's τ between two orders.

pub mod bradley_terry;
pub mod destretch;
pub mod sprt;

/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;

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

    /// The Elo difference implied by the score, and its 95% interval: the
    /// Wilson score interval of the match score (draws as half points,
    /// which only widens it). Lopsided results keep a finite bound on the
    /// side the data supports: a 20–0 sweep is `+inf` with a lower bound
    /// of about +287. `None` before any match.
    pub fn elo(&self) -> Option<(f64, f64, f64)> {
        let n = f64::from(self.matches());
        if n == 0.0 {
            return None;
        }
        let p = self.points() / n;
        let (low, high) = wilson(p, n, Z95);
        Some((elo(p), elo(low), elo(high)))
    }
}

/// The Wilson score interval for a proportion `p` observed over `n` trials
/// at `z` standard deviations: the `q` with `(p − q)² = z² q (1 − q) / n`.
/// Always within [0, 1]; 0 and 1 are reached only when `p` is.
pub fn wilson(p: f64, n: f64, z: f64) -> (f64, f64) {
    let z2 = z * z;
    let centre = (p + z2 / (2.0 * n)) / (1.0 + z2 / n);
    let half = z / (1.0 + z2 / n) * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let low = if p <= 0.0 { 0.0 } else { (centre - half).max(0.0) };
    let high = if p >= 1.0 { 1.0 } else { (centre + half).min(1.0) };
    (low, high)
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

/// The standard normal distribution function Φ(x), to within 1.5e-7
/// (Abramowitz and Stegun 7.1.26 for erf).
pub fn normal_cdf(x: f64) -> f64 {
    let z = x.abs() / std::f64::consts::SQRT_2;
    let t = 1.0 / (1.0 + 0.327_591_1 * z);
    let poly =
        t * (0.254_829_592 + t * (-0.284_496_736 + t * (1.421_413_741 + t * (-1.453_152_027 + t * 1.061_405_429))));
    let erf = 1.0 - poly * (-z * z).exp();
    if x >= 0.0 { 0.5 * (1.0 + erf) } else { 0.5 * (1.0 - erf) }
}

/// Formats an Elo value: `+35`, `-120`, `+inf`.
pub fn format_elo(value: f64) -> String {
    if value.is_infinite() {
        if value > 0.0 { "+inf".into() } else { "-inf".into() }
    } else {
        format!("{value:+.0}")
    }
}

/// Kendall's τ-b between `x` and `y` (paired values).
pub fn kendall_tau(pairs: &[(f64, f64)]) -> f64 {
    let n = pairs.len();
    let (mut concordant, mut discordant, mut tied_x, mut tied_y) = (0f64, 0f64, 0f64, 0f64);
    for i in 0..n {
        for j in i + 1..n {
            let dx = pairs[i].0 - pairs[j].0;
            let dy = pairs[i].1 - pairs[j].1;
            if dx == 0.0 {
                tied_x += 1.0;
            }
            if dy == 0.0 {
                tied_y += 1.0;
            }
            let product = dx.signum() * dy.signum();
            if dx != 0.0 && dy != 0.0 && product > 0.0 {
                concordant += 1.0;
            } else if dx != 0.0 && dy != 0.0 && product < 0.0 {
                discordant += 1.0;
            }
        }
    }
    let all = (n * n.saturating_sub(1) / 2) as f64;
    let denominator = ((all - tied_x) * (all - tied_y)).sqrt();
    if denominator > 0.0 {
        (concordant - discordant) / denominator
    } else {
        0.0
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
    fn a_clean_sweep_has_a_finite_lower_bound() {
        let record = Record {
            wins: 20,
            draws: 0,
            losses: 0,
        };
        let (mid, low, high) = record.elo().expect("played");
        assert_eq!((mid, high), (f64::INFINITY, f64::INFINITY));
        // Wilson: n / (n + z²) = 20 / 23.84 = 0.8389, i.e. +286.6 Elo.
        assert!((low - 286.6).abs() < 0.1, "{low}");
        assert_eq!(format_elo(f64::INFINITY), "+inf");
        let swept = Record {
            wins: 0,
            draws: 0,
            losses: 20,
        };
        let (mid, low, high) = swept.elo().expect("played");
        assert_eq!((mid, low), (f64::NEG_INFINITY, f64::NEG_INFINITY));
        assert!((high + 286.6).abs() < 0.1, "{high}");
    }

    #[test]
    fn the_normal_distribution_function_meets_its_table() {
        assert!((normal_cdf(0.0) - 0.5).abs() < 1e-9);
        assert!((normal_cdf(1.959_964) - 0.975).abs() < 2e-7);
        assert!((normal_cdf(-1.644_854) - 0.05).abs() < 2e-7);
        assert!((normal_cdf(1.0) - 0.841_344_7).abs() < 2e-7);
    }

    #[test]
    fn kendall_tau_of_known_orders() {
        let same = [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
        assert!((kendall_tau(&same) - 1.0).abs() < 1e-12);
        let reversed = [(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)];
        assert!((kendall_tau(&reversed) + 1.0).abs() < 1e-12);
        // One discordant pair of three: (2 − 1) / 3.
        let one_swap = [(1.0, 10.0), (2.0, 30.0), (3.0, 20.0)];
        assert!((kendall_tau(&one_swap) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn wilson_matches_its_closed_form() {
        // p = 0.5, n = 100: centre 0.5, half-width z/(1+z²/n)·sqrt(1/400 + z²/40000).
        let (low, high) = wilson(0.5, 100.0, Z95);
        assert!(
            (low - 0.403_831).abs() < 1e-6 && (high - 0.596_169).abs() < 1e-6,
            "{low} {high}"
        );
    }
}
