//! Skirmish bots: the observation, the orders and the loop
//! (`docs/spec/skirmish.md`).
//!
//! Every tick the bot gets an [`Observation`] (its own units, the enemies
//! and mines it sees) and answers a list of [`Action`]s, each an [`Order`]
//! for one of its units or buildings. The referee checks each action and
//! reports rejections in the next observation; only an unreadable reply
//! line loses the game.

pub use arbiter_games::skirmish::{
    ACTION_LIMIT, Carry, EnemyView, GatherTarget, Kind, MapView, MineView, Observation, Order, OrderName, Reason,
    Rejection, Res, TICK_LIMIT, Target, TileRef, UnitView,
};

use crate::Clock;
use serde::Serialize;

/// One order for one of the bot's units or buildings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Action {
    /// The unit's or building's id.
    pub unit: u32,
    /// What it is to do.
    #[serde(flatten)]
    pub order: Order,
}

/// A skirmish bot.
pub trait Bot {
    /// The actions for this tick (at most 32 are read; the last one for a
    /// unit counts). `clock` runs out at the tick's `deadlineMs`.
    fn act(&mut self, observation: &Observation, clock: &Clock) -> Vec<Action>;
}

/// The reply line to one observation line. An unreadable line is answered
/// with no actions for tick −1, which the referee ignores.
pub fn answer(bot: &mut impl Bot, line: &str) -> String {
    #[derive(Serialize)]
    struct Act<'a> {
        t: &'static str,
        tick: i64,
        actions: &'a [Action],
    }
    let (tick, actions) = match serde_json::from_str::<Observation>(line) {
        Ok(observation) => {
            let clock = Clock::start(observation.deadline_ms, observation.deadline_ms);
            (i64::from(observation.tick), bot.act(&observation, &clock))
        }
        Err(error) => {
            eprintln!("cannot read the observation: {error}");
            (-1, Vec::new())
        }
    };
    let act = Act {
        t: "act",
        tick,
        actions: &actions,
    };
    serde_json::to_string(&act).unwrap_or_else(|_| r#"{"t":"act","tick":-1,"actions":[]}"#.to_owned())
}

/// Runs `bot` over stdin and stdout until stdin ends.
pub fn run(mut bot: impl Bot) {
    crate::serve(|line| answer(&mut bot, line));
}

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_games::Side;
    use arbiter_games::skirmish::{Map, Skirmish};

    /// Trains a peasant in every town hall.
    struct Trainer;

    impl Bot for Trainer {
        fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
            observation
                .units
                .iter()
                .filter(|unit| unit.kind == Kind::TownHall)
                .map(|hall| Action {
                    unit: hall.id,
                    order: Order::Train { code: Kind::Peasant },
                })
                .collect()
        }
    }

    #[test]
    fn a_reply_is_read_and_applied_by_the_referee() {
        let mut game = Skirmish::new(Map::builtin("duel32").expect("a map"), 1);
        let line = serde_json::to_string(&game.observation(Side::First, 1_000)).expect("JSON");
        let reply = answer(&mut Trainer, &line);
        assert!(
            reply.starts_with(r#"{"t":"act","tick":0,"actions":[{"unit":"#),
            "{reply}"
        );
        let parsed = game.parse_reply(Side::First, &reply).expect("the referee reads it");
        let record = game.step([Some(parsed), None]).expect("the game goes on");
        assert_eq!(record.sides[0].accepted.len(), 1, "{reply}");
        assert!(record.sides[0].rejected.is_empty());
    }

    #[test]
    fn an_unreadable_observation_is_answered_for_no_tick() {
        assert_eq!(
            answer(&mut Trainer, "not json"),
            r#"{"t":"act","tick":-1,"actions":[]}"#
        );
    }
}
