//! The ladder simulated: how fast and how fairly the scheduler and the
//! ratings find the true order of a pool of bots.
//!
//! Bots have hidden true strengths (Elo, normally spread around 1500). A
//! match is two games with sides swapped, as on the ladder; each game is
//! won with the logistic expectation of the strength difference (plus an
//! optional advantage for the side that moves first and an optional fixed
//! offset per pair, which makes strength non-transitive), drawn with a
//! probability that peaks at `draw_rate` between equals; the match goes to
//! whoever scored more. The pairings come from the real scheduler
//! ([`arbiter_ladder::scheduler::pick_pairs`], no copy) or from a baseline
//! matchmaker, and every result moves the ratings through the server's own
//! [`RatingBook`].
//!
//! Measured: Kendall's τ between the ratings' order and the true order
//! (how many matches until τ ≥ 0.9), the root-mean-square rating error
//! (both after removing the pool's mean, since ratings are relative, and
//! with strengths converted from game Elo to match Elo: a match of two
//! games separates bots a little more than one game, by [`match_scale`]), how
//! many matches a newcomer needs before its rating is within ±50 of its
//! strength (and stays there for 10 matches), and fairness: matches per
//! bot and how often a pair meets twice in a row.

use arbiter_ladder::ratings::{Outcome, RatingBook, RatingSystem};
use arbiter_ladder::scheduler::{Candidate, pick_pairs};
use arbiter_ladder::stats::bradley_terry::{Fit, FitSettings, Fitted, PairResult, fit};
use arbiter_ladder::stats::destretch::{Correction, DestretchSettings};
pub use arbiter_ladder::stats::kendall_tau;
use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// What is simulated.
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    /// Bots in the pool at the start.
    pub bots: usize,
    /// Matches played in all.
    pub matches: usize,
    /// Matches scheduled at once (the scheduler's per-ladder limit).
    pub concurrency: usize,
    /// New bots arriving, evenly over the second half of the run.
    pub arrivals: usize,
    /// Bots replaced by a new version (its strength moved by up to ±100),
    /// evenly over the second half; the new version starts unrated.
    pub replacements: usize,
    /// Spread (standard deviation) of true strengths, Elo.
    pub spread: f64,
    /// The probability that a game between equals is drawn.
    pub draw_rate: f64,
    /// Standard deviation of a fixed per-pair strength offset, Elo: how
    /// non-transitive the pool is (0: not at all).
    pub nontransitive: f64,
    /// Advantage of the side that moves first in a game, Elo.
    pub first_move: f64,
    /// Seed of everything random; the same settings and seed give the same
    /// report.
    pub seed: u64,
    /// The rating system.
    pub rating: RatingSystem,
    /// The starting pool's strengths, if given (then `bots` is their
    /// number); else drawn at random.
    pub strengths: Vec<f64>,
    /// Percent of the Halite-style matchmaker's pairings whose opponent is
    /// drawn from the whole pool instead of the rank window (0: none):
    /// pairings that do not depend on the results so far.
    pub explore: u32,
    /// The newcomers' strengths (arrivals and new versions, in the order
    /// they come), if given; else drawn at random (the draws are made
    /// either way, so the same seed replaces the same bots).
    pub later: Vec<f64>,
    /// Which replay of the seed this is: 0 the run itself, k > 0 the
    /// k-th bootstrap replicate (results, pairings' draws and shuffles from
    /// streams of their own; the pool's changes as in the run).
    pub replicate: u64,
    /// Bootstrap replicates per round for the de-stretched fit, at least
    /// (0: none; see [`Report::destretched`] and [`replicates`]).
    pub bootstrap: u64,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            bots: 20,
            matches: 1200,
            concurrency: 2,
            arrivals: 5,
            replacements: 0,
            spread: 200.0,
            draw_rate: 0.1,
            nontransitive: 0.0,
            first_move: 0.0,
            seed: 1,
            rating: RatingSystem::Glicko2,
            strengths: Vec::new(),
            explore: 0,
            later: Vec::new(),
            replicate: 0,
            bootstrap: 0,
        }
    }
}

/// Who chooses the pairings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
pub enum Matchmaker {
    /// The ladder's scheduler, [`pick_pairs`].
    Ours,
    /// Every pair in turn (the circle method), over and over.
    RoundRobin,
    /// Halite III's rule: the seed is the bot with the fewest matches
    /// (then idle longest); its opponent is drawn at random among the bots
    /// ranked near it (within a tenth of the pool, at least 3 places).
    Halite,
    /// Expected information: the seed as Halite's (fewest matches, then
    /// idle longest); its opponent the free bot whose result would teach
    /// the ratings most, `p·(1 − p)·(RD_seed² + RD_opponent²)` with `p` the
    /// expected score (overlapping intervals: near ratings, uncertain
    /// ones), avoiding an immediate rematch.
    Information,
}

impl std::fmt::Display for Matchmaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Matchmaker::Ours => "ours",
            Matchmaker::RoundRobin => "round-robin",
            Matchmaker::Halite => "halite",
            Matchmaker::Information => "information",
        })
    }
}

/// The state of the run after some matches.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    /// Matches played so far.
    pub matches: usize,
    /// Kendall's τ-b between ratings and strengths, over active bots.
    pub tau: f64,
    /// Root-mean-square rating error, Elo, over active bots.
    pub rms: f64,
}

/// What one run measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Report {
    /// Who paired the bots.
    pub matchmaker: Matchmaker,
    /// The run's seed.
    pub seed: u64,
    /// Matches played.
    pub matches: usize,
    /// For each of [`TAU_TARGETS`]: matches until τ first reached it
    /// (checked every few matches).
    pub tau_first: [Option<usize>; 2],
    /// For each of [`TAU_TARGETS`]: matches until τ reached it and held
    /// to the end of the run (at every later check); `None` if it was
    /// below at the end.
    pub tau_sustained: [Option<usize>; 2],
    /// For each newcomer (arrival or new version): its own matches until
    /// its rating was within ±50 of its strength and stayed there for 10
    /// matches; `None` if that never happened.
    pub placements: Vec<Option<u32>>,
    /// For each newcomer: its own matches until its rating was first
    /// within ±50 of its strength (the reference's measure).
    pub first_placements: Vec<Option<u32>>,
    /// Glicko-2 (the ratings the run kept) against the truth, at the end.
    pub glicko: Fidelity,
    /// The Bradley–Terry fit of the whole log against the truth, at the
    /// end.
    pub fitted: Fidelity,
    /// The same fit of the same pairings with every match played again
    /// from an independent stream: what the log would say if who met whom
    /// did not depend on the results. The gap between this scale and
    /// `fitted`'s is what the matchmaker's adaptivity adds.
    pub replayed: Fidelity,
    /// The fit's 95% intervals against the truth (see [`Coverage`]).
    pub coverage: Coverage,
    /// The fit de-stretched by a parametric bootstrap under the same
    /// matchmaker: the run's design played again (same pool changes, same
    /// matchmaker) [`replicates`] times with the fitted strengths as the
    /// truth and fresh results, each refitted; the slope of refit against
    /// those strengths is the stretch the design adds; a second round
    /// plays the design again from the de-stretched strengths and measures
    /// it anew ([`BOOTSTRAP_ROUNDS`]). Every rating's distance from the
    /// mean (1500) and its interval are divided by it, and the intervals
    /// widened to hold the replicates' errors
    /// ([`arbiter_ladder::stats::destretch`], what production uses).
    /// `None` without bootstrap replicates.
    pub destretched: Option<Destretched>,
    /// Kendall's τ-b of the fit's order against the true order at the end
    /// (the de-stretched fit has the same order).
    pub fit_tau: f64,
    /// The fit at the end, for each active bot with games: its true
    /// strength anchored as the fit is, its rating and the half-width of
    /// its 95% interval.
    pub points: Vec<(f64, f64, f64)>,
    /// τ and error over time.
    pub series: Vec<Point>,
    /// Matches per bot among the bots active at the end: fewest, most.
    pub games: (i64, i64),
    /// Share of matches whose pair also met in either bot's previous match.
    pub rematch_rate: f64,
    /// Strength and rating of every bot active at the end, in arrival order.
    pub ratings: Vec<(f64, f64)>,
}

