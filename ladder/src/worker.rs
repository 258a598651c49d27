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

use crate::core::Core;
use crate::db::{Backend, Db, OwnConnection, now_ms};
use crate::events::Event;
use crate::ladders::TimeControl;
use crate::ratings::{Outcome, Rating};
use crate::replays::StoredReplay;
use arbiter_games::{Budget, Side, Variant};
use arbiter_referee::{Cancellable, MatchSettings, PlayedMatch, Progress, WasmBot, play_match_observed};
use sqlx::{Any, AnyConnection, Connection, Row};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::futures::Notified;
use tokio::sync::{Notify, watch};

/// How many recordings of one worker may be under way at once: a worker
/// claims nothing more while the database is this far behind (on SQLite,
/// writers take turns, and each turn waits for the database's thread to
/// wake).
const RECORDINGS: usize = 2;

/// Live skirmish watchers get the map every this many ticks.
const LIVE_MAP_EVERY: u32 = 10;

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
    /// How often an idle worker looks at the queue ([`wake_workers`] wakes
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
    fn lease_until(&self, now: i64) -> i64 {
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

static WAKE: Notify = Notify::const_new();

/// Wakes every idle worker of this process at once (call it after queueing
/// matches; [`enqueue`] does). Workers in other processes find new matches
/// at their next poll.
pub fn wake_workers() {
    WAKE.notify_waiters();
}

/// A match to queue.
#[derive(Clone, Debug)]
pub struct NewMatch<'a> {
    /// The ladder, e.g. `othello:std`.
    pub ladder: &'a str,
    /// Participant 0's version.
    pub a_version: i64,
    /// Participant 1's version.
    pub b_version: i64,
    /// The match seed.
    pub seed: i64,
    /// `ranked`, `challenge` or `tournament`.
    pub kind: &'a str,
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
pub async fn enqueue(db: &Db, new: &NewMatch<'_>) -> Result<i64, sqlx::Error> {
    let id = insert_match(&db.pool, new).await?;
    wake_workers();
    Ok(id)
}

/// Inserts a queued match with any executor (a pool or a transaction),
/// copying the ladder's time control into it.
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
    .bind(new.ladder)
    .bind(new.a_version)
    .bind(new.b_version)
    .bind(new.seed)
    .bind(new.kind)
    .bind(new.tournament_id)
    .bind(new.priority)
    .bind(now_ms())
    .bind(new.budget.map(|b| column(b.turn_ms)))
    .bind(new.budget.map(|b| column(b.bank_ms)))
    .fetch_one(executor)
    .await
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
pub async fn run_draining(
    core: Core,
    config: WorkerConfig,
    mut drain: watch::Receiver<bool>,
    mut stop: watch::Receiver<bool>,
) {
    tracing::debug!(worker = %config.id, lease_ms = config.lease.as_millis(), "worker started");
    // Every write of this worker goes through its own connection.
    let own = OwnConnection::new(&core.db);
    let (player, mut reports) = match Player::start(&core, &config.id) {
        Ok(started) => started,
        Err(error) => {
            tracing::error!(worker = %config.id, %error, "cannot start the worker's match thread");
            return;
        }
    };
    // Recordings overlap playing the next matches; while RECORDINGS are
    // under way nothing more is claimed.
    let mut recordings = tokio::task::JoinSet::new();
    let mut unrecorded = Vec::new();
    // The match the player is playing (from its `Started` report to its
    // `Played` one), and the one handed to it and not yet started.
    let mut playing: Option<Playing> = None;
    let mut handed: Option<i64> = None;
    // The claim under way; a claim is finished, never dropped half-done
    // (its match would wait for its lease to expire).
    let mut claiming: Option<ClaimFuture<'_>> = None;
    // Whether to claim ahead during the current match (see
    // `WorkerConfig::claim_ahead_below`), and whether that was tried.
    let mut claim_ahead = false;
    let mut tried_ahead = false;
    // Ends when a match claimed ahead goes back if it has not started.
    let mut hold: Option<Pin<Box<tokio::time::Sleep>>> = None;
    // A wake-up registered before looking at the queue (so one between the
    // look and the wait is not lost), and, when the queue was empty, the
    // wait for it or for the next poll.
    let mut woken: Option<Pin<Box<Notified<'static>>>> = None;
    let mut idle: Option<IdleWait> = None;
    let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + config.heartbeat, config.heartbeat);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let (mut draining, mut stopping) = (*drain.borrow(), *stop.borrow());
    loop {
        let ending = draining || stopping;
        if ending && playing.is_none() && handed.is_none() && claiming.is_none() && unrecorded.is_empty() {
            break;
        }
        let player_idle = playing.is_none() && handed.is_none();
        let wanted = if player_idle {
            idle.is_none()
        } else {
            handed.is_none() && claim_ahead && !tried_ahead
        };
        if wanted && !ending && claiming.is_none() && recordings.len() < RECORDINGS {
            if player_idle {
                woken = Some(Box::pin(WAKE.notified()));
            } else {
                tried_ahead = true;
            }
            claiming = Some(Box::pin(claim(&core, &config, &own)));
        }
        // A played match is recorded once the claim of the next one is
        // under way (and then after it: the claim goes first on the
        // worker's connection), unless it has to wait for a claim to start.
        let next_starting = playing.is_none() && handed.is_some();
        if claiming.is_none() && (!next_starting || ending) {
            for (claimed, outcome) in unrecorded.drain(..) {
                let (core, config, own) = (core.clone(), config.clone(), own.clone());
                recordings.spawn(async move { finish(&core, &config, &own, claimed, outcome).await });
            }
        }
        tokio::select! {
            report = reports.recv() => match report {
                Some(Report::Started { id, cancel }) => {
                    handed = None;
                    hold = None;
                    tried_ahead = false;
                    if stopping {
                        cancel.store(true, Ordering::Relaxed);
                    }
                    let abandoned = stopping.then_some(WorkerError::Stopped);
                    playing = Some(Playing { id, cancel, abandoned });
                    heartbeat.reset();
                }
                Some(Report::Played(ended)) => {
                    let Ended { claimed, outcome, took } = *ended;
                    let outcome = match (playing.take().and_then(|p| p.abandoned), outcome) {
                        (None, outcome) => outcome,
                        // Stopping, but the match was over before the next
                        // turn: it is still ours to record.
                        (Some(WorkerError::Stopped), Ok(played)) => Ok(played),
                        (Some(reason), _) => Err(reason),
                    };
                    claim_ahead = took < config.claim_ahead_below;
                    unrecorded.push((claimed, outcome));
                }
                // The match thread is gone (it never ends on its own).
                None => {
                    tracing::error!(worker = %config.id, "the worker's match thread ended");
                    break;
                }
            },
            next = or_never(claiming.as_mut()) => {
                claiming = None;
                match next {
                    Ok(Some(claimed)) if ending => give_back(&own, &config, &claimed).await,
                    Ok(Some(claimed)) => {
                        woken = None;
                        handed = Some(claimed.id);
                        if playing.is_some() {
                            // Never longer than half a lease: the match
                            // claimed ahead is not renewed until it starts.
                            hold = Some(Box::pin(tokio::time::sleep(config.hold_ahead_for.min(config.lease / 2))));
                        }
                        player.hand(claimed);
                    }
                    Ok(None) => idle = wait_for(woken.take(), config.poll),
                    Err(error) => {
                        tracing::warn!(worker = %config.id, %error, "cannot claim a match");
                        own.forget_if_broken(&error);
                        idle = wait_for(woken.take(), config.poll);
                    }
                }
            }
            () = or_never(hold.as_mut()) => {
                hold = None;
                give_back_handed(&player, &mut handed, &own, &config).await;
            }
            _ = heartbeat.tick(), if playing.as_ref().is_some_and(|p| p.abandoned.is_none()) => {
                let Some(current) = playing.as_mut() else { continue };
                match renew(&own, &config, current.id).await {
                    Ok(true) => {}
                    Ok(false) => {
                        current.cancel.store(true, Ordering::Relaxed);
                        current.abandoned = Some(WorkerError::LeaseLost);
                    }
                    Err(error) => {
                        tracing::warn!(worker = %config.id, id = current.id, %error, "cannot renew the lease");
                        own.forget_if_broken(&error);
                    }
                }
            }
            changed = stop.changed(), if !stopping => {
                if changed.is_err() || *stop.borrow() {
                    stopping = true;
                    if let Some(current) = playing.as_mut().filter(|p| p.abandoned.is_none()) {
                        current.cancel.store(true, Ordering::Relaxed);
                        current.abandoned = Some(WorkerError::Stopped);
                    }
                    give_back_handed(&player, &mut handed, &own, &config).await;
                }
            }
            changed = drain.changed(), if !draining => {
                if changed.is_err() || *drain.borrow() {
                    draining = true;
                    give_back_handed(&player, &mut handed, &own, &config).await;
                }
            }
            Some(_) = recordings.join_next() => {}
            _ = or_never(idle.as_mut()) => idle = None,
        }
    }
    drop(player);
    for (claimed, outcome) in unrecorded {
        finish(&core, &config, &own, claimed, outcome).await;
    }
    while recordings.join_next().await.is_some() {}
}

