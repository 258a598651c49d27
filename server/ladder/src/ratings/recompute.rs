//! Rebuilding every rating from the match log.
//!
//! Ratings are derived data: starting every (version, ladder) from
//! [`Rating::default`] and applying the rated matches in `rated_seq` order
//! with the same [`RatingSystem`] gives back the `ratings` table, up to
//! [`TOLERANCE`].

use super::{Outcome, Rating, RatingBook, RatingSystem};
use crate::db::Db;
use sqlx::Row;
use std::collections::BTreeMap;

/// Largest difference in rating, deviation or volatility that still counts
/// as equal (floating-point noise of the two databases' REAL types).
pub const TOLERANCE: f64 = 1e-6;

/// A stored rating that differs from the recomputed one.
#[derive(Clone, Debug, PartialEq)]
pub struct Difference {
    /// The version.
    pub version_id: i64,
    /// The ladder.
    pub ladder: String,
    /// What is stored (all `NaN` when the log rates a version the
    /// `ratings` table has no row for).
    pub stored: super::Rating,
    /// What the log gives.
    pub recomputed: super::Rating,
}

/// True when `x` and `y` are further apart than [`TOLERANCE`] (or either is
/// NaN).
fn differs(x: f64, y: f64) -> bool {
    use std::cmp::Ordering::{Equal, Less};
    !matches!((x - y).abs().partial_cmp(&TOLERANCE), Some(Less | Equal))
}

/// What [`recompute_all`] compared and found.
#[derive(Clone, Debug, PartialEq)]
pub struct Recomputation {
    /// Rated matches replayed from the log.
    pub matches: usize,
    /// Distinct versions with a stored or a recomputed rating.
    pub versions: usize,
    /// Distinct ladders with a stored or a recomputed rating.
    pub ladders: usize,
    /// (version, ladder) ratings compared.
    pub ratings: usize,
    /// The ones that differ, by ladder then version.
    pub differences: Vec<Difference>,
}

/// Replays every rated match in the order ratings were applied and returns
/// the stored ratings that differ from the result (none, if the table is
/// consistent with the log). Rows without rated matches must hold the
/// starting rating.
pub async fn recompute(db: &Db, system: RatingSystem) -> crate::error::Result<Vec<Difference>> {
    Ok(recompute_all(db, system).await?.differences)
}

/// [`recompute`], also saying how much it compared. Only reads.
pub async fn recompute_all(db: &Db, system: RatingSystem) -> crate::error::Result<Recomputation> {
    let log =
        sqlx::query("SELECT ladder, a_version, b_version, winner FROM matches WHERE rated = 1 ORDER BY rated_seq, id")
            .fetch_all(&db.pool)
            .await?;
    let mut book: RatingBook<(i64, String)> = RatingBook::new(system);
    let matches = log.len();
    for row in log {
        let ladder: String = row.try_get(0)?;
        let a: i64 = row.try_get(1)?;
        let b: i64 = row.try_get(2)?;
        let winner: Option<i64> = row.try_get(3)?;
        book.apply(&(a, ladder.clone()), &(b, ladder), Outcome::from_winner(winner));
    }
    let mut ratings: BTreeMap<(i64, String), Rating> = book.into_ratings();

    let stored_rows = sqlx::query("SELECT version_id, ladder, rating, deviation, volatility FROM ratings")
        .fetch_all(&db.pool)
        .await?;
    let mut differences = Vec::new();
    let mut versions = std::collections::BTreeSet::new();
    let mut ladders = std::collections::BTreeSet::new();
    let mut compared = 0;
    for key in ratings.keys() {
        versions.insert(key.0);
        ladders.insert(key.1.clone());
    }
    for row in stored_rows {
        let key: (i64, String) = (row.try_get(0)?, row.try_get(1)?);
        versions.insert(key.0);
        ladders.insert(key.1.clone());
        compared += 1;
        let stored = Rating {
            rating: row.try_get(2)?,
            deviation: row.try_get(3)?,
            volatility: row.try_get(4)?,
        };
        let recomputed = ratings.remove(&key).unwrap_or_default();
        if differs(stored.rating, recomputed.rating)
            || differs(stored.deviation, recomputed.deviation)
            || differs(stored.volatility, recomputed.volatility)
        {
            differences.push(Difference {
                version_id: key.0,
                ladder: key.1,
                stored,
                recomputed,
            });
        }
    }
    // Rated in the log, missing from the table.
    for ((version_id, ladder), recomputed) in ratings {
        compared += 1;
        differences.push(Difference {
            version_id,
            ladder,
            stored: Rating {
                rating: f64::NAN,
                deviation: f64::NAN,
                volatility: f64::NAN,
            },
            recomputed,
        });
    }
    differences.sort_by(|x, y| (&x.ladder, x.version_id).cmp(&(&y.ladder, y.version_id)));
    Ok(Recomputation {
        matches,
        versions: versions.len(),
        ladders: ladders.len(),
        ratings: compared,
        differences,
    })
}
