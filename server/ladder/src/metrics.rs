//! Prometheus metrics: what an operator graphs and alerts on (ladder.md,
//! "What an operator watches"). Each process counts what it did itself
//! (matches it played, checks it ran, requests it answered); the queue's
//! depth, the database's health and the compile cache are read when
//! scraped.
//!
//! A scrape never waits on the database for long: the queue's depth is
//! read for at most [`QUEUE_READ_WAIT`], and when the read fails or is late
//! the last successful read is shown with its age
//! (`arbiter_queue_read_age_seconds`). `arbiter_database_up` says whether
//! the database is reachable, not whether it is fast: it is 0 only when a
//! probe on a connection of its own failed or went unanswered for
//! [`PROBE_TIMEOUT`], and the probe's round trip is
//! `arbiter_database_probe_seconds` (a busy pool or a busy process makes
//! it longer, not the database down). The database driver's slow waits for
//! a connection and slow statements are counted by the binary's log
//! ([`count_driver_event`]) and shown here, for the whole process. Every
//! series with labels known in advance (the ladders, the match kinds and
//! statuses, the check verdicts, the module sources) exists from the start
//! with value 0, so `rate()` and alerts see a zero rather than nothing.
//!
//! One [`Metrics`] per [`crate::core::Core`], never a global registry, so
//! that several servers in one process (the tests) count apart.

use crate::db::Db;
use arbiter_games::Variant;
use arbiter_sandbox::Sandbox;
use prometheus::{
    Encoder, Gauge, GaugeVec, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts,
    Registry, TextEncoder, exponential_buckets,
};
use sqlx::{AnyConnection, ConnectOptions};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a scrape waits for the queue's depth from the database before
/// it answers with the last successful read (and `arbiter_database_up` 0).
pub const QUEUE_READ_WAIT: Duration = Duration::from_millis(750);

/// How long the database probe behind `arbiter_database_up` may go
/// unanswered before the database counts as unreachable: generous, so that
/// a database (or a process) that is merely busy reads as slow
/// (`arbiter_database_probe_seconds`), not down.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// The status `arbiter_http_requests_total` gives a request whose client
/// went away (or whose connection the server closed) before it was
/// answered: nginx's "client closed request".
pub const ABANDONED: u16 = 499;

/// The statuses `arbiter_queue_matches` counts.
pub const QUEUE_STATUSES: [&str; 2] = ["queued", "running"];
/// The verdicts of `arbiter_check_duration_seconds`.
pub const CHECK_VERDICTS: [&str; 3] = ["active", "rejected", "error"];
/// Where `arbiter_module_loads_total` says a module came from.
pub const MODULE_SOURCES: [&str; 3] = ["memory", "disk", "compile"];
/// The disk caches of `arbiter_compile_cache_bytes` and its companions:
/// compiled modules and compiled functions.
pub const DISK_CACHES: [&str; 2] = ["modules", "functions"];

/// The content type of [`Metrics::render`]'s text: Prometheus's text
/// exposition format.
pub const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The process's metrics. Cheap to clone; clones count together.
#[derive(Clone, Debug)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    registry: Registry,
    sandbox: Sandbox,
    started: IntCounterVec,
    finished: IntCounterVec,
    failed: IntCounterVec,
    retries: IntCounterVec,
    lease_expiries: IntCounterVec,
    match_seconds: HistogramVec,
    check_seconds: HistogramVec,
    requests: IntCounterVec,
    request_seconds: HistogramVec,
    queue: IntGaugeVec,
    /// Seconds since the queue's depth was last read (no label; no
    /// series before the first successful read).
    queue_age: GaugeVec,
    database_up: IntGauge,
    /// The last probe's round trip (or, while one is late, how long it has
    /// waited so far).
    probe_seconds: Gauge,
    slow_acquires: IntCounter,
    slow_statements: IntCounter,
    module_loads: IntCounterVec,
    /// Bytes each disk cache holds, its bound, and entries removed to keep
    /// within it (read from the sandbox when scraped).
    cache_bytes: IntGaugeVec,
    cache_limit: IntGaugeVec,
    cache_evictions: IntCounterVec,
    /// The last successful read of the queue's depth.
    last_queue: Mutex<Option<QueueRead>>,
    /// Whether a read of the queue's depth is under way (a scrape does
    /// not start another one while a late one still waits on the database).
    reading: AtomicBool,
    /// The database probe.
    probe: Mutex<Probe>,
}

