//! The fit de-stretched: what a parametric bootstrap under the ladder's own
//! design teaches about the whole-log fit, as a correction of its ratings
//! and intervals.
//!
//! Under an adaptive scheduler (who meets whom depends on the ratings so
//! far) the fit's scale comes out stretched: a fitted gap is wider than the
//! real one, most at the top and the bottom (docs/spec/ladder.md,
//! "Intervals and the de-stretched scale"). The bootstrap plays the design
//! again with known strengths (the current estimate) and refits; each
//! replicate's bots give points (true strength, refitted rating, refitted
//! interval). [`Correction::learn`] fits a monotone map from truth to refit
//! to those points, `refit = c + a·x + b·x³` with `x` the distance from the
//! centre (`a > 0`, `b ≥ 0`; `b = 0` with [`DestretchSettings::cubic`]
//! off), and the factor the intervals need to hold 95% of the replicates'
//! errors, by distance from the centre. [`Correction::apply`] inverts the
//! map: every rating moves to the truth whose refit it is (the order is
//! kept, so Kendall's τ and every "above next" chance are unchanged), and
//! every interval is divided by the map's slope there and widened.
//!
//! Guarantees: the corrected ratings keep the fit's order and its mean;
//! the map's slope at the centre (the stretch) is kept within
//! [`DestretchSettings::max_stretch`] of 1 either way, and a clamped
//! correction says so ([`Correction::clamped`]), so a young ladder whose
//! replicates are mostly noise cannot get an absurd scale.

use super::bradley_terry::Fitted;

/// How a correction is learned. The default (one factor, one widening,
/// the 96th percentile, the stretch within 1/1.5..1.5) is what the
/// simulator measured best on its tuning seeds (docs/spec/ladder.md): the
/// cubic term and banded widenings gained nothing there (the stretch does
/// not grow away from the centre), and the 95th percentile held 92% of
/// the bots, not 95%, because the replicates' truth is itself an estimate.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DestretchSettings {
    /// Whether the map has a cubic term (a stretch that grows away from
    /// the centre); otherwise one factor.
    pub cubic: bool,
    /// Bands of distance from the centre (each 2.5 / `bands` standard
    /// deviations of the truth wide, the last open) with a widening of
    /// their own; 1 gives one widening for all.
    pub bands: usize,
    /// The share of the replicates' errors the widened intervals hold.
    pub quantile: f64,
    /// The stretch is kept within `1 / max_stretch ..= max_stretch`.
    pub max_stretch: f64,
}

impl Default for DestretchSettings {
    fn default() -> DestretchSettings {
        DestretchSettings {
            cubic: false,
            bands: 1,
            quantile: 0.96,
            max_stretch: 1.5,
        }
    }
}

/// A learned correction of a fit (see the module's docs).
#[derive(Clone, Debug, PartialEq)]
pub struct Correction {
    /// The centre of the truth (the fit's anchor, usually).
    centre: f64,
    /// The refit's centre.
    refit_centre: f64,
    /// Linear coefficient (the stretch at the centre).
    a: f64,
    /// Cubic coefficient, per Elo³.
    b: f64,
    /// Standard deviation of the truth the correction was learned at.
    spread: f64,
    /// Widening per band of distance from the centre.
    widening: Vec<f64>,
    /// Whether the stretch was clamped.
    clamped: bool,
}

impl Correction {
    /// No correction: ratings and intervals as fitted.
    pub fn none() -> Correction {
        Correction {
            centre: 0.0,
            refit_centre: 0.0,
            a: 1.0,
            b: 0.0,
            spread: 1.0,
            widening: vec![1.0],
            clamped: false,
        }
    }