/// The τ thresholds reported: the ranking counts as found at the first
/// (the goal of the issue tracker's rating-quality work) or the second.
pub const TAU_TARGETS: [f64; 2] = [0.85, 0.9];

/// How well a set of ratings matches the true strengths (match Elo), over
/// the bots active at the end.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fidelity {
    /// The least-squares slope of rating against true strength: 1 when a
    /// 100-point rating gap is a 100-point real one.
    pub scale: f64,
    /// The RMS error after removing the mean and that slope (what is left
    /// when the scale is right).
    pub rms: f64,
    /// The RMS error after removing the mean only.
    pub rms_raw: f64,
}

impl Fidelity {
    /// Of `pairs` (truth, rating).
    pub fn of(pairs: &[(f64, f64)]) -> Fidelity {
        let n = pairs.len() as f64;
        if pairs.len() < 2 {
            return Fidelity::default();
        }
        let mt = pairs.iter().map(|p| p.0).sum::<f64>() / n;
        let mr = pairs.iter().map(|p| p.1).sum::<f64>() / n;
        let (mut sxy, mut sxx) = (0.0, 0.0);
        for &(t, r) in pairs {
            sxy += (t - mt) * (r - mr);
            sxx += (t - mt) * (t - mt);
        }
        let scale = if sxx > 0.0 { sxy / sxx } else { 0.0 };
        let (mut residual, mut raw) = (0.0, 0.0);
        for &(t, r) in pairs {
            residual += ((r - mr) - scale * (t - mt)).powi(2);
            raw += ((r - mr) - (t - mt)).powi(2);
        }
        Fidelity {
            scale,
            rms: (residual / n).sqrt(),
            rms_raw: (raw / n).sqrt(),
        }
    }
}
/// How well the fit's intervals cover the truth, over the active bots with
/// games, the truth anchored as the fit is (match Elo, mean 1500 over every
/// bot in the fit).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Coverage {
    /// Bots counted.
    pub bots: usize,
    /// Of them, bots whose 95% interval (full covariance) contains their
    /// true strength.
    pub covered: usize,
    /// Of them, bots whose conditional interval (the others held) does.
    pub covered_conditional: usize,
    /// Adjacent pairs in the fit's order (active bots) where the fit says
    /// "the upper is stronger" with a chance of 95% or more.
    pub claims: usize,
    /// Of those claims, the ones that are true.
    pub claims_right: usize,
    /// Adjacent pairs in all.
    pub adjacent: usize,
}

impl Coverage {
    /// The share of bots covered by the full-covariance interval.
    pub fn share(&self) -> f64 {
        self.covered as f64 / self.bots.max(1) as f64
    }
}

/// The fit with the design's stretch divided out.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Destretched {
    /// The stretch measured by the bootstrap's last round (slope of refit
    /// on the strengths played).
    pub stretch: f64,
    /// What the de-stretched intervals are widened by, at least 1: the
    /// 96th percentile, over the last round's replicates' bots, of a
    /// de-stretched error over its de-stretched interval (1 when the
    /// intervals held 96% of them).
    pub widening: f64,
    /// The de-stretched ratings against the truth.
    pub fidelity: Fidelity,
    /// The de-stretched intervals against the truth (pairwise claims are
    /// those of the fit: dividing every gap by one factor keeps each
    /// order's chance).
    pub coverage: Coverage,
}

/// How close (Elo) a newcomer's rating must come to its strength.
pub const PLACEMENT_BAND: f64 = 50.0;
/// For how many of its matches in a row it must stay that close.
pub const PLACEMENT_STREAK: u32 = 10;
/// Virtual time one match adds to the clock: the clock runs per match
/// slot, so that a bot idle for as many matches is as idle at any
/// concurrency (5 s, what a round of 2 matches took in 10 s before).
const MATCH_MS: i64 = 5_000;

/// A bot (version) of the pool.
#[derive(Clone, Debug)]
struct Bot {
    /// Versions of one lineage never meet.
    lineage: usize,
    strength: f64,
    active: bool,
    matches: i64,
    last_played_ms: Option<i64>,
    last_opponent: Option<usize>,
    /// Index into the report's placements, for newcomers.
    newcomer: Option<usize>,
    /// Own matches in the band so far, in a row.
    streak: u32,
}

impl Bot {
    /// A version that has not played, of `lineage`, `strength` strong.
    fn new(lineage: usize, strength: f64, newcomer: Option<usize>) -> Bot {
        Bot {
            lineage,
            strength,
            active: true,
            matches: 0,
            last_played_ms: None,
            last_opponent: None,
            newcomer,
            streak: 0,
        }
    }
}

/// A pseudo-random stream for one purpose.
struct Stream(ChaCha8Rng);

impl Stream {
    fn new(seed: u64, purpose: u64) -> Stream {
        Stream(ChaCha8Rng::seed_from_u64(
            seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ purpose,
        ))
    }

