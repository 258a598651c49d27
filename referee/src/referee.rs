//! The match loop: two games with sides swapped, budgets and faults.

use crate::player::{Entrant, Fault, GameSetup, Player, SpawnError, TurnError};
use crate::replay::{self, GameRecord, GameSpecificRecord, MatchResult, Replay, ReplaySettings, TurnRecord};
use arbiter_games::othello::Othello;
use arbiter_games::tictactoe::TicTacToe;
use arbiter_games::{Budget, FinishReason, Game, Outcome, RequestContext, Scoring, Side, Variant};
use sha2::{Digest, Sha256};

/// Milliseconds kept back from `budget_ms` when the bank runs low, so a bot
/// that spends its whole advertised budget still has a little bank left.
pub const SAFETY_MARGIN_MS: u64 = 50;

/// What a match is played with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchSettings {
    /// Game and mode.
    pub variant: Variant,
    /// Seeds the opening and the bots' random streams.
    pub seed: u64,
    /// Shown to bots as `match_id`.
    pub match_id: u64,
    /// Per-turn cap and per-game bank of each side.
    pub budget: Budget,
    /// When set, each side's first turn of every turn-based game may take
    /// this many virtual milliseconds instead of `budget.turn_ms`, and is not
    /// charged to the bank: the upload check's set-up move, which gets the
    /// ladder's own per-move cap while the later moves get a short control.
    /// `None` (every ladder match) treats the first turn like any other.
    /// Skirmish has its own set-up budget (tick 0 gets `budget.bank_ms`) and
    /// ignores it.
    pub first_turn_ms: Option<u64>,
    /// Fuel per virtual millisecond, recorded when sandboxed bots play.
    pub fuel_per_ms: Option<u64>,
    /// Othello from the mode's start position instead of the seeded
    /// 12-disc opening (games against people; ladder matches never).
    pub standard_opening: bool,
}

impl MatchSettings {
    /// The variant's default budgets, match id 0.
    pub fn new(variant: Variant, seed: u64) -> MatchSettings {
        MatchSettings {
            variant,
            seed,
            match_id: 0,
            budget: variant.default_budget(),
            first_turn_ms: None,
            fuel_per_ms: None,
            standard_opening: false,
        }
    }
}

/// A failure of the host, not of a bot: the match must be retried, never
/// scored.
#[derive(Debug, thiserror::Error)]
#[error("host failure in game {game}: {message}")]
pub struct HostError {
    /// Which game of the match.
    pub game: u8,
    /// What failed.
    pub message: String,
}

/// A played match: the public replay and each participant's stderr per game
/// (kept apart: only a bot's owner may read its logs).
#[derive(Clone, Debug, PartialEq)]
pub struct PlayedMatch {
    /// The replay.
    pub replay: Replay,
    /// `logs[participant][game]`: what the bot wrote to stderr.
    pub logs: [[Vec<u8>; 2]; 2],
    /// `peak_memory[participant][game]`: the most linear memory a sandboxed
    /// bot used, in bytes (`None` for other players).
    pub peak_memory: [[Option<u64>; 2]; 2],
}

/// What a side's player leaves after a game: its stderr and its peak
/// linear memory, if sandboxed.
pub(crate) type Leftover = (Vec<u8>, Option<u64>);

/// One played game (leg) of a match.
pub(crate) struct Leg {
    /// Its record in the replay.
    pub(crate) record: GameRecord,
    /// What each side's player left.
    pub(crate) left: [Leftover; 2],
    /// Whether the wall-clock backstop stopped a bot.
    pub(crate) stalled: bool,
}

/// What a live view is told after every step of a game.
#[derive(Clone, Copy, Debug)]
pub enum Progress<'a> {
    /// A turn of a turn-based game, as recorded.
    Turn(&'a TurnRecord),
    /// A tick of skirmish, as recorded, and the state after it (for
    /// spectators: what no bot sees whole).
    Tick {
        /// The tick's record.
        record: &'a arbiter_games::skirmish::TickRecord,
        /// The game after the tick.
        state: &'a arbiter_games::skirmish::Skirmish,
    },
}

/// The engine a replay names: this program's version and the sandbox's
/// fuel schedule (`arbiter 0.1.0, fuel schedule 2`), which together decide
/// every turn's fuel.
pub fn engine() -> String {
    format!(
        "arbiter {}, fuel schedule {}",
        env!("CARGO_PKG_VERSION"),
        arbiter_sandbox::FUEL_SCHEDULE
    )
}

