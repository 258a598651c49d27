//! What the bot knows: the map in its own frame, kept from tick to tick, and one tick's view of its units and the enemies in sight.

use super::{MINE_SIZE, THREAT_RADIUS, Tile, distance, is_soldier, size_of};
use arbiter_sdk::skirmish::{EnemyView, Kind, Observation, UnitView};
use std::collections::{BTreeMap, VecDeque};
/// The bot's half-turn frame: its own coordinates to the map's and back
/// (the same operation both ways).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Frame {
    pub(super) flip: bool,
    pub(super) w: i32,
    pub(super) h: i32,
}

impl Frame {
    /// The `size`×`size` square at `at` seen from the other frame.
    pub(super) fn turn(&self, at: Tile, size: i32) -> Tile {
        if self.flip {
            (self.w - at.0 - size, self.h - at.1 - size)
        } else {
            at
        }
    }
}

/// A gold mine as last seen.
#[derive(Clone, Copy, Debug)]
pub(super) struct Mine {
    pub(super) id: u32,
    pub(super) at: Tile,
    pub(super) gold: u32,
    pub(super) gone: bool,
}

/// What the bot knows of the map, in its own frame.
#[derive(Clone, Debug, Default)]
pub(super) struct World {
    pub(super) frame: Frame,
    /// `terrain[y * w + x]`: `.`, `T` or `#`.
    pub(super) terrain: Vec<u8>,
    pub(super) mines: Vec<Mine>,
    /// Its town hall's place at tick 0.
    pub(super) home: Tile,
    /// The enemy's town hall's place at tick 0 (the half-turn image).
    pub(super) enemy_home: Tile,
    /// Steps from the enemy's start, over the terrain of tick 0.
    pub(super) from_enemy: Vec<u16>,
    /// Where the army waits at home.
    pub(super) rally: Tile,
    /// Places to look for enemy buildings, in order, and whether they have
    /// been seen since the last round.
    pub(super) waypoints: Vec<(Tile, bool)>,
    /// Enemy buildings seen and not seen destroyed: kind and place.
    pub(super) enemy_buildings: BTreeMap<u32, (Kind, Tile)>,
    /// Tiles in vision this tick.
    pub(super) vision: Vec<bool>,
    /// Tiles covered by a known structure this tick.
    pub(super) blocked: Vec<bool>,
}

impl World {
    /// The world of the tick-0 observation, or `None` without a usable map.
    pub(super) fn new(obs: &Observation) -> Option<World> {
        let map = obs.map.as_ref()?;
        let (w, h) = (map.w, map.h);
        // Maps are 8 to 128 tiles a side; anything else is not a map to
        // allocate for.
        if !(1..=1_024).contains(&w) || !(1..=1_024).contains(&h) || map.rows.len() != h as usize {
            return None;
        }
        let frame = Frame {
            flip: obs.me == 2,
            w,
            h,
        };
        let mut terrain = vec![b'#'; (w * h) as usize];
        for y in 0..h {
            for x in 0..w {
                let (mx, my) = frame.turn((x, y), 1);
                let glyph = map
                    .rows
                    .get(my as usize)
                    .and_then(|row| row.as_bytes().get(mx as usize))
                    .copied()
                    .unwrap_or(b'#');
                terrain[(y * w + x) as usize] = glyph;
            }
        }
        let hall = obs.units.iter().find(|u| u.kind == Kind::TownHall)?;
        let home = frame.turn((hall.x, hall.y), 3);
        let enemy_home = (w - home.0 - 3, h - home.1 - 3);
        let mines = obs
            .mines
            .iter()
            .map(|m| Mine {
                id: m.id,
                at: frame.turn((m.x, m.y), MINE_SIZE),
                gold: m.gold,
                gone: false,
            })
            .collect();
        let mut world = World {
            frame,
            terrain,
            mines,
            home,
            enemy_home,
            vision: vec![false; (w * h) as usize],
            blocked: vec![false; (w * h) as usize],
            ..World::default()
        };
        world.mark_static_structures();
        world.from_enemy = world.steps_from(enemy_home, 3);
        let from_home = world.steps_from(home, 3);
        world.rally = world.rally_point(&from_home);
        world.waypoints = world.make_waypoints();
        Some(world)
    }

