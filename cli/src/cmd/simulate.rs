//! `arbiter simulate`: how fast the scheduler and the ratings find the true
//! order of a simulated pool, against two baseline matchmakers.

use arbiter_ladder::ratings::RatingSystem;
use arbiter_ladder::simulate::{self, Matchmaker, Point, Report, Settings, Summary};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Simulates the ladder with hidden true strengths: the real scheduler and
/// rating code, simulated results. Prints, per matchmaker, the matches until
/// the ranking reaches Kendall τ ≥ 0.9 and until a newcomer's rating is
/// within ±50 of its strength, the final error and fairness; writes τ and
/// error against matches as SVG with `--out`.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter simulate                                   # 20 bots, 5 runs, all three matchmakers\n",
    "  arbiter simulate --bots 200 --runs 3 --out plots   # and tau.svg, error.svg in plots/\n",
    "  arbiter simulate --nontransitive 50 --first-move 30 --matchmaker ours",
))]
pub struct Args {
    /// Bots in the pool at the start.
    #[arg(long, default_value_t = 20)]
    bots: usize,
    /// Matches per run (default: 60 per bot).
    #[arg(long)]
    matches: Option<usize>,
    /// Matches scheduled at once.
    #[arg(long, default_value_t = 2)]
    concurrency: usize,
    /// New bots arriving during the second half.
    #[arg(long, default_value_t = 5)]
    arrivals: usize,
    /// Bots replaced by a new version during the second half.
    #[arg(long, default_value_t = 2)]
    replacements: usize,
    /// Spread (standard deviation) of true strengths, Elo.
    #[arg(long, default_value_t = 200.0)]
    spread: f64,
    /// Probability that a game between equals is drawn.
    #[arg(long, default_value_t = 0.1)]
    draw_rate: f64,
    /// Standard deviation of fixed per-pair offsets, Elo (non-transitivity).
    #[arg(long, default_value_t = 0.0)]
    nontransitive: f64,
    /// Advantage of the side that moves first, Elo.
    #[arg(long, default_value_t = 0.0)]
    first_move: f64,
    /// Seed of the first run; run i uses seed + i.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Runs per matchmaker (medians and means over them).
    #[arg(long, default_value_t = 5)]
    runs: u64,
    /// Matchmakers to compare (repeatable; default all).
    #[arg(long, value_enum)]
    matchmaker: Vec<Matchmaker>,
    /// Rating system.
    #[arg(long, value_enum, default_value = "glicko2")]
    rating: RatingSystem,
    /// Folder for tau.svg and error.svg.
    #[arg(long)]
    out: Option<PathBuf>,
}

/// Runs `arbiter simulate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.bots >= 2, "--bots must be at least 2");
    anyhow::ensure!(args.runs >= 1, "--runs must be at least 1");
    anyhow::ensure!(
        (0.0..=0.5).contains(&args.draw_rate),
        "--draw-rate must be between 0 and 0.5"
    );
    let matchmakers = if args.matchmaker.is_empty() {
        vec![Matchmaker::RoundRobin, Matchmaker::Halite, Matchmaker::Ours]
    } else {
        args.matchmaker.clone()
    };
    let base = Settings {
        bots: args.bots,
        matches: args.matches.unwrap_or(60 * args.bots),
        concurrency: args.concurrency.max(1),
        arrivals: args.arrivals,
        replacements: args.replacements.min(args.bots),
        spread: args.spread,
        draw_rate: args.draw_rate,
        nontransitive: args.nontransitive,
        first_move: args.first_move,
        seed: args.seed,
        rating: args.rating,
        strengths: Vec::new(),
    };
    println!(
        "{} bots (+{} arriving, {} replaced), {} matches per run, {} runs, spread {} Elo, draw rate {}, non-transitivity {}, first move +{}",
        base.bots,
        base.arrivals,
        base.replacements,
        base.matches,
        args.runs,
        base.spread,
        base.draw_rate,
        base.nontransitive,
        base.first_move
    );
    let mut results: Vec<(Summary, Vec<Point>)> = Vec::new();
    for &matchmaker in &matchmakers {
        let reports: Vec<Report> = (0..args.runs)
            .map(|i| {
                let settings = Settings {
                    seed: args.seed.wrapping_add(i),
                    ..base.clone()
                };
                simulate::run(&settings, matchmaker)
            })
            .collect();
        if let Some(summary) = simulate::summarise(&reports) {
            results.push((summary, mean_series(&reports)));
        }
    }
    print_table(&results);
    if let Some(out) = &args.out {
        std::fs::create_dir_all(out)?;
        plot(
            &out.join("tau.svg"),
            "Kendall τ against the true order",
            &results,
            |p| p.tau,
        )?;
        plot(&out.join("error.svg"), "RMS rating error (Elo)", &results, |p| p.rms)?;
        println!(
            "plots: {}, {}",
            out.join("tau.svg").display(),
            out.join("error.svg").display()
        );
    }
    Ok(())
}

