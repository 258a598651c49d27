//! The scheduler: keeps every ladder playing fair, side-swapped matches.
//!
//! Every tick (250 ms by default) it looks at each ladder: while fewer than
//! [`SchedulerConfig::per_ladder`] `ranked` matches of that ladder are queued
//! or running (and fewer than [`SchedulerConfig::global`] over all ladders),
//! it queues one more. Who plays is decided by [`pick_pairs`], a pure
//! function over the ladder's [`Candidate`]s:
//!
//! - the **participant** is the free version that needs a match most:
//!   versions in placement (fewer than [`PLACEMENT_MATCHES`] rated matches)
//!   first, fewest matches first; then the highest deviation, plus a bonus
//!   for time idle, minus [`FAIRNESS`] per match played beyond the ladder's
//!   average (without it, a version whose matches teach little, such as the
//!   weakest, keeps a high deviation and is picked again and again);
//! - its **opponent** is a free version of another bot with a near rating:
//!   within the first of [`WINDOWS`] that has one, else any (the window
//!   widens when none is free); within the window the one idle longest,
//!   then the nearest. The pair that met in either bot's most recent match
//!   is avoided unless no one else is free.
//!
//! The constants were tuned with `arbiter simulate` (the simulator drives
//! [`pick_pairs`] itself): with windows of ±150/300/600 and no fairness
//! term the ranking of 200 simulated bots reached Kendall τ ≥ 0.9 after a
//! median 8 580 matches (Halite III's matchmaker: 6 820); with these, 6 240.
//!
//! Only `active` versions of bots that are not retired, registered for the
//! ladder (`version_ladders`: the game and mode they support), are
//! candidates; a version already in a queued or running match of the ladder
//! is not paired again until it is done. Participant order (who is
//! participant 0) is random, and so is the seed (both games of a match are
//! played with sides swapped anyway).
//!
//! Several `serve` processes may share a database: a ladder is planned and
//! its matches queued in one write transaction (on PostgreSQL under a
//! transaction-scoped advisory lock), so they do not overfill the queue.

use crate::core::Core;
use crate::db::{Backend, Db, now_ms};
use crate::error::Result;
use crate::model::{LadderId, MatchKind};
use sqlx::Row;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tokio::sync::watch;

/// Matches a version plays before it leaves placement (and stops being
/// scheduled first).
pub const PLACEMENT_MATCHES: i64 = 10;

/// Rating windows tried in turn when looking for an opponent; after the
/// last, any free opponent will do. Near opponents teach the ratings most.
pub const WINDOWS: [f64; 3] = [50.0, 100.0, 200.0];

/// Urgency a version loses per match it has played beyond the average of
/// its ladder's versions: what keeps matches shared fairly.
pub const FAIRNESS: f64 = 0.5;

/// The PostgreSQL advisory lock key schedulers take while they plan.
const ADVISORY_KEY: &str = "SELECT pg_advisory_xact_lock(7462011)";

/// Scheduler settings.
#[derive(Clone, Debug)]
pub struct SchedulerConfig {
    /// Ranked matches kept queued or running per ladder. Default 2.
    pub per_ladder: usize,
    /// Ranked matches kept queued or running over all ladders. Default 8.
    pub global: usize,
    /// How often the ladders are looked at. Default 250 ms.
    pub tick: Duration,
    /// Priority of ranked matches (challenges and tournaments use higher
    /// ones to jump the queue). Default 0.
    pub priority: i64,
    /// The ladders kept playing; empty (the default) means every ladder.
    pub ladders: Vec<String>,
}

impl Default for SchedulerConfig {
    fn default() -> SchedulerConfig {
        SchedulerConfig {
            per_ladder: 2,
            global: 8,
            tick: Duration::from_millis(250),
            priority: 0,
            ladders: Vec::new(),
        }
    }
}

