//! Bots and their versions as typed rows: what the bot and version API and
//! the bot pages read, written once.
//!
//! Every row serialises to exactly the JSON the API answers. A version's
//! status is read as a [`VersionStatus`] and a match's as a
//! [`MatchStatus`]: text the model does not know is an error, never a
//! default. A version's `stderr` (its check's log) is read only for its
//! owner.

use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::{BotId, MatchStatus, UserId, VersionId, VersionStatus};
use crate::ratings::{PROVISIONAL_RD, Rating};
use serde::Serialize;
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::HashMap;

/// Most bots [`list`] returns.
pub const LIST_LIMIT: i64 = 1000;

/// A bot as the bot list shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct BotSummary {
    /// Its name as registered.
    pub name: String,
    /// Its owner's name.
    pub owner: String,
    /// Whether it was taken out of matchmaking.
    pub retired: bool,
    /// The number of its newest active version, if it has one.
    pub active_version: Option<i64>,
    /// How many versions it has, all statuses.
    pub versions: i64,
}

/// The first [`LIST_LIMIT`] bots by name (case-insensitively), each with its
/// newest active version.
pub async fn list(db: &Db) -> Result<Vec<BotSummary>> {
    let rows = sqlx::query(
        "SELECT b.name, u.name, b.retired, \
           (SELECT number FROM versions v WHERE v.bot_id = b.id AND v.status = 'active' ORDER BY number DESC LIMIT 1), \
           (SELECT COUNT(*) FROM versions v WHERE v.bot_id = b.id) \
         FROM bots b JOIN users u ON u.id = b.owner_id ORDER BY b.name_key LIMIT $1",
    )
    .bind(LIST_LIMIT)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(BotSummary {
                name: row.try_get(0)?,
                owner: row.try_get(1)?,
                retired: row.try_get::<i64, _>(2)? != 0,
                active_version: row.try_get(3)?,
                versions: row.try_get(4)?,
            })
        })
        .collect()
}

/// One bot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Bot {
    /// Its id.
    pub id: BotId,
    /// Its name as registered.
    pub name: String,
    /// Its owner's name.
    pub owner: String,
    /// Its owner's id (not serialised).
    #[serde(skip)]
    pub owner_id: UserId,
    /// Whether it was taken out of matchmaking.
    pub retired: bool,
    /// When it was created, Unix ms.
    pub created_ms: i64,
    /// Its bio, plain text (escape it where shown); empty when none.
    pub bio: String,
    /// Where its photo is served (a square PNG), if it has one.
    pub photo: Option<String>,
    /// Whether the scheduler pairs it automatically (its owner may pause
    /// it).
    pub auto_match: bool,
    /// How many matches it plays at once at most (remote bots).
    pub concurrent_matches: i64,
    /// The ladders its active version plays (empty without one).
    pub supported_games: Vec<String>,
    /// Whether people may play it from the site (its owner's choice).
    pub people_play: bool,
}

/// Where the photo with blob key `sha256` of the bot `name` is served: the
/// digest in the query makes a new photo a new address (cached forever).
pub fn photo_path(name: &str, sha256: &str) -> String {
    format!("/bots/{name}/photo.png?v={}", sha256.get(..12).unwrap_or(sha256))
}

