//! The skirmish house bots, played in-process against the rules as the
//! referee plays them: every tick each side's observation is turned into
//! the exact line the referee sends (`Observation::to_line`), answered
//! through the SDK's `answer`, and the reply read back with
//! `Skirmish::parse_reply`.
//!
//! The bots are graded, `skirmish-rush` < `skirmish-economy` <
//! `skirmish-defence`: each beats the one before it from both start
//! positions on both built-in maps, and every bot eliminates a bot that does
//! nothing. No bot sends more than 32 actions in a tick or orders a unit it
//! does not own, and hardly any of its actions are rejected.

use arbiter_bots::skirmish::{Defence, Economy, Rush};
use arbiter_sdk::games::skirmish::{ACTION_LIMIT, Kind, Map, Reason, Skirmish, TICK_LIMIT, TickRecord, deadline_ms};
use arbiter_sdk::games::{FinishReason, Side};
use arbiter_sdk::skirmish::{Action, Bot, Observation, answer};
use arbiter_sdk::{Clock, Rng};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// Most rejected actions a bot may get in one game. The bots get none in
/// these games; a few could come from a stale view (a tree felled out of
/// sight, a footprint taken while the builder walks).
const MAX_REJECTED: u32 = 10;

/// Does nothing, ever.
struct Idle;

impl Bot for Idle {
    fn act(&mut self, _observation: &Observation, _clock: &Clock) -> Vec<Action> {
        Vec::new()
    }
}

/// A bot by name (`idle` or a house bot without its `skirmish-` prefix),
/// counting the actions it sends.
struct Named {
    bot: Box<dyn Bot>,
    most: usize,
}

impl Named {
    fn new(name: &str, seed: u64) -> Named {
        let rng = Rng::seeded(seed);
        let bot: Box<dyn Bot> = match name {
            "rush" => Box::new(Rush::new(rng)),
            "economy" => Box::new(Economy::new(rng)),
            "defence" => Box::new(Defence::new(rng)),
            "idle" => Box::new(Idle),
            _ => panic!("no bot called {name}"),
        };
        Named { bot, most: 0 }
    }
}

impl Bot for Named {
    fn act(&mut self, observation: &Observation, clock: &Clock) -> Vec<Action> {
        let actions = self.bot.act(observation, clock);
        self.most = self.most.max(actions.len());
        actions
    }
}

