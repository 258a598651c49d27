//! One tick after the orders: movement, combat, economy, verdict — in the
//! order of the spec's "A tick" section.

use super::map::Terrain;
use super::path::{self, Goal, Tile, distance};
use super::state::{Job, Phase, Resource, Skirmish, Source};
use super::units::{CHOP_TICKS, Kind, LOAD, MINE_SIZE, MINE_TICKS, RETARGET_RADIUS, TICK_LIMIT, hit_damage};
use crate::{FinishReason, Outcome, Side};

impl Skirmish {
    /// Steps 3–6 of a tick: movement, combat, economy, verdict; then the
    /// tick counter moves on and vision is updated for the next observation.
    pub(super) fn simulate(&mut self) {
        self.movement();
        self.combat();
        self.gathering();
        self.construction();
        self.training();
        self.update_vision();
        self.tick += 1;
        self.verdict();
    }

    /// Where a unit's job wants it to stand, or `None` to stay put, and
    /// whether the order ends there. Also updates what the job knows (last
    /// seen place of a target, a hall to carry to) and drops jobs that cannot
    /// go on.
    fn goal_of(&mut self, i: usize) -> Option<(Goal, bool)> {
        let e = &self.entities[i];
        let (side, kind, at) = (e.side, e.kind, e.at);
        let range = kind.stats().range as i32;
        match e.job {
            Job::Idle => None,
            Job::Move(to) => Some((
                Goal {
                    at: to,
                    size: 1,
                    range: 0,
                },
                true,
            )),
            Job::Attack { target, seen, size } => match self.entity(target) {
                None => {
                    self.entities[i].job = Job::Idle;
                    None
                }
                Some(t) if self.sees(side, t.at, t.size()) => {
                    let (seen, size) = (t.at, t.size());
                    self.entities[i].job = Job::Attack { target, seen, size };
                    Some((Goal { at: seen, size, range }, false))
                }
                // Out of sight: walk to where it was last seen, then stop.
                Some(_) => Some((
                    Goal {
                        at: seen,
                        size,
                        range: 0,
                    },
                    true,
                )),
            },
            Job::Gather { source, phase } => (match phase {
                Phase::ToSource => match source {
                    Source::Mine(id) => self.mine(id).map(|m| Goal {
                        at: m.at,
                        size: MINE_SIZE as i32,
                        range: 1,
                    }),
                    Source::Tree(tile) => Some(Goal {
                        at: tile,
                        size: 1,
                        range: 1,
                    }),
                    Source::Done => None,
                },
                Phase::Working(_) => None,
                Phase::ToHall(hall) => {
                    let hall = hall
                        .filter(|&id| self.entity(id).is_some_and(|h| h.built && h.side == side))
                        .or_else(|| self.nearest_hall(side, at));
                    match hall.and_then(|id| self.entity(id)).map(|h| (h.at, h.size())) {
                        Some((hall_at, size)) => {
                            self.entities[i].job = Job::Gather {
                                source,
                                phase: Phase::ToHall(hall),
                            };
                            Some(Goal {
                                at: hall_at,
                                size,
                                range: 1,
                            })
                        }
                        None => {
                            // No town hall left: keep the load and wait.
                            self.entities[i].job = Job::Idle;
                            None
                        }
                    }
                }
            })
            .map(|goal| (goal, false)),
            Job::Build {
                kind,
                at: site_at,
                site,
            } => match site {
                Some(_) => None,
                None => Some((
                    Goal {
                        at: site_at,
                        size: kind.stats().size as i32,
                        range: 1,
                    },
                    false,
                )),
            },
        }
    }

    /// Step 3: every unit walks one step along its path when its ticks per
    /// tile are done. Every goal is taken from the positions before anyone
    /// moves, and units do not block each other, so the order of units does
    /// not matter.
    fn movement(&mut self) {
        let goals: Vec<Option<(Goal, bool)>> = (0..self.entities.len())
            .map(|i| {
                if self.entities[i].kind.is_building() {
                    None
                } else {
                    self.goal_of(i)
                }
            })
            .collect();
        for (i, goal) in goals.into_iter().enumerate() {
            if self.entities[i].kind.is_building() {
                continue;
            }
            let e = &self.entities[i];
            let Some((goal, ends_there)) = goal else {
                self.entities[i].walk = 0;
                continue;
            };
            if goal.reached(e.at) {
                let e = &mut self.entities[i];
                e.walk = 0;
                if ends_there {
                    e.job = Job::Idle;
                }
                continue;
            }
            let stale = e.path_goal != Some(goal) || e.path.last().is_some_and(|&(x, y)| !self.walkable(x, y));
            if stale {
                let (side, from) = (e.side, e.at);
                let grid = path::Grid {
                    w: self.map.width(),
                    h: self.map.height(),
                    terrain: &self.terrain,
                    blocked: &self.blocked,
                };
                let found = path::find(&mut self.scratch, &grid, from, goal, side);
                let e = &mut self.entities[i];
                e.path = found;
                e.path_goal = Some(goal);
            }
            let e = &mut self.entities[i];
            if e.path.is_empty() {
                // Nowhere closer to go: the order cannot be carried out.
                e.walk = 0;
                e.job = Job::Idle;
                continue;
            }
            e.walk += 1;
            if e.walk >= e.kind.stats().ticks_per_tile {
                e.walk = 0;
                if let Some(next) = e.path.pop() {
                    e.at = next;
                }
                if ends_there && goal.reached(e.at) {
                    e.job = Job::Idle;
                }
            }
        }
    }

