//! The database: one schema on SQLite (the default, a file in the data
//! directory) or PostgreSQL (`DATABASE_URL=postgres://…`), through sqlx's
//! `Any` driver, so every query is written once.
//!
//! Times are stored as Unix milliseconds and JSON as text, the types both
//! backends share. Each backend keeps its own migrations under
//! `migrations/`.

use crate::error::{Error, Result};
use sqlx::any::{AnyConnectOptions, AnyPoolOptions, install_default_drivers};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, ConnectOptions, Connection, Transaction};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Which database engine a [`Db`] talks to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Backend {
    /// A SQLite file (WAL mode): one machine, any number of processes.
    Sqlite,
    /// PostgreSQL: many machines.
    Postgres,
}

/// A pool of connections and the backend behind it. Cheap to clone.
#[derive(Clone, Debug)]
pub struct Db {
    /// The connections.
    pub pool: AnyPool,
    /// The engine.
    pub backend: Backend,
    /// This process's queue of SQLite writers (see [`Db::begin_write`]).
    writers: Arc<tokio::sync::Mutex<()>>,
    /// On SQLite, the connection this process's [`OwnConnection`]s share.
    own: Arc<OwnSlot>,
    /// Whether the database answered when last asked (see [`Db::watch`]).
    up: Arc<AtomicBool>,
    /// Whether a request refused for want of the database was logged since
    /// the database last answered (see [`Db::first_refusal_since_up`]).
    refusal_logged: Arc<AtomicBool>,
}

/// How a [`Db`] waits for a connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DbOptions {
    /// How long a query waits for a connection before it fails with
    /// `PoolTimedOut` (while the database is unreachable, every query waits
    /// this long).
    pub acquire_timeout: Duration,
}

impl DbOptions {
    /// What background work (workers, scheduler, checker) waits by default:
    /// long enough to ride out a database restart.
    pub const BACKGROUND: DbOptions = DbOptions {
        acquire_timeout: Duration::from_secs(30),
    };
    /// What a web request waits by default before it answers 503.
    pub const WEB: DbOptions = DbOptions {
        acquire_timeout: Duration::from_secs(3),
    };
}

impl Default for DbOptions {
    fn default() -> DbOptions {
        DbOptions::BACKGROUND
    }
}

/// How often [`Db::watch`] asks the database whether it answers.
pub const WATCH_INTERVAL: Duration = Duration::from_secs(1);
/// How long [`Db::watch`] waits for an answer.
pub const WATCH_TIMEOUT: Duration = Duration::from_secs(2);

/// Why a database is not ready to serve.
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    /// It does not answer (see [`Error::is_unavailable`] for whether it is
    /// down rather than not a ladder database; [`Error::detail`] says why).
    #[error("the database does not answer: {}", .0.detail())]
    Unreachable(Error),
    /// Its schema is older than this binary's.
    #[error("the schema is at migration {applied} but this binary needs {known}")]
    Behind {
        /// The newest migration applied.
        applied: i64,
        /// The newest migration this binary has.
        known: i64,
    },
}

/// A turn to write: while it lives, no other writer of this process writes
/// (SQLite; nothing on PostgreSQL).
type WriteTurn = Option<tokio::sync::OwnedMutexGuard<()>>;

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations/postgres");

