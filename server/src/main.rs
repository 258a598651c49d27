//! `arbiter`: play bots against each other locally, inspect positions and
//! replays, and (soon) run the ladder server.

mod bots;
mod check;
mod cmd;
mod sandbox;
mod stats;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Arbiter: a referee and ladder for game-playing bots.
#[derive(Parser)]
#[command(name = "arbiter", version, about, long_about = None, arg_required_else_help = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Play(cmd::play::Args),
    Check(cmd::check::Args),
    Bots(cmd::bots::Args),
    Position(cmd::position::Args),
    Perft(cmd::perft::Args),
    #[command(subcommand)]
    Replay(cmd::replay::Command),
    /// Compiles one module for the sandbox (run by the sandbox itself).
    #[command(name = sandbox::COMPILE_SUBCOMMAND, hide = true)]
    CompileModule,
}

fn main() -> ExitCode {
    if std::env::args_os()
        .nth(1)
        .is_some_and(|arg| arg == sandbox::COMPILE_SUBCOMMAND)
    {
        return arbiter_sandbox::compiler_child_main();
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Play(args) => cmd::play::run(args),
        Command::Check(args) => cmd::check::run(args),
        Command::Bots(args) => cmd::bots::run(args),
        Command::CompileModule => return arbiter_sandbox::compiler_child_main(),
        Command::Position(args) => cmd::position::run(args),
        Command::Perft(args) => cmd::perft::run(args),
        Command::Replay(command) => cmd::replay::run(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("arbiter: {error:#}");
            ExitCode::from(2)
        }
    }
}