/// The database probe behind `arbiter_database_up`.
#[derive(Debug)]
struct Probe {
    /// The probe's own connection, opened at the first probe and again
    /// after a failure: not one of the pool's, which may all be busy.
    connection: Option<AnyConnection>,
    /// Whether the last finished probe was answered (true before the
    /// first: the process connected to start).
    answered: bool,
    /// The last finished probe's round trip.
    took: Duration,
    /// When the probe under way started, if one is.
    started: Option<Instant>,
}

/// One successful read of the queue's depth.
#[derive(Debug)]
struct QueueRead {
    /// `(ladder, kind, status, count)` rows.
    rows: Vec<(String, String, String, i64)>,
    /// When it was read.
    at: Instant,
}

/// Registers `collector` in `registry` and returns it. Names are fixed and
/// distinct, so registration cannot fail.
fn register<C: prometheus::core::Collector + Clone + 'static>(registry: &Registry, collector: C) -> C {
    registry
        .register(Box::new(collector.clone()))
        .expect("metric names are distinct");
    collector
}

fn counters(registry: &Registry, name: &str, help: &str, labels: &[&str]) -> IntCounterVec {
    let vec = IntCounterVec::new(Opts::new(name, help).namespace("arbiter"), labels).expect("a valid metric");
    register(registry, vec)
}

/// Buckets doubling from `start` seconds, `count` of them.
fn histograms(registry: &Registry, name: &str, help: &str, labels: &[&str], start: f64, count: usize) -> HistogramVec {
    let buckets = exponential_buckets(start, 2.0, count).expect("valid buckets");
    let opts = HistogramOpts::new(name, help).namespace("arbiter").buckets(buckets);
    register(registry, HistogramVec::new(opts, labels).expect("a valid metric"))
}

