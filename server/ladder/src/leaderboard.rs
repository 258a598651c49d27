//! Ladders and their leaderboards as typed rows: what `/api/ladders`, the
//! leaderboard API and the ladder pages read, written once.
//!
//! Every row serialises to exactly the JSON the API answers.

use crate::db::Db;
use crate::error::{Error, Result};
use crate::ladders::{self, TimeControl};
use crate::model::VersionId;
use crate::ratings::PROVISIONAL_RD;
use arbiter_games::Variant;
use serde::Serialize;
use sqlx::Row;
use std::collections::HashMap;

/// Matches a trend ([`recent_ratings`]) looks back over.
pub const TREND_MATCHES: usize = 10;

/// Rated matches [`recent_ratings`] reads at most (the newest ones).
pub const TREND_SCAN: i64 = 5000;

/// How a leaderboard is ordered. Provisional versions (Glicko-2 deviation
/// ≥ [`PROVISIONAL_RD`]) stand in place in every order, marked
/// ([`LeaderboardRow::provisional`]), never moved to the bottom.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Sort {
    /// By the rating fitted to the ladder's whole rated log
    /// ([`LeaderboardRow::fitted`], the headline every page shows in bold;
    /// the default), versions without a rated match last.
    #[default]
    Fitted,
    /// By Glicko-2's conservative rating, rating − 2·deviation: the value
    /// the version is 97.5% sure to be above.
    Conservative,
    /// By the Glicko-2 rating alone, whatever its deviation.
    Rating,
}

impl Sort {
    /// `fitted` (also when absent or empty), `conservative` or `rating`;
    /// anything else is an [`Error::Invalid`] that names the three.
    pub fn parse(text: Option<&str>) -> Result<Sort> {
        match text {
            None | Some("" | "fitted") => Ok(Sort::Fitted),
            Some("conservative") => Ok(Sort::Conservative),
            Some("rating") => Ok(Sort::Rating),
            Some(other) => Err(Error::Invalid(format!(
                "sort must be fitted, conservative or rating, not {other:?}"
            ))),
        }
    }

    /// The query value, which [`Sort::parse`] reads back.
    pub fn as_str(self) -> &'static str {
        match self {
            Sort::Fitted => "fitted",
            Sort::Rating => "rating",
            Sort::Conservative => "conservative",
        }
    }
}

/// A ladder as `/api/ladders` lists it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LadderSummary {
    /// Its canonical name, e.g. `othello:std`, `remote:othello:std`.
    pub name: String,
    /// The game, e.g. `othello`.
    pub game: String,
    /// The mode, e.g. `std` (empty when there is none).
    pub mode: String,
    /// `fuel` for the ladders of sandboxed bots (fair, re-runnable),
    /// `wall` for the remote bots' ladders ("Remote bots · wall clock").
    pub clock: String,
    /// Active versions playing on it.
    pub active_bots: i64,
    /// Its time control (the default of its variant when none is stored).
    #[cfg_attr(feature = "openapi", schema(value_type = Object))]
    pub time_control: TimeControl,
    /// The longer time controls a challenge may ask for, as `MOVE/BANK`.
    pub challenge_time_controls: Vec<String>,
}

/// Every ladder, the fuel-clock ones in the order of [`Variant::ALL`], then
/// the remote ones in the same order, with its number of active versions
/// and its time control.
pub async fn ladders(db: &Db) -> Result<Vec<LadderSummary>> {
    let times = ladders::time_controls(db).await?;
    let mut out = Vec::with_capacity(2 * Variant::ALL.len());
    for clock in [ladders::Clock::Fuel, ladders::Clock::Wall] {
        for variant in Variant::ALL {
            let (name, default, clock_name) = match clock {
                ladders::Clock::Fuel => (ladders::name(variant), TimeControl::default_for(variant), "fuel"),
                ladders::Clock::Wall => (
                    ladders::remote_name(variant),
                    TimeControl::remote_default_for(variant),
                    "wall",
                ),
            };
            let active_bots = active_versions(db, &name).await?;
            let plain = variant.to_string();
            let (game, mode) = plain.split_once(':').unwrap_or((plain.as_str(), ""));
            let time_control = times.get(&name).copied().unwrap_or(default);
            // Challenges are fuel-clock matches.
            let challenge_time_controls = match clock {
                ladders::Clock::Fuel => variant.longer_budgets().iter().map(ToString::to_string).collect(),
                ladders::Clock::Wall => Vec::new(),
            };
            out.push(LadderSummary {
                game: game.to_owned(),
                mode: mode.to_owned(),
                clock: clock_name.to_owned(),
                active_bots,
                time_control,
                challenge_time_controls,
                name,
            });
        }
    }
    Ok(out)
}

