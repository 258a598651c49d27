//! The economy: what to spend the bank on, training, gathering.

use super::construction::Pending;
use super::perception::{OwnUnit, Tick, World};
use super::{Brain, Decisions, LAST_BUILD_TICK, MINE_SIZE, Tile, distance};
use arbiter_sdk::games::skirmish::{OrderName, TICK_LIMIT, Target};
use arbiter_sdk::skirmish::{GatherTarget, Kind, Observation, Order};
/// Banked resources left to spend this tick.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bank {
    pub(super) gold: u32,
    pub(super) lumber: u32,
    pub(super) food_used: u32,
    pub(super) food_cap: u32,
}

impl Bank {
    /// The bank of `obs`: its gold, lumber and food.
    pub(super) fn of(obs: &Observation) -> Bank {
        Bank {
            gold: obs.res.gold,
            lumber: obs.res.lumber,
            food_used: obs.res.food[0],
            food_cap: obs.res.food[1],
        }
    }

    pub(super) fn affords(&self, kind: Kind) -> bool {
        let s = kind.stats();
        self.gold >= s.gold && self.lumber >= s.lumber
    }

    pub(super) fn pay(&mut self, kind: Kind) {
        let s = kind.stats();
        self.gold = self.gold.saturating_sub(s.gold);
        self.lumber = self.lumber.saturating_sub(s.lumber);
    }
}

impl Brain {
    /// Spends the bank in the order of what matters most now: soldiers
    /// first when the base is threatened, a farm before the food runs out,
    /// the first barracks, peasants, more barracks and a second town hall,
    /// soldiers, then a farm ahead of need. A building that cannot be paid
    /// yet keeps its gold from what comes after it (when the lumber is
    /// there); what is being built is paid for in `bank` from the start.
    pub(super) fn spend(&mut self, tick: &Tick, out: &mut Decisions) {
        let Tick {
            world,
            own,
            buildings,
            hall_at,
            ..
        } = tick;
        let hall_at = *hall_at;
        let threatened = tick.threatened();
        let building_time = tick.now <= LAST_BUILD_TICK;
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
        let future_cap = (out.bank.food_cap
            + 6 * of_kind(Kind::Farm, true, &self.pending) as u32
            + 12 * of_kind(Kind::TownHall, true, &self.pending) as u32)
            .min(60);
        let free = future_cap.saturating_sub(out.bank.food_used);
        let farm_sites = of_kind(Kind::Farm, true, &self.pending);
        let farm_room = farm_sites < if out.bank.gold > 600 { 2 } else { 1 };
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
                    self.train_soldiers(tick, out);
                }
                Step::Soldiers => {}
                Step::Peasants => self.train_peasants(tick, out),
                Step::Build(kind) if building_time => {
                    if out.bank.affords(kind) {
                        self.build_near(tick, kind, out);
                    } else if out.bank.lumber >= kind.stats().lumber {
                        out.bank.gold = out.bank.gold.saturating_sub(kind.stats().gold);
                    }
                }
                Step::Build(_) => {}
                Step::Rich(kind) => {
                    if building_time && out.bank.gold >= 500 && out.bank.affords(kind) {
                        self.build_near(tick, kind, out);
                    }
                }
                Step::Expand if building_time || halls == 0 => {
                    self.expand(tick, halls == 0, out);
                }
                Step::Expand => {}
            }
        }
    }

    /// Peasants in idle town halls, up to the plan's number.
    pub(super) fn train_peasants(&mut self, tick: &Tick, out: &mut Decisions) {
        let own = &tick.own;
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
            if self.train(tick.now, hall.unit.id, Kind::Peasant, out) {
                coming += 1;
            }
        }
    }

    /// Footmen (and riflemen, as the plan says) in idle barracks.
    pub(super) fn train_soldiers(&mut self, tick: &Tick, out: &mut Decisions) {
        let own = &tick.own;
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
            if !(queue == 0 || (queue < 2 && out.bank.gold > 500)) {
                continue;
            }
            let every = self.plan.riflemen_every;
            let kind = if every > 0 && riflemen * every < footmen && out.bank.affords(Kind::Rifleman) {
                Kind::Rifleman
            } else {
                Kind::Footman
            };
            if self.train(tick.now, b.unit.id, kind, out) {
                match kind {
                    Kind::Rifleman => riflemen += 1,
                    _ => footmen += 1,
                }
            }
        }
    }

    /// Queues `kind` in building `unit` if the bank and the food allow it
    /// and it would be done before the tick limit.
    fn train(&mut self, now: u32, unit: u32, kind: Kind, out: &mut Decisions) -> bool {
        let Decisions { orders, bank } = out;
        let stats = kind.stats();
        if !bank.affords(kind)
            || now.saturating_add(stats.time + 10) >= TICK_LIMIT
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
    pub(super) fn gather(&mut self, tick: &Tick, out: &mut Decisions) {
        let Tick {
            world,
            own,
            halls,
            hall_at,
            ..
        } = tick;
        let hall_at = *hall_at;
        let Decisions { orders, bank } = out;
        let frame = world.frame;
        let workers: Vec<OwnUnit> = own
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
            |u: &OwnUnit| u.unit.order == Some(OrderName::Gather) && matches!(u.unit.target, Some(Target::Tile(_)));
        let is_miner =
            |u: &OwnUnit| u.unit.order == Some(OrderName::Gather) && matches!(u.unit.target, Some(Target::Id(_)));
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