/// The runs' series averaged point by point (runs share their checkpoints
/// up to the shortest run).
fn mean_series(reports: &[Report]) -> Vec<Point> {
    let shortest = reports.iter().map(|r| r.series.len()).min().unwrap_or(0);
    (0..shortest)
        .map(|k| {
            let n = reports.len() as f64;
            Point {
                matches: reports[0].series[k].matches,
                tau: reports.iter().map(|r| r.series[k].tau).sum::<f64>() / n,
                rms: reports.iter().map(|r| r.series[k].rms).sum::<f64>() / n,
            }
        })
        .collect()
}

fn print_table(results: &[(Summary, Vec<Point>)]) {
    println!(
        "{:<12} {:>14} {:>18} {:>10} {:>13} {:>9}",
        "matchmaker", "τ ≥ 0.9 after", "placed (±50) after", "final RMS", "matches/bot", "rematches"
    );
    for (s, _) in results {
        let tau = match s.tau_median {
            Some(m) => format!("{m} ({}/{})", s.tau_runs, s.runs),
            None => format!("never ({}/{})", s.tau_runs, s.runs),
        };
        let placed = match s.placement_median {
            Some(m) => format!("{m} ({}/{})", s.newcomers.1, s.newcomers.0),
            None if s.newcomers.0 == 0 => "-".to_owned(),
            None => format!("never ({}/{})", s.newcomers.1, s.newcomers.0),
        };
        println!(
            "{:<12} {:>14} {:>18} {:>10.1} {:>13} {:>8.1}%",
            s.matchmaker.to_string(),
            tau,
            placed,
            s.final_rms,
            format!("{:.0}..{:.0}", s.games.0, s.games.1),
            100.0 * s.rematch_rate
        );
    }
    println!(
        "(τ: median matches over runs until τ ≥ 0.9, runs that got there; placed: median own matches of a newcomer until within ±50 for 10 matches, newcomers placed)"
    );
}

/// Draws one line per matchmaker of `value` against matches.
fn plot(path: &Path, title: &str, results: &[(Summary, Vec<Point>)], value: fn(&Point) -> f64) -> anyhow::Result<()> {
    let max_x = results
        .iter()
        .flat_map(|(_, s)| s.last().map(|p| p.matches))
        .max()
        .unwrap_or(1);
    let values = results.iter().flat_map(|(_, s)| s.iter().map(value));
    let (low, high) = values.fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| (l.min(v), h.max(v)));
    let (low, high) = if low.is_finite() {
        (low.min(0.0), high.max(low + 1e-9))
    } else {
        (0.0, 1.0)
    };
    let root = SVGBackend::new(path, (800, 480)).into_drawing_area();
    let draw = |e: &dyn std::fmt::Display| anyhow::anyhow!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| draw(&e))?;
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 20))
        .margin(16)
        .x_label_area_size(36)
        .y_label_area_size(56)
        .build_cartesian_2d(0usize..max_x, low..high * 1.05)
        .map_err(|e| draw(&e))?;
    chart.configure_mesh().x_desc("matches").draw().map_err(|e| draw(&e))?;
    let colours = [RED, BLUE, GREEN, BLACK, MAGENTA, CYAN];
    for (i, (summary, series)) in results.iter().enumerate() {
        let colour = colours[i % colours.len()];
        chart
            .draw_series(LineSeries::new(series.iter().map(|p| (p.matches, value(p))), colour))
            .map_err(|e| draw(&e))?
            .label(summary.matchmaker.to_string())
            .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 20, y)], colour));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .draw()
        .map_err(|e| draw(&e))?;
    root.present().map_err(|e| draw(&e))?;
    Ok(())
}
