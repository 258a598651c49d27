//! Games people play against bots from the site: one game (no side
//! swap), never rated, the bot sandboxed on its own fuel clock under its
//! ladder's per-move control, the person on the wall clock they chose.
//!
//! The referee plays the game ([`arbiter_referee::play_game_observed`]) on
//! a blocking thread with the person as one entrant (`game`): the
//! person's turn waits for a move sent from the site. A move is checked
//! here first (`moves`), against the revision it was made on and the
//! legal squares, so a double click or a second tab cannot move twice and
//! an illegal square changes nothing.
//!
//! The parts, by job: `start` starts games and resumes the ones no
//! process holds, `live` is a game's state in memory and its view,
//! `moves` the person's moves and resignations, `game` the referee's
//! thread and the end's record, [`store`] the rows that carry a game
//! across a restart, [`records`] the pages' queries, [`names`] guest names.
//! Every part takes the [`Handles`] it uses, never the whole core.
//!
//! # Guarantees
//!
//! - Every game is a row of `people_games`, written when it starts, at
//!   every move of the person (before the move is acknowledged: every
//!   move so far, the person's clock left) and when it ends; its replay
//!   (kind "human" for the person) re-runs the bot's side byte for byte
//!   from the person's recorded moves.
//! - Restarts lose nothing. A game is held by one process at a time
//!   under a lease ([`store::LEASE_MS`]). A stopping server releases its
//!   games ([`People::stop_all`]): their clocks stop, as no process holds
//!   them. The process that leads next resumes every released game (and
//!   one whose holder died, once its lease ran out): the referee plays it
//!   again from its seed with the same module and settings, the person's
//!   moves answered from the saved list, and the bot's replayed moves
//!   checked against the saved ones (a game whose bot plays otherwise is
//!   aborted with that reason), then the game goes on live. Its final
//!   replay is the one an uninterrupted game with the same moves gives.
//! - Never rated: no rating row is read or written.
//! - A game belongs to its person: to whoever holds its key (a cookie of
//!   the browser that started it) and, when a signed-in person started it
//!   or claimed it ([`People::claim`]), to their account from any browser
//!   ([`Holder`]). Its page names whose move it is to anyone else.
//! - Per client (a signed-in account, [`account_client`]; a guest's IPv4
//!   address or IPv6 /64, [`crate::quota::client_key`]): at most [`PeopleRules::per_address`]
//!   games at once and [`PeopleRules::per_address_hour`] started per hour;
//!   at most [`PeopleRules::games`] in all, which is the people games'
//!   share of the sandbox ([`crate::budget::Budgets::people`]). Each limit
//!   is taken in one atomic step before the game starts (or resumes) and
//!   given back when its end (or its release) is written (429 with
//!   `Retry-After` beyond them).

pub mod board;
mod game;
mod live;
mod moves;
pub mod names;
mod person;
pub mod records;
mod start;
pub mod store;

pub use names::{MAX_GUEST_NAME_CHARS, check_guest_name};
pub use records::{
    GameRow, Playable, PlayableBot, Whose, list, playable, playable_bots, replay, stderr_for_owner, tally_of_bot,
};

use crate::error::{Error, Result};
use crate::handles::Handles;
use crate::quota::{Full, Held, Quota};
use arbiter_games::{Side, Variant};
use board::Square;
use live::Live;
use person::Cpus;
use serde::Serialize;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
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
    /// The game cannot take a move in this process now: the server is
    /// stopping (the next one resumes the game), or the move could not be
    /// saved. Trying again shortly is right.
    #[error("unavailable: {0}")]
    Unavailable(String),
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
            Refused::Unavailable(_) => "unavailable",
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

/// The notice of a game the server stopped during that could not be
/// resumed (a row from before games were saved at every move).
pub const ABORTED_NOTICE: &str =
    "The server restarted during this game, so it was aborted. It is not counted anywhere.";

/// The games people are playing in this process (cheap to clone; clones
/// share them).
#[derive(Clone)]
pub struct People {
    inner: Arc<Inner>,
}

struct Inner {
    /// This process's name on the games it holds (`people_games.hall`).
    id: String,
    rules: PeopleRules,
    games: Mutex<HashMap<i64, Arc<Live>>>,
    cores: Arc<Cpus>,
    /// Games being played, per client and in all: a place is taken before
    /// anything else is done for a new (or resumed) game and held until
    /// its end or its release is written.
    places: Quota,
    /// Waits on `/play/{id}/state`, per client and in all.
    waits: Quota,
    /// Set by [`People::stop_all`]: no game starts or resumes here any more.
    closed: AtomicBool,
}

/// Long-polls of game pages one client may hold at once.
pub const WAITS_PER_CLIENT: usize = 8;
/// Long-polls of game pages the server holds at once.
pub const WAITS_IN_ALL: usize = 512;

impl std::fmt::Debug for People {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("People")
            .field("id", &self.inner.id)
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
        let mut random = [0u8; 8];
        let _ = getrandom::fill(&mut random);
        People {
            inner: Arc::new(Inner {
                id: format!("people-{}-{:016x}", std::process::id(), u64::from_le_bytes(random)),
                rules,
                games: Mutex::new(HashMap::new()),
                cores: Arc::new(Cpus::new(cores)),
                places: Quota::new(rules.per_address, rules.games),
                waits: Quota::new(WAITS_PER_CLIENT, WAITS_IN_ALL),
                closed: AtomicBool::new(false),
            }),
        }
    }

    /// This process's name on the games it holds (`people_games.hall`).
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    fn games(&self) -> MutexGuard<'_, HashMap<i64, Arc<Live>>> {
        self.inner.games.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn live(&self, id: i64) -> Option<Arc<Live>> {
        self.games().get(&id).cloned()
    }

    fn is_closed(&self) -> bool {
        self.inner.closed.load(Ordering::SeqCst)
    }

    /// The game `id` as its page shows it: live from memory (resumed here
    /// first if it is running and no process holds it), or from its row.
    pub async fn view(&self, core: &Handles, id: i64) -> Result<Option<GameView>> {
        if let Some(live) = self.live_or_resumed(core, id).await? {
            return Ok(Some(live.view()));
        }
        records::stored_view(core, id, self.inner.rules.idle_ms).await
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

    /// Waits (at most `within`) until every game being played has its end
    /// or its release written; returns how many were still unwritten then.
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
}
