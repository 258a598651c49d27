//! Games people play against bots from the site: one game (no side
//! swap), never rated, the bot sandboxed on its own fuel clock under its
//! ladder's per-move control, the person on the wall clock they chose.
//!
//! The referee plays the game ([`arbiter_referee::play_game_observed`]) on
//! a blocking thread with the person as one entrant: the person's turn
//! waits for a move sent from the site. A move is checked here first,
//! against the revision it was made on and the legal squares, so a double
//! click or a second tab cannot move twice and an illegal square changes
//! nothing.
//!
//! # Guarantees
//!
//! - Every game is a row of `people_games`, written when it starts and
//!   when it ends; its replay (kind "human" for the person) re-runs the
//!   bot's side byte for byte from the person's recorded moves.
//! - Never rated: no rating row is read or written.
//! - A game this process did not finish (it stopped) is marked `aborted`
//!   at the next start, with a notice; it is never silently lost.
//! - A game belongs to its person: to whoever holds its key (a cookie of
//!   the browser that started it) and, when a signed-in person started it
//!   or claimed it ([`People::claim`]), to their account from any browser
//!   ([`Holder`]). Its page names whose move it is to anyone else.
//! - Per client (a signed-in account, [`account_client`]; a guest's IPv4
//!   address or IPv6 /64, [`crate::quota::client_key`]): at most [`PeopleRules::per_address`]
//!   games at once and [`PeopleRules::per_address_hour`] started per hour;
//!   at most [`PeopleRules::games`] in all, which is the people games'
//!   share of the sandbox ([`crate::budget::Budgets::people`]). Each limit
//!   is taken in one atomic step before the game starts and given back
//!   when its end is written (429 with `Retry-After` beyond them).
//! - A stopping server writes every game it holds as `aborted` before it
//!   exits ([`People::stop_all`]).

pub mod board;
mod person;

use crate::core::Core;
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::quota::{Full, Held, Quota};
use arbiter_games::{FinishReason, Side, Variant};
use arbiter_referee::{Entrant, MatchSettings, Progress, WasmBot, play_game_observed};
use board::{Board, Square};
use person::{Cores, Gated, Person};
use serde::Serialize;
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Instant;
use tokio::sync::watch;

/// The limits on games against people.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PeopleRules {
    /// Games one client (an account, or a guest's address) may play at
    /// once.
    pub per_address: usize,
    /// Games one client may start in an hour.
    pub per_address_hour: i64,
    /// Games the server plays at once.
    pub games: usize,
    /// The longest a person may think over one move, even untimed (then
    /// the game is lost on time), milliseconds.
    pub idle_ms: u64,
    /// How long an ended game stays in memory for its page, milliseconds.
    pub keep_ended_ms: u64,
}

impl Default for PeopleRules {
    /// 2 games at once and 30 an hour per address, 16 in all, 15 minutes
    /// per move at most.
    fn default() -> PeopleRules {
        PeopleRules {
            per_address: 2,
            per_address_hour: 30,
            games: 16,
            idle_ms: 15 * 60 * 1000,
            keep_ended_ms: 10 * 60 * 1000,
        }
    }
}

/// The person's clock: the choices the site offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Clock {
    /// No clock (still at most [`PeopleRules::idle_ms`] per move).
    #[serde(rename = "untimed")]
    Untimed,
    /// 5 minutes for the game.
    #[serde(rename = "5m")]
    FiveMinutes,
    /// 1 minute for the game.
    #[serde(rename = "1m")]
    OneMinute,
}

impl Clock {
    /// Every choice, in the order the site lists them.
    pub const ALL: [Clock; 3] = [Clock::Untimed, Clock::FiveMinutes, Clock::OneMinute];

    /// The clock's milliseconds, `None` untimed.
    pub fn ms(self) -> Option<u64> {
        match self {
            Clock::Untimed => None,
            Clock::FiveMinutes => Some(300_000),
            Clock::OneMinute => Some(60_000),
        }
    }

    /// Its name in forms and the API: `untimed`, `5m`, `1m`.
    pub fn as_str(self) -> &'static str {
        match self {
            Clock::Untimed => "untimed",
            Clock::FiveMinutes => "5m",
            Clock::OneMinute => "1m",
        }
    }

    /// In words.
    pub fn label(self) -> &'static str {
        match self {
            Clock::Untimed => "Untimed",
            Clock::FiveMinutes => "5 minutes",
            Clock::OneMinute => "1 minute",
        }
    }

    /// The clock named `name` ([`Clock::as_str`]).
    pub fn parse(name: &str) -> Option<Clock> {
        Clock::ALL.into_iter().find(|clock| clock.as_str() == name)
    }
}

/// A game to start.
#[derive(Clone, Debug)]
pub struct NewGame {
    /// The bot's name.
    pub bot: String,
    /// Tic-tac-toe or an Othello mode the bot plays.
    pub variant: Variant,
    /// The side the person plays; `None`: drawn at random.
    pub side: Option<Side>,
    /// The person's clock.
    pub clock: Clock,
    /// The person's name (a guest name, or the signed-in user's).
    pub person: String,
    /// The signed-in user, if any.
    pub user_id: Option<i64>,
    /// The client, for the limits: [`account_client`] for a signed-in
    /// person, else the address key ([`crate::quota::client_key`]).
    pub address: String,
    /// Othello from the seeded 12-disc opening ladder matches use, instead
    /// of the start position.
    pub random_opening: bool,
}

