//! `arbiter replay`: read replays.

use anyhow::{Context, bail};
use arbiter_referee::Replay;
use std::io::Write;
use std::path::{Path, PathBuf};

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
    /// Writes a skirmish replay as training data: one JSON line per tick
    /// and side, `{"game","tick","side","obs","skipped","accepted","rejected"}`,
    /// with the full observation the side received (rebuilt by
    /// re-simulating the game; every digest is checked on the way).
    #[command(after_help = concat!(
        "Examples:\n",
        "  arbiter replay export --jsonl match-42.json > match-42.jsonl\n",
        "  arbiter replay export --jsonl match-42.json --output match-42.jsonl",
    ))]
    Export {
        /// The replay file (JSON).
        file: PathBuf,
        /// JSON lines, one per tick and side (the only format so far).
        #[arg(long, required = true)]
        jsonl: bool,
        /// Where to write (default: standard output).
        #[arg(long, short)]
        output: Option<PathBuf>,
    },
}

/// Runs `arbiter replay`.
pub fn run(command: Command) -> anyhow::Result<()> {
    match command {
        Command::Show { file } => {
            let replay = read(&file)?;
            print!("{}", replay.summary());
            Ok(())
        }
        Command::Export { file, jsonl: _, output } => {
            let replay = read(&file)?;
            let lines = arbiter_referee::skirmish::training_lines(&replay)
                .with_context(|| format!("cannot export {}", file.display()))?;
            let mut out: Box<dyn Write> = match &output {
                Some(path) => Box::new(std::io::BufWriter::new(
                    std::fs::File::create(path).with_context(|| format!("cannot write {}", path.display()))?,
                )),
                None => Box::new(std::io::BufWriter::new(std::io::stdout().lock())),
            };
            for line in &lines {
                writeln!(out, "{line}")?;
            }
            out.flush()?;
            if let Some(path) = output {
                eprintln!("{} lines written to {}", lines.len(), path.display());
            }
            Ok(())
        }
    }
}

fn read(file: &Path) -> anyhow::Result<Replay> {
    let bytes = std::fs::read(file).with_context(|| format!("cannot read {}", file.display()))?;
    let replay = Replay::from_json(&bytes).with_context(|| format!("cannot read {}", file.display()))?;
    if replay.games.is_empty() {
        bail!("{} holds no game", file.display());
    }
    Ok(replay)
}
