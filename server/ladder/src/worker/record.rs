//! Recording a played match exactly once: its result, replay, logs and
//! rating change in one transaction guarded by the worker's claim; or, for
//! a match that was not played to the end, giving it back or failing it.

use super::claim::{fail_now, release_after_host_failure, release_unplayed};
use super::{Claimed, Played, WorkerConfig, WorkerError};
use crate::db::{Backend, OwnConnection, now_ms};
use crate::events::Event;
use crate::handles::Handles;
use crate::matches::GameFinish;
use crate::model::{LadderId, MatchKind};
use crate::ratings::{Outcome, Rating};
use crate::replays::StoredReplay;
use arbiter_referee::PlayedMatch;
use sqlx::{Any, AnyConnection, Connection, Row};
use std::sync::LazyLock;

/// Counts a match that ended `finished` (else `failed`) and tells the
/// watchers.
pub(super) fn ended(core: &Handles, claimed: &Claimed, finished: bool) {
    if finished {
        core.metrics
            .match_finished(claimed.ladder.as_str(), claimed.claimed_at.elapsed());
    } else {
        core.metrics.match_failed(claimed.ladder.as_str());
    }
    core.events.send(Event::MatchFinished {
        id: claimed.id,
        ladder: claimed.ladder.to_string(),
        status: if finished { "finished" } else { "failed" }.to_string(),
    });
}

/// Records a played match (or gives it back, or fails it), and deals with
/// every way that can fail.
pub(super) async fn finish(
    core: &Handles,
    config: &WorkerConfig,
    own: &OwnConnection,
    claimed: Claimed,
    played: Result<Played, WorkerError>,
) {
    let id = claimed.id;
    let outcome = match played {
        Ok(played) => record_played(core, config, own, &claimed, played).await,
        Err(error) => Err(error),
    };
    if let Err(WorkerError::Db(error)) = &outcome {
        own.forget_if_broken(error);
    }
    match outcome {
        Ok(true) => {
            tracing::debug!(worker = %config.id, id, "match recorded");
            ended(core, &claimed, true);
        }
        Ok(false) => {
            tracing::warn!(worker = %config.id, id, "match was taken over by another worker; result dropped");
        }
        Err(WorkerError::LeaseLost) => {
            tracing::warn!(worker = %config.id, id, "lease lost while playing; match abandoned to its new holder");
        }
        Err(WorkerError::Stopped) => {
            if let Err(error) = release_unplayed(own, config, id).await {
                tracing::warn!(worker = %config.id, id, %error, "cannot put the match back; its lease will expire");
            }
        }
        Err(WorkerError::Unplayable(reason)) => match fail_now(own, config, id, &reason).await {
            Ok(()) => {
                tracing::warn!(worker = %config.id, id, %reason, "match cannot be played; marked failed");
                ended(core, &claimed, false);
            }
            Err(error) => tracing::warn!(worker = %config.id, id, %error, "cannot mark the match failed"),
        },
        Err(error @ (WorkerError::Host(_) | WorkerError::Db(_))) => {
            let message = error.to_string();
            match release_after_host_failure(own, config, &claimed, &message).await {
                Ok(Some(status)) if status == "failed" => {
                    tracing::warn!(
                        worker = %config.id, id, attempts = claimed.attempts, error = %message,
                        "host failure on the last attempt; match marked failed (not rated)"
                    );
                    ended(core, &claimed, false);
                }
                Ok(Some(_)) => tracing::warn!(
                    worker = %config.id, id, attempt = claimed.attempts, max = config.max_attempts, error = %message,
                    "host failure; match released for a retry"
                ),
                Ok(None) => {
                    tracing::warn!(worker = %config.id, id, error = %message, "host failure after the lease was lost")
                }
                Err(db) => tracing::warn!(
                    worker = %config.id, id, error = %message, %db,
                    "host failure and the claim cannot be released; it will expire"
                ),
            }
        }
    }
}