/// The client key a signed-in person's games are counted under (instead of
/// their address, so a classroom behind one address is not one client).
pub fn account_client(user_id: i64) -> String {
    format!("account:{user_id}")
}

/// Who asks to act in a game: the key their browser holds (if any) and
/// their signed-in account (if any). Either one that is the game's makes
/// them its person.
#[derive(Clone, Debug, Default)]
pub struct Holder {
    /// The game's key from the browser's cookie.
    pub key: Option<String>,
    /// The signed-in account.
    pub user_id: Option<i64>,
}

/// A started game: its id and the key that lets its person move (kept in
/// the person's cookie; only its hash is kept here).
#[derive(Clone, Debug)]
pub struct Started {
    /// The game's id.
    pub id: i64,
    /// The person's key.
    pub key: String,
}

/// Why a move or a resignation was refused; nothing changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// No such game.
    #[error("no game {0}")]
    NoGame(i64),
    /// The key is not this game's person's.
    #[error("only the person playing this game can move in it")]
    NotYourGame,
    /// The game is over.
    #[error("the game is over")]
    Over,
    /// It is the bot's turn.
    #[error("not_your_turn: it is the bot's turn")]
    NotYourTurn,
    /// The move was made on another position (a double click, a second
    /// tab): the current revision is given.
    #[error("stale_revision: the game is at revision {0}")]
    StaleRevision(u32),
    /// Not a legal square now.
    #[error("illegal_move: {0} is not a legal square")]
    IllegalMove(String),
}

impl Refused {
    /// The short code the API answers with.
    pub fn code(&self) -> &'static str {
        match self {
            Refused::NoGame(_) => "no_game",
            Refused::NotYourGame => "not_your_game",
            Refused::Over => "game_over",
            Refused::NotYourTurn => "not_your_turn",
            Refused::StaleRevision(_) => "stale_revision",
            Refused::IllegalMove(_) => "illegal_move",
        }
    }
}

/// A game as its page and the API show it.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct GameView {
    /// The game's id.
    pub id: i64,
    /// The bot's name.
    pub bot: String,
    /// `tictactoe:standard`, `othello:std`, …
    pub variant: String,
    /// The person's name.
    pub person: String,
    /// The side the person plays: `X`/`O` or `black`/`white`.
    pub person_colour: &'static str,
    /// The side the bot plays.
    pub bot_colour: &'static str,
    /// Whether the person moves first.
    pub person_first: bool,
    /// The person's clock (`untimed`, `5m`, `1m`).
    pub clock: String,
    /// `running`, `finished` or `aborted`.
    pub status: &'static str,
    /// Moves made so far: a move is sent with the revision it was made on.
    pub revision: u32,
    /// Who is to move: `person` or `bot`; `None` when over.
    pub to_move: Option<&'static str>,
    /// The board, top row first.
    pub rows: Vec<Vec<Square>>,
    /// The person's legal squares (when it is their turn).
    pub legal: Vec<String>,
    /// Discs or marks: the person's, the bot's.
    pub counts: [u32; 2],
    /// The person's clock left, milliseconds, when timed.
    pub clock_left_ms: Option<u64>,
    /// The longest the person may take over one move, timed or not
    /// (beyond it the game is lost on time), milliseconds.
    pub move_limit_ms: u64,
    /// What is left of [`GameView::move_limit_ms`] while the person's turn
    /// is open, milliseconds.
    pub move_left_ms: Option<u64>,
    /// The moves in order.
    pub moves: Vec<String>,
    /// `person`, `bot`, or `draw` when finished.
    pub result: Option<&'static str>,
    /// Why it ended (`line`, `discs`, `timeout`, `resigned`, …).
    pub reason: Option<String>,
    /// A notice for the person (why a game was aborted).
    pub notice: Option<String>,
}

/// A person's games against a bot, in numbers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Games the bot won.
    pub wins: i64,
    /// Games drawn.
    pub draws: i64,
    /// Games the bot lost.
    pub losses: i64,
}

/// The notice of a game the server stopped during.
pub const ABORTED_NOTICE: &str =
    "The server restarted during this game, so it was aborted. It is not counted anywhere.";

/// What a game is, live or stored: who plays what.
struct Head {
    id: i64,
    bot: String,
    variant: Variant,
    person: String,
    person_side: Side,
    clock: Clock,
}

impl Head {
    /// The view of this game at `board` after `moves`, as an ended game
    /// shows it (nobody to move, no legal square, no clock, no result):
    /// the caller fills in what it knows besides.
    fn view(&self, board: &Board, moves: Vec<String>, status: &'static str, move_limit_ms: u64) -> GameView {
        let counts = board.counts();
        GameView {
            id: self.id,
            bot: self.bot.clone(),
            variant: self.variant.to_string(),
            person: self.person.clone(),
            person_colour: board.side_name(self.person_side),
            bot_colour: board.side_name(self.person_side.other()),
            person_first: self.person_side == Side::First,
            clock: self.clock.as_str().to_owned(),
            status,
            revision: u32::try_from(moves.len()).unwrap_or(u32::MAX),
            to_move: None,
            rows: board.rows(),
            legal: Vec::new(),
            counts: [
                counts[self.person_side.index()],
                counts[self.person_side.other().index()],
            ],
            clock_left_ms: None,
            move_limit_ms,
            move_left_ms: None,
            moves,
            result: None,
            reason: None,
            notice: None,
        }
    }
}