    /// Learns a correction from the replicates' `points`: (true strength,
    /// refitted rating, refitted interval's half-width), all on the fit's
    /// scale. Fewer than 3 points give [`Correction::none`].
    pub fn learn(points: &[(f64, f64, f64)], settings: &DestretchSettings) -> Correction {
        let usable: Vec<(f64, f64, f64)> = points
            .iter()
            .copied()
            .filter(|p| p.0.is_finite() && p.1.is_finite() && p.2.is_finite() && p.2 > 0.0)
            .collect();
        if usable.len() < 3 {
            return Correction::none();
        }
        let n = usable.len() as f64;
        let centre = usable.iter().map(|p| p.0).sum::<f64>() / n;
        let refit_centre = usable.iter().map(|p| p.1).sum::<f64>() / n;
        let spread = (usable.iter().map(|p| (p.0 - centre).powi(2)).sum::<f64>() / n)
            .sqrt()
            .max(1.0);
        // Least squares of y = a·x + b·x³ (x in spreads, for conditioning).
        let (mut s11, mut s13, mut s33, mut s1y, mut s3y) = (0.0, 0.0, 0.0, 0.0, 0.0);
        for &(t, r, _) in &usable {
            let x = (t - centre) / spread;
            let y = (r - refit_centre) / spread;
            s11 += x * x;
            s13 += x.powi(4);
            s33 += x.powi(6);
            s1y += x * y;
            s3y += x.powi(3) * y;
        }
        let linear = if s11 > 0.0 { s1y / s11 } else { 1.0 };
        let det = s11 * s33 - s13 * s13;
        let (mut a, mut b) = if settings.cubic && det > 1e-9 * s11 * s33 {
            ((s1y * s33 - s3y * s13) / det, (s11 * s3y - s13 * s1y) / det)
        } else {
            (linear, 0.0)
        };
        if !(a > 0.0 && b >= 0.0) {
            (a, b) = (linear, 0.0);
        }
        let max = settings.max_stretch.max(1.0);
        let mut clamped = false;
        if !(a.is_finite() && a >= 1.0 / max && a <= max) {
            a = if a.is_finite() { a.clamp(1.0 / max, max) } else { 1.0 };
            b = 0.0;
            clamped = true;
        }
        // The slope 2.5 spreads out stays within the bound too.
        if a + 3.0 * b * 6.25 > max {
            b = ((max - a) / 18.75).max(0.0);
            clamped = true;
        }
        let mut correction = Correction {
            centre,
            refit_centre,
            a,
            b: b / (spread * spread),
            spread,
            widening: vec![1.0; settings.bands.max(1)],
            clamped,
        };
        let mut ratios: Vec<Vec<f64>> = vec![Vec::new(); correction.widening.len()];
        for &(t, r, interval) in &usable {
            let estimate = correction.truth_of(r);
            let band = correction.band(estimate);
            ratios[band].push((estimate - t).abs() / (interval / correction.slope(estimate)));
        }
        for (widening, mut ratios) in correction.widening.iter_mut().zip(ratios) {
            ratios.sort_by(f64::total_cmp);
            let k = ((ratios.len() as f64 * settings.quantile) as usize).min(ratios.len().saturating_sub(1));
            *widening = ratios.get(k).copied().unwrap_or(1.0).max(1.0);
        }
        correction
    }

    /// The stretch at the centre: how much wider a fitted gap there is
    /// than the real one.
    pub fn stretch(&self) -> f64 {
        self.a
    }

    /// Whether the learned stretch fell outside the allowed range and was
    /// clamped to it.
    pub fn clamped(&self) -> bool {
        self.clamped
    }

    /// The widening of the interval of a (corrected) rating `estimate`.
    pub fn widening(&self, estimate: f64) -> f64 {
        self.widening[self.band(estimate)]
    }

    /// The widenings by band, from the centre out.
    pub fn widenings(&self) -> &[f64] {
        &self.widening
    }

    fn band(&self, estimate: f64) -> usize {
        let bands = self.widening.len();
        let distance = (estimate - self.centre).abs() / self.spread;
        ((distance / 2.5 * bands as f64) as usize).min(bands - 1)
    }

    /// The refit a truth `t` gives, on average.
    fn refit_of(&self, t: f64) -> f64 {
        let x = t - self.centre;
        self.refit_centre + self.a * x + self.b * x * x * x
    }

    /// The map's slope at `t`.
    fn slope(&self, t: f64) -> f64 {
        let x = t - self.centre;
        self.a + 3.0 * self.b * x * x
    }

    /// The truth whose refit is `rating` (the map is increasing, so there
    /// is one).
    pub fn truth_of(&self, rating: f64) -> f64 {
        let mut t = self.centre + (rating - self.refit_centre) / self.a;
        for _ in 0..60 {
            let step = (self.refit_of(t) - rating) / self.slope(t);
            t -= step;
            if step.is_nan() || step.abs() <= 1e-9 {
                break;
            }
        }
        t
    }