impl Metrics {
    /// Fresh metrics, all zero, that also report `sandbox`'s compile cache.
    pub fn new(sandbox: &Sandbox) -> Metrics {
        let r = Registry::new();
        let inner = Inner {
            started: counters(
                &r,
                "matches_started_total",
                "Matches this process claimed and began to play (retries included)",
                &["ladder"],
            ),
            finished: counters(
                &r,
                "matches_finished_total",
                "Matches this process played to the end and recorded",
                &["ladder"],
            ),
            failed: counters(
                &r,
                "matches_failed_total",
                "Matches this process marked failed (unplayable, or out of attempts); never rated",
                &["ladder"],
            ),
            retries: counters(
                &r,
                "match_retries_total",
                "Claims of a match whose earlier attempt did not finish (host failure or lease expiry)",
                &["ladder"],
            ),
            lease_expiries: counters(
                &r,
                "lease_expiries_total",
                "Claims of a match whose previous worker stopped renewing its lease (it died or lost the database)",
                &["ladder"],
            ),
            // 10 ms to about 20 min.
            match_seconds: histograms(
                &r,
                "match_duration_seconds",
                "Real time from claiming a match to recording it",
                &["ladder"],
                0.01,
                18,
            ),
            // 10 ms to about 40 s (a check is bounded at 15 s).
            check_seconds: histograms(
                &r,
                "check_duration_seconds",
                "Real time an upload check took, by verdict (active, rejected, or error when the host failed)",
                &["verdict"],
                0.01,
                13,
            ),
            requests: counters(
                &r,
                "http_requests_total",
                "HTTP requests answered, by method, route pattern and status",
                &["method", "route", "status"],
            ),
            // 0.5 ms to about 16 s.
            request_seconds: histograms(
                &r,
                "http_request_duration_seconds",
                "Real time to answer an HTTP request, by method and route pattern",
                &["method", "route"],
                0.0005,
                16,
            ),
            queue: register(
                &r,
                IntGaugeVec::new(
                    Opts::new(
                        "queue_matches",
                        "Matches queued or running, by ladder, kind and status (read from the database when scraped)",
                    )
                    .namespace("arbiter"),
                    &["ladder", "kind", "status"],
                )
                .expect("a valid metric"),
            ),
            queue_age: register(
                &r,
                GaugeVec::new(
                    Opts::new(
                        "queue_read_age_seconds",
                        "Seconds since arbiter_queue_matches was last read from the database",
                    )
                    .namespace("arbiter"),
                    &[],
                )
                .expect("a valid metric"),
            ),
            database_up: register(
                &r,
                IntGauge::with_opts(
                    Opts::new(
                        "database_up",
                        "1 while the database is reachable (its probe was answered within 10 s), 0 while it is not",
                    )
                    .namespace("arbiter"),
                )
                .expect("a valid metric"),
            ),
            probe_seconds: register(
                &r,
                Gauge::with_opts(
                    Opts::new(
                        "database_probe_seconds",
                        "Round trip of the last database probe (SELECT 1 on a connection of its own), or the wait \
                         so far of a probe still unanswered",
                    )
                    .namespace("arbiter"),
                )
                .expect("a valid metric"),
            ),
            slow_acquires: register(
                &r,
                IntCounter::with_opts(
                    Opts::new(
                        "database_slow_acquires_total",
                        "Waits for a pooled database connection over 2 s (whole process)",
                    )
                    .namespace("arbiter"),
                )
                .expect("a valid metric"),
            ),
            slow_statements: register(
                &r,
                IntCounter::with_opts(
                    Opts::new(
                        "database_slow_statements_total",
                        "Database statements that took over 1 s (whole process)",
                    )
                    .namespace("arbiter"),
                )
                .expect("a valid metric"),
            ),
            module_loads: counters(
                &r,
                "module_loads_total",
                "Modules the sandbox loaded, by where from: memory (a cache hit), disk (compiled before) or compile",
                &["source"],
            ),
            cache_bytes: register(
                &r,
                IntGaugeVec::new(
                    Opts::new(
                        "compile_cache_bytes",
                        "Bytes a disk cache holds (modules: compiled modules; functions: compiled functions they \
                         share), in 4 KiB blocks, as this process counts them",
                    )
                    .namespace("arbiter"),
                    &["cache"],
                )
                .expect("a valid metric"),
            ),
            cache_limit: register(
                &r,
                IntGaugeVec::new(
                    Opts::new(
                        "compile_cache_limit_bytes",
                        "The bound of a disk cache: past it, its least recently used entries are removed",
                    )
                    .namespace("arbiter"),
                    &["cache"],
                )
                .expect("a valid metric"),
            ),
            cache_evictions: counters(
                &r,
                "compile_cache_evictions_total",
                "Entries this process removed from a disk cache to keep within its bound",
                &["cache"],
            ),
            sandbox: sandbox.clone(),
            registry: r,
            last_queue: Mutex::new(None),
            reading: AtomicBool::new(false),
            probe: Mutex::new(Probe {
                connection: None,
                answered: true,
                took: Duration::ZERO,
                started: None,
            }),
        };
        // Every series whose labels are known exists from the start, at 0.
        for ladder in Variant::ALL.map(|variant| variant.to_string()) {
            let ladder = [ladder.as_str()];
            for counter in [
                &inner.started,
                &inner.finished,
                &inner.failed,
                &inner.retries,
                &inner.lease_expiries,
            ] {
                counter.with_label_values(&ladder);
            }
            inner.match_seconds.with_label_values(&ladder);
        }
        for verdict in CHECK_VERDICTS {
            inner.check_seconds.with_label_values(&[verdict]);
        }
        for source in MODULE_SOURCES {
            inner.module_loads.with_label_values(&[source]);
        }
        for cache in DISK_CACHES {
            inner.cache_bytes.with_label_values(&[cache]);
            inner.cache_limit.with_label_values(&[cache]);
            inner.cache_evictions.with_label_values(&[cache]);
        }
        // Both `serve` and `worker --metrics` answer this route.
        inner.requests.with_label_values(&["GET", "/metrics", "200"]);
        inner.request_seconds.with_label_values(&["GET", "/metrics"]);
        Metrics { inner: Arc::new(inner) }
    }

