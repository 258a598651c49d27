//! Unit tests of the rules on a small 20×20 map, reaching into the state.

use super::state::{Job, Skirmish};
use super::*;
use crate::{FinishReason, Side};

const ROWS: [&str; 20] = [
    "....................",
    ".111...TTT..........",
    ".111...TTT..........",
    ".111................",
    "....................",
    "....................",
    "....................",
    ".MM.................",
    ".MM.................",
    ".........##.........",
    ".........##.........",
    ".................MM.",
    ".................MM.",
    "....................",
    "....................",
    "....................",
    "................222.",
    "..........TTT...222.",
    "..........TTT...222.",
    "....................",
];

/// Ids on the test map: mines 1 and 2, side 1's hall 3 and peasants 4–8,
/// side 2's hall 9 and peasants 10–14.
const MINE: u32 = 1;
const ENEMY_MINE: u32 = 2;
const HALL: u32 = 3;
const PEASANT: u32 = 4;
const ENEMY_HALL: u32 = 9;

fn game() -> Skirmish {
    Skirmish::new(Map::parse("test", &ROWS.join("\n")).expect("valid test map"), 1)
}

/// A game with no units at all but one farm per side in a corner (so
/// neither side is eliminated).
fn empty() -> Skirmish {
    let mut g = game();
    g.entities.clear();
    g.blocked.iter_mut().for_each(|b| *b = false);
    for (_, at) in g.all_mines.clone() {
        g.set_blocked(at, 2, true);
    }
    g.add(Side::First, Kind::Farm, (0, 18), true);
    g.add(Side::Second, Kind::Farm, (18, 0), true);
    g.update_vision();
    g
}

fn spawn(g: &mut Skirmish, side: Side, kind: Kind, at: (i32, i32)) -> u32 {
    let id = g.add(side, kind, at, true);
    g.update_vision();
    id
}

