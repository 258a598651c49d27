//! Prometheus metrics: what an operator graphs and alerts on (ladder.md,
//! "What an operator watches"). Each process counts what it did itself
//! (matches it played, checks it ran, requests it answered); the queue's
//! depth, the database's health and the compile cache are read when
//! scraped.
//!
//! A scrape never waits on the database for long: the queue's depth is
//! read for at most [`QUEUE_READ_WAIT`], and when the read fails or is late
//! the last successful read is shown with its age
//! (`arbiter_queue_read_age_seconds`) and `arbiter_database_up` is 0. Every
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
    Encoder, GaugeVec, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
    exponential_buckets,
};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a scrape waits for the queue's depth from the database before
/// it answers with the last successful read (and `arbiter_database_up` 0).
pub const QUEUE_READ_WAIT: Duration = Duration::from_millis(750);

/// The statuses `arbiter_queue_matches` counts.
pub const QUEUE_STATUSES: [&str; 2] = ["queued", "running"];
/// The verdicts of `arbiter_check_duration_seconds`.
pub const CHECK_VERDICTS: [&str; 3] = ["active", "rejected", "error"];
/// Where `arbiter_module_loads_total` says a module came from.
pub const MODULE_SOURCES: [&str; 3] = ["memory", "disk", "compile"];

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
    module_loads: IntCounterVec,
    /// The last successful read of the queue's depth.
    last_queue: Mutex<Option<QueueRead>>,
    /// Whether a read of the queue's depth is under way (a scrape does
    /// not start another one while a late one still waits on the database).
    reading: AtomicBool,
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
                    Opts::new("database_up", "1 while the database answers, 0 while it does not").namespace("arbiter"),
                )
                .expect("a valid metric"),
            ),
            module_loads: counters(
                &r,
                "module_loads_total",
                "Modules the sandbox loaded, by where from: memory (a cache hit), disk (compiled before) or compile",
                &["source"],
            ),
            sandbox: sandbox.clone(),
            registry: r,
            last_queue: Mutex::new(None),
            reading: AtomicBool::new(false),
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
    /// `took`.
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

    /// The metrics in Prometheus's text format, within about
    /// [`QUEUE_READ_WAIT`] whatever the database does: the queue's depth is
    /// read from `db`, or else the last successful read is shown (with its
    /// age) and `arbiter_database_up` is 0.
    pub async fn render(&self, db: &Db) -> String {
        let read_now = self.read_queue(db).await;
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
        inner.database_up.set(i64::from(read_now && db.is_up()));
        let stats = inner.sandbox.cache_stats();
        for (source, count) in MODULE_SOURCES
            .into_iter()
            .zip([stats.memory_hits, stats.disk_hits, stats.compiles])
        {
            let counter = inner.module_loads.with_label_values(&[source]);
            counter.reset();
            counter.inc_by(count);
        }
        let mut text = Vec::new();
        if let Err(error) = TextEncoder::new().encode(&inner.registry.gather(), &mut text) {
            tracing::warn!(%error, "metrics: cannot encode");
        }
        String::from_utf8(text).unwrap_or_default()
    }
}
