//! The agent hall: remote Othello bots that call the server (FlipSight's
//! agent API), their challenges and their matches.
//!
//! An agent bot holds a bot token ([`tokens`]). It polls ([`Hall::poll`])
//! or listens to an event stream ([`Hall::subscribe`]), challenges and
//! accepts, and sends moves; the hall keeps each match's state in memory
//! ([`live::LiveMatch`]), on the server's clock, and writes the match row
//! when a challenge is made, when it starts and when it ends (result,
//! replay and rating change in one transaction, as a worker records a
//! match). House bots (sandboxed) can be an agent's opponent: the hall
//! moves them on their own fuel clock as soon as it is their turn.
//!
//! # Guarantees
//!
//! - A move is checked before it is applied; a refused move changes
//!   nothing and says why in the seed's words (`illegal_move`,
//!   `stale_revision`, `not_your_turn`, …).
//! - A match is recorded (and rated) at most once.
//! - Every match in flight is saved at every change ([`store`]; a move is
//!   saved before it is acknowledged). A stopping process releases its
//!   matches and the next one resumes them where they were, with no clock
//!   run while no process held them; a process that dies without releasing
//!   them loses them to the next hall after [`store::LEASE_MS`].
//! - A match is held by one hall at a time: every agent request about it
//!   must reach the `arbiter serve` holding it (see the Operations section
//!   of the README for several front ends).

pub mod live;
pub mod tokens;

mod directory;
mod house;
mod lead;
mod matching;
mod polls;
mod resume;
mod store;
mod turns;

pub use directory::AgentBot;
use live::{LiveMatch, Status};
pub use store::Leader;

use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::handles::Handles;
use arbiter_games::othello::Mode;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::{Notify, broadcast, watch};

/// The limits and delays of FlipSight's rules (all milliseconds).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AgentRules {
    /// A match nobody moved in this long after its start is aborted.
    pub first_move_ms: i64,
    /// A bot away this long while its opponent is there loses.
    pub disconnect_ms: i64,
    /// A bot that polled this recently (or streams) is online.
    pub online_ms: i64,
    /// A challenge not answered in this long expires.
    pub accept_ms: i64,
    /// An automatic challenge not accepted takes the bot out this long.
    pub auto_out_ms: i64,
    /// Event streams send a ping this often.
    pub ping_ms: i64,
    /// Open streams one bot may hold.
    pub max_streams: usize,
    /// Ended matches stay in polls this long.
    pub keep_ended_ms: i64,
}

impl Default for AgentRules {
    /// FlipSight's: 30 s for the first move and for a disconnect, 30 s
    /// online after a poll, 120 s to accept, 10 minutes out of automatic
    /// matching, a ping every 10 s, 3 streams.
    fn default() -> AgentRules {
        AgentRules {
            first_move_ms: 30_000,
            disconnect_ms: 30_000,
            online_ms: 30_000,
            accept_ms: 120_000,
            auto_out_ms: 600_000,
            ping_ms: 10_000,
            max_streams: 3,
            keep_ended_ms: 600_000,
        }
    }
}

/// The environment variable that shortens the rules for tests and trials:
/// `name=ms` pairs separated by commas, e.g.
/// `first_move_ms=2000,disconnect_ms=2000,accept_ms=5000`.
pub const RULES_ENV: &str = "ARBITER_AGENT_RULES";