/// Writes the result, the replay (when it goes into the database), the logs
/// and the rating change in one transaction, guarded by this worker's
/// claim. Ok(false): the claim was gone, nothing was written.
///
/// The database's round trips (each a hand-off to the connection's thread
/// and back, which on a machine whose other core sleeps costs more than the
/// statements) are most of what the ladder adds to playing a match, so
/// there are few: on SQLite two for a rated match (`BEGIN IMMEDIATE` with
/// the ratings' read, then one batch of guarded statements ending in
/// `COMMIT`) and one for an unrated one; on PostgreSQL, which takes one
/// statement per round trip, seven (six with object storage).
pub(super) async fn record_played(
    core: &Handles,
    config: &WorkerConfig,
    own: &OwnConnection,
    claimed: &Claimed,
    played: Played,
) -> Result<bool, WorkerError> {
    let Played { played, replay } = played;
    // Only the ladder's own matches move ratings: a challenge or a
    // tournament may pit bots whose owners never agreed to it (ladder.md).
    let rated = claimed.kind == MatchKind::Ranked && claimed.a_version != claimed.b_version;
    let versions = [claimed.a_version, claimed.b_version];
    let mut connection = own.write().await?;
    // Both ratings are read (and on PostgreSQL locked) first, so the match
    // row is written once, with its result and its rating change.
    let recorded = match own.backend() {
        Backend::Sqlite => {
            // The transaction is begun and committed inside batches: should
            // this future stop between them, the connection is closed
            // (rolling back) rather than reused.
            connection.begin_by_hand();
            let written = async {
                let before = if rated {
                    Some(read_ratings(&RATINGS_SQLITE, &mut connection, versions, &claimed.ladder).await?)
                } else {
                    None
                };
                RecordRow::new(core, config, claimed, &played, &replay, before)
                    .write_sqlite(&mut connection)
                    .await
            }
            .await;
            match written {
                Ok(recorded) => {
                    connection.ended_by_hand();
                    recorded
                }
                Err(error) => {
                    // Whatever was begun is rolled back at once, so the
                    // write lock is free for others; the connection is
                    // still replaced at the next turn.
                    let _ = sqlx::query("ROLLBACK").execute(&mut *connection).await;
                    return Err(error.into());
                }
            }
        }
        Backend::Postgres => {
            let mut tx = connection.begin().await?;
            let before = if rated {
                Some(read_ratings(&RATINGS_POSTGRES, &mut tx, versions, &claimed.ladder).await?)
            } else {
                None
            };
            let row = RecordRow::new(core, config, claimed, &played, &replay, before);
            let recorded = row.write_postgres(&mut tx).await?;
            if recorded {
                tx.commit().await?;
            } else {
                tx.rollback().await?;
            }
            recorded
        }
    };
    if rated && recorded {
        crate::ratings::fitted::note_rated_match();
    }
    if recorded {
        for participant in failed_remotes(claimed, &played.replay) {
            let why = format!(
                "paused: its URL failed every game of match {} ({}); post the URL again to resume",
                claimed.id,
                played.replay.games[0].detail.as_deref().unwrap_or("no answer")
            );
            tracing::info!(match_id = claimed.id, version = versions[participant], "{why}");
            sqlx::query("UPDATE versions SET status = 'paused', reason = $2 WHERE id = $1 AND status = 'active'")
                .bind(versions[participant])
                .bind(why)
                .execute(&mut *connection)
                .await?;
        }
    }
    Ok(recorded)
}

/// The participants that are remote bots and lost every game of the match
/// to a transport fault (`crash` or `timeout`): their URLs failed a whole
/// match, so they are paused.
fn failed_remotes(claimed: &Claimed, replay: &arbiter_referee::Replay) -> Vec<usize> {
    (0..2)
        .filter(|&participant| {
            let remote = claimed.modules[participant]
                .as_ref()
                .is_some_and(|version| version.remote_url.is_some());
            remote
                && !replay.games.is_empty()
                && replay.games.iter().all(|game| {
                    let side = usize::from(game.sides[1] == participant as u8);
                    game.faulted.map(|s| s.index()) == Some(side)
                        && matches!(
                            game.reason,
                            arbiter_games::FinishReason::Crash | arbiter_games::FinishReason::Timeout
                        )
                })
        })
        .collect()
}