    /// Step 4: every unit whose cooldown is over hits its target in range
    /// (its `attack` target, or for an idle footman or rifleman the nearest
    /// enemy in range); all damage is summed first, then applied, and
    /// whatever reaches 0 hp is removed.
    fn combat(&mut self) {
        let mut damage = vec![0u32; self.entities.len()];
        let mut any = false;
        for i in 0..self.entities.len() {
            let e = &mut self.entities[i];
            if e.kind.is_building() {
                continue;
            }
            e.cooldown = e.cooldown.saturating_sub(1);
            if e.cooldown > 0 {
                continue;
            }
            let (side, at, kind, job) = (e.side, e.at, e.kind, e.job);
            let range = kind.stats().range as i32;
            let in_range = |t: &super::state::Entity| t.side != side && distance(at, 1, t.at, t.size()) <= range;
            let target = match job {
                Job::Attack { target, .. } => self.find(target).filter(|&j| in_range(&self.entities[j])),
                Job::Idle if kind.auto_attacks() => self
                    .nearest(side, at, 1, self.entities.iter().filter(|t| in_range(t)))
                    .and_then(|id| self.find(id)),
                _ => None,
            };
            if let Some(j) = target {
                damage[j] += hit_damage(kind, self.entities[j].kind);
                self.entities[i].cooldown = kind.stats().cooldown;
                any = true;
            }
        }
        if !any {
            return;
        }
        for (e, hit) in self.entities.iter_mut().zip(&damage) {
            e.hp = e.hp.saturating_sub(*hit);
        }
        let dead: Vec<(Tile, i32, bool)> = self
            .entities
            .iter()
            .filter(|e| e.hp == 0)
            .map(|e| (e.at, e.size(), e.kind.is_building()))
            .collect();
        self.entities.retain(|e| e.hp > 0);
        for (at, size, building) in dead {
            if building {
                self.set_blocked(at, size, false);
            }
        }
    }