    /// Reads the queue's depth from `db` into `last_queue`, waiting at most
    /// [`QUEUE_READ_WAIT`]: true when it was read now. A late read goes on
    /// in the background (and is kept when it arrives); no other starts
    /// until it ends.
    async fn read_queue(&self, db: &Db) -> bool {
        let inner = Arc::clone(&self.inner);
        if inner.reading.swap(true, Ordering::AcqRel) {
            return false;
        }
        let pool = db.pool.clone();
        let read = tokio::spawn(async move {
            let rows: Result<Vec<(String, String, String, i64)>, sqlx::Error> = sqlx::query_as(
                "SELECT ladder, kind, status, COUNT(*) FROM matches \
                 WHERE status IN ('queued', 'running') GROUP BY ladder, kind, status",
            )
            .fetch_all(&pool)
            .await;
            let read = match rows {
                Ok(rows) => {
                    let mut last = inner
                        .last_queue
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    *last = Some(QueueRead {
                        rows,
                        at: Instant::now(),
                    });
                    true
                }
                Err(error) => {
                    // The database's watch logs the outage once.
                    tracing::debug!(%error, "metrics: cannot read the queue");
                    false
                }
            };
            inner.reading.store(false, Ordering::Release);
            read
        });
        matches!(tokio::time::timeout(QUEUE_READ_WAIT, read).await, Ok(Ok(true)))
    }

    /// Probes the database (`SELECT 1` on the probe's own connection,
    /// within [`PROBE_TIMEOUT`]) unless a probe is under way, and waits for
    /// it at most [`QUEUE_READ_WAIT`]; a late probe goes on in the
    /// background and is kept when it ends.
    async fn probe(&self, db: &Db) {
        let connection = {
            let mut probe = lock(&self.inner.probe);
            if probe.started.is_some() {
                return;
            }
            probe.started = Some(Instant::now());
            probe.connection.take()
        };
        let inner = Arc::clone(&self.inner);
        let options = db.pool.connect_options();
        let probing = tokio::spawn(async move {
            let attempt = async {
                let mut connection = match connection {
                    Some(connection) => connection,
                    None => options.connect().await?,
                };
                sqlx::query("SELECT 1").execute(&mut connection).await?;
                Ok::<_, sqlx::Error>(connection)
            };
            let answer = tokio::time::timeout(PROBE_TIMEOUT, attempt).await;
            let mut probe = lock(&inner.probe);
            probe.took = probe.started.take().map_or(Duration::ZERO, |started| started.elapsed());
            probe.answered = match answer {
                Ok(Ok(connection)) => {
                    probe.connection = Some(connection);
                    true
                }
                Ok(Err(error)) => {
                    // The database's watch logs an outage once.
                    tracing::debug!(%error, "metrics: the database probe failed");
                    false
                }
                Err(_) => false,
            };
        });
        let _ = tokio::time::timeout(QUEUE_READ_WAIT, probing).await;
    }

    /// Whether the database is reachable as far as the probe knows (its last
    /// probe was answered and the one under way, if any, is not overdue),
    /// and the probe's round trip (or the wait so far of a probe slower than
    /// the last).
    fn reachable(&self) -> (bool, Duration) {
        let probe = lock(&self.inner.probe);
        let waited = probe.started.map_or(Duration::ZERO, |started| started.elapsed());
        (probe.answered && waited < PROBE_TIMEOUT, probe.took.max(waited))
    }

