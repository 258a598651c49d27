//! Property tests of the skirmish referee's guarantees, with random and
//! hostile bots:
//!
//! - (a) an observation shows exactly the side's own units and the enemies,
//!   mines and felled trees within its vision, vision being recomputed here
//!   from the full state;
//! - (b) no action changes a unit its side does not own: such orders are
//!   rejected as `not_owner`, and the game goes on exactly as without them;
//! - (c) a game and its mirror (the same bots on swapped start positions)
//!   are exact half-turn images of each other, sides swapped.

mod skirmish_bots;

use arbiter_games::Side;
use arbiter_games::skirmish::{Kind, Map, Observation, Reason, Skirmish, Spectator, Target, UnitView};
use proptest::prelude::*;
use serde_json::Value;
use skirmish_bots::{Bot, Idle, Random, Rusher, play};
use std::collections::BTreeSet;

/// A 20×20 map where the sides meet quickly.
const SMALL: &str = "\
....................
.111...TTT..........
.111...TTT..........
.111................
....................
....................
....................
.MM.................
.MM.................
.........##.........
.........##.........
.................MM.
.................MM.
....................
....................
....................
................222.
..........TTT...222.
..........TTT...222.
....................
";

fn map(name: &str) -> Map {
    match name {
        "small" => Map::parse("small", SMALL).expect("valid map"),
        other => Map::builtin(other).expect("built-in map"),
    }
}

fn any_map() -> impl Strategy<Value = &'static str> {
    prop::sample::select(vec!["small", "small", "duel32"])
}

// ---------------------------------------------------------------------------
// (a) vision
// ---------------------------------------------------------------------------

fn size(kind: Kind) -> i32 {
    kind.stats().size as i32
}

/// The tiles `owner`'s units and buildings see, from the full state: every
/// tile within vision (Chebyshev) of a tile of one of them.
struct Sight {
    w: i32,
    h: i32,
    tiles: Vec<bool>,
}

impl Sight {
    fn of(view: &Spectator, owner: u8, w: i32, h: i32) -> Sight {
        let mut tiles = vec![false; (w * h) as usize];
        for u in view.units.iter().filter(|u| u.owner == owner) {
            let (v, s) = (u.kind.stats().vision as i32, size(u.kind));
            for y in (u.y - v).max(0)..(u.y + s + v).min(h) {
                for x in (u.x - v).max(0)..(u.x + s + v).min(w) {
                    tiles[(y * w + x) as usize] = true;
                }
            }
        }
        Sight { w, h, tiles }
    }

    fn contains(&self, &(x, y): &(i32, i32)) -> bool {
        x >= 0 && y >= 0 && x < self.w && y < self.h && self.tiles[(y * self.w + x) as usize]
    }
}

fn seen(vision: &Sight, x: i32, y: i32, s: i32) -> bool {
    (y..y + s).any(|ty| (x..x + s).any(|tx| vision.contains(&(tx, ty))))
}