    /// Uniform in [0, 1).
    fn uniform(&mut self) -> f64 {
        (self.0.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Standard normal (Box–Muller).
    fn normal(&mut self) -> f64 {
        let u = 1.0 - self.uniform();
        let v = self.uniform();
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// Uniform in 0..n (n > 0).
    fn below(&mut self, n: usize) -> usize {
        ((self.uniform() * n as f64) as usize).min(n - 1)
    }
}

/// The expected score of a side `elo` stronger.
fn expected(elo: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-elo / 400.0))
}

/// The probabilities that a bot `delta` game-Elo stronger wins, draws and
/// loses a match, under the game model of [`run`] (no pair offset).
pub fn match_probabilities(settings: &Settings, delta: f64) -> (f64, f64, f64) {
    let game = |first: f64| game_probabilities(settings, delta + first * settings.first_move);
    let ((w1, d1, l1), (w2, d2, l2)) = (game(1.0), game(-1.0));
    let win = w1 * w2 + w1 * d2 + d1 * w2;
    let draw = w1 * l2 + l1 * w2 + d1 * d2;
    (win, draw, 1.0 - win - draw)
}

/// The expected match score (win 1, draw ½) of a bot `delta` game-Elo
/// stronger.
pub fn match_score(settings: &Settings, delta: f64) -> f64 {
    let (win, draw, _) = match_probabilities(settings, delta);
    win + draw / 2.0
}

/// One game's win, draw and loss probabilities for a side `elo` stronger
/// (first-move advantage included): the logistic expectation, with draws
/// peaking at `draw_rate` between equals.
fn game_probabilities(settings: &Settings, elo: f64) -> (f64, f64, f64) {
    let e = expected(elo);
    let draw = settings.draw_rate * 4.0 * e * (1.0 - e);
    (e - draw / 2.0, draw, 1.0 - e - draw / 2.0)
}

/// Match Elo per game Elo: how much more a two-game match separates bots
/// than one game does. The ratio falls as the gap grows (1.100 at 10 Elo,
/// 1.076 at 400 with a draw rate of 0.1), so this is the least-squares
/// slope through 0 over the gaps between two bots of the pool (normal,
/// standard deviation √2 · spread). Rating errors and scales are measured
/// against strengths times this.
pub fn match_scale(settings: &Settings) -> f64 {
    let sd = std::f64::consts::SQRT_2 * settings.spread.max(1.0);
    let (mut sxy, mut sxx) = (0.0, 0.0);
    for k in 1..=60 {
        let z = f64::from(k) * 0.05;
        let weight = (-z * z / 2.0).exp();
        let gap = z * sd;
        let s = match_score(settings, gap);
        let match_elo = -400.0 * (1.0 / s - 1.0).log10();
        sxy += weight * gap * match_elo;
        sxx += weight * gap * gap;
    }
    sxy / sxx
}

/// Simulates one run of `settings` with `matchmaker`.
pub fn run(settings: &Settings, matchmaker: Matchmaker) -> Report {
    let mut truth = Stream::new(settings.seed, 1);
    let salt = 16 * settings.replicate;
    let mut games = Stream::new(settings.seed, 2 + salt);
    let mut picks = Stream::new(settings.seed, 3 + salt);
    let bots_at_start = if settings.strengths.is_empty() {
        settings.bots
    } else {
        settings.strengths.len()
    };
    let mut bots: Vec<Bot> = (0..bots_at_start)
        .map(|lineage| {
            let strength = settings
                .strengths
                .get(lineage)
                .copied()
                .unwrap_or_else(|| 1500.0 + settings.spread * truth.normal());
            Bot::new(lineage, strength, None)
        })
        .collect();
    // Arrivals and replacements, in the order they happen.
    let mut changes: Vec<(usize, bool)> = Vec::new();
    let half = settings.matches / 2;
    for k in 0..settings.arrivals {
        changes.push((half + (k + 1) * half / (settings.arrivals + 1), true));
    }
    for k in 0..settings.replacements {
        changes.push((half + (2 * k + 1) * half / (2 * settings.replacements + 2), false));
    }
    changes.sort_by_key(|&(at, arrival)| (at, !arrival));
    let mut changes = changes.into_iter().peekable();

    let scale = match_scale(settings);
    let mut book: RatingBook<usize> = RatingBook::new(settings.rating);
    let mut placements: Vec<Option<u32>> = Vec::new();
    let mut first_placements: Vec<Option<u32>> = Vec::new();
    let mut series = Vec::new();
    let mut tau_first = [None; 2];
    let mut rematches = 0usize;
    let mut round_robin = RoundRobin::new(Stream::new(settings.seed, 5 + salt));
    let mut newcomers = 0usize;
    let mut log: Vec<(usize, usize, Outcome)> = Vec::with_capacity(settings.matches);
    let checkpoint = (bots_at_start / 10).max(2);
    let mut played = 0usize;
    let mut now_ms = 0i64;
    while played < settings.matches {
        while let Some(&(at, arrival)) = changes.peek() {
            if at > played {
                break;
            }
            changes.next();
            let newcomer = Some(placements.len());
            placements.push(None);
            first_placements.push(None);
            let planted = settings.later.get(newcomers).copied();
            newcomers += 1;
            if arrival {
                let lineage = bots.iter().map(|b| b.lineage).max().map_or(0, |l| l + 1);
                let strength = 1500.0 + settings.spread * truth.normal();
                bots.push(Bot::new(lineage, planted.unwrap_or(strength), newcomer));
            } else {
                let active: Vec<usize> = (0..bots.len()).filter(|&i| bots[i].active).collect();
                let old = active[truth.below(active.len())];
                bots[old].active = false;
                let strength = bots[old].strength + 100.0 * (2.0 * truth.uniform() - 1.0);
                bots.push(Bot::new(bots[old].lineage, planted.unwrap_or(strength), newcomer));
            }
            round_robin.pool_changed(&bots);
        }
        let want = settings.concurrency.min(settings.matches - played);
        let pairs = match matchmaker {
            Matchmaker::Ours => pick_pairs(&candidates(&bots, &book), want, now_ms)
                .into_iter()
                .map(|p| (index(p.participant), index(p.opponent)))
                .collect(),
            Matchmaker::RoundRobin => round_robin.next(&bots, want),
            Matchmaker::Halite => halite(&bots, &book, want, settings.explore, &mut picks),
            Matchmaker::Information => information(&bots, &book, want),
        };
        if pairs.is_empty() {
            break;
        }
        now_ms += MATCH_MS * pairs.len() as i64;
        for (a, b) in pairs {
            if bots[a].last_opponent == Some(b) || bots[b].last_opponent == Some(a) {
                rematches += 1;
            }
            let outcome = play(settings, &bots, a, b, &mut games);
            book.apply(&a, &b, outcome);
            log.push((a, b, outcome));
            for (me, other) in [(a, b), (b, a)] {
                let bot = &mut bots[me];
                bot.matches += 1;
                bot.last_played_ms = Some(now_ms);
                bot.last_opponent = Some(other);
            }
            played += 1;
            for me in [a, b] {
                track_placement(&mut bots, &book, scale, me, &mut placements, &mut first_placements);
            }
            if played.is_multiple_of(checkpoint) || played == settings.matches {
                let (tau, rms) = measure(&bots, &book, scale);
                series.push(Point {
                    matches: played,
                    tau,
                    rms,
                });
                for (first, target) in tau_first.iter_mut().zip(TAU_TARGETS) {
                    if first.is_none() && tau >= target {
                        *first = Some(played);
                    }
                }
            }
        }
    }
    let active = bots.iter().filter(|b| b.active);
    let games = (
        active.clone().map(|b| b.matches).min().unwrap_or(0),
        active.map(|b| b.matches).max().unwrap_or(0),
    );
    let ratings: Vec<(f64, f64)> = bots
        .iter()
        .enumerate()
        .filter(|(_, b)| b.active)
        .map(|(i, b)| (b.strength, book.get(&i).rating))
        .collect();
    let glicko = Fidelity::of(&ratings.iter().map(|&(t, r)| (t * scale, r)).collect::<Vec<_>>());
    let whole = fit_log(&bots, &log);
    let fitted = fidelity_of_fit(&bots, whole.as_ref(), scale);
    let coverage = whole
        .as_ref()
        .map_or_else(Coverage::default, |f| coverage_of(&bots, f, scale, 1.0, 1.0));
    let fit_tau = whole.as_ref().map_or(0.0, |f| {
        let pairs: Vec<(f64, f64)> = bots
            .iter()
            .zip(&f.ratings)
            .filter(|(b, _)| b.active)
            .map(|(b, r)| (b.strength, r.rating))
            .collect();
        kendall_tau(&pairs)
    });
    let points: Vec<(f64, f64, f64)> = whole.as_ref().map_or_else(Vec::new, |f| {
        let truth = anchored_truth(&bots, scale);
        (0..bots.len())
            .filter(|&i| bots[i].active && f.ratings[i].games > 0.0)
            .map(|i| (truth[i], f.ratings[i].rating, f.ratings[i].interval))
            .collect()
    });
    let destretched = match &whole {
        Some(f) if settings.bootstrap > 0 => Some(destretch(settings, matchmaker, &bots, bots_at_start, f, scale)),
        _ => None,
    };
    let mut again = Stream::new(settings.seed, 6 + salt);
    let log_again: Vec<(usize, usize, Outcome)> = log
        .iter()
        .map(|&(a, b, _)| (a, b, play(settings, &bots, a, b, &mut again)))
        .collect();
    let replayed = fidelity_of_fit(&bots, fit_log(&bots, &log_again).as_ref(), scale);
    let tau_sustained = TAU_TARGETS.map(|target| sustained(&series, target));
    Report {
        matchmaker,
        seed: settings.seed,
        coverage,
        destretched,
        fit_tau,
        points,
        ratings,
        matches: played,
        tau_first,
        tau_sustained,
        placements,
        first_placements,
        glicko,
        fitted,
        replayed,
        series,
        games,
        rematch_rate: if played == 0 {
            0.0
        } else {
            rematches as f64 / played as f64
        },
    }
}

/// A scheduler candidate's id is the bot's index.
fn index(version_id: i64) -> usize {
    usize::try_from(version_id).unwrap_or(usize::MAX)
}

/// The pool as the scheduler sees it: no bot is busy between rounds.
fn candidates(bots: &[Bot], book: &RatingBook<usize>) -> Vec<Candidate> {
    bots.iter()
        .enumerate()
        .map(|(i, bot)| {
            let rating = book.get(&i);
            Candidate {
                version_id: i64::try_from(i).unwrap_or(i64::MAX),
                bot_id: i64::try_from(bot.lineage).unwrap_or(i64::MAX),
                active: bot.active,
                rating: rating.rating,
                deviation: rating.deviation,
                matches: bot.matches,
                last_played_ms: bot.last_played_ms,
                last_opponent: bot.last_opponent.and_then(|o| i64::try_from(o).ok()),
                busy: false,
                chooses: true,
            }
        })
        .collect()
}

/// One match of bot `a` against bot `b`: two games, `a` moving first in
/// the first.
fn play(settings: &Settings, bots: &[Bot], a: usize, b: usize, games: &mut Stream) -> Outcome {
    let offset = pair_offset(settings, a, b);
    let difference = bots[a].strength - bots[b].strength + offset;
    let mut points = 0.0;
    for first in [1.0, -1.0] {
        let (win, draw, _) = game_probabilities(settings, difference + first * settings.first_move);
        let roll = games.uniform();
        points += if roll < win {
            1.0
        } else if roll < win + draw {
            0.5
        } else {
            0.0
        };
    }
    match points {
        p if p > 1.0 => Outcome::Win,
        p if p < 1.0 => Outcome::Loss,
        _ => Outcome::Draw,
    }
}

/// The fixed non-transitive offset of `a` against `b` (the opposite of `b`
/// against `a`).
fn pair_offset(settings: &Settings, a: usize, b: usize) -> f64 {
    if settings.nontransitive == 0.0 || a == b {
        return 0.0;
    }
    let (low, high, sign) = if a < b { (a, b, 1.0) } else { (b, a, -1.0) };
    let key = ((low as u64) << 32) ^ high as u64;
    sign * settings.nontransitive * Stream::new(settings.seed ^ key, 4).normal()
}

/// Matches until τ reached `target` and stayed at or above it at every
/// later check of `series`; `None` if the last check is below it.
pub fn sustained(series: &[Point], target: f64) -> Option<usize> {
    let last_below = series.iter().rposition(|p| p.tau < target);
    match last_below {
        None => series.first().map(|p| p.matches),
        Some(k) => series.get(k + 1).map(|p| p.matches),
    }
}

/// The whole log fitted (Bradley–Terry, the leaderboard's headline
/// rating, [`arbiter_ladder::stats::bradley_terry`], with its covariance),
/// every bot a player; `None` if the fit refused the log.
fn fit_log(bots: &[Bot], log: &[(usize, usize, Outcome)]) -> Option<Fit> {
    let results: Vec<PairResult> = log
        .iter()
        .map(|&(a, b, outcome)| PairResult {
            a,
            b,
            games: 1.0,
            points_a: outcome.points(),
        })
        .collect();
    fit(bots.len(), &results, &FitSettings::default(), None).ok()
}

/// A fit set against the truth over the active bots.
fn fidelity_of_fit(bots: &[Bot], fitted: Option<&Fit>, scale: f64) -> Fidelity {
    let Some(fitted) = fitted else {
        return Fidelity::default();
    };
    let pairs: Vec<(f64, f64)> = bots
        .iter()
        .zip(&fitted.ratings)
        .filter(|(b, _)| b.active)
        .map(|(b, f)| (b.strength * scale, f.rating))
        .collect();
    Fidelity::of(&pairs)
}

/// The truth on the fit's anchored scale: match Elo, with the mean over
/// every bot in the fit at the fit's mean (1500).
fn anchored_truth(bots: &[Bot], scale: f64) -> Vec<f64> {
    let mean = bots.iter().map(|b| b.strength * scale).sum::<f64>() / bots.len().max(1) as f64;
    bots.iter().map(|b| b.strength * scale - mean + FIT_MEAN).collect()
}

/// The mean of the fit's ratings.
const FIT_MEAN: f64 = 1500.0;

/// The fit's intervals and adjacent claims against the truth, with every
/// rating's distance from the mean and every interval divided by
/// `stretch` (1: the fit as it is).
fn coverage_of(bots: &[Bot], fitted: &Fit, scale: f64, stretch: f64, widening: f64) -> Coverage {
    let ratings: Vec<f64> = fitted
        .ratings
        .iter()
        .map(|f| FIT_MEAN + (f.rating - FIT_MEAN) / stretch)
        .collect();
    let intervals: Vec<f64> = fitted.ratings.iter().map(|f| widening * f.interval / stretch).collect();
    coverage_with(bots, fitted, scale, &ratings, &intervals, stretch)
}

/// The intervals `ratings ± intervals` (per bot, indexed as the fit)
/// against the truth, with the fit's adjacent claims; the conditional
/// intervals divided by `stretch`.
fn coverage_with(bots: &[Bot], fitted: &Fit, scale: f64, ratings: &[f64], intervals: &[f64], stretch: f64) -> Coverage {
    let truth = anchored_truth(bots, scale);
    let mut coverage = Coverage::default();
    let mut order: Vec<usize> = Vec::new();
    for (i, bot) in bots.iter().enumerate() {
        let f = fitted.ratings[i];
        if !bot.active || f.games <= 0.0 {
            continue;
        }
        order.push(i);
        let error = (ratings[i] - truth[i]).abs();
        coverage.bots += 1;
        coverage.covered += usize::from(error <= intervals[i]);
        coverage.covered_conditional += usize::from(error <= f.conditional / stretch);
    }
    order.sort_by(|&x, &y| fitted.ratings[y].rating.total_cmp(&fitted.ratings[x].rating));
    for pair in order.windows(2) {
        let (upper, lower) = (pair[0], pair[1]);
        coverage.adjacent += 1;
        if fitted.order_probability(upper, lower).is_some_and(|p| p >= 0.95) {
            coverage.claims += 1;
            coverage.claims_right += usize::from(bots[upper].strength > bots[lower].strength);
        }
    }
    coverage
}

/// Rounds of the bootstrap: the first plays the design with the fitted
/// strengths as the truth, the second with the first round's de-stretched
/// ones (the fit's own spread is stretched, and a wider pool stretches
/// less, so one round measured too little: 1.18 against 1.20 on the
/// tuning seeds at 200 bots, the de-stretched scale 1.03 against 1.01).
pub const BOOTSTRAP_ROUNDS: u32 = 2;

/// Bots the replicates of one round hold at least, summed: more replicates
/// for small pools, so that the 96th percentile the widening is read at
/// is not one bot's error (at 20 bots, 2 replicates covered 92.7% on the
/// tuning seeds, 16 covered 95.1%).
pub const BOOTSTRAP_POINTS: usize = 400;

/// Replicates per round at most for a small pool (a pool of 8 would
/// otherwise play 50).
pub const BOOTSTRAP_MOST: u64 = 20;

/// Replicates per round of the bootstrap for `settings`: at least
/// `settings.bootstrap`, and enough to hold [`BOOTSTRAP_POINTS`] bots up
/// to [`BOOTSTRAP_MOST`].
pub fn replicates(settings: &Settings) -> u64 {
    let pool = settings.strengths.len().max(settings.bots).max(1);
    let filling = (BOOTSTRAP_POINTS.div_ceil(pool) as u64).min(BOOTSTRAP_MOST);
    settings.bootstrap.max(filling)
}

/// The parametric bootstrap of [`Report::destretched`]: the production
/// method's correction ([`Correction`]) learned from replicates played by
/// the simulator under the same matchmaker.
fn destretch(
    settings: &Settings,
    matchmaker: Matchmaker,
    bots: &[Bot],
    at_start: usize,
    fitted: &Fit,
    scale: f64,
) -> Destretched {
    let learn = DestretchSettings::default();
    // The current estimate of the truth on the fit's scale: the fit.
    let mut estimate: Vec<Fitted> = fitted.ratings.clone();
    let mut correction = Correction::none();
    for round in 0..BOOTSTRAP_ROUNDS {
        // The estimate back in game Elo, as the simulator's truth.
        let game: Vec<f64> = estimate
            .iter()
            .map(|f| 1500.0 + (f.rating - FIT_MEAN) / scale)
            .collect();
        let mut points = Vec::new();
        for k in 1..=replicates(settings) {
            let replicate = Settings {
                strengths: game[..at_start].to_vec(),
                later: game[at_start..].to_vec(),
                replicate: k + u64::from(round) * 1000,
                bootstrap: 0,
                nontransitive: 0.0,
                ..settings.clone()
            };
            points.extend(run(&replicate, matchmaker).points);
        }
        correction = Correction::learn(&points, &learn);
        estimate = correction.apply(&fitted.ratings);
    }
    let ratings: Vec<f64> = estimate.iter().map(|f| f.rating).collect();
    let intervals: Vec<f64> = estimate.iter().map(|f| f.interval).collect();
    let pairs: Vec<(f64, f64)> = bots
        .iter()
        .zip(&ratings)
        .filter(|(b, _)| b.active)
        .map(|(b, &r)| (b.strength * scale, r))
        .collect();
    let stretch = correction.stretch();
    let widenings = correction.widenings();
    Destretched {
        stretch,
        widening: widenings.iter().sum::<f64>() / widenings.len() as f64,
        fidelity: Fidelity::of(&pairs),
        coverage: coverage_with(bots, fitted, scale, &ratings, &intervals, stretch),
    }
}

/// Kendall's τ-b between ratings and strengths, and the RMS rating error
/// (each centred on the active pool's mean, strengths times `scale`), over
/// active bots.
fn measure(bots: &[Bot], book: &RatingBook<usize>, scale: f64) -> (f64, f64) {
    let pool = Pool::of(bots, book, scale);
    let n = pool.members.len();
    if n < 2 {
        return (0.0, 0.0);
    }
    let pairs: Vec<(f64, f64)> = pool.members.iter().map(|&(_, t, r)| (t, r)).collect();
    let squares: f64 = pool.members.iter().map(|&(_, t, r)| pool.error(t, r).powi(2)).sum();
    (kendall_tau(&pairs), (squares / n as f64).sqrt())
}

/// The active bots: index, strength (times the match scale) and rating,
/// with the means that errors are centred on.
struct Pool {
    members: Vec<(usize, f64, f64)>,
    mean_truth: f64,
    mean_rating: f64,
}

impl Pool {
    fn of(bots: &[Bot], book: &RatingBook<usize>, scale: f64) -> Pool {
        let members: Vec<(usize, f64, f64)> = bots
            .iter()
            .enumerate()
            .filter(|(_, b)| b.active)
            .map(|(i, b)| (i, b.strength * scale, book.get(&i).rating))
            .collect();
        let n = members.len().max(1) as f64;
        Pool {
            mean_truth: members.iter().map(|m| m.1).sum::<f64>() / n,
            mean_rating: members.iter().map(|m| m.2).sum::<f64>() / n,
            members,
        }
    }

