//! `arbiter`: play bots against each other locally, check and inspect bots,
//! positions and replays, and run the ladder: its web server, workers and
//! the administration commands.

#[cfg(test)]
mod backtraces;
mod bots;
mod cmd;
mod sandbox;
mod slow_database;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Arbiter: a referee and ladder for game-playing bots.
#[derive(Parser)]
#[command(name = "arbiter", version, about, long_about = None, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// How `serve` and `worker` write their log (to stderr): lines for
    /// people, or one JSON object per line for a log collector.
    #[arg(long, global = true, value_enum, default_value = "text", env = "ARBITER_LOG_FORMAT")]
    log_format: LogFormat,
}

/// The log's format.
#[derive(Clone, Copy, clap::ValueEnum)]
enum LogFormat {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    Serve(cmd::serve::Args),
    Worker(cmd::worker::Args),
    #[command(subcommand)]
    Ratings(cmd::ratings::Command),
    #[command(subcommand)]
    Ladders(cmd::ladders::Command),
    Play(cmd::play::Args),
    Simulate(cmd::simulate::Args),
    Check(cmd::check::Args),
    Connect(cmd::connect::Args),
    New(cmd::new::Args),
    Bots(cmd::bots::Args),
    Games(cmd::games::Args),
    Position(cmd::position::Args),
    Perft(cmd::perft::Args),
    #[command(subcommand)]
    Replay(cmd::replay::Command),
    Verify(cmd::verify::Args),
    /// Runs a house bot natively over stdin/stdout (for benchmarks and tests).
    #[command(name = "__house-bot", hide = true)]
    HouseBot {
        /// The house bot's name.
        name: String,
        /// Answer one request, then exit (a process per move).
        #[arg(long)]
        once: bool,
    },
    /// Compiles one module for the sandbox (run by the sandbox itself).
    #[command(name = arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND, hide = true)]
    CompileModule,
}

/// Runs a house bot natively: the loop, or one request with `once`.
fn house_bot(name: &str, once: bool) -> anyhow::Result<()> {
    if !once {
        arbiter_bots::run(name);
        return Ok(());
    }
    let mut answer = arbiter_bots::answerer(name, arbiter_sdk::Rng::from_host())
        .ok_or_else(|| anyhow::anyhow!("no house bot called {name}"))?;
    let mut line = String::new();
    std::io::stdin().read_line(&mut line)?;
    println!("{}", answer(line.trim_end()));
    Ok(())
}

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND)
    {
        return arbiter_sandbox::compiler_child_main();
    }
    arbiter_ladder::install_tls_provider();
    let cli = Cli::parse();
    if matches!(cli.command, Command::Serve(_) | Command::Worker(_)) {
        let filter = tracing_subscriber::EnvFilter::try_from_default_env()
            .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn"));
        // Colours only for a person at a terminal, never into a file or a
        // log collector (nor with NO_COLOR set).
        let colours = std::io::IsTerminal::is_terminal(&std::io::stderr()) && std::env::var_os("NO_COLOR").is_none();
        use tracing_subscriber::{Layer, layer::SubscriberExt, util::SubscriberInitExt};
        let log = tracing_subscriber::fmt::layer()
            .with_ansi(colours)
            .with_writer(std::io::stderr);
        let log = match cli.log_format {
            LogFormat::Text => log.with_filter(filter).boxed(),
            LogFormat::Json => log.json().flatten_event(true).with_filter(filter).boxed(),
        };
        // The database driver's slow operations are counted whatever the
        // log shows, and summed up once a minute.
        tracing_subscriber::registry()
            .with(log)
            .with(slow_database::layer())
            .init();
    }
    match run(cli.command) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("arbiter: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// Runs one command: its exit code, or the error that stopped it. Commands
/// return rather than exit, so that what they own (temporary folders
/// included) is dropped.
fn run(command: Command) -> anyhow::Result<ExitCode> {
    let done = |result: anyhow::Result<()>| result.map(|()| ExitCode::SUCCESS);
    match command {
        Command::Serve(args) => done(cmd::serve::run(args)),
        Command::Worker(args) => done(cmd::worker::run(args)),
        Command::Ratings(command) => cmd::ratings::run(command),
        Command::Ladders(command) => done(cmd::ladders::run(command)),
        Command::Play(args) => done(cmd::play::run(args)),
        Command::Simulate(args) => done(cmd::simulate::run(args)),
        Command::Check(args) => cmd::check::run(args),
        Command::Connect(args) => cmd::connect::run(args),
        Command::New(args) => done(cmd::new::run(args)),
        Command::Bots(args) => done(cmd::bots::run(args)),
        Command::Games(args) => done(cmd::games::run(args)),
        Command::CompileModule => Ok(arbiter_sandbox::compiler_child_main()),
        Command::HouseBot { name, once } => done(house_bot(&name, once)),
        Command::Position(args) => done(cmd::position::run(args)),
        Command::Perft(args) => done(cmd::perft::run(args)),
        Command::Replay(command) => done(cmd::replay::run(command)),
        Command::Verify(args) => cmd::verify::run(args),
    }
}
