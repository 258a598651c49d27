//! A rating fitted to a whole log of results: the Bradley–Terry model on the
//! Elo scale, by maximum likelihood, as engine rating lists (Ordo, BayesElo)
//! fit theirs.
//!
//! An incremental system such as Glicko-2 moves a rating once per result,
//! so its scale depends on who met whom and in which order. This fit weighs
//! every result alike, whenever it was played: the expected score of `a`
//! against `b` is `1 / (1 + 10^((r_b − r_a) / 400))`, and the ratings are
//! those under which the observed scores are most likely. A draw counts as
//! half a point (as in Ordo).
//!
//! Guarantees:
//! - the result does not depend on the order of `results`, nor on the order
//!   of the two players within one result;
//! - with `prior_draws > 0` every rating of a player with games is finite,
//!   also for a player who never lost or never won: each player is given
//!   about that many virtual draws, spread over the opponents it met in
//!   proportion to the games against each (BayesElo's prior). The prior
//!   pulls each pair's difference towards 0 by the share it adds to that
//!   pair's games, and nothing else: it does not pull ratings towards a
//!   common centre, which would shrink the whole scale (with one virtual
//!   draw per player against a virtual player at the mean, 10 000 players
//!   with 200 games each among neighbours came out with a scale of 0.93:
//!   the prior's pull adds up over a whole pool while the games that resist
//!   it link near neighbours only);
//! - a player without games stays at the pool's centre, with an infinite
//!   interval;
//! - the ratings are placed on the scale by the [`Anchor`] exactly.
//!
//! The interval of a rating is its 95% interval on the anchored scale,
//! from the full covariance of the fit: the inverse of the Fisher
//! information (the prior's virtual games included) under the anchor's
//! constraint (with [`Anchor::Mean`], the Moore–Penrose inverse of the
//! information, whose null space is a common shift; with
//! [`Anchor::Player`], the inverse without that player), times the
//! log's dispersion: the Pearson χ² of the results over its degrees of
//! freedom, because a result with draws varies less than a win or a loss
//! (a two-game match between equals is drawn about 40% of the time, and
//! its score then varies like 0.6 of a coin's). Two ratings' gap has an
//! interval of its own ([`Fit::gap`]) and a chance of being in the right
//! order ([`Fit::order_probability`]). The interval with every other
//! rating held at its estimate ([`Fitted::conditional`]) is kept for
//! comparison: it ignores how uncertain the neighbours are, and under an
//! adaptive scheduler (who meets whom depends on the ratings) it did not
//! cover. Above [`COVARIANCE_LIMIT`] players the covariance is not formed
//! (a dense inverse) and the interval is the conditional one times the
//! dispersion's square root, flagged by [`Fit::covariance`] being `None`.

use std::collections::HashMap;

/// The Elo scale: rating points per natural-log unit of odds.
const ELO_PER_NAT: f64 = 400.0 / std::f64::consts::LN_10;
/// Conjugate-gradient iterations per Newton step at most.
const CG_ITERATIONS: usize = 400;
/// z for a two-sided 95% interval.
const Z95: f64 = 1.959_963_984_540_054;
/// Players at most for which the full covariance is formed (a dense
/// Cholesky factorisation and inverse, about a tenth of a second at 1 000
/// players in a release build).
pub const COVARIANCE_LIMIT: usize = 1500;

/// What one player scored against another over some games.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairResult {
    /// The first player (an index below the number of players).
    pub a: usize,
    /// The second player.
    pub b: usize,
    /// How many games (a positive number; a match counts as one).
    pub games: f64,
    /// The points `a` scored over those games: 1 a win, ½ a draw.
    pub points_a: f64,
}

/// Where the fitted ratings sit on the scale.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Anchor {
    /// The mean of all ratings is this.
    Mean(f64),
    /// One player's rating is this (a house bot, say).
    Player {
        /// The player's index.
        index: usize,
        /// Its rating.
        rating: f64,
    },
}

/// How a fit is made.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FitSettings {
    /// Virtual draws per player, spread over its opponents in proportion to
    /// its games against each, so that no rating is infinite. Default 1; 0
    /// gives the plain maximum likelihood, which is infinite for a player
    /// who never lost or never won.
    pub prior_draws: f64,
    /// Where the ratings sit. Default: a mean of 1500.
    pub anchor: Anchor,
    /// The fit stops once no rating moves by more than this many points in
    /// a step. Default 0.001.
    pub tolerance: f64,
    /// Newton steps at most. Default 100.
    pub max_steps: u32,
}

impl Default for FitSettings {
    fn default() -> FitSettings {
        FitSettings {
            prior_draws: 1.0,
            anchor: Anchor::Mean(1500.0),
            tolerance: 0.001,
            max_steps: 100,
        }
    }
}

