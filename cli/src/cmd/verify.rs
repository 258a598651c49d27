//! `arbiter verify`: re-run a replay and check it move for move.

use crate::bots;
use crate::sandbox::LazySandbox;
use anyhow::Context;
use arbiter_referee::Replay;
use arbiter_referee::verify::{settings_of, verify};
use std::path::PathBuf;
use std::process::ExitCode;

/// Re-runs a replay with the two bots' modules and checks that every
/// request, reply, move and fuel count comes out the same, byte for byte.
/// Exits with 1 when it does not.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter verify arbiter-match-42.json my_bot.wasm house:othello-greedy\n",
    "  arbiter verify replays/match-0001.json a.wasm b.wasm",
))]
pub struct Args {
    /// The replay (JSON).
    replay: PathBuf,
    /// Participant 0: a .wasm file or house:NAME.
    bot_a: String,
    /// Participant 1: a .wasm file or house:NAME.
    bot_b: String,
}

/// Runs `arbiter verify`: success when the re-run matches the replay, 1
/// when it does not.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.replay).with_context(|| format!("cannot read {}", args.replay.display()))?;
    let replay = Replay::from_json(&bytes).with_context(|| format!("cannot read {}", args.replay.display()))?;
    let variant = settings_of(&replay)?.variant;
    let sandbox = LazySandbox::default();
    // Named as `play` names them, so the replay's names match.
    let [a, b] = bots::parse_pair([&args.bot_a, &args.bot_b], variant, &sandbox)?;
    match verify(&replay, [a.as_ref(), b.as_ref()]) {
        Ok(()) => {
            println!("verified: the re-run gives the same match, move for move");
            Ok(ExitCode::SUCCESS)
        }
        Err(error) => {
            println!("not verified: {error}");
            Ok(ExitCode::FAILURE)
        }
    }
}