/// A version that could play on a ladder, as [`pick_pairs`] sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct Candidate {
    /// The version.
    pub version_id: i64,
    /// Its bot: two versions of one bot never meet.
    pub bot_id: i64,
    /// Whether the version may be scheduled at all (`active`, bot not
    /// retired). Others are never picked.
    pub active: bool,
    /// Its rating on the ladder.
    pub rating: f64,
    /// Its rating deviation.
    pub deviation: f64,
    /// Rated matches played on the ladder.
    pub matches: i64,
    /// When it last played on the ladder (Unix ms); `None` if never.
    pub last_played_ms: Option<i64>,
    /// The version it met in its most recent match on the ladder.
    pub last_opponent: Option<i64>,
    /// Whether it is in a queued or running match already.
    pub busy: bool,
}

/// A match to queue: participant 0 and participant 1 (version ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The version chosen to play (participant 0 before side shuffling).
    pub participant: i64,
    /// Its opponent.
    pub opponent: i64,
}

/// How much `c` needs a match, higher first: deviation plus up to 200 for
/// an hour idle (never played counts as an hour), minus [`FAIRNESS`] per
/// match beyond `mean_matches`.
fn urgency(c: &Candidate, now_ms: i64, mean_matches: f64) -> f64 {
    let idle_s = c.last_played_ms.map_or(3600.0, |t| {
        (now_ms.saturating_sub(t).max(0) as f64 / 1000.0).min(3600.0)
    });
    c.deviation + idle_s / 3600.0 * 200.0 - FAIRNESS * (c.matches as f64 - mean_matches)
}

fn in_placement(c: &Candidate) -> bool {
    c.matches < PLACEMENT_MATCHES
}

/// Chooses up to `want` pairings among `candidates`; no version appears in
/// two pairings, and busy or inactive versions appear in none. Pure and
/// deterministic: the same candidates and time give the same pairings.
pub fn pick_pairs(candidates: &[Candidate], want: usize, now_ms: i64) -> Vec<Pairing> {
    let active: Vec<&Candidate> = candidates.iter().filter(|c| c.active).collect();
    let mean_matches = active.iter().map(|c| c.matches as f64).sum::<f64>() / active.len().max(1) as f64;
    let urgency = |c: &Candidate| urgency(c, now_ms, mean_matches);
    let mut order: Vec<&Candidate> = active.into_iter().filter(|c| !c.busy).collect();
    order.sort_by(|x, y| {
        in_placement(y)
            .cmp(&in_placement(x))
            .then_with(|| {
                if in_placement(x) && in_placement(y) {
                    x.matches.cmp(&y.matches)
                } else {
                    std::cmp::Ordering::Equal
                }
            })
            .then_with(|| urgency(y).total_cmp(&urgency(x)))
            .then_with(|| x.version_id.cmp(&y.version_id))
    });
    let mut taken: HashSet<i64> = HashSet::new();
    let mut pairs = Vec::new();
    for participant in &order {
        if pairs.len() >= want {
            break;
        }
        if taken.contains(&participant.version_id) {
            continue;
        }
        let free: Vec<&Candidate> = order
            .iter()
            .copied()
            .filter(|c| c.bot_id != participant.bot_id && !taken.contains(&c.version_id))
            .collect();
        if let Some(opponent) = pick_opponent(participant, &free) {
            taken.insert(participant.version_id);
            taken.insert(opponent.version_id);
            pairs.push(Pairing {
                participant: participant.version_id,
                opponent: opponent.version_id,
            });
        }
    }
    pairs
}

