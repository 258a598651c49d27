//! `arbiter play`: run matches between two bots on this machine.

use crate::bots;
use crate::sandbox::LazySandbox;
use anyhow::Context;
use arbiter_games::othello::Mode;
use arbiter_games::{Budget, Variant};
use arbiter_ladder::stats::sprt::{Hypothesis, Pentanomial, Sprt};
use arbiter_ladder::stats::{Record, format_elo};
use arbiter_referee::{Entrant, MatchSettings, PlayedMatch, play_match};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

/// The examples under `arbiter play --help`.
fn examples() -> String {
    let anti = Variant::Othello(Mode::Anti);
    let grand = Variant::Othello(Mode::Grand);
    format!(
        "Examples:\n  \
         arbiter play othello builtin:othello-greedy builtin:othello-random --matches 20\n  \
         arbiter play {anti} cmd:'python3 my_bot.py' builtin:othello-random --seed 7 --out replays\n  \
         arbiter play tictactoe builtin:tictactoe-perfect house:tictactoe-random\n  \
         arbiter play {grand} house:othello-ab-medium my_bot.wasm\n  \
         arbiter play othello my_bot.wasm house:othello-ab-strong --time 10000/60000\n  \
         arbiter play othello new.wasm old.wasm --sprt 0,10   # play until new is ≥10 Elo better, or not ≥0\n  \
         arbiter play othello my_bot.wasm house:othello-greedy -n 2 --stderr logs   # keep each bot's stderr\n  \
         arbiter play skirmish my_bot.wasm house:skirmish-economy -n 2   # 20 ms per tick, 1 s at tick 0\n  \
         arbiter play skirmish my_bot.wasm house:skirmish-rush --time 50/2000   # 50 ms per tick, 2 s at tick 0\n  \
         arbiter play tictactoe http://127.0.0.1:8000/ house:tictactoe-random   # your own HTTP bot\n  \
         arbiter play skirmish ws://127.0.0.1:9000/ house:skirmish-rush --time 200/2000   # a WebSocket bot\n\n\
         {forms}",
        forms = crate::bots::BOT_FORMS
    )
}

/// Plays N side-swapped matches between two bots, prints a results table and
/// writes one replay per match.
#[derive(clap::Args)]
#[command(after_help = examples())]
pub struct Args {
    #[arg(help = crate::cmd::games::variant_help())]
    game: Variant,
    /// The first bot (participant 0).
    bot_a: String,
    /// The second bot (participant 1).
    bot_b: String,
    /// Number of matches (each is two games with sides swapped); with
    /// `--sprt`, the most to play. Default 10, with `--sprt` 10000.
    #[arg(long, short = 'n')]
    matches: Option<u32>,
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
    /// default, e.g. 1000/10000 for Othello 8×8, 100/1000 for tic-tac-toe). For skirmish:
    /// TICK_MS/FIRST_TICK_MS, the budget of every tick and of tick 0 (default 20/1000).
    #[arg(long, value_name = "MOVE_MS/BANK_MS")]
    time: Option<Budget>,
    /// Play until a sequential test decides between "the first bot is at
    /// most ELO0 stronger" and "at least ELO1 stronger" (logistic Elo,
    /// α = β = 0.05, fishtest's pentanomial SPRT over the side-swapped
    /// pairs of each match). Matches count in seed order, so the verdict
    /// does not depend on `--jobs`.
    #[arg(long, value_name = "ELO0,ELO1")]
    sprt: Option<Sprt>,
    /// Keep what each bot wrote to stderr: one file per match, game and
    /// participant in DIR, `match-0001-game1-a.txt` (`a` is the first bot,
    /// `b` the second). A sandboxed bot's stderr is capped (see the
    /// protocol), a native one's is not captured.
    #[arg(long, value_name = "DIR")]
    stderr: Option<PathBuf>,
}

/// The first bot's points (0 to 2) over the two games of a match: a game
/// won is 1, drawn ½, each game's winner read by the game's own rule
/// ([`Variant::scoring`]: fewer discs win in anti Othello).
fn pair_points(variant: Variant, played: &PlayedMatch) -> f64 {
    let scoring = variant.scoring();
    played
        .replay
        .games
        .iter()
        .map(|game| {
            // The side the first bot (participant 0) played in this game.
            let side = usize::from(game.sides[1] == 0);
            scoring.points([game.scores[side], game.scores[1 - side]])
        })
        .sum()
}

/// The test's state: results counted in seed order, and where it stopped.
#[derive(Default)]
struct Sequential {
    /// Matches finished, by index, not yet counted (a gap before them).
    waiting: std::collections::BTreeMap<u32, f64>,
    /// Matches counted: 0..counted.
    counted: u32,
    results: Pentanomial,
    llr: f64,
    verdict: Option<Hypothesis>,
}

