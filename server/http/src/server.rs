//! `arbiter serve`: the web server, the scheduler, the checker and the
//! in-process workers, sharing one [`Core`].

use anyhow::Context;
use arbiter_games::Budget;
use arbiter_ladder::core::Core;
use arbiter_ladder::db::DbOptions;
use arbiter_ladder::ratings::RatingSystem;
use arbiter_sandbox::CompilerCommand;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;

/// Settings of `arbiter serve`.
#[derive(Clone, Debug)]
pub struct ServerConfig {
    /// Where the SQLite database and the blobs live.
    pub data_dir: PathBuf,
    /// Address to listen on.
    pub listen: SocketAddr,
    /// In-process workers.
    pub workers: usize,
    /// `postgres://…` to use PostgreSQL instead of SQLite.
    pub database_url: Option<String>,
    /// `s3://BUCKET[/PREFIX]` (or a folder) for modules and replays instead
    /// of the data directory.
    pub blobs: Option<String>,
    /// Whether to keep the ladders playing (off for tests that queue
    /// matches themselves).
    pub schedule: bool,
    /// Glicko-2 or Elo.
    pub rating: RatingSystem,
    /// Reverse proxies whose `X-Forwarded-For` is believed: behind them the
    /// client address (for rate limits) is the last address that is not one
    /// of them. Empty (the default): the TCP peer is the client.
    pub trusted_proxies: Vec<IpAddr>,
    /// Mark the session cookie `Secure` (the site is served over HTTPS).
    pub secure_cookies: bool,
    /// Ladders whose per-move cap and per-game bank are set at start (for
    /// matches queued from then on); the others keep what they have.
    pub time_controls: Vec<(String, Budget)>,
    /// How long running matches may go on finishing when the server stops.
    /// Default 5 s.
    pub grace: Duration,
    /// How web requests wait for the database (default [`DbOptions::WEB`]):
    /// past it they answer 503.
    pub web_db: DbOptions,
    /// How workers, the scheduler and the checker wait for the database
    /// (default [`DbOptions::BACKGROUND`]).
    pub background_db: DbOptions,
    /// How the sandbox starts its compiler child (the `arbiter` binary
    /// passes itself with a hidden subcommand). Default
    /// [`CompilerCommand::sibling`]: `arbiter-compile` beside this
    /// executable.
    pub compiler: CompilerCommand,
    /// Whether remote bots' URLs may point at loopback, private and other
    /// non-public addresses (a LAN, tests). Off by default.
    pub allow_private_bot_urls: bool,
}

impl Default for ServerConfig {
    fn default() -> ServerConfig {
        ServerConfig {
            data_dir: PathBuf::from("arbiter-data"),
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            workers: std::thread::available_parallelism().map_or(1, usize::from),
            database_url: None,
            blobs: None,
            schedule: true,
            rating: RatingSystem::Glicko2,
            trusted_proxies: Vec::new(),
            secure_cookies: false,
            time_controls: Vec::new(),
            grace: Duration::from_secs(5),
            web_db: DbOptions::WEB,
            background_db: DbOptions::BACKGROUND,
            compiler: CompilerCommand::sibling(),
            allow_private_bot_urls: false,
        }
    }
}

/// What request handlers see.
#[derive(Clone, Debug)]
pub struct AppState {
    /// The shared core.
    pub core: Core,
    /// The server's settings.
    pub config: Arc<ServerConfig>,
    /// The live event streams open now.
    pub streams: crate::api::events::Streams,
}