/// A claim under way.
type ClaimFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Claimed>, sqlx::Error>> + Send + 'a>>;

/// An idle worker's wait for a wake-up or its next poll.
type IdleWait = Pin<Box<tokio::time::Timeout<Pin<Box<Notified<'static>>>>>>;

/// The output of `future`, or never without one.
async fn or_never<F: Future + Unpin>(future: Option<&mut F>) -> F::Output {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}

/// A wait for the wake-up `woken` registered, at most `poll` long.
fn wait_for(woken: Option<Pin<Box<Notified<'static>>>>, poll: Duration) -> Option<IdleWait> {
    woken.map(|woken| Box::pin(tokio::time::timeout(poll, woken)))
}

/// Gives back the match handed to the thread if the thread has not taken it
/// yet.
async fn give_back_handed(player: &Player, handed: &mut Option<i64>, own: &OwnConnection, config: &WorkerConfig) {
    if let Some(held) = player.take_back() {
        *handed = None;
        give_back(own, config, &held).await;
    }
}

/// The match a worker's player is playing, as the worker sees it.
struct Playing {
    id: i64,
    /// Ends the match at its next turn.
    cancel: Arc<AtomicBool>,
    /// Why the match is being abandoned, if it is.
    abandoned: Option<WorkerError>,
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
    ladder: String,
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
    /// `ranked`, `challenge` or `tournament`: only ranked matches move
    /// ratings.
    kind: String,
    /// Whether the claim took the match over from a worker whose lease
    /// expired.
    took_over: bool,
}