fn reply(g: &Skirmish, actions: &str) -> ActReply {
    parse_reply(&format!(r#"{{"t":"act","tick":{},"actions":[{actions}]}}"#, g.tick())).expect("valid reply")
}

fn act(g: &mut Skirmish, side: Side, actions: &str) -> SideTick {
    let r = reply(g, actions);
    let mut replies = [None, None];
    replies[side.index()] = Some(r);
    g.step(replies).expect("game goes on").sides[side.index()].clone()
}

fn idle(g: &mut Skirmish, ticks: u32) {
    for _ in 0..ticks {
        if g.step([None, None]).is_none() {
            return;
        }
    }
}

fn hp(g: &Skirmish, id: u32) -> Option<u32> {
    g.entity(id).map(|e| e.hp)
}

fn reasons(tick: &SideTick) -> Vec<(u32, Reason)> {
    tick.rejected.iter().map(|r| (r.index, r.reason)).collect()
}

#[test]
fn start_matches_the_spec() {
    let g = game();
    let obs = g.observation(Side::First, 1_000);
    assert_eq!((obs.res.gold, obs.res.lumber, obs.res.food), (500, 150, [5, 12]));
    assert_eq!(obs.units.len(), 6);
    assert_eq!(obs.units[0].id, HALL);
    let places: Vec<(i32, i32)> = obs.units[1..].iter().map(|u| (u.x, u.y)).collect();
    assert_eq!(
        places,
        vec![(0, 0), (1, 0), (2, 0), (3, 0), (4, 0)],
        "the first 5 tiles next to the hall"
    );
    let enemy: Vec<(i32, i32)> = g.observation(Side::Second, 1_000).units[1..]
        .iter()
        .map(|u| (u.x, u.y))
        .collect();
    assert_eq!(
        enemy,
        vec![(19, 19), (18, 19), (17, 19), (16, 19), (15, 19)],
        "mirrored"
    );
    assert!(obs.visible_enemies.is_empty(), "the enemy starts out of vision");
    assert_eq!(obs.mines.len(), 2, "every mine at tick 0");
    assert!(obs.map.is_some());
    let later = {
        let mut g = g.clone();
        idle(&mut g, 1);
        g.observation(Side::First, 20)
    };
    assert_eq!(later.mines.iter().map(|m| m.id).collect::<Vec<_>>(), vec![MINE]);
    assert!(later.map.is_none());
}

#[test]
fn idle_soldiers_hit_each_other_at_the_same_time() {
    let mut g = empty();
    let a = spawn(&mut g, Side::First, Kind::Footman, (5, 5));
    let b = spawn(&mut g, Side::Second, Kind::Footman, (6, 6));
    idle(&mut g, 1);
    assert_eq!((hp(&g, a), hp(&g, b)), (Some(410), Some(410)));
    // Cooldown 6: hits at ticks 0, 6, 12.
    idle(&mut g, 12);
    assert_eq!((hp(&g, a), hp(&g, b)), (Some(390), Some(390)));
    // Two units that kill each other in the same tick both die.
    g.entities.iter_mut().for_each(|e| {
        if e.id == a || e.id == b {
            e.hp = 10;
            e.cooldown = 0;
        }
    });
    idle(&mut g, 1);
    assert_eq!((hp(&g, a), hp(&g, b)), (None, None));
}

#[test]
fn damage_minus_armor_and_ranges() {
    let mut g = empty();
    let rifle = spawn(&mut g, Side::First, Kind::Rifleman, (2, 10));
    let near = spawn(&mut g, Side::Second, Kind::Footman, (7, 12));
    let far = spawn(&mut g, Side::Second, Kind::Footman, (8, 10));
    idle(&mut g, 1);
    assert_eq!(hp(&g, near), Some(420 - 17), "range 5 reaches 5 tiles");
    assert_eq!(hp(&g, far), Some(420), "not 6");
    assert_eq!(hp(&g, rifle), Some(505), "footmen do not chase");
    // A peasant never attacks by itself; a moving footman does not either.
    let mut g = empty();
    let peasant = spawn(&mut g, Side::First, Kind::Peasant, (5, 5));
    let walker = spawn(&mut g, Side::First, Kind::Footman, (5, 6));
    let enemy = spawn(&mut g, Side::Second, Kind::Peasant, (6, 5));
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"move","unit":{walker},"x":5,"y":14}}"#),
    );
    assert_eq!(hp(&g, enemy), Some(220));
    assert_eq!(hp(&g, peasant), Some(220));
    // Armor 5 against damage 5: at least 1.
    let mut g = empty();
    let p = spawn(&mut g, Side::First, Kind::Peasant, (5, 5));
    let hall = spawn(&mut g, Side::Second, Kind::TownHall, (6, 6));
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"attack","unit":{p},"target":{hall}}}"#),
    );
    assert_eq!(hp(&g, hall), Some(1499));
}

#[test]
fn attackers_chase_and_stop_when_the_target_dies() {
    let mut g = empty();
    let a = spawn(&mut g, Side::First, Kind::Footman, (4, 4));
    let b = spawn(&mut g, Side::Second, Kind::Peasant, (8, 4));
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"attack","unit":{a},"target":{b}}}"#),
    );
    idle(&mut g, 200);
    assert_eq!(hp(&g, b), None, "the peasant is dead");
    assert_eq!(g.entity(a).map(|e| e.job), Some(Job::Idle));
}

#[test]
fn a_gathering_trip_brings_10_gold_and_repeats() {
    let mut g = game();
    let before = g.mine(MINE).map(|m| m.gold);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"gather","unit":{PEASANT},"target":{MINE}}}"#),
    );
    assert_eq!(t.accepted.len(), 1);
    let mut deposits = Vec::new();
    let mut gold = g.bank[0].gold;
    for tick in 1..200 {
        idle(&mut g, 1);
        if g.bank[0].gold != gold {
            deposits.push((tick, g.bank[0].gold - gold));
            gold = g.bank[0].gold;
        }
    }
    assert!(deposits.len() >= 3, "{deposits:?}");
    assert!(deposits.iter().all(|&(_, amount)| amount == 10));
    // Every trip takes the same time once in the loop.
    let gaps: Vec<u32> = deposits.windows(2).map(|w| w[1].0 - w[0].0).collect();
    assert!(gaps.windows(2).all(|w| w[0] == w[1]), "{gaps:?}");
    assert!(gaps[0] > MINE_TICKS);
    let taken = before.unwrap_or(0) - g.mine(MINE).map_or(0, |m| m.gold);
    assert!(taken >= 10 * deposits.len() as u32);
    let view = g.observation(Side::First, 20);
    let peasant = view.units.iter().find(|u| u.id == PEASANT).expect("alive");
    assert_eq!(peasant.order, Some(OrderName::Gather));
    assert_eq!(peasant.target, Some(Target::Id(MINE)));
}