/// What a game came to.
struct Played {
    ticks: u32,
    scores: [u32; 2],
    reason: FinishReason,
    /// Rejections of each side, by reason.
    rejected: [BTreeMap<&'static str, u32>; 2],
    /// The most actions a side sent in one tick.
    most_actions: [usize; 2],
    /// Each side's score at the end (`Skirmish::scores`).
    points: [u64; 2],
    /// Each side's peasants, soldiers and buildings at the end.
    left: [(usize, usize, usize); 2],
    /// Time each side spent in `answer` (reading the line, thinking,
    /// writing the reply), in all and in its slowest tick.
    bot_time: [(Duration, Duration); 2],
}

impl Played {
    fn winner(&self) -> Option<Side> {
        match self.scores {
            [2, 0] => Some(Side::First),
            [0, 2] => Some(Side::Second),
            _ => None,
        }
    }
}

/// Plays one game on `map` between the bots called `names` (first, second,
/// each with its random seed) to its end, as the referee would; `each`
/// sees the game after every tick with that tick's record.
fn play(map: &str, names: [(&str, u64); 2], mut each: impl FnMut(&Skirmish, &TickRecord)) -> Played {
    let mut game = Skirmish::new(Map::builtin(map).expect("a built-in map"), names[0].1);
    let mut bots = names.map(|(name, seed)| Named::new(name, seed));
    let mut rejected: [BTreeMap<&'static str, u32>; 2] = Default::default();
    let mut bot_time = [(Duration::ZERO, Duration::ZERO); 2];
    while !game.is_over() {
        let deadline = deadline_ms(game.tick());
        let replies = Side::BOTH.map(|side| {
            let line = game.observe(side, deadline).to_line();
            let started = Instant::now();
            let reply = answer(&mut bots[side.index()], &line);
            let spent = started.elapsed();
            let time = &mut bot_time[side.index()];
            time.0 += spent;
            time.1 = time.1.max(spent);
            reply
        });
        let parsed = Side::BOTH.map(|side| {
            let reply = &replies[side.index()];
            Some(
                game.parse_reply(side, reply)
                    .unwrap_or_else(|error| panic!("{side:?} replied {reply}: {error}")),
            )
        });
        let record = game.step(parsed).expect("the game goes on").clone();
        for side in Side::BOTH {
            let entry = &record.sides[side.index()];
            assert!(!entry.skipped, "{side:?} answered for another tick");
            for r in &entry.rejected {
                *rejected[side.index()].entry(r.reason.as_str()).or_default() += 1;
            }
        }
        each(&game, &record);
    }
    let outcome = game.outcome().expect("the game is over");
    let view = game.spectate();
    let left = Side::BOTH.map(|side| {
        let owner = side.index() as u8 + 1;
        let count = |wanted: fn(Kind) -> bool| view.units.iter().filter(|u| u.owner == owner && wanted(u.kind)).count();
        (
            count(|k| k == Kind::Peasant),
            count(|k| matches!(k, Kind::Footman | Kind::Rifleman)),
            count(Kind::is_building),
        )
    });
    Played {
        ticks: game.tick(),
        scores: outcome.scores,
        reason: outcome.reason,
        rejected,
        most_actions: bots.map(|bot| bot.most),
        points: game.scores(),
        left,
        bot_time,
    }
}

/// Plays `first` against `second`, prints the game and checks what every
/// game must satisfy: it ends, no reply holds more than 32 actions, no
/// action names a unit the side does not own, few are rejected.
fn game(map: &str, seed: u64, first: &str, second: &str) -> Played {
    let started = Instant::now();
    let played = play(map, [(first, seed * 2), (second, seed * 2 + 1)], |_, _| {});
    eprintln!(
        "{map} seed {seed}: {first} vs {second}: {:?} by {:?} at tick {} (score {:?}; peasants, soldiers, \
         buildings left {:?}; rejected {:?} / {:?}; most actions {:?}; bots' time {:.1?}) in {:.1?}",
        played.scores,
        played.reason,
        played.ticks,
        played.points,
        played.left,
        played.rejected[0],
        played.rejected[1],
        played.most_actions,
        played.bot_time,
        started.elapsed()
    );
    assert!(played.ticks <= TICK_LIMIT);
    for side in Side::BOTH {
        let i = side.index();
        assert!(
            played.most_actions[i] <= ACTION_LIMIT,
            "{map}: {side:?} sent {} actions in a tick",
            played.most_actions[i]
        );
        assert_eq!(
            played.rejected[i].get(Reason::NotOwner.as_str()),
            None,
            "{map}: {side:?} ordered units it does not own"
        );
        let rejected: u32 = played.rejected[i].values().sum();
        assert!(rejected <= MAX_REJECTED, "{map}: {side:?} got {rejected} rejections");
    }
    played
}

/// Plays `stronger` against `weaker` on `map` from both start positions
/// for each seed, and checks that `stronger` wins every game (by
/// elimination against an idle bot).
fn beats(map: &str, seeds: &[u64], stronger: &str, weaker: &str) {
    for &seed in seeds {
        for (first, second, winner) in [(stronger, weaker, Side::First), (weaker, stronger, Side::Second)] {
            let played = game(map, seed, first, second);
            assert_eq!(
                played.winner(),
                Some(winner),
                "{map} seed {seed}: {first} vs {second}: {:?} by {:?} at tick {}",
                played.scores,
                played.reason,
                played.ticks
            );
            if weaker == "idle" {
                assert_eq!(played.reason, FinishReason::Elimination, "{map}: {first} vs {second}");
            }
        }
    }
}

#[test]
fn economy_beats_rush_on_duel32() {
    beats("duel32", &[1, 2], "economy", "rush");
}

#[test]
fn economy_beats_rush_on_duel48() {
    beats("duel48", &[1, 2], "economy", "rush");
}

#[test]
fn defence_beats_economy_on_duel32() {
    beats("duel32", &[1, 2], "defence", "economy");
}

#[test]
fn defence_beats_economy_on_duel48() {
    beats("duel48", &[1, 2], "defence", "economy");
}

#[test]
fn defence_beats_rush() {
    beats("duel32", &[3], "defence", "rush");
    beats("duel48", &[3], "defence", "rush");
}

#[test]
fn the_same_bots_play_the_mirror_game_from_the_other_start() {
    let [a, b] = [("economy", 7), ("defence", 8)];
    let ticks = |played: &Played| played.ticks;
    let one = play("duel32", [a, b], |_, _| {});
    let other = play("duel32", [b, a], |_, _| {});
    assert_eq!(ticks(&one), ticks(&other));
    assert_eq!(one.scores, [other.scores[1], other.scores[0]]);
    assert_eq!(one.points, [other.points[1], other.points[0]]);
    assert_eq!(one.left, [other.left[1], other.left[0]]);
}

/// Each bot against an idle bot on `map`, from both start positions.
fn eliminates_idle(map: &str) {
    for name in ["rush", "economy", "defence"] {
        beats(map, &[1], name, "idle");
    }
}

#[test]
fn every_bot_eliminates_an_idle_bot_on_duel32() {
    eliminates_idle("duel32");
}

#[test]
fn every_bot_eliminates_an_idle_bot_on_duel48() {
    eliminates_idle("duel48");
}