impl AgentRules {
    /// The defaults, with what [`RULES_ENV`] sets (unknown names and
    /// values that are not numbers are ignored, with a warning).
    pub fn from_env() -> AgentRules {
        let mut rules = AgentRules::default();
        let Ok(text) = std::env::var(RULES_ENV) else {
            return rules;
        };
        for pair in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let parsed = pair
                .split_once('=')
                .and_then(|(name, value)| Some((name.trim(), value.trim().parse::<i64>().ok()?)));
            let slot = match parsed {
                Some(("first_move_ms", _)) => &mut rules.first_move_ms,
                Some(("disconnect_ms", _)) => &mut rules.disconnect_ms,
                Some(("online_ms", _)) => &mut rules.online_ms,
                Some(("accept_ms", _)) => &mut rules.accept_ms,
                Some(("auto_out_ms", _)) => &mut rules.auto_out_ms,
                Some(("ping_ms", _)) => &mut rules.ping_ms,
                Some(("keep_ended_ms", _)) => &mut rules.keep_ended_ms,
                _ => {
                    tracing::warn!(%pair, "{RULES_ENV}: ignored");
                    continue;
                }
            };
            if let Some((_, value)) = parsed {
                *slot = value.max(1);
            }
        }
        rules
    }
}

/// The hall's clock: the system's, or one a test moves by hand.
#[derive(Clone, Debug, Default)]
pub enum AgentClock {
    /// Unix milliseconds.
    #[default]
    System,
    /// Milliseconds a test sets.
    Manual(Arc<AtomicI64>),
}

impl AgentClock {
    /// Now, in milliseconds.
    pub fn now(&self) -> i64 {
        match self {
            AgentClock::System => now_ms(),
            AgentClock::Manual(ms) => ms.load(Ordering::SeqCst),
        }
    }
}

/// What a bot reports in `agent_poll`'s `environment`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
pub struct Environment {
    /// The CPU, at most 120 characters.
    #[serde(default)]
    pub cpu: Option<String>,
    /// The operating system, at most 120 characters.
    #[serde(default)]
    pub os: Option<String>,
    /// The engine's name, at most 120 characters.
    #[serde(default)]
    pub engine: Option<String>,
    /// Practising: out of automatic matching, its matches unrated.
    #[serde(default)]
    pub practice: bool,
}

impl Environment {
    /// Refuses fields over 120 characters (400).
    pub fn check(&self) -> Result<()> {
        for (name, value) in [("cpu", &self.cpu), ("os", &self.os), ("engine", &self.engine)] {
            if value.as_ref().is_some_and(|v| v.chars().count() > 120) {
                return Err(Error::Invalid(format!(
                    "environment.{name} is longer than 120 characters"
                )));
            }
        }
        Ok(())
    }
}

/// What the hall knows of a bot's connection.
#[derive(Clone, Debug, Default)]
struct Presence {
    streams: usize,
    last_seen_ms: i64,
    environment: Environment,
    auto_out_until_ms: i64,
}

#[derive(Default)]
struct HallState {
    matches: BTreeMap<i64, LiveMatch>,
    presence: HashMap<i64, Presence>,
    /// One channel per bot with an open stream: ids of its changed matches.
    channels: HashMap<i64, broadcast::Sender<i64>>,
    /// House moves being computed: (match, leg).
    thinking: HashSet<(i64, usize)>,
    /// Matches ended and not yet written.
    to_record: Vec<i64>,
    /// Matches changed since they were last saved.
    dirty: HashSet<i64>,
    /// Matches whose end is written: never saved again.
    done: HashSet<i64>,
}

struct HallInner {
    id: String,
    rules: AgentRules,
    clock: AgentClock,
    state: Mutex<HallState>,
    wake: Notify,
    house: house::HousePlayers,
    /// House moves computed at once, at most one per core: many agents
    /// challenging house bots queue for the machine instead of flooding
    /// it (a house bot's clock is its fuel, so waiting costs it nothing).
    house_slots: Arc<tokio::sync::Semaphore>,
    /// Sandbox instances the house bots may hold ([`crate::budget::Budgets::house`]):
    /// one per leg a house bot plays, from its first move to the match's
    /// end. A leg whose house bot finds none waits, on its fuel clock.
    house_instances: Arc<tokio::sync::Semaphore>,
    /// While the hall cannot accept moves (its database does not answer),
    /// its clock stands still: see [`Hall::now`].
    pause: Mutex<Pause>,
    /// The bot directory as last read, and when: every poll shows it, so
    /// it is read at most once per [`DIRECTORY_TTL`] (and again after a
    /// match is recorded, which changes ratings).
    directory: Mutex<Option<DirectoryRead>>,
    /// The directory's bot objects as polls show them, serialised once for
    /// every poll of the second (see [`Hall::poll_answer`]).
    bot_objects: Mutex<Option<Arc<BotObjects>>>,
    /// Tokens recently found valid, by their hash: a poll needs no
    /// database round trip to know its bot.
    tokens: Mutex<HashMap<String, (std::time::Instant, AgentBot)>>,
    /// Where this hall stands among the front ends sharing its database.
    lead: Mutex<lead::Lead>,
}

