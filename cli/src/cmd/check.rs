//! `arbiter check`: the upload checks, locally.

use anyhow::Context;
use arbiter_games::Variant;
use arbiter_games::othello::Mode;
use arbiter_ladder::check::Verdict;
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs the checks a server runs on an upload — module validity, imports and
/// exports, compilation under limits, a smoke match against a house bot (each
/// game's first move under the ladder's default per-move cap, later moves a
/// short control) — and prints what the server would say. Exits with 1 when
/// the bot is rejected.
#[derive(clap::Args)]
#[command(after_help = format!(
    "Examples:\n  arbiter check my_bot.wasm\n  arbiter check my_bot.wasm --game {}\n  arbiter check ttt.wasm --game tictactoe",
    Variant::Othello(Mode::Reversi)
))]
pub struct Args {
    /// The module to check.
    file: PathBuf,
    /// The ladder to smoke-test it on.
    #[arg(long, default_value_t = Variant::Othello(Mode::Std), long_help = format!("The ladder to smoke-test it on. {}", crate::cmd::games::variant_help()))]
    game: Variant,
}

/// Runs `arbiter check`: success when the bot is accepted, 1 when it is
/// rejected.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let wasm = std::fs::read(&args.file).with_context(|| format!("cannot read {}", args.file.display()))?;
    let name = args.file.file_stem().and_then(|s| s.to_str()).unwrap_or("bot");
    let sandbox = crate::sandbox::new()?;
    let ladder = arbiter_ladder::ladders::TimeControl::default_for(args.game).budget();
    let checked = arbiter_ladder::check::check(&sandbox, &wasm, name, args.game, ladder)?;
    print!("{}", checked.report());
    Ok(match checked.verdict {
        Verdict::Accepted { .. } => ExitCode::SUCCESS,
        Verdict::Rejected { .. } => ExitCode::FAILURE,
    })
}
