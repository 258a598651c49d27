//! `arbiter simulate`: how fast the scheduler and the ratings find the true
//! order of a simulated pool, against two baseline matchmakers.

use arbiter_ladder::ratings::RatingSystem;
use arbiter_sim::{self as simulate, Matchmaker, Point, Report, Settings, Summary, TAU_TARGETS};
use plotters::prelude::*;
use std::path::{Path, PathBuf};

/// Simulates the ladder with hidden true strengths: the real scheduler and
/// rating code, simulated results. Prints, per matchmaker, the matches until
/// the ranking reaches Kendall τ ≥ 0.85 and ≥ 0.9 and holds there to the
/// end (and when it first got there), until a newcomer's rating is within
/// ±50 of its strength (first, and for good), the rating scale (slope
/// against the truth) and error after removing it for Glicko-2 and for the
/// whole-log fit, the fit's coverage (the share of bots whose 95% interval
/// contains their true strength) and its adjacent claims ("A above B" at
/// 95% or more: how many, how many true), the fit de-stretched by a
/// parametric bootstrap under the same matchmaker (`--bootstrap`), and
/// fairness; then every two matchmakers compared seed by seed with a sign
/// test and a Wilcoxon signed-rank test. Writes τ and error against
/// matches as SVG with `--out`, one CSV row per seed and matchmaker with
/// `--per-seed`.
#[derive(clap::Args)]
#[command(after_help = concat!(
    "Examples:\n",
    "  arbiter simulate                                   # 20 bots, 5 runs, all four matchmakers\n",
    "  arbiter simulate --bots 200 --runs 30 --concurrency 16   # the docs' table, one row\n",
    "  arbiter simulate --bots 200 --runs 3 --out plots   # and tau.svg, error.svg in plots/\n",
    "  arbiter simulate --nontransitive 50 --first-move 30 --matchmaker ours\n",
    "  arbiter simulate --bots 200 --runs 30 --matchmaker ours --per-seed ours.csv",
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
    /// Seed of the first run; run i uses seed + i. Seeds below 1000 are
    /// for tuning (the scheduler's constants were chosen on them); the
    /// default reports on held-out seeds from 1000.
    #[arg(long, default_value_t = REPORTING_SEEDS)]
    seed: u64,
    /// Percent of the Halite-style matchmaker's pairings that draw the
    /// opponent from the whole pool (pairings independent of the results).
    #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u32).range(0..=100))]
    explore: u32,
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
    /// Writes one CSV row per seed and matchmaker to this file.
    #[arg(long, value_name = "FILE")]
    per_seed: Option<PathBuf>,
    /// Bootstrap replicates per round, at least, for the de-stretched fit
    /// (two rounds: the run's design played again with the fitted
    /// strengths as the truth, then with the first round's de-stretched
    /// ones; small pools play more, up to 20, to hold 400 bots a round;
    /// 0: none).
    #[arg(long, default_value_t = 2)]
    bootstrap: u64,
}

/// The first seed kept for reporting: tuning uses seeds below it.
const REPORTING_SEEDS: u64 = 1000;

