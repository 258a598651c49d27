//! The skirmish match loop: lockstep ticks under per-tick budgets
//! (`docs/spec/skirmish.md`, "Protocol, for skirmish").
//!
//! Every tick both sides get their observation of the same state; each has
//! the tick's budget to answer with the current tick's reply. A stale reply
//! (another tick's) is dropped and the referee waits, within what is left of
//! the budget, for the next line; a side that runs out is skipped for the
//! tick (its units keep their orders) and goes on, paused, in the next.
//! Only a crash or an unreadable line ends its game.

use crate::player::{Answer, Entrant, Fault, Player, Spent, TurnError};
use crate::referee::{Forfeit, HostError, Leg, MatchSettings, Progress, reason_of, spawn_players};
use crate::replay::GameRecord;
use arbiter_games::skirmish::{ActReply, Map, Skirmish};
use arbiter_games::{FinishReason, Side, Variant};
use serde::{Deserialize, Serialize};

/// What the referee adds to the rules' record of one skirmish game: time
/// spent and ticks skipped per side. Stored as the replay's `record`
/// ([`GameSpecificRecord::Skirmish`](crate::replay::GameSpecificRecord)).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SkirmishRecord {
    /// The rules' record: map, seed, every tick's actions and digests.
    pub game: arbiter_games::skirmish::GameRecord,
    /// Time (and fuel) each side spent over the whole game, by side.
    pub spent: [Spent; 2],
    /// How many ticks each side was skipped (no current reply in time).
    pub skipped: [u32; 2],
    /// How many stale replies (another tick's) each side's lines held.
    pub stale: [u32; 2],
}

impl SkirmishRecord {
    /// The skirmish record stored in a replay's game, if it is one.
    pub fn from_game(game: &GameRecord) -> Option<&SkirmishRecord> {
        game.record.skirmish()
    }
}

/// The budget of `tick` in virtual milliseconds under `settings`: the
/// set-up budget (`bank_ms`) at tick 0, the per-tick one (`turn_ms`) after.
pub fn tick_budget_ms(settings: &MatchSettings, tick: u32) -> u64 {
    if tick == 0 {
        settings.budget.bank_ms
    } else {
        settings.budget.turn_ms
    }
}

/// The map a skirmish match is played on.
pub fn map_of(_variant: Variant) -> Result<Map, String> {
    Map::builtin(Variant::SKIRMISH_MAP).map_err(|e| format!("the built-in map {}: {e}", Variant::SKIRMISH_MAP))
}

/// How one side's tick ended.
enum TickEnd {
    /// The current tick's reply.
    Reply(ActReply),
    /// No current reply in time: the side is skipped.
    Skipped,
    /// A fault that loses the game.
    Lost(FinishReason, String),
}

/// What one side did in one tick, for the referee's accounts.
struct SideTick {
    end: TickEnd,
    spent: Spent,
    stale: u32,
    /// The fault was the wall-clock backstop's (the match is then not
    /// reproducible).
    stalled: bool,
}

/// Asks one side for the tick's reply: `line` is its observation. Reads
/// lines until the current tick's reply comes or the budget runs out.
fn ask(player: &mut dyn Player, line: &str, tick: u32, budget_us: u64) -> Result<SideTick, Fault> {
    let mut spent = Spent::default();
    let mut stale = 0;
    let mut result = player.turn(line, budget_us);
    loop {
        let answer = match result {
            Ok(answer) => answer,
            Err(TurnError {
                fault: Fault::Host(message),
                ..
            }) => return Err(Fault::Host(message)),
            Err(TurnError { fault, spent: cost }) => {
                add(&mut spent, cost);
                let stalled = matches!(fault, Fault::Stalled(_));
                let end = match fault {
                    Fault::Timeout => TickEnd::Skipped,
                    fault => TickEnd::Lost(reason_of(&fault), fault.to_string()),
                };
                return Ok(SideTick {
                    end,
                    spent,
                    stale,
                    stalled,
                });
            }
        };
        let Answer {
            line: reply,
            spent: cost,
        } = answer;
        add(&mut spent, cost);
        let reply = match arbiter_games::skirmish::parse_reply(&reply) {
            Ok(reply) => reply,
            Err(error) => {
                return Ok(SideTick {
                    end: TickEnd::Lost(FinishReason::BadReply, error.to_string()),
                    spent,
                    stale,
                    stalled: false,
                });
            }
        };
        if reply.tick == i64::from(tick) {
            // A reply that came after the budget counts as late.
            let end = if spent.us > budget_us {
                TickEnd::Skipped
            } else {
                TickEnd::Reply(reply)
            };
            return Ok(SideTick {
                end,
                spent,
                stale,
                stalled: false,
            });
        }
        stale += 1;
        if spent.us >= budget_us {
            return Ok(SideTick {
                end: TickEnd::Skipped,
                spent,
                stale,
                stalled: false,
            });
        }
        result = player.resume(budget_us - spent.us);
    }
}