    pub(super) fn index(&self, (x, y): Tile) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.frame.w && y < self.frame.h).then(|| (y * self.frame.w + x) as usize)
    }

    pub(super) fn glyph(&self, tile: Tile) -> u8 {
        self.index(tile).map_or(b'#', |i| self.terrain[i])
    }

    /// Ground, as far as the bot knows, free of known structures.
    pub(super) fn walkable(&self, tile: Tile) -> bool {
        self.index(tile)
            .is_some_and(|i| self.terrain[i] == b'.' && !self.blocked[i])
    }

    pub(super) fn seen(&self, tile: Tile) -> bool {
        self.index(tile).is_some_and(|i| self.vision[i])
    }

    pub(super) fn seen_any(&self, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).any(|y| (at.0..at.0 + size).any(|x| self.seen((x, y))))
    }

    pub(super) fn seen_all(&self, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).all(|y| (at.0..at.0 + size).all(|x| self.seen((x, y))))
    }

    pub(super) fn steps(&self, table: &[u16], tile: Tile) -> u16 {
        self.index(tile).and_then(|i| table.get(i).copied()).unwrap_or(u16::MAX)
    }

    fn set_square(grid: &mut [bool], frame: Frame, at: Tile, size: i32, value: bool) {
        for y in at.1.max(0)..(at.1 + size).min(frame.h) {
            for x in at.0.max(0)..(at.0 + size).min(frame.w) {
                grid[(y * frame.w + x) as usize] = value;
            }
        }
    }

    /// Blocks the mines and both start halls (tick 0).
    fn mark_static_structures(&mut self) {
        self.blocked.iter_mut().for_each(|b| *b = false);
        for m in self.mines.iter().filter(|m| !m.gone) {
            World::set_square(&mut self.blocked, self.frame, m.at, MINE_SIZE, true);
        }
        World::set_square(&mut self.blocked, self.frame, self.home, 3, true);
        World::set_square(&mut self.blocked, self.frame, self.enemy_home, 3, true);
    }

    /// Breadth-first steps from the ring around the square at `at`, over
    /// the terrain and the mines of tick 0.
    fn steps_from(&self, at: Tile, size: i32) -> Vec<u16> {
        let mut table = vec![u16::MAX; self.terrain.len()];
        let mut queue = VecDeque::new();
        for y in at.1 - 1..=at.1 + size {
            for x in at.0 - 1..=at.0 + size {
                if distance((x, y), 1, at, size) == 1
                    && self.walkable((x, y))
                    && let Some(i) = self.index((x, y))
                {
                    table[i] = 0;
                    queue.push_back((x, y));
                }
            }
        }
        while let Some((x, y)) = queue.pop_front() {
            let here = self.steps(&table, (x, y));
            for next in [(x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)] {
                if self.walkable(next)
                    && let Some(i) = self.index(next)
                    && table[i] == u16::MAX
                {
                    table[i] = here.saturating_add(1);
                    queue.push_back(next);
                }
            }
        }
        table
    }

    /// A walkable tile three to five tiles from the town hall, on the way
    /// to the enemy, off the path between the hall and its mine.
    fn rally_point(&self, from_home: &[u16]) -> Tile {
        let home = self.home;
        let mut best: Option<((u16, i32, i32), Tile)> = None;
        for y in home.1 - 6..home.1 + 9 {
            for x in home.0 - 6..home.0 + 9 {
                let d = distance((x, y), 1, home, 3);
                if !(3..=5).contains(&d) || !self.walkable((x, y)) || self.steps(from_home, (x, y)) == u16::MAX {
                    continue;
                }
                if self.mines.iter().any(|m| distance((x, y), 1, m.at, MINE_SIZE) <= 2) {
                    continue;
                }
                let key = (self.steps(&self.from_enemy, (x, y)), y, x);
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, (x, y)));
                }
            }
        }
        best.map_or((home.0 + 4, home.1 + 4), |(_, tile)| tile)
    }

    /// Places to search for enemy buildings: the enemy's start, the mines
    /// nearest to it, then a coarse grid, each by its steps from the enemy's
    /// start.
    fn make_waypoints(&self) -> Vec<(Tile, bool)> {
        let mut points: Vec<(u16, Tile)> = Vec::new();
        let centre = (self.enemy_home.0 + 1, self.enemy_home.1 + 1);
        points.push((0, centre));
        for m in &self.mines {
            let tile = (m.at.0, m.at.1 + MINE_SIZE);
            let near = self.nearest_walkable(tile);
            let steps = self.steps(&self.from_enemy, near);
            if steps != u16::MAX {
                points.push((steps, near));
            }
        }
        let mut grid = Vec::new();
        for y in (3..self.frame.h).step_by(7) {
            for x in (3..self.frame.w).step_by(7) {
                let near = self.nearest_walkable((x, y));
                let steps = self.steps(&self.from_enemy, near);
                if steps != u16::MAX {
                    grid.push((steps, near));
                }
            }
        }
        points[1..].sort();
        grid.sort();
        points.extend(grid);
        points.into_iter().map(|(_, tile)| (tile, false)).collect()
    }

    /// The walkable tile nearest to `tile` (rings outwards, own frame
    /// order), or `tile` itself if there is none near.
    pub(super) fn nearest_walkable(&self, tile: Tile) -> Tile {
        for r in 0..6 {
            for y in tile.1 - r..=tile.1 + r {
                for x in tile.0 - r..=tile.0 + r {
                    if distance((x, y), 1, tile, 1) == r && self.walkable((x, y)) {
                        return (x, y);
                    }
                }
            }
        }
        tile
    }

    /// Takes in what this tick's observation shows: felled trees, vision,
    /// structures, mines, enemy buildings, searched places.
    pub(super) fn update(&mut self, obs: &Observation) {
        let frame = self.frame;
        for t in &obs.cleared {
            if let Some(i) = self.index(frame.turn((t.x, t.y), 1)) {
                self.terrain[i] = b'.';
            }
        }
        self.vision.iter_mut().for_each(|v| *v = false);
        for u in &obs.units {
            let size = size_of(u.kind);
            let at = frame.turn((u.x, u.y), size);
            let v = u.kind.stats().vision as i32;
            World::set_square(&mut self.vision, frame, (at.0 - v, at.1 - v), size + 2 * v, true);
        }
        for m in &mut self.mines {
            if let Some(seen) = obs.mines.iter().find(|seen| seen.id == m.id) {
                m.gold = seen.gold;
            }
        }
        let seen_gone: Vec<usize> = (0..self.mines.len())
            .filter(|&i| {
                let m = self.mines[i];
                !m.gone && !obs.mines.iter().any(|seen| seen.id == m.id) && self.seen_any(m.at, MINE_SIZE)
            })
            .collect();
        for i in seen_gone {
            self.mines[i].gone = true;
            self.mines[i].gold = 0;
        }
        for e in obs.visible_enemies.iter().filter(|e| e.kind.is_building()) {
            let at = frame.turn((e.x, e.y), size_of(e.kind));
            self.enemy_buildings.insert(e.id, (e.kind, at));
        }
        let destroyed: Vec<u32> = self
            .enemy_buildings
            .iter()
            .filter(|&(id, &(kind, at))| {
                self.seen_any(at, size_of(kind)) && !obs.visible_enemies.iter().any(|e| e.id == *id)
            })
            .map(|(&id, _)| id)
            .collect();
        for id in destroyed {
            self.enemy_buildings.remove(&id);
        }
        // Structures: mines, own and known enemy buildings.
        self.blocked.iter_mut().for_each(|b| *b = false);
        for m in self.mines.iter().filter(|m| !m.gone) {
            World::set_square(&mut self.blocked, frame, m.at, MINE_SIZE, true);
        }
        for u in obs.units.iter().filter(|u| u.kind.is_building()) {
            let size = size_of(u.kind);
            World::set_square(&mut self.blocked, frame, frame.turn((u.x, u.y), size), size, true);
        }
        for &(kind, at) in self.enemy_buildings.values() {
            World::set_square(&mut self.blocked, frame, at, size_of(kind), true);
        }
        let mut waypoints = std::mem::take(&mut self.waypoints);
        for (tile, visited) in &mut waypoints {
            if self.seen(*tile) {
                *visited = true;
            }
        }
        if waypoints.iter().all(|&(_, visited)| visited) {
            waypoints.iter_mut().for_each(|(_, visited)| *visited = false);
        }
        self.waypoints = waypoints;
    }
}