/// A live game.
struct Live {
    head: Head,
    /// The stored form of the person's key ([`crate::auth::secret_hash`]).
    key_hash: String,
    idle_ms: u64,
    state: Mutex<LiveState>,
    /// Wakes the person's turn (a move, a resignation, a stop).
    wake: Condvar,
    /// Counts every change (a move, the person's turn opening, the end),
    /// for pages that wait for one.
    changes: watch::Sender<u64>,
}

struct LiveState {
    board: Board,
    /// The account the game belongs to, if any (set at the start, or when
    /// a guest claims it).
    user_id: Option<i64>,
    /// Every move accepted, in order: their number is the revision.
    moves: Vec<String>,
    waiting: bool,
    reply: Option<String>,
    clock_left_ms: Option<u64>,
    turn_started: Option<Instant>,
    resigned: bool,
    stopping: bool,
    ended: Option<Ended>,
}

#[derive(Clone, Debug)]
struct Ended {
    status: &'static str,
    result: Option<&'static str>,
    reason: String,
    notice: Option<String>,
    at: Instant,
}

impl Live {
    fn lock(&self) -> MutexGuard<'_, LiveState> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tells waiting pages that the game changed.
    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    /// The moves so far: the revision a move is made on.
    fn revision(state: &LiveState) -> u32 {
        u32::try_from(state.moves.len()).unwrap_or(u32::MAX)
    }

    /// Whether `key` is this game's person's.
    fn is_key(&self, key: &str) -> bool {
        crate::auth::same_secret(&self.key_hash, &crate::auth::secret_hash(key))
    }

    /// Whether `holder` holds this game's key or is its account.
    fn is_person(&self, holder: &Holder) -> bool {
        holder.key.as_deref().is_some_and(|key| self.is_key(key))
            || holder.user_id.is_some_and(|user| self.lock().user_id == Some(user))
    }

    fn view(&self) -> GameView {
        let state = self.lock();
        let head = &self.head;
        let mut view = head.view(&state.board, state.moves.clone(), "running", self.idle_ms);
        let to_move = state.board.to_move();
        let person_to_move = state.ended.is_none() && state.waiting && to_move == Some(head.person_side);
        if let Some(ended) = &state.ended {
            view.status = ended.status;
            view.result = ended.result;
            view.reason = Some(ended.reason.clone());
            view.notice = ended.notice.clone();
        } else {
            view.to_move = to_move.map(|side| if side == head.person_side { "person" } else { "bot" });
        }
        if person_to_move {
            view.legal = state.board.legal();
        }
        let thought = match (person_to_move, state.turn_started) {
            (true, Some(started)) => Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
            _ => None,
        };
        view.clock_left_ms = state
            .clock_left_ms
            .map(|left| left.saturating_sub(thought.unwrap_or(0)));
        view.move_left_ms = thought.map(|spent| self.idle_ms.saturating_sub(spent));
        view
    }
}

/// The games people are playing in this process (cheap to clone; clones
/// share them).
#[derive(Clone)]
pub struct People {
    inner: Arc<Inner>,
}

struct Inner {
    rules: PeopleRules,
    games: Mutex<HashMap<i64, Arc<Live>>>,
    cores: Arc<Cores>,
    /// Games being played, per client and in all: a place is taken before
    /// anything else is done for a new game and held until it is recorded.
    places: Quota,
    /// Waits on `/play/{id}/state`, per client and in all.
    waits: Quota,
}

/// Long-polls of game pages one client may hold at once.
pub const WAITS_PER_CLIENT: usize = 8;
/// Long-polls of game pages the server holds at once.
pub const WAITS_IN_ALL: usize = 512;

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People")
            .field("rules", &self.inner.rules)
            .finish_non_exhaustive()
    }
}

impl Default for People {
    fn default() -> People {
        People::new(PeopleRules::default())
    }
}

impl People {
    /// No games yet, with `rules`.
    pub fn new(rules: PeopleRules) -> People {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        People {
            inner: Arc::new(Inner {
                rules,
                games: Mutex::new(HashMap::new()),
                cores: Arc::new(Cores::new(cores)),
                places: Quota::new(rules.per_address, rules.games),
                waits: Quota::new(WAITS_PER_CLIENT, WAITS_IN_ALL),
            }),
        }
    }

    fn games(&self) -> MutexGuard<'_, HashMap<i64, Arc<Live>>> {
        self.inner.games.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn live(&self, id: i64) -> Option<Arc<Live>> {
        self.games().get(&id).cloned()
    }