    /// How far a rating is from a strength, both centred on the pool.
    fn error(&self, truth: f64, rating: f64) -> f64 {
        (rating - self.mean_rating) - (truth - self.mean_truth)
    }
}

/// Counts a newcomer's match towards its placement.
fn track_placement(
    bots: &mut [Bot],
    book: &RatingBook<usize>,
    scale: f64,
    me: usize,
    placements: &mut [Option<u32>],
    first_placements: &mut [Option<u32>],
) {
    let Some(slot) = bots[me].newcomer else { return };
    if placements[slot].is_some() {
        return;
    }
    let error = Pool::of(bots, book, scale).error(bots[me].strength * scale, book.get(&me).rating);
    let bot = &mut bots[me];
    if error.abs() <= PLACEMENT_BAND && first_placements[slot].is_none() {
        first_placements[slot] = Some(u32::try_from(bot.matches).unwrap_or(u32::MAX));
    }
    if error.abs() <= PLACEMENT_BAND {
        bot.streak += 1;
        if bot.streak >= PLACEMENT_STREAK {
            let own = u32::try_from(bot.matches).unwrap_or(u32::MAX);
            placements[slot] = Some(own + 1 - PLACEMENT_STREAK);
        }
    } else {
        bot.streak = 0;
    }
}

/// The circle method over the active bots, cycle after cycle: each cycle
/// plays every pair once, its rounds in a random order (a fixed order
/// would play the same neighbours first every time). When the pool
/// changes the cycle goes on: the pairs it has played stay played, and the
/// rest of it is scheduled again over the new pool (new bots' pairs
/// included), in shuffled rounds.
struct RoundRobin {
    /// The rest of this cycle, next pair last.
    schedule: Vec<(usize, usize)>,
    /// Pairs played this cycle (lower index first).
    played: std::collections::HashSet<(usize, usize)>,
    shuffle: Stream,
}

impl RoundRobin {
    fn new(shuffle: Stream) -> RoundRobin {
        RoundRobin {
            schedule: Vec::new(),
            played: std::collections::HashSet::new(),
            shuffle,
        }
    }