/// A unit of the bot's, with its place in the bot's frame.
#[derive(Clone, Copy)]
pub(super) struct OwnUnit<'a> {
    pub(super) unit: &'a UnitView,
    pub(super) at: Tile,
}

/// An enemy in sight, with its place in the bot's frame.
pub(super) type SeenEnemy<'a> = (&'a EnemyView, Tile);

/// One tick as the bot sees it, in its own frame: made once a tick by
/// [`Tick::new`] and read by every part of the brain, so that each part
/// takes the tick and what it may change rather than a list of views.
pub(super) struct Tick<'a> {
    /// The tick's number.
    pub(super) now: u32,
    /// What the bot knows of the map, updated with this tick.
    pub(super) world: &'a World,
    /// All its units and buildings.
    pub(super) own: Vec<OwnUnit<'a>>,
    /// Its buildings, finished or not.
    pub(super) buildings: Vec<OwnUnit<'a>>,
    /// Its finished town halls.
    pub(super) halls: Vec<OwnUnit<'a>>,
    /// Its first finished town hall's place, else where its start hall was.
    pub(super) hall_at: Tile,
    /// The enemies in sight.
    pub(super) enemies: Vec<SeenEnemy<'a>>,
    /// The enemy units (not buildings) within [`THREAT_RADIUS`] of one of
    /// its buildings.
    pub(super) threats: Vec<SeenEnemy<'a>>,
}