/// What [`record`] writes for one match.
struct RecordRow<'a> {
    claimed: &'a Claimed,
    worker: &'a str,
    now: i64,
    winner: Option<i64>,
    totals: [i64; 2],
    reasons: String,
    replay: &'a StoredReplay,
    /// Participant 0's games 0 and 1, then participant 1's.
    logs: [String; 4],
    before: Option<[Rating; 2]>,
    after: Option<[Rating; 2]>,
    /// Wins, draws and losses to add, per participant.
    wdl: [[i64; 3]; 2],
}

/// Finishes a match, guarded by the claim, with its rating change (`$9` to
/// `$14`, NULL when unrated). `rated_seq` orders rated matches as their
/// rating changes were applied: on SQLite `MAX + 1` under the write lock (no
/// gaps), on PostgreSQL the `rating_seq` sequence.
macro_rules! record {
    ($rated:literal, $seq:literal) => {
        concat!(
            "UPDATE matches SET status = 'finished', finished_ms = $3, winner = $4, score_a = $5, score_b = $6, \
             reasons = $7, replay_sha256 = $8, lease_until_ms = NULL, error = NULL, rated = ",
            $rated,
            ", rated_seq = ",
            $seq,
            ", a_before = $9, a_after = $10, b_before = $11, b_after = $12, a_rd_after = $13, b_rd_after = $14 \
             WHERE id = $1 AND claimed_by = $2 AND status = 'running'"
        )
    };
}

/// Not rated: a version against itself, a challenge or a tournament.
const RECORD_UNRATED: &str = record!("0", "NULL");
const RECORD_RATED_POSTGRES: &str = record!("1", "nextval('rating_seq')");

/// The claim guard of every statement but the match's own update, on
/// SQLite (`$1` the match, `$2` the worker): inside the write lock, the same
/// answer for all of them.
macro_rules! still_ours {
    () => {
        "EXISTS (SELECT 1 FROM matches WHERE id = $1 AND claimed_by = $2 AND status = 'running')"
    };
}

/// Both ratings rows in one statement: `$1` and `$2` the versions, `$3`…`$8`
/// the new ratings, deviations and volatilities (participant 0's, then
/// 1's, for each), `$9`…`$14` the wins, draws and losses to add
/// (participant 0's three, then 1's), `$15` the time, `$16` the ladder, as
/// [`RecordRow::bind_ratings`] binds them. SQLite's batch takes it with its
/// parameters moved up ([`RATINGS_IN_SQLITE_BATCH`]).
const UPDATE_RATINGS: &str = "UPDATE ratings SET \
       rating = CASE WHEN version_id = $1 THEN $3 ELSE $4 END, \
       deviation = CASE WHEN version_id = $1 THEN $5 ELSE $6 END, \
       volatility = CASE WHEN version_id = $1 THEN $7 ELSE $8 END, \
       wins = wins + CASE WHEN version_id = $1 THEN $9 ELSE $12 END, \
       draws = draws + CASE WHEN version_id = $1 THEN $10 ELSE $13 END, \
       losses = losses + CASE WHEN version_id = $1 THEN $11 ELSE $14 END, \
       last_played_ms = $15 \
     WHERE ladder = $16 AND version_id IN ($1, $2)";

/// Where [`UPDATE_RATINGS`]'s parameters start in SQLite's batch: after the
/// match's (`$1`…`$14`), the replay's (`$15`) and the logs' (`$16`…`$19`).
const RATINGS_IN_SQLITE_BATCH: usize = 20;