/// One player's fitted rating.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Fitted {
    /// The rating.
    pub rating: f64,
    /// Half the width of its 95% interval on the anchored scale, from the
    /// full covariance (see the module's docs); infinite for a player with
    /// no games.
    pub interval: f64,
    /// Half the width of its 95% interval with every other rating held at
    /// its estimate (the Fisher information of its own strength alone, no
    /// dispersion): narrower, and not a covering interval.
    pub conditional: f64,
    /// The games it played (without the prior's).
    pub games: f64,
}

/// The outcome of [`fit`].
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    /// One rating per player, by index.
    pub ratings: Vec<Fitted>,
    /// Newton steps taken.
    pub steps: u32,
    /// Whether the fit met its tolerance within `max_steps`.
    pub converged: bool,
    /// The Pearson χ² of the results over its degrees of freedom (1 when
    /// the results vary as much as wins and losses would; below with
    /// draws; 1 when there are too few results to tell). It multiplies the
    /// covariance.
    pub dispersion: f64,
    /// The covariance of the ratings on the anchored scale; `None` above
    /// [`COVARIANCE_LIMIT`] players or when the results do not connect the
    /// players (then only differences within a connected group are
    /// defined).
    pub covariance: Option<Covariance>,
}

/// The covariance of fitted ratings (Elo²) on the anchored scale, over
/// the players with games.
#[derive(Clone, Debug, PartialEq)]
pub struct Covariance {
    /// Each player's row, `None` for a player without games.
    rows: Vec<Option<usize>>,
    /// Rows (and columns).
    size: usize,
    /// Row-major, `size × size`.
    matrix: Vec<f64>,
}

impl Covariance {
    /// The covariance of players `i` and `j`, Elo²; `None` if either has no
    /// games.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        let (a, b) = (
            self.rows.get(i).copied().flatten()?,
            self.rows.get(j).copied().flatten()?,
        );
        Some(self.matrix[a * self.size + b])
    }

    /// The standard deviation of `rating_i − rating_j`, Elo.
    pub fn gap_sd(&self, i: usize, j: usize) -> Option<f64> {
        let variance = self.get(i, i)? + self.get(j, j)? - 2.0 * self.get(i, j)?;
        Some(variance.max(0.0).sqrt())
    }
}

impl Fit {
    /// The gap `rating_i − rating_j` and half the width of its 95%
    /// interval; `None` without the covariance or for a player without
    /// games.
    pub fn gap(&self, i: usize, j: usize) -> Option<(f64, f64)> {
        let sd = self.covariance.as_ref()?.gap_sd(i, j)?;
        Some((self.ratings[i].rating - self.ratings[j].rating, Z95 * sd))
    }

    /// The chance that `i` is stronger than `j` given the results (the
    /// normal approximation of the fit: Φ(gap / its standard deviation));
    /// `None` as for [`Fit::gap`].
    pub fn order_probability(&self, i: usize, j: usize) -> Option<f64> {
        let (gap, half) = self.gap(i, j)?;
        let sd = half / Z95;
        Some(if sd > 0.0 {
            super::normal_cdf(gap / sd)
        } else if gap > 0.0 {
            1.0
        } else if gap < 0.0 {
            0.0
        } else {
            0.5
        })
    }
}

/// Why a fit cannot be made.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FitError {
    /// A result names a player at or beyond the number of players, or a
    /// player against itself.
    #[error("result {0} names a player that is not in the fit, or the same player twice")]
    BadPlayer(usize),
    /// A result's games are not positive, or its points not within them.
    #[error("result {0} has {1} games and {2} points: games must be positive and points between 0 and games")]
    BadScore(usize, f64, f64),
    /// The anchor names a player that is not in the fit.
    #[error("the anchor names player {0}, which is not in the fit")]
    BadAnchor(usize),
    /// The prior is negative or not a number.
    #[error("the prior must be a number of draws, 0 or more")]
    BadPrior,
}

/// The results between each pair of players, summed: a symmetric sparse
/// matrix of games, with each player's points.
struct Pairs {
    /// `offsets[i]..offsets[i + 1]` index player `i`'s opponents.
    offsets: Vec<usize>,
    /// The opponent and the games against it.
    opponents: Vec<(usize, f64)>,
    /// Points per player.
    points: Vec<f64>,
    /// Games per player (without the prior's).
    games: Vec<f64>,
}