/// Whether `error` means the database cannot be reached now (down,
/// restarting, refusing connections, no connection free in time) rather
/// than that a query is wrong: what a client should hear as 503 and a
/// worker should retry ([`Error::Unavailable`] once converted).
pub(crate) fn is_unavailable(error: &sqlx::Error) -> bool {
    match error {
        // A server shutting down or starting up may also cut a handshake
        // short ("unexpected response from SSLRequest").
        sqlx::Error::Io(_)
        | sqlx::Error::Tls(_)
        | sqlx::Error::Protocol(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed => true,
        // PostgreSQL's "operator intervention" class: shutting down, crash
        // recovery, not accepting connections yet.
        sqlx::Error::Database(error) => error.code().is_some_and(|code| code.starts_with("57P")),
        sqlx::Error::Migrate(error) => match error.as_ref() {
            sqlx::migrate::MigrateError::Execute(error) | sqlx::migrate::MigrateError::ExecuteMigration(error, _) => {
                is_unavailable(error)
            }
            _ => false,
        },
        _ => false,
    }
}

/// The URL of the SQLite file at `path`, created if missing.
fn sqlite_url(path: &Path) -> String {
    format!("sqlite://{}?mode=rwc", path.display())
}

/// The level the driver logs its slow waits for a connection and slow
/// statements at: below what the log shows by default (`sqlx=warn`), so
/// that they are counted and summed up by the binary's log
/// ([`crate::metrics::count_driver_event`]) instead of logged one by one.
/// (sqlx's `log::LevelFilter`, parsed from its name.)
fn driver_slow_level<L: std::str::FromStr>() -> Option<L> {
    "info".parse().ok()
}

/// The connect options of `url`, with the driver's slow statements (over
/// 1 s) logged at [`driver_slow_level`].
fn connect_options(url: &str) -> Result<AnyConnectOptions, sqlx::Error> {
    let options: AnyConnectOptions = url.parse()?;
    Ok(match driver_slow_level() {
        Some(level) => options.log_slow_statements(level, Duration::from_secs(1)),
        None => options,
    })
}

/// The pool settings of `backend`.
fn pool_options(backend: Backend, options: DbOptions) -> AnyPoolOptions {
    let mut pool = AnyPoolOptions::new()
        .max_connections(if backend == Backend::Sqlite { 8 } else { 16 })
        .acquire_timeout(options.acquire_timeout)
        .acquire_slow_threshold(Duration::from_secs(2));
    if let Some(level) = driver_slow_level() {
        pool = pool.acquire_slow_level(level);
    }
    match backend {
        // A connection to a local file does not go stale: no ping (a round
        // trip to the connection's thread) before every use.
        Backend::Sqlite => pool.test_before_acquire(false).after_connect(|connection, _| {
            Box::pin(async move {
                // Writers wait for each other instead of failing at once.
                sqlx::query("PRAGMA busy_timeout = 10000")
                    .execute(&mut *connection)
                    .await?;
                sqlx::query("PRAGMA foreign_keys = ON")
                    .execute(&mut *connection)
                    .await?;
                sqlx::query("PRAGMA synchronous = NORMAL")
                    .execute(&mut *connection)
                    .await?;
                Ok(())
            })
        }),
        Backend::Postgres => pool,
    }
}

/// The current time in Unix milliseconds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// Why [`Db::open_read_only`] could not open a database.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// No SQLite file where the database should be.
    #[error("no database at {0} (is --data or DATABASE_URL right?)")]
    Missing(String),
    /// The server did not let us in.
    #[error("cannot reach the database at {address}: {cause}")]
    Unreachable {
        /// Its URL, password hidden.
        address: String,
        /// What went wrong.
        cause: String,
    },
}

/// The read-only URL of the existing SQLite file at `path`.
fn read_only_sqlite_url(path: &Path) -> Result<String, OpenError> {
    if !path.is_file() {
        return Err(OpenError::Missing(path.display().to_string()));
    }
    Ok(format!("sqlite://{}?mode=ro", path.display()))
}

/// `url` with its password, if it has one, replaced by `***`: what may
/// appear in a log or an error message. Text that is not a URL is returned
/// as it is, up to its last `@`, which is cut with what precedes it.
pub fn redacted_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            if parsed.password().is_some() {
                let _ = parsed.set_password(Some("***"));
            }
            parsed.to_string()
        }
        Err(_) => url
            .rsplit_once('@')
            .map_or_else(|| url.to_owned(), |(_, host)| format!("***@{host}")),
    }
}

impl Db {
    /// A handle over `pool`, marked up, with no writer and no open
    /// transaction yet.
    fn over(pool: AnyPool, backend: Backend) -> Db {
        Db {
            pool,
            backend,
            writers: Arc::default(),
            own: Arc::default(),
            up: Arc::new(AtomicBool::new(true)),
            refusal_logged: Arc::default(),
        }
    }

    /// The database at `url` when given, else (creating it if needed)
    /// `arbiter.db` in `data_dir`: what `serve`, `worker` and `ratings`
    /// open.
    pub async fn open(data_dir: &Path, url: Option<&str>) -> Result<Db> {
        Db::open_with(data_dir, url, DbOptions::default()).await
    }