/// The opponent for `participant` among `free` versions of other bots.
fn pick_opponent<'a>(participant: &Candidate, free: &[&'a Candidate]) -> Option<&'a Candidate> {
    let rematch = |c: &Candidate| {
        participant.last_opponent == Some(c.version_id) || c.last_opponent == Some(participant.version_id)
    };
    let fresh: Vec<&Candidate> = free.iter().copied().filter(|c| !rematch(c)).collect();
    let pool = if fresh.is_empty() { free.to_vec() } else { fresh };
    let distance = |c: &Candidate| (c.rating - participant.rating).abs();
    let best = |within: f64| {
        pool.iter().copied().filter(|c| distance(c) <= within).min_by(|x, y| {
            x.last_played_ms
                .unwrap_or(i64::MIN)
                .cmp(&y.last_played_ms.unwrap_or(i64::MIN))
                .then_with(|| distance(x).total_cmp(&distance(y)))
                .then_with(|| x.version_id.cmp(&y.version_id))
        })
    };
    WINDOWS.iter().find_map(|&w| best(w)).or_else(|| best(f64::INFINITY))
}

/// Runs until `stop` turns true, topping up every ladder each tick.
pub async fn run(core: Core, config: SchedulerConfig, mut stop: watch::Receiver<bool>) {
    let mut tick = tokio::time::interval(config.tick);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut served = Served::default();
    loop {
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            _ = tick.tick() => {}
        }
        match schedule_fairly(&core.db, &config, &mut served).await {
            Ok(0) => {}
            Ok(queued) => {
                tracing::debug!(queued, "scheduler queued ranked matches");
                crate::queue::wake_workers();
            }
            Err(error) => tracing::warn!(error = %error.detail(), "the scheduler could not queue matches"),
        }
    }
}

/// Ranked matches queued or running, per ladder.
async fn ranked_in_flight(db: &Db) -> Result<HashMap<LadderId, usize>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT ladder, COUNT(*) FROM matches WHERE kind = $1 AND status IN ('queued', 'running') GROUP BY ladder",
    )
    .bind(MatchKind::Ranked.as_str())
    .fetch_all(&db.pool)
    .await?;
    let mut counts = HashMap::new();
    for row in rows {
        let n: i64 = row.try_get(1)?;
        counts.insert(
            LadderId::new(row.try_get::<String, _>(0)?),
            usize::try_from(n).unwrap_or(usize::MAX),
        );
    }
    Ok(counts)
}

/// When each ladder last got a match from this scheduler (pass number), so
/// that under the global cap no ladder waits behind the others forever.
#[derive(Clone, Debug, Default)]
pub struct Served {
    pass: u64,
    last: HashMap<LadderId, u64>,
}

/// One scheduling pass over every ladder, with no memory of earlier passes.
/// Returns how many matches it queued.
pub async fn schedule_once(db: &Db, config: &SchedulerConfig) -> Result<usize> {
    schedule_fairly(db, config, &mut Served::default()).await
}

/// One scheduling pass. Ladders are served in order of fewest matches in
/// flight, then longest since they were last served, so the global cap
/// starves none of them. Returns how many matches it queued.
pub async fn schedule_fairly(db: &Db, config: &SchedulerConfig, served: &mut Served) -> Result<usize> {
    let counts = ranked_in_flight(db).await?;
    let mut total: usize = counts.values().sum();
    let mut queued = 0;
    let mut ladders: Vec<LadderId> = if config.ladders.is_empty() {
        crate::ladders::names()
    } else {
        config.ladders.clone()
    }
    .into_iter()
    .map(LadderId::from)
    .collect();
    served.pass += 1;
    ladders.sort_by_key(|ladder| {
        (
            counts.get(ladder).copied().unwrap_or(0),
            served.last.get(ladder).copied().unwrap_or(0),
        )
    });
    for ladder in ladders {
        if total >= config.global {
            break;
        }
        let here = counts.get(&ladder).copied().unwrap_or(0);
        if here >= config.per_ladder {
            continue;
        }
        let added = top_up(db, config, &ladder, total).await?;
        if added > 0 {
            served.last.insert(ladder.clone(), served.pass);
        }
        total += added;
        queued += added;
    }
    Ok(queued)
}

