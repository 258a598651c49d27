//! The game state and the queries the rules share: lookups, vision, food,
//! free tiles, and the side-relative tie order.

use super::map::{Map, Terrain};
use super::path::{Goal, Scratch, Tile, distance};
use super::record::TickRecord;
use super::units::{FOOD_LIMIT, Kind, MINE_SIZE, START_GOLD, START_LUMBER, START_PEASANTS, TREE_LUMBER};
use super::{Rejection, units::MINE_GOLD};
use crate::{Outcome, Side};

/// What a peasant carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Resource {
    Gold,
    Lumber,
}

/// Where a gatherer takes its loads from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// A gold mine, by id.
    Mine(u32),
    /// A tree tile.
    Tree(Tile),
    /// None left: deposit what is carried, then go idle.
    Done,
}

/// Where a gatherer is in its trip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    ToSource,
    /// Mining or chopping, `ticks` done.
    Working(u32),
    /// Carrying to a town hall (`Some` once one is chosen).
    ToHall(Option<u32>),
}

/// A unit's current order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Job {
    Idle,
    Move(Tile),
    Attack {
        target: u32,
        /// Where the target was last seen and its size.
        seen: Tile,
        size: i32,
    },
    Gather {
        source: Source,
        phase: Phase,
    },
    Build {
        kind: Kind,
        at: Tile,
        /// The site once construction has started (the builder is busy).
        site: Option<u32>,
    },
}

/// A unit or a building of one side.
#[derive(Clone, Debug)]
pub(super) struct Entity {
    pub id: u32,
    pub side: Side,
    pub kind: Kind,
    pub at: Tile,
    pub hp: u32,
    pub job: Job,
    /// Ticks before it may hit again.
    pub cooldown: u32,
    /// Ticks spent on the current step.
    pub walk: u32,
    /// Cached path (reversed) and the goal it leads to.
    pub path: Vec<Tile>,
    pub path_goal: Option<Goal>,
    pub carry: Option<(Resource, u32)>,
    /// Buildings: finished (not a construction site).
    pub built: bool,
    /// Buildings: ticks of construction, or of the queue head's training.
    pub progress: u32,
    /// Buildings: the training queue, head first.
    pub queue: Vec<Kind>,
    /// Buildings: the head has started (its food is taken).
    pub training: bool,
}

impl Entity {
    pub fn size(&self) -> i32 {
        self.kind.stats().size as i32
    }

    /// A peasant that is constructing a building: it takes no orders.
    pub fn busy(&self) -> bool {
        matches!(self.job, Job::Build { site: Some(_), .. })
    }
}

/// A gold mine still holding gold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) struct Mine {
    pub id: u32,
    pub at: Tile,
    pub gold: u32,
}

/// Banked resources of one side.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct Bank {
    pub gold: u32,
    pub lumber: u32,
}

/// One game of skirmish: the whole state, advanced one tick at a time by
/// [`Skirmish::step`]. Cloning copies the game, its log included.
#[derive(Clone, Debug)]
pub struct Skirmish {
    pub(super) map: Map,
    pub(super) seed: u64,
    pub(super) tick: u32,
    pub(super) terrain: Vec<Terrain>,
    pub(super) lumber: Vec<u32>,
    /// Tiles covered by a structure (building, site or mine).
    pub(super) blocked: Vec<bool>,
    /// Trees felled so far, in the order they fell.
    pub(super) felled: Vec<Tile>,
    /// Units and buildings, ascending id.
    pub(super) entities: Vec<Entity>,
    /// Mines with gold left, ascending id.
    pub(super) mines: Vec<Mine>,
    /// Every mine of the map, depleted or not: id and top-left tile.
    pub(super) all_mines: Vec<(u32, Tile)>,
    pub(super) bank: [Bank; 2],
    /// Tiles each side sees, one bit per tile.
    pub(super) vision: [Vec<u64>; 2],
    /// Rejections of each side's last applied reply, for its next observation.
    pub(super) rejected: [Vec<Rejection>; 2],
    pub(super) next_id: u32,
    pub(super) outcome: Option<Outcome>,
    pub(super) log: Vec<TickRecord>,
    /// Observation digests of the tick in progress.
    pub(super) digests: [Option<u64>; 2],
    pub(super) scratch: Scratch,
}

