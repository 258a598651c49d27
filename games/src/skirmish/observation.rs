//! The `obs` line: what one side may know, and nothing more.

use super::orders::Rejection;
use super::state::{Entity, Job, Phase, Resource, Skirmish, Source};
use super::units::{Kind, MINE_SIZE, TICK_MS};
use crate::Side;
use serde::{Deserialize, Serialize};

/// Budget of tick 0 (set-up), in virtual milliseconds.
pub const FIRST_DEADLINE_MS: u64 = 1_000;
/// Budget of every other tick, in virtual milliseconds.
pub const DEADLINE_MS: u64 = 20;

/// The default budget of `tick`: 1 000 ms at tick 0, then 20 ms.
pub fn deadline_ms(tick: u32) -> u64 {
    if tick == 0 { FIRST_DEADLINE_MS } else { DEADLINE_MS }
}

/// A tile, `{"x":..,"y":..}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TileRef {
    /// Column.
    pub x: i32,
    /// Row.
    pub y: i32,
}

/// What an order names: an id (unit, building, mine) or a tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Target {
    /// A unit, building or mine id.
    Id(u32),
    /// A tile (move, tree, build site).
    Tile(TileRef),
}

/// A unit's current order as shown in `order`; `null` when idle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OrderName {
    /// Walking to `target` (a tile).
    Move,
    /// Chasing or hitting `target` (an id).
    Attack,
    /// Gathering from `target` (a mine id or a tree tile), any part of the
    /// trip.
    Gather,
    /// Carrying a last load to town hall `target`, then idle (the source is
    /// gone).
    Return,
    /// Walking to, or constructing, the building `code` at `target` (tile).
    Build,
    /// A building training its queue.
    Train,
}

/// What a peasant carries: at most one of the two is not zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Carry {
    /// Gold carried.
    pub gold: u32,
    /// Lumber carried.
    pub lumber: u32,
}

/// One of the side's own units or buildings.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UnitView {
    /// Stable id.
    pub id: u32,
    /// Its code.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// 1 or 2.
    pub owner: u8,
    /// Column (a building's top-left tile).
    pub x: i32,
    /// Row.
    pub y: i32,
    /// Hit points now.
    pub hp: u32,
    /// Hit points when whole.
    pub hp_max: u32,
    /// The current order, `null` when idle.
    pub order: Option<OrderName>,
    /// What the order names, absent when nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<Target>,
    /// `build`: the code being built.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Kind>,
    /// Peasants: the load carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carry: Option<Carry>,
    /// Buildings: `false` while under construction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built: Option<bool>,
    /// Buildings: codes queued, the one in training first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Vec<Kind>>,
    /// Buildings: ticks done of the construction (while not built) or of
    /// the queue head's training (0 while it waits for food).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<u32>,
}

/// An enemy unit or building in vision.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EnemyView {
    /// Stable id.
    pub id: u32,
    /// Its code.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// 1 or 2.
    pub owner: u8,
    /// Column (a building's top-left tile).
    pub x: i32,
    /// Row.
    pub y: i32,
    /// Hit points now.
    pub hp: u32,
    /// Hit points when whole.
    pub hp_max: u32,
    /// Buildings: `false` while under construction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub built: Option<bool>,
}

/// A gold mine in vision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MineView {
    /// Stable id.
    pub id: u32,
    /// Column of its top-left tile.
    pub x: i32,
    /// Row of its top-left tile.
    pub y: i32,
    /// Gold left.
    pub gold: u32,
}

/// Banked resources and food.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Res {
    /// Banked gold.
    pub gold: u32,
    /// Banked lumber.
    pub lumber: u32,
    /// `[used, cap]`.
    pub food: [u32; 2],
}

/// The terrain at the start of the game (tick 0 only).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct MapView {
    /// Width.
    pub w: i32,
    /// Height.
    pub h: i32,
    /// `rows[y]`, one of `.`, `T`, `#` per `x`.
    pub rows: Vec<String>,
}

/// The `obs` line of one side for one tick. Its JSON (field order as
/// declared) is exactly the line the bot receives.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Observation {
    /// Always `"obs"`.
    pub t: String,
    /// The tick, from 0.
    pub tick: u32,
    /// `tick × 200`.
    pub game_ms: u64,
    /// 1 or 2.
    pub me: u8,
    /// Banked resources and food.
    pub res: Res,
    /// Own units and buildings, ascending id.
    pub units: Vec<UnitView>,
    /// Enemy units and buildings with a tile in vision, ascending id.
    pub visible_enemies: Vec<EnemyView>,
    /// Mines with a tile in vision (all of them at tick 0), ascending id.
    pub mines: Vec<MineView>,
    /// Tiles in vision that were trees at tick 0 and are ground now, by
    /// row then column.
    pub cleared: Vec<TileRef>,
    /// Rejections of the side's reply to the previous tick.
    pub rejected: Vec<Rejection>,
    /// The terrain, at tick 0 only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapView>,
    /// This tick's budget in virtual milliseconds.
    pub deadline_ms: u64,
}