/// Number of active versions on `ladder`.
pub async fn active_versions(db: &Db, ladder: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM version_ladders l JOIN versions v ON v.id = l.version_id \
         WHERE l.ladder = $1 AND v.status = 'active'",
    )
    .bind(ladder)
    .fetch_one(&db.pool)
    .await?)
}

/// Number of active remote bots (not house bots) on `ladder`.
pub async fn remote_versions(db: &Db, ladder: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COUNT(*) FROM version_ladders l JOIN versions v ON v.id = l.version_id \
         WHERE l.ladder = $1 AND v.status = 'active' AND v.remote_url IS NOT NULL",
    )
    .bind(ladder)
    .fetch_one(&db.pool)
    .await?)
}

/// One row of a leaderboard: an active version's rating on the ladder.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LeaderboardRow {
    /// 1 for the first row of the board, counting the rows skipped.
    pub rank: i64,
    /// The version.
    pub version_id: VersionId,
    /// Its bot's name.
    pub bot: String,
    /// The bot's owner's name.
    pub owner: String,
    /// The version's number within its bot.
    pub version: i64,
    /// The Glicko-2 rating (matchmaking's; not the headline, see `fitted`).
    pub rating: f64,
    /// The Glicko-2 rating deviation.
    pub deviation: f64,
    /// Glicko-2 rating − 2·deviation.
    pub low: f64,
    /// Glicko-2 rating + 2·deviation.
    pub high: f64,
    /// Glicko-2 rating − 2·deviation, what [`Sort::Conservative`] orders by.
    pub conservative: f64,
    /// Whether the Glicko-2 deviation is still at least [`PROVISIONAL_RD`].
    pub provisional: bool,
    /// Rated wins.
    pub wins: i64,
    /// Rated draws.
    pub draws: i64,
    /// Rated losses.
    pub losses: i64,
    /// wins + draws + losses.
    pub matches: i64,
    /// When it last played a rated match, Unix ms (`null` before its first).
    pub last_played_ms: Option<i64>,
    /// Its rating fitted to every rated result of the ladder (Bradley–Terry
    /// by maximum likelihood, as engine rating lists are; the mean of every
    /// version that played there is 1500): the headline figure, on the
    /// scale of real strength differences, and what the default order
    /// ([`Sort::Fitted`]) follows. `null` before its first rated match.
    pub fitted: Option<f64>,
    /// Half the width of the fitted rating's 95% interval on the ladder's
    /// scale, from the fit's full covariance (`null` with it).
    pub fitted_interval: Option<f64>,
    /// In the fitted order (the default): the chance, given every rated
    /// result, that this version is stronger than the next one down the
    /// board (from the fit's covariance); `null` for the last row, in
    /// another order, or without a fit of both.
    pub above_next: Option<f64>,
    /// Where the bot's photo (a square PNG) is served, if it has one.
    pub photo: Option<String>,
}