    /// Marks the games an earlier process left running as aborted, with
    /// the notice; returns how many. Call once at start.
    pub async fn abort_left_over(core: &crate::handles::Handles) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE people_games SET status = 'aborted', reason = 'server_restart', finished_ms = $1 \
             WHERE status = 'running'",
        )
        .bind(now_ms())
        .execute(&core.db.pool)
        .await?;
        Ok(done.rows_affected())
    }

    /// Starts a game: the bot must be active, sandboxed, play the variant
    /// and allow games against people; the address must be within its
    /// limits.
    pub async fn start(&self, core: &Core, new: NewGame) -> Result<Started> {
        let rules = self.inner.rules;
        let variant = new.variant;
        if variant.is_tick_based() {
            return Err(Error::Invalid(
                "games against people are tic-tac-toe or Othello".to_owned(),
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
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO people_games (version_id, variant, person, user_id, person_side, clock_ms, seed, \
               random_opening, status, created_ms, key_hash) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'running', $9, $10) RETURNING id",
        )
        .bind(version_id)
        .bind(variant.to_string())
        .bind(&person)
        .bind(new.user_id)
        .bind(i64::from(u8::from(person_side)))
        .bind(new.clock.ms().map(|ms| ms as i64))
        .bind(seed as i64)
        .bind(i64::from(new.random_opening))
        .bind(now_ms())
        .bind(&key_hash)
        .fetch_one(&core.db.pool)
        .await?;

        let live = Arc::new(Live {
            head: Head {
                id,
                bot,
                variant,
                person,
                person_side,
                clock: new.clock,
            },
            key_hash: key_hash.clone(),
            idle_ms: rules.idle_ms,
            state: Mutex::new(LiveState {
                board,
                user_id: new.user_id,
                moves: Vec::new(),
                waiting: false,
                reply: None,
                clock_left_ms: new.clock.ms(),
                turn_started: None,
                resigned: false,
                stopping: false,
                ended: None,
            }),
            wake: Condvar::new(),
            changes: watch::channel(0).0,
        });
        self.games().insert(id, live.clone());

        let mut settings = MatchSettings::new(variant, seed);
        settings.match_id = u64::try_from(id).unwrap_or_default();
        settings.budget = time.budget();
        settings.fuel_per_ms = Some(time.fuel_per_ms);
        settings.standard_opening = !new.random_opening;
        let (people, core2) = (self.clone(), core.clone());
        // The game on a blocking thread; its end is written from here, on
        // the runtime, which a stopping server waits for (`stop_all`).
        tokio::spawn(async move {
            let playing = {
                let (people, core, live) = (people.clone(), core2.clone(), live.clone());
                tokio::task::spawn_blocking(move || play(&core, &people, &live, &settings, &sha256))
            };
            let outcome = playing
                .await
                .unwrap_or_else(|e| Err(format!("the game's thread failed: {e}")));
            people.finish(&core2, &live, outcome).await;
            drop(place);
        });
        Ok(Started { id, key })
    }

    /// The game `id` as its page shows it: live from memory, or ended from
    /// its row and replay.
    pub async fn view(&self, core: &Core, id: i64) -> Result<Option<GameView>> {
        if let Some(live) = self.live(id) {
            return Ok(Some(live.view()));
        }
        stored_view(core, id, self.inner.rules.idle_ms).await
    }

    /// Game `id`'s change counter, while it is in memory: it moves on
    /// every move, when the person's turn opens and when the game ends.
    pub fn watch(&self, id: i64) -> Option<watch::Receiver<u64>> {
        self.live(id).map(|live| live.changes.subscribe())
    }

    /// A place for `client` to wait on a game's changes (a long-poll), held
    /// while the wait lasts: at most [`WAITS_PER_CLIENT`] per client and
    /// [`WAITS_IN_ALL`] in all, else [`Error::RateLimited`].
    pub fn wait_place(&self, client: &str) -> Result<Held> {
        self.inner.waits.take(client).map_err(|full| Error::RateLimited {
            message: match full {
                Full::Key(n) => format!("at most {n} waiting game pages at once from one address"),
                Full::Total(_) => "too many waiting game pages on this server: try again shortly".to_owned(),
            },
            retry_after_s: 5,
        })
    }

    /// The limits games are played under.
    pub fn rules(&self) -> PeopleRules {
        self.inner.rules
    }

    /// Games being played now, and the most there may be.
    pub fn playing(&self) -> (usize, usize) {
        (self.inner.places.held(), self.inner.places.total())
    }

    /// Whether `holder` is the person of game `id` while it is played:
    /// they hold its key, or it belongs to their account.
    pub fn is_person(&self, id: i64, holder: &Holder) -> bool {
        self.live(id).is_some_and(|live| live.is_person(holder))
    }

    /// Whether `holder` is game `id`'s person, live or ended: they hold
    /// its key, or it belongs to their account.
    pub async fn belongs(&self, core: &Core, id: i64, holder: &Holder) -> Result<bool> {
        if let Some(live) = self.live(id) {
            return Ok(live.is_person(holder));
        }
        let stored: Option<(Option<String>, Option<i64>)> =
            sqlx::query_as("SELECT key_hash, user_id FROM people_games WHERE id = $1")
                .bind(id)
                .fetch_optional(&core.db.pool)
                .await?;
        let Some((hash, owner)) = stored else {
            return Ok(false);
        };
        let by_key = match (hash, holder.key.as_deref()) {
            (Some(hash), Some(key)) => crate::auth::same_secret(&hash, &crate::auth::secret_hash(key)),
            _ => false,
        };
        Ok(by_key || (owner.is_some() && owner == holder.user_id))
    }

    /// Gives the game `id` whose key `key` is to account `user_id`, if it
    /// belongs to no account yet (a guest who signed in); the game may be
    /// running or over. Returns whether it now belongs to `user_id`.
    pub async fn claim(&self, core: &Core, id: i64, key: &str, user_id: i64) -> Result<bool> {
        if let Some(live) = self.live(id) {
            if !live.is_key(key) {
                return Ok(false);
            }
            let mut state = live.lock();
            match state.user_id {
                Some(owner) => return Ok(owner == user_id),
                None => state.user_id = Some(user_id),
            }
        }
        let hash = crate::auth::secret_hash(key);
        let stored: Option<(Option<String>, Option<i64>)> =
            sqlx::query_as("SELECT key_hash, user_id FROM people_games WHERE id = $1")
                .bind(id)
                .fetch_optional(&core.db.pool)
                .await?;
        let Some((Some(stored_hash), owner)) = stored else {
            return Ok(false);
        };
        if !crate::auth::same_secret(&stored_hash, &hash) {
            return Ok(false);
        }
        if let Some(owner) = owner {
            return Ok(owner == user_id);
        }
        let done = sqlx::query("UPDATE people_games SET user_id = $1 WHERE id = $2 AND user_id IS NULL")
            .bind(user_id)
            .bind(id)
            .execute(&core.db.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Game `id`, if `holder` is its person.
    fn person_game(&self, id: i64, holder: &Holder) -> std::result::Result<Arc<Live>, Refused> {
        let live = self.live(id).ok_or(Refused::NoGame(id))?;
        if !live.is_person(holder) {
            return Err(Refused::NotYourGame);
        }
        Ok(live)
    }

    /// Plays `square` for the person `holder`, on the position of
    /// `revision`. Returns the new revision.
    pub fn play_move(
        &self,
        id: i64,
        holder: &Holder,
        revision: u32,
        square: &str,
    ) -> std::result::Result<u32, Refused> {
        let live = self.person_game(id, holder)?;
        let mut state = live.lock();
        if state.ended.is_some() {
            return Err(Refused::Over);
        }
        if revision != Live::revision(&state) {
            return Err(Refused::StaleRevision(Live::revision(&state)));
        }
        if !state.waiting || state.reply.is_some() {
            return Err(Refused::NotYourTurn);
        }
        let line = state
            .board
            .reply_for(square)
            .ok_or_else(|| Refused::IllegalMove(square.chars().take(16).collect()))?;
        let name = square.trim().to_ascii_lowercase();
        state.board.apply(&name);
        state.moves.push(name);
        state.waiting = false;
        state.reply = Some(line);
        let revision = Live::revision(&state);
        drop(state);
        live.wake.notify_all();
        live.changed();
        Ok(revision)
    }

    /// Resigns game `id` for the person `holder` (on their turn or the
    /// bot's: the game ends at the person's next turn, at once when it is
    /// theirs).
    pub fn resign(&self, id: i64, holder: &Holder) -> std::result::Result<(), Refused> {
        let live = self.person_game(id, holder)?;
        let mut state = live.lock();
        if state.ended.is_some() {
            return Err(Refused::Over);
        }
        state.resigned = true;
        drop(state);
        live.wake.notify_all();
        Ok(())
    }

    /// Ends every live game as the server stops: each becomes `aborted`
    /// (written by its own task; [`People::written`] waits for them).
    pub fn stop_all(&self) {
        for live in self.games().values() {
            live.lock().stopping = true;
            live.wake.notify_all();
        }
    }

    /// Waits (at most `within`) until every game being played has its end
    /// written; returns how many were still unwritten then.
    pub async fn written(&self, within: std::time::Duration) -> usize {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = self.inner.places.held();
            if left == 0 || tokio::time::Instant::now() >= deadline {
                return left;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// Games ended long enough ago leave memory (their page reads the row).
    fn sweep(&self) {
        let keep = std::time::Duration::from_millis(self.inner.rules.keep_ended_ms);
        self.games()
            .retain(|_, live| live.lock().ended.as_ref().is_none_or(|e| e.at.elapsed() < keep));
    }

    /// Records how game `live` ended.
    async fn finish(&self, core: &Core, live: &Live, outcome: std::result::Result<Finished, String>) {
        let ended = match outcome {
            Ok(finished) => {
                let result = match finished.winner {
                    Some(side) if side == live.head.person_side => Some("person"),
                    Some(_) => Some("bot"),
                    None => None,
                };
                let written = record(core, live.head.id, result, &finished).await;
                if let Err(error) = written {
                    tracing::warn!(id = live.head.id, %error, "cannot record the game against a person");
                }
                Ended {
                    status: "finished",
                    result: Some(result.unwrap_or("draw")),
                    reason: finished.reason.as_str().to_owned(),
                    notice: None,
                    at: Instant::now(),
                }
            }
            Err(why) => {
                tracing::warn!(id = live.head.id, %why, "a game against a person was aborted");
                let stopping = live.lock().stopping;
                let (reason, notice) = if stopping {
                    ("server_restart", ABORTED_NOTICE.to_owned())
                } else {
                    (
                        "host_failure",
                        format!("The server could not run the bot, so the game was aborted: {why}"),
                    )
                };
                let written = sqlx::query(
                    "UPDATE people_games SET status = 'aborted', reason = $1, finished_ms = $2 WHERE id = $3",
                )
                .bind(reason)
                .bind(now_ms())
                .bind(live.head.id)
                .execute(&core.db.pool)
                .await;
                if let Err(error) = written {
                    tracing::warn!(id = live.head.id, %error, "cannot mark the game against a person aborted");
                }
                Ended {
                    status: "aborted",
                    result: None,
                    reason: reason.to_owned(),
                    notice: Some(notice),
                    at: Instant::now(),
                }
            }
        };
        live.lock().ended = Some(ended);
        live.changed();
        self.sweep();
    }
}

/// A played game, ready to record.
struct Finished {
    winner: Option<Side>,
    reason: FinishReason,
    replay: Vec<u8>,
    stderr: String,
}

/// Plays game `live` through the referee (blocking).
fn play(
    core: &Core,
    people: &People,
    live: &Arc<Live>,
    settings: &MatchSettings,
    sha256: &str,
) -> std::result::Result<Finished, String> {
    let module = core.load_module(sha256)?;
    let bot = Gated {
        bot: Box::new(WasmBot::new(core.sandbox.clone(), module, live.head.bot.clone())),
        cores: people.inner.cores.clone(),
    };
    let person = Person { live: live.clone() };
    let entrants: [&dyn Entrant; 2] = [&person, &bot];
    // Participant 0 is the person.
    let sides = if live.head.person_side == Side::First {
        [0, 1]
    } else {
        [1, 0]
    };
    let bot_side = live.head.person_side.other();
    let mut observe = |_game: u8, progress: Progress<'_>| {
        if let Progress::Turn(turn) = progress
            && turn.side == bot_side
        {
            let mut state = live.lock();
            let LiveState { board, moves, .. } = &mut *state;
            if board.play_turn(turn, moves) {
                drop(state);
                live.changed();
            }
        }
    };
    let played = play_game_observed(settings, entrants, sides, &mut observe).map_err(|e| e.to_string())?;
    let game = played
        .replay
        .games
        .first()
        .ok_or_else(|| "the referee played no game".to_owned())?;
    let winner = played.replay.result.winner.map(|participant| {
        // Participant 0 (the person) plays `live.head.person_side`.
        if participant == 0 {
            live.head.person_side
        } else {
            bot_side
        }
    });
    let stderr = String::from_utf8_lossy(&played.logs[1][0]).into_owned();
    Ok(Finished {
        winner,
        reason: game.reason,
        replay: played.replay.to_json(),
        stderr,
    })
}

/// Writes an ended game's result, replay and the bot's stderr.
async fn record(core: &Core, id: i64, winner: Option<&str>, finished: &Finished) -> Result<()> {
    let json = finished.replay.clone();
    let stored = core
        .blobs
        .run(move |blobs| crate::replays::prepare(blobs, &json))
        .await
        .map_err(|e| Error::Host(format!("cannot store the replay: {e}")))?;
    let mut tx = core.db.begin_write().await?;
    crate::replays::insert(&mut *tx, &stored).await?;
    sqlx::query(
        "UPDATE people_games SET status = 'finished', winner = $1, reason = $2, replay_sha256 = $3, stderr = $4, \
           finished_ms = $5 WHERE id = $6",
    )
    .bind(winner)
    .bind(finished.reason.as_str())
    .bind(&stored.sha256)
    .bind(&finished.stderr)
    .bind(now_ms())
    .bind(id)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}

/// A `people_games` row as a page reads it.
#[derive(sqlx::FromRow)]
struct StoredGame {
    bot: String,
    variant: String,
    person: String,
    person_side: i64,
    clock_ms: Option<i64>,
    seed: i64,
    random_opening: i64,
    status: String,
    winner: Option<String>,
    reason: Option<String>,
    replay_sha256: Option<String>,
}

/// Game `id` from its row (and replay, for the board), once it has left
/// memory.
async fn stored_view(core: &Core, id: i64, move_limit_ms: u64) -> Result<Option<GameView>> {
    let row: Option<StoredGame> = sqlx::query_as(
        "SELECT b.name AS bot, p.variant, p.person, p.person_side, p.clock_ms, p.seed, p.random_opening, p.status, \
           p.winner, p.reason, p.replay_sha256 \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE p.id = $1",
    )
    .bind(id)
    .fetch_optional(&core.db.pool)
    .await?;
    let Some(StoredGame {
        bot,
        variant,
        person,
        person_side: side,
        clock_ms,
        seed,
        random_opening,
        status,
        winner,
        reason,
        replay_sha256: replay,
    }) = row
    else {
        return Ok(None);
    };
    let Ok(parsed) = variant.parse::<Variant>() else {
        return Ok(None);
    };
    let Some(mut board) = Board::start(parsed, seed as u64, random_opening != 0) else {
        return Ok(None);
    };
    let mut moves = Vec::new();
    if let Some(key) = replay
        && let Some(json) = crate::replays::read(&core.db, &core.blobs, &key).await?
        && let Ok(replay) = arbiter_referee::Replay::from_json(&json)
        && let Some(game) = replay.games.first()
    {
        for turn in &game.turns {
            board.play_turn(turn, &mut moves);
        }
    }
    let head = Head {
        id,
        bot,
        variant: parsed,
        person,
        person_side: if side == 0 { Side::First } else { Side::Second },
        clock: Clock::ALL
            .into_iter()
            .find(|c| c.ms().map(|ms| ms as i64) == clock_ms)
            .unwrap_or(Clock::Untimed),
    };
    let status = match status.as_str() {
        "finished" => "finished",
        "running" => "running",
        _ => "aborted",
    };
    let mut view = head.view(&board, moves, status, move_limit_ms);
    view.result = match (status, winner.as_deref()) {
        ("finished", Some("person")) => Some("person"),
        ("finished", Some("bot")) => Some("bot"),
        ("finished", _) => Some("draw"),
        _ => None,
    };
    view.notice = (status == "aborted").then(|| match reason.as_deref() {
        Some("server_restart") | None => ABORTED_NOTICE.to_owned(),
        Some(other) => format!("The game was aborted ({other})."),
    });
    view.reason = reason;
    Ok(Some(view))
}

/// A bot's finished games against people, counted from the bot's side.
pub async fn tally_of_bot(db: &crate::db::Db, bot: &str) -> Result<Tally> {
    let (wins, draws, losses): (Option<i64>, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT SUM(CASE WHEN p.winner = 'bot' THEN 1 ELSE 0 END), \
                SUM(CASE WHEN p.winner IS NULL THEN 1 ELSE 0 END), \
                SUM(CASE WHEN p.winner = 'person' THEN 1 ELSE 0 END) \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE b.name_key = $1 AND p.status = 'finished'",
    )
    .bind(bot.to_lowercase())
    .fetch_one(&db.pool)
    .await?;
    Ok(Tally {
        wins: wins.unwrap_or(0),
        draws: draws.unwrap_or(0),
        losses: losses.unwrap_or(0),
    })
}

/// Whose games [`list`] lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose<'a> {
    /// The games that belong to account `0` (started signed in, or claimed).
    Account(i64),
    /// The games against the bot of this name (any of its versions).
    Bot(&'a str),
}

/// One game in a list of people games ([`list`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct GameRow {
    /// The game's id (its page is `/play/{id}`).
    pub id: i64,
    /// The bot's name.
    pub bot: String,
    /// Its variant (`tictactoe:standard`, `othello:std`, …).
    pub variant: String,
    /// The person's name as the game shows it.
    pub person: String,
    /// The account it belongs to (its user page's name), if any and not
    /// deleted.
    pub account: Option<String>,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// `person`, `bot`, or `None` (a draw, unfinished or aborted).
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it started (Unix ms).
    pub created_ms: i64,
    /// When it ended (Unix ms), if it has.
    pub finished_ms: Option<i64>,
}

/// The latest `limit` people games of `whose`: the running ones first,
/// then the ended ones, newest first within each. Retired bots' games are
/// listed too (they happened).
pub async fn list(db: &crate::db::Db, whose: Whose<'_>, limit: i64) -> Result<Vec<GameRow>> {
    const SELECT: &str = "SELECT p.id, b.name AS bot, p.variant, p.person, u.name AS account, p.status, p.winner, \
           p.reason, p.created_ms, p.finished_ms \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         LEFT JOIN users u ON u.id = p.user_id";
    const ORDER: &str = "ORDER BY CASE WHEN p.status = 'running' THEN 0 ELSE 1 END, p.id DESC LIMIT $2";
    let query = match whose {
        Whose::Account(user_id) => {
            sqlx::query_as::<_, GameRow>(sqlx::AssertSqlSafe(format!("{SELECT} WHERE p.user_id = $1 {ORDER}")))
                .bind(user_id)
        }
        Whose::Bot(name) => {
            sqlx::query_as::<_, GameRow>(sqlx::AssertSqlSafe(format!("{SELECT} WHERE b.name_key = $1 {ORDER}")))
                .bind(name.to_lowercase())
        }
    };
    let mut games = query.bind(limit).fetch_all(&db.pool).await?;
    for game in &mut games {
        // A deleted account has no page.
        game.account = game.account.take().filter(|name| name != crate::accounts::DELETED_NAME);
    }
    Ok(games)
}

/// A bot people may play now: its name, and the ladders (variants) it
/// plays that a person can play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlayableBot {
    /// The bot's name (its choice page is `/bots/{name}/play`).
    pub bot: String,
    /// Tic-tac-toe and the Othello modes it plays, sorted.
    pub variants: Vec<String>,
}

/// Every bot people may play now (its owner allows it, and its active
/// version runs sandboxed on a board game's ladder), by name.
pub async fn playable_bots(core: &Core) -> Result<Vec<PlayableBot>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT DISTINCT b.name, vl.ladder FROM bots b \
         JOIN versions v ON v.bot_id = b.id AND v.status = 'active' AND v.remote_url IS NULL AND v.agent = 0 \
         JOIN version_ladders vl ON vl.version_id = v.id \
         WHERE b.retired = 0 AND b.people_play <> 0 \
         ORDER BY b.name, vl.ladder",
    )
    .fetch_all(&core.db.pool)
    .await?;
    let mut bots: Vec<PlayableBot> = Vec::new();
    for (bot, ladder) in rows {
        let Ok(variant) = ladder.parse::<Variant>() else {
            continue;
        };
        if variant.is_tick_based() {
            continue;
        }
        match bots.last_mut() {
            Some(last) if last.bot == bot => last.variants.push(ladder),
            _ => bots.push(PlayableBot {
                bot,
                variants: vec![ladder],
            }),
        }
    }
    Ok(bots)
}

