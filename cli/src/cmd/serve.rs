//! `arbiter serve`: the ladder server on one machine.

use arbiter_http::server::{ServerConfig, serve};
use arbiter_ladder::ratings::RatingSystem;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;

/// Runs the ladder: web site and JSON API, scheduler, upload checks and
/// in-process workers, on a SQLite database in the data directory (or
/// PostgreSQL with DATABASE_URL). The house bots are registered on first
/// start, so a fresh install is playing within seconds.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter serve                                  # http://127.0.0.1:8080, data in ./arbiter-data\n",
    "  arbiter serve --data /var/lib/arbiter --listen 0.0.0.0:80 --workers 8\n",
    "  arbiter serve --trusted-proxy 127.0.0.1 --secure-cookies   # behind an HTTPS proxy on this machine\n",
    "  arbiter serve --time othello:std=2000/20000 --time tictactoe=100/1000\n",
    "  DATABASE_URL=postgres://arbiter@db/arbiter arbiter serve --workers 0 --blobs s3://arbiter-blobs\n",
    "      # a front end: run `arbiter worker`s elsewhere with the same database and --blobs",
))]
pub struct Args {
    /// Folder for the SQLite database, modules, replays and compiled code.
    #[arg(long, default_value = "arbiter-data")]
    data: PathBuf,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// In-process workers playing matches (default: the number of cores).
    #[arg(long)]
    workers: Option<usize>,
    /// PostgreSQL instead of SQLite.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
    /// Where modules and replays go: `s3://BUCKET[/PREFIX]` (with the usual
    /// AWS_* variables) or a folder; default DATA/blobs. Every server and
    /// worker sharing a database must share this too.
    #[arg(long, env = "ARBITER_BLOBS", value_name = "LOCATION")]
    blobs: Option<String>,
    /// Do not schedule ladder matches (only challenges and tournaments play).
    #[arg(long)]
    no_schedule: bool,
    /// Rating system.
    #[arg(long, value_enum, default_value = "glicko2")]
    rating: RatingSystem,
    /// A reverse proxy in front of the server (repeatable): requests from it
    /// are attributed to the address it puts in `X-Forwarded-For`.
    #[arg(
        long = "trusted-proxy",
        value_name = "IP",
        env = "ARBITER_TRUSTED_PROXIES",
        value_delimiter = ','
    )]
    trusted_proxies: Vec<IpAddr>,
    /// Let remote bots' URLs point at loopback, private, link-local and
    /// other non-public addresses: for a LAN or tests. Off by default (such
    /// URLs are refused), logged at start when on.
    #[arg(long, env = "ARBITER_ALLOW_PRIVATE_BOT_URLS")]
    allow_private_bot_urls: bool,
    /// How many leading bits of an IPv6 address are one client for the
    /// per-client limits (games against people, streams, sign-ups): every
    /// address in a /64 is one client by default.
    #[arg(long, value_name = "BITS", default_value_t = 64, value_parser = clap::value_parser!(u8).range(1..=128), env = "ARBITER_IPV6_CLIENT_PREFIX")]
    ipv6_client_prefix: u8,
    /// Where the other `arbiter serve`s sharing this database reach this
    /// one (for agent API and play requests while its agent hall leads).
    /// Default: `http://` and the address it listens on (127.0.0.1 for
    /// 0.0.0.0 or ::, which only works on one machine).
    #[arg(long, value_name = "URL", env = "ARBITER_HALL_URL")]
    hall_url: Option<String>,
    /// Mark the session cookie `Secure`: for a site served over HTTPS.
    #[arg(long, env = "ARBITER_SECURE_COOKIES")]
    secure_cookies: bool,
    /// A ladder's time control (repeatable), kept in the database for the
    /// matches queued from now on, like `arbiter ladders time`.
    #[arg(long = "time", value_name = "LADDER=MOVE_MS/BANK_MS")]
    times: Vec<super::ladders::LadderTime>,
    /// On SIGTERM or Ctrl-C, how long running matches may go on finishing
    /// before they go back to the queue (a second signal exits at once).
    #[arg(long, value_name = "SECONDS", default_value_t = 5.0)]
    grace: f64,
    /// How long a web request waits for a database connection before it
    /// answers 503 (while the database is down, every request waits this).
    #[arg(long, value_name = "SECONDS", default_value_t = 3.0, env = "ARBITER_WEB_DB_TIMEOUT")]
    web_db_timeout: f64,
    /// How long workers, the scheduler and the checker wait for a database
    /// connection before an attempt fails (and is tried again).
    #[arg(long, value_name = "SECONDS", default_value_t = 30.0, env = "ARBITER_DB_TIMEOUT")]
    db_timeout: f64,
}

/// Runs `arbiter serve`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let config = ServerConfig {
        data_dir: args.data,
        listen: args.listen,
        workers: args.workers.unwrap_or_else(|| ServerConfig::default().workers),
        database_url: args.database_url,
        blobs: args.blobs,
        schedule: !args.no_schedule,
        rating: args.rating,
        trusted_proxies: args.trusted_proxies,
        secure_cookies: args.secure_cookies,
        time_controls: args.times.iter().map(|t| (t.ladder.clone(), t.budget)).collect(),
        grace: super::shutdown::grace(args.grace)?,
        web_db: super::db_options("--web-db-timeout", args.web_db_timeout)?,
        background_db: super::db_options("--db-timeout", args.db_timeout)?,
        compiler: crate::sandbox::compiler()?,
        allow_private_bot_urls: args.allow_private_bot_urls,
        ipv6_client_prefix: args.ipv6_client_prefix,
        hall_url: args.hall_url,
    };
    super::runtime()?.block_on(serve(config, super::shutdown::first_signal()))
}
