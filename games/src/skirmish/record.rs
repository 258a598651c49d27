//! The record of a game: enough to re-simulate it and to check every
//! observation against its digest.

use super::Skirmish;
use super::map::{Map, MapError};
use super::observation::observation_digest;
use super::orders::{Accepted, Rejection};
use crate::{Outcome, Side};
use serde::{Deserialize, Serialize};

/// Version of the rules (the table's numbers included); recorded in every
/// game record.
pub const RULES_VERSION: u32 = 1;

/// What one side did in one tick.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SideTick {
    /// The side sent no reply for this tick in time (its units kept their
    /// orders).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub skipped: bool,
    /// The accepted orders, ascending index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub accepted: Vec<Accepted>,
    /// The rejected actions, ascending index.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rejected: Vec<Rejection>,
    /// Digest of the observation the side received at this tick, when the
    /// referee took it with [`Skirmish::observe`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub digest: Option<u64>,
}

/// One tick of the record.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TickRecord {
    /// The tick.
    pub tick: u32,
    /// Each side, by [`Side::index`].
    pub sides: [SideTick; 2],
}

/// A whole game: the setup and every tick.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    /// [`RULES_VERSION`] of the rules that played it.
    pub version: u32,
    /// The map's name.
    pub map: String,
    /// The map's text (so a custom map replays too).
    pub map_text: String,
    /// The seed given to [`Skirmish::new`].
    pub seed: u64,
    /// Every tick played, in order.
    pub ticks: Vec<TickRecord>,
    /// The outcome, once the game is over.
    pub outcome: Option<Outcome>,
}

/// Why a record does not replay.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplayError {
    /// The record was made by other rules.
    #[error("the record is of rules version {0}, these rules are version {RULES_VERSION}")]
    Version(u32),
    /// The map text does not parse.
    #[error("the record's map is not valid: {0}")]
    Map(#[from] MapError),
    /// Ticks out of order, or ticks after the end.
    #[error("tick {found} recorded where tick {expected} was due")]
    Tick {
        /// The tick the game was at.
        expected: u32,
        /// The tick recorded.
        found: u32,
    },
    /// An accepted order that the re-simulation rejects.
    #[error("tick {tick}: the order at index {index} of side {side} is rejected on replay")]
    Diverged {
        /// The tick.
        tick: u32,
        /// 1 or 2.
        side: u8,
        /// Index of the action in the reply.
        index: u32,
    },
    /// An observation whose digest differs from the record's.
    #[error("tick {tick}: the observation of side {side} differs from the record")]
    Digest {
        /// The tick.
        tick: u32,
        /// 1 or 2.
        side: u8,
    },
    /// The re-simulation ends otherwise than the record says.
    #[error("the replay ends with {found:?}, the record says {recorded:?}")]
    Outcome {
        /// The recorded outcome.
        recorded: Option<Outcome>,
        /// The re-simulated outcome.
        found: Option<Outcome>,
    },
}

impl GameRecord {
    /// Re-simulates the game, checking each recorded digest against the
    /// observation rebuilt with `deadline(tick)` as budget, and the outcome.
    /// Returns the final state.
    pub fn replay_with(&self, deadline: impl Fn(u32) -> u64) -> Result<Skirmish, ReplayError> {
        self.replay_observed(deadline, |_, _, _| {})
    }

    /// The game as training data: one JSON line per tick and side, in
    /// order, `{"tick", "side", "obs", "skipped", "accepted", "rejected"}`
    /// with the full observation the side received (`deadline(tick)` as its
    /// budget) and what became of its reply. Re-simulates the game as
    /// [`GameRecord::replay_with`] does, so a record that does not replay
    /// gives its error, not lines.
    pub fn training_lines(&self, deadline: impl Fn(u32) -> u64) -> Result<Vec<String>, ReplayError> {
        let mut lines = Vec::with_capacity(self.ticks.len() * 2);
        self.replay_observed(deadline, |record, side, observation| {
            let taken = &record.sides[side.index()];
            let line = serde_json::json!({
                "tick": record.tick,
                "side": side.index() + 1,
                "obs": observation,
                "skipped": taken.skipped,
                "accepted": taken.accepted,
                "rejected": taken.rejected,
            });
            lines.push(line.to_string());
        })?;
        Ok(lines)
    }

    /// [`GameRecord::replay_with`], calling `observe(tick, side, obs)` with
    /// every observation rebuilt.
    fn replay_observed(
        &self,
        deadline: impl Fn(u32) -> u64,
        observe: impl FnMut(&TickRecord, Side, &super::Observation),
    ) -> Result<Skirmish, ReplayError> {
        let game = self.simulate(&deadline, observe)?;
        self.check_outcome(&game)?;
        Ok(game)
    }

