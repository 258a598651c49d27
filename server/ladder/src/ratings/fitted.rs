//! The leaderboard's headline rating: a Bradley–Terry fit to every rated
//! result of a ladder ([`crate::stats::bradley_terry`]), beside the
//! Glicko-2 rating that the scheduler keeps using.
//!
//! Glicko-2 moves a rating once per match, so its scale depends on who met
//! whom and when (in the simulator, a 100-point Glicko-2 gap under the
//! scheduler is about an 83-point real one); the fit weighs every result
//! alike. A draw is half a point, each version gets the default prior (one
//! virtual draw, spread over its opponents), and the ratings are anchored
//! so that the mean over every version that played on the ladder is
//! [`FIT_MEAN`].
//!
//! Fits are recomputed when read and stale: [`ladder_fit`] keeps the last
//! fit of each ladder and refits (warm, from the last ratings) only when
//! the ladder's count of rated matches or its newest rated match changed.
//! It asks the database at most once per [`RECHECK`] unless this process
//! recorded a rated match since, so a busy leaderboard costs no query for
//! it; a match recorded by another process shows within [`RECHECK`].

use super::Outcome;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::VersionId;
use crate::stats::bradley_terry::{self, Anchor, Covariance, FitSettings, Fitted, PairResult};
use sqlx::Row;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The mean of a ladder's fitted ratings.
pub const FIT_MEAN: f64 = 1500.0;

/// One ladder's fit.
#[derive(Clone, Debug, PartialEq)]
pub struct LadderFit {
    /// Rated matches fitted.
    pub matches: usize,
    /// Whether the fit met its tolerance (it always does on real logs; a
    /// `false` is logged).
    pub converged: bool,
    /// Each version that played a rated match: its fitted rating, 95%
    /// interval (half-width, from the full covariance) and games.
    pub ratings: HashMap<VersionId, Fitted>,
    /// The log's dispersion ([`bradley_terry::Fit::dispersion`]).
    pub dispersion: f64,
    /// The covariance of the ratings, `None` above
    /// [`bradley_terry::COVARIANCE_LIMIT`] versions.
    covariance: Option<Covariance>,
    /// Each version's index in the covariance.
    index: HashMap<VersionId, usize>,
}

impl LadderFit {
    /// The fitted rating of `version`, if it played a rated match.
    pub fn get(&self, version: VersionId) -> Option<&Fitted> {
        self.ratings.get(&version)
    }

    /// The chance that `a` is stronger than `b` given the log (normal
    /// approximation of the fit, from the full covariance); `None` if
    /// either has not played or the covariance was not formed.
    pub fn order_probability(&self, a: VersionId, b: VersionId) -> Option<f64> {
        let (i, j) = (*self.index.get(&a)?, *self.index.get(&b)?);
        let sd = self.covariance.as_ref()?.gap_sd(i, j)?;
        let gap = self.get(a)?.rating - self.get(b)?.rating;
        Some(if sd > 0.0 {
            crate::stats::normal_cdf(gap / sd)
        } else {
            0.5 + 0.5 * gap.signum()
        })
    }
}

/// Fits `log` (participant 0, participant 1, outcome for participant 0),
/// starting from `start` (an earlier fit) when given. Pure: the same log
/// gives the same ratings, whatever `start` (up to the fit's tolerance).
pub fn fit_log(log: &[(VersionId, VersionId, Outcome)], start: Option<&LadderFit>) -> Result<LadderFit> {
    let mut index: HashMap<VersionId, usize> = HashMap::new();
    let mut versions: Vec<VersionId> = Vec::new();
    let mut results = Vec::with_capacity(log.len());
    for &(a, b, outcome) in log {
        let mut slot = |v: VersionId| {
            *index.entry(v).or_insert_with(|| {
                versions.push(v);
                versions.len() - 1
            })
        };
        let (a, b) = (slot(a), slot(b));
        let points_a = outcome.points();
        results.push(PairResult {
            a,
            b,
            games: 1.0,
            points_a,
        });
    }
    let start: Option<Vec<f64>> = start.map(|earlier| {
        versions
            .iter()
            .map(|v| earlier.get(*v).map_or(FIT_MEAN, |f| f.rating))
            .collect()
    });
    let settings = FitSettings {
        anchor: Anchor::Mean(FIT_MEAN),
        ..FitSettings::default()
    };
    let fit = bradley_terry::fit(versions.len(), &results, &settings, start.as_deref())
        .map_err(|e| Error::Internal(format!("the whole-log fit refused the log: {e}")))?;
    Ok(LadderFit {
        matches: log.len(),
        converged: fit.converged,
        dispersion: fit.dispersion,
        covariance: fit.covariance,
        index: versions.iter().enumerate().map(|(i, &v)| (v, i)).collect(),
        ratings: versions.into_iter().zip(fit.ratings).collect(),
    })
}