    /// A match was claimed on `ladder`; `attempt` counts from 1, and
    /// `took_over` says whether its previous holder's lease had expired.
    pub fn match_started(&self, ladder: &str, attempt: i64, took_over: bool) {
        self.inner.started.with_label_values(&[ladder]).inc();
        if attempt > 1 {
            self.inner.retries.with_label_values(&[ladder]).inc();
        }
        if took_over {
            self.inner.lease_expiries.with_label_values(&[ladder]).inc();
        }
    }

    /// A match on `ladder` was recorded `took` after its claim.
    pub fn match_finished(&self, ladder: &str, took: Duration) {
        self.inner.finished.with_label_values(&[ladder]).inc();
        self.inner
            .match_seconds
            .with_label_values(&[ladder])
            .observe(took.as_secs_f64());
    }

    /// A match on `ladder` was marked failed.
    pub fn match_failed(&self, ladder: &str) {
        self.inner.failed.with_label_values(&[ladder]).inc();
    }

    /// An upload check ended with `verdict` after `took`.
    pub fn check_finished(&self, verdict: &str, took: Duration) {
        self.inner
            .check_seconds
            .with_label_values(&[verdict])
            .observe(took.as_secs_f64());
    }

    /// An HTTP request matching `route` was answered with `status` after
    /// `took` ([`ABANDONED`] when it was dropped unanswered).
    pub fn http_request(&self, method: &str, route: &str, status: u16, took: Duration) {
        self.inner
            .request_seconds
            .with_label_values(&[method, route])
            .observe(took.as_secs_f64());
        self.inner
            .requests
            .with_label_values(&[method, route, &status.to_string()])
            .inc();
    }

    /// How many HTTP requests were counted with `method`, `route` and
    /// `status` so far.
    pub fn http_requests(&self, method: &str, route: &str, status: u16) -> u64 {
        self.inner
            .requests
            .with_label_values(&[method, route, &status.to_string()])
            .get()
    }

    /// The metrics in Prometheus's text format, within about
    /// [`QUEUE_READ_WAIT`] whatever the database does: the queue's depth is
    /// read from `db`, or else the last successful read is shown (with its
    /// age); the database is probed meanwhile (see [`PROBE_TIMEOUT`]).
    pub async fn render(&self, db: &Db) -> String {
        let ((), _) = tokio::join!(self.probe(db), self.read_queue(db));
        let inner = &self.inner;
        inner.queue.reset();
        inner.queue_age.reset();
        {
            let last = inner
                .last_queue
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Some(last) = last.as_ref() {
                for ladder in Variant::ALL.map(|variant| variant.to_string()) {
                    for kind in crate::model::MatchKind::ALL {
                        for status in QUEUE_STATUSES {
                            inner
                                .queue
                                .with_label_values(&[ladder.as_str(), kind.as_str(), status])
                                .set(0);
                        }
                    }
                }
                for (ladder, kind, status, count) in &last.rows {
                    inner.queue.with_label_values(&[ladder, kind, status]).set(*count);
                }
                inner
                    .queue_age
                    .with_label_values(&[] as &[&str])
                    .set(last.at.elapsed().as_secs_f64());
            }
        }
        let (reachable, round_trip) = self.reachable();
        inner.database_up.set(i64::from(reachable));
        inner.probe_seconds.set(round_trip.as_secs_f64());
        let (acquires, statements) = slow_database_counts();
        inner.slow_acquires.reset();
        inner.slow_acquires.inc_by(acquires);
        inner.slow_statements.reset();
        inner.slow_statements.inc_by(statements);
        let stats = inner.sandbox.cache_stats();
        for (source, count) in MODULE_SOURCES
            .into_iter()
            .zip([stats.memory_hits, stats.disk_hits, stats.compiles])
        {
            let counter = inner.module_loads.with_label_values(&[source]);
            counter.reset();
            counter.inc_by(count);
        }
        let sizes = inner.sandbox.cache_sizes();
        for (cache, size) in DISK_CACHES.into_iter().zip([sizes.modules, sizes.functions]) {
            let gauge = |bytes: u64| i64::try_from(bytes).unwrap_or(i64::MAX);
            inner.cache_bytes.with_label_values(&[cache]).set(gauge(size.bytes));
            inner
                .cache_limit
                .with_label_values(&[cache])
                .set(gauge(size.limit_bytes));
            let counter = inner.cache_evictions.with_label_values(&[cache]);
            counter.reset();
            counter.inc_by(size.evictions);
        }
        let mut text = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&inner.registry.gather(), &mut text) {
            tracing::warn!(%error, "metrics: cannot encode");
        }
        String::from_utf8(text).unwrap_or_default()
    }
}

