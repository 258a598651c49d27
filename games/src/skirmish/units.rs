//! The units and buildings table of the spec, as data.

use serde::{Deserialize, Serialize};

/// A unit or building type, named by its four-letter code (`hpea`, `htow`…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Kind {
    /// `hpea`: gathers, builds, fights weakly.
    #[serde(rename = "hpea")]
    Peasant,
    /// `hfoo`: melee soldier.
    #[serde(rename = "hfoo")]
    Footman,
    /// `hrif`: ranged soldier.
    #[serde(rename = "hrif")]
    Rifleman,
    /// `htow`: trains peasants, takes deposits, +12 food.
    #[serde(rename = "htow")]
    TownHall,
    /// `hhou`: +6 food.
    #[serde(rename = "hhou")]
    Farm,
    /// `hbar`: trains footmen and riflemen.
    #[serde(rename = "hbar")]
    Barracks,
}

/// One row of the table. Every number is an integer; `0` where the table
/// has `–`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Gold cost.
    pub gold: u32,
    /// Lumber cost.
    pub lumber: u32,
    /// Food used (units) or added to the cap (buildings).
    pub food: u32,
    /// Ticks to train or to build.
    pub time: u32,
    /// Maximum hit points.
    pub hp: u32,
    /// Armor, subtracted from each hit.
    pub armor: u32,
    /// Damage per hit (0 for buildings).
    pub damage: u32,
    /// Attack range in tiles (Chebyshev, closest tiles).
    pub range: u32,
    /// Ticks between two hits.
    pub cooldown: u32,
    /// Ticks to walk one tile (0 for buildings).
    pub ticks_per_tile: u32,
    /// Vision radius in tiles (Chebyshev, closest tiles).
    pub vision: u32,
    /// Side of the square footprint in tiles.
    pub size: u32,
}

impl Kind {
    /// Every kind, in table order.
    pub const ALL: [Kind; 6] = [
        Kind::Peasant,
        Kind::Footman,
        Kind::Rifleman,
        Kind::TownHall,
        Kind::Farm,
        Kind::Barracks,
    ];

    /// The four-letter code.
    pub fn code(self) -> &'static str {
        match self {
            Kind::Peasant => "hpea",
            Kind::Footman => "hfoo",
            Kind::Rifleman => "hrif",
            Kind::TownHall => "htow",
            Kind::Farm => "hhou",
            Kind::Barracks => "hbar",
        }
    }

    /// The kind named by `code`, if any (exact, lowercase).
    pub fn from_code(code: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|kind| kind.code() == code)
    }

    /// Whether this is a building (does not move, may train).
    pub fn is_building(self) -> bool {
        matches!(self, Kind::TownHall | Kind::Farm | Kind::Barracks)
    }

    /// Whether an idle unit of this kind attacks enemies in range by itself.
    pub fn auto_attacks(self) -> bool {
        matches!(self, Kind::Footman | Kind::Rifleman)
    }

    /// Which kinds this building trains (none for units and farms).
    pub fn trains(self) -> &'static [Kind] {
        match self {
            Kind::TownHall => &[Kind::Peasant],
            Kind::Barracks => &[Kind::Footman, Kind::Rifleman],
            _ => &[],
        }
    }

    /// The table row of this kind.
    pub fn stats(self) -> Stats {
        let row = |gold, lumber, food, time, hp, armor, damage, range, cooldown, ticks_per_tile, vision, size| Stats {
            gold,
            lumber,
            food,
            time,
            hp,
            armor,
            damage,
            range,
            cooldown,
            ticks_per_tile,
            vision,
            size,
        };
        match self {
            Kind::Peasant => row(75, 0, 1, 75, 220, 0, 5, 1, 5, 3, 6, 1),
            Kind::Footman => row(135, 0, 2, 100, 420, 2, 12, 1, 6, 3, 7, 1),
            Kind::Rifleman => row(205, 30, 3, 130, 505, 0, 19, 5, 7, 3, 8, 1),
            Kind::TownHall => row(385, 205, 12, 300, 1500, 5, 0, 0, 0, 0, 9, 3),
            Kind::Farm => row(80, 20, 6, 175, 500, 0, 0, 0, 0, 0, 4, 2),
            Kind::Barracks => row(160, 60, 0, 300, 1500, 5, 0, 0, 0, 0, 6, 3),
        }
    }
}

/// Damage one hit of `attacker` deals to `target`: damage − armor, at least 1.
pub fn hit_damage(attacker: Kind, target: Kind) -> u32 {
    attacker.stats().damage.saturating_sub(target.stats().armor).max(1)
}

/// Gold (or lumber) carried per trip.
pub const LOAD: u32 = 10;
/// Ticks of mining for one load of gold.
pub const MINE_TICKS: u32 = 10;
/// Ticks of chopping for one load of lumber.
pub const CHOP_TICKS: u32 = 15;
/// Lumber in a tree.
pub const TREE_LUMBER: u32 = 50;
/// Gold in a mine.
pub const MINE_GOLD: u32 = 5_000;
/// Side of a mine's square footprint.
pub const MINE_SIZE: u32 = 2;
/// The food cap never exceeds this.
pub const FOOD_LIMIT: u32 = 60;
/// Most units in one building's queue, the one in training included.
pub const QUEUE_LIMIT: usize = 5;
/// Peasants each side starts with.
pub const START_PEASANTS: usize = 5;
/// Gold each side starts with.
pub const START_GOLD: u32 = 500;
/// Lumber each side starts with.
pub const START_LUMBER: u32 = 150;
/// The game ends by score when the tick counter reaches this (ticks
/// 0..=2999 are played).
pub const TICK_LIMIT: u32 = 3_000;
/// Game time of one tick.
pub const TICK_MS: u64 = 200;
/// At most this many actions of a reply are read; the rest are dropped.
pub const ACTION_LIMIT: usize = 32;
/// A woodcutter whose tree is felled moves on to the nearest tree at most
/// this far (Chebyshev) from it.
pub const RETARGET_RADIUS: u32 = 5;
/// A construction site starts with `hp / SITE_HP_DIVISOR` hit points.
pub const SITE_HP_DIVISOR: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_and_serde_uses_codes() {
        for kind in Kind::ALL {
            assert_eq!(Kind::from_code(kind.code()), Some(kind));
            assert_eq!(serde_json::to_string(&kind).ok(), Some(format!("\"{}\"", kind.code())));
        }
        assert_eq!(Kind::from_code("HPEA"), None);
    }

    #[test]
    fn damage_is_damage_minus_armor_at_least_one() {
        assert_eq!(hit_damage(Kind::Footman, Kind::Footman), 10);
        assert_eq!(hit_damage(Kind::Rifleman, Kind::Footman), 17);
        assert_eq!(hit_damage(Kind::Peasant, Kind::TownHall), 1);
        assert_eq!(hit_damage(Kind::Peasant, Kind::Farm), 5);
        assert_eq!(hit_damage(Kind::Footman, Kind::Barracks), 7);
    }
}