/// `limit` rows of `ladder`'s leaderboard (active versions only) after
/// skipping `offset`, best first as `sort` says; ties go to the older
/// version.
pub async fn rows(db: &Db, ladder: &str, sort: Sort, limit: i64, offset: i64) -> Result<Vec<LeaderboardRow>> {
    // The fit is made in Rust: by it, every row is read and paged here.
    let (order, paged_in_sql) = match sort {
        Sort::Fitted => ("r.version_id", false),
        Sort::Rating => ("r.rating DESC, r.version_id", true),
        Sort::Conservative => ("r.rating - 2 * r.deviation DESC, r.version_id", true),
    };
    let page = if paged_in_sql { "LIMIT $2 OFFSET $3" } else { "" };
    let sql = format!(
        "SELECT r.version_id, b.name, u.name, v.number, r.rating, r.deviation, r.wins, r.draws, r.losses, r.last_played_ms, \
         b.photo_sha256 \
         FROM ratings r \
         JOIN versions v ON v.id = r.version_id \
         JOIN bots b ON b.id = v.bot_id \
         JOIN users u ON u.id = b.owner_id \
         WHERE r.ladder = $1 AND v.status = 'active' \
         AND EXISTS (SELECT 1 FROM version_ladders vl WHERE vl.version_id = r.version_id AND vl.ladder = r.ladder) \
         ORDER BY {order} {page}"
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(ladder);
    if paged_in_sql {
        query = query.bind(limit).bind(offset);
    }
    let rows = query.fetch_all(&db.pool).await?;
    let fit = crate::ratings::fitted::ladder_fit(db, ladder).await?;
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let rating: f64 = row.try_get(4)?;
        let deviation: f64 = row.try_get(5)?;
        let (wins, draws, losses): (i64, i64, i64) = (row.try_get(6)?, row.try_get(7)?, row.try_get(8)?);
        let version_id = VersionId(row.try_get(0)?);
        let fitted = fit.get(version_id);
        let bot: String = row.try_get(1)?;
        let photo = row
            .try_get::<Option<String>, _>(10)?
            .map(|sha256| crate::bots::photo_path(&bot, &sha256));
        out.push(LeaderboardRow {
            rank: 0,
            version_id,
            photo,
            bot,
            owner: row.try_get(2)?,
            version: row.try_get(3)?,
            rating,
            deviation,
            low: rating - 2.0 * deviation,
            high: rating + 2.0 * deviation,
            conservative: rating - 2.0 * deviation,
            provisional: deviation >= PROVISIONAL_RD,
            wins,
            draws,
            losses,
            matches: wins + draws + losses,
            last_played_ms: row.try_get(9)?,
            fitted: fitted.map(|f| f.rating),
            fitted_interval: fitted.map(|f| f.interval),
            above_next: None,
        });
    }
    if !paged_in_sql {
        by_fitted(&mut out);
        for k in 1..out.len() {
            let next = out[k].version_id;
            out[k - 1].above_next = fit.order_probability(out[k - 1].version_id, next);
        }
        let skip = usize::try_from(offset).unwrap_or(usize::MAX);
        let take = usize::try_from(limit).unwrap_or(0);
        out = out.into_iter().skip(skip).take(take).collect();
    }
    // Ranks count the rows skipped; an absurd offset finds no rows anyway.
    for (rank, row) in (offset.saturating_add(1)..).zip(&mut out) {
        row.rank = rank;
    }
    Ok(out)
}

/// Orders `rows` as [`Sort::Fitted`] does: highest fitted rating first,
/// versions without one last, ties to the older version.
fn by_fitted(rows: &mut [LeaderboardRow]) {
    rows.sort_by(|x, y| {
        let key = |row: &LeaderboardRow| row.fitted.unwrap_or(f64::NEG_INFINITY);
        key(y).total_cmp(&key(x)).then_with(|| x.version_id.cmp(&y.version_id))
    });
}

