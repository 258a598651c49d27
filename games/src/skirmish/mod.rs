//! Skirmish: a small tick-based real-time strategy game under fog of war
//! (`docs/spec/skirmish.md` is the normative spec; this module is its rules).
//!
//! Both sides act at once every tick. The referee asks each side with its
//! [`Observation`] (its own units, the enemies and mines in its vision),
//! parses each reply with [`Skirmish::parse_reply`], and advances the game
//! with [`Skirmish::step`]; each action is checked, ownership first, and a
//! bad action is rejected with a [`Reason`] shown in that side's next
//! observation, never applied.
//!
//! ```
//! use arbiter_games::Side;
//! use arbiter_games::skirmish::{Map, Skirmish};
//!
//! let mut game = Skirmish::new(Map::builtin("duel32").expect("built in"), 7);
//! let obs = game.observation(Side::First, 1_000);
//! let hall = obs.units.iter().find(|u| u.kind.code() == "htow").expect("a town hall");
//! let line = format!(r#"{{"t":"act","tick":0,"actions":[{{"do":"train","unit":{},"code":"hpea"}}]}}"#, hall.id);
//! let reply = game.parse_reply(Side::First, &line).expect("a valid reply");
//! let record = game.step([Some(reply), None]).expect("the game goes on");
//! assert_eq!(record.sides[0].accepted.len(), 1);
//! assert_eq!(game.observation(Side::First, 20).res.gold, 500 - 75);
//! ```
//!
//! # Guarantees
//!
//! - Pure and deterministic, integers only: the same map, seed and replies
//!   give the same game on every platform.
//! - Fair: every tie (paths, spawn tiles, nearest enemy, hall or tree) is
//!   broken in an order relative to the side, the second side's being the
//!   half-turn image of the first's, so a game and its mirror image (sides
//!   and start positions swapped, every bot's view rotated) play out as
//!   exact mirror images.
//! - An observation holds nothing a side cannot see, and no action of a side
//!   changes a unit it does not own.
//! - Nothing a bot writes panics: a reply is an [`ActReply`] or a
//!   [`ReplyError`]; bad actions are rejected one by one.
//!
//! It does not measure time: the referee decides which replies came in time
//! and passes `None` for a side it skipped.

mod map;
mod observation;
mod orders;
mod path;
mod record;
mod state;
mod tick;
mod units;

#[cfg(test)]
mod tests;

pub use map::{BUILTIN, Map, MapError, Terrain};
pub use observation::{
    Carry, DEADLINE_MS, EnemyView, FIRST_DEADLINE_MS, MapView, MineView, Observation, OrderName, Res, Target, TileRef,
    UnitView, deadline_ms, fnv1a, observation_digest,
};
pub use orders::{Accepted, ActReply, GatherTarget, Order, RawAction, Reason, Rejection, parse_action, parse_reply};
pub use record::{GameRecord, RULES_VERSION, ReplayError, SideTick, TickRecord};
pub use state::Skirmish;
pub use units::{
    ACTION_LIMIT, CHOP_TICKS, FOOD_LIMIT, Kind, LOAD, MINE_GOLD, MINE_TICKS, QUEUE_LIMIT, Stats, TICK_LIMIT, TICK_MS,
    TREE_LUMBER, hit_damage,
};

use crate::{FinishReason, Outcome, ReplyError, Side};
use serde::{Deserialize, Serialize};

/// Everything on the map, for spectators, replays and tests: what no bot
/// ever receives whole.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Spectator {
    /// The tick.
    pub tick: u32,
    /// Each side's bank and food, by [`Side::index`].
    pub res: [Res; 2],
    /// Every unit and building, ascending id, as its owner sees it.
    pub units: Vec<UnitView>,
    /// Every mine with gold left.
    pub mines: Vec<MineView>,
    /// Every felled tree, in the order they fell.
    pub felled: Vec<TileRef>,
}

impl Skirmish {
    /// The tick about to be played (0 to 2 999; 3 000 once the limit is
    /// reached).
    pub fn tick(&self) -> u32 {
        self.tick
    }

