//! `arbiter replay`: read replays.

use anyhow::Context;
use arbiter_referee::Replay;
use std::path::PathBuf;

/// Work with replay files.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Prints a readable summary of a replay: players, games, results,
    /// faults and the Othello move transcripts.
    #[command(after_help = "Example:\n  arbiter replay show replays/match-0001.json")]
    Show {
        /// The replay file (JSON).
        file: PathBuf,
    },
}

/// Runs `arbiter replay`.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Show { file } => {
            let bytes = std::fs::read(&file).with_context(|| format!("cannot read {}", file.display()))?;
            let replay = Replay::from_json(&bytes).with_context(|| format!("cannot read {}", file.display()))?;
            print!("{}", replay.summary());
            Ok(())
        }
    }
}
