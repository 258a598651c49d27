//! `arbiter play`: run matches between two bots on this machine.

use anyhow::Context;
use arbiter_games::{Budget, Variant};
use arbiter_referee::{Entrant, MatchSettings, PlayedMatch, play_match};
use arbiter_server::bots;
use arbiter_server::sandbox::LazySandbox;
use arbiter_server::stats::{Record, format_elo};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// Plays N side-swapped matches between two bots, prints a results table and
/// writes one replay per match.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter play othello builtin:othello-greedy builtin:othello-random --matches 20\n",
    "  arbiter play othello:anti cmd:'python3 my_bot.py' builtin:othello-random --seed 7 --out replays\n",
    "  arbiter play tictactoe builtin:tictactoe-perfect house:tictactoe-random\n",
    "  arbiter play othello:grand house:othello-ab-medium my_bot.wasm\n",
    "  arbiter play othello my_bot.wasm house:othello-ab-strong --time 10000/60000\n\n",
    "A BOT is one of:\n",
    "  house:NAME            a house bot, sandboxed (list them with `arbiter bots`)\n",
    "  PATH.wasm             a WebAssembly bot, sandboxed under the fuel clock\n",
    "  builtin:NAME          a house bot run in-process, natively (fast, for trying things out)\n",
    "  cmd:'COMMAND ARGS'    a native process speaking the JSON-lines protocol (wall-clock time, not reproducible)",
))]
pub struct Args {
    /// Game and mode: tictactoe, othello, othello:anti, othello:grand, othello:octagon, othello:reversi.
    game: Variant,
    /// The first bot (participant 0).
    bot_a: String,
    /// The second bot (participant 1).
    bot_b: String,
    /// Number of matches (each is two games with sides swapped).
    #[arg(long, short = 'n', default_value_t = 10)]
    matches: u32,
    /// Seed of the first match; match i uses seed + i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Folder for the replays (one JSON file per match).
    #[arg(long, default_value = "replays")]
    out: PathBuf,
    /// Matches played at once (default: the number of cores).
    #[arg(long, short = 'j')]
    jobs: Option<usize>,
    /// Time control MOVE_MS/BANK_MS in virtual milliseconds per side (default: the ladder's
    /// default, e.g. 1000/10000 for Othello 8×8, 100/1000 for tic-tac-toe).
    #[arg(long, value_name = "MOVE_MS/BANK_MS")]
    time: Option<Budget>,
}

/// Runs `arbiter play`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let sandbox = LazySandbox::default();
    let entrants = [
        bots::parse(&args.bot_a, args.game, &sandbox)?,
        bots::parse(&args.bot_b, args.game, &sandbox)?,
    ];
    // Sandboxed bots' clocks run on the sandbox's fuel rate.
    let fuel_per_ms = if entrants.iter().any(|e| e.info().kind == "wasm") {
        Some(sandbox.get()?.config().fuel_per_ms)
    } else {
        None
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, args.matches.max(1) as usize);
    let progress = ProgressBar::new(u64::from(args.matches));
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} matches  {elapsed} (eta {eta}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicU32::new(0);
    let results: Mutex<Vec<(u32, PlayedMatch)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= args.matches || failure.lock().map(|f| f.is_some()).unwrap_or(true) {
                        break;
                    }
                    match play_one(&args, &entrants, fuel_per_ms, i) {
                        Ok(played) => {
                            if let Ok(mut results) = results.lock() {
                                results.push((i, played));
                            }
                            progress.inc(1);
                        }
                        Err(error) => {
                            if let Ok(mut failure) = failure.lock() {
                                failure.get_or_insert(error);
                            }
                        }
                    }
                }
            });
        }
    });
    progress.finish_and_clear();
    if let Some(error) = failure.into_inner().ok().flatten() {
        return Err(error);
    }
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    print_table(&args, &entrants, &results);
    println!("replays: {}", args.out.display());
    Ok(())
}

fn play_one(
    args: &Args,
    entrants: &[Arc<dyn Entrant>; 2],
    fuel_per_ms: Option<u64>,
    i: u32,
) -> anyhow::Result<PlayedMatch> {
    let mut settings = MatchSettings::new(args.game, args.seed.wrapping_add(u64::from(i)));
    settings.match_id = u64::from(i) + 1;
    settings.fuel_per_ms = fuel_per_ms;
    if let Some(budget) = args.time {
        settings.budget = budget;
    }
    let played = play_match(&settings, [entrants[0].as_ref(), entrants[1].as_ref()])
        .with_context(|| format!("match {} could not be played", i + 1))?;
    let path = args.out.join(format!("match-{:04}.json", i + 1));
    std::fs::write(&path, played.replay.to_json()).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(played)
}

fn print_table(args: &Args, entrants: &[Arc<dyn Entrant>; 2], results: &[(u32, PlayedMatch)]) {
    let mut record = Record::default();
    let mut faults = [0u32; 2];
    for (_, played) in results {
        match played.replay.result.winner {
            Some(0) => record.wins += 1,
            Some(_) => record.losses += 1,
            None => record.draws += 1,
        }
        for game in &played.replay.games {
            if let Some(side) = game.faulted {
                faults[usize::from(game.sides[side.index()])] += 1;
            }
        }
    }
    let names = [entrants[0].info().name, entrants[1].info().name];
    let width = names.iter().map(String::len).max().unwrap_or(3).max(3);
    println!("{} — {} matches, seeds {}..", args.game, record.matches(), args.seed);
    println!(
        "{:<width$}  {:>4} {:>4} {:>4}  {:>6}  {:>6}",
        "bot", "W", "D", "L", "points", "faults"
    );
    let other = Record {
        wins: record.losses,
        draws: record.draws,
        losses: record.wins,
    };
    for (i, r) in [record, other].iter().enumerate() {
        println!(
            "{:<width$}  {:>4} {:>4} {:>4}  {:>6.1}  {:>6}",
            names[i],
            r.wins,
            r.draws,
            r.losses,
            r.points(),
            faults[i]
        );
    }
    if let Some((mid, low, high)) = record.elo() {
        println!(
            "Elo difference ({} − {}): {} (95% interval {} .. {})",
            names[0],
            names[1],
            format_elo(mid),
            format_elo(low),
            format_elo(high)
        );
    }
}