    /// The map being played.
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// The seed given to [`Skirmish::new`].
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Whether the game has ended (verdict or forfeit).
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }

    /// The outcome once the game is over: 2 points for a win, 1 each for a
    /// draw, 0 for a loss, with [`FinishReason::Elimination`] or
    /// [`FinishReason::Score`] (or the forfeit's reason).
    pub fn outcome(&self) -> Option<Outcome> {
        self.outcome
    }

    /// Like [`Skirmish::observation`], and records the observation's digest
    /// in this tick's record, so a replay checks it.
    pub fn observe(&mut self, side: Side, deadline_ms: u64) -> Observation {
        let observation = self.observation(side, deadline_ms);
        self.digests[side.index()] = Some(observation_digest(&observation));
        observation
    }

    /// Parses `side`'s reply line (see [`parse_reply`]). Never panics.
    pub fn parse_reply(&self, _side: Side, line: &str) -> Result<ActReply, ReplyError> {
        parse_reply(line)
    }

    /// Plays one tick: checks and applies each side's actions (a `None`
    /// reply, or one whose `tick` is not the current tick, skips that side:
    /// its units keep their orders), then movement, combat, economy and the
    /// verdict. Returns the tick's record, or `None` if the game was already
    /// over.
    pub fn step(&mut self, replies: [Option<ActReply>; 2]) -> Option<&TickRecord> {
        if self.is_over() {
            return None;
        }
        let mut record = TickRecord {
            tick: self.tick,
            sides: Default::default(),
        };
        for side in Side::BOTH {
            let entry = &mut record.sides[side.index()];
            entry.digest = self.digests[side.index()].take();
            match &replies[side.index()] {
                Some(reply) if reply.tick == i64::from(self.tick) => {
                    let (accepted, rejected) = self.apply_reply(side, reply);
                    self.rejected[side.index()] = rejected.clone();
                    entry.accepted = accepted;
                    entry.rejected = rejected;
                }
                _ => {
                    self.rejected[side.index()].clear();
                    entry.skipped = true;
                }
            }
        }
        self.log.push(record);
        self.simulate();
        if let Some(outcome) = self.outcome {
            self.finish(outcome);
        }
        self.log.last()
    }

    /// Ends the game with `loser` at fault for `reason` (a crash or a bad
    /// reply): the other side wins. Returns the game's outcome (the earlier
    /// one if the game was already over).
    pub fn forfeit(&mut self, loser: Side, reason: FinishReason) -> Outcome {
        if let Some(outcome) = self.outcome {
            return outcome;
        }
        let mut scores = [2, 2];
        scores[loser.index()] = 0;
        let outcome = Outcome {
            scores,
            reason,
            faulted: Some(loser),
        };
        self.finish(outcome);
        outcome
    }

    pub(super) fn finish(&mut self, outcome: Outcome) {
        self.outcome = Some(outcome);
    }

    /// The record of the game so far: setup, every tick, the outcome.
    pub fn record(&self) -> GameRecord {
        GameRecord {
            version: RULES_VERSION,
            map: self.map.name().to_string(),
            map_text: self.map.text(),
            seed: self.seed,
            ticks: self.log.clone(),
            outcome: self.outcome,
        }
    }

    /// Whether `side` sees the tile `(x, y)` now (false off the map).
    pub fn in_vision(&self, side: Side, x: i32, y: i32) -> bool {
        self.sees_tile(side, x, y)
    }

    /// The whole state, for spectators and tests.
    pub fn spectate(&self) -> Spectator {
        Spectator {
            tick: self.tick,
            res: Side::BOTH.map(|side| {
                let bank = self.bank[side.index()];
                Res {
                    gold: bank.gold,
                    lumber: bank.lumber,
                    food: [self.food_used(side), self.food_cap(side)],
                }
            }),
            units: self.entities.iter().map(|e| self.unit_view(e)).collect(),
            mines: self
                .mines
                .iter()
                .map(|m| MineView {
                    id: m.id,
                    x: m.at.0,
                    y: m.at.1,
                    gold: m.gold,
                })
                .collect(),
            felled: self.felled.iter().map(|&(x, y)| TileRef { x, y }).collect(),
        }
    }
}