/// The bot called `name` (case-insensitively), if there is one.
pub async fn by_name(db: &Db, name: &str) -> Result<Option<Bot>> {
    let row = sqlx::query(
        "SELECT b.id, b.name, u.name, b.owner_id, b.retired, b.created_ms, b.bio, b.photo_sha256, b.auto_match, \
         b.concurrent_matches, b.people_play FROM bots b JOIN users u ON u.id = b.owner_id WHERE b.name_key = $1",
    )
    .bind(name.to_lowercase())
    .fetch_optional(&db.pool)
    .await?;
    let supported_games: Vec<String> = match &row {
        Some(row) => {
            sqlx::query_scalar(
                "SELECT vl.ladder FROM version_ladders vl JOIN versions v ON v.id = vl.version_id \
             WHERE v.bot_id = $1 AND v.status = 'active' ORDER BY vl.ladder",
            )
            .bind(row.try_get::<i64, _>(0)?)
            .fetch_all(&db.pool)
            .await?
        }
        None => Vec::new(),
    };
    row.map(|row| {
        Ok(Bot {
            id: BotId(row.try_get(0)?),
            name: row.try_get(1)?,
            owner: row.try_get(2)?,
            owner_id: UserId(row.try_get(3)?),
            retired: row.try_get::<i64, _>(4)? != 0,
            created_ms: row.try_get(5)?,
            bio: row.try_get(6)?,
            photo: row
                .try_get::<Option<String>, _>(7)?
                .map(|sha256| photo_path(&row.try_get::<String, _>(1).unwrap_or_default(), &sha256)),
            auto_match: row.try_get::<i64, _>(8)? != 0,
            concurrent_matches: row.try_get(9)?,
            supported_games,
            people_play: row.try_get::<i64, _>(10)? != 0,
        })
    })
    .transpose()
}

/// One version of a bot.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Version {
    /// Its id.
    pub id: VersionId,
    /// Its number within its bot, from 1.
    pub number: i64,
    /// The SHA-256 of its module, in hex.
    pub sha256: String,
    /// Where it is in its life.
    pub status: VersionStatus,
    /// Why it was rejected, if it was; for a version accepted on some of
    /// its ladders only, why the others refused it (one line each).
    pub reason: Option<String>,
    /// The ladders it plays: those it was uploaded for until its check
    /// ends, then those whose smoke match it passed (see `verdicts`).
    pub ladders: Vec<String>,
    /// Each ticked ladder's verdict of its check (passed, or refused with
    /// the reason), in the order ticked; empty before the check ends.
    pub verdicts: Vec<crate::versions::LadderVerdict>,
    /// When it was uploaded, Unix ms.
    pub created_ms: i64,
    /// When its check finished, Unix ms (`null` while checking).
    pub checked_ms: Option<i64>,
    /// What its module is and how its check compiled it, in words (e.g.
    /// `WASI 0.2 component, Python (componentize-py), 18.6 MB, compiled in
    /// 7.9 s, runtime cache warm (97% of its 9 912 functions compiled
    /// before)`); `null` before its check, or when the module was refused
    /// before it was understood.
    pub module: Option<String>,
    /// Its check's log: `Some` (the key present, `null` when there is no
    /// log) only when read for its owner; `None` (the key absent)
    /// otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stderr: Option<Option<String>>,
}

/// The columns [`version_from`] reads, with `v` the versions table.
const VERSION_COLUMNS: &str = "v.id, v.number, v.sha256, v.status, v.reason, v.stderr, v.ladders, v.created_ms, v.checked_ms, v.module, \
     v.verdicts";

/// Reads a row of [`VERSION_COLUMNS`]; `stderr` only when `owner_view`.
fn version_from(row: &AnyRow, owner_view: bool) -> Result<Version> {
    let ladders: String = row.try_get("ladders")?;
    let ladders: Vec<String> = serde_json::from_str(&ladders)
        .map_err(|error| Error::Internal(format!("a version's ladders are not a JSON list of names: {error}")))?;
    let verdicts = match row.try_get::<Option<String>, _>("verdicts")? {
        Some(json) => serde_json::from_str(&json)
            .map_err(|error| Error::Internal(format!("a version's verdicts are not a JSON list: {error}")))?,
        None => Vec::new(),
    };
    Ok(Version {
        id: VersionId(row.try_get("id")?),
        number: row.try_get("number")?,
        sha256: row.try_get("sha256")?,
        status: row.try_get::<String, _>("status")?.parse()?,
        reason: row.try_get("reason")?,
        ladders,
        verdicts,
        created_ms: row.try_get("created_ms")?,
        checked_ms: row.try_get("checked_ms")?,
        module: row.try_get("module")?,
        stderr: if owner_view { Some(row.try_get("stderr")?) } else { None },
    })
}

