//! The simulator against closed forms: two bots of known difference (the
//! rating difference converges to it), and one round-robin cycle of a small
//! pool (the simulated τ equals its exact expectation, found by enumerating
//! every schedule and outcome); the statistics it reports (τ-b, the sign
//! test, sustained τ, the fitted scale) against hand-worked cases. Same
//! settings and seed, same report. The scheduler's regression check runs on
//! held-out seeds with a statistical margin.

use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem};
use arbiter_ladder::simulate::{
    Fidelity, Matchmaker, Point, Report, Settings, kendall_tau, match_probabilities, match_score, paired, round_robin,
    run, sign_test, summarise, sustained,
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

/// Every ordering of `items`.
fn permutations(items: &[usize]) -> Vec<Vec<usize>> {
    if items.len() <= 1 {
        return vec![items.to_vec()];
    }
    let mut out = Vec::new();
    for (i, &first) in items.iter().enumerate() {
        let mut rest = items.to_vec();
        rest.remove(i);
        for mut tail in permutations(&rest) {
            tail.insert(0, first);
            out.push(tail);
        }
    }
    out
}

/// The expected τ after one round-robin cycle of `strengths` with Elo
/// ratings (which depend on the order of the matches): the round-robin
/// matchmaker seats the bots in a random order and plays the circle
/// method's rounds in a random order, so the expectation is the mean over
/// every seating and round order, each by enumerating every sequence of
/// outcomes.
fn exact_tau(settings: &Settings, strengths: &[f64]) -> f64 {
    let seatings = permutations(&(0..strengths.len()).collect::<Vec<_>>());
    let per_round = strengths.len() / 2;
    let mut total = 0.0;
    let mut count = 0.0;
    for seats in &seatings {
        let rounds: Vec<Vec<(usize, usize)>> = round_robin(seats).chunks(per_round).map(<[_]>::to_vec).collect();
        for order in permutations(&(0..rounds.len()).collect::<Vec<_>>()) {
            let schedule: Vec<(usize, usize)> = order.iter().flat_map(|&r| rounds[r].iter().copied()).collect();
            total += exact_tau_of(settings, strengths, &schedule);
            count += 1.0;
        }
    }
    total / count
}

/// The expected τ after playing `schedule` once, by enumerating every
/// sequence of outcomes.
fn exact_tau_of(settings: &Settings, strengths: &[f64], schedule: &[(usize, usize)]) -> f64 {
    let mut expected = 0.0;
    let sequences = 3usize.pow(u32::try_from(schedule.len()).expect("small"));
    for code in 0..sequences {
        let mut book: RatingBook<usize> = RatingBook::new(RatingSystem::Elo);
        let mut probability = 1.0;
        let mut rest = code;
        for &(a, b) in schedule {
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
    for matchmaker in [
        Matchmaker::Ours,
        Matchmaker::RoundRobin,
        Matchmaker::Halite,
        Matchmaker::Information,
    ] {
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

#[test]
fn the_sign_test_meets_its_binomial_tails() {
    // 14 faster of 30: P(X ≤ 14) for Binomial(30, ½) is 0.4278, two-sided
    // 0.8555 (the 0.86 of issue 29); 9 of 30: 2 · 0.02139 = 0.0428.
    assert!((sign_test(14, 16) - 0.855_536).abs() < 1e-5, "{}", sign_test(14, 16));
    assert!((sign_test(9, 21) - 0.042_773).abs() < 1e-5, "{}", sign_test(9, 21));
    assert!((sign_test(21, 9) - sign_test(9, 21)).abs() < 1e-15);
    // 5 of 5 the same way: 2 / 32.
    assert!((sign_test(0, 5) - 0.0625).abs() < 1e-12);
    assert_eq!(sign_test(0, 0), 1.0);
    assert_eq!(sign_test(3, 3), 1.0);
}

#[test]
fn sustained_tau_waits_for_the_last_dip() {
    let series: Vec<Point> = [(10, 0.5), (20, 0.91), (30, 0.88), (40, 0.92), (50, 0.95)]
        .iter()
        .map(|&(matches, tau)| Point { matches, tau, rms: 0.0 })
        .collect();
    assert_eq!(sustained(&series, 0.9), Some(40), "first reached at 20, held from 40");
    assert_eq!(sustained(&series, 0.85), Some(20));
    assert_eq!(sustained(&series, 0.4), Some(10));
    assert_eq!(sustained(&series, 0.96), None);
    let dipping_at_the_end = &series[..3];
    assert_eq!(sustained(dipping_at_the_end, 0.9), None);
}

#[test]
fn fidelity_measures_scale_and_what_is_left() {
    // Ratings 1.2 × truth + 40, exactly: scale 1.2, nothing left after it;
    // raw RMS (mean removed only) 0.2 × the truth's spread.
    let truth = [-300.0, -100.0, 0.0, 100.0, 300.0];
    let pairs: Vec<(f64, f64)> = truth.iter().map(|&t| (t, 1.2 * t + 40.0)).collect();
    let f = Fidelity::of(&pairs);
    assert!((f.scale - 1.2).abs() < 1e-12 && f.rms < 1e-9, "{f:?}");
    let spread = (truth.iter().map(|t| t * t).sum::<f64>() / 5.0).sqrt();
    assert!((f.rms_raw - 0.2 * spread).abs() < 1e-9, "{f:?}");
}

/// The whole-log fit of a round-robin pool finds the true scale (within
/// 0.05 of 1, averaged over 10 runs) and errs less than Glicko-2 does.
#[test]
fn the_whole_log_fit_has_the_true_scale_under_round_robin() {
    let settings = Settings {
        bots: 20,
        matches: 2400,
        arrivals: 0,
        replacements: 0,
        ..Settings::default()
    };
    let reports: Vec<Report> = (0..10)
        .map(|i| {
            run(
                &Settings {
                    seed: 2000 + i,
                    ..settings.clone()
                },
                Matchmaker::RoundRobin,
            )
        })
        .collect();
    let summary = summarise(&reports).expect("runs");
    eprintln!("fit {:?}; Glicko-2 {:?}", summary.fitted, summary.glicko);
    assert!((summary.fitted.scale - 1.0).abs() < 0.05, "{summary:?}");
    assert!(summary.fitted.rms_raw < summary.glicko.rms_raw, "{summary:?}");
}

/// The regression check for scheduler changes, on seeds the scheduler was
/// not tuned on (2000 and up; tuning used seeds below 1000): on a 20-bot
/// pool with newcomers and new versions, over 20 paired runs, the ladder's
/// scheduler is not significantly slower than the Halite-style matchmaker
/// or shuffled round-robin to a τ ≥ 0.85 that holds (sign test, p ≥ 0.05
/// for "slower"), places newcomers for good no later than round-robin (medians), and shares
/// matches fairly (no bot plays more than 1.5× the average).
#[test]
fn the_scheduler_holds_its_own_on_held_out_seeds() {
    let settings = Settings::default();
    let reports = |matchmaker| -> Vec<Report> {
        (0..20)
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
    let [ours, round_robin, halite] = [Matchmaker::Ours, Matchmaker::RoundRobin, Matchmaker::Halite].map(reports);
    for (name, other) in [("round-robin", &round_robin), ("halite", &halite)] {
        let comparison = paired(&ours, other, 0);
        eprintln!("ours vs {name}: {comparison:?}");
        let significantly_slower = comparison.slower > comparison.faster && comparison.p < 0.05;
        assert!(!significantly_slower, "ours vs {name}: {comparison:?}");
    }
    let [ours, round_robin] = [&ours, &round_robin].map(|r| summarise(r).expect("runs"));
    let placed = |s: &arbiter_ladder::simulate::Summary| s.placement_median.unwrap_or(u32::MAX);
    assert!(
        placed(&ours) <= placed(&round_robin),
        "placement: ours {ours:?}, round-robin {round_robin:?}"
    );
    // The most matches of a bot, averaged over runs, against the average
    // bot's.
    let average = 2.0 * settings.matches as f64 / (settings.bots + settings.arrivals) as f64;
    assert!(
        ours.games.1 <= 1.5 * average,
        "fair shares: {ours:?} (average {average:.0})"
    );
}

/// Where the rating scale's stretch under adaptive pairing comes from, on
/// held-out seeds (3000 and up): with the Halite-style matchmaker (the
/// opponent drawn near the seed's current rank) the whole-log fit comes out
/// stretched, but the same pairings played again with fresh results fit at
/// 1.00 ± 0.05, so the stretch is the pairings' dependence on the results
/// so far, not the fit or the shape of who met whom; drawing half the
/// opponents from the whole pool shrinks it.
#[test]
fn adaptive_pairing_stretches_the_scale_and_the_same_pairs_replayed_do_not() {
    let settings = Settings {
        bots: 60,
        matches: 3600,
        arrivals: 0,
        replacements: 0,
        ..Settings::default()
    };
    let summary = |explore: u32| {
        let reports: Vec<Report> = (0..10)
            .map(|i| {
                run(
                    &Settings {
                        seed: 3000 + i,
                        explore,
                        ..settings.clone()
                    },
                    Matchmaker::Halite,
                )
            })
            .collect();
        summarise(&reports).expect("runs")
    };
    let adaptive = summary(0);
    let explored = summary(50);
    eprintln!(
        "adaptive: fit {:.3}, replayed {:.3}; explore 50%: fit {:.3}",
        adaptive.fitted.scale, adaptive.replayed.scale, explored.fitted.scale
    );
    assert!(adaptive.fitted.scale > 1.10, "{adaptive:?}");
    assert!((adaptive.replayed.scale - 1.0).abs() < 0.05, "{adaptive:?}");
    assert!(explored.fitted.scale < adaptive.fitted.scale - 0.08, "{explored:?}");
}
