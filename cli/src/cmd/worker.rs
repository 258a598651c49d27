//! `arbiter worker`: play queued matches from a shared database.

use anyhow::Context;
use arbiter_http::server::serve_http;
use arbiter_ladder::core::Core;
use arbiter_ladder::ratings::RatingSystem;
use arbiter_ladder::worker::Workers;
use std::path::PathBuf;

/// The prefix of this command's worker ids (`worker-PID-SLOT`).
const WORKER_PREFIX: &str = "worker";

/// Claims queued matches from the database and plays them, with a lease and
/// heartbeats, so any number of workers on any machines can share one queue
/// and die at any moment without losing or double-counting a match.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter worker --data arbiter-data              # next to `arbiter serve` on one machine\n",
    "  DATABASE_URL=postgres://arbiter@db/arbiter arbiter worker --slots 4 --blobs s3://arbiter-blobs\n",
    "  arbiter worker --metrics 0.0.0.0:9187           # Prometheus scrapes http://HOST:9187/metrics",
))]
pub struct Args {
    /// Data folder (blobs and compiled code; the SQLite database unless DATABASE_URL is set).
    #[arg(long, default_value = "arbiter-data")]
    data: PathBuf,
    /// PostgreSQL instead of SQLite.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Where modules and replays are: `s3://BUCKET[/PREFIX]` (with the usual
    /// AWS_* variables) or a folder, as given to `arbiter serve`; default
    /// DATA/blobs.
    #[arg(long, env = "ARBITER_BLOBS", value_name = "LOCATION")]
    blobs: Option<String>,
    /// Matches played at once.
    #[arg(long, default_value_t = 1)]
    slots: usize,
    /// Rating system (must match the server's).
    #[arg(long, value_enum, default_value = "glicko2")]
    rating: RatingSystem,
    /// On SIGTERM or Ctrl-C, how long running matches may go on finishing
    /// before they go back to the queue (a second signal exits at once).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    grace: f64,
    /// How long a worker waits for a database connection before an attempt
    /// fails (and is tried again).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, env = "ARBITER_DB_TIMEOUT")]
    db_timeout: f64,
    /// Let remote bots' URLs point at loopback, private, link-local and
    /// other non-public addresses: for a LAN or tests. Off by default (such
    /// URLs are refused), logged at start when on.
    #[arg(long, env = "ARBITER_ALLOW_PRIVATE_BOT_URLS")]
    allow_private_bot_urls: bool,
    /// Serve this worker's Prometheus metrics at http://ADDR/metrics.
    #[arg(long, value_name = "ADDR")]
    metrics: Option<std::net::SocketAddr>,
}

/// Runs `arbiter worker` until SIGTERM or Ctrl-C, then stops gracefully:
/// claims nothing more, lets the running matches finish for `--grace`, puts
/// the rest back in the queue without counting an attempt, and returns.
pub fn run(args: Args) -> anyhow::Result<()> {
    let grace = super::shutdown::grace(args.grace)?;
    let db_options = super::db_options("--db-timeout", args.db_timeout)?;
    super::runtime()?.block_on(async move {
        // Listening from the start: a stop while the database is waited for
        // is a clean exit too.
        let signal = super::shutdown::first_signal();
        tokio::pin!(signal);
        let mut core = tokio::select! {
            core = Core::open_with(
                &args.data,
                args.database_url.as_deref(),
                args.blobs.as_deref(),
                args.rating,
                db_options,
                arbiter_ladder::budget::Budgets::worker_only(args.slots.max(1)),
                crate::sandbox::compiler()?,
            ) => core?,
            () = &mut signal => {
                tracing::info!("stopped before starting");
                return Ok(());
            }
        };
        if args.allow_private_bot_urls {
            core.remote_urls = arbiter_remote::AddressPolicy::ANY;
            tracing::warn!("--allow-private-bot-urls: remote bots' URLs may point at loopback and private addresses");
        }
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        let watch = tokio::spawn(core.db.clone().watch(stop.clone(), "matches wait"));
        let slots = args.slots.max(1);
        let id = format!("{WORKER_PREFIX}-{}", std::process::id());
        let (metrics, metrics_url) = match args.metrics {
            Some(address) => {
                let listener = tokio::net::TcpListener::bind(address)
                    .await
                    .with_context(|| format!("cannot listen on {address} for metrics"))?;
                let url = format!("http://{}/metrics", listener.local_addr()?);
                println!("metrics on {url}");
                let app = arbiter_http::router::metrics_router(core.clone());
                (Some(tokio::spawn(serve_http(listener, app, stop.clone()))), Some(url))
            }
            None => (None, None),
        };
        // The process's first line (unless the database kept it waiting):
        // who it is, what it uses, where its metrics are.
        let playing_as = match slots {
            1 => format!("1 slot, playing as {id}-0"),
            n => format!("{n} slots, playing as {id}-0 to {id}-{}", n - 1),
        };
        tracing::info!(
            "arbiter {} worker {id}: {playing_as}; database {}; blobs in the {}; {}",
            env!("CARGO_PKG_VERSION"),
            core.db.describe(),
            core.blobs.describe(),
            metrics_url.map_or_else(
                || "no metrics (see --metrics)".to_owned(),
                |url| format!("metrics on {url}")
            ),
        );
        let workers = Workers::start(&core, WORKER_PREFIX, slots);
        signal.await;
        workers.stop(grace).await;
        let _ = stop_tx.send(true);
        let _ = watch.await;
        if let Some(metrics) = metrics {
            let _ = metrics.await;
        }
        tracing::info!("stopped");
        Ok(())
    })
}