/// Runs `arbiter simulate`.
pub fn run(args: Args) -> anyhow::Result<()> {
    anyhow::ensure!(args.bots >= 2, "--bots must be at least 2");
    anyhow::ensure!(args.runs >= 1, "--runs must be at least 1");
    anyhow::ensure!(
        (0.0..=0.5).contains(&args.draw_rate),
        "--draw-rate must be between 0 and 0.5"
    );
    let matchmakers = if args.matchmaker.is_empty() {
        vec![
            Matchmaker::RoundRobin,
            Matchmaker::Halite,
            Matchmaker::Information,
            Matchmaker::Ours,
        ]
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
        explore: args.explore,
        later: Vec::new(),
        replicate: 0,
        bootstrap: args.bootstrap,
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
    let last_seed = args.seed.saturating_add(args.runs - 1);
    println!(
        "concurrency {}; seeds {}–{}: {} (tuning seeds are below {REPORTING_SEEDS}, reporting seeds {REPORTING_SEEDS} and above)",
        base.concurrency,
        args.seed,
        last_seed,
        if args.seed >= REPORTING_SEEDS {
            "held out for reporting"
        } else if last_seed < REPORTING_SEEDS {
            "TUNING seeds, not for reporting"
        } else {
            "MIXED tuning and reporting seeds"
        }
    );
    let mut results: Vec<(Summary, Vec<Point>)> = Vec::new();
    let mut all_reports: Vec<Vec<Report>> = Vec::new();
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
        all_reports.push(reports);
    }
    print_table(&results);
    print_paired(&matchmakers, &all_reports);
    if let Some(path) = &args.per_seed {
        write_per_seed(path, &all_reports)?;
        println!("per seed: {}", path.display());
    }
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

/// The CSV columns of `--per-seed`.
const PER_SEED_HEADER: &str = "seed,matchmaker,matches,tau85_held,tau90_held,tau85_first,tau90_first,final_tau,fit_tau,\
glicko_scale,glicko_rms,fit_scale,fit_rms,replayed_scale,stretch,widening,destretched_scale,destretched_rms,\
bots,covered,covered_destretched,covered_conditional,adjacent,claims,claims_right,placed_median,fewest,most,rematch_rate";

/// Writes one row per seed and matchmaker (an empty cell: never, or not
/// measured).
fn write_per_seed(path: &Path, reports: &[Vec<Report>]) -> anyhow::Result<()> {
    use std::fmt::Write as _;
    let mut csv = String::from(PER_SEED_HEADER);
    csv.push('\n');
    let cell = |m: Option<usize>| m.map_or(String::new(), |m| m.to_string());
    for r in reports.iter().flatten() {
        let placed = {
            let mut p: Vec<u32> = r.placements.iter().flatten().copied().collect();
            p.sort_unstable();
            if r.placements.is_empty() || p.len() * 2 <= r.placements.len() {
                String::new()
            } else {
                p[(r.placements.len() - 1) / 2].to_string()
            }
        };
        let d = r.destretched;
        let opt = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.4}"));
        writeln!(
            csv,
            "{},{},{},{},{},{},{},{:.4},{:.4},{:.4},{:.2},{:.4},{:.2},{:.4},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{:.4}",
            r.seed,
            r.matchmaker,
            r.matches,
            cell(r.tau_sustained[0]),
            cell(r.tau_sustained[1]),
            cell(r.tau_first[0]),
            cell(r.tau_first[1]),
            r.series.last().map_or(0.0, |p| p.tau),
            r.fit_tau,
            r.glicko.scale,
            r.glicko.rms,
            r.fitted.scale,
            r.fitted.rms,
            r.replayed.scale,
            opt(d.map(|d| d.stretch)),
            opt(d.map(|d| d.widening)),
            opt(d.map(|d| d.fidelity.scale)),
            opt(d.map(|d| d.fidelity.rms)),
            r.coverage.bots,
            r.coverage.covered,
            d.map_or(String::new(), |d| d.coverage.covered.to_string()),
            r.coverage.covered_conditional,
            r.coverage.adjacent,
            r.coverage.claims,
            r.coverage.claims_right,
            placed,
            r.games.0,
            r.games.1,
            r.rematch_rate
        )?;
    }
    std::fs::write(path, csv).map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))
}