/// The whole record on SQLite, up to the ratings: the replay and the logs,
/// each only if the claim is still ours. Parameters as [`RecordRow::bind`]
/// numbers them.
macro_rules! record_sqlite_head {
    () => {
        concat!(
            "INSERT INTO replays (sha256, zstd) SELECT $8, $15 WHERE $15 IS NOT NULL AND ",
            still_ours!(),
            " ON CONFLICT (sha256) DO NOTHING; \
             INSERT INTO match_logs (match_id, participant, game, stderr) \
             SELECT * FROM (VALUES ($1, 0, 0, $16), ($1, 0, 1, $17), ($1, 1, 0, $18), ($1, 1, 1, $19)) WHERE ",
            still_ours!(),
            "; "
        )
    };
}

/// An unrated match on SQLite: the whole transaction in one batch, the
/// match itself last under the same guard.
const RECORD_UNRATED_SQLITE: &str = concat!(
    "BEGIN IMMEDIATE; ",
    record_sqlite_head!(),
    record!("0", "NULL"),
    "; COMMIT"
);

/// A rated match on SQLite: the rest of the transaction [`read_ratings`]
/// began, with the ratings' update guarded like the replay and the logs.
static RECORD_RATED_SQLITE_BATCH: LazyLock<String> = LazyLock::new(|| {
    format!(
        "{}{} AND {}; {}; COMMIT",
        record_sqlite_head!(),
        parameters_from(UPDATE_RATINGS, RATINGS_IN_SQLITE_BATCH),
        still_ours!(),
        record!("1", "(SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM matches)")
    )
});

/// `sql` with its parameters `$1`, `$2`… renumbered from `first`.
fn parameters_from(sql: &str, first: usize) -> String {
    let mut renumbered = String::with_capacity(sql.len() + 16);
    let mut rest = sql;
    while let Some(dollar) = rest.find('$') {
        renumbered.push_str(&rest[..=dollar]);
        rest = &rest[dollar + 1..];
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        match rest[..digits].parse::<usize>() {
            Ok(n) => renumbered.push_str(&(n + first - 1).to_string()),
            Err(_) => renumbered.push_str(&rest[..digits]),
        }
        rest = &rest[digits..];
    }
    renumbered.push_str(rest);
    renumbered
}

