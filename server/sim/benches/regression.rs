//! The scheduler's regression check, a bench so that `cargo test` stays
//! fast: `cargo bench -p arbiter-sim --bench regression`.
//!
//! On held-out seeds (2000 and up; the scheduler's constants were tuned on
//! seeds below 1000, the docs' tables use 1000 and up), a pool of 200 bots
//! (+5 arriving, 2 replaced, 60 matches per bot) at concurrency 2 and 16,
//! the ladder's scheduler (`ours`) is compared seed by seed with the
//! Halite-III-style matchmaker and with shuffled round-robin on the
//! matches until Kendall τ ≥ 0.85 and ≥ 0.9 holds to the end of the run.
//! It fails (exit status 1) when, at either concurrency and either τ,
//! `ours` is significantly slower than either (slower on more seeds and a
//! two-sided sign test or Wilcoxon signed-rank p below 0.05), when its
//! median placement of newcomers is later than round-robin's, or when a
//! bot plays more than 1.5× the average (averaged over runs). It prints
//! every figure it checks: the baseline to compare a change with.
//!
//! `ARBITER_BENCH_SEEDS` (default 20) sets the seeds per setting.

use arbiter_sim::{Matchmaker, Report, Settings, TAU_TARGETS, paired, run, summarise};
use std::time::Instant;

fn main() {
    let seeds: u64 = std::env::var("ARBITER_BENCH_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let started = Instant::now();
    let mut failures = Vec::new();
    println!(
        "scheduler regression check: 200 bots, seeds 2000–{} (held out)",
        2000 + seeds - 1
    );
    for concurrency in [2, 16] {
        let settings = Settings {
            bots: 200,
            matches: 12_000,
            concurrency,
            arrivals: 5,
            replacements: 2,
            ..Settings::default()
        };
        let reports = |matchmaker| -> Vec<Report> {
            (0..seeds)
                .map(|i| {
                    run(
                        &Settings {
                            seed: 2000 + i,
                            ..settings.clone()
                        },
                        matchmaker,
                    )
                })
                .collect()
        };
        let [ours, halite, round_robin] = [Matchmaker::Ours, Matchmaker::Halite, Matchmaker::RoundRobin].map(reports);
        for (name, other) in [("halite", &halite), ("round-robin", &round_robin)] {
            for (k, target) in TAU_TARGETS.iter().enumerate() {
                let c = paired(&ours, other, k);
                println!(
                    "concurrency {concurrency:>2}, τ ≥ {target}: ours vs {name:<11} faster {:>2}, slower {:>2}, tied {:>2}; sign p = {:.3}, Wilcoxon p = {:.3}; ratio {}",
                    c.faster,
                    c.slower,
                    c.ties,
                    c.p,
                    c.wilcoxon,
                    c.ratio.map_or("-".to_owned(), |r| format!("{r:.3}"))
                );
                if c.slower > c.faster && (c.p < 0.05 || c.wilcoxon < 0.05) {
                    failures.push(format!(
                        "concurrency {concurrency}, τ ≥ {target}: ours is significantly slower than {name} ({c:?})"
                    ));
                }
            }
        }
        let summary = |r: &[Report]| summarise(r).expect("runs");
        let (s_ours, s_rr) = (summary(&ours), summary(&round_robin));
        let placed = |s: &arbiter_sim::Summary| s.placement_median.unwrap_or(u32::MAX);
        let average = 2.0 * settings.matches as f64 / (settings.bots + settings.arrivals) as f64;
        println!(
            "concurrency {concurrency:>2}: ours τ ≥ 0.85 held at {} (median), τ ≥ 0.9 at {}; newcomers placed for good after {} own matches (round-robin {}); most matches of a bot {:.0} (average {average:.0})",
            s_ours.tau_sustained[0].map_or("never".to_owned(), |m| m.to_string()),
            s_ours.tau_sustained[1].map_or("never".to_owned(), |m| m.to_string()),
            placed(&s_ours),
            placed(&s_rr),
            s_ours.games.1
        );
        if placed(&s_ours) > placed(&s_rr) {
            failures.push(format!(
                "concurrency {concurrency}: newcomers placed later than under round-robin ({} > {})",
                placed(&s_ours),
                placed(&s_rr)
            ));
        }
        if s_ours.games.1 > 1.5 * average {
            failures.push(format!(
                "concurrency {concurrency}: a bot played {:.0} matches, more than 1.5× the average {average:.0}",
                s_ours.games.1
            ));
        }
    }
    println!("{:.0} s", started.elapsed().as_secs_f64());
    if !failures.is_empty() {
        for f in &failures {
            eprintln!("REGRESSION: {f}");
        }
        std::process::exit(1);
    }
    println!("no regression");
}