/// A version with the bot it belongs to, as `/api/versions/{id}` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionOfBot {
    /// The version.
    #[serde(flatten)]
    pub version: Version,
    /// Its bot's name.
    pub bot: String,
    /// Its bot's owner's id (not serialised).
    #[serde(skip)]
    pub owner_id: UserId,
}

/// Version `id` with its bot's name, if it exists; its `stderr` only when
/// `viewer` owns the bot.
pub async fn version(db: &Db, id: VersionId, viewer: Option<UserId>) -> Result<Option<VersionOfBot>> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS}, b.name AS bot, b.owner_id AS owner_id \
         FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = $1"
    )))
    .bind(id.0)
    .fetch_optional(&db.pool)
    .await?;
    row.map(|row| {
        let owner_id = UserId(row.try_get("owner_id")?);
        Ok(VersionOfBot {
            version: version_from(&row, viewer == Some(owner_id))?,
            bot: row.try_get("bot")?,
            owner_id,
        })
    })
    .transpose()
}

/// A version's rating on one ladder.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionRating {
    /// The ladder.
    pub ladder: String,
    /// The Glicko-2 rating (matchmaking's; the headline is `fitted`).
    pub rating: f64,
    /// The Glicko-2 rating deviation.
    pub deviation: f64,
    /// Whether the Glicko-2 deviation is still at least [`PROVISIONAL_RD`].
    pub provisional: bool,
    /// Rated wins.
    pub wins: i64,
    /// Rated draws.
    pub draws: i64,
    /// Rated losses.
    pub losses: i64,
    /// The rating fitted to the ladder's whole rated log, the headline the
    /// leaderboard shows and sorts by
    /// ([`crate::leaderboard::LeaderboardRow::fitted`]); `null` before the
    /// version's first rated match there.
    pub fitted: Option<f64>,
    /// Half the width of the fitted rating's 95% interval (`null` with it).
    pub fitted_interval: Option<f64>,
    /// Glicko-2 volatility (not serialised).
    #[serde(skip)]
    pub volatility: f64,
}

impl VersionRating {
    /// The rating as the rating systems take it.
    pub fn glicko(&self) -> Rating {
        Rating {
            rating: self.rating,
            deviation: self.deviation,
            volatility: self.volatility,
        }
    }
}

/// A version with its ratings, as a bot's page and `/api/bots/{name}` show
/// it.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct VersionWithRatings {
    /// The version.
    #[serde(flatten)]
    pub version: Version,
    /// Its rating on each of its ladders, by ladder name.
    pub ratings: Vec<VersionRating>,
}