#[test]
fn trees_fall_and_woodcutters_move_on() {
    let mut g = game();
    let tree = (7, 2);
    let i = g.index(tree.0, tree.1).expect("on map");
    g.lumber[i] = 10;
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"gather","unit":{PEASANT},"target":{{"x":7,"y":2}}}}"#),
    );
    let lumber = g.bank[0].lumber;
    idle(&mut g, 150);
    assert_eq!(g.terrain[i], Terrain::Ground, "the tree is felled");
    assert!(g.walkable(tree.0, tree.1), "and can be walked and built on");
    assert!(g.bank[0].lumber >= lumber + 10);
    let obs = g.observation(Side::First, 20);
    assert!(obs.cleared.contains(&TileRef { x: 7, y: 2 }));
    let peasant = obs.units.iter().find(|u| u.id == PEASANT).expect("alive");
    assert_eq!(peasant.order, Some(OrderName::Gather));
    assert!(matches!(peasant.target, Some(Target::Tile(t)) if t != TileRef { x: 7, y: 2 }));
    // The enemy does not see it.
    assert!(g.observation(Side::Second, 20).cleared.is_empty());
}

#[test]
fn a_depleted_mine_disappears_and_its_miners_go_idle() {
    let mut g = game();
    if let Some(m) = g.mines.iter_mut().find(|m| m.id == MINE) {
        m.gold = 10;
    }
    // Two miners on one tile: they finish in the same tick.
    if let Some(i) = g.find(PEASANT + 1) {
        g.entities[i].at = (0, 0);
    }
    act(
        &mut g,
        Side::First,
        &format!(
            r#"{{"do":"gather","unit":{PEASANT},"target":{MINE}}},{{"do":"gather","unit":{},"target":{MINE}}}"#,
            PEASANT + 1
        ),
    );
    let gold = g.bank[0].gold;
    idle(&mut g, 100);
    assert!(g.mine(MINE).is_none());
    assert!(g.walkable(1, 7), "the mine's tiles are free");
    // Both finished in the same tick and took what was there: treated alike.
    assert_eq!(g.bank[0].gold, gold + 20);
    assert_eq!(g.entity(PEASANT).map(|e| e.job), Some(Job::Idle));
    let obs = g.observation(Side::First, 20);
    assert!(obs.mines.is_empty());
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"gather","unit":{PEASANT},"target":{MINE}}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::BadTarget)]);
}

#[test]
fn building_pays_at_start_keeps_the_builder_busy_and_adds_food() {
    let mut g = game();
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"build","unit":{PEASANT},"code":"hhou","x":5,"y":3}}"#),
    );
    assert_eq!(t.accepted.len(), 1);
    assert_eq!(g.bank[0].gold, 500, "not paid at order time");
    let mut site = None;
    for _ in 0..40 {
        idle(&mut g, 1);
        site = g
            .entities
            .iter()
            .find(|e| e.kind == Kind::Farm && e.side == Side::First)
            .map(|e| e.id);
        if site.is_some() {
            break;
        }
    }
    let site = site.expect("construction started");
    assert_eq!((g.bank[0].gold, g.bank[0].lumber), (420, 130));
    assert_eq!(hp(&g, site), Some(50));
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"stop","unit":{PEASANT}}},{{"do":"train","unit":{site},"code":"hpea"}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::Busy), (1, Reason::WrongUnit)]);
    assert_eq!(g.observation(Side::First, 20).res.food, [5, 12], "a site adds no food");
    idle(&mut g, 175);
    let farm = g.entity(site).expect("built");
    assert!(farm.built);
    assert_eq!(farm.hp, 500);
    assert_eq!(g.entity(PEASANT).map(|e| e.job), Some(Job::Idle));
    assert_eq!(g.observation(Side::First, 20).res.food, [5, 18]);
}

