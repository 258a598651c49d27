//! Round-robin tournaments as a step of the ladder: a tournament, its
//! entries and all its matches are written in one transaction, so a failure
//! half-way leaves nothing behind. Tournament matches are never rated.
//!
//! Reading: [`list`] and [`detail`] are the one tournament list and the one
//! tournament-with-results the API and the site share.

use crate::challenges::active_version;
use crate::core::Core;
use crate::crosstable::{self, Crosstable};
use crate::db::Db;
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::model::{LadderId, MatchKind, TournamentId};
use crate::seed::random_seed;
use sqlx::Row;
use sqlx::any::AnyRow;
use std::collections::BTreeMap;

/// Queue priority of tournament matches.
pub const TOURNAMENT_PRIORITY: i64 = 5;
/// Most bots in one tournament.
pub const MAX_BOTS: usize = 16;
/// Most matches per pair of bots.
pub const MAX_MATCHES_PER_PAIR: i64 = 10;
/// Tournaments one user may create per minute.
pub const TOURNAMENTS_PER_MINUTE: i64 = 2;

/// What a new tournament asks for.
#[derive(Debug, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TournamentRequest {
    /// Its name, 1 to 80 characters.
    pub name: String,
    /// The ladder whose active versions play, e.g. `othello:std`.
    pub ladder: String,
    /// 2 to [`MAX_BOTS`] different bot names.
    pub bots: Vec<String>,
    /// Matches per pair of bots, 1 to [`MAX_MATCHES_PER_PAIR`] (default 1),
    /// sides alternating.
    #[serde(default = "one")]
    pub matches_per_pair: i64,
}

fn one() -> i64 {
    1
}

/// A tournament just created.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Created {
    /// Its id.
    pub id: i64,
    /// How many matches were queued.
    pub matches: i64,
}

/// Creates the tournament of `user_id` with every pair of its bots' active
/// versions queued `matches_per_pair` times, all in one transaction, and
/// wakes the workers. 400 for a bad name, count or ladder, 404/409 for a bot
/// without an active version there, 429 past [`TOURNAMENTS_PER_MINUTE`].
pub async fn create(core: &Core, user_id: i64, body: &TournamentRequest) -> Result<Created> {
    let name = body.name.trim();
    if name.is_empty() || name.chars().count() > 80 {
        return Err(Error::Invalid("a tournament name has 1 to 80 characters".into()));
    }
    if !(1..=MAX_MATCHES_PER_PAIR).contains(&body.matches_per_pair) {
        return Err(Error::Invalid(format!(
            "matches_per_pair must be between 1 and {MAX_MATCHES_PER_PAIR}"
        )));
    }
    let mut bots = body.bots.clone();
    bots.sort_by_key(|b| b.to_lowercase());
    bots.dedup_by_key(|b| b.to_lowercase());
    if !(2..=MAX_BOTS).contains(&bots.len()) {
        return Err(Error::Invalid(format!(
            "a tournament has 2 to {MAX_BOTS} different bots"
        )));
    }
    let ladder = crate::ladders::name(crate::ladders::parse(&body.ladder)?);
    let mut entries = Vec::new();
    for bot in &bots {
        entries.push(active_version(core, bot, &ladder).await?.0);
    }
    crate::auth::rate_limit(
        &core.db,
        &format!("tournament:{user_id}"),
        TOURNAMENTS_PER_MINUTE,
        60_000,
    )
    .await?;
    let mut tx = core.db.begin_write().await?;
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO tournaments (ladder, name, owner_id, matches_per_pair, created_ms) VALUES ($1, $2, $3, $4, $5) RETURNING id",
    )
    .bind(&ladder)
    .bind(name)
    .bind(user_id)
    .bind(body.matches_per_pair)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    for version in &entries {
        sqlx::query("INSERT INTO tournament_entries (tournament_id, version_id) VALUES ($1, $2)")
            .bind(id)
            .bind(version)
            .execute(&mut *tx)
            .await?;
    }
    let ladder_id = LadderId::new(ladder.as_str());
    let mut matches = 0;
    for (i, &a) in entries.iter().enumerate() {
        for &b in &entries[i + 1..] {
            for n in 0..body.matches_per_pair {
                let (first, second) = if n % 2 == 0 { (a, b) } else { (b, a) };
                let new = crate::queue::NewMatch {
                    ladder: &ladder_id,
                    a_version: first,
                    b_version: second,
                    seed: random_seed()?,
                    kind: MatchKind::Tournament,
                    priority: TOURNAMENT_PRIORITY,
                    tournament_id: Some(id),
                    budget: None,
                };
                crate::queue::insert_match(&mut *tx, &new).await?;
                matches += 1;
            }
        }
    }
    tx.commit().await?;
    crate::queue::wake_workers();
    Ok(Created { id, matches })
}

