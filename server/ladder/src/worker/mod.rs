//! Workers: claim queued matches, play them, record them exactly once.
//!
//! The queue is the `matches` table. Any number of workers, in any number of
//! processes on any number of machines, share it:
//!
//! 1. **Claim.** One statement takes the highest-priority, oldest match that
//!    is `queued` (and not waiting out a retry delay), or `running` under a
//!    lease that has expired: it becomes `running`, `claimed_by` this worker,
//!    with `lease_until_ms = now + lease` and one more attempt, and it
//!    returns both versions' modules and names. On PostgreSQL the row is
//!    picked with `FOR UPDATE SKIP LOCKED`; on SQLite the write lock an
//!    `UPDATE` takes before it reads serialises claims.
//! 2. **Play.** Each worker plays on a thread of its own: both versions'
//!    modules are loaded from the blob store into the sandbox and the
//!    referee plays the match there, while the worker renews its lease
//!    every `heartbeat`. A renewal that finds the match no longer ours (the
//!    lease expired and another worker took it) abandons the match at the
//!    next turn. When the worker's last match was short
//!    ([`WorkerConfig::claim_ahead_below`]), the next one is claimed while
//!    this one plays and handed to the thread, which starts it the moment
//!    this one ends: neither the claim's round trips to the database nor a
//!    wake-up of the worker's task are spent between matches. If this one
//!    is still playing after [`WorkerConfig::hold_ahead_for`], the match
//!    claimed ahead is taken back and goes back to the queue (its attempt
//!    not counted) for another worker.
//! 3. **Record.** The replay is compressed on the match's thread (and, with
//!    object storage, stored there: content-addressed, so a retry stores
//!    nothing new). Then, while the worker plays its next match and once
//!    the claim of the one after is done (claims go first), one
//!    transaction (on a connection the worker keeps, see
//!    [`OwnConnection`]) marks the match `finished` *only if
//!    it is still running under this worker's claim*, stores the replay
//!    (with a local blob folder: a row of `replays`, see
//!    [`crate::replays`]) and the bots' stderr, moves both ratings and
//!    stamps the match with the next `rated_seq`. If the guard matches no
//!    row, the transaction is rolled back and the result dropped: someone
//!    else owns the match now.
//!
//! A finished match has `winner` (0, 1 or NULL for a draw), `score_a` and
//! `score_b` (each participant's total over both games), `replay_sha256`
//! (the zstd replay, read with [`crate::replays::read`]) and `reasons`, a JSON array with one
//! object per game: `{"game": 1, "reason": "timeout", "faulted_side": 0,
//! "faulted_participant": 1}` (the faulted fields are `null` when the game
//! ended normally). Each participant's stderr per game is in `match_logs`.
//!
//! # Guarantees
//!
//! - A match is finished and rated at most once, and exactly once as long as
//!   some worker eventually plays it to the end: only the holder of the
//!   current claim can commit, and the commit is a single transaction.
//! - A failure of the host (a missing module blob, a sandbox that cannot
//!   start an instance, a referee [`HostError`](arbiter_referee::HostError))
//!   never counts as a loss. The match goes back to the queue after a delay
//!   (`queued` with `lease_until_ms` as "not before") and, after
//!   [`WorkerConfig::max_attempts`] attempts, ends `failed` with its `error`,
//!   unrated. A match whose holder vanished counts as an attempt too.
//! - A module that no longer passes the sandbox's checks, or a ladder name
//!   the referee does not know, fails the match at once (retrying cannot
//!   help), unrated.
//! - `rated_seq` orders rated matches as their rating changes were applied:
//!   on SQLite it is `MAX + 1` under the write lock (1, 2, 3… without gaps);
//!   on PostgreSQL it comes from the `rating_seq` sequence, drawn after both
//!   ratings rows are locked (increasing, gaps possible after rollbacks).
//!
//! Not guaranteed: a worker whose lease was lost stops at its next turn, not
//! at once; a match between a version and itself is finished but not rated.

mod claim;
mod machine;
mod match_thread;
mod play;
mod record;

use crate::core::Core;
use crate::db::OwnConnection;
use crate::ladders::TimeControl;
use crate::model::{LadderId, MatchKind};
use crate::replays::StoredReplay;
use arbiter_referee::PlayedMatch;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How many recordings of one worker may be under way at once: a worker
/// claims nothing more while the database is this far behind (on SQLite,
/// writers take turns, and each turn waits for the database's thread to
/// wake).
const RECORDINGS: usize = 2;

/// Environment variable that sets the lease of every worker made by
/// [`WorkerConfig::new`], in milliseconds (tests use a short one so that a
/// killed worker's match is taken over quickly). Default 30 000.
pub const LEASE_ENV: &str = "ARBITER_WORKER_LEASE_MS";

/// How long a claim lasts without a heartbeat, unless [`LEASE_ENV`] says
/// otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// How many times a match is claimed before it is given up as `failed`.
pub const DEFAULT_MAX_ATTEMPTS: i64 = 3;