/// Plays one match between `entrants[0]` (participant 0) and `entrants[1]`.
pub fn play_match(settings: &MatchSettings, entrants: [&dyn Entrant; 2]) -> Result<PlayedMatch, HostError> {
    play_match_observed(settings, entrants, &mut |_, _| {})
}

/// Plays one match like [`play_match`], calling `observe(game, progress)`
/// after every turn or tick (for live views). The observer cannot change
/// the match.
pub fn play_match_observed(
    settings: &MatchSettings,
    entrants: [&dyn Entrant; 2],
    observe: &mut dyn FnMut(u8, Progress<'_>),
) -> Result<PlayedMatch, HostError> {
    play_legs(settings, entrants, &MATCH_LEGS, observe)
}

/// The sides of a match's two games: participant 0 moves first in game 0,
/// participant 1 in game 1.
pub const MATCH_LEGS: [[u8; 2]; 2] = [[0, 1], [1, 0]];

/// Plays a single game (no side swap) in which `sides[side]` is the
/// participant playing `side` (`[0, 1]`: participant 0 moves first),
/// calling `observe` like [`play_match_observed`]. The replay holds that one
/// game, and the result is that game's.
pub fn play_game_observed(
    settings: &MatchSettings,
    entrants: [&dyn Entrant; 2],
    sides: [u8; 2],
    observe: &mut dyn FnMut(u8, Progress<'_>),
) -> Result<PlayedMatch, HostError> {
    play_legs(settings, entrants, &[sides], observe)
}

/// Plays the games `legs` (each one's sides, by participant) in order.
pub(crate) fn play_legs(
    settings: &MatchSettings,
    entrants: [&dyn Entrant; 2],
    legs: &[[u8; 2]],
    observe: &mut dyn FnMut(u8, Progress<'_>),
) -> Result<PlayedMatch, HostError> {
    let scoring = settings.variant.scoring();
    match settings.variant {
        Variant::TicTacToe => play(settings, entrants, scoring, legs, |index, sides| {
            play_game(settings, TicTacToe::new(), index, sides, entrants, observe)
        }),
        Variant::Othello(mode) => play(settings, entrants, scoring, legs, |index, sides| {
            let othello = if settings.standard_opening {
                Othello::from_position(arbiter_games::othello::Position::start(mode))
            } else {
                Othello::new(mode, settings.seed)
            };
            play_game(settings, othello, index, sides, entrants, observe)
        }),
        Variant::Skirmish => play(settings, entrants, scoring, legs, |index, sides| {
            crate::skirmish::play_game(settings, index, sides, entrants, observe)
        }),
    }
}

/// Plays the games `legs` with `play_leg(index, sides)` and scores the
/// match with `scoring`.
fn play(
    settings: &MatchSettings,
    entrants: [&dyn Entrant; 2],
    scoring: Scoring,
    legs: &[[u8; 2]],
    mut play_leg: impl FnMut(u8, [u8; 2]) -> Result<Leg, HostError>,
) -> Result<PlayedMatch, HostError> {
    let mut games = Vec::with_capacity(legs.len());
    let mut stalled = false;
    let mut logs: [[Vec<u8>; 2]; 2] = Default::default();
    let mut peak_memory = [[None; 2]; 2];
    for (index, &sides) in (0u8..).zip(legs) {
        let Leg {
            record,
            left,
            stalled: game_stalled,
        } = play_leg(index, sides)?;
        stalled |= game_stalled;
        for (side, (stderr, memory)) in left.into_iter().enumerate() {
            let participant = usize::from(sides[side]);
            logs[participant][usize::from(index)] = stderr;
            peak_memory[participant][usize::from(index)] = memory;
        }
        games.push(record);
    }
    let mut totals = [0u32; 2];
    for game in &games {
        for side in Side::BOTH {
            totals[usize::from(game.sides[side.index()])] += game.scores[side.index()];
        }
    }
    let winner = scoring.winner(totals).map(|index| index as u8);
    let points = match winner {
        Some(0) => [1.0, 0.0],
        Some(_) => [0.0, 1.0],
        None => [0.5, 0.5],
    };
    let participants = [entrants[0].info(), entrants[1].info()];
    let reproducible = !stalled && participants.iter().all(|p| p.reproducible);
    let replay = Replay {
        format: replay::FORMAT.to_string(),
        version: replay::FORMAT_VERSION,
        game: settings.variant.game().to_string(),
        mode: settings.variant.mode().to_string(),
        seed: settings.seed,
        match_id: settings.match_id,
        settings: ReplaySettings {
            turn_ms: settings.budget.turn_ms,
            bank_ms: settings.budget.bank_ms,
            first_turn_ms: settings.first_turn_ms,
            fuel_per_ms: settings.fuel_per_ms,
            standard_opening: settings.standard_opening,
        },
        engine: engine(),
        participants,
        reproducible,
        games,
        result: MatchResult { totals, points, winner },
    };
    Ok(PlayedMatch {
        replay,
        logs,
        peak_memory,
    })
}

/// The reason a fault is recorded under.
pub(crate) fn reason_of(fault: &Fault) -> FinishReason {
    match fault {
        Fault::Timeout => FinishReason::Timeout,
        Fault::Crash(_) | Fault::Stalled(_) => FinishReason::Crash,
        Fault::BadReply(_) => FinishReason::BadReply,
        Fault::Resigned => FinishReason::Resigned,
        // Never scored: `play_game` returns a host error first.
        Fault::Host(_) => FinishReason::Crash,
    }
}

/// A game that ended in a fault: who, why, and the words for it.
pub(crate) struct Forfeit {
    pub(crate) side: Side,
    pub(crate) reason: FinishReason,
    pub(crate) detail: String,
}

/// Each side's player in a game, by [`Side::index`]: `None` for one whose
/// bot could not start.
pub(crate) type Players = [Option<Box<dyn Player>>; 2];

/// Each side's player for game `index` (`sides[side]` is the participant),
/// and the forfeit of the first side whose bot could not start.
pub(crate) fn spawn_players(
    settings: &MatchSettings,
    index: u8,
    sides: [u8; 2],
    entrants: [&dyn Entrant; 2],
) -> Result<(Players, Option<Forfeit>), HostError> {
    let host = |message: String| HostError { game: index, message };
    let mut players: Players = [None, None];
    let mut forfeit = None;
    for side in Side::BOTH {
        let setup = GameSetup {
            game: settings.variant.game().to_string(),
            mode: settings.variant.mode().to_string(),
            seed: settings.seed,
            match_id: settings.match_id,
            game_index: index,
            side: side.index() as u8,
            fuel_per_ms: settings.fuel_per_ms,
            tick_based: settings.variant.is_tick_based(),
        };
        match entrants[usize::from(sides[side.index()])].spawn(&setup) {
            Ok(player) => players[side.index()] = Some(player),
            Err(SpawnError::Host(message) | SpawnError::Bot(Fault::Host(message))) => return Err(host(message)),
            Err(SpawnError::Bot(fault)) => {
                forfeit.get_or_insert(Forfeit {
                    side,
                    reason: reason_of(&fault),
                    detail: fault.to_string(),
                });
            }
        }
    }
    Ok((players, forfeit))
}

/// What each side's player leaves: its stderr and its peak memory.
fn leftovers(players: &Players) -> [Leftover; 2] {
    [0, 1].map(|i| match players[i].as_ref() {
        Some(player) => (player.stderr(), player.peak_memory_bytes()),
        None => (Vec::new(), None),
    })
}

fn play_game<G: Game<Record: Into<GameSpecificRecord>>>(
    settings: &MatchSettings,
    mut game: G,
    index: u8,
    sides: [u8; 2],
    entrants: [&dyn Entrant; 2],
    observe: &mut dyn FnMut(u8, Progress<'_>),
) -> Result<Leg, HostError> {
    let host = |message: String| HostError { game: index, message };
    let (mut players, mut forfeit) = spawn_players(settings, index, sides, entrants)?;

    let turn_us = settings.budget.turn_ms.saturating_mul(1000);
    let mut bank_us = [settings.budget.bank_ms.saturating_mul(1000); 2];
    let first_turn_us = settings.first_turn_ms.map(|ms| ms.saturating_mul(1000));
    let mut has_moved = [false; 2];
    let mut elapsed_us = 0u64;
    let mut turns = Vec::new();
    let mut stalled = false;
    while forfeit.is_none() && game.outcome().is_none() {
        let actors = game.to_act();
        if actors.is_empty() {
            return Err(host("the game is neither over nor waiting for a move".to_string()));
        }
        let mut actions = Vec::with_capacity(actors.len());
        for &side in &actors {
            let Some(player) = players[side.index()].as_mut() else {
                return Err(host("a player is missing".to_string()));
            };
            let remaining_us = bank_us[side.index()];
            // The set-up move, when the settings give it a cap of its own:
            // that cap, not charged to the bank.
            let setup_us = first_turn_us.filter(|_| !has_moved[side.index()]);
            has_moved[side.index()] = true;
            let (limit_us, budget_ms) = match setup_us {
                Some(setup_us) => (setup_us, setup_us / 1000),
                None => (
                    turn_us.min(remaining_us),
                    settings
                        .budget
                        .turn_ms
                        .min((remaining_us / 1000).saturating_sub(SAFETY_MARGIN_MS)),
                ),
            };
            let context = RequestContext {
                match_id: settings.match_id,
                game_index: index,
                participants: sides,
                remaining_ms: remaining_us / 1000,
                budget_ms,
            };
            let request = game.request(side, &context);
            let request_sha256 = hex(&Sha256::digest(request.as_bytes()));
            let (reply, spent, fault) = match player.turn(&request, limit_us) {
                Ok(answer) if answer.spent.us > limit_us => (Some(answer.line), answer.spent, Some(Fault::Timeout)),
                Ok(answer) => (Some(answer.line), answer.spent, None),
                Err(TurnError {
                    fault: Fault::Host(message),
                    ..
                }) => return Err(host(message)),
                Err(TurnError { fault, spent }) => {
                    stalled |= matches!(fault, Fault::Stalled(_));
                    (None, spent, Some(fault))
                }
            };
            if setup_us.is_none() {
                bank_us[side.index()] = remaining_us.saturating_sub(spent.us);
            }
            elapsed_us = elapsed_us.saturating_add(spent.us);
            let mut record = TurnRecord {
                side,
                request_sha256,
                reply: reply.as_deref().map(cut_reply),
                action: None,
                spent,
                fault: None,
                at_ms: None,
            };
            let fault = match (fault, reply) {
                (Some(fault), _) => Some((reason_of(&fault), fault.to_string())),
                (None, Some(line)) => match game.parse_reply(side, &line) {
                    Ok(action) => {
                        record.action = Some(game.notation(&action));
                        actions.push((side, action));
                        None
                    }
                    Err(error) => Some((FinishReason::BadReply, error.to_string())),
                },
                (None, None) => Some((FinishReason::Crash, "no reply".to_string())),
            };
            if let Some((reason, detail)) = fault {
                record.fault = Some(reason);
                observe(index, Progress::Turn(&record));
                turns.push(record);
                forfeit = Some(Forfeit { side, reason, detail });
                break;
            }
            observe(index, Progress::Turn(&record));
            turns.push(record);
        }
        if forfeit.is_some() {
            break;
        }
        if let Err(illegal) = game.apply(&actions, elapsed_us / 1000) {
            if let Some(turn) = turns.iter_mut().rev().find(|t| t.side == illegal.side) {
                turn.fault = Some(FinishReason::IllegalMove);
            }
            forfeit = Some(Forfeit {
                side: illegal.side,
                reason: FinishReason::IllegalMove,
                detail: format!("illegal move: {}", illegal.reason),
            });
        }
    }

    let (outcome, detail) = match forfeit {
        Some(Forfeit { side, reason, detail }) => (game.forfeit(side, reason), Some(detail)),
        None => match game.outcome() {
            Some(outcome) => (outcome, None),
            None => return Err(host("the game ended without an outcome".to_string())),
        },
    };
    Ok(Leg::ended(
        index,
        sides,
        turns,
        (outcome, detail),
        game.record().into(),
        &players,
        stalled,
    ))
}

impl Leg {
    /// Game `index` (participants `sides`) that ended with `outcome` and a
    /// fault's words, if any: its replay record and what its players left.
    pub(crate) fn ended(
        index: u8,
        sides: [u8; 2],
        turns: Vec<TurnRecord>,
        (outcome, detail): (Outcome, Option<String>),
        record: GameSpecificRecord,
        players: &Players,
        stalled: bool,
    ) -> Leg {
        let Outcome {
            scores,
            reason,
            faulted,
        } = outcome;
        Leg {
            record: GameRecord {
                index,
                sides,
                turns,
                scores,
                reason,
                faulted,
                detail,
                record,
            },
            left: leftovers(players),
            stalled,
        }
    }
}

fn cut_reply(line: &str) -> String {
    if line.len() <= replay::MAX_REPLY_IN_REPLAY {
        return line.to_string();
    }
    let cut = (0..=replay::MAX_REPLY_IN_REPLAY)
        .rev()
        .find(|&i| line.is_char_boundary(i))
        .unwrap_or(0);
    format!("{}[… {} more bytes]", &line[..cut], line.len() - cut)
}

/// Lowercase hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(bytes.len() * 2), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}