    /// [`Db::open`] with `options`.
    pub async fn open_with(data_dir: &Path, url: Option<&str>, options: DbOptions) -> Result<Db> {
        match url {
            Some(url) => Db::connect_with(url, options).await,
            None => Db::connect_with(&sqlite_url(&data_dir.join("arbiter.db")), options).await,
        }
    }

    /// Opens (creating if needed) the SQLite database at `path`.
    pub async fn open_sqlite(path: &Path) -> Result<Db> {
        Db::connect(&sqlite_url(path)).await
    }

    /// Connects to `url` (`sqlite://…` or `postgres://…`) and brings the
    /// schema up to date.
    pub async fn connect(url: &str) -> Result<Db> {
        Db::connect_with(url, DbOptions::default()).await
    }

    /// [`Db::connect`] with `options`. A PostgreSQL server that does not
    /// answer yet is waited for up to `options.acquire_timeout`; past it,
    /// or for any other failure, the error is [`Error::Unavailable`] when
    /// the database cannot be reached and [`Error::Internal`] otherwise.
    pub async fn connect_with(url: &str, options: DbOptions) -> Result<Db> {
        Ok(Db::connect_driver(url, options).await?)
    }

    /// [`Db::connect_with`], failing with the driver's error.
    async fn connect_driver(url: &str, options: DbOptions) -> Result<Db, sqlx::Error> {
        install_default_drivers();
        let backend = if url.starts_with("postgres") {
            Backend::Postgres
        } else {
            Backend::Sqlite
        };
        // A server that is restarting (or not up yet) is waited for, as a
        // query would wait for a connection. (A SQLite file is not "down":
        // its errors are final.)
        let deadline = Instant::now() + options.acquire_timeout;
        let mut waiting = false;
        loop {
            match Db::connect_once(url, backend, options).await {
                Ok(db) => {
                    if waiting {
                        tracing::info!("the database answers");
                    }
                    return Ok(db);
                }
                Err(error) if backend == Backend::Postgres && is_unavailable(&error) && Instant::now() < deadline => {
                    if !waiting {
                        waiting = true;
                        tracing::warn!(
                            %error,
                            "the database does not answer yet; trying again for up to {} s",
                            options.acquire_timeout.as_secs()
                        );
                    }
                    tokio::time::sleep(Duration::from_millis(250)).await;
                }
                Err(error) => return Err(error),
            }
        }
    }

    /// One try of [`Db::connect_with`].
    async fn connect_once(url: &str, backend: Backend, options: DbOptions) -> Result<Db, sqlx::Error> {
        let pool = pool_options(backend, options)
            .connect_with(connect_options(url)?)
            .await?;
        if backend == Backend::Sqlite {
            sqlx::query("PRAGMA journal_mode = WAL").execute(&pool).await?;
        }
        let db = Db::over(pool, backend);
        db.run_migrations().await?;
        Ok(db)
    }

    /// Opens the existing database at `url` (or `arbiter.db` in
    /// `data_dir`) for reading only: nothing is created or migrated, every
    /// connection refuses writes, and an unreachable server fails after one
    /// try of at most `connect_timeout` with the cause (not a pool timeout).
    /// For tools that inspect a database, such as `arbiter ratings
    /// recompute`; see [`Db::schema_current`] for whether it holds a schema.
    pub async fn open_read_only(
        data_dir: &Path,
        url: Option<&str>,
        connect_timeout: Duration,
    ) -> Result<Db, OpenError> {
        install_default_drivers();
        let (url, backend) = match url {
            Some(url) if url.starts_with("postgres") => (url.to_owned(), Backend::Postgres),
            Some(url) => {
                let path = url.strip_prefix("sqlite://").or_else(|| url.strip_prefix("sqlite:"));
                let path = path.map(|p| p.split('?').next().unwrap_or(p)).unwrap_or(url);
                (read_only_sqlite_url(Path::new(path))?, Backend::Sqlite)
            }
            None => (read_only_sqlite_url(&data_dir.join("arbiter.db"))?, Backend::Sqlite),
        };
        let address = redacted_url(&url);
        let unreachable = |cause: String| OpenError::Unreachable {
            address: address.clone(),
            cause,
        };
        // One connection first: its error names the cause, where a pool
        // would retry until it timed out and say only that.
        let probe = tokio::time::timeout(connect_timeout, AnyConnection::connect(&url)).await;
        match probe {
            Ok(Ok(connection)) => {
                let _ = connection.close().await;
            }
            Ok(Err(error)) => return Err(unreachable(error.to_string())),
            Err(_) => {
                return Err(unreachable(format!(
                    "no answer within {:.0} s",
                    connect_timeout.as_secs_f64()
                )));
            }
        }
        let pool = AnyPoolOptions::new()
            .max_connections(2)
            .acquire_timeout(connect_timeout)
            .after_connect(move |connection, _| {
                Box::pin(async move {
                    let read_only = match backend {
                        Backend::Sqlite => "PRAGMA query_only = ON",
                        Backend::Postgres => "SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY",
                    };
                    sqlx::query(read_only).execute(&mut *connection).await?;
                    Ok(())
                })
            })
            .connect_lazy(&url)
            .map_err(|error| unreachable(error.to_string()))?;
        Ok(Db::over(pool, backend))
    }