/// Runs the server until `shutdown` completes: prints `listening on
/// http://ADDR` once the socket is bound. Then it stops gracefully: no new
/// matches are claimed and no new connections accepted, the running matches
/// may finish for [`ServerConfig::grace`], the rest go back to the queue
/// without counting an attempt, and it returns.
pub async fn serve(config: ServerConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    // Watched from the start: a stop while the database is waited for is a
    // clean exit too.
    tokio::pin!(shutdown);
    let opened = Core::open_with(
        &config.data_dir,
        config.database_url.as_deref(),
        config.blobs.as_deref(),
        config.rating,
        config.background_db,
        config.compiler.clone(),
    );
    let mut core = tokio::select! {
        core = opened => core?,
        () = &mut shutdown => {
            tracing::info!("stopped before starting");
            return Ok(());
        }
    };
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .with_context(|| format!("cannot listen on {}", config.listen))?;
    let address = listener.local_addr()?;
    // The process's first line (unless the database kept it waiting):
    // what it is, where it answers, what it uses.
    tracing::info!(
        "arbiter {} serve: listening on http://{address}; database {}; blobs in the {}; {}",
        env!("CARGO_PKG_VERSION"),
        core.db.describe(),
        core.blobs.describe(),
        match config.workers {
            0 => "no in-process workers (a front end: `arbiter worker`s play the matches)".to_owned(),
            1 => "1 in-process worker".to_owned(),
            n => format!("{n} in-process workers"),
        }
    );
    if config.allow_private_bot_urls {
        core.remote_urls = arbiter_remote::AddressPolicy::ANY;
        tracing::warn!(
            "--allow-private-bot-urls: remote bots' URLs may point at loopback and private addresses, \
             including this machine's own services"
        );
    }
    for (ladder, budget) in &config.time_controls {
        let change = arbiter_ladder::ladders::apply_time_control_of(&core.db, ladder, *budget, None).await?;
        if change.changed() {
            tracing::info!(ladder = %ladder, "time control {} (was {})", change.after, change.before);
        }
    }
    arbiter_ladder::house::seed(&core)
        .await
        .map_err(|e| anyhow::anyhow!("cannot register the house bots: {}", e.detail()))?;
    let (stop_tx, stop) = watch::channel(false);
    let mut tasks = tokio::task::JoinSet::new();
    tasks.spawn(arbiter_ladder::versions::run_checker(core.clone(), stop.clone()));
    if config.schedule {
        tasks.spawn(arbiter_ladder::scheduler::run(
            core.clone(),
            arbiter_ladder::scheduler::SchedulerConfig::default(),
            stop.clone(),
        ));
    }
    // The agent hall: agent bots' matches, on this process's clock (every
    // agent request of a deployment reaches this process).
    tasks.spawn(core.agents.clone().run(core.clone(), stop.clone()));
    // Games people were playing when an earlier process stopped: aborted,
    // with a notice on their pages.
    match arbiter_ladder::people::People::abort_left_over(&core).await {
        Ok(0) => {}
        Ok(n) => tracing::info!("{n} games against people were left by an earlier run: aborted"),
        Err(error) => tracing::warn!(%error, "cannot close games against people left from an earlier run"),
    }
    let people = core.people.clone();
    let workers = arbiter_ladder::worker::Workers::start(&core, "serve", config.workers);
    let grace = config.grace;
    // Web requests have a pool of their own that gives up sooner.
    let web = Core {
        db: core.db.with_options(config.web_db),
        ..core
    };
    let meanwhile = if config.workers == 0 {
        "web requests get 503"
    } else {
        "web requests get 503 and matches wait"
    };
    tasks.spawn(web.db.clone().watch(stop.clone(), meanwhile));
    let state = AppState {
        core: web,
        config: Arc::new(config),
        streams: crate::api::events::Streams::default(),
    };
    let app = crate::router::app(state);
    println!("listening on http://{address}");
    let (http_stop_tx, http_stop) = watch::channel(false);
    let mut http = tokio::spawn(serve_http(listener, app, http_stop));
    tokio::select! {
        () = shutdown => {}
        served = &mut http => {
            served.context("the web server task failed")?;
        }
    }
    let _ = http_stop_tx.send(true);
    // Games against people end now, as aborted (their rows say so).
    people.stop_all();
    workers.stop(grace).await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    // Open event streams never end by themselves: give requests a moment.
    if tokio::time::timeout(Duration::from_secs(1), &mut http).await.is_err() {
        http.abort();
    }
    tracing::info!("stopped");
    Ok(())
}

/// How long a client may take to send a request's headers before its
/// connection is closed: a stranger cannot hold connections open by never
/// finishing a request.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves `app` on `listener` (HTTP/1 and HTTP/2, each request knowing its
/// peer address, headers within [`HEADER_READ_TIMEOUT`]) until `stop` turns
/// true, then waits for the open connections to finish their requests.
pub async fn serve_http(listener: tokio::net::TcpListener, app: axum::Router, mut stop: watch::Receiver<bool>) {
    use axum::extract::ConnectInfo;
    use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
    use hyper_util::server::conn::auto::Builder;
    use hyper_util::service::TowerToHyperService;
    use tower::ServiceExt;

    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder.http2().timer(TokioTimer::new());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        let (stream, peer) = match accepted {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of file descriptors and the like: wait, go on.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let service = app
            .clone()
            .map_request(move |mut request: axum::http::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                request
            });
        let connection = builder
            .serve_connection_with_upgrades(TokioIo::new(stream), TowerToHyperService::new(service))
            .into_owned();
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%peer, %error, "connection ended");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