impl<'a> RecordRow<'a> {
    /// What to write for `played`, with the rating change from `before`
    /// (`None`: not rated).
    fn new(
        core: &Handles,
        config: &'a WorkerConfig,
        claimed: &'a Claimed,
        played: &PlayedMatch,
        replay: &'a StoredReplay,
        before: Option<[Rating; 2]>,
    ) -> RecordRow<'a> {
        let result = &played.replay.result;
        let winner = result.winner.map(i64::from);
        let outcome = Outcome::from_winner(winner);
        let after = before.map(|[a, b]| {
            let (a_after, b_after) = core.rating.update(a, b, outcome);
            [a_after, b_after]
        });
        let [[a0, a1], [b0, b1]] = &played.logs;
        RecordRow {
            claimed,
            worker: &config.id,
            now: now_ms(),
            winner,
            totals: result.totals.map(i64::from),
            reasons: GameFinish::column(&GameFinish::of_replay(&played.replay)),
            replay,
            logs: [a0, a1, b0, b1].map(|log| String::from_utf8_lossy(log).into_owned()),
            before,
            after,
            wdl: match outcome {
                Outcome::Win => [[1, 0, 0], [0, 0, 1]],
                Outcome::Draw => [[0, 1, 0], [0, 1, 0]],
                Outcome::Loss => [[0, 0, 1], [1, 0, 0]],
            },
        }
    }

    /// `sql` with the match row's `$1`…`$14` bound: the statement that
    /// finishes the match on both backends, and the start of SQLite's batch.
    fn bind_match<'q>(&'q self, sql: &'static str) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
        let (claimed, before, after) = (self.claimed, self.before, self.after);
        sqlx::query(sql)
            .bind(claimed.id)
            .bind(self.worker)
            .bind(self.now)
            .bind(self.winner)
            .bind(self.totals[0])
            .bind(self.totals[1])
            .bind(self.reasons.as_str())
            .bind(self.replay.sha256.as_str())
            .bind(before.map(|r| r[0].rating))
            .bind(after.map(|r| r[0].rating))
            .bind(before.map(|r| r[1].rating))
            .bind(after.map(|r| r[1].rating))
            .bind(after.map(|r| r[0].deviation))
            .bind(after.map(|r| r[1].deviation))
    }

    /// The SQLite batch with `$1`…`$35` bound (PostgreSQL's statements bind
    /// their own).
    fn bind<'q>(&'q self, sql: &'static str) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
        let query = self
            .bind_match(sql)
            .bind(self.replay.row.as_deref())
            .bind(self.logs[0].as_str())
            .bind(self.logs[1].as_str())
            .bind(self.logs[2].as_str())
            .bind(self.logs[3].as_str());
        self.bind_ratings(query)
    }

    /// `query` with [`UPDATE_RATINGS`]'s parameters bound next, in its
    /// order (NULL ratings when unrated).
    fn bind_ratings<'q>(
        &'q self,
        query: sqlx::query::Query<'q, Any, sqlx::any::AnyArguments>,
    ) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
        let (claimed, after) = (self.claimed, self.after);
        let [a_wdl, b_wdl] = self.wdl;
        query
            .bind(claimed.a_version)
            .bind(claimed.b_version)
            .bind(after.map(|r| r[0].rating))
            .bind(after.map(|r| r[1].rating))
            .bind(after.map(|r| r[0].deviation))
            .bind(after.map(|r| r[1].deviation))
            .bind(after.map(|r| r[0].volatility))
            .bind(after.map(|r| r[1].volatility))
            .bind(a_wdl[0])
            .bind(a_wdl[1])
            .bind(a_wdl[2])
            .bind(b_wdl[0])
            .bind(b_wdl[1])
            .bind(b_wdl[2])
            .bind(self.now)
            .bind(claimed.ladder.as_str())
    }

    /// SQLite: every statement and the `COMMIT` in one round trip (for an
    /// unrated match the `BEGIN IMMEDIATE` too). The match's update is the
    /// only one that changes a row whenever the claim is ours, and every
    /// other statement changes nothing when it is not, so the rows changed
    /// say whether the match was recorded.
    async fn write_sqlite(&self, tx: &mut AnyConnection) -> Result<bool, sqlx::Error> {
        let sql = if self.after.is_some() {
            RECORD_RATED_SQLITE_BATCH.as_str()
        } else {
            RECORD_UNRATED_SQLITE
        };
        let done = self.bind(sql).execute(&mut *tx).await?;
        Ok(done.rows_affected() > 0)
    }

    /// PostgreSQL: the match first (its guard decides), then the replay, the
    /// logs and the ratings, one statement each.
    async fn write_postgres(&self, tx: &mut AnyConnection) -> Result<bool, sqlx::Error> {
        let (claimed, after) = (self.claimed, self.after);
        let sql = if after.is_some() {
            RECORD_RATED_POSTGRES
        } else {
            RECORD_UNRATED
        };
        let finished = self.bind_match(sql).execute(&mut *tx).await?;
        if finished.rows_affected() == 0 {
            return Ok(false);
        }
        crate::replays::insert(&mut *tx, self.replay).await?;
        // `logs[participant][game]`: four rows, one statement.
        sqlx::query(
            "INSERT INTO match_logs (match_id, participant, game, stderr) \
             VALUES ($1, 0, 0, $2), ($1, 0, 1, $3), ($1, 1, 0, $4), ($1, 1, 1, $5)",
        )
        .bind(claimed.id)
        .bind(self.logs[0].as_str())
        .bind(self.logs[1].as_str())
        .bind(self.logs[2].as_str())
        .bind(self.logs[3].as_str())
        .execute(&mut *tx)
        .await?;
        if after.is_some() {
            self.bind_ratings(sqlx::query(UPDATE_RATINGS)).execute(&mut *tx).await?;
        }
        Ok(true)
    }
}