/// The directory's bot objects, each serialised as JSON, with when they
/// were made.
struct BotObjects {
    made: std::time::Instant,
    /// (bot id, its object as JSON), in the directory's order.
    objects: Vec<(i64, String)>,
}

/// How long a bot token found valid is believed without asking the
/// database again: a reissued token (or a retired bot's) stops working
/// within this on every front end.
const TOKEN_TTL: Duration = Duration::from_secs(2);

/// Tokens remembered at most; past it the stale ones are forgotten.
const TOKENS_KEPT: usize = 4096;

/// Time the hall's clock stood still.
#[derive(Debug, Default)]
struct Pause {
    /// When (on the underlying clock) the current stop began.
    since: Option<i64>,
    /// Milliseconds of earlier stops, all together.
    total_ms: i64,
}

/// How long, at most, the hall waits for its database to answer a check
/// while its clock stands still.
const OUTAGE_PROBE_TIMEOUT: Duration = Duration::from_secs(2);

/// The bot directory as read at an instant.
type DirectoryRead = (std::time::Instant, Arc<Vec<directory::Entry>>);

/// How often a hall renews its hold on its matches and looks for matches
/// nobody holds (well within [`store::LEASE_MS`]).
const HOLD_RENEWAL: Duration = Duration::from_secs(2);

/// How long the bot directory is reused before it is read again: polls
/// show ratings and profiles at most this old.
const DIRECTORY_TTL: Duration = Duration::from_millis(1000);

/// The agent hall (cheap to clone; clones share it).
#[derive(Clone)]
pub struct Hall {
    inner: Arc<HallInner>,
}

