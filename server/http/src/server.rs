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
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
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
    /// How many leading bits of an IPv6 address name one client for every
    /// per-client limit (default 64: a /64 is one subscriber or one LAN).
    pub ipv6_client_prefix: u8,
    /// Where the other front ends sharing the database reach this one's
    /// agent hall; `None`: `http://` and the listening address (loopback
    /// for an unspecified one).
    pub hall_url: Option<String>,
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
            ipv6_client_prefix: arbiter_ladder::quota::DEFAULT_IPV6_CLIENT_PREFIX,
            hall_url: None,
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
/// without counting an attempt; meanwhile every request already accepted is
/// answered within the same grace (see [`serve_http_within`]); and it
/// returns.
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
        arbiter_ladder::budget::Budgets::with_workers(config.workers),
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
    // The agent hall: agent bots' matches, on this process's clock. The
    // matches an earlier process saved are resumed before any request is
    // answered, so that no agent finds its match missing.
    // With several front ends on one database, one hall leads and the
    // others forward live requests to it (crate::forward).
    let hall_url = config.hall_url.clone().unwrap_or_else(|| {
        let mut reachable = address;
        if reachable.ip().is_unspecified() {
            reachable.set_ip(std::net::IpAddr::from([127, 0, 0, 1]));
        }
        format!("http://{reachable}")
    });
    core.agents.announce(&hall_url);
    core.agents.begin(&core).await;
    tasks.spawn(core.agents.clone().run(core.handles.clone(), stop.clone()));
    // Games people were playing when an earlier process stopped: resumed
    // by the front end whose hall leads, before it answers anything (the
    // others forward /play to it); the hold on them kept meanwhile.
    if core.agents.is_leading() {
        match core.people.take_over(&core).await {
            Ok(0) => {}
            Ok(n) => tracing::info!("{n} games against people resumed from an earlier run"),
            Err(error) => tracing::warn!(%error, "cannot resume the games against people of an earlier run"),
        }
    }
    let hall = core.agents.clone();
    tasks.spawn(
        core.people
            .clone()
            .run(core.handles.clone(), stop.clone(), move || hall.is_leading()),
    );
    let people = core.people.clone();
    let workers = arbiter_ladder::worker::Workers::start(&core, "serve", config.workers);
    let grace = config.grace;
    // Web requests have a pool of their own that gives up sooner.
    let web = Core {
        handles: arbiter_ladder::core::Handles {
            db: core.db.with_options(config.web_db),
            ..core.handles.clone()
        },
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
    let mut http = tokio::spawn(serve_http_within(listener, app, http_stop, grace));
    tokio::select! {
        () = shutdown => {}
        served = &mut http => {
            served.context("the web server task failed")?;
        }
    }
    let _ = http_stop_tx.send(true);
    // Games against people are released now, for the next process to
    // resume (their rows keep every move).
    people.stop_all();
    let unwritten = people.written(grace).await;
    if unwritten > 0 {
        tracing::warn!(
            "{unwritten} games against people were not yet released at exit; the next process takes them when their hold runs out"
        );
    }
    workers.stop(grace).await;
    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        while tasks.join_next().await.is_some() {}
    })
    .await;
    // The web server has answered what it accepted, or closed what was
    // left at the end of the grace (counted meanwhile).
    if tokio::time::timeout(grace + Duration::from_secs(2), &mut http)
        .await
        .is_err()
    {
        http.abort();
    }
    tracing::info!("stopped");
    Ok(())
}

/// How long a client may take to send a request's headers before its
/// connection is closed: a stranger cannot hold connections open by never
/// finishing a request.
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);

/// How long [`serve_http`] goes on answering after `stop`: the default
/// [`ServerConfig::grace`].
pub const HTTP_GRACE: Duration = Duration::from_secs(5);

/// [`serve_http_within`] with a grace of [`HTTP_GRACE`].
pub async fn serve_http(listener: tokio::net::TcpListener, app: axum::Router, stop: watch::Receiver<bool>) {
    serve_http_within(listener, app, stop, HTTP_GRACE).await;
}

