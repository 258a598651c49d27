//! The scheduler: keeps every ladder playing fair, side-swapped matches.
//!
//! Every tick (250 ms by default) it looks at each ladder: while fewer than
//! [`SchedulerConfig::per_ladder`] `ranked` matches of that ladder are queued
//! or running (and fewer than [`SchedulerConfig::global`] over all ladders),
//! it queues one more. Who plays is decided by [`pick_pairs`], a pure
//! function over the ladder's [`Candidate`]s, by Halite III's rule:
//!
//! - the **participant** is the free version with the fewest rated matches
//!   on the ladder (so newcomers are placed first), then the one idle
//!   longest;
//! - its **opponent** is drawn among the free versions of other bots ranked
//!   near it: within [`rank_window`] places either side in the ladder's
//!   order by rating (a tenth of the pool, at least 3), and, while the
//!   participant is provisional, also any rated within twice its deviation
//!   of it ([`provisional_reach`]): a newcomer's first opponents come from
//!   the whole pool, and its window narrows as its rating settles (Glicko's
//!   own reasoning: where a rating is uncertain, results against varied
//!   opponents place it fastest). The pair that met in
//!   either bot's most recent match is avoided unless no one else near is
//!   free; when no one near is free, the nearest rating among the free
//!   versions will do. The draw is a hash of the time and the participant,
//!   so the same candidates at the same time give the same pairs.
//!
//! Why this rule: `arbiter simulate` drives [`pick_pairs`] itself, and on
//! held-out seeds (docs/spec/ladder.md, "What the simulator measured") the
//! earlier windows-plus-urgency scheduler was never faster than Halite's
//! rule, significantly slower at 1 000 bots, with a wide spread of
//! strengths or with non-transitive results, and less fair (up to 1.9× the
//! average number of matches against 1.05). An expected-information
//! matchmaker was no faster either. With the rank window alone a newcomer
//! starting at 1500 met only bots rated near its current rating and
//! climbed or fell slowly: in the regression bench's settings (tuning
//! seeds 0–19, 200 bots, concurrency 2 and 16) a quarter of
//! newcomers needed more than 50 of their own matches to be placed for
//! good and one in eight never was; drawing provisional opponents from the
//! wider window brought that to under 40 and one in 13–20 (issue 44).
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
use crate::ratings::PROVISIONAL_RD;
use sqlx::Row;
use std::collections::{HashMap, HashSet};
use std::time::Duration;
use tokio::sync::watch;

/// How many places either side of a version in the ladder's order by
/// rating its opponent is drawn from: a tenth of the `ranked` versions, at
/// least 3.
pub fn rank_window(ranked: usize) -> usize {
    (ranked / 10).max(3)
}

/// How far (rating points either side) a provisional participant's
/// opponents may be drawn from, beyond its rank window: twice its deviation
/// while that is at least [`PROVISIONAL_RD`], else 0 (the rank window
/// alone). A newcomer starts at 1500 with a deviation of 350, so its first
/// opponents come from the whole pool, and the window narrows as its rating
/// settles.
pub fn provisional_reach(participant: &Candidate) -> f64 {
    if participant.deviation >= PROVISIONAL_RD {
        2.0 * participant.deviation
    } else {
        0.0
    }
}

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
    /// Whether a pairing may be made for it; otherwise it is only ever an
    /// opponent. On a remote ladder only remote bots choose, so house bots
    /// meet remote bots there but never each other.
    pub chooses: bool,
}

/// A match to queue: participant 0 and participant 1 (version ids).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pairing {
    /// The version chosen to play (participant 0 before side shuffling).
    pub participant: i64,
    /// Its opponent.
    pub opponent: i64,
}

