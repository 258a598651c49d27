//! Construction: footprints, builders, build orders and a second town hall.

use super::perception::{Mine, OwnUnit, Tick, World};
use super::{Brain, Decisions, MINE_SIZE, Tile, distance, size_of};
use arbiter_sdk::games::skirmish::{OrderName, Target, TileRef};
use arbiter_sdk::skirmish::{Kind, Order};
/// A build order under way: the builder walks to the footprint.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pending {
    pub(super) builder: u32,
    pub(super) kind: Kind,
    pub(super) at: Tile,
    pub(super) since: u32,
}

impl Brain {
    /// Follows the build orders under way: done when the site appears,
    /// dropped (and the footprint avoided for a while) when the builder
    /// gave up or died.
    pub(super) fn track_builds(&mut self, tick: &Tick) {
        let own = &tick.own;
        let frame = tick.world.frame;
        let tick = tick.now;
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

    /// Sends a peasant to build a town hall by a mine (the best other mine,
    /// or any mine when the bot has none left), walking it there first
    /// until the whole footprint is in vision.
    pub(super) fn expand(&mut self, tick: &Tick, any: bool, out: &mut Decisions) {
        let Tick {
            world, own, hall_at, ..
        } = tick;
        let hall_at = *hall_at;
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
        if !out.bank.affords(Kind::TownHall) {
            if out.bank.lumber >= Kind::TownHall.stats().lumber {
                out.bank.gold = out.bank.gold.saturating_sub(Kind::TownHall.stats().gold);
            }
            if b.unit.order.is_none() || b.unit.order == Some(OrderName::Move) {
                self.walk(world, b, (spot.0 + 1, spot.1 + 1), &mut out.orders);
            }
        } else if world.seen_all(spot, 3) {
            if self.spot_free(world, spot, 3, true) {
                self.order_build(tick, builder, Kind::TownHall, spot, out);
            }
            self.expansion = None;
        } else {
            self.walk(world, b, (spot.0 + 1, spot.1 + 1), &mut out.orders);
            out.bank.pay(Kind::TownHall);
        }
    }

    /// Gives a build order near the town hall, if a footprint and a builder
    /// are found.
    pub(super) fn build_near(&mut self, tick: &Tick, kind: Kind, out: &mut Decisions) {
        let Tick {
            world, own, hall_at, ..
        } = tick;
        let hall_at = *hall_at;
        let Some(spot) = self.spot(world, hall_at, kind) else {
            return;
        };
        let Some(builder) = self.builder(own, spot, size_of(kind)) else {
            return;
        };
        self.order_build(tick, builder, kind, spot, out);
    }

    fn order_build(&mut self, tick: &Tick, builder: u32, kind: Kind, spot: Tile, out: &mut Decisions) {
        let world = tick.world;
        let Decisions { orders, bank } = out;
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
                since: tick.now,
            });
            self.last_goal.remove(&builder);
        }
    }

    /// The peasant to build at `spot`: a gold miner carrying nothing (else
    /// any gatherer or idle peasant), the nearest.
    fn builder(&self, own: &[OwnUnit], spot: Tile, size: i32) -> Option<u32> {
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
}
