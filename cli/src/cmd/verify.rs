//! `arbiter verify`: re-run a replay and check it move for move.

use crate::bots;
use crate::sandbox::LazySandbox;
use anyhow::{Context, bail};
use arbiter_referee::Entrant;
use arbiter_referee::Replay;
use arbiter_referee::verify::{HUMAN_KIND, recheck, recorded, settings_of, verify};
use std::path::PathBuf;
use std::process::ExitCode;

/// Re-runs a replay with the two bots' modules and checks that every
/// request, reply, move and fuel count comes out the same, byte for byte.
/// A replay marked not reproducible (a remote or native bot played on
/// wall-clock time) cannot be re-run: its moves are re-checked for legality
/// from the replay alone, and no bots are needed. Exits with 1 when the
/// check fails.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter verify arbiter-match-42.json my_bot.wasm house:othello-greedy\n",
    "  arbiter verify replays/match-0001.json a.wasm b.wasm\n",
    "  arbiter verify replays/match-0002.json   # a match with an HTTP bot: legality only\n",
    "  arbiter verify people-7.json house:tictactoe-perfect   # a game against a person: the bot's side",
))]
pub struct Args {
    /// The replay (JSON).
    replay: PathBuf,
    /// Participant 0: a .wasm file or house:NAME (not needed for a replay
    /// that is not reproducible; for a game against a person, the bot).
    bot_a: Option<String>,
    /// Participant 1: a .wasm file or house:NAME.
    bot_b: Option<String>,
}

/// Runs `arbiter verify`: success when the re-run matches the replay, 1
/// when it does not.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let bytes = std::fs::read(&args.replay).with_context(|| format!("cannot read {}", args.replay.display()))?;
    let replay = Replay::from_json(&bytes).with_context(|| format!("cannot read {}", args.replay.display()))?;
    let variant = settings_of(&replay)?.variant;
    if !replay.reproducible {
        return Ok(recheck_only(&replay));
    }
    if let Some(person) = replay.participants.iter().position(|p| p.kind == HUMAN_KIND) {
        // A game against a person: the person's moves come from the
        // replay, the bot's side is re-run.
        let Some(bot) = &args.bot_a else {
            bail!("give the bot of this game against a person (a .wasm file or house:NAME) to re-run its side");
        };
        let sandbox = LazySandbox::default();
        let bot = bots::parse_one(bot, variant, &sandbox)?;
        let person_side = recorded(&replay, person);
        let entrants: [&dyn Entrant; 2] = if person == 0 {
            [&person_side, bot.as_ref()]
        } else {
            [bot.as_ref(), &person_side]
        };
        return Ok(report(verify(&replay, entrants)));
    }
    let (Some(bot_a), Some(bot_b)) = (&args.bot_a, &args.bot_b) else {
        bail!("give the replay's two bots (a .wasm file or house:NAME each) to re-run it");
    };
    let sandbox = LazySandbox::default();
    // Named as `play` names them, so the replay's names match.
    let [a, b] = bots::parse_pair([bot_a, bot_b], variant, &sandbox)?;
    Ok(report(verify(&replay, [a.as_ref(), b.as_ref()])))
}

/// Says how a re-run went.
fn report(verified: Result<(), arbiter_referee::verify::VerifyError>) -> ExitCode {
    match verified {
        Ok(()) => {
            println!("verified: the re-run gives the same match, move for move");
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("not verified: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Checks a replay that cannot be re-run: legality and outcome from its own
/// record, and says what could not be checked.
fn recheck_only(replay: &Replay) -> ExitCode {
    let unrepeatable: Vec<String> = replay
        .participants
        .iter()
        .filter(|p| !p.reproducible)
        .map(|p| format!("{} ({})", p.name, p.kind))
        .collect();
    let who = if unrepeatable.is_empty() {
        "a bot was stopped by the wall-clock backstop".to_string()
    } else {
        format!("{} ran on wall-clock time", unrepeatable.join(" and "))
    };
    println!("not reproducible: {who}, so the match cannot be re-run; its record is re-checked instead");
    match recheck(replay) {
        Ok(steps) => {
            let unit = if replay.game == "skirmish" { "ticks" } else { "turns" };
            println!(
                "checked: every move is legal and every game ends as recorded ({steps} {unit} re-simulated from the replay)"
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            println!("not verified: {error}");
            ExitCode::FAILURE
        }
    }
}