    /// The pool changed: the rest of the cycle is planned again.
    fn pool_changed(&mut self, bots: &[Bot]) {
        self.plan(bots);
    }

    /// Plans the pairs of the active pool not yet played this cycle, in
    /// shuffled rounds of the circle method.
    fn plan(&mut self, bots: &[Bot]) {
        let mut active: Vec<usize> = (0..bots.len()).filter(|&i| bots[i].active).collect();
        // Shuffled seats, so that the rounds differ from cycle to cycle.
        for i in (1..active.len()).rev() {
            active.swap(i, self.shuffle.below(i + 1));
        }
        let all = round_robin(&active);
        let per_round = (active.len() / 2).max(1);
        let mut rounds: Vec<Vec<(usize, usize)>> = all.chunks(per_round).map(<[_]>::to_vec).collect();
        for i in (1..rounds.len()).rev() {
            rounds.swap(i, self.shuffle.below(i + 1));
        }
        self.schedule = rounds
            .into_iter()
            .flatten()
            .filter(|&(a, b)| !self.played.contains(&(a.min(b), a.max(b))))
            .collect();
        self.schedule.reverse();
    }

    fn next(&mut self, bots: &[Bot], want: usize) -> Vec<(usize, usize)> {
        let mut pairs = Vec::with_capacity(want);
        let mut busy = std::collections::HashSet::new();
        let mut new_cycle = false;
        while pairs.len() < want {
            let Some(pair) = self.schedule.pop() else {
                if new_cycle {
                    break;
                }
                // A new cycle (or the first).
                self.played.clear();
                self.plan(bots);
                new_cycle = true;
                continue;
            };
            if busy.contains(&pair.0) || busy.contains(&pair.1) {
                // One of its bots plays already: the next slot starts with it.
                self.schedule.push(pair);
                break;
            }
            busy.insert(pair.0);
            busy.insert(pair.1);
            self.played.insert((pair.0.min(pair.1), pair.0.max(pair.1)));
            pairs.push(pair);
        }
        pairs
    }
}

/// Every pair of `players` once, in the circle method's rounds: what the
/// round-robin matchmaker plays, over and over.
pub fn round_robin(players: &[usize]) -> Vec<(usize, usize)> {
    let mut seats: Vec<Option<usize>> = players.iter().copied().map(Some).collect();
    if seats.len() % 2 == 1 {
        seats.push(None);
    }
    let n = seats.len();
    let mut schedule = Vec::new();
    for _ in 0..n.saturating_sub(1) {
        for k in 0..n / 2 {
            if let (Some(a), Some(b)) = (seats[k], seats[n - 1 - k]) {
                schedule.push((a, b));
            }
        }
        // Keep the first seat, rotate the others.
        if n > 2 {
            let last = seats.remove(n - 1);
            seats.insert(1, last);
        }
    }
    schedule
}

/// Halite III's matchmaker (see [`Matchmaker::Halite`]).
fn halite(
    bots: &[Bot],
    book: &RatingBook<usize>,
    want: usize,
    explore: u32,
    picks: &mut Stream,
) -> Vec<(usize, usize)> {
    let mut ranked: Vec<usize> = (0..bots.len()).filter(|&i| bots[i].active).collect();
    ranked.sort_by(|&x, &y| book.get(&y).rating.total_cmp(&book.get(&x).rating).then(x.cmp(&y)));
    let window = (ranked.len() / 10).max(3);
    let mut taken = vec![false; bots.len()];
    let mut pairs = Vec::new();
    while pairs.len() < want {
        let Some(&seed) = ranked
            .iter()
            .filter(|&&i| !taken[i])
            .min_by_key(|&&i| (bots[i].matches, bots[i].last_played_ms.unwrap_or(i64::MIN), i))
        else {
            break;
        };
        let rank = ranked.iter().position(|&i| i == seed).unwrap_or(0);
        // Exploring: the whole pool is the window.
        let window = if explore > 0 && picks.below(100) < explore as usize {
            ranked.len()
        } else {
            window
        };
        let near: Vec<usize> = ranked[rank.saturating_sub(window)..(rank + window + 1).min(ranked.len())]
            .iter()
            .copied()
            .filter(|&i| i != seed && !taken[i] && bots[i].lineage != bots[seed].lineage)
            .collect();
        let opponent = if near.is_empty() {
            ranked
                .iter()
                .copied()
                .filter(|&i| i != seed && !taken[i] && bots[i].lineage != bots[seed].lineage)
                .min_by(|&x, &y| {
                    let d = |i: usize| (book.get(&i).rating - book.get(&seed).rating).abs();
                    d(x).total_cmp(&d(y))
                })
        } else {
            Some(near[picks.below(near.len())])
        };
        let Some(opponent) = opponent else { break };
        taken[seed] = true;
        taken[opponent] = true;
        pairs.push((seed, opponent));
    }
    pairs
}

/// The expected-information matchmaker (see [`Matchmaker::Information`]).
fn information(bots: &[Bot], book: &RatingBook<usize>, want: usize) -> Vec<(usize, usize)> {
    let mut taken = vec![false; bots.len()];
    let mut pairs = Vec::new();
    let active: Vec<usize> = (0..bots.len()).filter(|&i| bots[i].active).collect();
    while pairs.len() < want {
        let Some(&seed) = active
            .iter()
            .filter(|&&i| !taken[i])
            .min_by_key(|&&i| (bots[i].matches, bots[i].last_played_ms.unwrap_or(i64::MIN), i))
        else {
            break;
        };
        let me = book.get(&seed);
        let value = |i: usize| {
            let other = book.get(&i);
            let p = expected(me.rating - other.rating);
            let rematch = bots[seed].last_opponent == Some(i) || bots[i].last_opponent == Some(seed);
            let info = p * (1.0 - p) * (me.deviation.powi(2) + other.deviation.powi(2));
            if rematch { info * 1e-3 } else { info }
        };
        let opponent = active
            .iter()
            .copied()
            .filter(|&i| i != seed && !taken[i] && bots[i].lineage != bots[seed].lineage)
            .max_by(|&x, &y| value(x).total_cmp(&value(y)).then(y.cmp(&x)));
        let Some(opponent) = opponent else { break };
        taken[seed] = true;
        taken[opponent] = true;
        pairs.push((seed, opponent));
    }
    pairs
}

/// A summary of several runs of one matchmaker.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// Who paired the bots.
    pub matchmaker: Matchmaker,
    /// Runs summarised.
    pub runs: usize,
    /// For each of [`TAU_TARGETS`]: the median over runs of the matches
    /// until τ held at or above it to the end; `None` if half the runs or
    /// more never got there.
    pub tau_sustained: [Option<usize>; 2],
    /// For each of [`TAU_TARGETS`]: runs in which τ held there.
    pub tau_runs: [usize; 2],
    /// For each of [`TAU_TARGETS`]: the median of the matches until τ
    /// first reached it.
    pub tau_first: [Option<usize>; 2],
    /// Median over all newcomers of the matches until placed for good
    /// (within ±50 for 10 matches in a row); `None` if half of them or
    /// more were never placed.
    pub placement_median: Option<u32>,
    /// Median over all newcomers of the matches until first within ±50.
    pub first_placement_median: Option<u32>,
    /// Newcomers, and how many of them were placed for good.
    pub newcomers: (usize, usize),
    /// Final RMS error of Glicko-2 (mean removed), averaged over runs.
    pub final_rms: f64,
    /// The fit of the same pairings played again ([`Report::replayed`]),
    /// averaged over runs.
    pub replayed: Fidelity,
    /// Glicko-2 against the truth at the end, averaged over runs.
    pub glicko: Fidelity,
    /// The whole-log fit against the truth at the end, averaged over runs.
    pub fitted: Fidelity,
    /// Fewest and most matches of a bot, averaged over runs.
    pub games: (f64, f64),
    /// The most matches of a bot over the average matches of a bot active
    /// at the end, at worst over the runs.
    pub most_over_average: f64,
    /// Rematch share, averaged over runs.
    pub rematch_rate: f64,
    /// The fit's coverage, summed over runs.
    pub coverage: Coverage,
    /// The de-stretched fit: stretch and fidelity averaged, coverage
    /// summed over runs; `None` without bootstrap replicates.
    pub destretched: Option<Destretched>,
    /// Kendall's τ of the fit at the end, averaged over runs.
    pub fit_tau: f64,
}