/// What a claim returns: the match, its time control, and both versions'
/// modules and bot names (scalar subqueries, so a claim is one statement).
macro_rules! claim_returning {
    () => {
        "RETURNING id, ladder, a_version, b_version, seed, attempts, turn_ms, bank_ms, fuel_per_ms, \
         (SELECT v.sha256 FROM versions v WHERE v.id = a_version), \
         (SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = a_version), \
         (SELECT v.sha256 FROM versions v WHERE v.id = b_version), \
         (SELECT b.name FROM versions v JOIN bots b ON b.id = v.bot_id WHERE v.id = b_version), \
         error, kind"
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
async fn claim(core: &Core, config: &WorkerConfig, own: &OwnConnection) -> Result<Option<Claimed>, sqlx::Error> {
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
        let module = |version: usize, sha: usize, name: usize| -> Result<Option<VersionModule>, sqlx::Error> {
            Ok(
                match (
                    row.try_get::<Option<String>, _>(sha)?,
                    row.try_get::<Option<String>, _>(name)?,
                ) {
                    (Some(sha256), Some(name)) => Some(VersionModule {
                        id: row.try_get(version)?,
                        sha256,
                        name,
                    }),
                    _ => None,
                },
            )
        };
        let claimed = Claimed {
            id: row.try_get(0)?,
            ladder: row.try_get(1)?,
            a_version: row.try_get(2)?,
            b_version: row.try_get(3)?,
            seed: row.try_get(4)?,
            attempts: row.try_get(5)?,
            time: TimeControl::from_columns(row.try_get(6)?, row.try_get(7)?, row.try_get(8)?),
            modules: [module(2, 9, 10)?, module(3, 11, 12)?],
            claimed_at: Instant::now(),
            kind: row.try_get(14)?,
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

/// Counts a match that ended `finished` (else `failed`) and tells the
/// watchers.
fn ended(core: &Core, claimed: &Claimed, finished: bool) {
    if finished {
        core.metrics
            .match_finished(&claimed.ladder, claimed.claimed_at.elapsed());
    } else {
        core.metrics.match_failed(&claimed.ladder);
    }
    core.events.send(Event::MatchFinished {
        id: claimed.id,
        ladder: claimed.ladder.clone(),
        status: if finished { "finished" } else { "failed" }.to_string(),
    });
}

/// Records a played match (or gives it back, or fails it), and deals with
/// every way that can fail.
async fn finish(
    core: &Core,
    config: &WorkerConfig,
    own: &OwnConnection,
    claimed: Claimed,
    played: Result<Played, WorkerError>,
) {
    let id = claimed.id;
    let outcome = match played {
        Ok(played) => record(core, config, own, &claimed, played).await,
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

/// Gives the match back after a host failure: `queued` (claimable after
/// `retry_delay × attempts`) or `failed` when this was the last attempt.
/// Returns the new status, or `None` if the match was no longer ours. The
/// delay runs from when the database connection is held.
async fn release_after_host_failure(
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
async fn release_unplayed(own: &OwnConnection, config: &WorkerConfig, id: i64) -> Result<(), sqlx::Error> {
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
async fn give_back(own: &OwnConnection, config: &WorkerConfig, claimed: &Claimed) {
    match release_unplayed(own, config, claimed.id).await {
        Ok(()) => tracing::debug!(worker = %config.id, id = claimed.id, "match claimed ahead given back"),
        Err(error) => {
            tracing::warn!(worker = %config.id, id = claimed.id, %error, "cannot give back a match claimed ahead; its lease will expire");
            own.forget_if_broken(&error);
        }
    }
}

/// Fails a match that can never be played as queued.
async fn fail_now(own: &OwnConnection, config: &WorkerConfig, id: i64, reason: &str) -> Result<(), sqlx::Error> {
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
}

/// What a worker's match thread tells its worker.
enum Report {
    /// It took match `id` from the hand and began playing it; `cancel`
    /// ends it at its next turn.
    Started { id: i64, cancel: Arc<AtomicBool> },
    /// It finished (or abandoned) a match.
    Played(Box<Ended>),
}

/// A match the match thread is done with.
struct Ended {
    claimed: Claimed,
    outcome: Result<Played, WorkerError>,
    /// How long it played.
    took: Duration,
}

/// The hand-over between a worker and its match thread.
enum Hand {
    /// Nothing to play yet.
    Empty,
    /// The next match, taken when the current one ends: a match claimed
    /// ahead starts without waiting for the worker's task to be scheduled.
    Next(Box<Claimed>),
    /// The worker is gone: the thread ends.
    Quit,
}

/// A worker's match thread: it plays one match at a time, the one handed
/// to it, and reports each start and end. Dropping it ends the thread once
/// its match is over.
struct Player {
    hand: Arc<(std::sync::Mutex<Hand>, std::sync::Condvar)>,
}

impl Player {
    /// Starts the thread of worker `worker`.
    fn start(core: &Core, worker: &str) -> std::io::Result<(Player, tokio::sync::mpsc::UnboundedReceiver<Report>)> {
        let hand = Arc::new((std::sync::Mutex::new(Hand::Empty), std::sync::Condvar::new()));
        let (reports, received) = tokio::sync::mpsc::unbounded_channel();
        let (core, thread_hand) = (core.clone(), hand.clone());
        std::thread::Builder::new()
            .name(format!("match-{worker}"))
            .spawn(move || {
                while let Some(claimed) = Player::next(&thread_hand) {
                    let cancel = Arc::new(AtomicBool::new(false));
                    let id = claimed.id;
                    if reports
                        .send(Report::Started {
                            id,
                            cancel: cancel.clone(),
                        })
                        .is_err()
                    {
                        break;
                    }
                    let began = Instant::now();
                    let outcome =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| play(&core, &claimed, &cancel)))
                            .unwrap_or_else(|_| {
                                Err(WorkerError::Host(format!("the thread playing match {id} panicked")))
                            });
                    let took = began.elapsed();
                    if reports
                        .send(Report::Played(Box::new(Ended { claimed, outcome, took })))
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok((Player { hand }, received))
    }

    /// Waits for the next match; `None` when the worker is gone.
    fn next(hand: &(std::sync::Mutex<Hand>, std::sync::Condvar)) -> Option<Claimed> {
        let (slot, ready) = hand;
        let mut slot = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            match std::mem::replace(&mut *slot, Hand::Empty) {
                Hand::Next(claimed) => return Some(*claimed),
                Hand::Quit => {
                    *slot = Hand::Quit;
                    return None;
                }
                Hand::Empty => slot = ready.wait(slot).unwrap_or_else(std::sync::PoisonError::into_inner),
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Hand> {
        self.hand.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands the thread its next match (the worker hands one at a time).
    fn hand(&self, claimed: Claimed) {
        *self.slot() = Hand::Next(Box::new(claimed));
        self.hand.1.notify_one();
    }

    /// Takes back the match handed over, unless the thread took it first.
    fn take_back(&self) -> Option<Claimed> {
        let mut slot = self.slot();
        match std::mem::replace(&mut *slot, Hand::Empty) {
            Hand::Next(claimed) => Some(*claimed),
            other => {
                *slot = other;
                None
            }
        }
    }
}

impl Drop for Player {
    fn drop(&mut self) {
        *self.slot() = Hand::Quit;
        self.hand.1.notify_one();
    }
}

/// Plays a claimed match on the calling thread until its end, or until
/// `cancel` turns true: loads both modules (from the sandbox's cache or the
/// blob store) and prepares the replay.
fn play(core: &Core, claimed: &Claimed, cancel: &Arc<AtomicBool>) -> Result<Played, WorkerError> {
    core.metrics
        .match_started(&claimed.ladder, claimed.attempts, claimed.took_over);
    core.events.send(Event::MatchStarted {
        id: claimed.id,
        ladder: claimed.ladder.clone(),
    });
    let variant: Variant = claimed
        .ladder
        .parse()
        .map_err(|e| WorkerError::Unplayable(format!("ladder {}: {e}", claimed.ladder)))?;
    let [Some(a), Some(b)] = &claimed.modules else {
        return Err(WorkerError::Unplayable(format!(
            "version {} or {} does not exist",
            claimed.a_version, claimed.b_version
        )));
    };
    let time = claimed
        .time
        .ok_or_else(|| WorkerError::Unplayable(format!("match {} has no time control", claimed.id)))?;
    let mut settings = MatchSettings::new(variant, u64::from_ne_bytes(claimed.seed.to_ne_bytes()));
    settings.match_id = u64::try_from(claimed.id).unwrap_or_default();
    settings.budget = time.budget();
    settings.fuel_per_ms = Some(time.fuel_per_ms);

    let (sandbox, blobs, events, match_id) = (&core.sandbox, &core.blobs, &core.events, claimed.id);
    let mut bots = Vec::with_capacity(2);
    for version in [a, b] {
        // A module this worker has loaded before needs no blob read.
        if let Some(module) = sandbox.cached(&version.sha256) {
            bots.push(WasmBot::new(sandbox.clone(), module, version.name.clone()));
            continue;
        }
        let wasm = blobs
            .get(&version.sha256)
            .map_err(|e| WorkerError::Host(format!("cannot read the module of version {}: {e}", version.id)))?
            .ok_or_else(|| {
                WorkerError::Host(format!(
                    "the module {} of version {} is missing from the blob store",
                    version.sha256, version.id
                ))
            })?;
        let module = sandbox.load(&wasm).map_err(|e| {
            let message = format!("cannot load the module of version {}: {e}", version.id);
            if e.is_host_failure() {
                WorkerError::Host(message)
            } else {
                WorkerError::Unplayable(message)
            }
        })?;
        bots.push(WasmBot::new(sandbox.clone(), module, version.name.clone()));
    }
    let entrants: Vec<Cancellable<'_>> = bots.iter().map(|bot| Cancellable::new(bot, cancel.clone())).collect();
    let _playing = events.play(match_id);
    let mut observe = |game: u8, progress: Progress<'_>| match progress {
        Progress::Turn(turn) => {
            let fault = turn.fault.map(|f| f.as_str());
            events.turn(match_id, game, u8::from(turn.side), turn.action.as_deref(), fault);
        }
        Progress::Tick { record, state } => {
            // The map every few ticks (and at the end): enough to watch.
            let snapshot = (record.tick.is_multiple_of(LIVE_MAP_EVERY) || state.is_over())
                .then(|| serde_json::to_value(arbiter_referee::frames::live(state)).ok())
                .flatten();
            events.tick(match_id, game, record.tick, snapshot);
        }
    };
    let played = play_match_observed(&settings, [&entrants[0], &entrants[1]], &mut observe)
        .map_err(|e| WorkerError::Host(format!("the referee could not play the match: {e}")))?;
    let replay = crate::replays::prepare(blobs, &played.replay.to_json())
        .map_err(|e| WorkerError::Host(format!("cannot store the replay: {e}")))?;
    Ok(Played { played, replay })
}

/// Extends this worker's lease, from when the database connection is held;
/// false if the match is no longer ours.
async fn renew(own: &OwnConnection, config: &WorkerConfig, id: i64) -> Result<bool, sqlx::Error> {
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

/// The `reasons` column: each game's finish reason and who faulted.
fn reasons_json(played: &PlayedMatch) -> String {
    let games: Vec<serde_json::Value> = played
        .replay
        .games
        .iter()
        .map(|game| {
            let faulted_side = game.faulted.map(Side::index);
            serde_json::json!({
                "game": game.index,
                "reason": game.reason.as_str(),
                "faulted_side": faulted_side,
                "faulted_participant": faulted_side.and_then(|side| game.sides.get(side).copied()),
            })
        })
        .collect();
    serde_json::Value::Array(games).to_string()
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
async fn record(
    core: &Core,
    config: &WorkerConfig,
    own: &OwnConnection,
    claimed: &Claimed,
    played: Played,
) -> Result<bool, WorkerError> {
    let Played { played, replay } = played;
    // Only the ladder's own matches move ratings: a challenge or a
    // tournament may pit bots whose owners never agreed to it (ladder.md).
    let rated = claimed.kind == "ranked" && claimed.a_version != claimed.b_version;
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
    Ok(recorded)
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

/// Both ratings rows in one statement, in the SQLite batch's numbering
/// (`$20` and `$21` the versions), then `$guard`.
macro_rules! update_ratings {
    ($guard:expr) => {
        concat!(
            "UPDATE ratings SET \
               rating = CASE WHEN version_id = $20 THEN $22 ELSE $23 END, \
               deviation = CASE WHEN version_id = $20 THEN $24 ELSE $25 END, \
               volatility = CASE WHEN version_id = $20 THEN $26 ELSE $27 END, \
               wins = wins + CASE WHEN version_id = $20 THEN $28 ELSE $31 END, \
               draws = draws + CASE WHEN version_id = $20 THEN $29 ELSE $32 END, \
               losses = losses + CASE WHEN version_id = $20 THEN $30 ELSE $33 END, \
               last_played_ms = $3 \
             WHERE ladder = $34 AND version_id IN ($20, $21)",
            $guard
        )
    };
}

/// The whole record on SQLite, one round trip: the replay, the logs and the
/// ratings, each only if the claim is still ours, then the match itself
/// under the same guard. Parameters as [`RecordRow::bind`] numbers them.
macro_rules! record_sqlite {
    ($rated:literal, $seq:literal, $ratings:expr) => {
        concat!(
            "INSERT INTO replays (sha256, zstd) SELECT $8, $15 WHERE $15 IS NOT NULL AND ",
            still_ours!(),
            " ON CONFLICT (sha256) DO NOTHING; \
             INSERT INTO match_logs (match_id, participant, game, stderr) \
             SELECT * FROM (VALUES ($1, 0, 0, $16), ($1, 0, 1, $17), ($1, 1, 0, $18), ($1, 1, 1, $19)) WHERE ",
            still_ours!(),
            "; ",
            $ratings,
            record!($rated, $seq)
        )
    };
}

/// An unrated match: the whole transaction in one batch.
const RECORD_UNRATED_SQLITE: &str = concat!("BEGIN IMMEDIATE; ", record_sqlite!("0", "NULL", ""), "; COMMIT");
/// A rated match: the rest of the transaction [`read_ratings`] began.
const RECORD_RATED_SQLITE_BATCH: &str = concat!(
    record_sqlite!(
        "1",
        "(SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM matches)",
        concat!(update_ratings!(concat!(" AND ", still_ours!())), "; ")
    ),
    "; COMMIT"
);

impl<'a> RecordRow<'a> {
    /// What to write for `played`, with the rating change from `before`
    /// (`None`: not rated).
    fn new(
        core: &Core,
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
            reasons: reasons_json(played),
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

    /// The SQLite batch with `$1`…`$34` bound (PostgreSQL's statements bind
    /// their own).
    fn bind<'q>(&'q self, sql: &'static str) -> sqlx::query::Query<'q, Any, sqlx::any::AnyArguments> {
        let (claimed, after) = (self.claimed, self.after);
        self.bind_match(sql)
            .bind(self.replay.row.as_deref())
            .bind(self.logs[0].as_str())
            .bind(self.logs[1].as_str())
            .bind(self.logs[2].as_str())
            .bind(self.logs[3].as_str())
            .bind(claimed.a_version)
            .bind(claimed.b_version)
            .bind(after.map(|r| r[0].rating))
            .bind(after.map(|r| r[1].rating))
            .bind(after.map(|r| r[0].deviation))
            .bind(after.map(|r| r[1].deviation))
            .bind(after.map(|r| r[0].volatility))
            .bind(after.map(|r| r[1].volatility))
            .bind(self.wdl[0][0])
            .bind(self.wdl[0][1])
            .bind(self.wdl[0][2])
            .bind(self.wdl[1][0])
            .bind(self.wdl[1][1])
            .bind(self.wdl[1][2])
            .bind(claimed.ladder.as_str())
    }

    /// SQLite: every statement and the `COMMIT` in one round trip (for an
    /// unrated match the `BEGIN IMMEDIATE` too). The match's update is the
    /// only one that changes a row whenever the claim is ours, and every
    /// other statement changes nothing when it is not, so the rows changed
    /// say whether the match was recorded.
    async fn write_sqlite(&self, tx: &mut AnyConnection) -> Result<bool, sqlx::Error> {
        let sql = if self.after.is_some() {
            RECORD_RATED_SQLITE_BATCH
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
        if let Some(after) = after {
            let [a_wdl, b_wdl] = self.wdl;
            // Both rows in one statement.
            sqlx::query(
                "UPDATE ratings SET \
                   rating = CASE WHEN version_id = $1 THEN $3 ELSE $4 END, \
                   deviation = CASE WHEN version_id = $1 THEN $5 ELSE $6 END, \
                   volatility = CASE WHEN version_id = $1 THEN $7 ELSE $8 END, \
                   wins = wins + CASE WHEN version_id = $1 THEN $9 ELSE $12 END, \
                   draws = draws + CASE WHEN version_id = $1 THEN $10 ELSE $13 END, \
                   losses = losses + CASE WHEN version_id = $1 THEN $11 ELSE $14 END, \
                   last_played_ms = $15 \
                 WHERE ladder = $16 AND version_id IN ($1, $2)",
            )
            .bind(claimed.a_version)
            .bind(claimed.b_version)
            .bind(after[0].rating)
            .bind(after[1].rating)
            .bind(after[0].deviation)
            .bind(after[1].deviation)
            .bind(after[0].volatility)
            .bind(after[1].volatility)
            .bind(a_wdl[0])
            .bind(a_wdl[1])
            .bind(a_wdl[2])
            .bind(b_wdl[0])
            .bind(b_wdl[1])
            .bind(b_wdl[2])
            .bind(self.now)
            .bind(&claimed.ladder)
            .execute(&mut *tx)
            .await?;
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
    ladder: &str,
) -> Result<[Rating; 2], sqlx::Error> {
    for first in [true, false] {
        let rows = sqlx::query(if first { read.first } else { read.again })
            .bind(versions[0])
            .bind(versions[1])
            .bind(ladder)
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
                crate::ratings::ensure_row(tx, version, ladder).await?;
            }
        }
    }
    Err(sqlx::Error::RowNotFound)
}