/// Every version of bot `bot` (owned by `owner`), newest first, each with
/// its ratings by ladder name; `stderr` only when `viewer` is the owner. The
/// one rule the bot API and the bot page share.
pub async fn versions_with_ratings(
    db: &Db,
    bot: BotId,
    owner: UserId,
    viewer: Option<UserId>,
) -> Result<Vec<VersionWithRatings>> {
    let owner_view = viewer == Some(owner);
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {VERSION_COLUMNS} FROM versions v WHERE v.bot_id = $1 ORDER BY v.number DESC"
    )))
    .bind(bot.0)
    .fetch_all(&db.pool)
    .await?;
    let ratings = sqlx::query(
        "SELECT r.version_id, r.ladder, r.rating, r.deviation, r.wins, r.draws, r.losses, r.volatility \
         FROM ratings r JOIN versions v ON v.id = r.version_id WHERE v.bot_id = $1 ORDER BY r.ladder",
    )
    .bind(bot.0)
    .fetch_all(&db.pool)
    .await?;
    let mut by_version: HashMap<VersionId, Vec<VersionRating>> = HashMap::new();
    let mut fits: HashMap<String, std::sync::Arc<crate::ratings::fitted::LadderFit>> = HashMap::new();
    for row in &ratings {
        let deviation: f64 = row.try_get(3)?;
        let version = VersionId(row.try_get(0)?);
        let ladder: String = row.try_get(1)?;
        let fit = match fits.get(&ladder) {
            Some(fit) => fit.clone(),
            None => {
                let fit = crate::ratings::fitted::ladder_fit(db, &ladder).await?;
                fits.insert(ladder.clone(), fit.clone());
                fit
            }
        };
        let fitted = fit.get(version);
        by_version.entry(version).or_default().push(VersionRating {
            fitted: fitted.map(|f| f.rating),
            fitted_interval: fitted.map(|f| f.interval),
            ladder,
            rating: row.try_get(2)?,
            deviation,
            provisional: deviation >= PROVISIONAL_RD,
            wins: row.try_get(4)?,
            draws: row.try_get(5)?,
            losses: row.try_get(6)?,
            volatility: row.try_get(7)?,
        });
    }
    rows.iter()
        .map(|row| {
            let version = version_from(row, owner_view)?;
            Ok(VersionWithRatings {
                ratings: by_version.remove(&version.id).unwrap_or_default(),
                version,
            })
        })
        .collect()
}

/// A match of a bot, seen from the bot's side.
#[derive(Clone, Debug, PartialEq)]
pub struct BotMatch {
    /// The ladder it was played on.
    pub ladder: String,
    /// Where it is in its life.
    pub status: MatchStatus,
    /// The opponent's bot name.
    pub opponent: String,
    /// `Some(true)` if the bot won, `Some(false)` if it lost, `None` for a
    /// draw or a match without a result.
    pub won: Option<bool>,
    /// The bot's rating before the match, if it was rated.
    pub before: Option<f64>,
    /// The bot's rating after the match, if it was rated.
    pub after: Option<f64>,
}

/// The newest `limit` matches (any status) of any version of `bot`, oldest
/// first.
pub async fn played_matches(db: &Db, bot: BotId, limit: i64) -> Result<Vec<BotMatch>> {
    // The caller checks the status, since a status filter in SQL makes
    // SQLite pick the queue index instead.
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT m.ladder, m.winner, av.bot_id, ab.name, bb.name, m.a_before, m.a_after, m.b_before, m.b_after, m.status \
         FROM matches m \
         JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
         JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id \
         WHERE m.id IN ({}) ORDER BY m.id DESC LIMIT $2",
        crate::matches::BOT_MATCH_IDS
    )))
    .bind(bot.0)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .rev()
        .map(|row| {
            let we_are_a = BotId(row.try_get(2)?) == bot;
            let (seat, opponent, before, after) = if we_are_a {
                (0, row.try_get(4)?, row.try_get(5)?, row.try_get(6)?)
            } else {
                (1, row.try_get(3)?, row.try_get(7)?, row.try_get(8)?)
            };
            let winner: Option<i64> = row.try_get(1)?;
            Ok(BotMatch {
                ladder: row.try_get(0)?,
                status: row.try_get::<String, _>(9)?.parse()?,
                opponent,
                won: winner.map(|winner| winner == seat),
                before,
                after,
            })
        })
        .collect()
}

/// When user `user` signed up, Unix ms; [`Error::NotFound`] if there is no
/// such user.
pub async fn member_since(db: &Db, user: UserId) -> Result<i64> {
    sqlx::query_scalar("SELECT created_ms FROM users WHERE id = $1")
        .bind(user.0)
        .fetch_optional(&db.pool)
        .await?
        .ok_or_else(|| Error::not_found(format!("user {user}")))
}