impl<'a> Tick<'a> {
    /// The tick of `obs`, seen through `world` (already updated with it).
    pub(super) fn new(obs: &'a Observation, world: &'a World) -> Tick<'a> {
        let frame = world.frame;
        let own: Vec<OwnUnit> = obs
            .units
            .iter()
            .map(|unit| OwnUnit {
                unit,
                at: frame.turn((unit.x, unit.y), size_of(unit.kind)),
            })
            .collect();
        let enemies: Vec<SeenEnemy> = obs
            .visible_enemies
            .iter()
            .map(|e| (e, frame.turn((e.x, e.y), size_of(e.kind))))
            .collect();
        let buildings: Vec<OwnUnit> = own.iter().copied().filter(|u| u.unit.kind.is_building()).collect();
        let halls: Vec<OwnUnit> = buildings
            .iter()
            .copied()
            .filter(|u| u.unit.kind == Kind::TownHall && u.unit.built == Some(true))
            .collect();
        let hall_at = halls.first().map_or(world.home, |h| h.at);
        let threats: Vec<SeenEnemy> = enemies
            .iter()
            .copied()
            .filter(|(e, at)| {
                !e.kind.is_building()
                    && buildings
                        .iter()
                        .any(|b| distance(*at, 1, b.at, size_of(b.unit.kind)) <= THREAT_RADIUS)
            })
            .collect();
        Tick {
            now: obs.tick,
            world,
            own,
            buildings,
            halls,
            hall_at,
            enemies,
            threats,
        }
    }

    /// Whether unit `id` is still the bot's.
    pub(super) fn owns(&self, id: u32) -> bool {
        self.own.iter().any(|u| u.unit.id == id)
    }

    /// Whether enemy soldiers threaten the base.
    pub(super) fn threatened(&self) -> bool {
        self.threats.iter().any(|(e, _)| is_soldier(e.kind))
    }
}
