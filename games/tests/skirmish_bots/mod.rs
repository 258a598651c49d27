//! In-process skirmish bots for the tests and the bench: an idle bot, a
//! scripted economy-and-rush bot, and a random (optionally hostile) bot.
//!
//! Every bot thinks in its own frame: side 2 sees the map turned by a half
//! turn, so the same bot on either start position plays the mirror image of
//! the same game (ids are only compared within one side, mines and tiles by
//! their place in the bot's frame).

#![allow(dead_code, reason = "each test binary uses a part of the bots")]

use arbiter_games::Side;
use arbiter_games::skirmish::{Kind, Observation, OrderName, Skirmish, UnitView, deadline_ms};
use serde_json::{Value, json};

/// A bot: one `act` line per observation.
pub trait Bot {
    /// The actions for this observation (the `actions` array's elements).
    fn act(&mut self, obs: &Observation) -> Vec<Value>;

    /// The full reply line.
    fn reply(&mut self, obs: &Observation) -> String {
        let actions = self.act(obs);
        json!({"t": "act", "tick": obs.tick, "actions": actions}).to_string()
    }
}

/// Does nothing, ever.
pub struct Idle;

impl Bot for Idle {
    fn act(&mut self, _obs: &Observation) -> Vec<Value> {
        Vec::new()
    }
}

/// The half-turn frame of a side: its own coordinates to the map's and back
/// (the same operation both ways).
#[derive(Clone, Copy, Debug, Default)]
pub struct Frame {
    pub flip: bool,
    pub w: i32,
    pub h: i32,
}

impl Frame {
    pub fn of(obs: &Observation) -> Frame {
        let map = obs.map.as_ref().expect("tick 0 carries the map");
        Frame {
            flip: obs.me == 2,
            w: map.w,
            h: map.h,
        }
    }

    /// The square `size`×`size` at `(x, y)` seen from the other frame.
    pub fn turn(&self, x: i32, y: i32, size: i32) -> (i32, i32) {
        if self.flip {
            (self.w - x - size, self.h - y - size)
        } else {
            (x, y)
        }
    }
}

/// A small xorshift generator.
#[derive(Clone, Debug)]
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
}

fn size_of(kind: Kind) -> i32 {
    kind.stats().size as i32
}

/// Chebyshev distance between closest tiles of two squares.
pub fn distance(a: (i32, i32), a_size: i32, b: (i32, i32), b_size: i32) -> i32 {
    let gap = |a0: i32, al: i32, b0: i32, bl: i32| (b0 - (a0 + al - 1)).max(a0 - (b0 + bl - 1)).max(0);
    gap(a.0, a_size, b.0, b_size).max(gap(a.1, a_size, b.1, b_size))
}

/// A candidate place and its sort key.
type Ranked = ((i32, i32, i32), (i32, i32));

/// What a bot remembers of the map, in its own frame.
#[derive(Clone, Debug, Default)]
struct Memory {
    frame: Frame,
    /// `terrain[y][x]`: `.`, `T` or `#`.
    terrain: Vec<Vec<u8>>,
}

impl Memory {
    fn update(&mut self, obs: &Observation) {
        if let Some(map) = &obs.map {
            self.frame = Frame::of(obs);
            let rows: Vec<Vec<u8>> = map.rows.iter().map(|r| r.as_bytes().to_vec()).collect();
            self.terrain = (0..map.h)
                .map(|y| {
                    (0..map.w)
                        .map(|x| {
                            let (mx, my) = self.frame.turn(x, y, 1);
                            rows[my as usize][mx as usize]
                        })
                        .collect()
                })
                .collect();
        }
        for tile in &obs.cleared {
            let (x, y) = self.frame.turn(tile.x, tile.y, 1);
            self.terrain[y as usize][x as usize] = b'.';
        }
    }

    fn at(&self, x: i32, y: i32) -> u8 {
        if x < 0 || y < 0 || y >= self.frame.h || x >= self.frame.w {
            b'#'
        } else {
            self.terrain[y as usize][x as usize]
        }
    }

    /// A unit's or building's top-left tile in the bot's frame.
    fn pos(&self, u: &UnitView) -> (i32, i32) {
        self.frame.turn(u.x, u.y, size_of(u.kind))
    }

    /// A tile of the bot's frame as map coordinates, as JSON fields.
    fn out(&self, (x, y): (i32, i32), size: i32) -> (i32, i32) {
        self.frame.turn(x, y, size)
    }
}