/// A worker's settings.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Unique id of this worker (process and slot), stored in `claimed_by`.
    pub id: String,
    /// How long a claim lasts without a heartbeat. Default 30 s, or
    /// [`LEASE_ENV`].
    pub lease: Duration,
    /// How often a running match's lease is renewed. Default a third of the
    /// lease, so two renewals may fail before the claim expires.
    pub heartbeat: Duration,
    /// Claims of one match before it ends `failed`. Default 3.
    pub max_attempts: i64,
    /// How often an idle worker looks at the queue ([`crate::queue::wake_workers`] wakes
    /// it earlier). Default 200 ms.
    pub poll: Duration,
    /// Wait before a match released after a host failure may be claimed
    /// again, multiplied by the attempts so far. Default 2 s.
    pub retry_delay: Duration,
    /// A worker whose last match played in less than this claims the next
    /// one while the current one plays: for such matches the claim's round
    /// trips to the database (each a wake-up of its thread or a network
    /// exchange) are a noticeable part of a match. Default 100 ms.
    pub claim_ahead_below: Duration,
    /// A match claimed ahead goes back to the queue (its attempt not
    /// counted) if the current one is still playing after this long (at
    /// most half the lease), so it never waits behind a long match while
    /// another worker could play it. Default 250 ms.
    pub hold_ahead_for: Duration,
}

impl WorkerConfig {
    /// Defaults for a worker called `id`; the lease comes from
    /// [`LEASE_ENV`] when it is set to a number of milliseconds (at least
    /// 100), otherwise [`DEFAULT_LEASE`].
    pub fn new(id: String) -> WorkerConfig {
        let lease = std::env::var(LEASE_ENV)
            .ok()
            .and_then(|ms| ms.trim().parse::<u64>().ok())
            .map_or(DEFAULT_LEASE, |ms| Duration::from_millis(ms.max(100)));
        WorkerConfig {
            id,
            lease,
            heartbeat: lease / 3,
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            poll: Duration::from_millis(200),
            retry_delay: Duration::from_secs(2),
            claim_ahead_below: Duration::from_millis(100),
            hold_ahead_for: Duration::from_millis(250),
        }
    }

    /// When a claim taken or renewed at `now` (Unix ms) expires.
    pub(super) fn lease_until(&self, now: i64) -> i64 {
        now.saturating_add(i64::try_from(self.lease.as_millis()).unwrap_or(i64::MAX))
    }

    /// The same settings with another lease (and a heartbeat of a third of
    /// it).
    pub fn with_lease(mut self, lease: Duration) -> WorkerConfig {
        self.lease = lease;
        self.heartbeat = lease / 3;
        self
    }
}

/// Runs until `stop` turns true: claims matches one at a time, plays and
/// records them; sleeps [`WorkerConfig::poll`] when the queue is empty. A
/// match being played when `stop` turns true is abandoned at its next turn
/// and put back in the queue without counting the attempt.
pub async fn run(core: Core, config: WorkerConfig, stop: watch::Receiver<bool>) {
    let (_never, drain) = watch::channel(false);
    run_draining(core, config, drain, stop).await;
}

/// [`run`], which also returns once `drain` turns true and the match being
/// played (if any) is recorded: the first half of a graceful stop, claiming
/// nothing more and letting the running match finish. Turning `stop` true
/// then abandons that match at its next turn, as in [`run`].
pub async fn run_draining(core: Core, config: WorkerConfig, drain: watch::Receiver<bool>, stop: watch::Receiver<bool>) {
    tracing::debug!(worker = %config.id, lease_ms = config.lease.as_millis(), "worker started");
    // Every write of this worker goes through its own connection.
    let own = OwnConnection::new(&core.db);
    let thread = match match_thread::MatchThread::start(&core, &config.id) {
        Ok(started) => started,
        Err(error) => {
            tracing::error!(worker = %config.id, %error, "cannot start the worker's match thread");
            return;
        }
    };
    machine::Worker::new(&core, &config, &own, thread, drain, stop)
        .run()
        .await;
}

/// Workers of one process, started together and stopped gracefully.
pub struct Workers {
    tasks: tokio::task::JoinSet<()>,
    drain: watch::Sender<bool>,
    stop: watch::Sender<bool>,
}

impl Workers {
    /// Starts `slots` workers with ids `PREFIX-PID-N`.
    pub fn start(core: &Core, prefix: &str, slots: usize) -> Workers {
        let (drain, drain_rx) = watch::channel(false);
        let (stop, stop_rx) = watch::channel(false);
        let mut tasks = tokio::task::JoinSet::new();
        for n in 0..slots {
            let config = WorkerConfig::new(format!("{prefix}-{}-{n}", std::process::id()));
            tasks.spawn(run_draining(core.clone(), config, drain_rx.clone(), stop_rx.clone()));
        }
        Workers { tasks, drain, stop }
    }