impl Pairs {
    /// Sums `results` per pair and adds `prior` virtual draws per player
    /// (see [`FitSettings::prior_draws`]).
    fn new(players: usize, results: &[PairResult], prior: f64) -> Result<Pairs, FitError> {
        let mut games_between: HashMap<(usize, usize), f64> = HashMap::new();
        let mut points = vec![0.0; players];
        let mut games = vec![0.0; players];
        for (k, result) in results.iter().enumerate() {
            let PairResult {
                a,
                b,
                games: n,
                points_a,
            } = *result;
            if a >= players || b >= players || a == b {
                return Err(FitError::BadPlayer(k));
            }
            if !(n > 0.0 && n.is_finite() && (0.0..=n).contains(&points_a)) {
                return Err(FitError::BadScore(k, n, points_a));
            }
            *games_between.entry((a.min(b), a.max(b))).or_default() += n;
            points[a] += points_a;
            points[b] += n - points_a;
            games[a] += n;
            games[b] += n;
        }
        let mut degree = vec![0usize; players + 1];
        for &(a, b) in games_between.keys() {
            degree[a + 1] += 1;
            degree[b + 1] += 1;
        }
        for i in 0..players {
            degree[i + 1] += degree[i];
        }
        let offsets = degree;
        let mut next = offsets.clone();
        let mut opponents = vec![(0, 0.0); offsets[players]];
        // Sorted, so that sums run in the same order on every run.
        let mut sorted: Vec<_> = games_between.into_iter().collect();
        sorted.sort_by_key(|&(pair, _)| pair);
        for ((a, b), n) in sorted {
            // Each side gives the pair its share of its own prior; the
            // virtual games are draws, half a point each way.
            let virtual_draws = prior * (n / games[a] + n / games[b]) / 2.0;
            points[a] += virtual_draws / 2.0;
            points[b] += virtual_draws / 2.0;
            let n = n + virtual_draws;
            opponents[next[a]] = (b, n);
            next[a] += 1;
            opponents[next[b]] = (a, n);
            next[b] += 1;
        }
        Ok(Pairs {
            offsets,
            opponents,
            points,
            games,
        })
    }

    fn of(&self, i: usize) -> &[(usize, f64)] {
        &self.opponents[self.offsets[i]..self.offsets[i + 1]]
    }
}