    /// Where this database is, for a log line or a message: its URL with
    /// any password replaced by `***` (a SQLite file by its path).
    pub fn describe(&self) -> String {
        let options = self.pool.connect_options();
        let url = redacted_url(options.database_url.as_str());
        match self.backend {
            Backend::Sqlite => {
                let path = url.strip_prefix("sqlite://").unwrap_or(&url);
                format!("SQLite {}", path.split('?').next().unwrap_or(path))
            }
            Backend::Postgres => format!("PostgreSQL {url}"),
        }
    }

    /// Another pool on the same database with `options`, sharing this one's
    /// writer queue and health: for web requests that should fail fast
    /// while background work waits longer. Connects lazily.
    pub fn with_options(&self, options: DbOptions) -> Db {
        let connect = (*self.pool.connect_options()).clone();
        Db {
            pool: pool_options(self.backend, options).connect_lazy_with(connect),
            backend: self.backend,
            writers: self.writers.clone(),
            own: self.own.clone(),
            up: self.up.clone(),
            refusal_logged: self.refusal_logged.clone(),
        }
    }

    /// Whether the database answered [`Db::watch`]'s last question (true
    /// until the first one fails).
    pub fn is_up(&self) -> bool {
        self.up.load(Ordering::Relaxed)
    }

    /// True for the first request refused for want of the database since
    /// the database last answered [`Db::watch`] (and since the start), false
    /// for the others: so a web server logs one line per outage, not one
    /// per refused request (they are all counted in the metrics).
    pub fn first_refusal_since_up(&self) -> bool {
        !self.refusal_logged.swap(true, Ordering::Relaxed)
    }

    /// Asks the database every [`WATCH_INTERVAL`] whether it answers, until
    /// `stop` turns true, and logs one line when it stops answering (saying
    /// what waits: `meanwhile`, such as "matches wait") and one when it
    /// answers again, with how long it was away counted from its last good
    /// answer: what an operator reads during an outage, rather than one
    /// driver error per request.
    pub async fn watch(self, mut stop: watch::Receiver<bool>, meanwhile: &str) {
        let mut down = false;
        let mut last_good = Instant::now();
        loop {
            let answer = match tokio::time::timeout(WATCH_TIMEOUT, sqlx::query("SELECT 1").execute(&self.pool)).await {
                Ok(Ok(_)) => Ok(()),
                Ok(Err(error)) => Err(error.to_string()),
                Err(_) => Err(format!("no answer within {} s", WATCH_TIMEOUT.as_secs())),
            };
            self.up.store(answer.is_ok(), Ordering::Relaxed);
            match answer {
                Ok(()) => {
                    self.refusal_logged.store(false, Ordering::Relaxed);
                    if down {
                        down = false;
                        let away = last_good.elapsed().as_secs_f64();
                        tracing::warn!(
                            database = %self.describe(),
                            down_s = away,
                            "the database answers again (it was away for {away:.1} s since its last good answer)"
                        );
                    }
                    last_good = Instant::now();
                }
                Err(error) if !down => {
                    down = true;
                    let since = last_good.elapsed().as_secs_f64();
                    tracing::error!(
                        database = %self.describe(),
                        %error,
                        last_good_s = since,
                        "the database does not answer (last good answer {since:.1} s ago): {meanwhile} until it does"
                    );
                }
                Err(_) => {}
            }
            tokio::select! {
                _ = stop.wait_for(|stop| *stop) => return,
                () = tokio::time::sleep(WATCH_INTERVAL) => {}
            }
        }
    }

