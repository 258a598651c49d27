//! The army: soldiers fighting and walking, peasants defending the base, harassers.

use super::perception::{OwnUnit, SeenEnemy, Tick, World};
use super::{
    Brain, ENGAGE_RADIUS, LEASH, MINE_SIZE, Orders, THREAT_RADIUS, Tile, distance, is_soldier, power, size_of,
    target_penalty,
};
use arbiter_sdk::games::skirmish::{OrderName, Target};
use arbiter_sdk::skirmish::{EnemyView, Kind, Order};
impl Brain {
    /// Soldiers: take on enemies in reach, else go where the army goes.
    pub(super) fn army(&mut self, tick: &Tick, orders: &mut Orders) {
        let Tick {
            world,
            own,
            enemies,
            threats,
            buildings,
            ..
        } = tick;
        let soldiers: Vec<OwnUnit> = own.iter().copied().filter(|u| is_soldier(u.unit.kind)).collect();
        let count = soldiers.len();
        let plan = self.plan;
        if plan.hold {
            let counter = tick.now >= self.counter_tick || count >= plan.counter_army;
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
            let candidates: Vec<&SeenEnemy> = if home_fight {
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
    pub(super) fn walk(&mut self, world: &World, u: &OwnUnit, goal: Tile, orders: &mut Orders) {
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
    fn objective(&self, world: &World, soldiers: &[OwnUnit]) -> Tile {
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
    pub(super) fn defend_with_peasants(&mut self, tick: &Tick, orders: &mut Orders) {
        let Tick {
            own,
            threats,
            halls,
            hall_at,
            ..
        } = tick;
        let hall_at = *hall_at;
        let near: Vec<&SeenEnemy> = threats
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
        let peasants: Vec<&OwnUnit> = own
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

    /// The starting peasants to send at the enemy's peasants (at tick 0):
    /// as many as the plan says, the nearest to the enemy first.
    pub(super) fn choose_harassers(&self, tick: &Tick) -> Vec<u32> {
        let world = tick.world;
        let mut peasants: Vec<&OwnUnit> = tick.own.iter().filter(|u| u.unit.kind == Kind::Peasant).collect();
        peasants.sort_by_key(|u| (world.steps(&world.from_enemy, u.at), u.at.1, u.at.0));
        peasants.iter().take(self.plan.harassers).map(|u| u.unit.id).collect()
    }

    /// The harassing peasants go for the enemy's peasants (then its
    /// buildings) at the enemy's start.
    pub(super) fn harass(&mut self, tick: &Tick, orders: &mut Orders) {
        let Tick {
            world, own, enemies, ..
        } = tick;
        let harassers: Vec<OwnUnit> = own
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
}