/// One of a user's own bots, as their account page lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OwnedBot {
    /// Its name as registered.
    pub name: String,
    /// Its newest version's status (`None` before any upload finished).
    pub newest: Option<VersionStatus>,
    /// Whether it was taken out of matchmaking.
    pub retired: bool,
}

impl OwnedBot {
    /// Whether it can play now: not retired, and its newest version active.
    pub fn plays(&self) -> bool {
        !self.retired && self.newest == Some(VersionStatus::Active)
    }
}

/// `user`'s bots, by name.
pub async fn owned_by(db: &Db, user: UserId) -> Result<Vec<OwnedBot>> {
    let rows = sqlx::query(
        "SELECT b.name, b.retired, \
           (SELECT v.status FROM versions v WHERE v.bot_id = b.id ORDER BY v.number DESC LIMIT 1) \
         FROM bots b WHERE b.owner_id = $1 ORDER BY b.name_key",
    )
    .bind(user.0)
    .fetch_all(&db.pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok(OwnedBot {
                name: row.try_get(0)?,
                retired: row.try_get::<i64, _>(1)? != 0,
                newest: row.try_get::<Option<String>, _>(2)?.map(|s| s.parse()).transpose()?,
            })
        })
        .collect()
}

/// Most names [`active_names`] returns.
pub const ACTIVE_NAMES_LIMIT: i64 = 2000;

/// Names of the bots with an active version (for pickers), by name.
pub async fn active_names(db: &Db) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT b.name FROM bots b WHERE EXISTS \
           (SELECT 1 FROM versions v WHERE v.bot_id = b.id AND v.status = 'active') \
         ORDER BY b.name_key LIMIT $1",
    )
    .bind(ACTIVE_NAMES_LIMIT)
    .fetch_all(&db.pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(stderr: Option<Option<String>>) -> Version {
        Version {
            id: VersionId(3),
            number: 1,
            sha256: "ab".into(),
            status: VersionStatus::Checking,
            reason: None,
            ladders: vec!["othello:std".into()],
            verdicts: Vec::new(),
            created_ms: 10,
            checked_ms: None,
            module: None,
            stderr,
        }
    }

    #[test]
    fn stderr_is_a_key_only_for_the_owner() {
        let stranger = serde_json::to_value(version(None)).ok();
        assert_eq!(
            stranger,
            Some(json!({
                "id": 3, "number": 1, "sha256": "ab", "status": "checking", "reason": null,
                "ladders": ["othello:std"], "verdicts": [], "created_ms": 10, "checked_ms": null, "module": null,
            }))
        );
        let owner = serde_json::to_value(version(Some(None))).ok();
        assert_eq!(owner.as_ref().and_then(|v| v.get("stderr")), Some(&json!(null)));
    }

    #[test]
    fn a_version_of_a_bot_is_flat() {
        let value = serde_json::to_value(VersionOfBot {
            version: version(None),
            bot: "ann".into(),
            owner_id: UserId(1),
        })
        .ok();
        assert_eq!(value.as_ref().and_then(|v| v.get("bot")), Some(&json!("ann")));
        assert_eq!(value.as_ref().and_then(|v| v.get("owner_id")), None);
        assert_eq!(value.as_ref().and_then(|v| v.get("status")), Some(&json!("checking")));
    }

    #[test]
    fn a_rating_hides_its_volatility() {
        let rating = VersionRating {
            ladder: "othello:std".into(),
            rating: 1500.0,
            deviation: 350.0,
            provisional: true,
            wins: 0,
            draws: 0,
            losses: 0,
            fitted: None,
            fitted_interval: None,
            volatility: 0.06,
        };
        assert_eq!(
            serde_json::to_value(&rating).ok(),
            Some(json!({
                "ladder": "othello:std", "rating": 1500.0, "deviation": 350.0, "provisional": true,
                "wins": 0, "draws": 0, "losses": 0, "fitted": null, "fitted_interval": null,
            }))
        );
        assert!(rating.glicko().provisional());
    }
}