#[test]
fn a_build_without_resources_at_start_is_dropped() {
    let mut g = game();
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"build","unit":{PEASANT},"code":"hbar","x":5,"y":4}}"#),
    );
    g.bank[0].gold = 10;
    idle(&mut g, 40);
    assert!(g.entities.iter().all(|e| e.kind != Kind::Barracks));
    assert_eq!(g.entity(PEASANT).map(|e| e.job), Some(Job::Idle));
    assert_eq!(g.bank[0].gold, 10);
}

#[test]
fn construction_moves_units_off_the_footprint() {
    let mut g = game();
    let other = PEASANT + 1;
    act(
        &mut g,
        Side::First,
        &format!(
            r#"{{"do":"move","unit":{other},"x":6,"y":5}},{{"do":"build","unit":{PEASANT},"code":"hhou","x":6,"y":5}}"#
        ),
    );
    idle(&mut g, 60);
    let site = g.entities.iter().find(|e| e.kind == Kind::Farm).expect("started").at;
    assert_eq!(site, (6, 5));
    for e in g.entities.iter().filter(|e| !e.kind.is_building()) {
        assert!(
            super::path::distance(e.at, 1, site, 2) > 0,
            "{} stands on the site",
            e.id
        );
    }
}

#[test]
fn training_pays_when_queued_and_waits_for_food() {
    let mut g = game();
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"train","unit":{HALL},"code":"hpea"}}"#),
    );
    assert_eq!(t.accepted.len(), 1);
    assert_eq!(g.bank[0].gold, 425);
    assert_eq!(
        g.observation(Side::First, 20).res.food,
        [6, 12],
        "the unit in training uses food"
    );
    idle(&mut g, 73);
    assert_eq!(
        g.entities
            .iter()
            .filter(|e| e.kind == Kind::Peasant && e.side == Side::First)
            .count(),
        5
    );
    idle(&mut g, 1);
    let peasants: Vec<_> = g
        .entities
        .iter()
        .filter(|e| e.kind == Kind::Peasant && e.side == Side::First)
        .collect();
    assert_eq!(peasants.len(), 6, "trained in 75 ticks");
    let new = peasants.last().expect("the new one");
    assert_eq!(super::path::distance(new.at, 1, (1, 1), 3), 1, "next to the hall");
    // Fill the food: 6 peasants + 3 footmen = 12.
    for at in [(10, 5), (11, 5), (12, 5)] {
        spawn(&mut g, Side::First, Kind::Footman, at);
    }
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"train","unit":{HALL},"code":"hpea"}}"#),
    );
    idle(&mut g, 100);
    let hall = g.entity(HALL).expect("hall");
    assert_eq!(
        (hall.queue.len(), hall.training, hall.progress),
        (1, false, 0),
        "stalled"
    );
    assert_eq!(g.observation(Side::First, 20).res.food, [12, 12]);
}

#[test]
fn queues_hold_five() {
    let mut g = game();
    g.bank[0].gold = 10_000;
    for _ in 0..5 {
        let t = act(
            &mut g,
            Side::First,
            &format!(r#"{{"do":"train","unit":{HALL},"code":"hpea"}}"#),
        );
        assert_eq!(t.accepted.len(), 1);
    }
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"train","unit":{HALL},"code":"hpea"}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::QueueFull)]);
    let obs = g.observation(Side::First, 20);
    assert_eq!(obs.units[0].queue.as_ref().map(Vec::len), Some(5));
    assert_eq!(obs.units[0].order, Some(OrderName::Train));
    assert_eq!(
        obs.rejected,
        vec![Rejection {
            index: 0,
            reason: Reason::QueueFull
        }]
    );
}