/// The replay JSON of ended game `id`, if it has one.
pub async fn replay(core: &Core, id: i64) -> Result<Option<Vec<u8>>> {
    let key: Option<Option<String>> = sqlx::query_scalar("SELECT replay_sha256 FROM people_games WHERE id = $1")
        .bind(id)
        .fetch_optional(&core.db.pool)
        .await?;
    match key.flatten() {
        Some(key) => crate::replays::read(&core.db, &core.blobs, &key).await,
        None => Ok(None),
    }
}

/// The bot's stderr in game `id`, for the bot's owner `user_id` only.
pub async fn stderr_for_owner(core: &Core, id: i64, user_id: i64) -> Result<Option<String>> {
    let row: Option<Option<String>> = sqlx::query_scalar(
        "SELECT p.stderr FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE p.id = $1 AND b.owner_id = $2",
    )
    .bind(id)
    .bind(user_id)
    .fetch_optional(&core.db.pool)
    .await?;
    Ok(row.map(Option::unwrap_or_default))
}

/// What a person may play against a bot: its name as registered, the
/// variants its active sandboxed version plays (skirmish left out), and
/// whether its owner allows games against people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Playable {
    /// The bot's name.
    pub bot: String,
    /// Tic-tac-toe and the Othello modes it plays.
    pub variants: Vec<Variant>,
    /// The owner's consent.
    pub allowed: bool,
}