    /// Re-simulates the game (checking every digest and the outcome),
    /// showing `visit` the state at the start and after every tick: what a
    /// viewer draws.
    pub fn states(&self, deadline: impl Fn(u32) -> u64, mut visit: impl FnMut(&Skirmish)) -> Result<(), ReplayError> {
        if self.version != RULES_VERSION {
            return Err(ReplayError::Version(self.version));
        }
        let map = Map::parse(&self.map, &self.map_text)?;
        visit(&Skirmish::new(map, self.seed));
        let game = self.simulate_visiting(&deadline, |_, _, _| {}, &mut visit)?;
        self.check_outcome(&game)
    }

    /// Whether the re-simulated `game` ends as recorded (a forfeit leaves
    /// the game running in the rules: it ends where the record stops).
    fn check_outcome(&self, game: &Skirmish) -> Result<(), ReplayError> {
        let found = game.outcome();
        let forfeited = self.outcome.is_some_and(|o| o.faulted.is_some());
        if found != self.outcome && !(forfeited && found.is_none()) {
            return Err(ReplayError::Outcome {
                recorded: self.outcome,
                found,
            });
        }
        Ok(())
    }

    /// Re-simulates every recorded tick, checking each digest and calling
    /// `observe` with every observation rebuilt; the outcome is not checked.
    fn simulate(
        &self,
        deadline: &impl Fn(u32) -> u64,
        observe: impl FnMut(&TickRecord, Side, &super::Observation),
    ) -> Result<Skirmish, ReplayError> {
        self.simulate_visiting(deadline, observe, |_| {})
    }

    /// [`GameRecord::simulate`], also showing `after` the state after every
    /// tick.
    fn simulate_visiting(
        &self,
        deadline: &impl Fn(u32) -> u64,
        mut observe: impl FnMut(&TickRecord, Side, &super::Observation),
        mut after: impl FnMut(&Skirmish),
    ) -> Result<Skirmish, ReplayError> {
        if self.version != RULES_VERSION {
            return Err(ReplayError::Version(self.version));
        }
        let map = Map::parse(&self.map, &self.map_text)?;
        let mut game = Skirmish::new(map, self.seed);
        for record in &self.ticks {
            if record.tick != game.tick() || game.is_over() {
                return Err(ReplayError::Tick {
                    expected: game.tick(),
                    found: record.tick,
                });
            }
            for side in Side::BOTH {
                let recorded = &record.sides[side.index()];
                let observation = game.observation(side, deadline(record.tick));
                if let Some(digest) = recorded.digest
                    && observation_digest(&observation) != digest
                {
                    return Err(ReplayError::Digest {
                        tick: record.tick,
                        side: side.index() as u8 + 1,
                    });
                }
                observe(record, side, &observation);
            }
            game.step_recorded(record)?;
            after(&game);
        }
        Ok(game)
    }

    /// The observation `side` received at `tick` (rebuilt with
    /// `deadline(tick)` as its budget), re-simulating the game up to it;
    /// `tick` may be the tick after the last one recorded (the next
    /// observation of a game cut short). Every digest on the way is checked.
    pub fn observation_at(
        &self,
        tick: u32,
        side: Side,
        deadline: impl Fn(u32) -> u64,
    ) -> Result<super::Observation, ReplayError> {
        let mut cut = self.clone();
        let recorded = u32::try_from(cut.ticks.len()).unwrap_or(u32::MAX);
        if tick > recorded {
            return Err(ReplayError::Tick {
                expected: recorded,
                found: tick,
            });
        }
        cut.ticks.truncate(tick as usize);
        cut.outcome = None;
        let game = cut.simulate(&deadline, |_, _, _| {})?;
        Ok(game.observation(side, deadline(tick)))
    }

    /// [`GameRecord::replay_with`] with the default budgets
    /// ([`super::deadline_ms`]).
    pub fn replay(&self) -> Result<Skirmish, ReplayError> {
        self.replay_with(super::deadline_ms)
    }
}

impl Skirmish {
    /// Plays one recorded tick: re-checks and applies its accepted orders,
    /// reports its rejections, and simulates.
    pub(super) fn step_recorded(&mut self, record: &TickRecord) -> Result<(), ReplayError> {
        let mut log = TickRecord {
            tick: self.tick,
            sides: Default::default(),
        };
        for side in Side::BOTH {
            let recorded = &record.sides[side.index()];
            for accepted in &recorded.accepted {
                if self.check(side, accepted.unit, &accepted.order).is_err() {
                    return Err(ReplayError::Diverged {
                        tick: self.tick,
                        side: side.index() as u8 + 1,
                        index: accepted.index,
                    });
                }
                self.give(accepted.unit, &accepted.order);
            }
            self.rejected[side.index()] = recorded.rejected.clone();
            log.sides[side.index()] = recorded.clone();
        }
        self.log.push(log);
        self.simulate();
        if let Some(outcome) = self.outcome {
            self.finish(outcome);
        }
        Ok(())
    }
}