/// Every rated match of `ladder`, in the order it was rated.
pub async fn rated_log(db: &Db, ladder: &str) -> Result<Vec<(VersionId, VersionId, Outcome)>> {
    let rows = sqlx::query(
        "SELECT a_version, b_version, winner FROM matches WHERE rated = 1 AND ladder = $1 ORDER BY rated_seq, id",
    )
    .bind(ladder)
    .fetch_all(&db.pool)
    .await?;
    let mut log = Vec::with_capacity(rows.len());
    for row in rows {
        log.push((
            VersionId(row.try_get(0)?),
            VersionId(row.try_get(1)?),
            Outcome::from_winner(row.try_get(2)?),
        ));
    }
    Ok(log)
}

/// Which fit: the database and the ladder.
type CacheKey = (String, String);
/// What a cached fit was made from: the ladder's newest `rated_seq` and
/// its versions' games played in all (wins, draws and losses, stored with
/// each rated match in the same transaction). Rated matches are never
/// removed, so the log grew exactly when one of the two did; the games
/// count also catches a PostgreSQL commit whose `rated_seq` is below the
/// newest (the sequence is taken before commit, so two matches can commit
/// out of order). About a millisecond on SQLite at 1 439 versions and
/// 1 000 000 matches (an index lookup and a sum over the ladder's ratings
/// rows), where counting the log scanned it (265 ms per leaderboard).
type Freshness = (Option<i64>, Option<i64>);

/// How long a fit is taken as up to date without asking the database,
/// when this process has recorded no rated match since it last asked.
pub const RECHECK: Duration = Duration::from_secs(1);

/// Rated matches this process has recorded: a fit checked before the
/// newest of them is checked again at once.
static RECORDED_HERE: AtomicU64 = AtomicU64::new(0);

/// Tells [`ladder_fit`] that this process has just committed a rated match.
pub(crate) fn note_rated_match() {
    RECORDED_HERE.fetch_add(1, Ordering::Relaxed);
}

/// A cached fit and when it was last found up to date.
struct Cached {
    key: CacheKey,
    made_from: Freshness,
    checked_at: Instant,
    recorded_here: u64,
    fit: Arc<LadderFit>,
}

/// The last fit of each ladder of each database this process reads.
static CACHE: Mutex<Vec<Cached>> = Mutex::new(Vec::new());

fn cache() -> std::sync::MutexGuard<'static, Vec<Cached>> {
    CACHE.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// `ladder`'s fit, refitted only if a rated match was added since the last
/// call: free within [`RECHECK`] of the last check (unless this process
/// recorded a rated match since), one query (about a millisecond, see
/// [`Freshness`]) after it, a warm refit of a step or two when the log
/// grew.
pub async fn ladder_fit(db: &Db, ladder: &str) -> Result<Arc<LadderFit>> {
    let key: CacheKey = (db.describe(), ladder.to_owned());
    // Read before the check: a match recorded during it is checked again.
    let recorded_here = RECORDED_HERE.load(Ordering::Relaxed);
    let recent = cache()
        .iter()
        .find(|c| c.key == key)
        .and_then(|c| (c.recorded_here == recorded_here && c.checked_at.elapsed() < RECHECK).then(|| c.fit.clone()));
    if let Some(fit) = recent {
        return Ok(fit);
    }
    let checked_at = Instant::now();
    let row = sqlx::query(
        "SELECT (SELECT MAX(rated_seq) FROM matches WHERE rated = 1 AND ladder = $1), \
                (SELECT CAST(SUM(wins + draws + losses) AS BIGINT) FROM ratings WHERE ladder = $1)",
    )
    .bind(ladder)
    .fetch_one(&db.pool)
    .await?;
    let freshness: Freshness = (row.try_get(0)?, row.try_get(1)?);
    let earlier = {
        let mut cache = cache();
        match cache.iter_mut().find(|c| c.key == key) {
            Some(c) if c.made_from == freshness => {
                c.checked_at = c.checked_at.max(checked_at);
                c.recorded_here = c.recorded_here.max(recorded_here);
                return Ok(c.fit.clone());
            }
            Some(c) => Some(c.fit.clone()),
            None => None,
        }
    };
    let log = rated_log(db, ladder).await?;
    let fit = Arc::new(fit_log(&log, earlier.as_deref())?);
    if !fit.converged {
        tracing::warn!(
            ladder,
            matches = log.len(),
            "the whole-log fit did not meet its tolerance"
        );
    }
    let mut cache = cache();
    cache.retain(|c| c.key != key);
    cache.push(Cached {
        key,
        made_from: freshness,
        checked_at,
        recorded_here,
        fit: fit.clone(),
    });
    Ok(fit)
}

/// A ladder's fit set beside its stored Glicko-2 ratings, as `arbiter
/// ratings recompute` reports it.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    /// The ladder.
    pub ladder: String,
    /// Rated matches fitted.
    pub matches: usize,
    /// Versions fitted.
    pub versions: usize,
    /// Whether the fit met its tolerance.
    pub converged: bool,
    /// The slope of Glicko-2 rating against fitted rating (least squares):
    /// above 1 when Glicko-2 stretches differences.
    pub glicko_slope: f64,
    /// The root-mean-square difference between the two, each centred on
    /// its mean, Elo.
    pub rms_difference: f64,
    /// Kendall's τ-b between the two orders.
    pub tau: f64,
}

