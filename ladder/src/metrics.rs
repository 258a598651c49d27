//! Prometheus metrics: what an operator graphs and alerts on (ladder.md,
//! "What an operator watches"). Each process counts what it did itself
//! (matches it played, checks it ran, requests it answered); the queue's
//! depth, the database's health and the compile cache are read when
//! scraped.
//!
//! One [`Metrics`] per [`crate::core::Core`], never a global registry, so
//! that several servers in one process (the tests) count apart.

use crate::db::Db;
use arbiter_sandbox::Sandbox;
use prometheus::{
    Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry, TextEncoder,
    exponential_buckets,
};
use std::sync::Arc;
use std::time::Duration;

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
    database_up: IntGauge,
    module_loads: IntCounterVec,
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
        };
        Metrics { inner: Arc::new(inner) }
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

    /// The metrics in Prometheus's text format, after reading the queue's
    /// depth from `db` (left out, and `arbiter_database_up` 0, when the
    /// database does not answer).
    pub async fn render(&self, db: &Db) -> String {
        let inner = &self.inner;
        let rows: Result<Vec<(String, String, String, i64)>, sqlx::Error> = sqlx::query_as(
            "SELECT ladder, kind, status, COUNT(*) FROM matches \
             WHERE status IN ('queued', 'running') GROUP BY ladder, kind, status",
        )
        .fetch_all(&db.pool)
        .await;
        inner.queue.reset();
        let up = match rows {
            Ok(rows) => {
                for (ladder, kind, status, count) in rows {
                    inner.queue.with_label_values(&[&ladder, &kind, &status]).set(count);
                }
                db.is_up()
            }
            Err(error) => {
                tracing::warn!(%error, "metrics: cannot read the queue");
                false
            }
        };
        inner.database_up.set(i64::from(up));
        let stats = inner.sandbox.cache_stats();
        for (source, count) in [
            ("memory", stats.memory_hits),
            ("disk", stats.disk_hits),
            ("compile", stats.compiles),
        ] {
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