impl Skirmish {
    /// A new game on `map`: each side's town hall and five peasants, 500 gold
    /// and 150 lumber. The seed is recorded; at this version of the rules
    /// nothing is random, so it does not change the game.
    pub fn new(map: Map, seed: u64) -> Skirmish {
        let (w, h) = (map.width(), map.height());
        let cells = (w * h) as usize;
        let terrain: Vec<Terrain> = (0..h)
            .flat_map(|y| (0..w).map(move |x| (x, y)))
            .map(|(x, y)| map.terrain(x, y))
            .collect();
        let lumber = terrain
            .iter()
            .map(|t| if *t == Terrain::Tree { TREE_LUMBER } else { 0 })
            .collect();
        let mut game = Skirmish {
            seed,
            tick: 0,
            terrain,
            lumber,
            blocked: vec![false; cells],
            felled: Vec::new(),
            entities: Vec::new(),
            mines: Vec::new(),
            all_mines: Vec::new(),
            bank: [Bank {
                gold: START_GOLD,
                lumber: START_LUMBER,
            }; 2],
            vision: [vec![0; cells.div_ceil(64)], vec![0; cells.div_ceil(64)]],
            rejected: [Vec::new(), Vec::new()],
            next_id: 1,
            outcome: None,
            log: Vec::new(),
            digests: [None, None],
            scratch: Scratch::default(),
            map,
        };
        for &at in game.map.mines().to_vec().iter() {
            let id = game.take_id();
            game.mines.push(Mine {
                id,
                at,
                gold: MINE_GOLD,
            });
            game.all_mines.push((id, at));
            game.set_blocked(at, MINE_SIZE as i32, true);
        }
        for side in Side::BOTH {
            let hall = game.map.start(side);
            let size = Kind::TownHall.stats().size as i32;
            game.add(side, Kind::TownHall, hall, true);
            let mut ring = game.ring(side, hall, size, 1);
            ring.truncate(START_PEASANTS);
            for at in ring {
                game.add(side, Kind::Peasant, at, true);
            }
        }
        game.update_vision();
        game
    }

    pub(super) fn take_id(&mut self) -> u32 {
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    /// Adds a unit, a finished building (`built`) or a construction site.
    pub(super) fn add(&mut self, side: Side, kind: Kind, at: Tile, built: bool) -> u32 {
        let id = self.take_id();
        let max = kind.stats().hp;
        let size = kind.stats().size as i32;
        if kind.is_building() {
            self.set_blocked(at, size, true);
        }
        self.entities.push(Entity {
            id,
            side,
            kind,
            at,
            hp: if built {
                max
            } else {
                (max / super::units::SITE_HP_DIVISOR).max(1)
            },
            job: Job::Idle,
            cooldown: 0,
            walk: 0,
            path: Vec::new(),
            path_goal: None,
            carry: None,
            built,
            progress: 0,
            queue: Vec::new(),
            training: false,
        });
        id
    }

    pub(super) fn set_blocked(&mut self, at: Tile, size: i32, value: bool) {
        for y in at.1..at.1 + size {
            for x in at.0..at.0 + size {
                if let Some(i) = self.index(x, y) {
                    self.blocked[i] = value;
                }
            }
        }
    }

    /// `y * w + x` if on the map.
    pub(super) fn index(&self, x: i32, y: i32) -> Option<usize> {
        self.map
            .contains(x.into(), y.into())
            .then(|| (y * self.map.width() + x) as usize)
    }

    /// Position in `entities` of the entity with this id.
    pub(super) fn find(&self, id: u32) -> Option<usize> {
        self.entities.binary_search_by_key(&id, |e| e.id).ok()
    }

    pub(super) fn entity(&self, id: u32) -> Option<&Entity> {
        self.find(id).map(|i| &self.entities[i])
    }

    pub(super) fn mine(&self, id: u32) -> Option<&Mine> {
        self.mines.iter().find(|m| m.id == id)
    }

    /// Whether ground at `(x, y)` is free of terrain and structures.
    pub(super) fn walkable(&self, x: i32, y: i32) -> bool {
        self.index(x, y)
            .is_some_and(|i| self.terrain[i] == Terrain::Ground && !self.blocked[i])
    }

    /// Whether `side` sees the tile `(x, y)` now.
    pub(super) fn sees_tile(&self, side: Side, x: i32, y: i32) -> bool {
        self.index(x, y)
            .is_some_and(|i| self.vision[side.index()][i / 64] >> (i % 64) & 1 == 1)
    }

    /// Whether `side` sees any tile of the square at `at`.
    pub(super) fn sees(&self, side: Side, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).any(|y| (at.0..at.0 + size).any(|x| self.sees_tile(side, x, y)))
    }