/// Serves `app` on `listener` (HTTP/1 and HTTP/2, each request knowing its
/// peer address, headers within [`HEADER_READ_TIMEOUT`]) until `stop` turns
/// true, then stops within `grace` and returns:
///
/// - connections the system accepted that were not yet taken are taken,
///   and the socket is closed: no new connection is accepted;
/// - every request already sent is read and answered, on a connection
///   open before the stop or one of those; a connection that has not
///   sent its first request yet is waited for, and its first request
///   answered;
/// - each HTTP/1 connection closes after its answer (`Connection: close`),
///   or at once when it is between requests with nothing sent; HTTP/2
///   connections get a GOAWAY;
/// - event streams end (their clients reconnect elsewhere);
/// - what is still open at the end of `grace` is closed (requests without
///   their answer are counted as abandoned, 499), and their number logged.
pub async fn serve_http_within(
    listener: tokio::net::TcpListener,
    app: axum::Router,
    mut stop: watch::Receiver<bool>,
    grace: Duration,
) {
    use hyper_util::rt::{TokioExecutor, TokioTimer};
    use hyper_util::server::conn::auto::Builder;

    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT);
    builder.http2().timer(TokioTimer::new());
    let (open, mut all_closed) = tokio::sync::mpsc::channel::<()>(1);
    let connections = Connections {
        app,
        builder,
        stop: stop.clone(),
        grace,
        open,
        cut: Arc::default(),
    };
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => break,
        };
        match accepted {
            Ok((stream, peer)) => connections.serve(stream, peer),
            Err(error) => {
                // Out of file descriptors and the like: wait, go on.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    // Connections the system accepted before the stop that the loop had not
    // taken yet: their clients may have sent their requests already.
    match listener.into_std() {
        Ok(listener) => loop {
            match listener.accept() {
                Ok((stream, peer)) => {
                    let stream = stream
                        .set_nonblocking(true)
                        .and_then(|()| tokio::net::TcpStream::from_std(stream));
                    match stream {
                        Ok(stream) => connections.serve(stream, peer),
                        Err(error) => tracing::warn!(%error, "cannot serve a connection accepted at the stop"),
                    }
                }
                Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => break,
                Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
                Err(error) => {
                    tracing::warn!(%error, "cannot accept a connection at the stop");
                    break;
                }
            }
        },
        Err(error) => tracing::warn!(%error, "cannot take the connections waiting at the stop"),
    }
    let cut = connections.cut.clone();
    drop(connections);
    // Every connection's task holds a sender: `None` once all have ended.
    let _ = tokio::time::timeout(grace + Duration::from_secs(1), all_closed.recv()).await;
    let cut = cut.load(Ordering::Relaxed);
    if cut > 0 {
        tracing::info!(
            "{cut} connections still open at the end of the {:.1} s grace were closed",
            grace.as_secs_f64()
        );
    }
}

/// What every connection of [`serve_http_within`] is served with.
struct Connections {
    app: axum::Router,
    builder: hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
    stop: watch::Receiver<bool>,
    grace: Duration,
    /// Held by every connection's task until it ends.
    open: tokio::sync::mpsc::Sender<()>,
    /// How many connections were closed at the end of the grace.
    cut: Arc<AtomicUsize>,
}

impl Connections {
    /// Serves `stream` from `peer` in a task of its own.
    fn serve(&self, stream: tokio::net::TcpStream, peer: SocketAddr) {
        use axum::extract::ConnectInfo;
        use hyper_util::rt::TokioIo;
        use hyper_util::service::TowerToHyperService;
        use tower::ServiceExt;

        let state = Arc::new(ConnectionState::default());
        let io = TokioIo::new(Watched {
            stream,
            state: state.clone(),
            stop: self.stop.clone(),
        });
        let app = self.app.clone();
        let service = tower::service_fn({
            let (state, stop) = (state.clone(), self.stop.clone());
            move |mut request: axum::http::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(ConnectInfo(peer));
                let answering = Answering::start(&state);
                let (app, stop) = (app.clone(), stop.clone());
                let http1 = request.version() < axum::http::Version::HTTP_2;
                async move {
                    let mut response = app.oneshot(request).await?;
                    if http1 && *stop.borrow() {
                        // The last answer on this connection.
                        response.headers_mut().insert(
                            axum::http::header::CONNECTION,
                            axum::http::HeaderValue::from_static("close"),
                        );
                    }
                    let stream = response
                        .headers()
                        .get(axum::http::header::CONTENT_TYPE)
                        .is_some_and(|kind| kind.as_bytes().starts_with(b"text/event-stream"));
                    Ok::<_, std::convert::Infallible>(response.map(|body| {
                        axum::body::Body::new(Answer {
                            body,
                            stream,
                            stop,
                            _answering: answering,
                        })
                    }))
                }
            }
        });
        let connection = self
            .builder
            .serve_connection_with_upgrades(io, TowerToHyperService::new(service))
            .into_owned();
        let (mut stop, grace, open, cut) = (self.stop.clone(), self.grace, self.open.clone(), self.cut.clone());
        tokio::spawn(async move {
            let _open = open;
            tokio::pin!(connection);
            tokio::select! {
                ended = connection.as_mut() => {
                    if let Err(error) = ended {
                        tracing::debug!(%peer, %error, "connection ended");
                    }
                    return;
                }
                _ = stop.wait_for(|stop| *stop) => {}
            }
            // HTTP/1 closes by itself (see `Watched`); HTTP/2 is told to.
            if state.http2.load(Ordering::Relaxed) {
                connection.as_mut().graceful_shutdown();
            }
            match tokio::time::timeout(grace, connection).await {
                Ok(Ok(())) => {}
                Ok(Err(error)) => tracing::debug!(%peer, %error, "connection ended"),
                Err(_) => {
                    cut.fetch_add(1, Ordering::Relaxed);
                }
            }
        });
    }
}