/// `mutex`'s value, even if a thread panicked holding it.
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Slow waits for a pooled connection the database driver reported in this
/// process (see [`count_driver_event`]).
static SLOW_ACQUIRES: AtomicU64 = AtomicU64::new(0);
/// Slow statements the database driver reported in this process.
static SLOW_STATEMENTS: AtomicU64 = AtomicU64::new(0);

/// A log event of the database driver (sqlx) that is counted rather than
/// logged line by line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriverEvent {
    /// A wait for a pooled connection over the pool's slow threshold (2 s).
    SlowAcquire,
    /// A statement over the slow threshold (1 s).
    SlowStatement,
}

impl DriverEvent {
    /// Which driver event `metadata` describes, if it is one: by its
    /// target and fields, so whatever the level the driver logs it at.
    pub fn of(metadata: &tracing::Metadata<'_>) -> Option<DriverEvent> {
        let fields = metadata.fields();
        match metadata.target() {
            "sqlx::pool::acquire" if fields.field("slow_acquire_threshold_secs").is_some() => {
                Some(DriverEvent::SlowAcquire)
            }
            "sqlx::query" if fields.field("slow_threshold").is_some() => Some(DriverEvent::SlowStatement),
            _ => None,
        }
    }
}

/// Counts one driver event, shown by every [`Metrics::render`] of this
/// process (`arbiter_database_slow_acquires_total`,
/// `arbiter_database_slow_statements_total`) and read by
/// [`slow_database_counts`]. The binary's log calls it: the driver logs
/// these below the log's default level, and the binary sums them up in a
/// line a minute at most.
pub fn count_driver_event(event: DriverEvent) {
    match event {
        DriverEvent::SlowAcquire => SLOW_ACQUIRES.fetch_add(1, Ordering::Relaxed),
        DriverEvent::SlowStatement => SLOW_STATEMENTS.fetch_add(1, Ordering::Relaxed),
    };
}

