//! Starting games, and resuming the ones no process holds: at a start,
//! when this process takes the lead from one that stopped or died, and
//! when a page asks for such a game. Also the hold's upkeep ([`People::run`])
//! and the release at a stop ([`People::stop_all`]).

use super::board::Board;
use super::live::{Head, Live, LiveState, Replaying};
use super::names::check_guest_name;
use super::{ABORTED_NOTICE, Clock, NewGame, People, Started, store};
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::handles::Handles;
use crate::ladders::TimeControl;
use crate::quota::Full;
use arbiter_games::{Side, Variant};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;
use tokio::sync::watch;

impl People {
    /// Starts a game: the bot must be active, sandboxed, play the variant
    /// and allow games against people; the address must be within its
    /// limits.
    pub async fn start(&self, core: &Handles, new: NewGame) -> Result<Started> {
        let rules = self.inner.rules;
        let variant = new.variant;
        if variant.is_tick_based() {
            return Err(Error::Invalid(
                "games against people are tic-tac-toe or Othello".to_owned(),
            ));
        }
        if self.is_closed() {
            return Err(Error::Unavailable(
                "the server is restarting: start the game again in a moment".to_owned(),
            ));
        }
        let row: Option<(i64, String, String, i64)> = sqlx::query_as(
            "SELECT v.id, v.sha256, b.name, b.people_play FROM bots b \
             JOIN versions v ON v.bot_id = b.id \
             JOIN version_ladders vl ON vl.version_id = v.id \
             WHERE b.name_key = $1 AND b.retired = 0 AND v.status = 'active' AND v.remote_url IS NULL \
               AND v.agent = 0 AND vl.ladder = $2 \
             ORDER BY v.number DESC LIMIT 1",
        )
        .bind(new.bot.to_lowercase())
        .bind(variant.to_string())
        .fetch_optional(&core.db.pool)
        .await?;
        let Some((version_id, sha256, bot, allowed)) = row else {
            return Err(Error::Invalid(format!(
                "{} has no active sandboxed version that plays {variant}",
                new.bot
            )));
        };
        if allowed == 0 {
            return Err(Error::Invalid(format!(
                "{bot}'s owner does not allow games against people"
            )));
        }
        let person = match new.user_id {
            Some(_) => new.person.trim().to_owned(),
            None => format!("{} (guest)", check_guest_name(&new.person)?),
        };
        // The place first, in one step with its count: a crowd of starts
        // from one client, or from many, can never pass the limits.
        let place = self
            .inner
            .places
            .take(&new.address)
            .map_err(|full| Error::RateLimited {
                message: match full {
                    Full::Key(n) => format!("at most {n} games at once from one address: finish one first"),
                    Full::Total(_) => {
                        "the server is playing as many games against people as it can: try again soon".to_owned()
                    }
                },
                retry_after_s: 30,
            })?;
        crate::auth::rate_limit(
            &core.db,
            &format!("people:{}", new.address),
            rules.per_address_hour,
            3_600_000,
        )
        .await?;

        let mut random = [0u8; 9];
        getrandom::fill(&mut random).map_err(|e| Error::Host(format!("no randomness: {e}")))?;
        let seed = u64::from_le_bytes(random[..8].try_into().unwrap_or_default()) >> 1;
        let person_side = new
            .side
            .unwrap_or(if random[8] & 1 == 0 { Side::First } else { Side::Second });
        let key = crate::auth::new_secret()?;
        let board = Board::start(variant, seed, new.random_opening)
            .ok_or_else(|| Error::Invalid("games against people are tic-tac-toe or Othello".to_owned()))?;
        let time = crate::ladders::time_control(&core.db, variant).await?;
        let key_hash = crate::auth::secret_hash(&key);
        let now = now_ms();
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO people_games (version_id, variant, person, user_id, person_side, clock_ms, seed, \
               random_opening, status, created_ms, key_hash, moves, clock_left_ms, client, hall, held_until_ms, \
               turn_ms, bank_ms, fuel_per_ms) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10, '[]', $11, $12, $13, $14, $15, $16, $17) \
             RETURNING id",
        )
        .bind(version_id)
        .bind(variant.to_string())
        .bind(&person)
        .bind(new.user_id)
        .bind(i64::from(u8::from(person_side)))
        .bind(new.clock.ms().map(|ms| ms as i64))
        .bind(seed as i64)
        .bind(i64::from(new.random_opening))
        .bind(now)
        .bind(&key_hash)
        .bind(new.clock.ms().map(|ms| ms as i64))
        .bind(&new.address)
        .bind(&self.inner.id)
        .bind(now + store::LEASE_MS)
        .bind(i64::try_from(time.turn_ms).unwrap_or(i64::MAX))
        .bind(i64::try_from(time.bank_ms).unwrap_or(i64::MAX))
        .bind(i64::try_from(time.fuel_per_ms).unwrap_or(i64::MAX))
        .fetch_one(&core.db.pool)
        .await?;

        let live = new_live(
            Head {
                id,
                bot,
                variant,
                person,
                person_side,
                clock: new.clock,
            },
            key_hash,
            rules.idle_ms,
            LiveState {
                board,
                user_id: new.user_id,
                moves: Vec::new(),
                waiting: false,
                reply: None,
                clock_left_ms: new.clock.ms(),
                turn_started: None,
                turn_spent_ms: 0,
                saving: false,
                resigned: false,
                stopping: false,
                replay: None,
                diverged: None,
                ended: None,
            },
        );
        let settings = super::game::settings(id, variant, seed, time, new.random_opening);
        self.launch(core, live, settings, sha256, place);
        Ok(Started { id, key })
    }

    /// Resumes, before this process answers anything, every game no
    /// process holds (released by a stopped process, or left by a dead
    /// one whose hold ran out); returns how many it resumed. The process
    /// that leads calls it at its start and whenever it takes the lead.
    pub async fn take_over(&self, core: &Handles) -> Result<usize> {
        let mut resumed = 0;
        for id in store::free(&core.db, now_ms()).await? {
            if self.live(id).is_some() {
                continue;
            }
            if self.resume_one(core, id).await?.is_some() {
                resumed += 1;
            }
        }
        Ok(resumed)
    }

    /// Game `id` live here: in memory, or resumed now if it is running
    /// and no process holds it.
    pub(super) async fn live_or_resumed(&self, core: &Handles, id: i64) -> Result<Option<Arc<Live>>> {
        if let Some(live) = self.live(id) {
            return Ok(Some(live));
        }
        if self.is_closed() || !store::is_free(&core.db, id, now_ms()).await? {
            return Ok(None);
        }
        self.resume_one(core, id).await
    }

    /// Claims game `id` if no process holds it and resumes it here; a
    /// game that cannot be resumed is aborted with the reason.
    async fn resume_one(&self, core: &Handles, id: i64) -> Result<Option<Arc<Live>>> {
        if self.is_closed() {
            return Ok(None);
        }
        let now = now_ms();
        let Some(claimed) = store::claim(&core.db, id, &self.inner.id, now, now + store::LEASE_MS).await? else {
            return Ok(None);
        };
        match self.resume(core, claimed).await {
            Ok(live) => {
                tracing::info!(id, "game against a person resumed");
                Ok(Some(live))
            }
            Err((reason, why)) => {
                tracing::warn!(id, %why, "a game against a person cannot be resumed: aborted");
                store::abort(&core.db, id, &self.inner.id, reason).await?;
                Ok(None)
            }
        }
    }

    /// Plays a claimed game again from its start and goes on live: its
    /// state is the saved one at once, the referee catches up behind it.
    async fn resume(
        &self,
        core: &Handles,
        claimed: store::Claimed,
    ) -> std::result::Result<Arc<Live>, (&'static str, String)> {
        let id = claimed.id;
        let mismatch = |why: String| ("resume_mismatch", why);
        let Some(saved) = claimed.moves else {
            // A row from before games were saved at every move.
            return Err(("server_restart", ABORTED_NOTICE.to_owned()));
        };
        let moves: Vec<String> =
            serde_json::from_str(&saved).map_err(|e| mismatch(format!("its saved moves are unreadable: {e}")))?;
        let variant: Variant = claimed
            .variant
            .parse()
            .map_err(|e: arbiter_games::UnknownVariant| mismatch(e.to_string()))?;
        let seed = claimed.seed as u64;
        let random_opening = claimed.random_opening != 0;
        let start = Board::start(variant, seed, random_opening)
            .ok_or_else(|| mismatch(format!("{variant} is not a game against people")))?;
        let mut board = start.clone();
        for (at, mv) in moves.iter().enumerate() {
            if !board.apply(mv) {
                return Err(mismatch(format!("its saved move {} ({mv}) is not legal", at + 1)));
            }
        }
        let time = match TimeControl::from_columns(claimed.turn_ms, claimed.bank_ms, claimed.fuel_per_ms) {
            Some(time) => time,
            None => crate::ladders::time_control(&core.db, variant)
                .await
                .map_err(|e| ("host_failure", e.to_string()))?,
        };
        let client = claimed.client.unwrap_or_else(|| format!("game:{id}"));
        // Held by resumed games too; the process before held as many.
        let place = self
            .inner
            .places
            .take(&client)
            .map_err(|full| ("no_place", format!("no place to play it: {full}")))?;
        let clock = Clock::ALL
            .into_iter()
            .find(|c| c.ms().map(|ms| ms as i64) == claimed.clock_ms)
            .unwrap_or(Clock::Untimed);
        let live = new_live(
            Head {
                id,
                bot: claimed.bot,
                variant,
                person: claimed.person,
                person_side: if claimed.person_side == 0 {
                    Side::First
                } else {
                    Side::Second
                },
                clock,
            },
            claimed.key_hash.unwrap_or_default(),
            self.inner.rules.idle_ms,
            LiveState {
                board,
                user_id: claimed.user_id,
                replay: (!moves.is_empty()).then_some(Replaying { board: start, at: 0 }),
                moves,
                waiting: false,
                reply: None,
                clock_left_ms: claimed
                    .clock_left_ms
                    .and_then(|ms| u64::try_from(ms).ok())
                    .or(clock.ms()),
                turn_started: None,
                turn_spent_ms: u64::try_from(claimed.turn_spent_ms).unwrap_or(0),
                saving: false,
                resigned: false,
                stopping: false,
                diverged: None,
                ended: None,
            },
        );
        let settings = super::game::settings(id, variant, seed, time, random_opening);
        self.launch(core, live.clone(), settings, claimed.sha256, place);
        Ok(live)
    }

    /// Keeps this process's hold on its games until `stop`: every
    /// [`store::RENEW_MS`] it renews the hold and, while `leading` says
    /// this process runs the live games, resumes the games nobody holds;
    /// when another process leads, it releases its games to it.
    pub async fn run(self, core: Handles, mut stop: watch::Receiver<bool>, leading: impl Fn() -> bool + Send) {
        loop {
            tokio::select! {
                _ = stop.changed() => {}
                () = tokio::time::sleep(Duration::from_millis(store::RENEW_MS)) => {}
            }
            if *stop.borrow() || self.is_closed() {
                return;
            }
            let holding = !self.games().is_empty();
            if holding && let Err(error) = store::renew(&core.db, &self.inner.id, now_ms() + store::LEASE_MS).await {
                tracing::warn!(%error, "cannot renew the hold on this process's games against people");
            }
            if leading() {
                match self.take_over(&core).await {
                    Ok(0) => {}
                    Ok(resumed) => tracing::info!(resumed, "games against people resumed here"),
                    Err(error) => tracing::warn!(%error, "cannot resume the games against people nobody holds"),
                }
            } else {
                self.release_all();
            }
        }
    }

    /// Releases every game this process plays, at the person's next turn
    /// (the next process that leads resumes them); each is written by its
    /// own task ([`People::written`] waits for them).
    fn release_all(&self) {
        for live in self.games().values() {
            let mut state = live.lock();
            if state.ended.is_none() {
                state.stopping = true;
            }
            drop(state);
            live.wake.notify_all();
        }
    }

    /// As the server stops: no game starts or resumes here any more, and
    /// every game is released, its clock stopped, for the next process
    /// (written by its own task; [`People::written`] waits for them).
    pub fn stop_all(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.release_all();
    }
}

/// A live game from its head and state.
fn new_live(head: Head, key_hash: String, idle_ms: u64, state: LiveState) -> Arc<Live> {
    Arc::new(Live {
        head,
        key_hash,
        idle_ms,
        state: Mutex::new(state),
        wake: Condvar::new(),
        changes: watch::channel(0).0,
    })
}