/// What a connection's reads, writes and requests share: whether it is
/// between requests, so that a stop closes it then and only then.
#[derive(Debug, Default)]
struct ConnectionState {
    /// Requests begun.
    requests: AtomicU64,
    /// Requests begun whose answer is not yet all handed to the connection.
    answering: AtomicUsize,
    /// Bytes were read since the last request began with none answering:
    /// the start of the next request.
    partial: AtomicBool,
    /// Bytes were written since the last flush.
    unflushed: AtomicBool,
    /// Whether any byte was read yet.
    read_any: AtomicBool,
    /// An HTTP/2 connection (its preface was read).
    http2: AtomicBool,
    /// The read that waits for the connection to be between requests
    /// during a stop.
    parked: std::sync::Mutex<Option<std::task::Waker>>,
}

impl ConnectionState {
    /// Wakes the read parked during a stop, if there is one.
    fn wake(&self) {
        let parked = self
            .parked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take();
        if let Some(waker) = parked {
            waker.wake();
        }
    }

    /// Notes `bytes` read from the client.
    fn read(&self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        if !self.read_any.swap(true, Ordering::Relaxed) && bytes.starts_with(b"PRI ") {
            self.http2.store(true, Ordering::Relaxed);
        }
        if self.answering.load(Ordering::Acquire) == 0 {
            self.partial.store(true, Ordering::Relaxed);
        }
    }

    /// Whether an HTTP/1 connection is between requests: one was answered,
    /// no other is being answered, the answer is flushed and nothing of
    /// the next request has been read.
    fn between_requests(&self) -> bool {
        !self.http2.load(Ordering::Relaxed)
            && self.requests.load(Ordering::Relaxed) > 0
            && self.answering.load(Ordering::Acquire) == 0
            && !self.unflushed.load(Ordering::Relaxed)
            && !self.partial.load(Ordering::Relaxed)
    }
}

/// A request being answered, from its head until its answer's body has
/// all been handed to the connection (or dropped).
struct Answering(Arc<ConnectionState>);

impl Answering {
    /// A request of `state`'s connection begins.
    fn start(state: &Arc<ConnectionState>) -> Answering {
        state.requests.fetch_add(1, Ordering::Relaxed);
        state.answering.fetch_add(1, Ordering::AcqRel);
        state.partial.store(false, Ordering::Relaxed);
        Answering(state.clone())
    }
}

impl Drop for Answering {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::AcqRel);
        self.0.wake();
    }
}

/// An answer's body, which keeps its request counted as being answered
/// while it lives, and ends at a stop if it is an event stream.
struct Answer {
    body: axum::body::Body,
    /// An event stream (`text/event-stream`), which never ends by itself.
    stream: bool,
    stop: watch::Receiver<bool>,
    _answering: Answering,
}

impl hyper::body::Body for Answer {
    type Data = axum::body::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        if self.stream && *self.stop.borrow() {
            return std::task::Poll::Ready(None);
        }
        std::pin::Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.body.size_hint()
    }
}

/// A connection's socket as its HTTP connection reads and writes it, which
/// also tells when the connection is between requests. During a stop, an
/// HTTP/1 connection between requests reads at once what its client has
/// sent (past the runtime's readiness, which a busy process may not have
/// updated yet), and, when that is nothing, reads an end of stream: the
/// connection closes as if its client had closed it, and no request
/// already sent is left unread.
struct Watched {
    stream: tokio::net::TcpStream,
    state: Arc<ConnectionState>,
    stop: watch::Receiver<bool>,
}

