//! Skirmish house bots: a worker rush, an economy-then-army bot and a
//! defensive bot (`docs/spec/skirmish.md`).
//!
//! The three share one engine, [`Brain`], driven by a [`Plan`]: how many
//! peasants, barracks and woodcutters, which soldiers, when the army
//! attacks. Every bot thinks in its own frame: side 2 turns the map by a
//! half turn, so the same bot plays the same game from either start
//! position (ties are broken by places in its own frame, and ids only among
//! units of one side). It knows only what its observations told it: the map
//! of tick 0 (kept, with the felled trees it has seen since), the mines, the
//! enemy buildings it has seen and not seen destroyed.
//!
//! Each tick costs the bot a few passes over its units and the enemies in
//! sight, one vision grid, and, only when it builds or sends a peasant to
//! the woods, a scan of the tiles near its town hall: far below the 20 ms
//! budget. Two breadth-first searches over the map are done once, at
//! tick 0.

use arbiter_sdk::games::skirmish::{ACTION_LIMIT, OrderName, TICK_LIMIT, Target, TileRef};
use arbiter_sdk::skirmish::{Action, Bot, EnemyView, GatherTarget, Kind, Observation, Order, UnitView};
use arbiter_sdk::{Clock, Rng};
use std::collections::{BTreeMap, VecDeque};

/// A tile `(x, y)`, in the bot's own frame unless said otherwise.
type Tile = (i32, i32);

/// Side of a gold mine's square.
const MINE_SIZE: i32 = 2;
/// Enemies this close (Chebyshev) to one of the bot's buildings are a
/// threat to its base.
const THREAT_RADIUS: i32 = 8;
/// A soldier takes on enemies this close to it.
const ENGAGE_RADIUS: i32 = 8;
/// A holding army takes on enemies this close to one of its buildings.
const LEASH: i32 = 12;
/// No new building after this tick: it would not pay for itself in score.
const LAST_BUILD_TICK: u32 = 2_750;

/// A Chebyshev distance between the closest tiles of two squares.
fn distance(a: Tile, a_size: i32, b: Tile, b_size: i32) -> i32 {
    let gap = |a0: i32, a_len: i32, b0: i32, b_len: i32| (b0 - (a0 + a_len - 1)).max(a0 - (b0 + b_len - 1)).max(0);
    gap(a.0, a_size, b.0, b_size).max(gap(a.1, a_size, b.1, b_size))
}

fn size_of(kind: Kind) -> i32 {
    kind.stats().size as i32
}

fn is_soldier(kind: Kind) -> bool {
    matches!(kind, Kind::Footman | Kind::Rifleman)
}

/// Fighting weight of a unit, roughly its cost in tens of gold.
fn power(kind: Kind) -> i32 {
    match kind {
        Kind::Peasant => 1,
        Kind::Footman => 3,
        Kind::Rifleman => 4,
        _ => 0,
    }
}

/// What a soldier would rather hit: the lower the better, added to the
/// distance. Soldiers first, then peasants and construction sites, then
/// buildings.
fn target_penalty(kind: Kind, built: Option<bool>) -> i32 {
    match kind {
        Kind::Footman | Kind::Rifleman => 0,
        Kind::Peasant => 2,
        _ if built == Some(false) => 3,
        Kind::Barracks => 5,
        Kind::Farm => 6,
        _ => 6,
    }
}

/// The bot's half-turn frame: its own coordinates to the map's and back
/// (the same operation both ways).
#[derive(Clone, Copy, Debug, Default)]
struct Frame {
    flip: bool,
    w: i32,
    h: i32,
}

impl Frame {
    /// The `size`×`size` square at `at` seen from the other frame.
    fn turn(&self, at: Tile, size: i32) -> Tile {
        if self.flip {
            (self.w - at.0 - size, self.h - at.1 - size)
        } else {
            at
        }
    }
}

/// A gold mine as last seen.
#[derive(Clone, Copy, Debug)]
struct Mine {
    id: u32,
    at: Tile,
    gold: u32,
    gone: bool,
}

/// What the bot knows of the map, in its own frame.
#[derive(Clone, Debug, Default)]
struct World {
    frame: Frame,
    /// `terrain[y * w + x]`: `.`, `T` or `#`.
    terrain: Vec<u8>,
    mines: Vec<Mine>,
    /// Its town hall's place at tick 0.
    home: Tile,
    /// The enemy's town hall's place at tick 0 (the half-turn image).
    enemy_home: Tile,
    /// Steps from the enemy's start, over the terrain of tick 0.
    from_enemy: Vec<u16>,
    /// Where the army waits at home.
    rally: Tile,
    /// Places to look for enemy buildings, in order, and whether they have
    /// been seen since the last round.
    waypoints: Vec<(Tile, bool)>,
    /// Enemy buildings seen and not seen destroyed: kind and place.
    enemy_buildings: BTreeMap<u32, (Kind, Tile)>,
    /// Tiles in vision this tick.
    vision: Vec<bool>,
    /// Tiles covered by a known structure this tick.
    blocked: Vec<bool>,
}

impl World {
    /// The world of the tick-0 observation, or `None` without a usable map.
    fn new(obs: &Observation) -> Option<World> {
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

    fn index(&self, (x, y): Tile) -> Option<usize> {
        (x >= 0 && y >= 0 && x < self.frame.w && y < self.frame.h).then(|| (y * self.frame.w + x) as usize)
    }

    fn glyph(&self, tile: Tile) -> u8 {
        self.index(tile).map_or(b'#', |i| self.terrain[i])
    }

    /// Ground, as far as the bot knows, free of known structures.
    fn walkable(&self, tile: Tile) -> bool {
        self.index(tile)
            .is_some_and(|i| self.terrain[i] == b'.' && !self.blocked[i])
    }

    fn seen(&self, tile: Tile) -> bool {
        self.index(tile).is_some_and(|i| self.vision[i])
    }

    fn seen_any(&self, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).any(|y| (at.0..at.0 + size).any(|x| self.seen((x, y))))
    }