/// What a person may play against `bot`; `None` if there is no such bot.
pub async fn playable(core: &Core, bot: &str) -> Result<Option<Playable>> {
    let rows: Vec<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT b.name, b.people_play, vl.ladder FROM bots b \
         LEFT JOIN versions v ON v.bot_id = b.id AND v.status = 'active' AND v.remote_url IS NULL AND v.agent = 0 \
         LEFT JOIN version_ladders vl ON vl.version_id = v.id \
         WHERE b.name_key = $1 AND b.retired = 0",
    )
    .bind(bot.to_lowercase())
    .fetch_all(&core.db.pool)
    .await?;
    let Some((name, allowed, _)) = rows.first().cloned() else {
        return Ok(None);
    };
    let mut variants: Vec<Variant> = rows
        .iter()
        .filter_map(|(_, _, ladder)| ladder.as_deref()?.parse::<Variant>().ok())
        .filter(|variant| !variant.is_tick_based())
        .collect();
    variants.sort_by_key(|variant| variant.to_string());
    variants.dedup();
    Ok(Some(Playable {
        bot: name,
        variants,
        allowed: allowed != 0,
    }))
}

/// Characters a guest name may not hold: bidirectional controls (which can
/// make a name read as another) and invisible ones (zero-width spaces and
/// joiners, word joiners, the byte-order mark, the soft hyphen).
fn hidden_or_bidi(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{3164}' | '\u{FE00}'..='\u{FE0F}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FFF9}'..='\u{FFFB}' | '\u{1D173}'..='\u{1D17A}' | '\u{E0000}'..='\u{E0FFF}')
}

