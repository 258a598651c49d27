//! The database driver's slow waits for a connection and slow statements,
//! counted and summed up in one log line a minute at most rather than
//! logged one by one: the pool logs them below the log's default level
//! (see `arbiter_ladder::db`), this layer counts them whatever the log
//! shows, and every scrape shows the counts
//! (`arbiter_database_slow_acquires_total`,
//! `arbiter_database_slow_statements_total`).

use arbiter_ladder::metrics::{DriverEvent, count_driver_event, slow_database_counts};
use std::time::Duration;
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::Layer;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::Context;

/// How often at most the summary line is written.
pub const SUMMARY_INTERVAL: Duration = Duration::from_secs(60);

/// A log layer that counts the driver's slow events.
#[derive(Clone, Copy, Debug)]
pub struct SlowDatabase;

impl<S: Subscriber> Layer<S> for SlowDatabase {
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if let Some(event) = DriverEvent::of(event.metadata()) {
            count_driver_event(event);
        }
    }
}

/// [`SlowDatabase`], seeing the driver's targets down to the level the
/// pool logs slow events at (INFO).
pub fn counting<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>>() -> impl Layer<S> {
    SlowDatabase.with_filter(
        Targets::new()
            .with_target("sqlx::pool::acquire", Level::INFO)
            .with_target("sqlx::query", Level::INFO),
    )
}

/// [`counting`], with a thread that writes the summary line every
/// [`SUMMARY_INTERVAL`] in which the driver was slow.
pub fn layer<S: Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>>() -> impl Layer<S> {
    let started = std::thread::Builder::new().name("arbiter-slow-db".into()).spawn(|| {
        let mut last = slow_database_counts();
        loop {
            std::thread::sleep(SUMMARY_INTERVAL);
            let now = slow_database_counts();
            if let Some(line) = summary(last, now) {
                tracing::warn!(
                    slow_acquires = now.0 - last.0,
                    slow_statements = now.1 - last.1,
                    "{line}"
                );
            }
            last = now;
        }
    });
    if let Err(error) = started {
        eprintln!("arbiter: cannot start the thread that sums up slow database operations: {error}");
    }
    counting()
}

/// The summary line for the counts `(acquires, statements)` going from
/// `before` to `after`, if they moved.
pub fn summary(before: (u64, u64), after: (u64, u64)) -> Option<String> {
    let acquires = after.0.saturating_sub(before.0);
    let statements = after.1.saturating_sub(before.1);
    if acquires == 0 && statements == 0 {
        return None;
    }
    let plural = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    Some(format!(
        "the database was slow in the last {} s: {} over 2 s, {} over 1 s (totals in \
         arbiter_database_slow_acquires_total and arbiter_database_slow_statements_total; \
         RUST_LOG=info,sqlx=info logs each)",
        SUMMARY_INTERVAL.as_secs(),
        plural(acquires, "wait for a connection", "waits for a connection"),
        plural(statements, "statement", "statements"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};
    use tracing_subscriber::layer::SubscriberExt;

    /// Records the target and level of every event it sees.
    struct Record(Arc<Mutex<Vec<(String, Level)>>>);

    impl<S: Subscriber> Layer<S> for Record {
        fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
            let metadata = event.metadata();
            if let Ok(mut seen) = self.0.lock() {
                seen.push((metadata.target().to_owned(), *metadata.level()));
            }
        }
    }

    /// A real slow wait for a pooled connection (every connection taken,
    /// one given back after 2.2 s) is logged by the driver at INFO, not
    /// WARN, and counted.
    #[test]
    fn a_slow_wait_for_a_connection_is_counted_not_warned() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let subscriber = tracing_subscriber::registry()
            .with(counting())
            .with(Record(seen.clone()).with_filter(Targets::new().with_target("sqlx", Level::INFO)));
        let before = slow_database_counts();
        tracing::subscriber::with_default(subscriber, || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                let dir = tempfile::tempdir().expect("a temporary folder");
                let db = arbiter_ladder::db::Db::open_sqlite(&dir.path().join("arbiter.db"))
                    .await
                    .expect("a database");
                let mut held = Vec::new();
                while let Ok(Ok(connection)) = tokio::time::timeout(Duration::from_millis(200), db.pool.acquire()).await
                {
                    held.push(connection);
                }
                let waiting = db.pool.acquire();
                let give_back = async {
                    tokio::time::sleep(Duration::from_millis(2200)).await;
                    held.pop();
                };
                let (acquired, ()) = tokio::join!(waiting, give_back);
                acquired.expect("a connection after the wait");
            });
        });
        let after = slow_database_counts();
        assert!(after.0 > before.0, "the slow wait is counted: {before:?} → {after:?}");
        let seen = seen.lock().expect("the record").clone();
        assert!(
            seen.iter()
                .any(|(target, level)| target == "sqlx::pool::acquire" && *level == Level::INFO),
            "{seen:?}"
        );
        assert!(
            !seen.iter().any(|(_, level)| *level <= Level::WARN),
            "nothing from the driver at WARN: {seen:?}"
        );
        let line = summary(before, after).expect("a line");
        assert!(line.contains("wait for a connection over 2 s"), "{line}");
    }

    #[test]
    fn the_summary_says_what_moved() {
        assert_eq!(summary((3, 4), (3, 4)), None);
        let line = summary((0, 0), (2, 1)).expect("a line");
        assert!(
            line.starts_with(
                "the database was slow in the last 60 s: 2 waits for a connection over 2 s, 1 statement over 1 s"
            ),
            "{line}"
        );
    }
}