/// Fits every ladder's rated log from scratch and sets each beside the
/// stored Glicko-2 ratings of the same versions. Only reads.
pub async fn compare_all(db: &Db) -> Result<Vec<Comparison>> {
    let ladders: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT ladder FROM matches WHERE rated = 1 ORDER BY ladder")
            .fetch_all(&db.pool)
            .await?;
    let mut out = Vec::with_capacity(ladders.len());
    for ladder in ladders {
        let fit = fit_log(&rated_log(db, &ladder).await?, None)?;
        let stored = sqlx::query("SELECT version_id, rating FROM ratings WHERE ladder = $1")
            .bind(&ladder)
            .fetch_all(&db.pool)
            .await?;
        let mut pairs = Vec::new();
        for row in stored {
            if let Some(fitted) = fit.get(VersionId(row.try_get(0)?)) {
                pairs.push((fitted.rating, row.try_get::<f64, _>(1)?));
            }
        }
        let (glicko_slope, rms_difference) = slope_and_rms(&pairs);
        out.push(Comparison {
            ladder,
            matches: fit.matches,
            versions: fit.ratings.len(),
            converged: fit.converged,
            glicko_slope,
            rms_difference,
            tau: crate::stats::kendall_tau(&pairs),
        });
    }
    Ok(out)
}

/// The least-squares slope of `y` on `x`, and the RMS of `y − x` after
/// centring both (0 and 0 for fewer than two points or no spread).
pub fn slope_and_rms(pairs: &[(f64, f64)]) -> (f64, f64) {
    let n = pairs.len() as f64;
    if pairs.len() < 2 {
        return (0.0, 0.0);
    }
    let mx = pairs.iter().map(|p| p.0).sum::<f64>() / n;
    let my = pairs.iter().map(|p| p.1).sum::<f64>() / n;
    let (mut sxy, mut sxx, mut se) = (0.0, 0.0, 0.0);
    for &(x, y) in pairs {
        sxy += (x - mx) * (y - my);
        sxx += (x - mx) * (x - mx);
        se += ((y - my) - (x - mx)).powi(2);
    }
    let slope = if sxx > 0.0 { sxy / sxx } else { 0.0 };
    (slope, (se / n).sqrt())
}

#[cfg(test)]
mod tests {
    #[test]
    fn slope_and_rms_of_known_lines() {
        let doubled: Vec<(f64, f64)> = (0..5).map(|i| (f64::from(i), 7.0 + 2.0 * f64::from(i))).collect();
        let (slope, rms) = slope_and_rms(&doubled);
        assert!((slope - 2.0).abs() < 1e-12);
        // y − x centred: i − 2 for i in 0..5, RMS sqrt(2).
        assert!((rms - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(slope_and_rms(&[(1.0, 1.0)]), (0.0, 0.0));
    }

    use super::*;

    #[test]
    fn a_log_fits_with_its_mean_at_1500_and_the_winner_above() {
        let (a, b, c) = (VersionId(10), VersionId(20), VersionId(30));
        let log = [
            (a, b, Outcome::Win),
            (b, a, Outcome::Loss),
            (a, b, Outcome::Draw),
            (b, c, Outcome::Win),
            (c, b, Outcome::Draw),
        ];
        let fit = fit_log(&log, None).expect("a fit");
        assert_eq!(fit.matches, 5);
        assert!(fit.converged);
        let r = |v| fit.get(v).expect("rated").rating;
        assert!(r(a) > r(b) && r(b) > r(c), "{fit:?}");
        assert!(((r(a) + r(b) + r(c)) / 3.0 - FIT_MEAN).abs() < 1e-6);
        assert_eq!(fit.get(b).map(|f| f.games), Some(5.0));
        assert!(fit.get(VersionId(99)).is_none());
        // a–b: 2.5 of 3 plus a's whole prior and b's 3/5 of its own, so
        // 0.8 virtual draws: a scored 2.9 of 3.8.
        let ab = 400.0 * (2.9f64 / 0.9).log10();
        assert!((r(a) - r(b) - ab).abs() < 1e-4, "{} vs {ab}", r(a) - r(b));
        // The order's chance from the covariance: a well above c.
        let p = fit.order_probability(a, c).expect("a covariance");
        assert!(p > 0.5 && p < 1.0, "{p}");
        assert!((fit.order_probability(c, a).expect("a covariance") - (1.0 - p)).abs() < 1e-9);
        assert!(fit.get(a).expect("rated").interval.is_finite());
        let warm = fit_log(&log, Some(&fit)).expect("a fit");
        assert!((warm.get(c).expect("rated").rating - r(c)).abs() < 1e-3);
    }
}