    /// This backend's migrations.
    fn migrator(&self) -> &'static sqlx::migrate::Migrator {
        match self.backend {
            Backend::Sqlite => &SQLITE_MIGRATIONS,
            Backend::Postgres => &POSTGRES_MIGRATIONS,
        }
    }

    /// Applies the backend's migrations that are not applied yet, and gives
    /// every ladder a time control.
    pub async fn migrate(&self) -> Result<()> {
        Ok(self.run_migrations().await?)
    }

    /// [`Db::migrate`], failing with the driver's error.
    async fn run_migrations(&self) -> Result<(), sqlx::Error> {
        self.migrator()
            .run(&self.pool)
            .await
            .map_err(|e| sqlx::Error::Migrate(Box::new(e)))?;
        crate::ladders::write_defaults(self).await
    }

    /// Whether the database answers and has every migration this binary
    /// knows (applied successfully).
    pub async fn schema_current(&self) -> Result<(), NotReady> {
        let known = self.migrator().iter().map(|m| m.version).max().unwrap_or(0);
        let applied: Option<i64> = sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(&self.pool)
            .await
            .map_err(|error| NotReady::Unreachable(error.into()))?;
        match applied {
            Some(applied) if applied >= known => Ok(()),
            applied => Err(NotReady::Behind {
                applied: applied.unwrap_or(0),
                known,
            }),
        }
    }

    /// Waits for this process's turn to write, on SQLite; on PostgreSQL
    /// (many writers at once) at once, with no turn. SQLite has one writer
    /// at a time and makes the others retry after sleeps of a millisecond
    /// or more, which idles the ladder's workers when they finish matches
    /// together; writers that hold a turn queue here instead and go the
    /// moment the previous one is done. The wait is bounded like a wait for
    /// a connection (`PoolTimedOut` past it).
    async fn write_turn(&self) -> Result<WriteTurn, sqlx::Error> {
        match self.backend {
            Backend::Sqlite => {
                let timeout = self.pool.options().get_acquire_timeout();
                tokio::time::timeout(timeout, self.writers.clone().lock_owned())
                    .await
                    .map(Some)
                    .map_err(|_| sqlx::Error::PoolTimedOut)
            }
            Backend::Postgres => Ok(None),
        }
    }

    /// A connection for one write statement, held with this process's turn
    /// to write (see [`Db::begin_write`]).
    pub async fn write_connection(&self) -> Result<Writing<PoolConnection<Any>>> {
        let turn = self.write_turn().await?;
        Ok(Writing {
            inner: self.pool.acquire().await?,
            _turn: turn,
        })
    }

    /// Starts a transaction that will write. On SQLite it first waits for
    /// this process's turn to write (held until the transaction ends, so
    /// the writers of one process queue rather than retry against the
    /// database's lock) and then takes the write lock at once (`BEGIN
    /// IMMEDIATE`), so two writers never deadlock on upgrading a read lock.
    pub async fn begin_write(&self) -> Result<Writing<Transaction<'static, Any>>> {
        let turn = self.write_turn().await?;
        let tx = match self.backend {
            Backend::Sqlite => self.pool.begin_with("BEGIN IMMEDIATE").await?,
            Backend::Postgres => self.pool.begin().await?,
        };
        Ok(Writing { inner: tx, _turn: turn })
    }
}

/// A connection that one long-lived writer (a ladder worker) keeps for
/// itself instead of taking one from the pool for every write: no wait for
/// the pool, and none of the pool's check of a connection given back (a
/// round trip to SQLite's thread or to the PostgreSQL server each time). Its
/// users take turns; a connection that failed is dropped and the next turn
/// opens another.
///
/// On SQLite, where writes take turns anyway, every `OwnConnection` of a
/// process shares one connection: its page cache stays valid from one
/// write to the next (SQLite drops a connection's cache whenever another
/// connection has written since its last transaction). Clones share the
/// connection too.
#[derive(Clone, Debug)]
pub struct OwnConnection {
    db: Db,
    slot: Arc<OwnSlot>,
}