/// Reads both versions' ratings on a ladder, in version order (`$1`, `$2`
/// the versions, `$3` the ladder).
macro_rules! select_ratings {
    () => {
        "SELECT version_id, rating, deviation, volatility FROM ratings \
         WHERE ladder = $3 AND version_id IN ($1, $2) ORDER BY version_id"
    };
}

/// How [`read_ratings`] reads: the first time (which may begin the
/// transaction in the same round trip), and again after creating missing
/// rows.
struct RatingsRead {
    first: &'static str,
    again: &'static str,
}

/// SQLite: the transaction begins with the read, taking the write lock at
/// once, so two writers never deadlock upgrading a read lock.
const RATINGS_SQLITE: RatingsRead = RatingsRead {
    first: concat!("BEGIN IMMEDIATE; ", select_ratings!()),
    again: select_ratings!(),
};

/// PostgreSQL: the rows are locked, in version order so two recorders never
/// wait on each other in a cycle.
const RATINGS_POSTGRES: RatingsRead = RatingsRead {
    first: concat!(select_ratings!(), " FOR UPDATE"),
    again: concat!(select_ratings!(), " FOR UPDATE"),
};

/// Both versions' ratings on a ladder, created with the defaults if
/// missing (an active version has its rows already: one statement on the
/// usual path), and locked until the transaction ends.
async fn read_ratings(
    read: &RatingsRead,
    tx: &mut AnyConnection,
    versions: [i64; 2],
    ladder: &LadderId,
) -> Result<[Rating; 2], sqlx::Error> {
    for first in [true, false] {
        let rows = sqlx::query(if first { read.first } else { read.again })
            .bind(versions[0])
            .bind(versions[1])
            .bind(ladder.as_str())
            .fetch_all(&mut *tx)
            .await?;
        let mut found = [None, None];
        for row in &rows {
            let version: i64 = row.try_get(0)?;
            let rating = Rating {
                rating: row.try_get(1)?,
                deviation: row.try_get(2)?,
                volatility: row.try_get(3)?,
            };
            for (slot, wanted) in found.iter_mut().zip(versions) {
                if wanted == version {
                    *slot = Some(rating);
                }
            }
        }
        if let [Some(a), Some(b)] = found {
            return Ok([a, b]);
        }
        if first {
            for version in versions {
                crate::ratings::ensure_row(tx, version, ladder.as_str()).await?;
            }
        }
    }
    Err(sqlx::Error::RowNotFound)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_renumbered_from_the_first_given() {
        assert_eq!(
            parameters_from("a = $1, b = $16 WHERE c IN ($2)", 20),
            "a = $20, b = $35 WHERE c IN ($21)"
        );
        assert_eq!(
            parameters_from("no parameters, one $ sign", 5),
            "no parameters, one $ sign"
        );
    }

    /// Every parameter of the rated batch from `$1` to the last is used, and
    /// the ratings' update is the one PostgreSQL runs, renumbered.
    #[test]
    fn sqlite_batch_takes_the_ratings_update_after_its_own_parameters() {
        let batch = RECORD_RATED_SQLITE_BATCH.as_str();
        let used: std::collections::BTreeSet<usize> = batch
            .split('$')
            .skip(1)
            .filter_map(|rest| {
                let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
                rest[..digits].parse().ok()
            })
            .collect();
        assert_eq!(used, (1..=RATINGS_IN_SQLITE_BATCH + 15).collect());
        assert!(batch.contains(&parameters_from(UPDATE_RATINGS, RATINGS_IN_SQLITE_BATCH)));
        assert!(!RECORD_UNRATED_SQLITE.contains("UPDATE ratings"));
    }
}