impl Observation {
    /// The line as sent (no newline).
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A stable 64-bit digest of an observation: FNV-1a of its JSON line.
pub fn observation_digest(observation: &Observation) -> u64 {
    fnv1a(observation.to_line().as_bytes())
}

/// 64-bit FNV-1a.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// `1` for the first side, `2` for the second.
pub(super) fn owner(side: Side) -> u8 {
    side.index() as u8 + 1
}

impl Skirmish {
    /// The full view of one unit or building, as its owner sees it.
    pub(super) fn unit_view(&self, e: &Entity) -> UnitView {
        let stats = e.kind.stats();
        let tile = |(x, y): (i32, i32)| Target::Tile(TileRef { x, y });
        let (order, target, code) = match e.job {
            _ if e.kind.is_building() => ((!e.queue.is_empty() && e.built).then_some(OrderName::Train), None, None),
            Job::Idle => (None, None, None),
            Job::Move(to) => (Some(OrderName::Move), Some(tile(to)), None),
            Job::Attack { target, .. } => (Some(OrderName::Attack), Some(Target::Id(target)), None),
            Job::Gather { source, phase } => match source {
                Source::Mine(id) => (Some(OrderName::Gather), Some(Target::Id(id)), None),
                Source::Tree(at) => (Some(OrderName::Gather), Some(tile(at)), None),
                Source::Done => {
                    let hall = match phase {
                        Phase::ToHall(Some(hall)) => Some(Target::Id(hall)),
                        _ => None,
                    };
                    (Some(OrderName::Return), hall, None)
                }
            },
            Job::Build { kind, at, .. } => (Some(OrderName::Build), Some(tile(at)), Some(kind)),
        };
        let building = e.kind.is_building();
        UnitView {
            id: e.id,
            kind: e.kind,
            owner: owner(e.side),
            x: e.at.0,
            y: e.at.1,
            hp: e.hp,
            hp_max: stats.hp,
            order,
            target,
            code,
            carry: (e.kind == Kind::Peasant).then(|| match e.carry {
                Some((Resource::Gold, gold)) => Carry { gold, lumber: 0 },
                Some((Resource::Lumber, lumber)) => Carry { gold: 0, lumber },
                None => Carry::default(),
            }),
            built: building.then_some(e.built),
            queue: building.then(|| e.queue.clone()),
            progress: building.then_some(if e.built && !e.training { 0 } else { e.progress }),
        }
    }

    /// The observation `side` receives now, with `deadline_ms` as its budget.
    /// It shows only the side's own units, the enemies and mines with a tile
    /// in its vision, and the felled trees in its vision.
    pub fn observation(&self, side: Side, deadline_ms: u64) -> Observation {
        let bank = self.bank[side.index()];
        let first = self.tick == 0;
        let units = self
            .entities
            .iter()
            .filter(|e| e.side == side)
            .map(|e| self.unit_view(e))
            .collect();
        let visible_enemies = self
            .entities
            .iter()
            .filter(|e| e.side != side && self.sees(side, e.at, e.size()))
            .map(|e| EnemyView {
                id: e.id,
                kind: e.kind,
                owner: owner(e.side),
                x: e.at.0,
                y: e.at.1,
                hp: e.hp,
                hp_max: e.kind.stats().hp,
                built: e.kind.is_building().then_some(e.built),
            })
            .collect();
        let mines = self
            .mines
            .iter()
            .filter(|m| first || self.sees(side, m.at, MINE_SIZE as i32))
            .map(|m| MineView {
                id: m.id,
                x: m.at.0,
                y: m.at.1,
                gold: m.gold,
            })
            .collect();
        let mut cleared: Vec<TileRef> = self
            .felled
            .iter()
            .filter(|&&(x, y)| self.sees_tile(side, x, y))
            .map(|&(x, y)| TileRef { x, y })
            .collect();
        cleared.sort_by_key(|t| (t.y, t.x));
        Observation {
            t: "obs".to_string(),
            tick: self.tick,
            game_ms: u64::from(self.tick) * TICK_MS,
            me: owner(side),
            res: Res {
                gold: bank.gold,
                lumber: bank.lumber,
                food: [self.food_used(side), self.food_cap(side)],
            },
            units,
            visible_enemies,
            mines,
            cleared,
            rejected: self.rejected[side.index()].clone(),
            map: first.then(|| MapView {
                w: self.map.width(),
                h: self.map.height(),
                rows: self.map.rows(),
            }),
            deadline_ms,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a_matches_known_values() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
