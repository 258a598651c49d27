//! Round-robin tournaments as a step of the ladder: a tournament, its
//! entries and all its matches are written in one transaction, so a failure
//! half-way leaves nothing behind. Tournament matches are never rated.

use crate::challenges::{active_version, random_seed};
use crate::core::Core;
use crate::db::now_ms;
use crate::error::{Error, Result};

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
    let mut matches = 0;
    for (i, &a) in entries.iter().enumerate() {
        for &b in &entries[i + 1..] {
            for n in 0..body.matches_per_pair {
                let (first, second) = if n % 2 == 0 { (a, b) } else { (b, a) };
                let new = crate::worker::NewMatch {
                    ladder: &ladder,
                    a_version: first,
                    b_version: second,
                    seed: random_seed()?,
                    kind: "tournament",
                    priority: TOURNAMENT_PRIORITY,
                    tournament_id: Some(id),
                    budget: None,
                };
                crate::worker::insert_match(&mut *tx, &new).await?;
                matches += 1;
            }
        }
    }
    tx.commit().await?;
    crate::worker::wake_workers();
    Ok(Created { id, matches })
}