/// The longest guest name, in characters (the " (guest)" the site adds is
/// not counted).
pub const MAX_GUEST_NAME_CHARS: usize = 32;

/// A guest's name, trimmed (empty: "Guest"), or why it is refused: longer
/// than [`MAX_GUEST_NAME_CHARS`], or holding control, bidirectional or
/// invisible characters.
pub fn check_guest_name(name: &str) -> Result<String> {
    let name = name.trim();
    if name.is_empty() {
        return Ok("Guest".to_owned());
    }
    let chars = name.chars().count();
    if chars > MAX_GUEST_NAME_CHARS {
        return Err(Error::Invalid(format!(
            "a guest name is at most {MAX_GUEST_NAME_CHARS} characters; this one has {chars}"
        )));
    }
    if name.chars().any(|c| c.is_control() || hidden_or_bidi(c)) {
        return Err(Error::Invalid(
            "a guest name may not hold control, invisible or text-direction characters".to_owned(),
        ));
    }
    Ok(name.to_owned())
}

#[cfg(test)]
mod name_tests {
    use super::*;

    #[test]
    fn guest_names_are_bounded_on_the_name_alone_and_free_of_hidden_characters() {
        assert_eq!(check_guest_name("  ").expect("empty is Guest"), "Guest");
        let longest = "x".repeat(MAX_GUEST_NAME_CHARS);
        assert_eq!(check_guest_name(&longest).expect("32 characters pass"), longest);
        assert!(check_guest_name(&"x".repeat(MAX_GUEST_NAME_CHARS + 1)).is_err());
        assert_eq!(check_guest_name("Zoë 🦊").expect("letters and emoji pass"), "Zoë 🦊");
        for bad in [
            "abc\u{202E}cba",
            "\u{200B}",
            "\u{200B}\u{200C}\u{2060}",
            "a\u{2066}b",
            "a\u{FEFF}",
            "a\nb",
        ] {
            assert!(check_guest_name(bad).is_err(), "{bad:?} must be refused");
        }
    }
}