/// Chooses up to `want` pairings among `candidates` by Halite III's rule
/// (see the module's documentation); no version appears in two pairings,
/// two versions of one bot never meet, and busy or inactive versions appear
/// in none. Pure and deterministic: the same candidates and time give the
/// same pairings.
pub fn pick_pairs(candidates: &[Candidate], want: usize, now_ms: i64) -> Vec<Pairing> {
    // The ladder's order by rating, strongest first, busy versions included
    // (they hold their places).
    let mut ranked: Vec<&Candidate> = candidates.iter().filter(|c| c.active).collect();
    ranked.sort_by(|x, y| y.rating.total_cmp(&x.rating).then(x.version_id.cmp(&y.version_id)));
    let window = rank_window(ranked.len());
    let mut taken: HashSet<i64> = ranked.iter().filter(|c| c.busy).map(|c| c.version_id).collect();
    let mut pairs = Vec::new();
    while pairs.len() < want {
        let Some((rank, participant)) = ranked
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, c)| c.chooses && !taken.contains(&c.version_id))
            .min_by_key(|(_, c)| (c.matches, c.last_played_ms.unwrap_or(i64::MIN), c.version_id))
        else {
            break;
        };
        let free = |c: &&Candidate| c.bot_id != participant.bot_id && !taken.contains(&c.version_id);
        let places = rank.saturating_sub(window)..(rank + window + 1).min(ranked.len());
        let reach = provisional_reach(participant);
        let near: Vec<&Candidate> = ranked
            .iter()
            .copied()
            .enumerate()
            .filter(|(i, c)| places.contains(i) || (c.rating - participant.rating).abs() <= reach)
            .map(|(_, c)| c)
            .filter(free)
            .collect();
        let rematch = |c: &Candidate| {
            participant.last_opponent == Some(c.version_id) || c.last_opponent == Some(participant.version_id)
        };
        let fresh: Vec<&Candidate> = near.iter().copied().filter(|c| !rematch(c)).collect();
        let pool = if fresh.is_empty() { near } else { fresh };
        let opponent = if pool.is_empty() {
            ranked.iter().copied().filter(free).min_by(|x, y| {
                let distance = |c: &Candidate| (c.rating - participant.rating).abs();
                distance(x)
                    .total_cmp(&distance(y))
                    .then(x.version_id.cmp(&y.version_id))
            })
        } else {
            let draw = mix(now_ms as u64 ^ mix(participant.version_id as u64));
            pool.get((draw % pool.len() as u64) as usize).copied()
        };
        // Without an opponent it waits; the others may still be paired.
        taken.insert(participant.version_id);
        if let Some(opponent) = opponent {
            taken.insert(opponent.version_id);
            pairs.push(Pairing {
                participant: participant.version_id,
                opponent: opponent.version_id,
            });
        }
    }
    pairs
}

/// SplitMix64's finaliser: a well-spread hash of `x`.
fn mix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
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

