//! The hall's matches in the database (`hall_matches`): saved at every
//! change, held by one hall at a time under a lease, released at a stop and
//! claimed by the next hall that finds them free.

use crate::db::Db;
use crate::error::Result;

/// How long a hall's hold on its matches lasts without being renewed: a
/// hall that died without releasing them (a crash, a kill) leaves them to
/// another hall after this.
pub(super) const LEASE_MS: i64 = 10_000;

/// How old a running remote match row with no saved state must be before
/// it is taken for one left by a process that never saved it (a match is
/// saved the moment it is created, so this only covers the gap between the
/// two writes).
const UNSAVED_GRACE_MS: i64 = 10_000;

/// A match claimed from the database: its id, its saved state and the hall
/// clock of its last holder at the last write.
pub(super) struct Claimed {
    pub id: i64,
    pub state: String,
    pub hall_ms: i64,
}

/// Writes snapshot number `saves` of match `id`, held by `hall` until
/// `until_ms` (wall clock), at `hall_ms` on the hall's clock. A snapshot
/// never replaces a later one, and a hall that lost the match (another
/// took it over) writes nothing.
pub(super) async fn save(
    db: &Db,
    id: i64,
    saves: u64,
    state: &str,
    hall: &str,
    until_ms: i64,
    hall_ms: i64,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO hall_matches (match_id, saves, state, hall, held_until_ms, hall_ms) \
         VALUES ($1, $2, $3, $4, $5, $6) \
         ON CONFLICT (match_id) DO UPDATE SET saves = excluded.saves, state = excluded.state, \
           held_until_ms = excluded.held_until_ms, hall_ms = excluded.hall_ms \
         WHERE hall_matches.saves < excluded.saves AND hall_matches.hall = excluded.hall",
    )
    .bind(id)
    .bind(i64::try_from(saves).unwrap_or(i64::MAX))
    .bind(state)
    .bind(hall)
    .bind(until_ms)
    .bind(hall_ms)
    .execute(&db.pool)
    .await?;
    Ok(())
}

