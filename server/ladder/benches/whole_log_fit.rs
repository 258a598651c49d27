//! The whole-log rating fit at ladder scale, against the Glicko-2 replay of
//! the same log (what `arbiter ratings recompute` does) in the same run.
//!
//! A synthetic ladder: `ARBITER_BENCH_BOTS` versions (default 10 000) with
//! true strengths drawn around 1500 (σ 300), and `ARBITER_BENCH_MATCHES`
//! rated matches (default 1 000 000) between a version and one near it in
//! strength (within 200 places, as the scheduler pairs them; one in five
//! against anyone), with an outcome drawn from the
//! Elo model (a draw in five between equals, fewer as the gap grows). Prints the time of a
//! cold fit, of a warm refit after 1 000 more matches, of the Glicko-2
//! replay, and each method's error against the truth (RMS after removing
//! the mean) and fitted scale (slope of rating against truth).
//!
//! `cargo bench -p arbiter-ladder --bench whole_log_fit`. Nothing is
//! asserted; the figures are for the closing note and docs/spec/ladder.md.

use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem};
use arbiter_ladder::stats::bradley_terry::{FitSettings, PairResult, fit};
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};
use std::time::Instant;

fn setting(name: &str, default: usize) -> usize {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// A uniform number in [0, 1).
fn uniform(rng: &mut ChaCha8Rng) -> f64 {
    (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64
}

/// A standard normal number (Box–Muller).
fn normal(rng: &mut ChaCha8Rng) -> f64 {
    let u = uniform(rng).max(f64::MIN_POSITIVE);
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * uniform(rng)).cos()
}

/// Opponents within this many places in strength...
const WINDOW: u64 = 200;
/// ...except this share of matches, against anyone (newcomers placed,
/// house bots, tournaments).
const RANDOM_SHARE: f64 = 0.2;

/// Matches mostly between neighbours in strength, outcomes from the Elo model.
fn matches(truth: &[f64], by_strength: &[usize], count: usize, rng: &mut ChaCha8Rng) -> Vec<(usize, usize, Outcome)> {
    let n = truth.len();
    (0..count)
        .map(|_| {
            let rank = (rng.next_u64() % n as u64) as usize;
            let other = if uniform(rng) < RANDOM_SHARE {
                (rank + 1 + (rng.next_u64() % (n as u64 - 1)) as usize) % n
            } else {
                let offset = 1 + (rng.next_u64() % WINDOW) as usize;
                if rank + offset < n {
                    rank + offset
                } else {
                    rank - offset
                }
            };
            let (a, b) = (by_strength[rank], by_strength[other]);
            let expected = 1.0 / (1.0 + 10f64.powf((truth[b] - truth[a]) / 400.0));
            // Draws keep the expected score: a win is `expected − draw/2` likely.
            let draw = 0.4 * expected.min(1.0 - expected);
            let x = uniform(rng);
            let outcome = if x < draw {
                Outcome::Draw
            } else if x < draw + (expected - draw / 2.0) {
                Outcome::Win
            } else {
                Outcome::Loss
            };
            (a, b, outcome)
        })
        .collect()
}

fn to_results(log: &[(usize, usize, Outcome)]) -> Vec<PairResult> {
    log.iter()
        .map(|&(a, b, outcome)| PairResult {
            a,
            b,
            games: 1.0,
            points_a: outcome.points(),
        })
        .collect()
}

/// RMS error after removing the mean, and the slope of `rating` on `truth`.
fn quality(truth: &[f64], rating: &[f64]) -> (f64, f64) {
    let n = truth.len() as f64;
    let (mt, mr) = (truth.iter().sum::<f64>() / n, rating.iter().sum::<f64>() / n);
    let (mut sxy, mut sxx, mut se) = (0.0, 0.0, 0.0);
    for (t, r) in truth.iter().zip(rating) {
        sxy += (t - mt) * (r - mr);
        sxx += (t - mt) * (t - mt);
        se += ((r - mr) - (t - mt)).powi(2);
    }
    ((se / n).sqrt(), sxy / sxx)
}

fn main() {
    let bots = setting("ARBITER_BENCH_BOTS", 10_000);
    let count = setting("ARBITER_BENCH_MATCHES", 1_000_000);
    let mut rng = ChaCha8Rng::seed_from_u64(20261203);
    let truth: Vec<f64> = (0..bots).map(|_| 1500.0 + 300.0 * normal(&mut rng)).collect();
    let mut by_strength: Vec<usize> = (0..bots).collect();
    by_strength.sort_by(|&a, &b| truth[a].total_cmp(&truth[b]));
    let mut log = matches(&truth, &by_strength, count, &mut rng);
    println!("whole-log fit: {bots} versions, {count} matches (80% within {WINDOW} places in strength, 20% anyone)");

    let settings = FitSettings::default();
    let started = Instant::now();
    let cold = fit(bots, &to_results(&log), &settings, None).expect("a valid log");
    let cold_time = started.elapsed();
    let fitted: Vec<f64> = cold.ratings.iter().map(|f| f.rating).collect();

    log.extend(matches(&truth, &by_strength, 1_000, &mut rng));
    let started = Instant::now();
    let warm = fit(bots, &to_results(&log), &settings, Some(&fitted)).expect("a valid log");
    let warm_time = started.elapsed();

    let started = Instant::now();
    let mut book = RatingBook::new(RatingSystem::Glicko2);
    for &(a, b, outcome) in &log {
        book.apply(&a, &b, outcome);
    }
    let glicko_time = started.elapsed();
    let glicko: Vec<f64> = (0..bots).map(|i| book.get(&i).rating).collect();

    let (fit_rms, fit_scale) = quality(&truth, &warm.ratings.iter().map(|f| f.rating).collect::<Vec<_>>());
    let (glicko_rms, glicko_scale) = quality(&truth, &glicko);
    let median_interval = {
        let mut intervals: Vec<f64> = warm.ratings.iter().map(|f| f.interval).collect();
        intervals.sort_by(f64::total_cmp);
        intervals[intervals.len() / 2]
    };
    println!(
        "cold fit            {:>8.3} s  ({} Newton steps, converged: {})",
        cold_time.as_secs_f64(),
        cold.steps,
        cold.converged
    );
    println!(
        "warm refit (+1 000) {:>8.3} s  ({} Newton steps, converged: {})",
        warm_time.as_secs_f64(),
        warm.steps,
        warm.converged
    );
    println!(
        "Glicko-2 replay     {:>8.3} s  (the baseline: what recompute does)",
        glicko_time.as_secs_f64()
    );
    println!(
        "cold fit / Glicko-2 replay: {:.2}; warm refit / replay: {:.2}",
        cold_time.as_secs_f64() / glicko_time.as_secs_f64(),
        warm_time.as_secs_f64() / glicko_time.as_secs_f64()
    );
    println!(
        "error against the truth: fit RMS {fit_rms:.1}, scale {fit_scale:.3}; Glicko-2 RMS {glicko_rms:.1}, scale {glicko_scale:.3}"
    );
    println!("median 95% interval of the fit: ±{median_interval:.1}");
}