fn print_table(results: &[(Summary, Vec<Point>)]) {
    let median = |m: Option<usize>, runs: usize, of: usize| match m {
        Some(m) => format!("{m} ({runs}/{of})"),
        None => format!("never ({runs}/{of})"),
    };
    println!(
        "{:<12} {:>15} {:>15} {:>9} {:>15} {:>14} {:>15} {:>10} {:>11} {:>9}",
        "matchmaker",
        "τ≥0.85 held",
        "τ≥0.9 held",
        "τ≥0.9 1st",
        "placed 1st/held",
        "G-2 scale/RMS",
        "fit scale/RMS",
        "replayed",
        "most/avg",
        "rematches"
    );
    for (s, _) in results {
        let placed = if s.newcomers.0 == 0 {
            "-".to_owned()
        } else {
            let show = |m: Option<u32>| m.map_or("never".to_owned(), |m| m.to_string());
            format!(
                "{}/{} ({}/{})",
                show(s.first_placement_median),
                show(s.placement_median),
                s.newcomers.1,
                s.newcomers.0
            )
        };
        println!(
            "{:<12} {:>15} {:>15} {:>9} {:>15} {:>14} {:>15} {:>10.3} {:>11} {:>8.1}%",
            s.matchmaker.to_string(),
            median(s.tau_sustained[0], s.tau_runs[0], s.runs),
            median(s.tau_sustained[1], s.tau_runs[1], s.runs),
            s.tau_first[1].map_or("never".to_owned(), |m| m.to_string()),
            placed,
            format!("{:.3}/{:.1}", s.glicko.scale, s.glicko.rms),
            format!("{:.3}/{:.1}", s.fitted.scale, s.fitted.rms),
            s.replayed.scale,
            format!("{:.0}..{:.0} {:.2}", s.games.0, s.games.1, s.most_over_average),
            100.0 * s.rematch_rate
        );
    }
    println!(
        "{:<12} {:>9} {:>11} {:>13} {:>15} {:>17} {:>8}",
        "", "fit cover", "(cond.)", "claims right", "de-str. scale", "de-str. cover", "fit τ"
    );
    for (s, _) in results {
        let c = s.coverage;
        let percent = |x: usize, of: usize| format!("{:.1}%", 100.0 * x as f64 / of.max(1) as f64);
        let (scale, cover) = s.destretched.map_or(("-".to_owned(), "-".to_owned()), |d| {
            (
                format!("{:.3} (÷{:.3})", d.fidelity.scale, d.stretch),
                format!("{} (×{:.2})", percent(d.coverage.covered, d.coverage.bots), d.widening),
            )
        });
        println!(
            "{:<12} {:>9} {:>11} {:>13} {:>15} {:>17} {:>8.3}",
            s.matchmaker.to_string(),
            percent(c.covered, c.bots),
            percent(c.covered_conditional, c.bots),
            format!("{}/{} of {}", c.claims_right, c.claims, c.adjacent),
            scale,
            cover,
            s.fit_tau
        );
    }
    println!(
        "(fit cover: share of bots whose 95% interval (full covariance) contains the true strength, over runs; cond.: the conditional interval's; \
         claims right: adjacent pairs where the fit says \"upper above lower\" with 95% or more, true of claimed, of adjacent pairs; \
         de-str.: the fit with the stretch measured by the bootstrap divided out (scale, and the stretch), and its intervals' coverage (intervals widened by the bootstrap's factor); fit τ: Kendall τ of the fit at the end)"
    );
    println!(
        "(held: median matches until τ reached the threshold and stayed there to the end, runs that got there; 1st: median first time; \
         placed: a newcomer's median own matches until first within ±50 / within ±50 for 10 matches in a row, newcomers placed; \
         scale: slope of rating against true strength (1 is right), RMS after removing mean and scale, at the end; \
         replayed: the fit's scale when the same pairings are played again with fresh results (pairings independent of results); \
         most/avg: fewest..most matches of a bot, and at worst over runs the most over the average)"
    );
}

/// Every two matchmakers compared seed by seed (the same seeds, so the
/// same pools and arrivals) on the matches until τ held, with the sign
/// test's two-sided p-value.
fn print_paired(matchmakers: &[Matchmaker], reports: &[Vec<Report>]) {
    if reports.first().is_none_or(|r| r.len() < 2) || matchmakers.len() < 2 {
        return;
    }
    println!(
        "paired by seed (sign test and Wilcoxon signed-rank test, two-sided; ratio: total matches over the seeds both reached):"
    );
    for i in 0..matchmakers.len() {
        for j in i + 1..matchmakers.len() {
            for (k, target) in TAU_TARGETS.iter().enumerate() {
                let paired = simulate::paired(&reports[j], &reports[i], k);
                let p = if paired.p < 0.001 {
                    format!("{:.1e}", paired.p)
                } else {
                    format!("{:.3}", paired.p)
                };
                let w = if paired.wilcoxon < 0.001 {
                    format!("{:.1e}", paired.wilcoxon)
                } else {
                    format!("{:.3}", paired.wilcoxon)
                };
                println!(
                    "  τ≥{target:<4} {:>12} vs {:<12} faster on {:>3}, slower on {:>3}, tied {:>3}: sign p = {p}, Wilcoxon p = {w}; ratio {}",
                    matchmakers[j].to_string(),
                    matchmakers[i].to_string(),
                    paired.faster,
                    paired.slower,
                    paired.ties,
                    paired.ratio.map_or("-".to_owned(), |r| format!("{r:.3}"))
                );
            }
        }
    }
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