/// A scripted bot: peasants gather gold (and one in four lumber), the hall
/// trains up to 8 peasants, a peasant builds a barracks and farms, the
/// barracks trains footmen, and from 6 footmen on the army attacks the
/// enemy's start.
#[derive(Clone, Debug, Default)]
pub struct Rusher {
    memory: Memory,
    home_mine: Option<u32>,
    attacking: bool,
}

impl Rusher {
    pub fn new() -> Rusher {
        Rusher::default()
    }

    /// A free spot for a `size` building near `around` (own frame), away
    /// from known structures by one tile, or `None`.
    fn spot(&self, obs: &Observation, around: (i32, i32), around_size: i32, size: i32) -> Option<(i32, i32)> {
        let m = &self.memory;
        let mut taken: Vec<((i32, i32), i32)> = obs
            .units
            .iter()
            .filter(|u| u.kind.is_building())
            .map(|u| (m.pos(u), size_of(u.kind)))
            .collect();
        taken.extend(
            obs.visible_enemies
                .iter()
                .filter(|u| u.kind.is_building())
                .map(|u| (m.frame.turn(u.x, u.y, size_of(u.kind)), size_of(u.kind))),
        );
        taken.extend(obs.mines.iter().map(|mine| (m.frame.turn(mine.x, mine.y, 2), 2)));
        let mut best: Option<Ranked> = None;
        for y in (around.1 - 8)..(around.1 + 9) {
            for x in (around.0 - 8)..(around.0 + 9) {
                let d = distance((x, y), size, around, around_size);
                if d < 2 {
                    continue;
                }
                let ground = (y..y + size).all(|ty| (x..x + size).all(|tx| m.at(tx, ty) == b'.'));
                let clear = taken.iter().all(|&(at, s)| distance((x, y), size, at, s) >= 2);
                if ground && clear {
                    let key = (d, y, x);
                    if best.is_none_or(|(k, _)| key < k) {
                        best = Some((key, (x, y)));
                    }
                }
            }
        }
        best.map(|(_, at)| at)
    }
}