/// Ranked matches queued or running, per ladder: those the workers play
/// (the agent hall's, claimed by `hall-…`, take no worker and count against
/// no cap).
async fn ranked_in_flight(db: &Db) -> Result<HashMap<LadderId, usize>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT ladder, COUNT(*) FROM matches WHERE kind = $1 AND status IN ('queued', 'running') \
         AND (claimed_by IS NULL OR claimed_by NOT LIKE 'hall-%') GROUP BY ladder",
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
        crate::ladders::all_names()
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
        "SELECT COUNT(*) FROM matches WHERE ladder = $1 AND kind = $2 AND status IN ('queued', 'running') \
         AND (claimed_by IS NULL OR claimed_by NOT LIKE 'hall-%')",
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
        "SELECT v.id, v.bot_id, r.rating, r.deviation, r.wins + r.draws + r.losses, r.last_played_ms, \
         v.remote_url IS NOT NULL \
         FROM version_ladders vl JOIN versions v ON v.id = vl.version_id JOIN bots b ON b.id = v.bot_id \
         LEFT JOIN ratings r ON r.version_id = v.id AND r.ladder = vl.ladder \
         WHERE vl.ladder = $1 AND v.status = 'active' AND v.agent = 0 AND b.retired = 0 AND b.auto_match = 1 \
         ORDER BY v.id",
    )
    .bind(ladder)
    .fetch_all(&mut *conn)
    .await?;
    let remote_ladder = ladder.starts_with(crate::ladders::REMOTE_PREFIX);
    let mut candidates = Vec::with_capacity(rows.len());
    for row in rows {
        let remote: bool = row
            .try_get::<i64, _>(6)
            .map(|v| v != 0)
            .or_else(|_| row.try_get::<bool, _>(6))?;
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
            chooses: remote || !remote_ladder,
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
    if remote_ladder {
        // A remote bot is in at most its profile's `concurrent_matches`
        // (default 2) matches at once over all remote ladders: that caps
        // its concurrent requests (a referee has one request out per match).
        let loaded = sqlx::query(
            "SELECT v.bot_id, COUNT(*), MAX(b.concurrent_matches) FROM matches m \
             JOIN versions v ON v.id = m.a_version OR v.id = m.b_version JOIN bots b ON b.id = v.bot_id \
             WHERE m.status IN ('queued', 'running') AND v.remote_url IS NOT NULL GROUP BY v.bot_id",
        )
        .fetch_all(&mut *conn)
        .await?;
        for row in loaded {
            let (bot_id, count, limit): (i64, i64, i64) = (row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
            if count >= limit {
                for candidate in candidates.iter_mut().filter(|c| c.bot_id == bot_id) {
                    candidate.busy = true;
                }
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

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 1_800_000_000_000;

    /// 100 established versions rated 1000 + 10·id, and `newcomer` (id
    /// 1000, unplayed, rated 1500) with deviation `deviation`: the opponents
    /// it is drawn over 400 minutes.
    fn opponents_of_newcomer(deviation: f64) -> HashSet<i64> {
        let mut all: Vec<Candidate> = (1..=100)
            .map(|id| Candidate {
                version_id: id,
                bot_id: id,
                active: true,
                rating: 1000.0 + 10.0 * id as f64,
                deviation: 60.0,
                matches: 50,
                last_played_ms: Some(NOW - 60_000),
                last_opponent: None,
                busy: false,
                chooses: true,
            })
            .collect();
        all.push(Candidate {
            version_id: 1000,
            bot_id: 1000,
            rating: 1500.0,
            deviation,
            matches: 0,
            last_played_ms: None,
            ..all[0].clone()
        });
        (0..400)
            .map(|minute| {
                let pairs = pick_pairs(&all, 1, NOW + minute * 60_000);
                assert_eq!(pairs.len(), 1);
                assert_eq!(pairs[0].participant, 1000, "the newcomer is placed first: {pairs:?}");
                pairs[0].opponent
            })
            .collect()
    }

    #[test]
    fn a_provisional_newcomer_meets_opponents_within_twice_its_deviation() {
        // Deviation 350: reach 700 points, the whole pool (500..1500 from
        // 1500), far beyond its 10 places either side (ratings 1400..1600).
        let opponents = opponents_of_newcomer(350.0);
        assert!(opponents.iter().any(|&id| id < 30), "weak opponents: {opponents:?}");
        assert!(
            opponents.len() > 60,
            "spread over the pool: {} opponents",
            opponents.len()
        );
        // Deviation 150: reach 300 points, ratings 1200..=1800 (ids 20..=80).
        let opponents = opponents_of_newcomer(150.0);
        assert!(opponents.iter().all(|id| (20..=80).contains(id)), "{opponents:?}");
        assert!(
            opponents.iter().any(|&id| id < 35),
            "beyond the rank window: {opponents:?}"
        );
    }

    #[test]
    fn an_established_version_meets_only_its_rank_window() {
        assert_eq!(
            provisional_reach(&Candidate {
                version_id: 1,
                bot_id: 1,
                active: true,
                rating: 1500.0,
                deviation: PROVISIONAL_RD - 1.0,
                matches: 40,
                last_played_ms: None,
                last_opponent: None,
                busy: false,
                chooses: true,
            }),
            0.0
        );
        // Rated 1500 it ranks just below id 50: 10 places either side are ids
        // 59 down to 40.
        let opponents = opponents_of_newcomer(60.0);
        assert!(opponents.iter().all(|id| (40..=59).contains(id)), "{opponents:?}");
    }
}
