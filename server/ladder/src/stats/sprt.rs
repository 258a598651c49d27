//! The sequential probability ratio test fishtest runs on chess engines,
//! for deciding "is A at least `elo1` stronger than B, or at most `elo0`?"
//! with as few matches as the data allow.
//!
//! An Arbiter match is already a pair of games with sides swapped, so
//! results are counted as fishtest counts its paired openings: the
//! *pentanomial* frequencies of the first bot's points per pair
//! (0, ½, 1, 1½, 2). The log-likelihood ratio is the generalized one of
//! fishtest's `LLR_logistic` (Elo in the logistic model): for each
//! hypothesis, the distribution closest to the observed one (maximum
//! likelihood) whose expected score is that hypothesis's, then the
//! likelihood ratio of the two. Empty cells count as 0.001 of a pair, as
//! fishtest regularizes them. Bounds are Wald's: `ln(β / (1 − α))` and
//! `ln((1 − β) / α)`.

/// Pair outcomes of the first bot: `counts[k]` pairs in which it scored
/// `k / 2` points (`[LL, LD+DL, LW+DD+WL, DW+WD, WW]`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pentanomial {
    /// Pairs by points × 2.
    pub counts: [u32; 5],
}

impl Pentanomial {
    /// Counts one pair in which the first bot scored `points` (0, 0.5, 1,
    /// 1.5 or 2; anything else is rounded to the nearest half and clamped).
    pub fn add(&mut self, points: f64) {
        let index = (points * 2.0).round().clamp(0.0, 4.0);
        // A value in 0..=4 after the clamp.
        self.counts[index as usize] += 1;
    }

    /// Pairs counted.
    pub fn pairs(&self) -> u32 {
        self.counts.iter().sum()
    }
}

/// Which hypothesis the test accepted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hypothesis {
    /// The difference is at most `elo0`.
    H0,
    /// The difference is at least `elo1`.
    H1,
}

/// A test of H0 "A − B ≤ `elo0`" against H1 "A − B ≥ `elo1`" (logistic
/// Elo), with error rates `alpha` (accepting H1 when H0 holds) and `beta`
/// (accepting H0 when H1 holds).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sprt {
    /// H0's Elo difference.
    pub elo0: f64,
    /// H1's Elo difference; above `elo0`.
    pub elo1: f64,
    /// The type I error rate.
    pub alpha: f64,
    /// The type II error rate.
    pub beta: f64,
}

/// Why a test cannot be set up.
#[derive(Debug, PartialEq, thiserror::Error)]
pub enum BadSprt {
    /// Not `ELO0,ELO1`.
    #[error("expected ELO0,ELO1 (two numbers, e.g. 0,5), not {0:?}")]
    Format(String),
    /// `elo1` is not above `elo0`.
    #[error("ELO1 must be above ELO0 (got {0}, {1})")]
    Order(f64, f64),
    /// An error rate outside (0, ½).
    #[error("error rates must be between 0 and 0.5, not {0}")]
    Rate(f64),
}

impl Sprt {
    /// The test with fishtest's usual error rates, α = β = 0.05.
    pub fn new(elo0: f64, elo1: f64) -> Result<Sprt, BadSprt> {
        Sprt::with_rates(elo0, elo1, 0.05, 0.05)
    }

    /// The test with error rates `alpha` and `beta`.
    pub fn with_rates(elo0: f64, elo1: f64, alpha: f64, beta: f64) -> Result<Sprt, BadSprt> {
        if !(elo0.is_finite() && elo1.is_finite() && elo0 < elo1) {
            return Err(BadSprt::Order(elo0, elo1));
        }
        for rate in [alpha, beta] {
            if !(rate > 0.0 && rate < 0.5) {
                return Err(BadSprt::Rate(rate));
            }
        }
        Ok(Sprt {
            elo0,
            elo1,
            alpha,
            beta,
        })
    }