impl Sequential {
    /// Adds match `i`'s pair and counts every match now in sequence, until
    /// the test decides. True once it has.
    fn add(&mut self, sprt: &Sprt, i: u32, points: f64) -> bool {
        self.waiting.insert(i, points);
        while self.verdict.is_none() {
            let Some(points) = self.waiting.remove(&self.counted) else {
                break;
            };
            self.results.add(points);
            self.counted += 1;
            self.llr = sprt.llr(&self.results);
            self.verdict = sprt.verdict(self.llr);
        }
        self.verdict.is_some()
    }
}

/// Runs `arbiter play`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let sandbox = LazySandbox::default();
    // Named apart: two `bot.wasm` from different folders get their folders.
    let entrants = bots::parse_pair([&args.bot_a, &args.bot_b], args.game, &sandbox)?;
    // Sandboxed bots' clocks run on the sandbox's fuel rate.
    let fuel_per_ms = if entrants.iter().any(|e| e.info().kind == "wasm") {
        Some(sandbox.get()?.config().fuel_per_ms)
    } else {
        None
    };
    std::fs::create_dir_all(&args.out).with_context(|| format!("cannot create {}", args.out.display()))?;
    if let Some(dir) = &args.stderr {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let matches = args.matches.unwrap_or(if args.sprt.is_some() { 10_000 } else { 10 });
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
        .clamp(1, matches.max(1) as usize);
    let progress = ProgressBar::new(u64::from(matches));
    progress.set_style(
        ProgressStyle::with_template("{bar:30} {pos}/{len} matches  {elapsed} (eta {eta}) {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let next = AtomicU32::new(0);
    let results: Mutex<Vec<(u32, PlayedMatch)>> = Mutex::new(Vec::new());
    let failure: Mutex<Option<anyhow::Error>> = Mutex::new(None);
    let sequential: Mutex<Sequential> = Mutex::default();
    let decided = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= matches
                        || decided.load(Ordering::Relaxed)
                        || failure.lock().map(|f| f.is_some()).unwrap_or(true)
                    {
                        break;
                    }
                    match play_one(&args, &entrants, fuel_per_ms, i) {
                        Ok(played) => {
                            if let Some(sprt) = &args.sprt
                                && let Ok(mut test) = sequential.lock()
                            {
                                if test.add(sprt, i, pair_points(args.game, &played)) {
                                    decided.store(true, Ordering::Relaxed);
                                }
                                progress.set_message(format!("LLR {:.2}", test.llr));
                            }
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
    let played = results.len();
    let test = sequential.into_inner().unwrap_or_default();
    if args.sprt.is_some() {
        // Only the matches in sequence up to the decision count.
        results.truncate(test.counted as usize);
    }
    print_table(&args, &entrants, &results);
    if let Some(sprt) = &args.sprt {
        print_sprt(sprt, &test);
    }
    if played > results.len() {
        println!(
            "({} more matches were under way when the test decided; their replays are kept but not counted)",
            played - results.len()
        );
    }
    println!("replays: {}", args.out.display());
    Ok(())
}

fn print_sprt(sprt: &Sprt, test: &Sequential) {
    let (lower, upper) = sprt.bounds();
    let verdict = match test.verdict {
        Some(Hypothesis::H1) => format!("H1 accepted (Elo ≥ {}) after {} matches", sprt.elo1, test.counted),
        Some(Hypothesis::H0) => format!("H0 accepted (Elo ≤ {}) after {} matches", sprt.elo0, test.counted),
        None => format!("no decision after {} matches", test.counted),
    };
    println!(
        "SPRT H0: Elo ≤ {}, H1: Elo ≥ {} (logistic, α = {}, β = {}): {verdict}",
        sprt.elo0, sprt.elo1, sprt.alpha, sprt.beta
    );
    println!(
        "LLR {:.3} (bounds {lower:.3}, {upper:.3}); pairs LL, LD, LW+DD, DW, WW: {:?}",
        test.llr, test.results.counts
    );
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
    if let Some(dir) = &args.stderr {
        for (participant, games) in played.logs.iter().enumerate() {
            for (game, log) in games.iter().enumerate() {
                let who = if participant == 0 { 'a' } else { 'b' };
                let path = dir.join(format!("match-{:04}-game{}-{who}.txt", i + 1, game + 1));
                std::fs::write(&path, log).with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
    }
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
        let interval = if mid.is_infinite() {
            // A sweep: the data bound the difference on one side only.
            let (word, bound) = if mid > 0.0 {
                ("at least", low)
            } else {
                ("at most", high)
            };
            format!(
                "{word} {} with 95% confidence (a clean sweep has no other bound)",
                format_elo(bound)
            )
        } else {
            format!(
                "{} (95% interval {} .. {})",
                format_elo(mid),
                format_elo(low),
                format_elo(high)
            )
        };
        println!("Elo difference ({} − {}): {interval}", names[0], names[1]);
    }
}
