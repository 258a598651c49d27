//! The simulator against closed forms: two bots of known difference (the
//! rating difference converges to it), and one round-robin cycle of a small
//! pool (the simulated τ equals its exact expectation, found by enumerating
//! every schedule and outcome); the statistics it reports (τ-b, the sign
//! test, the Wilcoxon signed-rank test, sustained τ, the fitted scale)
//! against hand-worked cases; the fit's intervals cover the truth and the
//! bootstrap takes the stretch out. Same settings and seed, same report.
//! The scheduler's regression check is a bench (`cargo bench -p arbiter-sim
//! --bench regression`), so that these stay fast.

use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem};
use arbiter_sim::{
    Fidelity, Matchmaker, Point, Report, Settings, kendall_tau, match_probabilities, match_score, paired, round_robin,
    run, sign_test, summarise, sustained, wilcoxon,
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

#[test]
fn the_wilcoxon_test_meets_exact_values() {
    // Fisher's differences as in SciPy's documentation of `wilcoxon`:
    // W = 24, exact two-sided p = 0.041259765625.
    let d = [
        6.0, 8.0, 14.0, 16.0, 23.0, 24.0, 28.0, 29.0, 41.0, -48.0, 49.0, 56.0, 60.0, -67.0, 75.0,
    ];
    assert!((wilcoxon(&d) - 0.041_259_765_625).abs() < 1e-12, "{}", wilcoxon(&d));
    // Five of five the same way: 2 / 32; one rank-1 exception: 4 / 32.
    assert!((wilcoxon(&[1.0, 2.0, 3.0, 4.0, 5.0]) - 0.0625).abs() < 1e-12);
    assert!((wilcoxon(&[-1.0, 2.0, 3.0, 4.0, 5.0]) - 0.125).abs() < 1e-12);
    // Ties share their mean rank; zeros are dropped.
    assert!((wilcoxon(&[1.0, 1.0, -1.0, 0.0]) - 1.0).abs() < 1e-12);
    assert_eq!(wilcoxon(&[0.0, 0.0]), 1.0);
}

#[test]
fn paired_runs_give_both_tests() {
    let settings = Settings {
        bots: 10,
        matches: 400,
        arrivals: 0,
        replacements: 0,
        ..Settings::default()
    };
    let reports = |matchmaker| -> Vec<Report> {
        (0..6)
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
    let (ours, halite) = (reports(Matchmaker::Ours), reports(Matchmaker::Halite));
    let c = paired(&ours, &halite, 0);
    assert_eq!(c.faster + c.slower + c.ties, 6);
    assert!((0.0..=1.0).contains(&c.wilcoxon) && (0.0..=1.0).contains(&c.p), "{c:?}");
    let same = paired(&ours, &ours, 0);
    assert_eq!((same.p, same.wilcoxon), (1.0, 1.0));
}

/// The fit's intervals from the full covariance cover the truth: under
/// round-robin (a fixed design) at least 93% of bots over 10 held-out runs
/// of 40 bots at 120 matches each, where the conditional intervals (the
/// others held) are no wider, and the adjacent claims at 95% are right at
/// least 95% of the time.
#[test]
fn the_fits_intervals_cover_under_round_robin() {
    let settings = Settings {
        bots: 40,
        matches: 2400,
        arrivals: 0,
        replacements: 0,
        ..Settings::default()
    };
    let reports: Vec<Report> = (0..10)
        .map(|i| {
            run(
                &Settings {
                    seed: 4000 + i,
                    ..settings.clone()
                },
                Matchmaker::RoundRobin,
            )
        })
        .collect();
    let s = summarise(&reports).expect("runs");
    let c = s.coverage;
    eprintln!("round-robin, 40 bots: {c:?}");
    assert_eq!(c.bots, 400);
    assert!(c.share() >= 0.93, "{c:?}");
    assert!(c.claims > 0 && c.claims_right * 100 >= c.claims * 95, "{c:?}");
}

/// Under the ladder's scheduler the fit is stretched; the bootstrap under
/// the same scheduler (two rounds, production's correction) measures the
/// stretch, and dividing it out brings the scale to 1.00 ± 0.05 with the
/// order (τ) unchanged, and its widened intervals cover the 93% the issue
/// asks for (held-out seeds 5000 and up, 60 bots at 120 matches each).
#[test]
fn the_bootstrap_takes_the_schedulers_stretch_out() {
    let settings = Settings {
        bots: 60,
        matches: 3600,
        bootstrap: 2,
        ..Settings::default()
    };
    let reports: Vec<Report> = (0..6)
        .map(|i| {
            run(
                &Settings {
                    seed: 5000 + i,
                    ..settings.clone()
                },
                Matchmaker::Ours,
            )
        })
        .collect();
    let s = summarise(&reports).expect("runs");
    let d = s.destretched.expect("bootstrapped");
    eprintln!(
        "ours, 60 bots: fit scale {:.3}, cover {:.3}; de-stretched {:.3} (stretch {:.3}), cover {:.3}",
        s.fitted.scale,
        s.coverage.share(),
        d.fidelity.scale,
        d.stretch,
        d.coverage.share()
    );
    assert!(s.fitted.scale > 1.08, "{s:?}");
    assert!((d.fidelity.scale - 1.0).abs() <= 0.05, "{d:?}");
    assert!(d.coverage.share() >= 0.93, "{d:?}");
    assert!(d.coverage.share() > s.coverage.share(), "{d:?}");
    // The same order: every adjacent claim is the fit's.
    assert_eq!(
        (d.coverage.claims, d.coverage.adjacent),
        (s.coverage.claims, s.coverage.adjacent)
    );
}