    /// Step 5a: gathering trips and deposits. Loads are taken from what a
    /// mine or tree held at the start of this step, so two peasants finishing
    /// on the same source in the same tick are treated alike.
    fn gathering(&mut self) {
        let mut finishing: Vec<(usize, Source)> = Vec::new();
        for i in 0..self.entities.len() {
            let e = &self.entities[i];
            let Job::Gather { source, phase } = e.job else { continue };
            let (side, at) = (e.side, e.at);
            // A source that is gone: a woodcutter moves on to a near tree.
            let source = match source {
                Source::Mine(id) if self.mine(id).is_none() => Source::Done,
                Source::Tree(tile) if self.index(tile.0, tile.1).map(|t| self.terrain[t]) != Some(Terrain::Tree) => {
                    self.nearest_tree(side, tile, RETARGET_RADIUS as i32)
                        .map_or(Source::Done, Source::Tree)
                }
                other => other,
            };
            let phase = match phase {
                Phase::ToSource | Phase::Working(_) if source == Source::Done => {
                    if self.entities[i].carry.is_some() {
                        Phase::ToHall(None)
                    } else {
                        self.entities[i].job = Job::Idle;
                        continue;
                    }
                }
                Phase::ToSource if self.touches(at, source) => Phase::Working(0),
                Phase::Working(ticks) => {
                    let needed = if matches!(source, Source::Mine(_)) {
                        MINE_TICKS
                    } else {
                        CHOP_TICKS
                    };
                    if ticks + 1 >= needed {
                        finishing.push((i, source));
                    }
                    Phase::Working(ticks + 1)
                }
                Phase::ToHall(Some(hall))
                    if self.entity(hall).is_some_and(|h| distance(at, 1, h.at, h.size()) <= 1) =>
                {
                    if let Some((resource, amount)) = self.entities[i].carry.take() {
                        let bank = &mut self.bank[side.index()];
                        match resource {
                            Resource::Gold => bank.gold += amount,
                            Resource::Lumber => bank.lumber += amount,
                        }
                    }
                    if source == Source::Done {
                        self.entities[i].job = Job::Idle;
                        continue;
                    }
                    Phase::ToSource
                }
                other => other,
            };
            self.entities[i].job = Job::Gather { source, phase };
        }
        // Loads come from what each source held before anyone took from it.
        let held: Vec<u32> = finishing.iter().map(|&(_, source)| self.held(source)).collect();
        for (&(i, source), &held) in finishing.iter().zip(&held) {
            let amount = held.min(LOAD);
            let resource = if matches!(source, Source::Mine(_)) {
                Resource::Gold
            } else {
                Resource::Lumber
            };
            let e = &mut self.entities[i];
            e.carry = (amount > 0).then_some((resource, amount));
            e.job = Job::Gather {
                source,
                phase: Phase::ToHall(None),
            };
            match source {
                Source::Mine(id) => {
                    if let Some(m) = self.mines.iter_mut().find(|m| m.id == id) {
                        m.gold = m.gold.saturating_sub(amount);
                    }
                }
                Source::Tree((x, y)) => {
                    if let Some(t) = self.index(x, y) {
                        self.lumber[t] = self.lumber[t].saturating_sub(amount);
                    }
                }
                Source::Done => {}
            }
        }
        for &(_, source) in &finishing {
            match source {
                Source::Tree((x, y)) => {
                    if let Some(t) = self.index(x, y)
                        && self.lumber[t] == 0
                        && self.terrain[t] == Terrain::Tree
                    {
                        self.terrain[t] = Terrain::Ground;
                        self.felled.push((x, y));
                    }
                }
                Source::Mine(id) => {
                    if let Some(m) = self.mines.iter().find(|m| m.id == id && m.gold == 0) {
                        let at = m.at;
                        self.mines.retain(|m| m.id != id);
                        self.set_blocked(at, MINE_SIZE as i32, false);
                    }
                }
                Source::Done => {}
            }
        }
    }

    /// What a source holds now.
    fn held(&self, source: Source) -> u32 {
        match source {
            Source::Mine(id) => self.mine(id).map_or(0, |m| m.gold),
            Source::Tree((x, y)) => self.index(x, y).map_or(0, |t| self.lumber[t]),
            Source::Done => 0,
        }
    }

    /// Whether a unit on `at` is next to (Chebyshev 1 of) `source`.
    fn touches(&self, at: Tile, source: Source) -> bool {
        match source {
            Source::Mine(id) => self
                .mine(id)
                .is_some_and(|m| distance(at, 1, m.at, MINE_SIZE as i32) <= 1),
            Source::Tree(tile) => distance(at, 1, tile, 1) <= 1,
            Source::Done => false,
        }
    }