    /// Whether `side` sees every tile of the square at `at`.
    pub(super) fn sees_all(&self, side: Side, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).all(|y| (at.0..at.0 + size).all(|x| self.sees_tile(side, x, y)))
    }

    /// Recomputes both sides' vision from their units and buildings
    /// (construction sites included).
    pub(super) fn update_vision(&mut self) {
        let (w, h) = (self.map.width(), self.map.height());
        for bits in &mut self.vision {
            bits.iter_mut().for_each(|word| *word = 0);
        }
        for e in &self.entities {
            let stats = e.kind.stats();
            let (v, size) = (stats.vision as i32, stats.size as i32);
            let (x0, x1) = ((e.at.0 - v).max(0), (e.at.0 + size - 1 + v).min(w - 1));
            let (y0, y1) = ((e.at.1 - v).max(0), (e.at.1 + size - 1 + v).min(h - 1));
            if x0 > x1 {
                continue;
            }
            let bits = &mut self.vision[e.side.index()];
            for y in y0..=y1 {
                set_bits(bits, (y * w + x0) as usize, (y * w + x1) as usize);
            }
        }
    }

    /// Food used by `side`: its units plus the units in training.
    pub(super) fn food_used(&self, side: Side) -> u32 {
        self.entities
            .iter()
            .filter(|e| e.side == side)
            .map(|e| {
                if e.kind.is_building() {
                    match (e.training, e.queue.first()) {
                        (true, Some(head)) => head.stats().food,
                        _ => 0,
                    }
                } else {
                    e.kind.stats().food
                }
            })
            .sum()
    }

    /// Food cap of `side`: finished town halls and farms, at most 60.
    pub(super) fn food_cap(&self, side: Side) -> u32 {
        self.entities
            .iter()
            .filter(|e| e.side == side && e.built && matches!(e.kind, Kind::TownHall | Kind::Farm))
            .map(|e| e.kind.stats().food)
            .sum::<u32>()
            .min(FOOD_LIMIT)
    }

    /// The ground tiles free of structures at distance `r` from the square at
    /// `at`, in `side`'s frame order.
    pub(super) fn ring(&self, side: Side, at: Tile, size: i32, r: i32) -> Vec<Tile> {
        let (x0, y0, x1, y1) = (at.0 - r, at.1 - r, at.0 + size - 1 + r, at.1 + size - 1 + r);
        let mut tiles: Vec<Tile> = (y0..=y1)
            .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
            .filter(|&(x, y)| (x == x0 || x == x1 || y == y0 || y == y1) && self.walkable(x, y))
            .collect();
        tiles.sort_by_key(|&(x, y)| self.map.frame_key(side, x, y, 1));
        tiles
    }

    /// The ground tile free of structures nearest (Chebyshev) to the square
    /// at `at`, at distance `min_distance` or more, ties broken by `side`'s
    /// frame order. `None` if there is none on the map.
    pub(super) fn free_tile_near(&self, side: Side, at: Tile, size: i32, min_distance: i32) -> Option<Tile> {
        let limit = self.map.width().max(self.map.height());
        (min_distance..=limit).find_map(|r| {
            let (x0, y0, x1, y1) = (at.0 - r, at.1 - r, at.0 + size - 1 + r, at.1 + size - 1 + r);
            (y0..=y1)
                .flat_map(|y| (x0..=x1).map(move |x| (x, y)))
                .filter(|&(x, y)| (x == x0 || x == x1 || y == y0 || y == y1 || r == 0) && self.walkable(x, y))
                .min_by_key(|&(x, y)| self.map.frame_key(side, x, y, 1))
        })
    }

    /// Of `candidates`, the nearest to the square `(from, from_size)`: by
    /// Chebyshev distance, then `side`'s frame order of the candidate's
    /// top-left tile, then id (ids of one side keep their order in a mirrored
    /// game).
    pub(super) fn nearest<'a>(
        &self,
        side: Side,
        from: Tile,
        from_size: i32,
        candidates: impl Iterator<Item = &'a Entity>,
    ) -> Option<u32> {
        candidates
            .min_by_key(|e| {
                (
                    distance(from, from_size, e.at, e.size()),
                    self.map.frame_key(side, e.at.0, e.at.1, e.size()),
                    e.id,
                )
            })
            .map(|e| e.id)
    }

    /// The nearest finished town hall of `side` to the unit at `from`.
    pub(super) fn nearest_hall(&self, side: Side, from: Tile) -> Option<u32> {
        self.nearest(
            side,
            from,
            1,
            self.entities
                .iter()
                .filter(|e| e.side == side && e.kind == Kind::TownHall && e.built),
        )
    }

    /// The tree nearest to `around` within `radius`, ties by `side`'s frame.
    pub(super) fn nearest_tree(&self, side: Side, around: Tile, radius: i32) -> Option<Tile> {
        (0..=radius).find_map(|r| {
            (around.1 - r..=around.1 + r)
                .flat_map(|y| (around.0 - r..=around.0 + r).map(move |x| (x, y)))
                .filter(|&(x, y)| distance((x, y), 1, around, 1) == r)
                .filter(|&(x, y)| self.index(x, y).is_some_and(|i| self.terrain[i] == Terrain::Tree))
                .min_by_key(|&(x, y)| self.map.frame_key(side, x, y, 1))
        })
    }
}

/// Sets bits `from..=to` of a bitset.
fn set_bits(bits: &mut [u64], from: usize, to: usize) {
    let (first, last) = (from / 64, to / 64);
    for word in first..=last {
        let lo = if word == first { from % 64 } else { 0 };
        let hi = if word == last { to % 64 } else { 63 };
        let mask = (u64::MAX >> (63 - hi)) & (u64::MAX << lo);
        if let Some(w) = bits.get_mut(word) {
            *w |= mask;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_bits_sets_exactly_the_range() {
        for (from, to) in [(0, 0), (3, 70), (63, 64), (64, 127), (10, 200)] {
            let mut bits = vec![0u64; 4];
            set_bits(&mut bits, from, to);
            for i in 0..256 {
                assert_eq!(
                    bits[i / 64] >> (i % 64) & 1 == 1,
                    (from..=to).contains(&i),
                    "{from}..={to} bit {i}"
                );
            }
        }
    }
}