impl std::ops::AddAssign for Coverage {
    fn add_assign(&mut self, other: Coverage) {
        self.bots += other.bots;
        self.covered += other.covered;
        self.covered_conditional += other.covered_conditional;
        self.claims += other.claims;
        self.claims_right += other.claims_right;
        self.adjacent += other.adjacent;
    }
}

/// The median of `values`, counting `None` as larger than anything.
fn median<T: Copy + Ord>(values: &[Option<T>]) -> Option<T> {
    let mut sorted: Vec<Option<T>> = values.to_vec();
    sorted.sort_by(|x, y| match (x, y) {
        (Some(x), Some(y)) => x.cmp(y),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => std::cmp::Ordering::Equal,
    });
    sorted.get(sorted.len().checked_sub(1)? / 2).copied().flatten()
}

fn mean_fidelity(all: impl Iterator<Item = Fidelity>) -> Fidelity {
    let (mut sum, mut n) = (Fidelity::default(), 0.0);
    for f in all {
        sum.scale += f.scale;
        sum.rms += f.rms;
        sum.rms_raw += f.rms_raw;
        n += 1.0;
    }
    if n > 0.0 {
        sum.scale /= n;
        sum.rms /= n;
        sum.rms_raw /= n;
    }
    sum
}

/// Summarises `reports` (all of one matchmaker).
pub fn summarise(reports: &[Report]) -> Option<Summary> {
    let first = reports.first()?;
    let n = reports.len() as f64;
    let sustained = |k: usize| -> Vec<Option<usize>> { reports.iter().map(|r| r.tau_sustained[k]).collect() };
    let firsts = |k: usize| -> Vec<Option<usize>> { reports.iter().map(|r| r.tau_first[k]).collect() };
    let placements: Vec<Option<u32>> = reports.iter().flat_map(|r| r.placements.iter().copied()).collect();
    let first_placements: Vec<Option<u32>> = reports
        .iter()
        .flat_map(|r| r.first_placements.iter().copied())
        .collect();
    Some(Summary {
        matchmaker: first.matchmaker,
        runs: reports.len(),
        tau_sustained: [median(&sustained(0)), median(&sustained(1))],
        tau_runs: [
            sustained(0).iter().flatten().count(),
            sustained(1).iter().flatten().count(),
        ],
        tau_first: [median(&firsts(0)), median(&firsts(1))],
        placement_median: median(&placements),
        first_placement_median: median(&first_placements),
        newcomers: (placements.len(), placements.iter().flatten().count()),
        final_rms: reports
            .iter()
            .map(|r| r.series.last().map_or(0.0, |p| p.rms))
            .sum::<f64>()
            / n,
        glicko: mean_fidelity(reports.iter().map(|r| r.glicko)),
        fitted: mean_fidelity(reports.iter().map(|r| r.fitted)),
        replayed: mean_fidelity(reports.iter().map(|r| r.replayed)),
        games: (
            reports.iter().map(|r| r.games.0 as f64).sum::<f64>() / n,
            reports.iter().map(|r| r.games.1 as f64).sum::<f64>() / n,
        ),
        most_over_average: reports
            .iter()
            .map(|r| {
                let average = 2.0 * r.matches as f64 / r.ratings.len().max(1) as f64;
                r.games.1 as f64 / average.max(1.0)
            })
            .fold(0.0, f64::max),
        rematch_rate: reports.iter().map(|r| r.rematch_rate).sum::<f64>() / n,
        coverage: reports.iter().fold(Coverage::default(), |mut sum, r| {
            sum += r.coverage;
            sum
        }),
        destretched: {
            let all: Vec<Destretched> = reports.iter().filter_map(|r| r.destretched).collect();
            (all.len() == reports.len()).then(|| Destretched {
                stretch: all.iter().map(|d| d.stretch).sum::<f64>() / n,
                widening: all.iter().map(|d| d.widening).sum::<f64>() / n,
                fidelity: mean_fidelity(all.iter().map(|d| d.fidelity)),
                coverage: all.iter().fold(Coverage::default(), |mut sum, d| {
                    sum += d.coverage;
                    sum
                }),
            })
        },
        fit_tau: reports.iter().map(|r| r.fit_tau).sum::<f64>() / n,
    })
}