    /// Stops them: nothing more is claimed, running matches may finish for
    /// `grace`, the others are abandoned at their next turn and put back in
    /// the queue without counting an attempt (a turn is bounded by its
    /// fuel, so this ends soon after).
    pub async fn stop(mut self, grace: Duration) {
        let _ = self.drain.send(true);
        if self.tasks.is_empty() {
            // No workers (a front end): no matches, nothing to say.
            return;
        }
        tracing::info!(grace_ms = grace.as_millis(), "stopping: running matches may finish");
        let tasks = &mut self.tasks;
        let drained = tokio::time::timeout(grace, async { while tasks.join_next().await.is_some() {} })
            .await
            .is_ok();
        if !drained {
            tracing::info!("grace period over: the matches still running go back to the queue");
            let _ = self.stop.send(true);
            while self.tasks.join_next().await.is_some() {}
        }
    }
}

/// Why a claimed match was not recorded.
#[derive(Debug, thiserror::Error)]
enum WorkerError {
    /// The database failed; the claim is released if possible, else it
    /// expires.
    #[error("database: {0}")]
    Db(#[from] sqlx::Error),
    /// The host failed: retry later, never score.
    #[error("{0}")]
    Host(String),
    /// The match cannot ever be played as queued: fail it now.
    #[error("{0}")]
    Unplayable(String),
    /// Another worker took the match over; nothing to write.
    #[error("the lease was lost to another worker")]
    LeaseLost,
    /// The worker is stopping; the match goes back to the queue.
    #[error("the worker is stopping")]
    Stopped,
}

/// A match this worker holds.
#[derive(Clone, Debug)]
struct Claimed {
    id: i64,
    ladder: LadderId,
    a_version: i64,
    b_version: i64,
    seed: i64,
    attempts: i64,
    /// `None` for a row without one (the match cannot be played).
    time: Option<TimeControl>,
    /// Participant 0's and 1's module and bot name; `None` for a version
    /// that does not exist.
    modules: [Option<VersionModule>; 2],
    /// When this worker claimed it.
    claimed_at: Instant,
    /// Only ranked matches move ratings.
    kind: MatchKind,
    /// Whether the claim took the match over from a worker whose lease
    /// expired.
    took_over: bool,
}

/// A finished match and its compressed replay (already in the object
/// store, or to be written with the match).
struct Played {
    played: PlayedMatch,
    replay: StoredReplay,
}

/// A version as the worker needs it.
#[derive(Clone, Debug)]
struct VersionModule {
    id: i64,
    sha256: String,
    name: String,
    /// A remote bot's URL (its `sha256` is then the URL's).
    remote_url: Option<String>,
}

/// Records a match the agent hall played (its row `running` and claimed by
/// `holder`): result, replay and rating change in one transaction, exactly
/// as a worker records one, guarded by the same claim. `Ok(None)`: the row
/// was not ours (nothing written); else the participants' ratings
/// `[[before, after]; 2]` when rated.
pub(crate) async fn record_hall_match(
    core: &crate::handles::Handles,
    holder: &str,
    id: i64,
    ladder: &str,
    versions: [i64; 2],
    ranked: bool,
    replay: arbiter_referee::Replay,
) -> Result<Option<Option<[[f64; 2]; 2]>>, String> {
    let stored =
        crate::replays::prepare(&core.blobs, &replay.to_json()).map_err(|e| format!("cannot store the replay: {e}"))?;
    let claimed = Claimed {
        id,
        ladder: LadderId::new(ladder.to_owned()),
        a_version: versions[0],
        b_version: versions[1],
        seed: i64::from_ne_bytes(replay.seed.to_ne_bytes()),
        attempts: 1,
        time: None,
        modules: [None, None],
        claimed_at: Instant::now(),
        kind: if ranked {
            MatchKind::Ranked
        } else {
            MatchKind::Challenge
        },
        took_over: false,
    };
    let played = Played {
        played: PlayedMatch {
            replay,
            logs: Default::default(),
            peak_memory: [[None; 2]; 2],
        },
        replay: stored,
    };
    let config = WorkerConfig::new(holder.to_owned());
    let own = OwnConnection::new(&core.db);
    let recorded = record::record_played(core, &config, &own, &claimed, played)
        .await
        .map_err(|e| e.to_string())?;
    if !recorded {
        return Ok(None);
    }
    record::ended(core, &claimed, true);
    type Ratings = (Option<f64>, Option<f64>, Option<f64>, Option<f64>);
    let row: Option<Ratings> = sqlx::query_as("SELECT a_before, a_after, b_before, b_after FROM matches WHERE id = $1")
        .bind(id)
        .fetch_optional(&core.db.pool)
        .await
        .map_err(|e| e.to_string())?;
    Ok(Some(match row {
        Some((Some(a0), Some(a1), Some(b0), Some(b1))) => Some([[a0, a1], [b0, b1]]),
        _ => None,
    }))
}
