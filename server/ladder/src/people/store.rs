//! The rows that carry a game across a restart (`people_games`): the moves
//! so far and the person's clock, saved at every move of the person; which
//! process holds the game and until when (a lease it renews); released at
//! a stop and claimed by the next process that leads.

use crate::db::Db;
use crate::error::Result;

/// How long a process's hold on its games lasts without being renewed: a
/// process that died without releasing them (a crash, a kill) leaves them
/// to the next leader after this.
pub const LEASE_MS: i64 = 10_000;

/// How often a process renews its hold and looks for games nobody holds.
pub const RENEW_MS: u64 = 2_000;

/// The moves of a game as the row keeps them (a JSON array of names).
pub(super) fn moves_text(moves: &[String]) -> String {
    serde_json::to_string(moves).unwrap_or_else(|_| "[]".to_owned())
}

/// Saves game `id`'s moves so far and the person's clock left (the open
/// turn's time spent is then 0), if `hall` still holds it; whether it did.
pub(super) async fn save_moves(
    db: &Db,
    id: i64,
    hall: &str,
    moves: &[String],
    clock_left_ms: Option<u64>,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE people_games SET moves = $1, clock_left_ms = $2, turn_spent_ms = 0 \
         WHERE id = $3 AND hall = $4 AND status = 'running'",
    )
    .bind(moves_text(moves))
    .bind(clock_left_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)))
    .bind(id)
    .bind(hall)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Lets go of game `id` as it is now (its moves, the person's clock left
/// and the time spent on the open turn), if `hall` holds it: the next
/// process to look claims it at once.
pub(super) async fn release(
    db: &Db,
    id: i64,
    hall: &str,
    moves: &[String],
    clock_left_ms: Option<u64>,
    turn_spent_ms: u64,
) -> Result<bool> {
    let done = sqlx::query(
        "UPDATE people_games SET moves = $1, clock_left_ms = $2, turn_spent_ms = $3, hall = NULL, \
           held_until_ms = 0 \
         WHERE id = $4 AND hall = $5 AND status = 'running'",
    )
    .bind(moves_text(moves))
    .bind(clock_left_ms.map(|ms| i64::try_from(ms).unwrap_or(i64::MAX)))
    .bind(i64::try_from(turn_spent_ms).unwrap_or(i64::MAX))
    .bind(id)
    .bind(hall)
    .execute(&db.pool)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Renews `hall`'s hold on every game it holds until `until_ms`.
pub(super) async fn renew(db: &Db, hall: &str, until_ms: i64) -> Result<()> {
    sqlx::query("UPDATE people_games SET held_until_ms = $1 WHERE hall = $2 AND status = 'running'")
        .bind(until_ms)
        .bind(hall)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// The running games no process holds at `now_ms` (released, or their
/// holder's lease ran out), oldest first.
pub(super) async fn free(db: &Db, now_ms: i64) -> Result<Vec<i64>> {
    let ids: Vec<(i64,)> = sqlx::query_as(
        "SELECT id FROM people_games WHERE status = 'running' AND (hall IS NULL OR held_until_ms < $1) ORDER BY id",
    )
    .bind(now_ms)
    .fetch_all(&db.pool)
    .await?;
    Ok(ids.into_iter().map(|(id,)| id).collect())
}

/// A game claimed to be resumed: everything the referee needs to play it
/// again and go on.
#[derive(sqlx::FromRow)]
pub(super) struct Claimed {
    pub(super) id: i64,
    pub(super) sha256: String,
    pub(super) bot: String,
    pub(super) variant: String,
    pub(super) person: String,
    pub(super) user_id: Option<i64>,
    pub(super) person_side: i64,
    pub(super) clock_ms: Option<i64>,
    pub(super) seed: i64,
    pub(super) random_opening: i64,
    pub(super) key_hash: Option<String>,
    /// `None`: a row from before games were saved at every move.
    pub(super) moves: Option<String>,
    pub(super) clock_left_ms: Option<i64>,
    pub(super) turn_spent_ms: i64,
    pub(super) client: Option<String>,
    pub(super) turn_ms: Option<i64>,
    pub(super) bank_ms: Option<i64>,
    pub(super) fuel_per_ms: Option<i64>,
}

/// Takes game `id` for `hall` until `until_ms` if it is running and no
/// process holds it at `now_ms`; its row if it did. A game goes to one
/// process only, however many ask at once.
pub(super) async fn claim(db: &Db, id: i64, hall: &str, now_ms: i64, until_ms: i64) -> Result<Option<Claimed>> {
    let done = sqlx::query(
        "UPDATE people_games SET hall = $1, held_until_ms = $2 \
         WHERE id = $3 AND status = 'running' AND (hall IS NULL OR held_until_ms < $4)",
    )
    .bind(hall)
    .bind(until_ms)
    .bind(id)
    .bind(now_ms)
    .execute(&db.pool)
    .await?;
    if done.rows_affected() != 1 {
        return Ok(None);
    }
    let row: Option<Claimed> = sqlx::query_as(
        "SELECT p.id, v.sha256, b.name AS bot, p.variant, p.person, p.user_id, p.person_side, p.clock_ms, p.seed, \
           p.random_opening, p.key_hash, p.moves, p.clock_left_ms, p.turn_spent_ms, p.client, p.turn_ms, \
           p.bank_ms, p.fuel_per_ms \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE p.id = $1 AND p.hall = $2",
    )
    .bind(id)
    .bind(hall)
    .fetch_optional(&db.pool)
    .await?;
    Ok(row)
}

/// Whether game `id` is running and no process holds it at `now_ms`.
pub(super) async fn is_free(db: &Db, id: i64, now_ms: i64) -> Result<bool> {
    let found: Option<(i64,)> = sqlx::query_as(
        "SELECT id FROM people_games WHERE id = $1 AND status = 'running' AND (hall IS NULL OR held_until_ms < $2)",
    )
    .bind(id)
    .bind(now_ms)
    .fetch_optional(&db.pool)
    .await?;
    Ok(found.is_some())
}

/// Whether game `id` is running (held by any process, or none).
pub(super) async fn is_running(db: &Db, id: i64) -> Result<bool> {
    let found: Option<(i64,)> = sqlx::query_as("SELECT id FROM people_games WHERE id = $1 AND status = 'running'")
        .bind(id)
        .fetch_optional(&db.pool)
        .await?;
    Ok(found.is_some())
}

/// Marks game `id` aborted for `reason` (a code the page explains), if
/// it is still running and `hall` holds it.
pub(super) async fn abort(db: &Db, id: i64, hall: &str, reason: &str) -> Result<()> {
    sqlx::query(
        "UPDATE people_games SET status = 'aborted', reason = $1, finished_ms = $2, hall = NULL \
         WHERE id = $3 AND status = 'running' AND hall = $4",
    )
    .bind(reason)
    .bind(crate::db::now_ms())
    .bind(id)
    .bind(hall)
    .execute(&db.pool)
    .await?;
    Ok(())
}