/// Re-counts and tops up one ladder inside a write transaction.
async fn top_up(db: &Db, config: &SchedulerConfig, ladder: &LadderId, total: usize) -> Result<usize> {
    let mut tx = db.begin_write().await?;
    if db.backend == Backend::Postgres {
        sqlx::query(ADVISORY_KEY).execute(&mut *tx).await?;
    }
    let here: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM matches WHERE ladder = $1 AND kind = $2 AND status IN ('queued', 'running')",
    )
    .bind(ladder.as_str())
    .bind(MatchKind::Ranked.as_str())
    .fetch_one(&mut *tx)
    .await?;
    let here = usize::try_from(here).unwrap_or(usize::MAX);
    let want = config
        .per_ladder
        .saturating_sub(here)
        .min(config.global.saturating_sub(total));
    if want == 0 {
        tx.rollback().await?;
        return Ok(0);
    }
    let candidates = candidates(&mut tx, ladder.as_str()).await?;
    let pairs = pick_pairs(&candidates, want, now_ms());
    for pair in &pairs {
        let seed = crate::seed::random_seed()?;
        // The low bit of the seed picks who is participant 0.
        let (a, b) = if seed & 1 == 0 {
            (pair.participant, pair.opponent)
        } else {
            (pair.opponent, pair.participant)
        };
        let new = crate::queue::NewMatch {
            ladder,
            a_version: a,
            b_version: b,
            seed: seed >> 1,
            kind: MatchKind::Ranked,
            priority: config.priority,
            tournament_id: None,
            budget: None,
        };
        crate::queue::insert_match(&mut *tx, &new).await?;
    }
    tx.commit().await?;
    Ok(pairs.len())
}

/// Every version registered for `ladder` that may be scheduled, with its
/// rating, recent opponent and whether it is busy.
pub async fn candidates(conn: &mut sqlx::AnyConnection, ladder: &str) -> Result<Vec<Candidate>> {
    let start = crate::ratings::Rating::default();
    let rows = sqlx::query(
        "SELECT v.id, v.bot_id, r.rating, r.deviation, r.wins + r.draws + r.losses, r.last_played_ms \
         FROM version_ladders vl JOIN versions v ON v.id = vl.version_id JOIN bots b ON b.id = v.bot_id \
         LEFT JOIN ratings r ON r.version_id = v.id AND r.ladder = vl.ladder \
         WHERE vl.ladder = $1 AND v.status = 'active' AND b.retired = 0 ORDER BY v.id",
    )
    .bind(ladder)
    .fetch_all(&mut *conn)
    .await?;
    let mut candidates = Vec::with_capacity(rows.len());
    for row in rows {
        candidates.push(Candidate {
            version_id: row.try_get(0)?,
            bot_id: row.try_get(1)?,
            active: true,
            rating: row.try_get::<Option<f64>, _>(2)?.unwrap_or(start.rating),
            deviation: row.try_get::<Option<f64>, _>(3)?.unwrap_or(start.deviation),
            matches: row.try_get::<Option<i64>, _>(4)?.unwrap_or(0),
            last_played_ms: row.try_get(5)?,
            last_opponent: None,
            busy: false,
        });
    }
    let index: HashMap<i64, usize> = candidates.iter().enumerate().map(|(i, c)| (c.version_id, i)).collect();
    let busy =
        sqlx::query("SELECT a_version, b_version FROM matches WHERE ladder = $1 AND status IN ('queued', 'running')")
            .bind(ladder)
            .fetch_all(&mut *conn)
            .await?;
    for row in busy {
        for column in 0..2 {
            if let Some(&i) = index.get(&row.try_get::<i64, _>(column)?) {
                candidates[i].busy = true;
            }
        }
    }
    let recent = sqlx::query(
        "SELECT a_version, b_version FROM matches WHERE ladder = $1 AND status <> 'failed' ORDER BY id DESC LIMIT 500",
    )
    .bind(ladder)
    .fetch_all(&mut *conn)
    .await?;
    for row in recent {
        let (a, b): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
        for (me, them) in [(a, b), (b, a)] {
            if let Some(&i) = index.get(&me) {
                candidates[i].last_opponent.get_or_insert(them);
            }
        }
    }
    Ok(candidates)
}