impl Bot for Rusher {
    fn act(&mut self, obs: &Observation) -> Vec<Value> {
        self.memory.update(obs);
        let m = &self.memory;
        let mut actions = Vec::new();
        let Some(hall) = obs.units.iter().find(|u| u.kind == Kind::TownHall) else {
            return actions;
        };
        let hall_at = m.pos(hall);
        if self.home_mine.is_none() {
            self.home_mine = obs
                .mines
                .iter()
                .min_by_key(|mine| {
                    let at = m.frame.turn(mine.x, mine.y, 2);
                    (distance(at, 2, hall_at, 3), at.1, at.0)
                })
                .map(|mine| mine.id);
        }
        let peasants: Vec<&UnitView> = obs.units.iter().filter(|u| u.kind == Kind::Peasant).collect();
        let footmen: Vec<&UnitView> = obs.units.iter().filter(|u| u.kind == Kind::Footman).collect();
        let barracks = obs.units.iter().find(|u| u.kind == Kind::Barracks);
        let building = peasants.iter().any(|p| p.order == Some(OrderName::Build));
        let (mut gold, mut lumber) = (obs.res.gold, obs.res.lumber);
        let [used, cap] = obs.res.food;
        // Economy: idle peasants go to work.
        let tree = {
            let mut best: Option<Ranked> = None;
            for y in 0..m.frame.h {
                for x in 0..m.frame.w {
                    if m.at(x, y) == b'T' {
                        let key = (distance((x, y), 1, hall_at, 3), y, x);
                        if best.is_none_or(|(k, _)| key < k) {
                            best = Some((key, (x, y)));
                        }
                    }
                }
            }
            best.map(|(_, at)| at)
        };
        for (i, p) in peasants.iter().enumerate() {
            if p.order.is_some() {
                continue;
            }
            match (i % 4, tree, self.home_mine) {
                (3, Some(t), _) => {
                    let (x, y) = m.out(t, 1);
                    actions.push(json!({"do": "gather", "unit": p.id, "target": {"x": x, "y": y}}));
                }
                (_, _, Some(mine)) => actions.push(json!({"do": "gather", "unit": p.id, "target": mine})),
                _ => {}
            }
        }
        let queued = hall.queue.as_ref().map_or(0, Vec::len);
        if peasants.len() + queued < 8 && queued == 0 && gold >= 75 {
            actions.push(json!({"do": "train", "unit": hall.id, "code": "hpea"}));
            gold -= 75;
        }
        let builder = peasants
            .iter()
            .rev()
            .find(|p| p.order == Some(OrderName::Gather) && p.carry.is_some_and(|c| c.gold + c.lumber == 0));
        if !building && let Some(builder) = builder {
            if barracks.is_none() && peasants.len() >= 6 && gold >= 160 && lumber >= 60 {
                if let Some(at) = self.spot(obs, hall_at, 3, 3) {
                    let (x, y) = m.out(at, 3);
                    actions.push(json!({"do": "build", "unit": builder.id, "code": "hbar", "x": x, "y": y}));
                    gold -= 160;
                    lumber -= 60;
                }
            } else if barracks.is_some() && used + 3 >= cap && cap < 60 && gold >= 80 && lumber >= 20 {
                let site = obs.units.iter().any(|u| u.kind == Kind::Farm && u.built == Some(false));
                if !site && let Some(at) = self.spot(obs, hall_at, 3, 2) {
                    let (x, y) = m.out(at, 2);
                    actions.push(json!({"do": "build", "unit": builder.id, "code": "hhou", "x": x, "y": y}));
                    gold -= 80;
                }
            }
        }
        let _ = lumber;
        if let Some(b) = barracks
            && b.built == Some(true)
            && b.queue.as_ref().map_or(0, Vec::len) < 2
            && gold >= 135
        {
            actions.push(json!({"do": "train", "unit": b.id, "code": "hfoo"}));
        }
        // Army.
        if footmen.len() >= 6 {
            self.attacking = true;
        }
        if self.attacking {
            let enemy_start = (m.frame.w - hall_at.0 - 3, m.frame.h - hall_at.1 - 3);
            for f in &footmen {
                if f.order == Some(OrderName::Attack) {
                    continue;
                }
                let at = m.pos(f);
                let target = obs
                    .visible_enemies
                    .iter()
                    .filter(|e| e.kind.is_building())
                    .min_by_key(|e| {
                        let eat = m.frame.turn(e.x, e.y, size_of(e.kind));
                        (distance(at, 1, eat, size_of(e.kind)), eat.1, eat.0, e.id)
                    });
                match target {
                    Some(t) => actions.push(json!({"do": "attack", "unit": f.id, "target": t.id})),
                    None if f.order.is_none() => {
                        let (x, y) = m.out((enemy_start.0 + 1, enemy_start.1 + 1), 1);
                        actions.push(json!({"do": "move", "unit": f.id, "x": x, "y": y}));
                    }
                    None => {}
                }
            }
        }
        actions.truncate(32);
        actions
    }
}

/// A random bot. Frame-safe choices only (own units and visible enemies by
/// rank, mines by place, tiles in its own frame) unless `hostile`, which
/// adds orders for enemy and made-up ids, garbage elements, unknown orders
/// and codes, and coordinates off the map.
#[derive(Clone, Debug)]
pub struct Random {
    memory: Memory,
    rng: Rng,
    hostile: bool,
    /// Only orders for enemy ids (to check they change nothing).
    pub only_enemy_ids: bool,
}

impl Random {
    pub fn new(seed: u64, hostile: bool) -> Random {
        Random {
            memory: Memory::default(),
            rng: Rng(seed | 1),
            hostile,
            only_enemy_ids: false,
        }
    }
}

const CODES: [&str; 6] = ["hpea", "hfoo", "hrif", "htow", "hhou", "hbar"];