/// Renews `hall`'s hold on every match it holds.
pub(super) async fn renew(db: &Db, hall: &str, until_ms: i64, hall_ms: i64) -> Result<()> {
    sqlx::query("UPDATE hall_matches SET held_until_ms = $2, hall_ms = $3 WHERE hall = $1")
        .bind(hall)
        .bind(until_ms)
        .bind(hall_ms)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Lets go of every match `hall` holds, at `hall_ms` on its clock: the
/// next hall to look claims them at once.
pub(super) async fn release(db: &Db, hall: &str, hall_ms: i64) -> Result<u64> {
    let done = sqlx::query("UPDATE hall_matches SET hall = NULL, held_until_ms = 0, hall_ms = $2 WHERE hall = $1")
        .bind(hall)
        .bind(hall_ms)
        .execute(&db.pool)
        .await?;
    Ok(done.rows_affected())
}

/// Takes every match in flight that no hall holds (released, or its
/// holder's lease ran out at `now_ms`) for `hall` until `until_ms`, and
/// writes `hall` as the match row's claimant. Each match goes to one hall
/// only, however many look at once.
pub(super) async fn claim(db: &Db, hall: &str, now_ms: i64, until_ms: i64) -> Result<Vec<Claimed>> {
    let free: Vec<(i64,)> = sqlx::query_as(
        "SELECT h.match_id FROM hall_matches h JOIN matches m ON m.id = h.match_id \
         WHERE m.status IN ('pending', 'running') AND (h.hall IS NULL OR h.held_until_ms < $1) \
         ORDER BY h.match_id",
    )
    .bind(now_ms)
    .fetch_all(&db.pool)
    .await?;
    let mut claimed = Vec::new();
    for (id,) in free {
        let mut tx = db.pool.begin().await?;
        let row: Option<(String, i64)> = sqlx::query_as(
            "UPDATE hall_matches SET hall = $2, held_until_ms = $3 \
             WHERE match_id = $1 AND (hall IS NULL OR held_until_ms < $4) RETURNING state, hall_ms",
        )
        .bind(id)
        .bind(hall)
        .bind(until_ms)
        .bind(now_ms)
        .fetch_optional(&mut *tx)
        .await?;
        let Some((state, hall_ms)) = row else {
            continue;
        };
        sqlx::query("UPDATE matches SET claimed_by = $2 WHERE id = $1")
            .bind(id)
            .bind(hall)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        claimed.push(Claimed { id, state, hall_ms });
    }
    Ok(claimed)
}

/// Forgets match `id`'s saved state (its end is written).
pub(super) async fn forget(db: &Db, id: i64) -> Result<()> {
    sqlx::query("DELETE FROM hall_matches WHERE match_id = $1")
        .bind(id)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Tidies what no hall can resume, at `now_ms`: remote match rows left
/// pending or running with no saved state (by a process before saving
/// existed, or one that died between its two writes) are aborted unrated,
/// and saved states of matches whose end is written are dropped.
pub(super) async fn tidy(db: &Db, now_ms: i64) -> Result<u64> {
    let aborted = sqlx::query(
        "UPDATE matches SET status = 'aborted', finished_ms = $1, \
           error = 'the server stopped during this remote match; it was not rated' \
         WHERE status IN ('pending', 'running') AND claimed_by LIKE 'hall-%' AND created_ms < $2 \
           AND NOT EXISTS (SELECT 1 FROM hall_matches h WHERE h.match_id = matches.id)",
    )
    .bind(now_ms)
    .bind(now_ms - UNSAVED_GRACE_MS)
    .execute(&db.pool)
    .await?;
    sqlx::query(
        "DELETE FROM hall_matches WHERE match_id IN \
           (SELECT id FROM matches WHERE status NOT IN ('pending', 'running'))",
    )
    .execute(&db.pool)
    .await?;
    Ok(aborted.rows_affected())
}

/// The hall that leads, as `hall_leader` says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Leader {
    /// Its id.
    pub hall: String,
    /// Where the other front ends forward live requests.
    pub url: String,
    /// What a forwarded request carries to prove it comes from a front end.
    pub secret: String,
}

/// Makes `hall` the leader (reachable at `url`, trusting `secret`) until
/// `until_ms` if it leads already or the leader's lease ran out at
/// `now_ms`; returns the leader after the attempt.
pub(super) async fn lead(db: &Db, me: &Leader, now_ms: i64, until_ms: i64) -> Result<Leader> {
    sqlx::query(
        "INSERT INTO hall_leader (id, hall, url, secret, held_until_ms) VALUES (1, $1, $2, $3, $4) \
         ON CONFLICT (id) DO UPDATE SET hall = excluded.hall, url = excluded.url, secret = excluded.secret, \
           held_until_ms = excluded.held_until_ms \
         WHERE hall_leader.hall = excluded.hall OR hall_leader.held_until_ms < $5",
    )
    .bind(&me.hall)
    .bind(&me.url)
    .bind(&me.secret)
    .bind(until_ms)
    .bind(now_ms)
    .execute(&db.pool)
    .await?;
    let (hall, url, secret): (String, String, String) =
        sqlx::query_as("SELECT hall, url, secret FROM hall_leader WHERE id = 1")
            .fetch_one(&db.pool)
            .await?;
    Ok(Leader { hall, url, secret })
}

/// Gives up the lead if `hall` has it (at a stop): the next front end to
/// look takes it at once.
pub(super) async fn resign(db: &Db, hall: &str) -> Result<()> {
    sqlx::query("UPDATE hall_leader SET held_until_ms = 0 WHERE id = 1 AND hall = $1")
        .bind(hall)
        .execute(&db.pool)
        .await?;
    Ok(())
}