/// The connection behind one or more [`OwnConnection`]s.
#[derive(Debug, Default)]
struct OwnSlot {
    connection: tokio::sync::Mutex<Option<AnyConnection>>,
    /// Set when the connection may be broken or was left inside a
    /// transaction begun by hand: the next turn closes it (rolling such a
    /// transaction back) and opens another.
    replace: AtomicBool,
}

impl OwnConnection {
    /// A connection to `db`, opened at the first turn (on SQLite, the one
    /// every `OwnConnection` of `db` shares).
    pub fn new(db: &Db) -> OwnConnection {
        let slot = match db.backend {
            Backend::Sqlite => db.own.clone(),
            Backend::Postgres => Arc::default(),
        };
        OwnConnection { db: db.clone(), slot }
    }

    /// Its engine.
    pub fn backend(&self) -> Backend {
        self.db.backend
    }

    /// The connection, held with this process's turn to write (see
    /// [`Db::begin_write`]) until the returned guard is dropped. Waits for
    /// the connection's other users first, so the turn is never held while
    /// waiting for the connection.
    pub(crate) async fn write(&self) -> Result<OwnWriting<'_>, sqlx::Error> {
        let replace = &self.slot.replace;
        let mut slot = self.slot.connection.lock().await;
        let kept = slot.take().filter(|_| !replace.swap(false, Ordering::Relaxed));
        let turn = self.db.write_turn().await?;
        let connection = match kept {
            Some(connection) => connection,
            None => self.db.pool.acquire().await?.detach(),
        };
        Ok(OwnWriting {
            connection: tokio::sync::MutexGuard::map(slot, |slot| slot.insert(connection)),
            _turn: turn,
            replace,
            open_by_hand: false,
        })
    }

    /// Replaces the connection at the next [`OwnConnection::write`] if
    /// `error` may have broken it (the database went away).
    pub(crate) fn forget_if_broken(&self, error: &sqlx::Error) {
        if is_unavailable(error) {
            self.slot.replace.store(true, Ordering::Relaxed);
        }
    }
}

/// An [`OwnConnection`]'s connection with the turn to write: use it as the
/// connection it derefs to.
pub struct OwnWriting<'a> {
    connection: tokio::sync::MappedMutexGuard<'a, AnyConnection>,
    _turn: WriteTurn,
    replace: &'a AtomicBool,
    open_by_hand: bool,
}

impl OwnWriting<'_> {
    /// Says that a transaction is begun by hand (`BEGIN` inside a batch,
    /// where sqlx does not see it): unless [`OwnWriting::ended_by_hand`]
    /// follows, dropping this guard (an error, a cancelled future) closes
    /// the connection rather than leaving a transaction open in it.
    pub fn begin_by_hand(&mut self) {
        self.open_by_hand = true;
    }

    /// Says that the transaction begun by hand was committed or rolled
    /// back.
    pub fn ended_by_hand(&mut self) {
        self.open_by_hand = false;
    }
}

impl Drop for OwnWriting<'_> {
    fn drop(&mut self) {
        if self.open_by_hand {
            self.replace.store(true, Ordering::Relaxed);
        }
    }
}

impl std::ops::Deref for OwnWriting<'_> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.connection
    }
}

impl std::ops::DerefMut for OwnWriting<'_> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.connection
    }
}

/// A connection or a transaction that holds this process's turn to write
/// while it lives: use it as the connection it derefs to.
pub struct Writing<T> {
    inner: T,
    _turn: WriteTurn,
}

impl<T: std::ops::Deref<Target = AnyConnection>> std::ops::Deref for Writing<T> {
    type Target = AnyConnection;

    fn deref(&self) -> &AnyConnection {
        &self.inner
    }
}

impl<T: std::ops::DerefMut<Target = AnyConnection>> std::ops::DerefMut for Writing<T> {
    fn deref_mut(&mut self) -> &mut AnyConnection {
        &mut self.inner
    }
}