/// Two matchmakers compared run by run over the same seeds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// Seeds on which the first needed fewer matches (a run that never got
    /// there counts as needing more than any that did).
    pub faster: usize,
    /// Seeds on which it needed more.
    pub slower: usize,
    /// Seeds on which both needed as many (or neither got there).
    pub ties: usize,
    /// The two-sided sign test's p-value of faster against slower.
    pub p: f64,
    /// The two-sided Wilcoxon signed-rank test's p-value of the
    /// differences (a run that never got there counts as more than any
    /// that did; exact, given the ranks).
    pub wilcoxon: f64,
    /// Total matches of the first over total matches of the second, over
    /// the seeds where both got there (below 1: the first is faster).
    pub ratio: Option<f64>,
}

/// Compares `first` with `second`, run `i` with run `i` (the same seed),
/// on the matches until τ held at [`TAU_TARGETS`]`[target]`.
pub fn paired(first: &[Report], second: &[Report], target: usize) -> Paired {
    let (mut faster, mut slower, mut ties) = (0, 0, 0);
    let (mut sum_first, mut sum_second) = (0usize, 0usize);
    let mut differences = Vec::new();
    // A run that never got there: more than any run that did.
    let never = first.iter().chain(second).map(|r| r.matches).max().unwrap_or(0) as f64 + 1.0;
    for (a, b) in first.iter().zip(second) {
        let (x, y) = (a.tau_sustained[target], b.tau_sustained[target]);
        let value = |m: Option<usize>| m.map_or(never, |m| m as f64);
        differences.push(value(x) - value(y));
        match (x, y) {
            (Some(x), Some(y)) => {
                sum_first += x;
                sum_second += y;
                match x.cmp(&y) {
                    std::cmp::Ordering::Less => faster += 1,
                    std::cmp::Ordering::Greater => slower += 1,
                    std::cmp::Ordering::Equal => ties += 1,
                }
            }
            (Some(_), None) => faster += 1,
            (None, Some(_)) => slower += 1,
            (None, None) => ties += 1,
        }
    }
    Paired {
        faster,
        slower,
        ties,
        p: sign_test(faster, slower),
        wilcoxon: wilcoxon(&differences),
        ratio: (sum_second > 0).then(|| sum_first as f64 / sum_second as f64),
    }
}