#[test]
fn only_the_last_order_per_unit_counts_and_32_are_read() {
    let mut g = game();
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"move","unit":{PEASANT},"x":5,"y":5}},{{"do":"move","unit":{PEASANT},"x":-1,"y":5}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::Superseded), (1, Reason::OutOfMap)]);
    assert!(t.accepted.is_empty());
    let mut actions = vec![r#"{"do":"stop","unit":999}"#.to_string(); 31];
    actions.push(format!(r#"{{"do":"move","unit":{PEASANT},"x":5,"y":5}}"#));
    actions.push(format!(r#"{{"do":"move","unit":{},"x":5,"y":5}}"#, PEASANT + 1));
    let t = act(&mut g, Side::First, &actions.join(","));
    assert_eq!(t.rejected.len(), 31);
    assert_eq!(
        t.accepted.iter().map(|a| (a.index, a.unit)).collect::<Vec<_>>(),
        vec![(31, PEASANT)]
    );
    assert_eq!(
        g.entity(PEASANT + 1).map(|e| e.job),
        Some(Job::Idle),
        "the 33rd is dropped"
    );
}

#[test]
fn every_rejection_reason() {
    let mut g = game();
    // A site of side 1, an enemy footman in vision, a busy builder, and
    // peasants to order about (one order per unit per reply counts).
    let site = g.add(Side::First, Kind::Barracks, (12, 0), false);
    spawn(&mut g, Side::Second, Kind::Footman, (6, 6));
    let builder = spawn(&mut g, Side::First, Kind::Peasant, (11, 0));
    if let Some(i) = g.find(builder) {
        g.entities[i].job = Job::Build {
            kind: Kind::Barracks,
            at: (12, 0),
            site: Some(site),
        };
    }
    let footman = spawn(&mut g, Side::First, Kind::Footman, (5, 5));
    let farm = spawn(&mut g, Side::First, Kind::Farm, (14, 2));
    let q: Vec<u32> = (0..8)
        .map(|i| spawn(&mut g, Side::First, Kind::Peasant, (4 + i, 4)))
        .collect();
    let p = PEASANT;
    let cases: Vec<(String, Reason)> = vec![
        ("7".to_string(), Reason::BadAction),
        (r#"{"do":"stop"}"#.to_string(), Reason::BadAction),
        (format!(r#"{{"do":"stop","unit":{ENEMY_HALL}}}"#), Reason::NotOwner),
        (format!(r#"{{"do":"stop","unit":{MINE}}}"#), Reason::NotOwner),
        (r#"{"do":"stop","unit":-1}"#.to_string(), Reason::NotOwner),
        (r#"{"do":"stop","unit":123456789}"#.to_string(), Reason::NotOwner),
        (format!(r#"{{"unit":{p}}}"#), Reason::Superseded),
        (format!(r#"{{"do":"fly","unit":{}}}"#, q[7]), Reason::UnknownOrder),
        (
            format!(r#"{{"do":"train","unit":{HALL},"code":"hxyz"}}"#),
            Reason::UnknownCode,
        ),
        (
            format!(r#"{{"do":"move","unit":{farm},"x":1,"y":1}}"#),
            Reason::WrongUnit,
        ),
        (
            format!(r#"{{"do":"gather","unit":{footman},"target":{MINE}}}"#),
            Reason::WrongUnit,
        ),
        (
            format!(r#"{{"do":"build","unit":{},"code":"hfoo","x":5,"y":5}}"#, q[0]),
            Reason::CannotMake,
        ),
        (format!(r#"{{"do":"move","unit":{builder},"x":1,"y":1}}"#), Reason::Busy),
        (
            format!(r#"{{"do":"move","unit":{},"x":20,"y":0}}"#, q[1]),
            Reason::OutOfMap,
        ),
        (
            format!(r#"{{"do":"attack","unit":{},"target":{ENEMY_HALL}}}"#, q[2]),
            Reason::OutOfVision,
        ),
        (
            format!(r#"{{"do":"gather","unit":{},"target":{ENEMY_MINE}}}"#, q[3]),
            Reason::OutOfVision,
        ),
        (
            format!(r#"{{"do":"attack","unit":{},"target":{HALL}}}"#, q[4]),
            Reason::BadTarget,
        ),
        (
            format!(r#"{{"do":"gather","unit":{},"target":{{"x":5,"y":5}}}}"#, q[5]),
            Reason::NotATree,
        ),
        (
            format!(r#"{{"do":"build","unit":{},"code":"hhou","x":7,"y":1}}"#, q[6]),
            Reason::Blocked,
        ),
        (
            format!(r#"{{"do":"train","unit":{site},"code":"hfoo"}}"#),
            Reason::NotReady,
        ),
        (format!(r#"{{"do":"stop","unit":{p}}}"#), Reason::NotOwner),
    ];
    // The last one names a valid unit: it is accepted, the earlier ones
    // naming it are superseded.
    let last = cases.len() - 1;
    let actions: Vec<&str> = cases.iter().map(|(a, _)| a.as_str()).collect();
    let t = act(&mut g, Side::First, &actions.join(","));
    let expected: Vec<(u32, Reason)> = cases[..last]
        .iter()
        .enumerate()
        .map(|(i, (_, r))| (i as u32, *r))
        .collect();
    assert_eq!(reasons(&t), expected);
    assert_eq!(
        t.accepted.iter().map(|a| a.index).collect::<Vec<_>>(),
        vec![last as u32]
    );
    assert_eq!(g.observation(Side::First, 20).rejected.len(), last);
    // The rest, one per reply.
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"train","unit":{HALL},"code":"hfoo"}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::CannotMake)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"train","unit":{p},"code":"hpea"}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::WrongUnit)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"build","unit":{p},"code":"hbar","x":18,"y":5}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::OutOfMap)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"build","unit":{p},"code":"hhou","x":15,"y":15}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::OutOfVision)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"attack","unit":{p},"target":{MINE}}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::BadTarget)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"gather","unit":{p},"target":{footman}}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::BadTarget)]);
    let t = act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"build","unit":{p},"code":"hhou","x":1,"y":7}}"#),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::Blocked)]);
    g.bank[0].gold = 70;
    let t = act(
        &mut g,
        Side::First,
        &format!(
            r#"{{"do":"train","unit":{HALL},"code":"hpea"}},{{"do":"build","unit":{p},"code":"hhou","x":5,"y":5}}"#
        ),
    );
    assert_eq!(reasons(&t), vec![(0, Reason::NoResources), (1, Reason::NoResources)]);
    // An accepted train pays at once, so the next one in the reply cannot.
    g.bank[0].gold = 100;
    let t = act(
        &mut g,
        Side::First,
        &format!(
            r#"{{"do":"train","unit":{HALL},"code":"hpea"}},{{"do":"build","unit":{p},"code":"hhou","x":5,"y":5}}"#
        ),
    );
    assert_eq!(reasons(&t), vec![(1, Reason::NoResources)]);
}

#[test]
fn orders_for_enemy_units_change_nothing() {
    let mut g = game();
    let mut alone = game();
    for _ in 0..30 {
        let actions = (10..=14)
            .map(|id| format!(r#"{{"do":"move","unit":{id},"x":0,"y":0}}"#))
            .chain([format!(r#"{{"do":"train","unit":{ENEMY_HALL},"code":"hpea"}}"#)])
            .collect::<Vec<_>>()
            .join(",");
        let t = act(&mut g, Side::First, &actions);
        assert!(t.rejected.iter().all(|r| r.reason == Reason::NotOwner) && t.accepted.is_empty());
        idle(&mut alone, 1);
    }
    assert_eq!(g.spectate().units, alone.spectate().units);
    assert_eq!(g.bank, alone.bank);
}

#[test]
fn skipped_and_stale_replies_keep_orders() {
    let mut g = game();
    act(
        &mut g,
        Side::First,
        &format!(r#"{{"do":"move","unit":{PEASANT},"x":5,"y":9}}"#),
    );
    // A reply for another tick is ignored: the side is skipped.
    let stale = parse_reply(&format!(r#"{{"tick":0,"actions":[{{"do":"stop","unit":{PEASANT}}}]}}"#)).expect("valid");
    let record = g.step([Some(stale), None]).expect("goes on").clone();
    assert!(record.sides[0].skipped);
    assert_eq!(g.entity(PEASANT).map(|e| e.job), Some(Job::Move((5, 9))));
    idle(&mut g, 60);
    assert_eq!(g.entity(PEASANT).map(|e| (e.at, e.job)), Some(((5, 9), Job::Idle)));
    // Rejections are shown once, in the next observation only.
    act(&mut g, Side::First, r#"{"do":"stop","unit":999}"#);
    assert_eq!(g.observation(Side::First, 20).rejected.len(), 1);
    idle(&mut g, 1);
    assert!(g.observation(Side::First, 20).rejected.is_empty());
}

#[test]
fn elimination_and_draw() {
    let mut g = empty();
    let farm2 = g
        .entities
        .iter()
        .find(|e| e.side == Side::Second)
        .map(|e| e.id)
        .expect("farm");
    let f = spawn(&mut g, Side::First, Kind::Footman, (17, 2));
    if let Some(i) = g.find(farm2) {
        g.entities[i].hp = 5;
    }
    idle(&mut g, 1);
    let _ = f;
    assert_eq!(
        g.outcome(),
        Some(crate::Outcome {
            scores: [2, 0],
            reason: FinishReason::Elimination,
            faulted: None
        })
    );
    assert!(g.step([None, None]).is_none(), "no tick after the end");
    let mut g = empty();
    spawn(&mut g, Side::First, Kind::Footman, (17, 2));
    spawn(&mut g, Side::Second, Kind::Footman, (2, 17));
    g.entities
        .iter_mut()
        .filter(|e| e.kind == Kind::Farm)
        .for_each(|e| e.hp = 5);
    idle(&mut g, 1);
    assert_eq!(
        g.outcome().map(|o| (o.scores, o.reason)),
        Some(([1, 1], FinishReason::Elimination))
    );
}

#[test]
fn score_at_the_tick_limit() {
    let mut g = game();
    g.tick = TICK_LIMIT - 1;
    let mut tied = g.clone();
    idle(&mut tied, 1);
    assert_eq!(
        tied.outcome().map(|o| (o.scores, o.reason)),
        Some(([1, 1], FinishReason::Score))
    );
    // 500 + 150 + hall 590 + 5 peasants × 75.
    assert_eq!(tied.scores(), [1615, 1615]);
    // A wounded peasant counts cost × hp / max hp, rounded down.
    if let Some(i) = g.find(PEASANT) {
        g.entities[i].hp = 219;
    }
    idle(&mut g, 1);
    assert_eq!(g.scores(), [1615 - 1, 1615]);
    assert_eq!(g.outcome().map(|o| o.scores), Some([0, 2]));
}

#[test]
fn forfeit_ends_the_game() {
    let mut g = game();
    let outcome = g.forfeit(Side::Second, FinishReason::BadReply);
    assert_eq!((outcome.scores, outcome.faulted), ([2, 0], Some(Side::Second)));
    assert!(g.is_over());
    assert_eq!(g.forfeit(Side::First, FinishReason::Crash), outcome);
}

#[test]
fn records_replay_and_catch_a_changed_digest() {
    let mut g = game();
    for tick in 0..120u32 {
        g.observe(Side::First, deadline_ms(tick));
        g.observe(Side::Second, deadline_ms(tick));
        let actions = match tick {
            0 => format!(
                r#"{{"do":"gather","unit":{PEASANT},"target":{MINE}}},{{"do":"train","unit":{HALL},"code":"hpea"}},{{"do":"stop","unit":99}}"#
            ),
            5 => format!(r#"{{"do":"build","unit":{},"code":"hhou","x":5,"y":4}}"#, PEASANT + 1),
            _ => String::new(),
        };
        let r = reply(&g, &actions);
        g.step([Some(r), None]);
    }
    let record = g.record();
    let json = serde_json::to_string(&record).expect("serializable");
    let back: GameRecord = serde_json::from_str(&json).expect("deserializable");
    assert_eq!(back, record);
    let replayed = back.replay().expect("replays");
    assert_eq!(replayed.spectate(), g.spectate());
    let mut broken = record.clone();
    if let Some(d) = broken.ticks[60].sides[1].digest.as_mut() {
        *d ^= 1;
    }
    assert_eq!(broken.replay().err(), Some(ReplayError::Digest { tick: 60, side: 2 }));
    let mut broken = record;
    broken.ticks[0].sides[0].accepted[0].unit = 10;
    assert!(matches!(
        broken.replay(),
        Err(ReplayError::Diverged { tick: 0, side: 1, .. })
    ));
}
