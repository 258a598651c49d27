//! The simulator against closed forms: two bots of known difference (the
//! rating difference converges to it), and one round-robin cycle of a small
//! pool (the simulated τ equals its exact expectation, found by enumerating
//! every outcome). Same settings and seed, same report.

use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem};
use arbiter_ladder::simulate::{
    Matchmaker, Report, Settings, kendall_tau, match_probabilities, match_score, round_robin, run,
};

/// The mean of `measure` over runs of `settings` with seeds `0..runs`,
/// paired by round-robin.
fn mean_over_seeds(settings: &Settings, runs: u64, measure: impl Fn(&Report) -> f64) -> f64 {
    let total: f64 = (0..runs)
        .map(|seed| {
            let report = run(
                &Settings {
                    seed,
                    ..settings.clone()
                },
                Matchmaker::RoundRobin,
            );
            measure(&report)
        })
        .sum();
    total / runs as f64
}

fn elo(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

#[test]
fn two_bots_of_known_difference_converge_to_it() {
    let settings = Settings {
        strengths: vec![1600.0, 1500.0],
        matches: 400,
        concurrency: 1,
        arrivals: 0,
        replacements: 0,
        ..Settings::default()
    };
    let runs = 300;
    let estimate = mean_over_seeds(&settings, runs, |report| {
        assert_eq!(report.matches, 400);
        report.ratings[0].1 - report.ratings[1].1
    });
    eprintln!("two bots 100 game-Elo apart: mean rating difference {estimate:.1} over {runs} runs");
    // A match of two games separates them a little more than one game.
    let truth = elo(match_score(&settings, 100.0));
    assert!((truth - 109.8).abs() < 0.1, "{truth}");
    eprintln!("the model's match-Elo difference: {truth:.1}");
    assert!(
        (estimate - truth).abs() < 12.0,
        "mean rating difference {estimate:.1} after 400 matches, {runs} runs; the model says {truth:.1}"
    );
}

/// The expected τ after one round-robin cycle of `strengths` with Elo
/// ratings, by enumerating every sequence of outcomes.
fn exact_tau(settings: &Settings, strengths: &[f64]) -> f64 {
    let schedule = round_robin(&(0..strengths.len()).collect::<Vec<_>>());
    let mut expected = 0.0;
    let sequences = 3usize.pow(u32::try_from(schedule.len()).expect("small"));
    for code in 0..sequences {
        let mut book: RatingBook<usize> = RatingBook::new(RatingSystem::Elo);
        let mut probability = 1.0;
        let mut rest = code;
        for &(a, b) in &schedule {
            let (win, draw, loss) = match_probabilities(settings, strengths[a] - strengths[b]);
            let (outcome, p) = match rest % 3 {
                0 => (Outcome::Win, win),
                1 => (Outcome::Draw, draw),
                _ => (Outcome::Loss, loss),
            };
            rest /= 3;
            probability *= p;
            book.apply(&a, &b, outcome);
        }
        let pairs: Vec<(f64, f64)> = strengths
            .iter()
            .enumerate()
            .map(|(i, &s)| (s, book.get(&i).rating))
            .collect();
        expected += probability * kendall_tau(&pairs);
    }
    expected
}

#[test]
fn one_round_robin_cycle_gives_the_tau_theory_expects() {
    let strengths = vec![1300.0, 1450.0, 1550.0, 1700.0];
    let settings = Settings {
        strengths: strengths.clone(),
        matches: 6,
        concurrency: 1,
        arrivals: 0,
        replacements: 0,
        rating: RatingSystem::Elo,
        ..Settings::default()
    };
    let theory = exact_tau(&settings, &strengths);
    let runs = 20_000;
    let simulated = mean_over_seeds(&settings, runs, |report| report.series.last().expect("a point").tau);
    eprintln!("one round-robin cycle of 4: simulated τ {simulated:.4}, exact {theory:.4}");
    assert!(
        (simulated - theory).abs() < 0.015,
        "simulated τ {simulated:.4} over {runs} runs; exact {theory:.4}"
    );
    assert!(theory > 0.3 && theory < 0.9, "a test that can tell: {theory}");
}

#[test]
fn the_same_settings_and_seed_give_the_same_report() {
    let settings = Settings {
        bots: 12,
        matches: 300,
        nontransitive: 40.0,
        first_move: 30.0,
        ..Settings::default()
    };
    for matchmaker in [Matchmaker::Ours, Matchmaker::RoundRobin, Matchmaker::Halite] {
        assert_eq!(run(&settings, matchmaker), run(&settings, matchmaker), "{matchmaker}");
    }
    let other = Settings {
        seed: 2,
        ..settings.clone()
    };
    assert_ne!(run(&settings, Matchmaker::Ours), run(&other, Matchmaker::Ours));
}

#[test]
fn kendall_tau_of_known_orders() {
    let same = [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
    assert!((kendall_tau(&same) - 1.0).abs() < 1e-12);
    let reversed = [(1.0, 30.0), (2.0, 20.0), (3.0, 10.0)];
    assert!((kendall_tau(&reversed) + 1.0).abs() < 1e-12);
    // One discordant pair of three: (2 − 1) / 3.
    let one_swap = [(1.0, 10.0), (2.0, 30.0), (3.0, 20.0)];
    assert!((kendall_tau(&one_swap) - 1.0 / 3.0).abs() < 1e-12);
}

/// The regression check for scheduler changes: on a 20-bot pool (30 runs,
/// fixed seeds, newcomers and new versions arriving), the ladder's
/// scheduler reaches τ ≥ 0.9 no later than round-robin and the
/// Halite-style matchmaker (medians), and places newcomers no later than
/// Halite (round-robin barely places them at all), while sharing matches
/// fairly (no bot plays more than 1.5× the average).
#[test]
fn the_scheduler_beats_both_baselines_on_a_small_pool() {
    let settings = Settings::default();
    let summary = |matchmaker| {
        let reports: Vec<Report> = (0..30)
            .map(|seed| {
                run(
                    &Settings {
                        seed: seed + 1,
                        ..settings.clone()
                    },
                    matchmaker,
                )
            })
            .collect();
        arbiter_ladder::simulate::summarise(&reports).expect("runs")
    };
    let [ours, round_robin, halite] = [Matchmaker::Ours, Matchmaker::RoundRobin, Matchmaker::Halite].map(summary);
    eprintln!("{ours:?}\n{round_robin:?}\n{halite:?}");
    let tau = |s: &arbiter_ladder::simulate::Summary| s.tau_median.unwrap_or(usize::MAX);
    assert!(
        tau(&ours) <= tau(&round_robin),
        "τ: ours {ours:?}, round-robin {round_robin:?}"
    );
    assert!(tau(&ours) <= tau(&halite), "τ: ours {ours:?}, halite {halite:?}");
    let placed = |s: &arbiter_ladder::simulate::Summary| s.placement_median.unwrap_or(u32::MAX);
    assert!(
        placed(&ours) <= placed(&halite),
        "placement: ours {ours:?}, halite {halite:?}"
    );
    assert!(
        placed(&ours) < placed(&round_robin),
        "placement: ours {ours:?}, round-robin {round_robin:?}"
    );
    let average = 2.0 * settings.matches as f64 / (settings.bots + settings.arrivals) as f64;
    assert!(
        ours.games.1 <= 1.5 * average,
        "fair shares: {ours:?} (average {average:.0})"
    );
}