impl std::fmt::Debug for Hall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hall")
            .field("id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

impl Default for Hall {
    fn default() -> Hall {
        Hall::new(AgentRules::default(), AgentClock::System)
    }
}

/// House bots' sandbox instances of a [`Hall::new`].
const DEFAULT_HOUSE_INSTANCES: u32 = 16;

/// A bot's open event stream; closing it (dropping) counts it out.
pub struct Stream {
    hall: Hall,
    bot: i64,
    /// Ids of this bot's matches as they change.
    pub changes: broadcast::Receiver<i64>,
}

impl Drop for Stream {
    fn drop(&mut self) {
        let now = self.hall.now();
        let mut state = self.hall.lock();
        if let Some(presence) = state.presence.get_mut(&self.bot) {
            presence.streams = presence.streams.saturating_sub(1);
            presence.last_seen_ms = presence.last_seen_ms.max(now);
        }
    }
}

impl Hall {
    /// A hall with `rules` on `clock`, its house bots holding at most 16
    /// sandbox instances.
    pub fn new(rules: AgentRules, clock: AgentClock) -> Hall {
        Hall::with_house_budget(rules, clock, DEFAULT_HOUSE_INSTANCES)
    }

    /// A hall with `rules` on `clock`, its house bots holding at most
    /// `house_instances` sandbox instances at once.
    pub fn with_house_budget(rules: AgentRules, clock: AgentClock, house_instances: u32) -> Hall {
        let mut suffix = [0u8; 4];
        let _ = getrandom::fill(&mut suffix);
        Hall {
            inner: Arc::new(HallInner {
                id: format!("hall-{}-{}", std::process::id(), u32::from_le_bytes(suffix)),
                rules,
                clock,
                state: Mutex::new(HallState::default()),
                wake: Notify::new(),
                house: house::HousePlayers::default(),
                house_slots: Arc::new(tokio::sync::Semaphore::new(
                    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get),
                )),
                house_instances: Arc::new(tokio::sync::Semaphore::new(house_instances as usize)),
                pause: Mutex::new(Pause::default()),
                directory: Mutex::new(None),
                bot_objects: Mutex::new(None),
                tokens: Mutex::new(HashMap::new()),
                lead: Mutex::new(lead::Lead::default()),
            }),
        }
    }

    /// Sandbox instances the house bots hold now, and their budget.
    pub fn house_instances(&self) -> (usize, usize) {
        let held = self.inner.house.held();
        (held, held + self.inner.house_instances.available_permits())
    }

    /// The rules it plays by.
    pub fn rules(&self) -> AgentRules {
        self.inner.rules
    }

    /// The hall's time now: its clock (Unix milliseconds unless a test's)
    /// less every stretch during which the hall could not accept moves,
    /// and standing still during one. Every clock of a match (turns,
    /// banks, first moves, disconnects) runs on it, so an outage of the
    /// server never costs a bot time.
    pub fn now(&self) -> i64 {
        let pause = self.pause_state();
        self.inner.clock.now().min(pause.since.unwrap_or(i64::MAX)) - pause.total_ms
    }

    /// Stops the hall's clock (if it runs): moves cannot be accepted now,
    /// because `why`. Logged once per stop.
    pub fn pause(&self, why: &str) {
        let now = self.inner.clock.now();
        let mut pause = self.pause_state();
        if pause.since.is_none() {
            pause.since = Some(now);
            drop(pause);
            tracing::warn!(%why, "the agent hall's clocks stand still until it can accept moves again");
        }
    }

    /// Starts the hall's clock again after [`Hall::pause`]: the stop is not
    /// counted on any bot's clock.
    pub fn resume(&self) {
        let now = self.inner.clock.now();
        let mut pause = self.pause_state();
        if let Some(since) = pause.since.take() {
            let stood = (now - since).max(0);
            pause.total_ms += stood;
            drop(pause);
            tracing::warn!(
                stood_ms = stood,
                "the agent hall accepts moves again; its clocks ran on"
            );
            self.inner.wake.notify_one();
        }
    }

    /// Whether the hall's clock stands still now.
    pub fn is_paused(&self) -> bool {
        self.pause_state().since.is_some()
    }

    fn pause_state(&self) -> MutexGuard<'_, Pause> {
        self.inner
            .pause
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stops or starts the clock as the database can or cannot be reached:
    /// while it runs, the database watch's verdict decides; while it stands
    /// still, a check of the hall's own must answer before it runs again.
    async fn follow_database(&self, core: &Handles) {
        if self.is_paused() {
            let answered = tokio::time::timeout(OUTAGE_PROBE_TIMEOUT, sqlx::query("SELECT 1").execute(&core.db.pool))
                .await
                .is_ok_and(|answer| answer.is_ok());
            if answered {
                self.resume();
            }
        } else if !core.db.is_up() {
            self.pause("its database cannot be reached");
        }
    }

    fn lock(&self) -> MutexGuard<'_, HallState> {
        self.inner.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// `agent_challenge`: `bot` challenges `target` (an id or a name) to a
    /// match of `mode`. A house bot accepts at once.
    pub async fn challenge(&self, core: &Handles, bot: &AgentBot, target: Target, mode: Mode) -> Result<i64> {
        let bots = self.directory_with(core, bot.id).await?;
        let Some(me) = bots.iter().find(|entry| entry.id == bot.id) else {
            return Err(Error::Conflict("bot is not on a remote Othello ladder".into()));
        };
        let opponent = bots
            .iter()
            .find(|entry| match &target {
                Target::Id(id) => entry.id == *id,
                Target::Name(name) => entry.name.eq_ignore_ascii_case(name),
            })
            .filter(|entry| entry.id != bot.id)
            .ok_or_else(|| Error::Conflict("target bot not found".into()))?;
        if !me.modes.contains(&mode) || !opponent.modes.contains(&mode) {
            return Err(Error::Conflict("unsupported game mode".into()));
        }
        let practice = {
            let state = self.lock();
            let practising = |id: i64| state.presence.get(&id).is_some_and(|p| p.environment.practice);
            self.check_capacity(&state, me)?;
            if !opponent.house {
                self.check_capacity(&state, opponent)
                    .map_err(|_| Error::Conflict("bot busy".into()))?;
            }
            practising(bot.id) || practising(opponent.id)
        };
        self.create(core, me, opponent, mode, !practice, false).await
    }

    fn check_capacity(&self, state: &HallState, bot: &directory::Entry) -> Result<()> {
        let busy = state
            .matches
            .values()
            .filter(|m| !m.status.is_over() && m.participant_of(bot.id).is_some())
            .count();
        if busy >= usize::try_from(bot.concurrent).unwrap_or(1).max(1) {
            return Err(Error::Conflict("bot already has an active match".into()));
        }
        Ok(())
    }

    async fn create(
        &self,
        core: &Handles,
        a: &directory::Entry,
        b: &directory::Entry,
        mode: Mode,
        ranked: bool,
        auto: bool,
    ) -> Result<i64> {
        let ladder = crate::ladders::remote_name(arbiter_games::Variant::Othello(mode));
        let mut seed_bytes = [0u8; 8];
        getrandom::fill(&mut seed_bytes).map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
        let seed = i64::from_le_bytes(seed_bytes) & i64::MAX;
        let now = self.now();
        let kind = if ranked { "ranked" } else { "challenge" };
        let row: Option<(i64, i64, Option<i64>)> = sqlx::query_as(
            "INSERT INTO matches (ladder, a_version, b_version, seed, kind, priority, status, created_ms, claimed_by, \
               turn_ms, bank_ms, fuel_per_ms) \
             SELECT $1, $2, $3, $4, $5, 0, 'pending', $6, $7, l.bank_ms, l.bank_ms, l.fuel_per_ms \
             FROM ladders l WHERE l.name = $1 RETURNING id, bank_ms, fuel_per_ms",
        )
        .bind(&ladder)
        .bind(a.version)
        .bind(b.version)
        .bind(seed)
        .bind(kind)
        .bind(now_ms())
        .bind(&self.inner.id)
        .fetch_optional(&core.db.pool)
        .await?;
        let Some((id, bank_ms, _)) = row else {
            return Err(Error::Conflict("unsupported game mode".into()));
        };
        let live = LiveMatch::new(
            id,
            ladder,
            mode,
            u64::try_from(seed).unwrap_or(0),
            [a.participant(), b.participant()],
            bank_ms,
            ranked,
            auto,
            now,
            self.inner.rules.accept_ms,
        );
        self.lock().matches.insert(id, live);
        self.notify(id);
        self.save(core, &[id]).await;
        if b.house {
            self.start(core, id).await?;
        }
        Ok(id)
    }

    /// `agent_accept`: `bot` (the match's `bot_b`) starts the match.
    pub async fn accept(&self, core: &Handles, bot: &AgentBot, id: i64) -> Result<Value> {
        {
            let state = self.lock();
            let m = state
                .matches
                .get(&id)
                .filter(|m| m.participants[1].bot == bot.id)
                .ok_or_else(|| Error::Conflict("challenge expired or answered".into()))?;
            if m.status != Status::Pending || m.expires_ms <= self.now() {
                return Err(Error::Conflict("challenge expired or answered".into()));
            }
        }
        self.start(core, id).await?;
        Ok(self.summary(id))
    }

    async fn start(&self, core: &Handles, id: i64) -> Result<()> {
        let now = self.now();
        let done = sqlx::query(
            "UPDATE matches SET status = 'running', started_ms = $2, attempts = 1 WHERE id = $1 AND status = 'pending'",
        )
        .bind(id)
        .bind(now_ms())
        .execute(&core.db.pool)
        .await?;
        if done.rows_affected() == 0 {
            return Err(Error::Conflict("challenge expired or answered".into()));
        }
        if let Some(m) = self.lock().matches.get_mut(&id) {
            m.start(now);
        }
        self.save(core, &[id]).await;
        core.events.send(crate::events::Event::MatchStarted {
            id,
            ladder: self
                .lock()
                .matches
                .get(&id)
                .map(|m| m.ladder.clone())
                .unwrap_or_default(),
        });
        self.notify(id);
        self.inner.wake.notify_one();
        self.tick_matches(core);
        Ok(())
    }

    /// `agent_reject`: `bot` (`bot_b`) declines.
    pub async fn reject(&self, core: &Handles, bot: &AgentBot, id: i64) -> Result<Value> {
        let now = self.now();
        {
            let mut state = self.lock();
            let m = state
                .matches
                .get_mut(&id)
                .filter(|m| m.participants[1].bot == bot.id && m.status == Status::Pending)
                .ok_or_else(|| Error::Conflict("challenge expired or answered".into()))?;
            m.close(Status::Rejected, now);
            if m.auto {
                let out = now + self.inner.rules.auto_out_ms;
                state.presence.entry(bot.id).or_default().auto_out_until_ms = out;
            }
        }
        self.lock().done.insert(id);
        close_row(core, id, "rejected", "bot_b rejected the challenge").await?;
        self.notify(id);
        Ok(self.summary(id))
    }

    /// `agent_move`: plays `bot`'s move.
    pub async fn play(
        &self,
        core: &Handles,
        bot: &AgentBot,
        id: i64,
        leg: i64,
        revision: i64,
        value: &Value,
    ) -> Result<Value> {
        // A leg that no match has is a malformed request (400), whatever
        // the match's state.
        if !(0..live::LEGS as i64).contains(&leg) {
            return Err(Error::Invalid(live::Refusal::NoSuchLeg.to_string()));
        }
        let now = self.now();
        let result = {
            let mut state = self.lock();
            let m = state
                .matches
                .get_mut(&id)
                .ok_or_else(|| Error::Conflict("match not running".into()))?;
            let participant = m
                .participant_of(bot.id)
                .ok_or_else(|| Error::Conflict("match not running".into()))?;
            let result = m.play(participant, leg, revision, value, now);
            let change = match &result {
                Ok(change) | Err((_, change)) => *change,
            };
            if change.ended {
                state.to_record.push(id);
            }
            result.map(|_| change).map_err(|(refusal, _)| refusal)
        };
        self.notify(id);
        self.save(core, &[id]).await;
        self.tick_matches(core);
        match result {
            Ok(_) => Ok(self.summary(id)),
            Err(refusal) => Err(Error::Conflict(refusal.to_string())),
        }
    }

    fn summary(&self, id: i64) -> Value {
        let state = self.lock();
        match state.matches.get(&id) {
            Some(m) => json!({
                "id": m.id,
                "status": m.status,
                "bot_a": m.participants[0].bot,
                "bot_b": m.participants[1].bot,
            }),
            None => json!({ "id": id }),
        }
    }

    /// Tells `id`'s bots' streams that it changed.
    fn notify(&self, id: i64) {
        let mut state = self.lock();
        state.dirty.insert(id);
        if let Some(m) = state.matches.get(&id) {
            for participant in &m.participants {
                if let Some(channel) = state.channels.get(&participant.bot) {
                    let _ = channel.send(id);
                }
            }
        }
    }

    /// Resumes the matches an earlier process saved and released (or left
    /// when it died), aborts unrated the remote match rows nobody can
    /// resume, then keeps the hall's time until `stop`: every 200 ms, or at
    /// once when woken. At the stop, every match in flight is saved and
    /// released for the next process.
    pub async fn run(self, core: Handles, mut stop: watch::Receiver<bool>) {
        self.begin(&core).await;
        let mut last_auto = 0;
        let mut last_renewal = std::time::Instant::now();
        loop {
            self.follow_database(&core).await;
            if self.is_paused() {
                // Nothing is decided while moves cannot be made.
                tokio::select! {
                    _ = stop.changed() => break,
                    _ = tokio::time::sleep(Duration::from_millis(200)) => {}
                }
                if *stop.borrow() {
                    break;
                }
                continue;
            }
            self.tick_matches(&core);
            self.save_changed(&core).await;
            if last_renewal.elapsed() >= HOLD_RENEWAL {
                last_renewal = std::time::Instant::now();
                self.follow_lead(&core).await;
                if self.is_leading() {
                    self.renew_hold(&core).await;
                    self.take_over(&core).await;
                }
            }
            let now = self.now();
            if self.is_leading() && (now - last_auto >= 1_000 || now < last_auto) {
                last_auto = now;
                if let Err(error) = self.auto_match(&core).await {
                    tracing::debug!(%error, "automatic matching skipped a round");
                }
            }
            tokio::select! {
                _ = stop.changed() => break,
                _ = self.inner.wake.notified() => {}
                _ = tokio::time::sleep(Duration::from_millis(200)) => {}
            }
            if *stop.borrow() {
                break;
            }
        }
        // The process stops: every match in flight is saved as it is now
        // and let go, for the next process to resume.
        let all: Vec<i64> = self.lock().matches.keys().copied().collect();
        self.save(&core, &all).await;
        match store::release(&core.db, &self.inner.id, self.now()).await {
            Ok(released) if released > 0 => {
                tracing::info!(released, "remote matches saved for the next start");
            }
            Ok(_) => {}
            Err(error) => tracing::warn!(%error, "cannot release this hall's remote matches as it stops"),
        }
        if let Err(error) = store::resign(&core.db, &self.inner.id).await {
            tracing::warn!(%error, "cannot give up the agent hall's lead as it stops");
        }
    }

    /// A test's hook: the hall's id, as written in `matches.claimed_by`.
    pub fn id(&self) -> &str {
        &self.inner.id
    }
}