impl Watched {
    /// Reads into `buf` what has arrived, without waiting: nothing (an end
    /// of stream) if nothing has.
    fn read_now(&self, buf: &mut tokio::io::ReadBuf<'_>) -> std::io::Result<()> {
        use std::io::Read;
        use std::os::fd::AsFd;
        // A second descriptor of the same socket (non-blocking like it),
        // read directly.
        let socket = std::net::TcpStream::from(self.stream.as_fd().try_clone_to_owned()?);
        match (&socket).read(buf.initialize_unfilled()) {
            Ok(read) => {
                buf.advance(read);
                let filled = buf.filled();
                self.state.read(&filled[filled.len() - read..]);
                Ok(())
            }
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => Ok(()),
            Err(error) => Err(error),
        }
    }
}

impl tokio::io::AsyncRead for Watched {
    fn poll_read(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        if *this.stop.borrow() {
            if this.state.between_requests() {
                return std::task::Poll::Ready(this.read_now(buf));
            }
            // Woken when the answer under way is handed over and flushed.
            *this
                .state
                .parked
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(cx.waker().clone());
        }
        let before = buf.filled().len();
        let polled = std::pin::Pin::new(&mut this.stream).poll_read(cx, buf);
        if let std::task::Poll::Ready(Ok(())) = polled {
            this.state.read(&buf.filled()[before..]);
        }
        polled
    }
}