impl Bot for Random {
    fn act(&mut self, obs: &Observation) -> Vec<Value> {
        self.memory.update(obs);
        let m = &self.memory;
        let rng = &mut self.rng;
        let (w, h) = (m.frame.w, m.frame.h);
        let mut mines: Vec<((i32, i32), u32)> = obs
            .mines
            .iter()
            .map(|mine| (m.frame.turn(mine.x, mine.y, 2), mine.id))
            .collect();
        mines.sort();
        let count = rng.below(if self.hostile { 40 } else { 6 });
        let mut actions = Vec::new();
        for _ in 0..count {
            if self.only_enemy_ids {
                if let Some(e) = obs
                    .visible_enemies
                    .get(rng.below(obs.visible_enemies.len() as u64) as usize)
                {
                    let (x, y) = (rng.below(w as u64) as i32, rng.below(h as u64) as i32);
                    let verb = ["move", "stop", "attack"][rng.below(3) as usize];
                    actions.push(json!({"do": verb, "unit": e.id, "x": x, "y": y, "target": e.id}));
                }
                let id = rng.below(200);
                if obs.units.iter().all(|u| u64::from(u.id) != id) {
                    actions.push(json!({"do": "train", "unit": id, "code": "hpea"}));
                }
                continue;
            }
            let unit = match obs.units.get(rng.below(obs.units.len() as u64) as usize) {
                Some(u) => u,
                None => break,
            };
            let (fx, fy) = (rng.below(w as u64) as i32, rng.below(h as u64) as i32);
            let action = match rng.below(if self.hostile { 12 } else { 7 }) {
                0 | 1 => {
                    let (x, y) = m.out((fx, fy), 1);
                    json!({"do": "move", "unit": unit.id, "x": x, "y": y})
                }
                2 => match obs
                    .visible_enemies
                    .get(rng.below(obs.visible_enemies.len() as u64) as usize)
                {
                    Some(e) => json!({"do": "attack", "unit": unit.id, "target": e.id}),
                    None => json!({"do": "stop", "unit": unit.id}),
                },
                3 => {
                    if rng.below(2) == 0
                        && let Some(&(_, id)) = mines.get(rng.below(mines.len() as u64) as usize)
                    {
                        json!({"do": "gather", "unit": unit.id, "target": id})
                    } else {
                        // A tree near the unit, in its frame.
                        let at = m.pos(unit);
                        let (tx, ty) = (at.0 + rng.below(9) as i32 - 4, at.1 + rng.below(9) as i32 - 4);
                        let (x, y) = m.out((tx, ty), 1);
                        json!({"do": "gather", "unit": unit.id, "target": {"x": x, "y": y}})
                    }
                }
                4 => {
                    let code = ["htow", "hhou", "hbar"][rng.below(3) as usize];
                    let size = Kind::from_code(code).map_or(1, size_of);
                    let at = m.pos(unit);
                    let (bx, by) = (at.0 + rng.below(11) as i32 - 5, at.1 + rng.below(11) as i32 - 5);
                    let (x, y) = m.out((bx, by), size);
                    json!({"do": "build", "unit": unit.id, "code": code, "x": x, "y": y})
                }
                5 => json!({"do": "train", "unit": unit.id, "code": CODES[rng.below(3) as usize]}),
                6 => json!({"do": "stop", "unit": unit.id}),
                // Hostile only.
                7 => match obs
                    .visible_enemies
                    .get(rng.below(obs.visible_enemies.len() as u64) as usize)
                {
                    Some(e) => json!({"do": "move", "unit": e.id, "x": fx, "y": fy}),
                    None => json!({"do": "stop", "unit": rng.below(300)}),
                },
                8 => {
                    let verb = ["fly", "", "MOVE"][rng.below(3) as usize];
                    json!({"do": verb, "unit": unit.id})
                }
                9 => {
                    let code = ["hxxx", "", "HPEA"][rng.below(3) as usize];
                    json!({"do": "train", "unit": unit.id, "code": code})
                }
                10 => json!({"do": "move", "unit": unit.id, "x": -(rng.below(5) as i64) - 1, "y": i64::MAX}),
                _ => [
                    json!(7),
                    json!(null),
                    json!({"unit": "x"}),
                    json!({"do": "move", "unit": unit.id, "x": 1.5, "y": 2}),
                ][rng.below(4) as usize]
                    .clone(),
            };
            actions.push(action);
        }
        actions
    }
}

/// Plays `game` with one bot per side for at most `ticks` ticks (or to the
/// end), checking every reply parses. Calls `each` after every tick.
pub fn play(game: &mut Skirmish, bots: [&mut dyn Bot; 2], ticks: u32, mut each: impl FnMut(&Skirmish)) {
    let [first, second] = bots;
    for _ in 0..ticks {
        if game.is_over() {
            return;
        }
        let deadline = deadline_ms(game.tick());
        let lines = [
            first.reply(&game.observe(Side::First, deadline)),
            second.reply(&game.observe(Side::Second, deadline)),
        ];
        let replies = Side::BOTH.map(|side| {
            Some(
                game.parse_reply(side, &lines[side.index()])
                    .unwrap_or_else(|e| panic!("bot reply {}: {e}", lines[side.index()])),
            )
        });
        game.step(replies);
        each(game);
    }
}