/// Each version's ratings after its last [`TREND_MATCHES`] rated matches on
/// `ladder` (among the newest [`TREND_SCAN`] rated matches there), oldest
/// first, starting with the rating before the first of them. A version
/// without such a match has no entry.
pub async fn recent_ratings(db: &Db, ladder: &str) -> Result<HashMap<VersionId, Vec<f64>>> {
    let rated = sqlx::query(
        "SELECT a_version, a_before, a_after, b_version, b_before, b_after FROM matches \
         WHERE ladder = $1 AND status = 'finished' AND a_after IS NOT NULL AND b_after IS NOT NULL \
         ORDER BY id DESC LIMIT $2",
    )
    .bind(ladder)
    .bind(TREND_SCAN)
    .fetch_all(&db.pool)
    .await?;
    let mut newest_first: HashMap<VersionId, Vec<f64>> = HashMap::new();
    let mut first_before: HashMap<VersionId, f64> = HashMap::new();
    for row in &rated {
        for base in [0, 3] {
            let version = VersionId(row.try_get(base)?);
            let before: Option<f64> = row.try_get(base + 1)?;
            let after: Option<f64> = row.try_get(base + 2)?;
            let list = newest_first.entry(version).or_default();
            if list.len() < TREND_MATCHES
                && let Some(after) = after
            {
                list.push(after);
                if let Some(before) = before {
                    first_before.insert(version, before);
                }
            }
        }
    }
    Ok(newest_first
        .into_iter()
        .map(|(version, mut list)| {
            if let Some(&before) = first_before.get(&version) {
                list.push(before);
            }
            list.reverse();
            (version, list)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sort_reads_its_own_text_and_refuses_others() {
        for sort in [Sort::Fitted, Sort::Rating, Sort::Conservative] {
            assert_eq!(Sort::parse(Some(sort.as_str())).ok(), Some(sort));
        }
        assert_eq!(Sort::parse(None).ok(), Some(Sort::Fitted));
        assert_eq!(Sort::parse(Some("")).ok(), Some(Sort::Fitted));
        assert_eq!(Sort::default(), Sort::Fitted);
        assert!(matches!(Sort::parse(Some("luck")), Err(Error::Invalid(_))));
    }

    /// A row of version `id` with fitted rating `fitted` (and a Glicko-2
    /// rating that disagrees with it).
    fn row(id: i64, fitted: Option<f64>) -> LeaderboardRow {
        LeaderboardRow {
            rank: 0,
            version_id: VersionId(id),
            bot: format!("b{id}"),
            owner: "o".into(),
            version: 1,
            rating: 3000.0 - fitted.unwrap_or(0.0),
            deviation: 50.0,
            low: 0.0,
            high: 0.0,
            conservative: 0.0,
            provisional: false,
            wins: 0,
            draws: 0,
            losses: 0,
            matches: 0,
            last_played_ms: None,
            fitted,
            fitted_interval: fitted.map(|_| 10.0),
            above_next: None,
            photo: None,
        }
    }

    #[test]
    fn the_default_order_is_the_fitted_rating_unfitted_last_ties_to_the_older() {
        let mut rows = vec![
            row(5, None),
            row(4, Some(1400.0)),
            row(3, Some(1600.0)),
            row(2, None),
            row(6, Some(1600.0)),
            row(1, Some(1500.0)),
        ];
        by_fitted(&mut rows);
        let ids: Vec<i64> = rows.iter().map(|r| r.version_id.0).collect();
        assert_eq!(ids, [3, 6, 1, 4, 2, 5]);
    }

    #[test]
    fn a_row_serialises_with_the_api_keys() {
        let row = LeaderboardRow {
            rank: 1,
            version_id: VersionId(7),
            bot: "ann".into(),
            owner: "anne".into(),
            version: 2,
            rating: 1500.0,
            deviation: 100.0,
            low: 1300.0,
            high: 1700.0,
            conservative: 1300.0,
            provisional: false,
            wins: 1,
            draws: 2,
            losses: 3,
            matches: 6,
            last_played_ms: None,
            fitted: Some(1520.5),
            fitted_interval: Some(40.0),
            above_next: Some(0.9),
            photo: Some("/bots/ann/photo.png?v=0123456789ab".into()),
        };
        let value = serde_json::to_value(&row).ok();
        assert_eq!(
            value,
            Some(serde_json::json!({
                "rank": 1, "version_id": 7, "bot": "ann", "owner": "anne", "version": 2,
                "rating": 1500.0, "deviation": 100.0, "low": 1300.0, "high": 1700.0,
                "conservative": 1300.0, "provisional": false, "wins": 1, "draws": 2,
                "losses": 3, "matches": 6, "last_played_ms": null,
                "fitted": 1520.5, "fitted_interval": 40.0, "above_next": 0.9,
                "photo": "/bots/ann/photo.png?v=0123456789ab",
            }))
        );
    }
}