impl Writing<Transaction<'static, Any>> {
    /// Commits, then gives the turn to the next writer.
    pub async fn commit(self) -> Result<()> {
        Ok(self.inner.commit().await?)
    }

    /// Rolls back, then gives the turn to the next writer.
    pub async fn rollback(self) -> Result<()> {
        Ok(self.inner.rollback().await?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh SQLite database in a temporary folder (kept while the folder
    /// lives).
    async fn sqlite() -> (tempfile::TempDir, Db) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db"))
            .await
            .expect("a database");
        (dir, db)
    }

    /// Passwords never reach a log line or a message; URLs without one
    /// pass unchanged.
    #[test]
    fn redacted_urls_hide_the_password() {
        assert_eq!(
            redacted_url("postgres://arbiter:hunter2@db.internal:5432/arbiter?sslmode=require"),
            "postgres://arbiter:***@db.internal:5432/arbiter?sslmode=require"
        );
        assert_eq!(
            redacted_url("postgres://arbiter@db.internal/arbiter"),
            "postgres://arbiter@db.internal/arbiter"
        );
        assert_eq!(redacted_url("not a url:secret@host"), "***@host");
    }

    /// A transaction begun by hand and abandoned (an error or a cancelled
    /// future between its batches) never leaks into the next turn: the
    /// connection is replaced, so its half-done write is rolled back and
    /// the write lock is free for everyone.
    #[tokio::test]
    async fn a_transaction_begun_by_hand_and_abandoned_is_rolled_back() {
        let (_dir, db) = sqlite().await;
        sqlx::query("CREATE TABLE t (n INTEGER)")
            .execute(&db.pool)
            .await
            .expect("a table");
        let own = OwnConnection::new(&db);
        {
            let mut writing = own.write().await.expect("a turn");
            writing.begin_by_hand();
            sqlx::query("BEGIN IMMEDIATE; INSERT INTO t VALUES (1)")
                .execute(&mut *writing)
                .await
                .expect("begun and written");
            // Dropped here without `ended_by_hand`.
        }
        {
            let mut writing = own.write().await.expect("the next turn");
            sqlx::query("INSERT INTO t VALUES (2)")
                .execute(&mut *writing)
                .await
                .expect("a write outside any transaction");
        }
        // Another connection writes at once (busy_timeout would make it
        // wait 10 s and fail were the lock still held) and sees only the
        // committed row.
        let others = db.with_options(DbOptions {
            acquire_timeout: Duration::from_secs(1),
        });
        sqlx::query("PRAGMA busy_timeout = 0")
            .execute(&others.pool)
            .await
            .expect("no waiting");
        sqlx::query("INSERT INTO t VALUES (3)")
            .execute(&others.pool)
            .await
            .expect("the write lock is free");
        let rows: Vec<i64> = sqlx::query_scalar("SELECT n FROM t ORDER BY n")
            .fetch_all(&db.pool)
            .await
            .expect("the rows");
        assert_eq!(rows, [2, 3], "the abandoned insert was rolled back");

        // A transaction ended by hand keeps its connection.
        let mut writing = own.write().await.expect("a turn");
        writing.begin_by_hand();
        sqlx::query("BEGIN IMMEDIATE; INSERT INTO t VALUES (4); COMMIT")
            .execute(&mut *writing)
            .await
            .expect("a whole transaction");
        writing.ended_by_hand();
        drop(writing);
        assert!(!own.slot.replace.load(Ordering::Relaxed));
    }

    /// On SQLite every `OwnConnection` of a process writes through the same
    /// connection (a temporary table, seen only by the connection that
    /// made it, is seen by both), and one replaced after an error is
    /// replaced for all.
    #[tokio::test]
    async fn own_connections_share_one_connection_on_sqlite() {
        let (_dir, db) = sqlite().await;
        let [first, second] = [OwnConnection::new(&db), OwnConnection::new(&db)];
        sqlx::query("CREATE TEMP TABLE mine (n INTEGER)")
            .execute(&mut *first.write().await.expect("a turn"))
            .await
            .expect("a temporary table");
        sqlx::query("INSERT INTO mine VALUES (1)")
            .execute(&mut *second.write().await.expect("a turn"))
            .await
            .expect("the other one sees the first one's temporary table");
        assert!(
            sqlx::query("SELECT n FROM mine").fetch_all(&db.pool).await.is_err(),
            "the pool's connections do not see it"
        );
        first.forget_if_broken(&sqlx::Error::PoolTimedOut);
        let replaced = sqlx::query_scalar::<_, i64>("SELECT n FROM mine")
            .fetch_all(&mut *second.write().await.expect("a turn"))
            .await;
        assert!(replaced.is_err(), "a fresh connection: {replaced:?}");
    }
}
