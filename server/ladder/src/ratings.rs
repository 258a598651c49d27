//! Ratings: one per version per ladder, moved once per match.
//!
//! Glicko-2 (from `skillratings`) by default, Elo as an alternative. A
//! rating is provisional while its deviation is at least
//! [`PROVISIONAL_RD`]. Ratings are derived data: [`recompute`] rebuilds them
//! from the ordered log of rated matches.

use serde::Serialize;
use skillratings::Outcomes;
use skillratings::elo::{EloConfig, EloRating, elo};
use skillratings::glicko2::{Glicko2Config, Glicko2Rating, glicko2};

/// A rating is provisional (ranked after established ones) while its
/// deviation is at least this.
pub const PROVISIONAL_RD: f64 = 110.0;

/// Which rating system a ladder server uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum RatingSystem {
    /// Glicko-2: rating, deviation and volatility.
    #[default]
    Glicko2,
    /// Elo: rating only (the deviation is shown as a constant 0 after the
    /// first match).
    Elo,
}

/// A version's rating on one ladder.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rating {
    /// The rating.
    pub rating: f64,
    /// The rating deviation (RD); the site shows rating ± 2·RD.
    pub deviation: f64,
    /// Glicko-2 volatility.
    pub volatility: f64,
}

impl Default for Rating {
    fn default() -> Rating {
        let start = Glicko2Rating::new();
        Rating {
            rating: start.rating,
            deviation: start.deviation,
            volatility: start.volatility,
        }
    }
}

impl Rating {
    /// Whether the rating is still provisional.
    pub fn provisional(&self) -> bool {
        self.deviation >= PROVISIONAL_RD
    }
}

/// About how many more matches `rating` needs before it stops being
/// provisional, if it plays established opponents of its own strength
/// (deviation 60): 0 when it is established already. What a bot page tells
/// its author "provisional" means.
pub fn matches_to_establish(system: RatingSystem, rating: Rating) -> u32 {
    let opponent = Rating {
        rating: rating.rating,
        deviation: 60.0,
        ..Rating::default()
    };
    let mut current = rating;
    for played in 0..200 {
        if !current.provisional() {
            return played;
        }
        current = system.update(current, opponent, Outcome::Draw).0;
    }
    200
}

/// The result of a match for participant 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Participant 0 won.
    Win,
    /// A draw.
    Draw,
    /// Participant 1 won.
    Loss,
}

impl Outcome {
    /// From the replay's winner field (0, 1 or none).
    pub fn from_winner(winner: Option<i64>) -> Outcome {
        match winner {
            Some(0) => Outcome::Win,
            Some(_) => Outcome::Loss,
            None => Outcome::Draw,
        }
    }

    /// The points participant 0 scored: 1 for a win, ½ for a draw, 0 for a
    /// loss.
    pub fn points(self) -> f64 {
        match self {
            Outcome::Win => 1.0,
            Outcome::Draw => 0.5,
            Outcome::Loss => 0.0,
        }
    }
}

impl RatingSystem {
    /// The two ratings after one match between `a` (participant 0) and `b`.
    pub fn update(self, a: Rating, b: Rating, outcome: Outcome) -> (Rating, Rating) {
        let outcome = match outcome {
            Outcome::Win => Outcomes::WIN,
            Outcome::Draw => Outcomes::DRAW,
            Outcome::Loss => Outcomes::LOSS,
        };
        match self {
            RatingSystem::Glicko2 => {
                let g = |r: Rating| Glicko2Rating {
                    rating: r.rating,
                    deviation: r.deviation,
                    volatility: r.volatility,
                };
                let (a2, b2) = glicko2(&g(a), &g(b), &outcome, &Glicko2Config::new());
                let back = |r: Glicko2Rating| Rating {
                    rating: r.rating,
                    deviation: r.deviation,
                    volatility: r.volatility,
                };
                (back(a2), back(b2))
            }
            RatingSystem::Elo => {
                let (a2, b2) = elo(
                    &EloRating { rating: a.rating },
                    &EloRating { rating: b.rating },
                    &outcome,
                    &EloConfig::new(),
                );
                let settle = |old: Rating, new: EloRating| Rating {
                    rating: new.rating,
                    // Elo has no deviation: a version stops being provisional
                    // after its first match.
                    deviation: 0.0,
                    volatility: old.volatility,
                };
                (settle(a, a2), settle(b, b2))
            }
        }
    }
}

/// Ratings by key (a version on a ladder, or a simulated bot), all starting
/// at [`Rating::default`], moved by one [`RatingSystem`]: the one way
/// ratings are computed from a match log, by [`recompute`] and by the
/// simulator alike (the worker applies the same [`RatingSystem::update`]).
#[derive(Clone, Debug)]
pub struct RatingBook<K: Ord> {
    system: RatingSystem,
    ratings: std::collections::BTreeMap<K, Rating>,
}

impl<K: Ord + Clone> RatingBook<K> {
    /// An empty book.
    pub fn new(system: RatingSystem) -> RatingBook<K> {
        RatingBook {
            system,
            ratings: std::collections::BTreeMap::new(),
        }
    }

    /// `key`'s rating: the starting one until it has played.
    pub fn get(&self, key: &K) -> Rating {
        self.ratings.get(key).copied().unwrap_or_default()
    }

    /// Applies a match between `a` (participant 0) and `b`; returns both
    /// ratings after it.
    pub fn apply(&mut self, a: &K, b: &K, outcome: Outcome) -> (Rating, Rating) {
        let (after_a, after_b) = self.system.update(self.get(a), self.get(b), outcome);
        self.ratings.insert(a.clone(), after_a);
        self.ratings.insert(b.clone(), after_b);
        (after_a, after_b)
    }

    /// Every key that has played, with its rating, in key order.
    pub fn into_ratings(self) -> std::collections::BTreeMap<K, Rating> {
        self.ratings
    }
}

/// Gives `version` the starting rating on `ladder` unless it has one.
pub(crate) async fn ensure_row(tx: &mut sqlx::AnyConnection, version: i64, ladder: &str) -> Result<(), sqlx::Error> {
    let start = Rating::default();
    sqlx::query(
        "INSERT INTO ratings (version_id, ladder, rating, deviation, volatility) VALUES ($1, $2, $3, $4, $5) \
         ON CONFLICT (version_id, ladder) DO NOTHING",
    )
    .bind(version)
    .bind(ladder)
    .bind(start.rating)
    .bind(start.deviation)
    .bind(start.volatility)
    .execute(&mut *tx)
    .await?;
    Ok(())
}

pub use recompute::{Difference, Recomputation, recompute, recompute_all};

pub mod fitted;

mod recompute;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_version_is_established_after_a_handful_of_matches() {
        let fresh = Rating::default();
        let n = matches_to_establish(RatingSystem::Glicko2, fresh);
        assert!((5..=20).contains(&n), "{n}");
        // One match later, one fewer (or so) to go.
        let opponent = Rating {
            deviation: 60.0,
            ..Rating::default()
        };
        let after = RatingSystem::Glicko2.update(fresh, opponent, Outcome::Win).0;
        assert!(matches_to_establish(RatingSystem::Glicko2, after) < n);
        let established = Rating {
            deviation: 80.0,
            ..Rating::default()
        };
        assert_eq!(matches_to_establish(RatingSystem::Glicko2, established), 0);
        assert_eq!(matches_to_establish(RatingSystem::Elo, fresh), 1);
    }
}