/// Most tournaments [`list`] returns.
pub const LIST_LIMIT: i64 = 100;

/// A tournament as the tournament list shows it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Tournament {
    /// Its id.
    pub id: TournamentId,
    /// Its name.
    pub name: String,
    /// The ladder its entries play on.
    pub ladder: String,
    /// Its creator's name.
    pub owner: String,
    /// Matches per pair of entrants.
    pub matches_per_pair: i64,
    /// When it was created, Unix ms.
    pub created_ms: i64,
}

/// The columns [`tournament_from`] reads, with `t` the tournaments table
/// and `u` its owner.
const TOURNAMENT_COLUMNS: &str = "t.id, t.name, t.ladder, u.name, t.matches_per_pair, t.created_ms";

/// Reads a row of [`TOURNAMENT_COLUMNS`].
fn tournament_from(row: &AnyRow) -> Result<Tournament> {
    Ok(Tournament {
        id: TournamentId(row.try_get(0)?),
        name: row.try_get(1)?,
        ladder: row.try_get(2)?,
        owner: row.try_get(3)?,
        matches_per_pair: row.try_get(4)?,
        created_ms: row.try_get(5)?,
    })
}

/// The newest [`LIST_LIMIT`] tournaments, newest first: the one list the API
/// and the tournaments page share.
pub async fn list(db: &Db) -> Result<Vec<Tournament>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {TOURNAMENT_COLUMNS} FROM tournaments t JOIN users u ON u.id = t.owner_id ORDER BY t.id DESC LIMIT $1"
    )))
    .bind(LIST_LIMIT)
    .fetch_all(&db.pool)
    .await?;
    rows.iter().map(tournament_from).collect()
}

/// Tournament `id`, if it exists.
pub async fn get(db: &Db, id: TournamentId) -> Result<Option<Tournament>> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!(
        "SELECT {TOURNAMENT_COLUMNS} FROM tournaments t JOIN users u ON u.id = t.owner_id WHERE t.id = $1"
    )))
    .bind(id.0)
    .fetch_optional(&db.pool)
    .await?;
    row.as_ref().map(tournament_from).transpose()
}

/// A tournament's header as `/api/tournaments/{id}` shows it: what it is and
/// how far it got.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Progress {
    /// Its id.
    pub id: TournamentId,
    /// Its name.
    pub name: String,
    /// The ladder its entries play on.
    pub ladder: String,
    /// Matches per pair of entrants.
    pub matches_per_pair: i64,
    /// Its matches, all statuses.
    pub matches: usize,
    /// Its finished matches.
    pub finished: usize,
}

/// One entrant's standing.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Standing {
    /// The entrant's bot name.
    pub bot: String,
    /// Its points (1 a win, ½ a draw) from finished matches.
    pub points: f64,
    /// Its finished matches.
    pub matches: i64,
}

/// A tournament with its results.
#[derive(Clone, Debug, PartialEq)]
pub struct Detail {
    /// The tournament.
    pub tournament: Tournament,
    /// Its results, from its finished matches.
    pub table: Crosstable,
}

impl Detail {
    /// What it is and how far it got.
    pub fn progress(&self) -> Progress {
        Progress {
            id: self.tournament.id,
            name: self.tournament.name.clone(),
            ladder: self.tournament.ladder.clone(),
            matches_per_pair: self.tournament.matches_per_pair,
            matches: self.table.matches,
            finished: self.table.finished,
        }
    }

    /// Entrants by points, then by name (case-insensitively); entrants
    /// without a finished match included.
    pub fn standings(&self) -> Vec<Standing> {
        self.table
            .standings()
            .into_iter()
            .map(|(bot, points, matches)| Standing { bot, points, matches })
            .collect()
    }

    /// `crosstable[a][b]`: the points of `a` against `b`, for every pair
    /// that finished a match.
    pub fn crosstable(&self) -> BTreeMap<&str, BTreeMap<&str, f64>> {
        let mut cross: BTreeMap<&str, BTreeMap<&str, f64>> = BTreeMap::new();
        for ((a, b), points) in &self.table.cross {
            cross.entry(a.as_str()).or_default().insert(b.as_str(), *points);
        }
        cross
    }
}

/// Tournament `id` with its results, if it exists.
pub async fn detail(db: &Db, id: TournamentId) -> Result<Option<Detail>> {
    let Some(tournament) = get(db, id).await? else {
        return Ok(None);
    };
    let table = crosstable::crosstable(&db.pool, id.0).await?;
    Ok(Some(Detail { tournament, table }))
}
