//! Claims and leases: the statements that take a queued (or abandoned)
//! match for a worker, renew its lease while it plays, and give it back.

use super::record::ended;
use super::{Claimed, VersionModule, WorkerConfig};
use crate::core::Core;
use crate::db::{Backend, OwnConnection, now_ms};
use crate::ladders::TimeControl;
use crate::model::{LadderId, MatchKind};
use sqlx::Row;
use std::time::Instant;

/// What a claim returns: the match, its time control, and both versions'
/// modules and bot names (scalar subqueries, so a claim is one statement).
macro_rules! claim_returning {
    () => {
        "RETURNING id, ladder, a_version, b_version, seed, attempts, turn_ms, bank_ms, fuel_per_ms, \
         (SELECT v.sha256 FROM versions v WHERE v.id = a_version), \
         (SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = a_version), \
         (SELECT v.sha256 FROM versions v WHERE v.id = b_version), \
         (SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = b_version), \
         error, kind, \
         (SELECT v.remote_url FROM versions v WHERE v.id = a_version), \
         (SELECT v.remote_url FROM versions v WHERE v.id = b_version)"
    };
}

/// What a claim writes in `error` when it takes a match over from a worker
/// whose lease expired (and returns, so the claimer knows).
const LEASE_EXPIRED: &str = "the previous attempt's worker stopped renewing its lease";

/// The next queued match and the next expired one are each found in
/// `matches_claim` order (no sort of the queue), and the first of the two
/// taken.
const CLAIM_SQLITE: &str = concat!(
    "UPDATE matches SET status = 'running', claimed_by = $1, lease_until_ms = $2, \
     attempts = attempts + 1, started_ms = COALESCE(started_ms, $3), finished_ms = NULL, \
     error = CASE WHEN status = 'running' THEN $4 ELSE error END \
     WHERE id = (SELECT id FROM ( \
         SELECT * FROM (SELECT id, priority FROM matches \
           WHERE status = 'queued' AND (lease_until_ms IS NULL OR lease_until_ms <= $3) \
           ORDER BY priority DESC, id LIMIT 1) \
         UNION ALL \
         SELECT * FROM (SELECT id, priority FROM matches \
           WHERE status = 'running' AND lease_until_ms < $3 \
           ORDER BY priority DESC, id LIMIT 1)) \
       ORDER BY priority DESC, id LIMIT 1) ",
    claim_returning!()
);

const CLAIM_POSTGRES: &str = concat!(
    "UPDATE matches SET status = 'running', claimed_by = $1, lease_until_ms = $2, \
     attempts = attempts + 1, started_ms = COALESCE(started_ms, $3), finished_ms = NULL, \
     error = CASE WHEN status = 'running' THEN $4 ELSE error END \
     WHERE id = (SELECT id FROM matches \
       WHERE (status = 'queued' AND (lease_until_ms IS NULL OR lease_until_ms <= $3)) \
          OR (status = 'running' AND lease_until_ms < $3) \
       ORDER BY priority DESC, id LIMIT 1 FOR UPDATE SKIP LOCKED) ",
    claim_returning!()
);

/// Claims the next match. A match whose attempts would exceed the limit is
/// marked `failed` at once and the next one is tried. The lease runs from
/// when the database connection is held, not from before a wait for one.
pub(super) async fn claim(
    core: &Core,
    config: &WorkerConfig,
    own: &OwnConnection,
) -> Result<Option<Claimed>, sqlx::Error> {
    loop {
        // One statement, atomic on its own: SQLite takes the write lock for
        // an UPDATE before it reads, PostgreSQL skips rows others hold.
        let sql = match core.db.backend {
            Backend::Sqlite => CLAIM_SQLITE,
            Backend::Postgres => CLAIM_POSTGRES,
        };
        let mut connection = own.write().await?;
        let now = now_ms();
        let row = sqlx::query(sql)
            .bind(&config.id)
            .bind(config.lease_until(now))
            .bind(now)
            .bind(LEASE_EXPIRED)
            .fetch_optional(&mut *connection)
            .await?;
        drop(connection);
        let Some(row) = row else {
            return Ok(None);
        };
        let module =
            |version: usize, sha: usize, name: usize, remote: usize| -> Result<Option<VersionModule>, sqlx::Error> {
                Ok(
                    match (
                        row.try_get::<Option<String>, _>(sha)?,
                        row.try_get::<Option<String>, _>(name)?,
                    ) {
                        (Some(sha256), Some(name)) => Some(VersionModule {
                            id: row.try_get(version)?,
                            sha256,
                            name,
                            remote_url: row.try_get(remote)?,
                        }),
                        _ => None,
                    },
                )
            };
        let claimed = Claimed {
            id: row.try_get(0)?,
            ladder: LadderId::new(row.try_get::<String, _>(1)?),
            a_version: row.try_get(2)?,
            b_version: row.try_get(3)?,
            seed: row.try_get(4)?,
            attempts: row.try_get(5)?,
            time: TimeControl::from_columns(row.try_get(6)?, row.try_get(7)?, row.try_get(8)?),
            modules: [module(2, 9, 10, 15)?, module(3, 11, 12, 16)?],
            claimed_at: Instant::now(),
            kind: row
                .try_get::<String, _>(14)?
                .parse::<MatchKind>()
                .map_err(|e| sqlx::Error::Decode(e.into()))?,
            took_over: row.try_get::<Option<String>, _>(13)?.as_deref() == Some(LEASE_EXPIRED),
        };
        if claimed.attempts <= config.max_attempts {
            if claimed.attempts > 1 {
                tracing::info!(
                    worker = %config.id, id = claimed.id, attempt = claimed.attempts, took_over = claimed.took_over,
                    "retrying a match whose previous attempt did not finish"
                );
            }
            return Ok(Some(claimed));
        }
        // Every attempt so far lost its worker (or failed): give up. (Were
        // this worker to die first, the claim would expire and the next
        // claimer would give up instead.)
        let error = format!(
            "given up after {} attempts: the worker playing it stopped renewing its lease",
            config.max_attempts
        );
        sqlx::query(
            "UPDATE matches SET status = 'failed', attempts = attempts - 1, claimed_by = NULL, \
             lease_until_ms = NULL, finished_ms = $2, error = $3 WHERE id = $1 AND claimed_by = $4",
        )
        .bind(claimed.id)
        .bind(now)
        .bind(&error)
        .bind(&config.id)
        .execute(&mut *own.write().await?)
        .await?;
        tracing::warn!(worker = %config.id, id = claimed.id, "{error}");
        ended(core, &claimed, false);
    }
}