/// The logistic function: the expected score at a difference of `x` nats.
fn expected(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Fits ratings for `players` players to `results` (see the module's docs).
/// `start`, ratings from an earlier fit, makes a refit after a few more
/// results take a step or two; it changes nothing else.
pub fn fit(
    players: usize,
    results: &[PairResult],
    settings: &FitSettings,
    start: Option<&[f64]>,
) -> Result<Fit, FitError> {
    if !(settings.prior_draws >= 0.0 && settings.prior_draws.is_finite()) {
        return Err(FitError::BadPrior);
    }
    if let Anchor::Player { index, .. } = settings.anchor
        && index >= players
    {
        return Err(FitError::BadAnchor(index));
    }
    let pairs = Pairs::new(players, results, settings.prior_draws)?;
    // Strengths in nats, centred on 0.
    let mut theta: Vec<f64> = match start {
        Some(start) if start.len() == players => {
            let mean = start.iter().sum::<f64>() / players.max(1) as f64;
            start.iter().map(|r| (r - mean) / ELO_PER_NAT).collect()
        }
        _ => vec![0.0; players],
    };
    let mut newton = Newton::new(&pairs);
    let mut steps = 0;
    let mut converged = false;
    while steps < settings.max_steps {
        steps += 1;
        let moved = newton.step(&pairs, &mut theta);
        if moved * ELO_PER_NAT <= settings.tolerance {
            converged = true;
            break;
        }
    }
    let shift = match settings.anchor {
        Anchor::Mean(mean) => mean - theta.iter().sum::<f64>() / players.max(1) as f64 * ELO_PER_NAT,
        Anchor::Player { index, rating } => rating - theta[index] * ELO_PER_NAT,
    };
    let dispersion = dispersion(results, &theta, &pairs);
    let covariance = if players <= COVARIANCE_LIMIT {
        covariance(&pairs, &theta, settings.anchor, dispersion)
    } else {
        None
    };
    let ratings = (0..players)
        .map(|i| {
            let information = information(&pairs, &theta, i);
            let conditional = Z95 * ELO_PER_NAT / information.sqrt();
            let interval = match &covariance {
                Some(c) => c.get(i, i).map_or(f64::INFINITY, |v| Z95 * v.max(0.0).sqrt()),
                None => conditional * dispersion.sqrt(),
            };
            Fitted {
                rating: theta[i] * ELO_PER_NAT + shift,
                interval,
                conditional,
                games: pairs.games[i],
            }
        })
        .collect();
    Ok(Fit {
        ratings,
        steps,
        converged,
        dispersion,
        covariance,
    })
}

/// The Pearson χ² of `results` at `theta` over its degrees of freedom
/// (results less the free strengths); 1 with no degree of freedom.
fn dispersion(results: &[PairResult], theta: &[f64], pairs: &Pairs) -> f64 {
    let playing = pairs.games.iter().filter(|&&g| g > 0.0).count();
    let free = playing.saturating_sub(1);
    if results.len() <= free {
        return 1.0;
    }
    let mut chi2 = 0.0;
    for r in results {
        let p = expected(theta[r.a] - theta[r.b]);
        let variance = r.games * p * (1.0 - p);
        if variance > 0.0 {
            chi2 += (r.points_a - r.games * p).powi(2) / variance;
        }
    }
    chi2 / (results.len() - free) as f64
}

/// The covariance of the ratings (Elo²) under `anchor`, times
/// `dispersion`: the constrained inverse of the Fisher information at
/// `theta`. `None` when the information is singular beyond the common
/// shift (the players are not connected).
fn covariance(pairs: &Pairs, theta: &[f64], anchor: Anchor, dispersion: f64) -> Option<Covariance> {
    let players = theta.len();
    let mut rows = vec![None; players];
    let mut size = 0;
    for (i, row) in rows.iter_mut().enumerate() {
        if pairs.offsets[i + 1] > pairs.offsets[i] {
            *row = Some(size);
            size += 1;
        }
    }
    if size == 0 {
        return Some(Covariance {
            rows,
            size,
            matrix: Vec::new(),
        });
    }
    // The information matrix (a weighted graph Laplacian), in nats.
    let mut info = vec![0.0; size * size];
    for i in 0..players {
        let Some(a) = rows[i] else { continue };
        for &(j, n) in pairs.of(i) {
            let Some(b) = rows[j] else { continue };
            let p = expected(theta[i] - theta[j]);
            let w = n * p * (1.0 - p);
            info[a * size + a] += w;
            info[a * size + b] -= w;
        }
    }
    let elo2 = ELO_PER_NAT * ELO_PER_NAT * dispersion;
    let matrix = match anchor {
        Anchor::Mean(_) => {
            // (L + J/m)⁻¹ − J/m is L's Moore–Penrose inverse: the
            // covariance of each strength less their mean.
            let m = size as f64;
            info.iter_mut().for_each(|x| *x += 1.0 / m);
            let mut inverse = spd_inverse(info, size)?;
            inverse.iter_mut().for_each(|x| *x = (*x - 1.0 / m) * elo2);
            inverse
        }
        Anchor::Player { index, .. } => {
            // The anchored player is fixed: invert without its row.
            let Some(fixed) = rows[index] else {
                // An anchor without games leaves every level free.
                return None;
            };
            let keep: Vec<usize> = (0..size).filter(|&k| k != fixed).collect();
            let k = keep.len();
            let mut reduced = vec![0.0; k * k];
            for (x, &a) in keep.iter().enumerate() {
                for (y, &b) in keep.iter().enumerate() {
                    reduced[x * k + y] = info[a * size + b];
                }
            }
            let inverse = if k == 0 { Vec::new() } else { spd_inverse(reduced, k)? };
            let mut full = vec![0.0; size * size];
            for (x, &a) in keep.iter().enumerate() {
                for (y, &b) in keep.iter().enumerate() {
                    full[a * size + b] = inverse[x * k + y] * elo2;
                }
            }
            full
        }
    };
    Some(Covariance { rows, size, matrix })
}

/// The inverse of a symmetric positive-definite `n × n` matrix (row-major)
/// by Cholesky factorisation; `None` if it is not positive definite.
fn spd_inverse(mut a: Vec<f64>, n: usize) -> Option<Vec<f64>> {
    // a = G Gᵀ, G lower triangular, written over a's lower triangle.
    let largest = (0..n).map(|i| a[i * n + i]).fold(0.0f64, f64::max);
    for j in 0..n {
        let mut d = a[j * n + j];
        for k in 0..j {
            d -= a[j * n + k] * a[j * n + k];
        }
        if d <= 1e-12 * largest.max(1e-300) {
            return None;
        }
        let d = d.sqrt();
        a[j * n + j] = d;
        for i in j + 1..n {
            let mut s = a[i * n + j];
            for k in 0..j {
                s -= a[i * n + k] * a[j * n + k];
            }
            a[i * n + j] = s / d;
        }
    }
    // H = G⁻¹ (lower triangular), row by row.
    let mut h = vec![0.0; n * n];
    for i in 0..n {
        h[i * n + i] = 1.0 / a[i * n + i];
        for j in 0..i {
            let mut s = 0.0;
            for k in j..i {
                s += a[i * n + k] * h[k * n + j];
            }
            h[i * n + j] = -s / a[i * n + i];
        }
    }
    // a⁻¹ = Hᵀ H.
    let mut inverse = vec![0.0; n * n];
    for i in 0..n {
        for j in 0..=i {
            let mut s = 0.0;
            for k in i..n {
                s += h[k * n + i] * h[k * n + j];
            }
            inverse[i * n + j] = s;
            inverse[j * n + i] = s;
        }
    }
    Some(inverse)
}

/// The Fisher information of player `i`'s strength, the others held.
fn information(pairs: &Pairs, theta: &[f64], i: usize) -> f64 {
    let mut sum = 0.0;
    for &(j, n) in pairs.of(i) {
        let p = expected(theta[i] - theta[j]);
        sum += n * p * (1.0 - p);
    }
    sum
}

/// Scratch space for Newton steps: the gradient, the Hessian's diagonal and
/// the conjugate-gradient vectors.
struct Newton {
    /// `n·p·(1 − p)` for each entry of [`Pairs::opponents`], this step's.
    weights: Vec<f64>,
    gradient: Vec<f64>,
    diagonal: Vec<f64>,
    step: Vec<f64>,
    residual: Vec<f64>,
    direction: Vec<f64>,
    product: Vec<f64>,
    preconditioned: Vec<f64>,
}

impl Newton {
    fn new(pairs: &Pairs) -> Newton {
        let zero = vec![0.0; pairs.points.len()];
        Newton {
            weights: vec![0.0; pairs.opponents.len()],
            gradient: zero.clone(),
            diagonal: zero.clone(),
            step: zero.clone(),
            residual: zero.clone(),
            direction: zero.clone(),
            product: zero.clone(),
            preconditioned: zero,
        }
    }

    /// One damped Newton step of the log-likelihood; the linear system is
    /// solved by conjugate gradients preconditioned with the diagonal, so a
    /// step costs a few passes over the pairs and never a dense matrix.
    /// Returns the largest change of a strength, in nats.
    fn step(&mut self, pairs: &Pairs, theta: &mut [f64]) -> f64 {
        let players = theta.len();
        for i in 0..players {
            let mut gradient = pairs.points[i];
            let mut diagonal = 0.0;
            for k in pairs.offsets[i]..pairs.offsets[i + 1] {
                let (j, n) = pairs.opponents[k];
                let p = expected(theta[i] - theta[j]);
                gradient -= n * p;
                self.weights[k] = n * p * (1.0 - p);
                diagonal += self.weights[k];
            }
            self.gradient[i] = gradient;
            self.diagonal[i] = diagonal;
        }
        self.solve(pairs);
        // Only differences are fixed by the games: a common shift of every
        // strength is no move at all (the ratings are kept at mean 0).
        // (A player without games has no diagonal and never moves.)
        let playing = self.diagonal.iter().filter(|&&d| d > 0.0).count();
        let shift = self.step.iter().sum::<f64>() / playing.max(1) as f64;
        for (s, &d) in self.step.iter_mut().zip(&self.diagonal) {
            if d > 0.0 {
                *s -= shift;
            }
        }
        // Damping: a step longer than 1 nat (174 points) per player is cut
        // down to that, which keeps the first steps from lopsided results
        // (a 10–0 sweep) from overshooting.
        let longest = self.step.iter().fold(0.0f64, |m, s| m.max(s.abs()));
        let scale = if longest > 1.0 { 1.0 / longest } else { 1.0 };
        for (t, s) in theta.iter_mut().zip(&self.step) {
            *t += scale * s;
        }
        longest * scale
    }

    /// Solves H · step = gradient, H the negative Hessian, to a relative
    /// residual of 1e-10 or as far as [`CG_ITERATIONS`] get (an inexact
    /// step still climbs: the next step starts where this one ended).
    fn solve(&mut self, pairs: &Pairs) {
        let players = self.step.len();
        // A player with no information (no games, no prior) does not move.
        let inverse = |d: f64| if d > 0.0 { 1.0 / d } else { 0.0 };
        self.step.iter_mut().for_each(|s| *s = 0.0);
        self.residual.copy_from_slice(&self.gradient);
        for i in 0..players {
            self.preconditioned[i] = self.residual[i] * inverse(self.diagonal[i]);
        }
        self.direction.copy_from_slice(&self.preconditioned);
        let mut rz = dot(&self.residual, &self.preconditioned);
        let target = dot(&self.gradient, &self.gradient) * 1e-20;
        for _ in 0..CG_ITERATIONS {
            if dot(&self.residual, &self.residual) <= target {
                break;
            }
            self.multiply(pairs);
            let curvature = dot(&self.direction, &self.product);
            // The matrix is singular (a common shift changes nothing):
            // once the residual is rounding noise, a direction can fall
            // into that null space, and a step along it would be noise
            // divided by next to nothing.
            let scale: f64 = self.direction.iter().zip(&self.diagonal).map(|(d, h)| d * d * h).sum();
            if curvature <= 1e-12 * scale {
                break;
            }
            let alpha = rz / curvature;
            for i in 0..players {
                self.step[i] += alpha * self.direction[i];
                self.residual[i] -= alpha * self.product[i];
                self.preconditioned[i] = self.residual[i] * inverse(self.diagonal[i]);
            }
            let next = dot(&self.residual, &self.preconditioned);
            let beta = next / rz;
            rz = next;
            for i in 0..players {
                self.direction[i] = self.preconditioned[i] + beta * self.direction[i];
            }
        }
    }

    /// product = H · direction.
    fn multiply(&mut self, pairs: &Pairs) {
        for i in 0..self.product.len() {
            let mut sum = self.diagonal[i] * self.direction[i];
            for k in pairs.offsets[i]..pairs.offsets[i + 1] {
                sum -= self.weights[k] * self.direction[pairs.opponents[k].0];
            }
            self.product[i] = sum;
        }
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elo_expected(diff: f64) -> f64 {
        1.0 / (1.0 + 10f64.powf(-diff / 400.0))
    }

    fn plain() -> FitSettings {
        FitSettings {
            prior_draws: 0.0,
            anchor: Anchor::Mean(0.0),
            ..FitSettings::default()
        }
    }

    #[test]
    fn two_players_meet_the_closed_form() {
        // 7 points of 10: the difference is 400·log10(7/3), about 147.2.
        let results = [PairResult {
            a: 0,
            b: 1,
            games: 10.0,
            points_a: 7.0,
        }];
        let fit = fit(2, &results, &plain(), None).unwrap();
        assert!(fit.converged);
        let diff = fit.ratings[0].rating - fit.ratings[1].rating;
        assert!((diff - 400.0 * (7.0f64 / 3.0).log10()).abs() < 1e-6, "{diff}");
        assert!((fit.ratings[0].rating + fit.ratings[1].rating).abs() < 1e-9);
        // The conditional interval: 1 / sqrt(n p (1 − p)) nats, p = 0.7.
        let conditional = Z95 * ELO_PER_NAT / (10.0f64 * 0.7 * 0.3).sqrt();
        assert!((fit.ratings[0].conditional - conditional).abs() < 1e-6);
        // Anchored on the mean, each rating is half the gap from it: half
        // the gap's interval, which is the conditional one (one result, no
        // degree of freedom for the dispersion: 1).
        assert_eq!(fit.dispersion, 1.0);
        assert!((fit.ratings[0].interval - conditional / 2.0).abs() < 1e-6);
        let (gap, half) = fit.gap(0, 1).expect("a covariance");
        assert!((gap - diff).abs() < 1e-9 && (half - conditional).abs() < 1e-6);
        // Φ(gap / sd): 147.2 / (conditional / 1.96).
        let p = fit.order_probability(0, 1).expect("a covariance");
        let z = diff / (conditional / Z95);
        assert!(
            (p - crate::stats::normal_cdf(z)).abs() < 1e-12 && p > 0.8 && p < 0.99,
            "{p}"
        );
        assert_eq!(fit.ratings[0].games, 10.0);
    }

    /// The covariance against a dense pseudo-inverse worked the long way
    /// (eigen-free: (L + J/m)⁻¹ − J/m checked by L · C = I − J/m), and a
    /// player anchor giving that player no variance.
    #[test]
    fn the_covariance_inverts_the_information_under_the_anchor() {
        let results: Vec<PairResult> = (0..30)
            .map(|k| PairResult {
                a: k % 4,
                b: (k + 1 + k / 4) % 4,
                games: 1.0,
                points_a: [1.0, 0.5, 0.0, 1.0, 0.5][k % 5],
            })
            .filter(|r| r.a != r.b)
            .collect();
        let settings = FitSettings::default();
        let fitted = fit(4, &results, &settings, None).unwrap();
        let c = fitted.covariance.clone().expect("connected");
        let theta: Vec<f64> = fitted.ratings.iter().map(|f| f.rating / ELO_PER_NAT).collect();
        let pairs = Pairs::new(4, &results, settings.prior_draws).unwrap();
        let mut l = [[0.0; 4]; 4];
        for i in 0..4 {
            for &(j, n) in pairs.of(i) {
                let p = expected(theta[i] - theta[j]);
                l[i][i] += n * p * (1.0 - p);
                l[i][j] -= n * p * (1.0 - p);
            }
        }
        let scale = ELO_PER_NAT * ELO_PER_NAT * fitted.dispersion;
        for (i, row) in l.iter().enumerate() {
            for j in 0..4 {
                let product: f64 = row
                    .iter()
                    .enumerate()
                    .map(|(k, x)| x * c.get(k, j).unwrap() / scale)
                    .sum();
                let identity = if i == j { 0.75 } else { -0.25 };
                assert!((product - identity).abs() < 1e-9, "({i},{j}): {product}");
            }
        }
        // Ratings less their mean sum to zero: so do their covariances.
        let row: f64 = (0..4).map(|j| c.get(0, j).unwrap()).sum();
        assert!(row.abs() < 1e-6, "{row}");
        assert!(
            fitted.dispersion > 0.1 && fitted.dispersion < 3.0,
            "{}",
            fitted.dispersion
        );
        let anchored = FitSettings {
            anchor: Anchor::Player {
                index: 2,
                rating: 1000.0,
            },
            ..settings
        };
        let anchored = fit(4, &results, &anchored, None).unwrap();
        assert_eq!(anchored.ratings[2].interval, 0.0);
        // Gaps do not depend on the anchor.
        let (g1, h1) = fitted.gap(0, 3).unwrap();
        let (g2, h2) = anchored.gap(0, 3).unwrap();
        assert!((g1 - g2).abs() < 1e-6 && (h1 - h2).abs() < 1e-6, "{h1} {h2}");
    }

    #[test]
    fn scores_that_match_three_ratings_give_those_ratings_back() {
        // When every pair's score is exactly its expectation under
        // (0, 100, 300), those ratings are the maximum of the likelihood.
        let truth = [0.0, 100.0, 300.0];
        let mut results = Vec::new();
        for (a, b, games) in [(0, 1, 12.0), (1, 2, 7.0), (0, 2, 30.0)] {
            let points_a = games * elo_expected(truth[a] - truth[b]);
            results.push(PairResult { a, b, games, points_a });
        }
        let settings = FitSettings {
            anchor: Anchor::Player { index: 0, rating: 0.0 },
            ..plain()
        };
        let fit = fit(3, &results, &settings, None).unwrap();
        for (fitted, truth) in fit.ratings.iter().zip(truth) {
            assert!((fitted.rating - truth).abs() < 1e-6, "{fitted:?} vs {truth}");
        }
    }

    #[test]
    fn a_three_player_chain_needs_no_direct_game() {
        // a beats b 3–1, b beats c 3–1, a and c never meet: each gap is
        // 400·log10(3), and a–c is twice that.
        let results = [
            PairResult {
                a: 0,
                b: 1,
                games: 4.0,
                points_a: 3.0,
            },
            PairResult {
                a: 1,
                b: 2,
                games: 4.0,
                points_a: 3.0,
            },
        ];
        let fit = fit(3, &results, &plain(), None).unwrap();
        let gap = 400.0 * 3f64.log10();
        let r: Vec<f64> = fit.ratings.iter().map(|f| f.rating).collect();
        assert!(
            (r[0] - r[1] - gap).abs() < 1e-6 && (r[1] - r[2] - gap).abs() < 1e-6,
            "{r:?}"
        );
        assert!(r.iter().sum::<f64>().abs() < 1e-9);
    }

    #[test]
    fn the_prior_keeps_an_unbeaten_player_finite_and_first() {
        let results = [
            PairResult {
                a: 0,
                b: 1,
                games: 10.0,
                points_a: 10.0,
            },
            PairResult {
                a: 1,
                b: 2,
                games: 10.0,
                points_a: 5.0,
            },
        ];
        let fit = fit(3, &results, &FitSettings::default(), None).unwrap();
        assert!(fit.converged);
        let r: Vec<f64> = fit.ratings.iter().map(|f| f.rating).collect();
        assert!(r.iter().all(|r| r.is_finite()));
        // a's prior (1 draw) goes wholly to its one pair, b's half to each
        // of its two: 0.75 virtual draws against b, so a scored 10.375 of
        // 10.75. b and c drew 5–5 and stay level.
        let gap = 400.0 * (10.375f64 / 0.375).log10();
        assert!((r[0] - r[1] - gap).abs() < 1e-6, "{r:?}, gap {gap}");
        assert!((r[1] - r[2]).abs() < 1e-6, "{r:?}");
        assert!((r.iter().sum::<f64>() / 3.0 - 1500.0).abs() < 1e-9);
    }

    #[test]
    fn the_prior_does_not_shrink_a_long_chain() {
        // 40 players, each beating the next 3–1. A prior that pulled every
        // rating towards the centre would squeeze the chain's ends in; this
        // one only adds each pair its share of virtual draws, so each link
        // keeps its own closed form, 400·log10((3 + v/2) / (1 + v/2)).
        let players = 40;
        let results: Vec<PairResult> = (0..players - 1)
            .map(|i| PairResult {
                a: i,
                b: i + 1,
                games: 4.0,
                points_a: 3.0,
            })
            .collect();
        let fit = fit(players, &results, &FitSettings::default(), None).unwrap();
        assert!(fit.converged);
        let link = |v: f64| 400.0 * ((3.0 + v / 2.0) / (1.0 + v / 2.0)).log10();
        // End links: the end player's whole prior and half its neighbour's.
        let ends = 2.0 * link(0.75);
        let middle = (players - 3) as f64 * link(0.5);
        let span = fit.ratings[0].rating - fit.ratings[players - 1].rating;
        assert!(
            (span - (ends + middle)).abs() < 1e-4,
            "span {span}, expected {}",
            ends + middle
        );
        // And the chain is long: 37 links of 166 points and two of 177.
        assert!(span > 39.0 * 160.0, "{span}");
    }

    #[test]
    fn order_and_sides_do_not_change_the_fit() {
        let results = vec![
            PairResult {
                a: 0,
                b: 1,
                games: 1.0,
                points_a: 1.0,
            },
            PairResult {
                a: 1,
                b: 2,
                games: 1.0,
                points_a: 0.5,
            },
            PairResult {
                a: 2,
                b: 3,
                games: 2.0,
                points_a: 0.5,
            },
            PairResult {
                a: 3,
                b: 0,
                games: 1.0,
                points_a: 0.0,
            },
            PairResult {
                a: 0,
                b: 2,
                games: 3.0,
                points_a: 2.5,
            },
        ];
        let mut turned: Vec<PairResult> = results
            .iter()
            .rev()
            .map(|r| PairResult {
                a: r.b,
                b: r.a,
                games: r.games,
                points_a: r.games - r.points_a,
            })
            .collect();
        turned.rotate_left(2);
        let settings = FitSettings::default();
        let one = fit(4, &results, &settings, None).unwrap();
        let other = fit(4, &turned, &settings, None).unwrap();
        for (x, y) in one.ratings.iter().zip(&other.ratings) {
            assert!((x.rating - y.rating).abs() < 1e-6 && (x.interval - y.interval).abs() < 1e-6);
            assert!((x.conditional - y.conditional).abs() < 1e-6);
        }
    }

    #[test]
    fn a_warm_start_lands_on_the_same_ratings() {
        let results: Vec<PairResult> = (0..40)
            .map(|k| PairResult {
                a: k % 5,
                b: (k * 3 + 1) % 5,
                games: 1.0,
                points_a: [1.0, 0.5, 0.0][k % 3],
            })
            .filter(|r| r.a != r.b)
            .collect();
        let settings = FitSettings::default();
        let cold = fit(5, &results, &settings, None).unwrap();
        let start: Vec<f64> = cold.ratings.iter().map(|f| f.rating + 37.0).collect();
        let warm = fit(5, &results, &settings, Some(&start)).unwrap();
        assert!(warm.steps <= 2, "{} steps", warm.steps);
        for (x, y) in cold.ratings.iter().zip(&warm.ratings) {
            assert!((x.rating - y.rating).abs() < 1e-3);
        }
    }

    #[test]
    fn bad_input_is_named() {
        let settings = FitSettings::default();
        let self_game = [PairResult {
            a: 1,
            b: 1,
            games: 1.0,
            points_a: 1.0,
        }];
        assert_eq!(fit(2, &self_game, &settings, None), Err(FitError::BadPlayer(0)));
        let unknown = [PairResult {
            a: 0,
            b: 2,
            games: 1.0,
            points_a: 1.0,
        }];
        assert_eq!(fit(2, &unknown, &settings, None), Err(FitError::BadPlayer(0)));
        let too_many_points = [PairResult {
            a: 0,
            b: 1,
            games: 1.0,
            points_a: 2.0,
        }];
        assert_eq!(
            fit(2, &too_many_points, &settings, None),
            Err(FitError::BadScore(0, 1.0, 2.0))
        );
        let anchor = FitSettings {
            anchor: Anchor::Player { index: 5, rating: 0.0 },
            ..settings
        };
        assert_eq!(fit(2, &[], &anchor, None), Err(FitError::BadAnchor(5)));
        let prior = FitSettings {
            prior_draws: -1.0,
            ..settings
        };
        assert_eq!(fit(2, &[], &prior, None), Err(FitError::BadPrior));
    }
}