    /// The lower and upper bounds of the log-likelihood ratio: at or below
    /// the first H0 is accepted, at or above the second H1.
    pub fn bounds(&self) -> (f64, f64) {
        (
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        )
    }

    /// The log-likelihood ratio of H1 against H0 given `results`.
    pub fn llr(&self, results: &Pentanomial) -> f64 {
        llr_logistic(self.elo0, self.elo1, &results.counts)
    }

    /// The hypothesis accepted once the ratio is `llr`, if any yet.
    pub fn verdict(&self, llr: f64) -> Option<Hypothesis> {
        let (lower, upper) = self.bounds();
        if llr >= upper {
            Some(Hypothesis::H1)
        } else if llr <= lower {
            Some(Hypothesis::H0)
        } else {
            None
        }
    }
}

impl std::str::FromStr for Sprt {
    type Err = BadSprt;

    /// `ELO0,ELO1`, e.g. `0,5`.
    fn from_str(text: &str) -> Result<Sprt, BadSprt> {
        let bad = || BadSprt::Format(text.to_owned());
        let (elo0, elo1) = text.split_once(',').ok_or_else(bad)?;
        let elo0: f64 = elo0.trim().parse().map_err(|_| bad())?;
        let elo1: f64 = elo1.trim().parse().map_err(|_| bad())?;
        Sprt::new(elo0, elo1)
    }
}