/// Gives the match back after a host failure: `queued` (claimable after
/// `retry_delay × attempts`) or `failed` when this was the last attempt.
/// Returns the new status, or `None` if the match was no longer ours. The
/// delay runs from when the database connection is held.
pub(super) async fn release_after_host_failure(
    own: &OwnConnection,
    config: &WorkerConfig,
    claimed: &Claimed,
    error: &str,
) -> Result<Option<String>, sqlx::Error> {
    let mut connection = own.write().await?;
    let now = now_ms();
    let delay = config
        .retry_delay
        .saturating_mul(u32::try_from(claimed.attempts.max(1)).unwrap_or(u32::MAX));
    let not_before = now.saturating_add(i64::try_from(delay.as_millis()).unwrap_or(i64::MAX));
    sqlx::query_scalar(
        "UPDATE matches SET \
           status = CASE WHEN attempts >= $3 THEN 'failed' ELSE 'queued' END, \
           finished_ms = CASE WHEN attempts >= $3 THEN $4 ELSE NULL END, \
           lease_until_ms = CASE WHEN attempts >= $3 THEN NULL ELSE $5 END, \
           claimed_by = NULL, error = $6 \
         WHERE id = $1 AND claimed_by = $2 AND status = 'running' RETURNING status",
    )
    .bind(claimed.id)
    .bind(&config.id)
    .bind(config.max_attempts)
    .bind(now)
    .bind(not_before)
    .bind(error)
    .fetch_optional(&mut *connection)
    .await
}

/// Gives the match back without counting the attempt (the worker stops).
pub(super) async fn release_unplayed(own: &OwnConnection, config: &WorkerConfig, id: i64) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE matches SET status = 'queued', claimed_by = NULL, lease_until_ms = NULL, started_ms = NULL, \
         attempts = CASE WHEN attempts > 0 THEN attempts - 1 ELSE 0 END \
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
    )
    .bind(id)
    .bind(&config.id)
    .execute(&mut *own.write().await?)
    .await?;
    Ok(())
}

/// Gives back a match claimed ahead and not started (see
/// [`WorkerConfig::hold_ahead_for`]); if that fails, its lease expires and
/// another worker takes it over.
pub(super) async fn give_back(own: &OwnConnection, config: &WorkerConfig, claimed: &Claimed) {
    match release_unplayed(own, config, claimed.id).await {
        Ok(()) => tracing::debug!(worker = %config.id, id = claimed.id, "match claimed ahead given back"),
        Err(error) => {
            tracing::warn!(worker = %config.id, id = claimed.id, %error, "cannot give back a match claimed ahead; its lease will expire");
            own.forget_if_broken(&error);
        }
    }
}

/// Fails a match that can never be played as queued.
pub(super) async fn fail_now(
    own: &OwnConnection,
    config: &WorkerConfig,
    id: i64,
    reason: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "UPDATE matches SET status = 'failed', claimed_by = NULL, lease_until_ms = NULL, finished_ms = $3, error = $4 \
         WHERE id = $1 AND claimed_by = $2 AND status = 'running'",
    )
    .bind(id)
    .bind(&config.id)
    .bind(now_ms())
    .bind(reason)
    .execute(&mut *own.write().await?)
    .await?;
    Ok(())
}

/// Extends this worker's lease, from when the database connection is held;
/// false if the match is no longer ours.
pub(super) async fn renew(own: &OwnConnection, config: &WorkerConfig, id: i64) -> Result<bool, sqlx::Error> {
    let mut connection = own.write().await?;
    let until = config.lease_until(now_ms());
    let done =
        sqlx::query("UPDATE matches SET lease_until_ms = $1 WHERE id = $2 AND claimed_by = $3 AND status = 'running'")
            .bind(until)
            .bind(id)
            .bind(&config.id)
            .execute(&mut *connection)
            .await?;
    Ok(done.rows_affected() > 0)
}