    fn seen_all(&self, at: Tile, size: i32) -> bool {
        (at.1..at.1 + size).all(|y| (at.0..at.0 + size).all(|x| self.seen((x, y))))
    }

    fn steps(&self, table: &[u16], tile: Tile) -> u16 {
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
    fn nearest_walkable(&self, tile: Tile) -> Tile {
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
    fn update(&mut self, obs: &Observation) {
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

/// A strategy: the numbers that make the three bots different.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Peasants wanted (the five of the start included).
    pub peasants: usize,
    /// Peasants felling trees.
    pub woodcutters: usize,
    /// Barracks wanted.
    pub barracks: usize,
    /// Barracks built while gold piles up (500 or more left after
    /// everything else).
    pub max_barracks: usize,
    /// Peasants needed before the first barracks is started.
    pub barracks_after: usize,
    /// One rifleman for every this many footmen (0: footmen only).
    pub riflemen_every: usize,
    /// Starting peasants sent at the enemy's peasants at tick 0.
    pub harassers: usize,
    /// Soldiers the army needs before it attacks (1: each goes at once).
    pub wave: usize,
    /// The attacking army goes home when it is down to fewer soldiers.
    pub retreat_below: usize,
    /// Whether the army holds near home until `counter_tick` or
    /// `counter_army`, taking on only enemies that come near.
    pub hold: bool,
    /// A holding army counter-attacks from this tick on.
    pub counter_tick: u32,
    /// A holding army counter-attacks once it has this many soldiers.
    pub counter_army: usize,
    /// Whether to build a second town hall by another mine.
    pub expand: bool,
}

/// A build order under way: the builder walks to the footprint.
#[derive(Clone, Copy, Debug)]
struct Pending {
    builder: u32,
    kind: Kind,
    at: Tile,
    since: u32,
}

/// The engine of the three skirmish bots: economy, construction, training
/// and an army, as its [`Plan`] says.
pub struct Brain {
    plan: Plan,
    world: Option<World>,
    attacking: bool,
    /// The soldiers the army waits for before it attacks (the plan's wave,
    /// give or take a random one or two).
    wave: usize,
    counter_tick: u32,
    harassers: Vec<u32>,
    pending: Vec<Pending>,
    /// Footprints where a build was dropped, and until which tick to avoid
    /// them.
    bad_spots: Vec<(Tile, u32)>,
    /// The last tile each unit was sent to.
    last_goal: BTreeMap<u32, Tile>,
    /// The peasant sent to build a second town hall, and where.
    expansion: Option<(u32, Tile)>,
}

/// Orders of one tick: at most one per unit, at most [`ACTION_LIMIT`].
#[derive(Default)]
struct Orders {
    list: Vec<Action>,
}

impl Orders {
    fn has(&self, unit: u32) -> bool {
        self.list.iter().any(|a| a.unit == unit)
    }

    fn full(&self) -> bool {
        self.list.len() >= ACTION_LIMIT
    }

    fn give(&mut self, unit: u32, order: Order) -> bool {
        if self.full() || self.has(unit) {
            return false;
        }
        self.list.push(Action { unit, order });
        true
    }
}

/// Banked resources left to spend this tick.
#[derive(Clone, Copy, Debug)]
struct Bank {
    gold: u32,
    lumber: u32,
    food_used: u32,
    food_cap: u32,
}

impl Bank {
    fn affords(&self, kind: Kind) -> bool {
        let s = kind.stats();
        self.gold >= s.gold && self.lumber >= s.lumber
    }

    fn pay(&mut self, kind: Kind) {
        let s = kind.stats();
        self.gold = self.gold.saturating_sub(s.gold);
        self.lumber = self.lumber.saturating_sub(s.lumber);
    }
}

/// A unit of the bot's, with its place in the bot's frame.
#[derive(Clone, Copy)]
struct Own<'a> {
    unit: &'a UnitView,
    at: Tile,
}

impl Brain {
    /// A brain playing `plan`; `rng` varies the size of the attack waves
    /// and the tick of a counter-attack a little.
    pub fn new(plan: Plan, mut rng: Rng) -> Brain {
        let wave = if plan.wave > 1 {
            plan.wave + rng.below(3)
        } else {
            plan.wave
        };
        let counter_tick = plan.counter_tick.saturating_add(rng.below(200) as u32);
        Brain {
            plan,
            world: None,
            attacking: false,
            wave,
            counter_tick,
            harassers: Vec::new(),
            pending: Vec::new(),
            bad_spots: Vec::new(),
            last_goal: BTreeMap::new(),
            expansion: None,
        }
    }

    /// The actions for one observation.
    pub fn act(&mut self, obs: &Observation) -> Vec<Action> {
        if obs.map.is_some() {
            self.world = World::new(obs);
        }
        let Some(mut world) = self.world.take() else {
            return Vec::new();
        };
        world.update(obs);
        let mut orders = Orders::default();
        self.think(obs, &world, &mut orders);
        self.world = Some(world);
        orders.list
    }

    fn think(&mut self, obs: &Observation, world: &World, orders: &mut Orders) {
        let frame = world.frame;
        let own: Vec<Own> = obs
            .units
            .iter()
            .map(|unit| Own {
                unit,
                at: frame.turn((unit.x, unit.y), size_of(unit.kind)),
            })
            .collect();
        let enemies: Vec<(&EnemyView, Tile)> = obs
            .visible_enemies
            .iter()
            .map(|e| (e, frame.turn((e.x, e.y), size_of(e.kind))))
            .collect();
        let buildings: Vec<Own> = own.iter().copied().filter(|u| u.unit.kind.is_building()).collect();
        let halls: Vec<Own> = buildings
            .iter()
            .copied()
            .filter(|u| u.unit.kind == Kind::TownHall && u.unit.built == Some(true))
            .collect();
        let hall_at = halls.first().map_or(world.home, |h| h.at);
        let mut bank = Bank {
            gold: obs.res.gold,
            lumber: obs.res.lumber,
            food_used: obs.res.food[0],
            food_cap: obs.res.food[1],
        };

        self.track_builds(obs, world, &own);
        for p in &self.pending {
            if own.iter().any(|u| u.unit.id == p.builder) {
                bank.pay(p.kind);
            }
        }
        self.harassers.retain(|id| own.iter().any(|u| u.unit.id == *id));
        self.last_goal.retain(|id, _| own.iter().any(|u| u.unit.id == *id));
        if obs.tick == 0 && self.plan.harassers > 0 {
            let mut peasants: Vec<&Own> = own.iter().filter(|u| u.unit.kind == Kind::Peasant).collect();
            peasants.sort_by_key(|u| (world.steps(&world.from_enemy, u.at), u.at.1, u.at.0));
            self.harassers = peasants.iter().take(self.plan.harassers).map(|u| u.unit.id).collect();
        }

        // Enemies near the base.
        let threats: Vec<(&EnemyView, Tile)> = enemies
            .iter()
            .copied()
            .filter(|(e, at)| {
                !e.kind.is_building()
                    && buildings
                        .iter()
                        .any(|b| distance(*at, 1, b.at, size_of(b.unit.kind)) <= THREAT_RADIUS)
            })
            .collect();

        // Training and building first: a few orders that matter most.
        let threatened = threats.iter().any(|(e, _)| is_soldier(e.kind));
        self.spend(obs, world, &own, &buildings, hall_at, threatened, &mut bank, orders);
        self.army(obs, world, &own, &enemies, &threats, &buildings, orders);
        self.defend_with_peasants(&own, &threats, &halls, hall_at, orders);
        self.harass(world, &own, &enemies, orders);
        self.gather(world, &own, &halls, hall_at, &bank, orders);
    }

    /// Follows the build orders under way: done when the site appears,
    /// dropped (and the footprint avoided for a while) when the builder
    /// gave up or died.
    fn track_builds(&mut self, obs: &Observation, world: &World, own: &[Own]) {
        let tick = obs.tick;
        let frame = world.frame;
        let mut failed = Vec::new();
        self.pending.retain(|p| {
            let size = size_of(p.kind);
            let started = own
                .iter()
                .any(|u| u.unit.kind == p.kind && u.at == p.at && u.unit.kind.is_building());
            if started {
                return false;
            }
            let map_at = frame.turn(p.at, size);
            let walking = own.iter().any(|u| {
                u.unit.id == p.builder
                    && u.unit.order == Some(OrderName::Build)
                    && u.unit.target
                        == Some(Target::Tile(TileRef {
                            x: map_at.0,
                            y: map_at.1,
                        }))
            });
            if !walking || tick > p.since.saturating_add(300) {
                failed.push(p.at);
                return false;
            }
            true
        });
        for at in failed {
            self.bad_spots.push((at, tick.saturating_add(400)));
        }
        self.bad_spots.retain(|&(_, until)| until > tick);
        if let Some((builder, _)) = self.expansion
            && !own.iter().any(|u| u.unit.id == builder)
        {
            self.expansion = None;
        }
    }

    /// Soldiers: take on enemies in reach, else go where the army goes.
    #[allow(clippy::too_many_arguments, reason = "one tick's shared views")]
    fn army(
        &mut self,
        obs: &Observation,
        world: &World,
        own: &[Own],
        enemies: &[(&EnemyView, Tile)],
        threats: &[(&EnemyView, Tile)],
        buildings: &[Own],
        orders: &mut Orders,
    ) {
        let soldiers: Vec<Own> = own.iter().copied().filter(|u| is_soldier(u.unit.kind)).collect();
        let count = soldiers.len();
        let plan = self.plan;
        if plan.hold {
            let counter = obs.tick >= self.counter_tick || count >= plan.counter_army;
            if counter && count >= self.wave.min(plan.counter_army) {
                self.attacking = true;
            }
        } else if count >= self.wave {
            self.attacking = true;
        }
        if self.attacking && count < plan.retreat_below {
            self.attacking = false;
        }
        let goal = if self.attacking {
            self.objective(world, &soldiers)
        } else {
            world.rally
        };
        let near_base = |at: Tile| {
            buildings
                .iter()
                .any(|b| distance(at, 1, b.at, size_of(b.unit.kind)) <= LEASH)
        };
        for s in &soldiers {
            if orders.full() {
                return;
            }
            let at = s.at;
            let home_fight = !threats.is_empty() && (!self.attacking || near_base(at));
            let candidates: Vec<&(&EnemyView, Tile)> = if home_fight {
                threats.iter().collect()
            } else {
                enemies
                    .iter()
                    .filter(|(_, eat)| {
                        distance(at, 1, *eat, 1) <= ENGAGE_RADIUS + 2 && (self.attacking || near_base(*eat))
                    })
                    .collect()
            };
            let key = |e: &EnemyView, eat: Tile| {
                let d = distance(at, 1, eat, size_of(e.kind));
                (d + target_penalty(e.kind, e.built), e.hp, e.id)
            };
            let best = candidates
                .iter()
                .filter(|(e, eat)| home_fight || distance(at, 1, *eat, size_of(e.kind)) <= ENGAGE_RADIUS)
                .min_by_key(|(e, eat)| key(e, *eat));
            if let Some((target, tat)) = best {
                let current = match (s.unit.order, s.unit.target) {
                    (Some(OrderName::Attack), Some(Target::Id(id))) => enemies.iter().find(|(e, _)| e.id == id),
                    _ => None,
                };
                let keep =
                    current.is_some_and(|(e, eat)| e.id == target.id || key(e, *eat).0 <= key(target, *tat).0 + 3);
                if !keep {
                    orders.give(
                        s.unit.id,
                        Order::Attack {
                            target: i64::from(target.id),
                        },
                    );
                    self.last_goal.remove(&s.unit.id);
                }
                continue;
            }
            if s.unit.order == Some(OrderName::Attack) {
                // A holding army does not chase far from the base.
                let far = match s.unit.target {
                    Some(Target::Id(id)) => enemies.iter().any(|(e, eat)| e.id == id && !near_base(*eat)),
                    _ => false,
                };
                if self.attacking || !far {
                    continue;
                }
            }
            self.walk(world, s, goal, orders);
        }
    }

    /// Sends a unit to `goal` unless it is going there, has been sent
    /// there and stopped, or is close.
    fn walk(&mut self, world: &World, u: &Own, goal: Tile, orders: &mut Orders) {
        let id = u.unit.id;
        let idle = u.unit.order.is_none();
        let moving_there = u.unit.order == Some(OrderName::Move) && self.last_goal.get(&id) == Some(&goal);
        let stopped_there = idle && self.last_goal.get(&id) == Some(&goal);
        if moving_there || stopped_there || (idle && distance(u.at, 1, goal, 1) <= 1) {
            return;
        }
        let (x, y) = world.frame.turn(goal, 1);
        if orders.give(
            id,
            Order::Move {
                x: i64::from(x),
                y: i64::from(y),
            },
        ) {
            self.last_goal.insert(id, goal);
        }
    }

    /// Where the attacking army goes: the known enemy building nearest to
    /// it, else the first place not searched yet.
    fn objective(&self, world: &World, soldiers: &[Own]) -> Tile {
        let n = soldiers.len().max(1) as i32;
        let centre = (
            soldiers.iter().map(|s| s.at.0).sum::<i32>() / n,
            soldiers.iter().map(|s| s.at.1).sum::<i32>() / n,
        );
        let building = world
            .enemy_buildings
            .values()
            .min_by_key(|&&(kind, at)| (distance(centre, 1, at, size_of(kind)), at.1, at.0));
        if let Some(&(kind, at)) = building {
            let s = size_of(kind);
            return (at.0 + s / 2, at.1 + s / 2);
        }
        world
            .waypoints
            .iter()
            .find(|(_, visited)| !visited)
            .map_or(world.enemy_home, |&(tile, _)| tile)
    }

    /// When enemies near a town hall outweigh the soldiers near them, the
    /// peasants near them fight (three for each enemy, two thirds of the
    /// peasants at most); peasants that chased too far, or have no enemy
    /// left near, go back to work.
    fn defend_with_peasants(
        &mut self,
        own: &[Own],
        threats: &[(&EnemyView, Tile)],
        halls: &[Own],
        hall_at: Tile,
        orders: &mut Orders,
    ) {
        let near: Vec<&(&EnemyView, Tile)> = threats
            .iter()
            .filter(|(_, at)| halls.iter().any(|h| distance(*at, 1, h.at, 3) <= 6))
            .collect();
        let threat: i32 = near.iter().map(|(e, _)| power(e.kind)).sum();
        let guards: i32 = own
            .iter()
            .filter(|u| {
                is_soldier(u.unit.kind) && near.iter().any(|(_, at)| distance(u.at, 1, *at, 1) <= ENGAGE_RADIUS)
            })
            .map(|u| power(u.unit.kind))
            .sum();
        let peasants: Vec<&Own> = own
            .iter()
            .filter(|u| u.unit.kind == Kind::Peasant && !self.harassers.contains(&u.unit.id))
            .collect();
        let wanted = (near.len() * 3).min(peasants.len() * 2 / 3);
        let mut fighters = 0;
        for p in peasants {
            if orders.full() {
                return;
            }
            if p.unit.order == Some(OrderName::Attack) {
                fighters += 1;
                if distance(p.at, 1, hall_at, 3) > LEASH || near.is_empty() || threat <= guards {
                    // Back to work (the gathering step gives the order).
                    orders.give(p.unit.id, Order::Stop);
                }
                continue;
            }
            if threat <= guards || fighters >= wanted || p.unit.order == Some(OrderName::Build) {
                continue;
            }
            let nearest = near
                .iter()
                .filter(|(_, at)| distance(p.at, 1, *at, 1) <= THREAT_RADIUS)
                .min_by_key(|(e, at)| (distance(p.at, 1, *at, 1), e.hp, e.id));
            if let Some((e, _)) = nearest
                && orders.give(
                    p.unit.id,
                    Order::Attack {
                        target: i64::from(e.id),
                    },
                )
            {
                fighters += 1;
            }
        }
    }

    /// The harassing peasants go for the enemy's peasants (then its
    /// buildings) at the enemy's start.
    fn harass(&mut self, world: &World, own: &[Own], enemies: &[(&EnemyView, Tile)], orders: &mut Orders) {
        let harassers: Vec<Own> = own
            .iter()
            .copied()
            .filter(|u| self.harassers.contains(&u.unit.id))
            .collect();
        let goal = world
            .mines
            .iter()
            .filter(|m| !m.gone)
            .min_by_key(|m| (distance(m.at, MINE_SIZE, world.enemy_home, 3), m.at.1, m.at.0))
            .map_or(world.enemy_home, |m| world.nearest_walkable((m.at.0, m.at.1 - 1)));
        for h in &harassers {
            let target = enemies
                .iter()
                .filter(|(e, at)| distance(h.at, 1, *at, size_of(e.kind)) <= ENGAGE_RADIUS)
                .min_by_key(|(e, at)| {
                    let penalty = match e.kind {
                        Kind::Peasant => 0,
                        k if is_soldier(k) => 20,
                        _ if e.built == Some(false) => 4,
                        _ => 30,
                    };
                    (distance(h.at, 1, *at, size_of(e.kind)) + penalty, e.hp, e.id)
                });
            match target {
                Some((e, _)) => {
                    let current = h.unit.order == Some(OrderName::Attack)
                        && h.unit.target.is_some_and(|t| {
                            let Target::Id(id) = t else { return false };
                            enemies.iter().any(|(other, _)| other.id == id && other.kind == e.kind)
                        });
                    if !current {
                        orders.give(
                            h.unit.id,
                            Order::Attack {
                                target: i64::from(e.id),
                            },
                        );
                    }
                }
                None if h.unit.order != Some(OrderName::Attack) => self.walk(world, h, goal, orders),
                None => {}
            }
        }
    }

    /// Spends the bank in the order of what matters most now: soldiers
    /// first when the base is threatened, a farm before the food runs out,
    /// the first barracks, peasants, more barracks and a second town hall,
    /// soldiers, then a farm ahead of need. A building that cannot be paid
    /// yet keeps its gold from what comes after it (when the lumber is
    /// there); what is being built is paid for in `bank` from the start.
    #[allow(clippy::too_many_arguments, reason = "one tick's shared views")]
    fn spend(
        &mut self,
        obs: &Observation,
        world: &World,
        own: &[Own],
        buildings: &[Own],
        hall_at: Tile,
        threatened: bool,
        bank: &mut Bank,
        orders: &mut Orders,
    ) {
        let tick = obs.tick;
        let building_time = tick <= LAST_BUILD_TICK;
        let of_kind = |kind: Kind, sites_only: bool, pending: &[Pending]| {
            buildings
                .iter()
                .filter(|b| b.unit.kind == kind && (!sites_only || b.unit.built == Some(false)))
                .count()
                + pending.iter().filter(|p| p.kind == kind).count()
        };
        let peasants = own.iter().filter(|u| u.unit.kind == Kind::Peasant).count();
        let finished_barracks = buildings
            .iter()
            .filter(|b| b.unit.kind == Kind::Barracks && b.unit.built == Some(true))
            .count() as u32;
        let barracks = of_kind(Kind::Barracks, false, &self.pending);
        let halls = of_kind(Kind::TownHall, false, &self.pending);

        // Food: the cap to come, and how much room is wanted.
        let future_cap = (bank.food_cap
            + 6 * of_kind(Kind::Farm, true, &self.pending) as u32
            + 12 * of_kind(Kind::TownHall, true, &self.pending) as u32)
            .min(60);
        let free = future_cap.saturating_sub(bank.food_used);
        let farm_sites = of_kind(Kind::Farm, true, &self.pending);
        let farm_room = farm_sites < if bank.gold > 600 { 2 } else { 1 };
        let urgent_farm = future_cap < 60 && free <= 1 + 2 * finished_barracks && farm_room;
        let early_farm = future_cap < 60
            && free <= 2 + 3 * finished_barracks + u32::from(peasants < self.plan.peasants)
            && farm_room;

        let home_mine = world
            .mines
            .iter()
            .filter(|m| !m.gone)
            .min_by_key(|m| (distance(m.at, MINE_SIZE, hall_at, 3), m.at.1, m.at.0));
        let home_mine_low = home_mine.is_none_or(|m| m.gold < 1_500 || distance(m.at, MINE_SIZE, hall_at, 3) > 6);
        let want_hall =
            self.expansion.is_some() || halls == 0 || (self.plan.expand && halls < 2 && home_mine_low && barracks > 0);

        #[derive(Clone, Copy, PartialEq)]
        enum Step {
            Soldiers,
            Peasants,
            Build(Kind),
            /// Built only from gold left over.
            Rich(Kind),
            Expand,
        }
        let mut steps = Vec::new();
        if threatened {
            steps.push(Step::Soldiers);
        }
        if urgent_farm {
            steps.push(Step::Build(Kind::Farm));
        }
        if barracks == 0 && peasants >= self.plan.barracks_after {
            steps.push(Step::Build(Kind::Barracks));
        }
        if want_hall && halls == 0 {
            steps.push(Step::Expand);
        }
        steps.push(Step::Peasants);
        if barracks > 0 && barracks < self.plan.barracks && of_kind(Kind::Barracks, true, &self.pending) == 0 {
            steps.push(Step::Build(Kind::Barracks));
        }
        if want_hall && halls > 0 {
            steps.push(Step::Expand);
        }
        steps.push(Step::Soldiers);
        if early_farm && !urgent_farm {
            steps.push(Step::Build(Kind::Farm));
        }
        if barracks >= self.plan.barracks
            && barracks < self.plan.max_barracks
            && of_kind(Kind::Barracks, true, &self.pending) == 0
        {
            steps.push(Step::Rich(Kind::Barracks));
        }

        let mut trained = false;
        for step in steps {
            match step {
                Step::Soldiers if !trained => {
                    trained = true;
                    self.train_soldiers(tick, own, bank, orders);
                }
                Step::Soldiers => {}
                Step::Peasants => self.train_peasants(tick, own, bank, orders),
                Step::Build(kind) if building_time => {
                    if bank.affords(kind) {
                        self.build_near(obs, world, own, hall_at, kind, bank, orders);
                    } else if bank.lumber >= kind.stats().lumber {
                        bank.gold = bank.gold.saturating_sub(kind.stats().gold);
                    }
                }
                Step::Build(_) => {}
                Step::Rich(kind) => {
                    if building_time && bank.gold >= 500 && bank.affords(kind) {
                        self.build_near(obs, world, own, hall_at, kind, bank, orders);
                    }
                }
                Step::Expand if building_time || halls == 0 => {
                    self.expand(obs, world, own, hall_at, halls == 0, bank, orders);
                }
                Step::Expand => {}
            }
        }
    }

    /// Sends a peasant to build a town hall by a mine (the best other mine,
    /// or any mine when the bot has none left), walking it there first
    /// until the whole footprint is in vision.
    #[allow(clippy::too_many_arguments, reason = "one tick's shared views")]
    fn expand(
        &mut self,
        obs: &Observation,
        world: &World,
        own: &[Own],
        hall_at: Tile,
        any: bool,
        bank: &mut Bank,
        orders: &mut Orders,
    ) {
        if self.expansion.is_none()
            && let Some(spot) = self.hall_spot(world, hall_at, any)
            && let Some(builder) = self.builder(own, spot, 3)
        {
            self.expansion = Some((builder, spot));
        }
        let Some((builder, spot)) = self.expansion else {
            return;
        };
        let Some(b) = own.iter().find(|u| u.unit.id == builder) else {
            return;
        };
        if !bank.affords(Kind::TownHall) {
            if bank.lumber >= Kind::TownHall.stats().lumber {
                bank.gold = bank.gold.saturating_sub(Kind::TownHall.stats().gold);
            }
            if b.unit.order.is_none() || b.unit.order == Some(OrderName::Move) {
                self.walk(world, b, (spot.0 + 1, spot.1 + 1), orders);
            }
        } else if world.seen_all(spot, 3) {
            if self.spot_free(world, spot, 3, true) {
                self.order_build(obs, world, builder, Kind::TownHall, spot, bank, orders);
            }
            self.expansion = None;
        } else {
            self.walk(world, b, (spot.0 + 1, spot.1 + 1), orders);
            bank.pay(Kind::TownHall);
        }
    }

    /// Gives a build order near the town hall, if a footprint and a builder
    /// are found.
    #[allow(clippy::too_many_arguments, reason = "one tick's shared views")]
    fn build_near(
        &mut self,
        obs: &Observation,
        world: &World,
        own: &[Own],
        hall_at: Tile,
        kind: Kind,
        bank: &mut Bank,
        orders: &mut Orders,
    ) {
        let Some(spot) = self.spot(world, hall_at, kind) else {
            return;
        };
        let Some(builder) = self.builder(own, spot, size_of(kind)) else {
            return;
        };
        self.order_build(obs, world, builder, kind, spot, bank, orders);
    }

    #[allow(clippy::too_many_arguments, reason = "one tick's shared views")]
    fn order_build(
        &mut self,
        obs: &Observation,
        world: &World,
        builder: u32,
        kind: Kind,
        spot: Tile,
        bank: &mut Bank,
        orders: &mut Orders,
    ) {
        let (x, y) = world.frame.turn(spot, size_of(kind));
        let order = Order::Build {
            code: kind,
            x: i64::from(x),
            y: i64::from(y),
        };
        if orders.give(builder, order) {
            bank.pay(kind);
            self.pending.push(Pending {
                builder,
                kind,
                at: spot,
                since: obs.tick,
            });
            self.last_goal.remove(&builder);
        }
    }

    /// The peasant to build at `spot`: a gold miner carrying nothing (else
    /// any gatherer or idle peasant), the nearest.
    fn builder(&self, own: &[Own], spot: Tile, size: i32) -> Option<u32> {
        own.iter()
            .filter(|u| {
                u.unit.kind == Kind::Peasant
                    && !self.harassers.contains(&u.unit.id)
                    && matches!(u.unit.order, None | Some(OrderName::Gather) | Some(OrderName::Move))
                    && self.expansion.is_none_or(|(b, _)| b != u.unit.id)
            })
            .min_by_key(|u| {
                let miner = matches!(u.unit.target, Some(Target::Id(_)));
                let empty = u.unit.carry.is_none_or(|c| c.gold + c.lumber == 0);
                (!(miner && empty), distance(u.at, 1, spot, size), u.unit.id)
            })
            .map(|u| u.unit.id)
    }

    /// Whether a `size` footprint at `at` is ground, free, clear of other
    /// structures by a tile (mines excepted when `by_mine`), and not a
    /// footprint where a build was just dropped.
    fn spot_free(&self, world: &World, at: Tile, size: i32, by_mine: bool) -> bool {
        let inside = (at.1..at.1 + size).all(|y| (at.0..at.0 + size).all(|x| world.walkable((x, y))));
        if !inside || self.bad_spots.iter().any(|&(bad, _)| bad == at) {
            return false;
        }
        (at.1 - 1..=at.1 + size).all(|y| {
            (at.0 - 1..=at.0 + size).all(|x| {
                let tile = (x, y);
                let blocked = world.index(tile).is_some_and(|i| world.blocked[i]);
                !blocked || (by_mine && world.mines.iter().any(|m| distance(tile, 1, m.at, MINE_SIZE) == 0))
            })
        })
    }

    /// A footprint for `kind` two to six tiles from the town hall, in
    /// vision, off the way between the hall and its mine: barracks towards
    /// the enemy, farms away from it.
    fn spot(&self, world: &World, hall_at: Tile, kind: Kind) -> Option<Tile> {
        let size = size_of(kind);
        let mine = world
            .mines
            .iter()
            .filter(|m| !m.gone)
            .min_by_key(|m| (distance(m.at, MINE_SIZE, hall_at, 3), m.at.1, m.at.0));
        // The box around the hall and its mine, where the miners walk.
        let lane = mine.map(|m| {
            (
                hall_at.0.min(m.at.0) - 1,
                hall_at.1.min(m.at.1) - 1,
                (hall_at.0 + 2).max(m.at.0 + 1) + 1,
                (hall_at.1 + 2).max(m.at.1 + 1) + 1,
            )
        });
        let in_lane = |at: Tile| {
            lane.is_some_and(|(x0, y0, x1, y1)| at.0 <= x1 && at.0 + size > x0 && at.1 <= y1 && at.1 + size > y0)
        };
        let mut best: Option<((i32, i32, i32, i32), Tile)> = None;
        for y in hall_at.1 - 7..hall_at.1 + 10 {
            for x in hall_at.0 - 7..hall_at.0 + 10 {
                let at = (x, y);
                let d = distance(at, size, hall_at, 3);
                if !(2..=6).contains(&d) || in_lane(at) || !world.seen_all(at, size) {
                    continue;
                }
                if !self.spot_free(world, at, size, false) {
                    continue;
                }
                let steps = i32::from(world.steps(&world.from_enemy, (x + size / 2, y + size / 2)).min(999));
                let toward = if kind == Kind::Barracks { steps } else { -steps };
                let key = (d, toward, y, x);
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, at));
                }
            }
        }
        best.map(|(_, at)| at)
    }

    /// A footprint for a town hall next to the best other mine (or, with
    /// `any`, next to any mine), one tile from it.
    fn hall_spot(&self, world: &World, hall_at: Tile, any: bool) -> Option<Tile> {
        let home_mine = world
            .mines
            .iter()
            .filter(|m| !m.gone)
            .min_by_key(|m| (distance(m.at, MINE_SIZE, hall_at, 3), m.at.1, m.at.0))
            .map(|m| m.id);
        let mut mines: Vec<&Mine> = world
            .mines
            .iter()
            .filter(|m| !m.gone && m.gold >= 1_000 && (any || Some(m.id) != home_mine))
            .filter(|m| {
                !world
                    .enemy_buildings
                    .values()
                    .any(|&(kind, at)| distance(at, size_of(kind), m.at, MINE_SIZE) <= 6)
            })
            .collect();
        mines.sort_by_key(|m| {
            // Nearer home and farther from the enemy is better.
            let from_enemy = i32::from(world.steps(&world.from_enemy, world.nearest_walkable(m.at)).min(999));
            (
                distance(m.at, MINE_SIZE, world.home, 3) * 2 - from_enemy,
                m.at.1,
                m.at.0,
            )
        });
        for m in mines.into_iter().take(2) {
            let mut best: Option<((i32, i32), Tile)> = None;
            for y in m.at.1 - 4..=m.at.1 + 3 {
                for x in m.at.0 - 4..=m.at.0 + 3 {
                    if distance((x, y), 3, m.at, MINE_SIZE) != 2 || !self.spot_free(world, (x, y), 3, true) {
                        continue;
                    }
                    let key = (y, x);
                    if best.is_none_or(|(k, _)| key < k) {
                        best = Some((key, (x, y)));
                    }
                }
            }
            if let Some((_, at)) = best {
                return Some(at);
            }
        }
        None
    }

    /// Peasants in idle town halls, up to the plan's number.
    fn train_peasants(&mut self, tick: u32, own: &[Own], bank: &mut Bank, orders: &mut Orders) {
        let mut coming = own
            .iter()
            .map(|u| match u.unit.kind {
                Kind::Peasant => 1,
                _ => u
                    .unit
                    .queue
                    .as_ref()
                    .map_or(0, |q| q.iter().filter(|&&k| k == Kind::Peasant).count()),
            })
            .sum::<usize>();
        for hall in own
            .iter()
            .filter(|u| u.unit.kind == Kind::TownHall && u.unit.built == Some(true))
        {
            if coming >= self.plan.peasants || hall.unit.queue.as_ref().is_some_and(|q| !q.is_empty()) {
                continue;
            }
            if self.train(tick, hall.unit.id, Kind::Peasant, bank, orders) {
                coming += 1;
            }
        }
    }

    /// Footmen (and riflemen, as the plan says) in idle barracks.
    fn train_soldiers(&mut self, tick: u32, own: &[Own], bank: &mut Bank, orders: &mut Orders) {
        let count = |kind: Kind| {
            own.iter()
                .map(|u| {
                    if u.unit.kind == kind {
                        1
                    } else {
                        u.unit
                            .queue
                            .as_ref()
                            .map_or(0, |q| q.iter().filter(|&&k| k == kind).count())
                    }
                })
                .sum::<usize>()
        };
        let (mut footmen, mut riflemen) = (count(Kind::Footman), count(Kind::Rifleman));
        for b in own
            .iter()
            .filter(|u| u.unit.kind == Kind::Barracks && u.unit.built == Some(true))
        {
            let queue = b.unit.queue.as_ref().map_or(0, Vec::len);
            if !(queue == 0 || (queue < 2 && bank.gold > 500)) {
                continue;
            }
            let every = self.plan.riflemen_every;
            let kind = if every > 0 && riflemen * every < footmen && bank.affords(Kind::Rifleman) {
                Kind::Rifleman
            } else {
                Kind::Footman
            };
            if self.train(tick, b.unit.id, kind, bank, orders) {
                match kind {
                    Kind::Rifleman => riflemen += 1,
                    _ => footmen += 1,
                }
            }
        }
    }

    /// Queues `kind` in building `unit` if the bank and the food allow it
    /// and it would be done before the tick limit.
    fn train(&mut self, tick: u32, unit: u32, kind: Kind, bank: &mut Bank, orders: &mut Orders) -> bool {
        let stats = kind.stats();
        if !bank.affords(kind)
            || tick.saturating_add(stats.time + 10) >= TICK_LIMIT
            || bank.food_used + stats.food > bank.food_cap
            || !orders.give(unit, Order::Train { code: kind })
        {
            return false;
        }
        bank.pay(kind);
        bank.food_used += stats.food;
        true
    }

    /// Idle peasants go to work: woodcutters until there are enough of
    /// them, the rest on the gold mine nearest to a town hall; one worker a
    /// tick moves between gold and lumber when the balance is off.
    fn gather(&mut self, world: &World, own: &[Own], halls: &[Own], hall_at: Tile, bank: &Bank, orders: &mut Orders) {
        let frame = world.frame;
        let workers: Vec<Own> = own
            .iter()
            .copied()
            .filter(|u| {
                u.unit.kind == Kind::Peasant
                    && !self.harassers.contains(&u.unit.id)
                    && self.expansion.is_none_or(|(b, _)| b != u.unit.id)
                    && !self.pending.iter().any(|p| p.builder == u.unit.id)
            })
            .collect();
        let is_woodcutter =
            |u: &Own| u.unit.order == Some(OrderName::Gather) && matches!(u.unit.target, Some(Target::Tile(_)));
        let is_miner =
            |u: &Own| u.unit.order == Some(OrderName::Gather) && matches!(u.unit.target, Some(Target::Id(_)));
        let mut woodcutters = workers.iter().filter(|u| is_woodcutter(u)).count();
        let wanted_wood = match bank.lumber {
            0..150 => self.plan.woodcutters + 1,
            150..400 => self.plan.woodcutters,
            400..800 => self.plan.woodcutters / 2,
            _ => 0,
        };
        // Gold: the mine with gold nearest to a finished town hall.
        let mine = world
            .mines
            .iter()
            .filter(|m| !m.gone && m.gold > 0)
            .min_by_key(|m| {
                let d = halls
                    .iter()
                    .map(|h| distance(m.at, MINE_SIZE, h.at, 3))
                    .min()
                    .unwrap_or_else(|| distance(m.at, MINE_SIZE, hall_at, 3));
                (d, m.at.1, m.at.0)
            })
            .copied();
        let mut tree: Option<Option<Tile>> = None;
        let mut switched = false;
        for u in &workers {
            if orders.full() {
                return;
            }
            // A peasant walks only to a mine out of sight (harassers and the
            // expansion's builder are not workers): it is free for work.
            let idle = matches!(u.unit.order, None | Some(OrderName::Move));
            let empty = u.unit.carry.is_none_or(|c| c.gold + c.lumber == 0);
            let to_wood = if idle {
                woodcutters < wanted_wood
            } else if !switched && empty && is_miner(u) && woodcutters < wanted_wood {
                true
            } else if !switched && empty && is_woodcutter(u) && woodcutters > wanted_wood {
                false
            } else {
                continue;
            };
            if !idle {
                switched = true;
            }
            if to_wood {
                let tree = *tree.get_or_insert_with(|| self.tree(world, hall_at));
                if let Some(t) = tree {
                    let (x, y) = frame.turn(t, 1);
                    if orders.give(
                        u.unit.id,
                        Order::Gather {
                            target: GatherTarget::Tree {
                                x: i64::from(x),
                                y: i64::from(y),
                            },
                        },
                    ) {
                        woodcutters += 1;
                    }
                    continue;
                }
            }
            let Some(m) = mine else { continue };
            if world.seen_any(m.at, MINE_SIZE) {
                if orders.give(
                    u.unit.id,
                    Order::Gather {
                        target: GatherTarget::Mine(i64::from(m.id)),
                    },
                ) && is_woodcutter(u)
                {
                    woodcutters = woodcutters.saturating_sub(1);
                }
            } else if idle {
                self.walk(world, u, world.nearest_walkable((m.at.0, m.at.1 - 1)), orders);
            }
        }
    }

    /// A tree in vision next to walkable ground, nearest to the town hall.
    fn tree(&self, world: &World, hall_at: Tile) -> Option<Tile> {
        let mut best: Option<((i32, i32, i32), Tile)> = None;
        for y in hall_at.1 - 9..hall_at.1 + 12 {
            for x in hall_at.0 - 9..hall_at.0 + 12 {
                if world.glyph((x, y)) != b'T' || !world.seen((x, y)) {
                    continue;
                }
                let open = (y - 1..=y + 1).any(|ny| (x - 1..=x + 1).any(|nx| world.walkable((nx, ny))));
                if !open {
                    continue;
                }
                let key = (distance((x, y), 1, hall_at, 3), y, x);
                if best.is_none_or(|(k, _)| key < k) {
                    best = Some((key, (x, y)));
                }
            }
        }
        best.map(|(_, at)| at)
    }
}