/// Who `agent_challenge` names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Target {
    /// `target_id`.
    Id(i64),
    /// `target_name`.
    Name(String),
}

fn online(state: &HallState, rules: &AgentRules, bot: i64, now: i64) -> bool {
    state
        .presence
        .get(&bot)
        .is_some_and(|p| p.streams > 0 || now - p.last_seen_ms <= rules.online_ms)
}

/// Ends a row that was never played to a result.
async fn close_row(core: &Handles, id: i64, status: &str, why: &str) -> Result<()> {
    sqlx::query(
        "UPDATE matches SET status = $2, finished_ms = $3, error = $4 WHERE id = $1 AND status IN ('pending', 'running')",
    )
    .bind(id)
    .bind(status)
    .bind(now_ms())
    .bind(why)
    .execute(&core.db.pool)
    .await?;
    store::forget(&core.db, id).await?;
    core.events.send(crate::events::Event::MatchFinished {
        id,
        ladder: String::new(),
        status: status.to_owned(),
    });
    Ok(())
}

/// `YYYY-MM-DD HH:MM:SS` (UTC) of Unix milliseconds, as the seed writes
/// `created_at` and `registered_at`.
pub fn datetime(ms: i64) -> String {
    let t = time::OffsetDateTime::from_unix_timestamp(ms.div_euclid(1000)).unwrap_or(time::OffsetDateTime::UNIX_EPOCH);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02}",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn datetimes_are_utc_civil_times() {
        assert_eq!(datetime(0), "1970-01-01 00:00:00");
        assert_eq!(datetime(1_794_474_000_000), "2026-11-12 09:00:00");
        assert_eq!(datetime(951_782_400_000), "2000-02-29 00:00:00");
    }
}