fn add(total: &mut Spent, cost: Spent) {
    total.us = total.us.saturating_add(cost.us);
    total.fuel = match (total.fuel, cost.fuel) {
        (None, None) => None,
        (a, b) => Some(a.unwrap_or(0).saturating_add(b.unwrap_or(0))),
    };
}

/// Plays one skirmish game (leg `index`, participants `sides`); tells
/// `observe` after every tick.
pub(crate) fn play_game(
    settings: &MatchSettings,
    index: u8,
    sides: [u8; 2],
    entrants: [&dyn Entrant; 2],
    observe: &mut dyn FnMut(u8, Progress<'_>),
) -> Result<Leg, HostError> {
    let host = |message: String| HostError { game: index, message };
    let map = map_of(settings.variant).map_err(host)?;
    let mut game = Skirmish::new(map, settings.seed);
    let (mut players, mut forfeit) = spawn_players(settings, index, sides, entrants)?;
    let mut spent = [Spent::default(); 2];
    let mut skipped = [0u32; 2];
    let mut stale = [0u32; 2];
    let mut stalled = false;
    while forfeit.is_none() && !game.is_over() {
        let tick = game.tick();
        let deadline_ms = tick_budget_ms(settings, tick);
        let mut replies: [Option<ActReply>; 2] = [None, None];
        for side in Side::BOTH {
            let line = game.observe(side, deadline_ms).to_line();
            let Some(player) = players[side.index()].as_mut() else {
                return Err(host("a player is missing".to_string()));
            };
            let answered = ask(player.as_mut(), &line, tick, deadline_ms.saturating_mul(1000)).map_err(|fault| {
                host(match fault {
                    Fault::Host(message) => message,
                    other => other.to_string(),
                })
            })?;
            let i = side.index();
            add(&mut spent[i], answered.spent);
            stale[i] += answered.stale;
            stalled |= answered.stalled;
            match answered.end {
                TickEnd::Reply(reply) => replies[i] = Some(reply),
                TickEnd::Skipped => skipped[i] += 1,
                TickEnd::Lost(reason, detail) => {
                    forfeit.get_or_insert(Forfeit { side, reason, detail });
                }
            }
        }
        if forfeit.is_some() {
            break;
        }
        if let Some(record) = game.step(replies).cloned() {
            observe(
                index,
                Progress::Tick {
                    record: &record,
                    state: &game,
                },
            );
        }
    }

    let (outcome, detail) = match forfeit {
        Some(Forfeit { side, reason, detail }) => (game.forfeit(side, reason), Some(detail)),
        None => match game.outcome() {
            Some(outcome) => (outcome, None),
            None => return Err(host("the game ended without an outcome".to_string())),
        },
    };
    let record = SkirmishRecord {
        game: game.record(),
        spent,
        skipped,
        stale,
    };
    Ok(Leg::ended(
        index,
        sides,
        Vec::new(),
        (outcome, detail),
        record.into(),
        &players,
        stalled,
    ))
}

/// Why a replay cannot be exported as training data.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// Not a skirmish replay.
    #[error("only skirmish replays have training data; this is a replay of {0}")]
    NotSkirmish(String),
    /// A game without a skirmish record.
    #[error("game {0} has no skirmish record")]
    NoRecord(usize),
    /// A game whose record does not re-simulate.
    #[error("game {game}: {error}")]
    Record {
        /// Which game.
        game: usize,
        /// What differs.
        error: arbiter_games::skirmish::ReplayError,
    },
}

/// A skirmish replay as training data: for each game in order, one JSON
/// line per tick and side (see [`arbiter_games::skirmish::GameRecord::training_lines`]),
/// with `"game"` (1 or 2) added first. Observations are rebuilt with the
/// match's budgets and checked against their digests.
pub fn training_lines(replay: &crate::Replay) -> Result<Vec<String>, ExportError> {
    let settings = crate::verify::settings_of(replay)
        .ok()
        .filter(|s| s.variant == Variant::Skirmish)
        .ok_or_else(|| ExportError::NotSkirmish(format!("{}:{}", replay.game, replay.mode)))?;
    let mut out = Vec::new();
    for (index, game) in replay.games.iter().enumerate() {
        let record = SkirmishRecord::from_game(game).ok_or(ExportError::NoRecord(index))?;
        let lines = record
            .game
            .training_lines(|tick| tick_budget_ms(&settings, tick))
            .map_err(|error| ExportError::Record { game: index, error })?;
        // Each line is an object: `{"tick":...` becomes `{"game":N,"tick":...`.
        out.extend(
            lines
                .into_iter()
                .map(|line| format!("{{\"game\":{},{}", index + 1, line.strip_prefix('{').unwrap_or(&line))),
        );
    }
    Ok(out)
}