impl tokio::io::AsyncWrite for Watched {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.state.unflushed.store(true, Ordering::Relaxed);
        std::pin::Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> std::task::Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.state.unflushed.store(true, Ordering::Relaxed);
        std::pin::Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let flushed = std::pin::Pin::new(&mut this.stream).poll_flush(cx);
        if let std::task::Poll::Ready(Ok(())) = flushed {
            this.state.unflushed.store(false, Ordering::Relaxed);
            this.state.wake();
        }
        flushed
    }

    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::routing::get;
    use std::io::{Read, Write};
    use std::time::Instant;

    /// One request, `GET path` (HTTP/1.1, kept alive).
    fn request(path: &str) -> String {
        format!("GET {path} HTTP/1.1\r\nHost: test\r\n\r\n")
    }

    /// Connects to `address` and sends `request`, without the runtime (so
    /// that the server does not run meanwhile): a client whose request is
    /// sent, accepted by the system but not yet read.
    fn sent(address: SocketAddr, request: &str) -> std::net::TcpStream {
        let mut stream = std::net::TcpStream::connect(address).expect("a connection");
        stream.write_all(request.as_bytes()).expect("the request sent");
        stream
    }

    /// Reads one answer from `stream` (a blocking socket, on a thread of
    /// its own): its head and its `Content-Length` body, or what came
    /// before the connection ended.
    fn answer(stream: &mut std::net::TcpStream) -> String {
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .expect("a read timeout");
        let mut bytes = Vec::new();
        let mut byte = [0; 1];
        while !bytes.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => bytes.push(byte[0]),
                _ => return String::from_utf8_lossy(&bytes).into_owned(),
            }
        }
        let head = String::from_utf8_lossy(&bytes).into_owned();
        let length = head
            .lines()
            .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length: ")?.parse().ok())
            .unwrap_or(0);
        let mut body = vec![0; length];
        match stream.read_exact(&mut body) {
            Ok(()) => head + &String::from_utf8_lossy(&body),
            Err(_) => head,
        }
    }

    /// Reads one answer from `stream` on a blocking thread.
    async fn answer_of(mut stream: std::net::TcpStream) -> (String, std::net::TcpStream) {
        tokio::task::spawn_blocking(move || (answer(&mut stream), stream))
            .await
            .expect("the reader")
    }

    fn app() -> Router {
        Router::new().route("/", get(|| async { "hello" })).route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "slow"
            }),
        )
    }

    /// At a stop, every request already sent is answered, each on a
    /// connection that then closes: one being answered, one sent on a kept
    /// connection but not yet read, ones on connections the system accepted
    /// but the server had not taken yet; a connection open before the stop
    /// gets its first request answered even if it sends it after; a kept
    /// connection with nothing sent closes at once, and the server returns
    /// well within its grace.
    #[tokio::test]
    async fn a_stop_answers_every_request_already_sent() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("its address");
        let (stop_tx, stop) = watch::channel(false);
        let grace = Duration::from_secs(5);
        let server = tokio::spawn(serve_http_within(listener, app(), stop, grace));

        let (first, kept) = answer_of(sent(address, &request("/"))).await;
        assert!(first.starts_with("HTTP/1.1 200") && first.ends_with("hello"), "{first}");
        let (first, idle) = answer_of(sent(address, &request("/"))).await;
        assert!(first.ends_with("hello"), "{first}");
        let slow = sent(address, &request("/slow"));
        tokio::time::sleep(Duration::from_millis(100)).await;

        // From here to the stop the server does not run (one thread).
        let mut kept = kept;
        kept.write_all(request("/").as_bytes())
            .expect("the second request sent");
        let waiting: Vec<_> = (0..20).map(|_| sent(address, &request("/"))).collect();
        let mut silent = std::net::TcpStream::connect(address).expect("a connection");
        let stopped = Instant::now();
        stop_tx.send(true).expect("the server watches");

        tokio::time::sleep(Duration::from_millis(200)).await;
        silent
            .write_all(request("/").as_bytes())
            .expect("the late first request sent");
        let mut answers = vec![
            ("slow", answer_of(slow)),
            ("kept", answer_of(kept)),
            ("silent", answer_of(silent)),
        ];
        answers.extend(waiting.into_iter().map(|stream| ("waiting", answer_of(stream))));
        for (which, answered) in answers {
            let (text, mut stream) = answered.await;
            assert!(text.starts_with("HTTP/1.1 200"), "{which}: {text:?}");
            assert!(text.contains("connection: close"), "{which}: the last answer: {text:?}");
            assert!(text.ends_with("hello") || text.ends_with("slow"), "{which}: {text:?}");
            let mut rest = Vec::new();
            let _ = stream.read_to_end(&mut rest);
            assert!(rest.is_empty(), "{which}: then the connection closes");
        }
        let (text, _) = answer_of(idle).await;
        assert_eq!(text, "", "an idle kept connection closes with nothing more");
        tokio::time::timeout(grace, server)
            .await
            .expect("the server returns within its grace")
            .expect("the server task");
        assert!(stopped.elapsed() < Duration::from_secs(2), "{:?}", stopped.elapsed());
        assert!(
            std::net::TcpStream::connect(address).is_err(),
            "no connection is accepted after the stop"
        );
    }

    /// An event stream open at a stop ends, and its connection closes: the
    /// stop does not wait for the grace.
    #[tokio::test]
    async fn a_stop_ends_event_streams() {
        use axum::response::sse::{Event, Sse};
        use tokio_stream::StreamExt;
        let app = Router::new().route(
            "/events",
            get(|| async {
                let events = tokio_stream::iter([Ok::<_, std::convert::Infallible>(Event::default().data("hi"))])
                    .chain(tokio_stream::pending());
                Sse::new(events)
            }),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("its address");
        let (stop_tx, stop) = watch::channel(false);
        let server = tokio::spawn(serve_http_within(listener, app, stop, Duration::from_secs(5)));
        let stream = sent(address, &request("/events"));
        let reader = tokio::task::spawn_blocking(move || {
            let mut stream = stream;
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .expect("a read timeout");
            let mut text = Vec::new();
            let _ = stream.read_to_end(&mut text);
            String::from_utf8_lossy(&text).into_owned()
        });
        tokio::time::sleep(Duration::from_millis(200)).await;
        let stopped = Instant::now();
        stop_tx.send(true).expect("the server watches");
        let text = reader.await.expect("the reader");
        assert!(
            text.contains("data: hi") && text.ends_with("0\r\n\r\n"),
            "ended: {text:?}"
        );
        server.await.expect("the server task");
        assert!(stopped.elapsed() < Duration::from_secs(2), "{:?}", stopped.elapsed());
    }

    /// A request whose client goes away before its answer is counted, as
    /// abandoned (499), with its time.
    #[tokio::test]
    async fn a_request_whose_client_leaves_is_counted_as_abandoned() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let sandbox = arbiter_sandbox::Sandbox::new(arbiter_sandbox::SandboxConfig {
            cache_dir: Some(dir.path().join("compiled")),
            instance_slots: 1,
            ..arbiter_sandbox::SandboxConfig::default()
        })
        .expect("a sandbox");
        let metrics = arbiter_ladder::metrics::Metrics::new(&sandbox);
        let counting = metrics.clone();
        let app = Router::new()
            .route("/never", get(std::future::pending::<&'static str>))
            .layer(axum::middleware::from_fn(
                move |request: axum::extract::Request, next: axum::middleware::Next| {
                    let metrics = counting.clone();
                    async move { crate::middleware::counted(&metrics, request, next).await }
                },
            ));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a port");
        let address = listener.local_addr().expect("its address");
        let (_stop_tx, stop) = watch::channel(false);
        tokio::spawn(serve_http(listener, app, stop));
        for _ in 0..3 {
            let client = sent(address, &request("/never"));
            tokio::time::sleep(Duration::from_millis(100)).await;
            drop(client);
        }
        let start = Instant::now();
        while metrics.http_requests("GET", "/never", 499) < 3 {
            assert!(
                start.elapsed() < Duration::from_secs(5),
                "counted: {}",
                metrics.http_requests("GET", "/never", 499)
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}
