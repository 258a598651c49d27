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
//!
//! The engine is in parts, each a set of [`Brain`]'s methods taking one
//! tick's view (`perception::Tick`) and what the part may change (the
//! orders, and the bank where it spends):
//!
//! | part | does |
//! |---|---|
//! | `perception` | the map in the bot's frame, kept from tick to tick; one tick's view of its units, the enemies in sight, the threats |
//! | `economy` | the bank and what to spend it on, training, gathering |
//! | `construction` | footprints, builders, build orders, a second town hall |
//! | `army` | soldiers, peasants defending the base, harassers |
//! | `plans` | the three plans and the bots that play them |

mod army;
mod construction;
mod economy;
mod perception;
mod plans;

pub use plans::{Defence, Economy, Plan, Rush};

use arbiter_sdk::Rng;
use arbiter_sdk::games::skirmish::ACTION_LIMIT;
use arbiter_sdk::skirmish::{Action, Kind, Observation, Order};
use construction::Pending;
use economy::Bank;
use perception::{Tick, World};
use std::collections::BTreeMap;

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

/// What one tick decides: the orders given so far and the bank left to
/// spend.
struct Decisions {
    orders: Orders,
    bank: Bank,
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
        let actions = self.think(obs, &world);
        self.world = Some(world);
        actions
    }

    /// One tick's decisions, each part of the brain in turn: builds under
    /// way are followed, then the bank is spent (training and building
    /// first: the few orders that matter most), the army, the peasants
    /// defending the base and the harassers get their orders, and idle
    /// peasants go to work.
    fn think(&mut self, obs: &Observation, world: &World) -> Vec<Action> {
        let tick = Tick::new(obs, world);
        let mut out = Decisions {
            orders: Orders::default(),
            bank: Bank::of(obs),
        };
        self.track_builds(&tick);
        for p in &self.pending {
            if tick.owns(p.builder) {
                out.bank.pay(p.kind);
            }
        }
        self.harassers.retain(|&id| tick.owns(id));
        self.last_goal.retain(|&id, _| tick.owns(id));
        if tick.now == 0 && self.plan.harassers > 0 {
            self.harassers = self.choose_harassers(&tick);
        }
        self.spend(&tick, &mut out);
        self.army(&tick, &mut out.orders);
        self.defend_with_peasants(&tick, &mut out.orders);
        self.harass(&tick, &mut out.orders);
        self.gather(&tick, &mut out);
        out.orders.list
    }
}