fn check_observation(game: &Skirmish, side: Side, obs: &Observation) -> Result<(), TestCaseError> {
    let view = game.spectate();
    let me = side.index() as u8 + 1;
    let sight = Sight::of(&view, me, game.map().width(), game.map().height());
    let own: Vec<&UnitView> = view.units.iter().filter(|u| u.owner == me).collect();
    prop_assert_eq!(obs.units.iter().collect::<Vec<_>>(), own, "own units");
    let enemies: Vec<(u32, i32, i32, u32)> = view
        .units
        .iter()
        .filter(|u| u.owner != me && seen(&sight, u.x, u.y, size(u.kind)))
        .map(|u| (u.id, u.x, u.y, u.hp))
        .collect();
    let shown: Vec<(u32, i32, i32, u32)> = obs.visible_enemies.iter().map(|u| (u.id, u.x, u.y, u.hp)).collect();
    prop_assert_eq!(shown, enemies, "enemies in vision, and only them");
    prop_assert!(obs.visible_enemies.iter().all(|u| u.owner != me));
    if obs.tick > 0 {
        let mines: Vec<_> = view.mines.iter().filter(|m| seen(&sight, m.x, m.y, 2)).collect();
        prop_assert_eq!(obs.mines.iter().collect::<Vec<_>>(), mines, "mines in vision");
        prop_assert!(obs.map.is_none());
    } else {
        prop_assert_eq!(&obs.mines, &view.mines, "every mine at tick 0");
    }
    let mut felled: Vec<_> = view
        .felled
        .iter()
        .filter(|t| sight.contains(&(t.x, t.y)))
        .copied()
        .collect();
    felled.sort_by_key(|t| (t.y, t.x));
    prop_assert_eq!(&obs.cleared, &felled, "felled trees in vision");
    prop_assert_eq!(obs.res, view.res[side.index()]);
    for y in 0..game.map().height() {
        for x in 0..game.map().width() {
            prop_assert_eq!(game.in_vision(side, x, y), sight.contains(&(x, y)));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn observations_hold_only_what_is_in_vision(
        name in any_map(), a in any::<u64>(), b in any::<u64>(), hostile in any::<bool>(),
    ) {
        let mut game = Skirmish::new(map(name), a);
        let mut bots = [Random::new(a, hostile), Random::new(b, false)];
        for _ in 0..150 {
            let mut replies = [None, None];
            for side in Side::BOTH {
                let obs = game.observation(side, 20);
                check_observation(&game, side, &obs)?;
                let line = bots[side.index()].reply(&obs);
                replies[side.index()] = Some(game.parse_reply(side, &line).map_err(|e| TestCaseError::fail(e.to_string()))?);
            }
            if game.step(replies).is_none() {
                break;
            }
        }
    }
}

// ---------------------------------------------------------------------------
// (b) ownership
// ---------------------------------------------------------------------------

/// Wraps a bot and removes its actions for units that are not its own.
struct OwnOnly<B>(B);

impl<B: Bot> Bot for OwnOnly<B> {
    fn act(&mut self, obs: &Observation) -> Vec<Value> {
        let own: BTreeSet<u64> = obs.units.iter().map(|u| u64::from(u.id)).collect();
        self.0
            .act(obs)
            .into_iter()
            .take(arbiter_games::skirmish::ACTION_LIMIT)
            .filter(|a| match a.get("unit") {
                Some(unit) if unit.is_i64() || unit.is_u64() => unit.as_u64().is_some_and(|id| own.contains(&id)),
                _ => true,
            })
            .collect()
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Orders naming enemy or unknown ids change nothing at all.
    #[test]
    fn orders_for_units_not_owned_are_rejected_and_change_nothing(
        name in any_map(), a in any::<u64>(), b in any::<u64>(),
    ) {
        let mut attacked = Skirmish::new(map(name), 0);
        let mut alone = Skirmish::new(map(name), 0);
        let mut hostile = Random::new(a, true);
        hostile.only_enemy_ids = true;
        let mut victims = [Random::new(b, false), Random::new(b, false)];
        for _ in 0..120 {
            let line = hostile.reply(&attacked.observation(Side::First, 20));
            let reply = attacked.parse_reply(Side::First, &line).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let expected = reply.actions.len();
            let enemy = [&attacked, &alone].map(|g| g.observation(Side::Second, 20));
            prop_assert_eq!(&enemy[0], &enemy[1], "the victim sees the same");
            let lines = [victims[0].reply(&enemy[0]), victims[1].reply(&enemy[1])];
            let second = |g: &Skirmish, line: &str| g.parse_reply(Side::Second, line).ok();
            let record = attacked.step([Some(reply), second(&attacked, &lines[0])]).cloned();
            alone.step([None, second(&alone, &lines[1])]);
            if let Some(record) = record {
                prop_assert!(record.sides[0].accepted.is_empty());
                prop_assert_eq!(record.sides[0].rejected.len(), expected);
                prop_assert!(record.sides[0].rejected.iter().all(|r| r.reason == Reason::NotOwner));
            }
            prop_assert_eq!(attacked.spectate(), alone.spectate());
            if attacked.is_over() {
                break;
            }
        }
    }

    /// A hostile bot's game equals the same bot's game with its actions on
    /// units it does not own removed; every accepted order names an own unit.
    #[test]
    fn hostile_actions_on_foreign_units_are_inert(
        name in any_map(), a in any::<u64>(), b in any::<u64>(),
    ) {
        let mut with = Skirmish::new(map(name), 0);
        let mut without = Skirmish::new(map(name), 0);
        let mut bots_with = (Random::new(a, true), Random::new(b, true));
        let mut bots_without = (OwnOnly(Random::new(a, true)), Random::new(b, true));
        for _ in 0..100 {
            let before = with.spectate();
            let obs = [Side::First, Side::Second].map(|side| with.observation(side, 20));
            let lines = [bots_with.0.reply(&obs[0]), bots_with.1.reply(&obs[1])];
            let replies = Side::BOTH.map(|side| with.parse_reply(side, &lines[side.index()]).ok());
            let lines2 = [
                bots_without.0.reply(&without.observation(Side::First, 20)),
                bots_without.1.reply(&without.observation(Side::Second, 20)),
            ];
            let replies2 = Side::BOTH.map(|side| without.parse_reply(side, &lines2[side.index()]).ok());
            let Some(record) = with.step(replies).cloned() else { break };
            without.step(replies2);
            for side in Side::BOTH {
                let me = side.index() as u8 + 1;
                for accepted in &record.sides[side.index()].accepted {
                    let unit = before.units.iter().find(|u| u.id == accepted.unit);
                    prop_assert!(unit.is_some_and(|u| u.owner == me), "accepted an order for {}", accepted.unit);
                }
            }
            prop_assert_eq!(with.spectate(), without.spectate());
        }
    }
}

// ---------------------------------------------------------------------------
// (c) mirror
// ---------------------------------------------------------------------------

type UnitKey = (u8, Kind, i32, i32, u32, String, String, String, String);

/// Units, mines, felled trees and banks, comparable across mirror games.
type Canonical = (Vec<UnitKey>, Vec<(i32, i32, u32)>, Vec<(i32, i32)>, String);

/// The state as seen from `owner`-swapped, half-turned coordinates when
/// `turn`; ids replaced by what they name.
fn canonical(game: &Skirmish, turn: bool) -> Canonical {
    let view = game.spectate();
    let (w, h) = (game.map().width(), game.map().height());
    let at = |x: i32, y: i32, s: i32| if turn { (w - x - s, h - y - s) } else { (x, y) };
    let owner = |o: u8| if turn { 3 - o } else { o };
    let name = |id: u32| -> String {
        if let Some(u) = view.units.iter().find(|u| u.id == id) {
            format!("{:?}@{:?}", u.kind, at(u.x, u.y, size(u.kind)))
        } else if let Some(m) = view.mines.iter().find(|m| m.id == id) {
            format!("mine@{:?}", at(m.x, m.y, 2))
        } else {
            "gone".to_string()
        }
    };
    let mut units: Vec<UnitKey> = view
        .units
        .iter()
        .map(|u| {
            let (x, y) = at(u.x, u.y, size(u.kind));
            let target = match u.target {
                None => String::new(),
                Some(Target::Id(id)) => name(id),
                Some(Target::Tile(t)) => {
                    let s = u.code.map_or(1, size);
                    format!("{:?}", at(t.x, t.y, s))
                }
            };
            (
                owner(u.owner),
                u.kind,
                x,
                y,
                u.hp,
                format!("{:?}", u.order),
                target,
                format!("{:?} {:?} {:?}", u.code, u.carry, u.built),
                format!("{:?} {:?}", u.queue, u.progress),
            )
        })
        .collect();
    units.sort();
    let mut mines: Vec<(i32, i32, u32)> = view
        .mines
        .iter()
        .map(|m| {
            let (x, y) = at(m.x, m.y, 2);
            (x, y, m.gold)
        })
        .collect();
    mines.sort();
    let mut felled: Vec<(i32, i32)> = view.felled.iter().map(|t| at(t.x, t.y, 1)).collect();
    felled.sort();
    let mut res = view.res;
    if turn {
        res.swap(0, 1);
    }
    (units, mines, felled, format!("{res:?}"))
}

fn mirror_check(name: &str, make: &dyn Fn(usize) -> Box<dyn Bot>, ticks: u32) -> Result<(), TestCaseError> {
    let mut game = Skirmish::new(map(name), 1);
    let mut mirror = Skirmish::new(map(name), 1);
    let (mut a, mut b) = (make(0), make(1));
    let (mut a2, mut b2) = (make(0), make(1));
    for _ in 0..ticks {
        if game.is_over() {
            break;
        }
        let obs = [game.observation(Side::First, 20), game.observation(Side::Second, 20)];
        let obs2 = [
            mirror.observation(Side::First, 20),
            mirror.observation(Side::Second, 20),
        ];
        let replies = [a.reply(&obs[0]), b.reply(&obs[1])];
        let replies2 = [b2.reply(&obs2[0]), a2.reply(&obs2[1])];
        let parse = |g: &Skirmish, side: Side, line: &str| g.parse_reply(side, line).ok();
        let r = [
            parse(&game, Side::First, &replies[0]),
            parse(&game, Side::Second, &replies[1]),
        ];
        let r2 = [
            parse(&mirror, Side::First, &replies2[0]),
            parse(&mirror, Side::Second, &replies2[1]),
        ];
        game.step(r);
        mirror.step(r2);
        prop_assert_eq!(
            canonical(&game, false),
            canonical(&mirror, true),
            "tick {}",
            game.tick()
        );
    }
    let flip = |o: Option<arbiter_games::Outcome>| o.map(|o| ([o.scores[1], o.scores[0]], o.reason));
    prop_assert_eq!(game.outcome().map(|o| (o.scores, o.reason)), flip(mirror.outcome()));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn a_game_and_its_mirror_are_mirror_images(name in any_map(), a in any::<u64>(), b in any::<u64>()) {
        let seeds = [a, b];
        mirror_check(name, &|i| Box::new(Random::new(seeds[i], false)), 150)?;
    }
}

#[test]
fn the_scripted_bot_against_a_random_bot_mirrors() {
    let result = mirror_check(
        "small",
        &|i| {
            if i == 0 {
                Box::new(Rusher::new())
            } else {
                Box::new(Random::new(99, false))
            }
        },
        600,
    );
    assert!(result.is_ok(), "{result:?}");
    let result = mirror_check(
        "duel32",
        &|i| {
            if i == 0 {
                Box::new(Rusher::new())
            } else {
                Box::new(Idle)
            }
        },
        400,
    );
    assert!(result.is_ok(), "{result:?}");
}

/// Two copies of the scripted bot on the two start positions: the state is
/// its own mirror image at every tick, and the record replays.
#[test]
fn two_scripted_bots_keep_the_state_its_own_mirror_image() {
    let mut game = Skirmish::new(map("small"), 5);
    let (mut a, mut b) = (Rusher::new(), Rusher::new());
    let mut fights = 0;
    play(&mut game, [&mut a, &mut b], 1_200, |g| {
        assert_eq!(canonical(g, false), canonical(g, true), "tick {}", g.tick());
        fights += g
            .spectate()
            .units
            .iter()
            .filter(|u| u.hp < u.hp_max && u.built != Some(false))
            .count();
    });
    assert!(fights > 0, "the armies met");
    let outcome = game.outcome();
    assert!(outcome.is_none_or(|o| o.scores == [1, 1]), "{outcome:?}");
    let replayed = game.record().replay().expect("replays");
    assert_eq!(replayed.spectate(), game.spectate());
}