/// The two-sided exact sign test: the probability, with each of
/// `faster + slower` untied pairs going either way at even odds, of a split
/// at least as lopsided as this one. 1 with no untied pair.
pub fn sign_test(faster: usize, slower: usize) -> f64 {
    let n = faster + slower;
    let fewer = faster.min(slower);
    // P(X ≤ fewer) for X ~ Binomial(n, ½), summed in logs to stay exact
    // enough for thousands of runs.
    let ln_half_n = n as f64 * 0.5f64.ln();
    let mut ln_choose = 0.0f64;
    let mut tail = 0.0;
    for i in 0..=fewer {
        if i > 0 {
            ln_choose += ((n - i + 1) as f64).ln() - (i as f64).ln();
        }
        tail += (ln_choose + ln_half_n).exp();
    }
    (2.0 * tail).min(1.0)
}

/// The two-sided Wilcoxon signed-rank test of paired `differences`
/// (zeros dropped, ties given their mean rank): the exact probability,
/// with every difference's sign equally likely either way given the ranks,
/// of a rank sum at least as far from its mean as the observed one. 1 with
/// no non-zero difference.
pub fn wilcoxon(differences: &[f64]) -> f64 {
    let mut nonzero: Vec<f64> = differences
        .iter()
        .copied()
        .filter(|d| *d != 0.0 && !d.is_nan())
        .collect();
    let n = nonzero.len();
    if n == 0 {
        return 1.0;
    }
    nonzero.sort_by(|x, y| x.abs().total_cmp(&y.abs()));
    // Doubled mean ranks (integers even with ties).
    let mut doubled = vec![0usize; n];
    let mut i = 0;
    while i < n {
        let mut j = i;
        while j + 1 < n && nonzero[j + 1].abs() == nonzero[i].abs() {
            j += 1;
        }
        // Ranks i + 1 ..= j + 1, mean (i + j + 2) / 2, doubled i + j + 2.
        for rank in &mut doubled[i..=j] {
            *rank = i + j + 2;
        }
        i = j + 1;
    }
    let total: usize = doubled.iter().sum();
    let positive: usize = nonzero
        .iter()
        .zip(&doubled)
        .filter(|(d, _)| **d > 0.0)
        .map(|(_, r)| r)
        .sum();
    // The distribution of the doubled positive rank sum under the null.
    let mut ways = vec![0.0f64; total + 1];
    ways[0] = 1.0;
    for &r in &doubled {
        for sum in (r..=total).rev() {
            ways[sum] = 0.5 * ways[sum] + 0.5 * ways[sum - r];
        }
        for w in ways[..r].iter_mut() {
            *w *= 0.5;
        }
    }
    // Two-sided: sums at least as far from the centre (total / 2).
    let distance = (2 * positive).abs_diff(total);
    let p: f64 = ways
        .iter()
        .enumerate()
        .filter(|&(sum, _)| (2 * sum).abs_diff(total) >= distance)
        .map(|(_, w)| w)
        .sum();
    p.min(1.0)
}
