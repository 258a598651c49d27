//! The match queue: how the scheduler, challenges and tournaments add
//! matches for the workers ([`crate::worker`]) to claim.
//!
//! The queue is the `matches` table: a queued match names its ladder, its
//! two versions, its seed, its kind and its priority, and carries the time
//! control it is played with, copied from the ladder when it is queued.

use crate::db::{Db, now_ms};
use crate::model::{LadderId, MatchKind};
use arbiter_games::Budget;
use sqlx::Any;
use tokio::sync::Notify;
use tokio::sync::futures::Notified;

static WAKE: Notify = Notify::const_new();

/// Wakes every idle worker of this process at once (call it after queueing
/// matches; [`enqueue`] does). Workers in other processes find new matches
/// at their next poll.
pub fn wake_workers() {
    WAKE.notify_waiters();
}

/// A wake-up from [`wake_workers`], registered when this is called: one that
/// comes between a look at the queue and the wait that follows is not lost.
pub(crate) fn woken() -> Notified<'static> {
    WAKE.notified()
}

/// A match to queue.
#[derive(Clone, Debug)]
pub struct NewMatch<'a> {
    /// The ladder, e.g. `othello:std`.
    pub ladder: &'a LadderId,
    /// Participant 0's version.
    pub a_version: i64,
    /// Participant 1's version.
    pub b_version: i64,
    /// The match seed.
    pub seed: i64,
    /// Why it is played: only ranked matches move ratings.
    pub kind: MatchKind,
    /// Higher is claimed first.
    pub priority: i64,
    /// The tournament it belongs to.
    pub tournament_id: Option<i64>,
    /// A per-move cap and per-game bank other than the ladder's (a
    /// challenge's longer control); `None` for the ladder's.
    pub budget: Option<Budget>,
}

/// Queues `new` and wakes this process's workers. The match is played with
/// the ladder's time control as it is now (or `new.budget` at the ladder's
/// fuel rate): a later change of the ladder's control does not reach it.
/// Returns the match id.
pub async fn enqueue(db: &Db, new: &NewMatch<'_>) -> crate::error::Result<i64> {
    let id = insert_match(&db.pool, new).await?;
    wake_workers();
    Ok(id)
}

/// Inserts a queued match with any executor (a pool or a transaction),
/// copying the ladder's time control into it. Wakes no worker: the caller
/// calls [`wake_workers`] once its transaction is committed.
pub(crate) async fn insert_match<'e>(
    executor: impl sqlx::Executor<'e, Database = Any>,
    new: &NewMatch<'_>,
) -> Result<i64, sqlx::Error> {
    let column = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
    sqlx::query_scalar(
        "INSERT INTO matches (ladder, a_version, b_version, seed, kind, tournament_id, priority, status, created_ms, \
           turn_ms, bank_ms, fuel_per_ms) \
         SELECT $1, $2, $3, $4, $5, $6, $7, 'queued', $8, COALESCE($9, l.turn_ms), COALESCE($10, l.bank_ms), l.fuel_per_ms \
         FROM ladders l WHERE l.name = $1 RETURNING id",
    )
    .bind(new.ladder.as_str())
    .bind(new.a_version)
    .bind(new.b_version)
    .bind(new.seed)
    .bind(new.kind.as_str())
    .bind(new.tournament_id)
    .bind(new.priority)
    .bind(now_ms())
    .bind(new.budget.map(|b| column(b.turn_ms)))
    .bind(new.budget.map(|b| column(b.bank_ms)))
    .fetch_one(executor)
    .await
}