/// `skirmish-rush`: a worker rush. At tick 0 two peasants walk to the
/// enemy's mine and hit its peasants while another builds a barracks; the
/// town hall trains up to seven peasants, a second barracks comes when gold
/// piles up, and every footman goes for the enemy as soon as it is trained
/// (soldiers first, then peasants, construction sites, buildings).
pub struct Rush(Brain);

impl Rush {
    /// The plan of the rush.
    pub const PLAN: Plan = Plan {
        peasants: 7,
        woodcutters: 1,
        barracks: 1,
        max_barracks: 2,
        barracks_after: 0,
        riflemen_every: 0,
        harassers: 2,
        wave: 1,
        retreat_below: 0,
        hold: false,
        counter_tick: 0,
        counter_army: 0,
        expand: false,
    };

    /// A rush bot (its play does not depend on `rng`).
    pub fn new(rng: Rng) -> Rush {
        Rush(Brain::new(Rush::PLAN, rng))
    }
}

impl Bot for Rush {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}

/// `skirmish-economy`: economy, then an army. Twelve peasants on gold and
/// lumber, farms ahead of the food cap, two barracks (up to four when gold
/// piles up), footmen only; the army waits in front of the town hall until
/// it has eight to ten footmen, then attacks the enemy's start and hunts
/// its buildings, and goes home to regroup when it is down to two.
pub struct Economy(Brain);

