//! Tuning the de-stretched fit quickly (a release build links in seconds
//! where `arbiter` takes minutes): `cargo run --release -p arbiter-sim
//! --example tune -- BOTS RUNS SEED MATCHMAKER [CONCURRENCY [MATCHES_PER_BOT]]`
//! prints the fit's scale and coverage and the de-stretched fit's, as
//! `arbiter simulate` does with `--arrivals 5 --replacements 2` (its
//! defaults) and `--bootstrap 2`.

use arbiter_sim::{Matchmaker, Settings, run, summarise};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let number = |k: usize, default: u64| args.get(k).and_then(|a| a.parse().ok()).unwrap_or(default);
    let (bots, runs, seed) = (number(0, 200) as usize, number(1, 10), number(2, 1));
    let matchmaker = match args.get(3).map(String::as_str) {
        Some("round-robin") => Matchmaker::RoundRobin,
        Some("halite") => Matchmaker::Halite,
        _ => Matchmaker::Ours,
    };
    let concurrency = number(4, 2) as usize;
    let per_bot = number(5, 120) as usize;
    let settings = Settings {
        bots,
        matches: per_bot * bots / 2,
        concurrency,
        arrivals: 5,
        replacements: 2.min(bots),
        bootstrap: std::env::var("REPLICATES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(2),
        ..Settings::default()
    };
    let started = std::time::Instant::now();
    let reports: Vec<_> = (0..runs)
        .map(|i| {
            run(
                &Settings {
                    seed: seed + i,
                    ..settings.clone()
                },
                matchmaker,
            )
        })
        .collect();
    let s = summarise(&reports).expect("runs");
    let d = s.destretched.unwrap_or_default();
    println!(
        "{bots} bots, {runs} runs from seed {seed}, {matchmaker}, concurrency {concurrency}, {per_bot} per bot: \
         fit scale {:.3} cover {:.1}% (cond. {:.1}%) claims {}/{} of {} | de-str. scale {:.3} (stretch {:.3}) cover {:.1}% (widening {:.3}) | tau {:.3} | {:.1} s",
        s.fitted.scale,
        100.0 * s.coverage.share(),
        100.0 * s.coverage.covered_conditional as f64 / s.coverage.bots.max(1) as f64,
        s.coverage.claims_right,
        s.coverage.claims,
        s.coverage.adjacent,
        d.fidelity.scale,
        d.stretch,
        100.0 * d.coverage.share(),
        d.widening,
        s.fit_tau,
        started.elapsed().as_secs_f64()
    );
    for r in &reports {
        if let Some(d) = r.destretched {
            println!(
                "  seed {}: fit {:.3} de-str. {:.3} stretch {:.3} cover {}/{} widening {:.3}",
                r.seed, r.fitted.scale, d.fidelity.scale, d.stretch, d.coverage.covered, d.coverage.bots, d.widening
            );
        }
    }
}