    /// Step 5b: builders next to their footprint start building (paying
    /// then), sites grow, finished buildings free their builder.
    fn construction(&mut self) {
        // Sites that existed before this tick grow.
        for e in self.entities.iter_mut().filter(|e| !e.built) {
            let stats = e.kind.stats();
            let start = (stats.hp / super::units::SITE_HP_DIVISOR).max(1);
            let gain = stats.hp - start;
            let before = gain * e.progress / stats.time;
            e.progress += 1;
            let after = gain * e.progress / stats.time;
            e.hp = (e.hp + after - before).min(stats.hp);
            if e.progress >= stats.time {
                e.built = true;
                e.progress = 0;
            }
        }
        let sites: Vec<u32> = self.entities.iter().filter(|e| !e.built).map(|e| e.id).collect();
        for e in self.entities.iter_mut() {
            if let Job::Build { site: Some(site), .. } = e.job
                && !sites.contains(&site)
            {
                e.job = Job::Idle;
            }
        }
        // Builders that have arrived.
        let mut starting: Vec<(usize, Kind, Tile)> = Vec::new();
        for (i, e) in self.entities.iter().enumerate() {
            if let Job::Build { kind, at, site: None } = e.job
                && distance(e.at, 1, at, kind.stats().size as i32) <= 1
            {
                starting.push((i, kind, at));
            }
        }
        if starting.is_empty() {
            return;
        }
        let overlaps = |a: &(usize, Kind, Tile), b: &(usize, Kind, Tile)| {
            let (sa, sb) = (a.1.stats().size as i32, b.1.stats().size as i32);
            a.2.0 < b.2.0 + sb && b.2.0 < a.2.0 + sa && a.2.1 < b.2.1 + sb && b.2.1 < a.2.1 + sa
        };
        let mut placed: Vec<(Side, Kind, Tile, u32)> = Vec::new();
        for (n, start) in starting.iter().enumerate() {
            let (i, kind, at) = *start;
            let size = kind.stats().size as i32;
            let side = self.entities[i].side;
            let stats = kind.stats();
            let clash = starting
                .iter()
                .enumerate()
                .any(|(m, other)| m != n && overlaps(start, other));
            let clear = (at.1..at.1 + size).all(|y| (at.0..at.0 + size).all(|x| self.walkable(x, y)));
            let bank = &mut self.bank[side.index()];
            if clash || !clear || bank.gold < stats.gold || bank.lumber < stats.lumber {
                self.entities[i].job = Job::Idle;
                continue;
            }
            bank.gold -= stats.gold;
            bank.lumber -= stats.lumber;
            let builder = self.entities[i].id;
            let site = self.add(side, kind, at, false);
            placed.push((side, kind, at, builder));
            if let Some(b) = self.find(builder) {
                self.entities[b].job = Job::Build {
                    kind,
                    at,
                    site: Some(site),
                };
            }
        }
        // Units standing on a new footprint step to the nearest free tile.
        for (_, kind, at, _) in placed {
            let size = kind.stats().size as i32;
            for i in 0..self.entities.len() {
                let e = &self.entities[i];
                if e.kind.is_building() || distance(e.at, 1, at, size) > 0 {
                    continue;
                }
                if let Some(free) = self.free_tile_near(e.side, e.at, 1, 1) {
                    let e = &mut self.entities[i];
                    e.at = free;
                    e.path.clear();
                    e.path_goal = None;
                }
            }
        }
    }

    /// Step 5c: queue heads start when their side has the food, train, and
    /// appear on the nearest free ground tile next to their building.
    fn training(&mut self) {
        for i in 0..self.entities.len() {
            let e = &self.entities[i];
            if !e.built || e.queue.is_empty() {
                continue;
            }
            let side = e.side;
            let Some(&head) = e.queue.first() else { continue };
            if !e.training {
                if self.food_used(side) + head.stats().food > self.food_cap(side) {
                    continue;
                }
                let e = &mut self.entities[i];
                e.training = true;
                e.progress = 0;
            }
            let e = &mut self.entities[i];
            e.progress = (e.progress + 1).min(head.stats().time);
            if e.progress < head.stats().time {
                continue;
            }
            let (at, size) = (e.at, e.size());
            if let Some(tile) = self.free_tile_near(side, at, size, 1) {
                let e = &mut self.entities[i];
                e.queue.remove(0);
                e.training = false;
                e.progress = 0;
                self.add(side, head, tile, true);
            }
        }
    }

    /// Step 6: elimination (a side without buildings), then the tick limit.
    fn verdict(&mut self) {
        if self.outcome.is_some() {
            return;
        }
        let alive = Side::BOTH.map(|side| self.entities.iter().any(|e| e.side == side && e.kind.is_building()));
        let outcome = match alive {
            [true, true] if self.tick < TICK_LIMIT => return,
            [true, true] => {
                let [a, b] = self.scores();
                Outcome {
                    scores: half_points(a.cmp(&b)),
                    reason: FinishReason::Score,
                    faulted: None,
                }
            }
            [a, b] => Outcome {
                scores: half_points(a.cmp(&b)),
                reason: FinishReason::Elimination,
                faulted: None,
            },
        };
        self.outcome = Some(outcome);
    }

    /// Each side's score now: banked gold + lumber, plus for every unit and
    /// building (sites included) its gold + lumber cost × hp / max hp,
    /// rounded down per unit. Queued units and carried loads do not count.
    pub fn scores(&self) -> [u64; 2] {
        Side::BOTH.map(|side| {
            let bank = self.bank[side.index()];
            let things: u64 = self
                .entities
                .iter()
                .filter(|e| e.side == side)
                .map(|e| {
                    let stats = e.kind.stats();
                    u64::from(stats.gold + stats.lumber) * u64::from(e.hp) / u64::from(stats.hp)
                })
                .sum();
            u64::from(bank.gold) + u64::from(bank.lumber) + things
        })
    }
}

/// 2 for a win, 1 for a draw, 0 for a loss, from the first side's view.
fn half_points(first: std::cmp::Ordering) -> [u32; 2] {
    match first {
        std::cmp::Ordering::Greater => [2, 0],
        std::cmp::Ordering::Equal => [1, 1],
        std::cmp::Ordering::Less => [0, 2],
    }
}