/// The slow waits for a connection and slow statements counted in this
/// process so far: `(acquires, statements)`.
pub fn slow_database_counts() -> (u64, u64) {
    (
        SLOW_ACQUIRES.load(Ordering::Relaxed),
        SLOW_STATEMENTS.load(Ordering::Relaxed),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of the sample `name` (no labels) in `text`.
    fn sample(text: &str, name: &str) -> Option<f64> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    /// A front end whose pool is busy (every connection taken, so the
    /// queue's depth cannot be read in time) still reads its database as
    /// up: reachable, with the probe's round trip beside it.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_busy_pool_is_not_a_database_down() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db"))
            .await
            .expect("a database");
        let sandbox = Sandbox::new(arbiter_sandbox::SandboxConfig {
            cache_dir: Some(dir.path().join("compiled")),
            instance_slots: 1,
            ..arbiter_sandbox::SandboxConfig::default()
        })
        .expect("a sandbox");
        let metrics = Metrics::new(&sandbox);
        let text = metrics.render(&db).await;
        assert_eq!(sample(&text, "arbiter_database_up"), Some(1.0), "{text}");
        let mut held = Vec::new();
        while let Ok(Ok(connection)) = tokio::time::timeout(Duration::from_millis(200), db.pool.acquire()).await {
            held.push(connection);
        }
        assert!(!held.is_empty(), "the pool's connections are all taken");
        let started = Instant::now();
        let text = metrics.render(&db).await;
        assert!(
            started.elapsed() < QUEUE_READ_WAIT * 2,
            "the scrape does not wait on the pool"
        );
        assert_eq!(sample(&text, "arbiter_database_up"), Some(1.0), "a busy pool: {text}");
        let round_trip = sample(&text, "arbiter_database_probe_seconds").expect("the probe's round trip");
        assert!((0.0..1.0).contains(&round_trip), "{round_trip}");
        assert!(sample(&text, "arbiter_queue_read_age_seconds").is_some(), "{text}");
        drop(held);
    }

    /// The disk caches' sizes, bounds and evictions are there from the
    /// first scrape, labelled by cache.
    #[tokio::test(flavor = "multi_thread")]
    async fn disk_caches_show_their_bounds() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db"))
            .await
            .expect("a database");
        let sandbox = Sandbox::new(arbiter_sandbox::SandboxConfig {
            cache_dir: Some(dir.path().join("compiled")),
            compile_cache_bytes: 123_456,
            function_cache_bytes: 654_321,
            instance_slots: 1,
            ..arbiter_sandbox::SandboxConfig::default()
        })
        .expect("a sandbox");
        let text = Metrics::new(&sandbox).render(&db).await;
        for (cache, limit) in [("modules", 123_456.0), ("functions", 654_321.0)] {
            let series = |name: &str| format!("{name}{{cache=\"{cache}\"}}");
            assert_eq!(
                sample(&text, &series("arbiter_compile_cache_limit_bytes")),
                Some(limit),
                "{text}"
            );
            assert_eq!(
                sample(&text, &series("arbiter_compile_cache_bytes")),
                Some(0.0),
                "{text}"
            );
            assert_eq!(
                sample(&text, &series("arbiter_compile_cache_evictions_total")),
                Some(0.0),
                "{text}"
            );
        }
    }

    /// The driver's slow waits and statements are told apart by their
    /// fields and counted, whatever their level; other driver lines are not.
    #[test]
    fn driver_events_are_recognised_by_their_fields() {
        struct Classify(std::sync::Arc<Mutex<Vec<Option<DriverEvent>>>>);
        impl tracing::Subscriber for Classify {
            fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
                true
            }
            fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
                tracing::span::Id::from_u64(1)
            }
            fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
            fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
            fn event(&self, event: &tracing::Event<'_>) {
                lock(&self.0).push(DriverEvent::of(event.metadata()));
            }
            fn enter(&self, _: &tracing::span::Id) {}
            fn exit(&self, _: &tracing::span::Id) {}
        }
        let seen = std::sync::Arc::new(Mutex::new(Vec::new()));
        tracing::subscriber::with_default(Classify(seen.clone()), || {
            tracing::info!(
                target: "sqlx::pool::acquire",
                acquired_after_secs = 2.5,
                slow_acquire_threshold_secs = 2.0,
                "acquired connection, but time to acquire exceeded slow threshold"
            );
            tracing::warn!(target: "sqlx::query", summary = "select 1", slow_threshold = ?Duration::from_secs(1), "slow statement");
            tracing::debug!(target: "sqlx::query", summary = "select 1", elapsed_secs = 0.001);
            tracing::info!(target: "sqlx::pool::acquire", acquired_after_secs = 0.1, "acquired connection");
        });
        assert_eq!(
            *lock(&seen),
            [
                Some(DriverEvent::SlowAcquire),
                Some(DriverEvent::SlowStatement),
                None,
                None
            ]
        );
    }
}