impl Economy {
    /// The plan of the economy bot.
    pub const PLAN: Plan = Plan {
        peasants: 12,
        woodcutters: 2,
        barracks: 2,
        max_barracks: 4,
        barracks_after: 8,
        riflemen_every: 0,
        harassers: 0,
        wave: 8,
        retreat_below: 3,
        hold: false,
        counter_tick: 0,
        counter_army: 0,
        expand: false,
    };

    /// An economy bot; `rng` sets the size of its attack waves.
    pub fn new(rng: Rng) -> Economy {
        Economy(Brain::new(Economy::PLAN, rng))
    }
}

impl Bot for Economy {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}

/// `skirmish-defence`: a defensive bot. Fifteen peasants, a second town
/// hall by another mine when the first runs low, two barracks (up to four
/// when gold piles up) training footmen and riflemen one for one. The army
/// holds in front of the town hall and takes on whatever comes within
/// reach of the base (peasants help when it is outnumbered); it
/// counter-attacks late (from tick 1 800 to 2 000 with ten to twelve
/// soldiers, or as soon as it has 24) and hunts the enemy's buildings,
/// going home again when it is down to three.
pub struct Defence(Brain);

impl Defence {
    /// The plan of the defensive bot.
    pub const PLAN: Plan = Plan {
        peasants: 15,
        woodcutters: 3,
        barracks: 2,
        max_barracks: 4,
        barracks_after: 8,
        riflemen_every: 1,
        harassers: 0,
        wave: 10,
        retreat_below: 4,
        hold: true,
        counter_tick: 1_800,
        counter_army: 24,
        expand: true,
    };

    /// A defensive bot; `rng` sets the tick of its counter-attack.
    pub fn new(rng: Rng) -> Defence {
        Defence(Brain::new(Defence::PLAN, rng))
    }
}

impl Bot for Defence {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}