    /// `fitted` corrected: each rating moved to the truth whose refit it is,
    /// then all shifted so that their mean stays the fit's; each interval
    /// divided by the map's slope there and widened. A rating without games
    /// (infinite interval) keeps its place at the mean.
    pub fn apply(&self, fitted: &[Fitted]) -> Vec<Fitted> {
        if fitted.is_empty() {
            return Vec::new();
        }
        let n = fitted.len() as f64;
        let mean = fitted.iter().map(|f| f.rating).sum::<f64>() / n;
        let moved: Vec<f64> = fitted.iter().map(|f| self.truth_of(f.rating)).collect();
        let shift = mean - moved.iter().sum::<f64>() / n;
        fitted
            .iter()
            .zip(moved)
            .map(|(f, m)| {
                let slope = self.slope(m);
                Fitted {
                    rating: m + shift,
                    interval: self.widening(m) * f.interval / slope,
                    conditional: f.conditional / slope,
                    games: f.games,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fitted(rating: f64) -> Fitted {
        Fitted {
            rating,
            interval: 50.0,
            conditional: 40.0,
            games: 100.0,
        }
    }

    #[test]
    fn a_uniform_stretch_is_divided_out_and_the_order_and_mean_kept() {
        // Refits 1.2 times as far from 1500 as the truth, errors ±10.
        let points: Vec<(f64, f64, f64)> = (0..200)
            .map(|i| {
                let t = 1500.0 + f64::from(i - 100) * 4.0;
                let noise = if i % 2 == 0 { 10.0 } else { -10.0 };
                (t, 1500.0 + 1.2 * (t - 1500.0) + noise, 30.0)
            })
            .collect();
        let linear = DestretchSettings {
            cubic: false,
            ..DestretchSettings::default()
        };
        let c = Correction::learn(&points, &linear);
        assert!((c.stretch() - 1.2).abs() < 0.01, "{c:?}");
        assert!(!c.clamped());
        let ratings = [fitted(1260.0), fitted(1500.0), fitted(1860.0)];
        let out = c.apply(&ratings);
        assert!(out[0].rating < out[1].rating && out[1].rating < out[2].rating);
        let mean = out.iter().map(|f| f.rating).sum::<f64>() / 3.0;
        assert!((mean - 1540.0).abs() < 1e-6, "{out:?}");
        assert!(((out[2].rating - out[0].rating) - 600.0 / 1.2).abs() < 2.0, "{out:?}");
        // The interval: 50 / 1.2, widened to hold 95% of errors of 10 / (30 / 1.2).
        assert!(out[1].interval >= 50.0 / 1.2 - 1e-9, "{out:?}");
        let cubic = DestretchSettings {
            cubic: true,
            ..DestretchSettings::default()
        };
        let cubic = Correction::learn(&points, &cubic);
        assert!((cubic.truth_of(1860.0) - 1800.0).abs() < 3.0, "{cubic:?}");
    }

    #[test]
    fn a_stretch_growing_outwards_is_learned_by_the_cubic_map() {
        let points: Vec<(f64, f64, f64)> = (0..200)
            .map(|i| {
                let x = f64::from(i - 100) * 4.0;
                (1500.0 + x, 1500.0 + 1.1 * x + 2e-7 * x * x * x, 30.0)
            })
            .collect();
        let cubic = DestretchSettings {
            cubic: true,
            ..DestretchSettings::default()
        };
        let c = Correction::learn(&points, &cubic);
        let x: f64 = 350.0;
        let refit = 1500.0 + 1.1 * x + 2e-7 * x.powi(3);
        assert!((c.truth_of(refit) - (1500.0 + x)).abs() < 0.5, "{c:?}");
        assert!((c.truth_of(1500.0) - 1500.0).abs() < 0.5, "{c:?}");
    }

    #[test]
    fn noise_cannot_make_the_scale_absurd() {
        // Refits three times as spread as the truth: clamped, and said so.
        let points: Vec<(f64, f64, f64)> = (0..20)
            .map(|i| {
                let t = 1500.0 + f64::from(i - 10) * 10.0;
                (t, 1500.0 + 3.0 * (t - 1500.0), 30.0)
            })
            .collect();
        let c = Correction::learn(&points, &DestretchSettings::default());
        assert!(c.clamped() && c.stretch() <= 1.5, "{c:?}");
        assert_eq!(
            Correction::learn(&points[..2], &DestretchSettings::default()),
            Correction::none()
        );
        let same = Correction::none().apply(&[fitted(1400.0), fitted(1600.0)]);
        assert_eq!(same, vec![fitted(1400.0), fitted(1600.0)]);
    }
}