/// The expected score of a player `elo` stronger, in the logistic model.
pub fn logistic_score(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// fishtest's `LLR_logistic`: the generalized log-likelihood ratio of
/// "score = L(elo1)" against "score = L(elo0)" for `counts`, a trinomial
/// (`[L, D, W]`) or pentanomial (`[LL, …, WW]`) frequency list.
pub fn llr_logistic(elo0: f64, elo1: f64, counts: &[u32]) -> f64 {
    if counts.len() < 2 {
        return 0.0;
    }
    // Empty cells get a small prior, as in fishtest.
    let counts: Vec<f64> = counts
        .iter()
        .map(|&c| if c == 0 { 1e-3 } else { f64::from(c) })
        .collect();
    let n: f64 = counts.iter().sum();
    let last = (counts.len() - 1) as f64;
    let pdf: Vec<(f64, f64)> = counts
        .iter()
        .enumerate()
        .map(|(i, c)| (i as f64 / last, c / n))
        .collect();
    let [p0, p1] = [elo0, elo1].map(|elo| closest_with_mean(&pdf, logistic_score(elo)));
    n * pdf
        .iter()
        .zip(p0.iter().zip(&p1))
        .map(|((_, p), (q0, q1))| p * (q1.ln() - q0.ln()))
        .sum::<f64>()
}

/// The probabilities, on `pdf`'s values, of the distribution with mean `s`
/// that is most likely given the observed `pdf`: `p_i / (1 + x (a_i − s))`
/// with `x` the root of the secular equation `Σ p_i (a_i − s) / (1 + x
/// (a_i − s)) = 0`.
fn closest_with_mean(pdf: &[(f64, f64)], s: f64) -> Vec<f64> {
    let shifted: Vec<(f64, f64)> = pdf.iter().map(|&(a, p)| (a - s, p)).collect();
    let x = secular_root(&shifted);
    shifted.iter().map(|&(a, p)| p / (1.0 + x * a)).collect()
}

/// The root of `f(x) = Σ p_i a_i / (1 + x a_i)` between `−1 / max a` and
/// `−1 / min a` (the values straddle zero), by bisection: `f` falls
/// strictly there, from +∞ to −∞.
fn secular_root(pdf: &[(f64, f64)]) -> f64 {
    let f = |x: f64| pdf.iter().map(|&(a, p)| p * a / (1.0 + x * a)).sum::<f64>();
    let max = pdf.iter().map(|&(a, _)| a).fold(f64::NEG_INFINITY, f64::max);
    let min = pdf.iter().map(|&(a, _)| a).fold(f64::INFINITY, f64::min);
    if !(min < 0.0 && max > 0.0) {
        // A mean outside the values: no distribution has it.
        return 0.0;
    }
    let epsilon = 1e-9;
    let (mut low, mut high) = (-1.0 / max + epsilon, -1.0 / min - epsilon);
    for _ in 0..200 {
        let middle = (low + high) / 2.0;
        if middle <= low || middle >= high {
            break;
        }
        if f(middle) > 0.0 {
            low = middle;
        } else {
            high = middle;
        }
    }
    (low + high) / 2.0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of fishtest's `LLRcalc.LLR_logistic` (server/fishtest/stats
    /// /LLRcalc.py at b8eecff2, run with SciPy 1.17.1) on fixed inputs.
    const FISHTEST: [(f64, f64, &[u32], f64); 8] = [
        (0.0, 5.0, &[10, 20, 40, 25, 15], 0.293_285_790_936),
        (0.0, 5.0, &[0, 3, 10, 4, 0], 0.052_863_895_909),
        (-5.0, 0.0, &[100, 205, 410, 190, 95], -0.259_869_127_752),
        (0.0, 10.0, &[0, 0, 0, 0, 20], 0.567_419_096_177),
        (0.0, 50.0, &[1, 2, 3, 5, 9], 2.034_586_722_680),
        (-10.0, 10.0, &[3, 0, 0, 0, 0], -0.172_808_844_895),
        (0.0, 5.0, &[30, 40, 30], -0.017_257_393_258),
        (0.0, 10.0, &[12, 5, 20], 0.248_653_967_609),
    ];

    #[test]
    fn llr_equals_fishtests_to_1e_6() {
        for (elo0, elo1, counts, expected) in FISHTEST {
            let llr = llr_logistic(elo0, elo1, counts);
            assert!(
                (llr - expected).abs() < 1e-6,
                "{elo0},{elo1} {counts:?}: {llr} vs fishtest's {expected}"
            );
        }
    }

    #[test]
    fn bounds_are_walds() {
        let sprt = Sprt::new(0.0, 5.0).expect("valid");
        let (lower, upper) = sprt.bounds();
        assert!((lower + 2.944_438_979).abs() < 1e-9 && (upper - 2.944_438_979).abs() < 1e-9);
        assert_eq!(sprt.verdict(3.0), Some(Hypothesis::H1));
        assert_eq!(sprt.verdict(-3.0), Some(Hypothesis::H0));
        assert_eq!(sprt.verdict(0.0), None);
    }

    #[test]
    fn a_bad_test_is_refused_in_words() {
        assert_eq!("5,0".parse::<Sprt>(), Err(BadSprt::Order(5.0, 0.0)));
        assert!(matches!("five".parse::<Sprt>(), Err(BadSprt::Format(_))));
        assert_eq!(Sprt::with_rates(0.0, 5.0, 0.0, 0.05), Err(BadSprt::Rate(0.0)));
        assert_eq!("-3, 2".parse::<Sprt>().map(|s| (s.elo0, s.elo1)), Ok((-3.0, 2.0)));
    }

    #[test]
    fn pairs_are_counted_by_points() {
        let mut results = Pentanomial::default();
        for points in [0.0, 0.5, 1.0, 1.0, 1.5, 2.0, 2.0, 2.0] {
            results.add(points);
        }
        assert_eq!(results.counts, [1, 1, 2, 1, 3]);
        assert_eq!(results.pairs(), 8);
    }

    #[test]
    fn the_mle_has_the_asked_mean() {
        let pdf = [(0.0, 0.1), (0.25, 0.2), (0.5, 0.4), (0.75, 0.2), (1.0, 0.1)];
        for s in [0.3, 0.5, 0.62] {
            let q = closest_with_mean(&pdf, s);
            let total: f64 = q.iter().sum();
            let mean: f64 = pdf.iter().zip(&q).map(|((a, _), q)| a * q).sum();
            assert!(
                (total - 1.0).abs() < 1e-9 && (mean - s).abs() < 1e-9,
                "{s}: {total} {mean}"
            );
        }
    }
}
