//! Re-running a replay: given the two modules, a reproducible match must
//! come out move for move, byte for byte ([`verify`]). A replay that cannot
//! be re-run (a bot ran on wall-clock time, on its owner's machine or as a
//! native process) is still checked for legality from its own record
//! ([`recheck`]).

use crate::player::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, TurnError};
use crate::referee::{HostError, MATCH_LEGS, MatchSettings, play_legs};
use crate::replay::{Replay, TurnRecord};
use crate::skirmish::{SkirmishRecord, tick_budget_ms};
use arbiter_games::{Budget, FinishReason, Variant};
use sha2::{Digest, Sha256};

/// Why a replay did not verify.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The replay names a game this program does not know.
    #[error("the replay's game {0:?} is unknown")]
    UnknownGame(String),
    /// The replay is marked as not reproducible (a bot ran on wall-clock time).
    #[error("the replay is marked as not reproducible: a bot ran on wall-clock time")]
    NotReproducible,
    /// A participant is not the module the replay names.
    #[error(
        "participant {participant} is {given_name} (module {given}), but the replay was played by \
         {recorded_name} (module {recorded})"
    )]
    WrongModule {
        /// 0 or 1.
        participant: usize,
        /// The name of the bot given.
        given_name: String,
        /// SHA-256 of the module given.
        given: String,
        /// The name the replay records.
        recorded_name: String,
        /// SHA-256 in the replay.
        recorded: String,
    },
    /// The re-run failed on the host.
    #[error(transparent)]
    Host(#[from] HostError),
    /// The re-run differs.
    #[error("the re-run differs from the replay in {0}")]
    Differs(String),
    /// Another program (another version, or another schedule of fuel
    /// charges) refereed the replay: its bots' fuel, so its turns, may
    /// differ here without anything being wrong.
    #[error(
        "the replay was refereed by {recorded}, this is {current}: fuel charges or rules may differ, \
         so re-run it with the program that recorded it"
    )]
    OtherEngine {
        /// The engine the replay names.
        recorded: String,
        /// This program's.
        current: String,
    },
    /// A skirmish game's record does not re-simulate: an accepted action
    /// the rules reject, an observation whose digest differs, another end.
    #[error("game {game}: {error}")]
    Record {
        /// Which game of the match.
        game: usize,
        /// What differs.
        error: arbiter_games::skirmish::ReplayError,
    },
    /// A skirmish game has no readable record.
    #[error("game {0} has no skirmish record")]
    NoRecord(usize),
}

/// Re-simulates every skirmish game of `replay` from its record alone (no
/// bots needed): every accepted action is legal again, every observation
/// rebuilt with the match's budgets has the recorded digest, and the game
/// ends as recorded. Returns the number of ticks checked; 0 for other
/// games, whose records are checked by re-running them.
pub fn check_records(replay: &Replay) -> Result<usize, VerifyError> {
    let settings = settings_of(replay)?;
    if settings.variant != Variant::Skirmish {
        return Ok(0);
    }
    let mut ticks = 0;
    for (index, game) in replay.games.iter().enumerate() {
        let record = SkirmishRecord::from_game(game).ok_or(VerifyError::NoRecord(index))?;
        record
            .game
            .replay_with(|tick| tick_budget_ms(&settings, tick))
            .map_err(|error| VerifyError::Record { game: index, error })?;
        ticks += record.game.ticks.len();
    }
    Ok(ticks)
}

/// The settings a replay was played with.
pub fn settings_of(replay: &Replay) -> Result<MatchSettings, VerifyError> {
    let variant: Variant = format!("{}:{}", replay.game, replay.mode)
        .parse()
        .map_err(|_| VerifyError::UnknownGame(format!("{}:{}", replay.game, replay.mode)))?;
    Ok(MatchSettings {
        variant,
        seed: replay.seed,
        match_id: replay.match_id,
        budget: Budget {
            turn_ms: replay.settings.turn_ms,
            bank_ms: replay.settings.bank_ms,
        },
        first_turn_ms: replay.settings.first_turn_ms,
        fuel_per_ms: replay.settings.fuel_per_ms,
        standard_opening: replay.settings.standard_opening,
    })
}

/// Re-runs `replay` with `entrants` (participant 0 first) and checks that
/// the result is the same replay, byte for byte.
pub fn verify(replay: &Replay, entrants: [&dyn Entrant; 2]) -> Result<(), VerifyError> {
    if !replay.reproducible {
        return Err(VerifyError::NotReproducible);
    }
    for (participant, (entrant, recorded)) in entrants.iter().zip(&replay.participants).enumerate() {
        let given = entrant.info();
        if given.sha256 != recorded.sha256 {
            return Err(VerifyError::WrongModule {
                participant,
                given_name: given.name,
                given: given.sha256.unwrap_or_default(),
                recorded_name: recorded.name.clone(),
                recorded: recorded.sha256.clone().unwrap_or_default(),
            });
        }
    }
    let current = crate::referee::engine();
    if replay.engine != current {
        return Err(VerifyError::OtherEngine {
            recorded: replay.engine.clone(),
            current,
        });
    }
    check_records(replay)?;
    let mut rerun = play_legs(&settings_of(replay)?, entrants, &legs_of(replay), &mut |_, _| {})?.replay;
    // Names are labels, not part of the play: the modules were checked above.
    rerun.participants = replay.participants.clone();
    if rerun.to_json() == replay.to_json() {
        return Ok(());
    }
    for (game, (a, b)) in replay.games.iter().zip(&rerun.games).enumerate() {
        if let Some(turn) = a.turns.iter().zip(&b.turns).position(|(x, y)| x != y) {
            return Err(VerifyError::Differs(format!("game {game}, turn {}", turn + 1)));
        }
        if let (Some(x), Some(y)) = (SkirmishRecord::from_game(a), SkirmishRecord::from_game(b))
            && let Some(tick) = x.game.ticks.iter().zip(&y.game.ticks).position(|(x, y)| x != y)
        {
            return Err(VerifyError::Differs(format!("game {game}, tick {tick}")));
        }
        if a != b {
            return Err(VerifyError::Differs(format!("game {game} (its outcome)")));
        }
    }
    Err(VerifyError::Differs("the header or result".to_string()))
}

/// Checks `replay` without its bots: every skirmish tick is re-simulated
/// from the record ([`check_records`]); every turn-based game is played
/// again by the referee with each side answering what the replay says it
/// answered, checking that each request is the one recorded (by digest),
/// every move is legal, and each game ends as recorded. Returns the number
/// of turns or ticks checked. What this cannot show is that the bots would
/// answer the same again: for that, [`verify`].
///
/// # Errors
///
/// [`VerifyError::Differs`] or [`VerifyError::Record`] where the record is
/// inconsistent, [`VerifyError::UnknownGame`] for a game this program does
/// not know.
pub fn recheck(replay: &Replay) -> Result<usize, VerifyError> {
    let settings = settings_of(replay)?;
    if settings.variant == Variant::Skirmish {
        return check_records(replay);
    }
    if let Variant::Othello(mode) = settings.variant
        && replay.participants.iter().any(|p| p.kind == AGENT_KIND)
    {
        return recheck_legs(replay, mode);
    }
    let scripts = [0, 1].map(|participant| Script {
        replay,
        info: replay.participants[participant].clone(),
    });
    let rerun = play_legs(&settings, [&scripts[0], &scripts[1]], &legs_of(replay), &mut |_, _| {})
        .map_err(|err| VerifyError::Differs(err.message))?
        .replay;
    let mut turns = 0;
    for (index, (recorded, again)) in replay.games.iter().zip(&rerun.games).enumerate() {
        if let Some(turn) = recorded.turns.iter().zip(&again.turns).position(|(x, y)| x != y) {
            return Err(VerifyError::Differs(format!("game {index}, turn {}", turn + 1)));
        }
        let mut recorded = recorded.clone();
        let mut again = again.clone();
        // The fault's words come from the bot's side; the rest must match.
        (recorded.detail, again.detail) = (None, None);
        if recorded != again {
            return Err(VerifyError::Differs(format!("game {index} (its outcome)")));
        }
        turns += recorded.turns.len();
    }
    if rerun.games.len() != replay.games.len() || rerun.result != replay.result {
        return Err(VerifyError::Differs("the match result".to_string()));
    }
    Ok(turns)
}

/// The participant kind of a person playing a bot from the site: the game
/// is a single game (no side swap), and re-running it needs the person's
/// recorded moves ([`recorded`]) beside the bot.
pub const HUMAN_KIND: &str = "human";

/// The games a replay's match is made of, by their sides: a match's two
/// games with sides swapped, or the single game of a person against a bot
/// as recorded.
fn legs_of(replay: &Replay) -> Vec<[u8; 2]> {
    if replay.participants.iter().any(|p| p.kind == HUMAN_KIND) {
        replay.games.iter().take(1).map(|game| game.sides).collect()
    } else {
        MATCH_LEGS.to_vec()
    }
}

/// Participant `participant` of `replay` answering what the replay says it
/// answered, checking that each request is the one recorded: how a
/// person's side is re-run when a game against people is verified.
pub fn recorded(replay: &Replay, participant: usize) -> impl Entrant + '_ {
    Script {
        replay,
        info: replay.participants[participant.min(1)].clone(),
    }
}

/// The participant kind of an agent bot (FlipSight's agent API): its
/// matches are played by the server's agent hall, both legs side by side
/// on the server's clock, not by [`crate::play_match`].
pub const AGENT_KIND: &str = "agent";

/// Re-checks the legs of an agent-hall match from their records: from each
/// leg's opening, every recorded move is the mover's (the colour to move),
/// parses from the bot's reply as the move recorded, and is legal; the
/// board it leads to is the recorded final board, with the recorded discs
/// when the leg was played out. A turn with a fault (a timeout) ends its
/// leg; a leg stopped by a disconnection has its loser recorded. Returns the number of moves checked.
fn recheck_legs(replay: &Replay, mode: arbiter_games::othello::Mode) -> Result<usize, VerifyError> {
    use crate::replay::GameSpecificRecord;
    use arbiter_games::othello::{Move, Position, move_name, parse_reply};
    let differs = |game: usize, what: String| VerifyError::Differs(format!("game {game}, {what}"));
    let mut checked = 0;
    for (index, game) in replay.games.iter().enumerate() {
        let GameSpecificRecord::Othello(record) = &game.record else {
            return Err(differs(index, "its Othello record is missing".into()));
        };
        let opening: Vec<Move> = record
            .opening_moves
            .iter()
            .map(|&code| match u8::try_from(code) {
                Ok(square) => Move::Place(square),
                Err(_) => Move::Pass,
            })
            .collect();
        let mut position = Position::start(mode);
        for (n, &mv) in opening.iter().enumerate() {
            position = position
                .play(mv)
                .map_err(|_| differs(index, format!("opening move {} is not legal", n + 1)))?;
        }
        // A leg lost on time, or stopped by a disconnection, ends early.
        let played_out = game.faulted.is_none();
        for (n, turn) in game.turns.iter().enumerate() {
            let at = |what: &str| differs(index, format!("turn {}: {what}", n + 1));
            if turn.side != position.to_move().side() {
                return Err(at("not the mover's turn"));
            }
            if turn.fault.is_some() {
                if n + 1 != game.turns.len() || played_out {
                    return Err(at("a fault that does not end the leg"));
                }
                break;
            }
            let reply = turn.reply.as_deref().ok_or_else(|| at("no reply recorded"))?;
            let mv = parse_reply(reply, mode).map_err(|e| at(&format!("the reply does not parse: {e}")))?;
            if turn.action.as_deref() != Some(move_name(mv, mode.board_size()).as_str()) {
                return Err(at("the recorded move is not the reply's"));
            }
            position = position.play(mv).map_err(|_| at("an illegal move"))?;
            checked += 1;
        }
        if position.board() != record.final_board {
            return Err(differs(index, "the final board".into()));
        }
        if played_out && (!position.is_over() || position.counts() != record.discs) {
            return Err(differs(index, "its end".into()));
        }
    }
    Ok(checked)
}

/// An entrant that answers what a replay recorded for one participant.
struct Script<'a> {
    replay: &'a Replay,
    info: EntrantInfo,
}

impl Entrant for Script<'_> {
    fn info(&self) -> EntrantInfo {
        self.info.clone()
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        let game = self
            .replay
            .games
            .get(usize::from(setup.game_index))
            .ok_or_else(|| SpawnError::Host(format!("the replay has no game {}", setup.game_index)))?;
        let turns: Vec<TurnRecord> = game
            .turns
            .iter()
            .filter(|turn| usize::from(setup.side) == turn.side.index())
            .cloned()
            .collect();
        // A bot that could not start has no turns and lost at once.
        if turns.is_empty() && game.faulted.map(|side| side.index()) == Some(usize::from(setup.side)) {
            return Err(SpawnError::Bot(fault_of(game.reason, game.detail.clone())));
        }
        Ok(Box::new(Scripted {
            turns: turns.into_iter(),
            asked: 0,
        }))
    }
}

/// One side of one game, answering from the record.
struct Scripted {
    turns: std::vec::IntoIter<TurnRecord>,
    asked: usize,
}

impl Player for Scripted {
    fn turn(&mut self, request: &str, _budget_us: u64) -> Result<Answer, TurnError> {
        self.asked += 1;
        let differs = |what: String| TurnError {
            fault: Fault::Host(what),
            spent: crate::Spent::default(),
        };
        let Some(turn) = self.turns.next() else {
            return Err(differs(format!(
                "the referee asks for turn {} the replay does not have",
                self.asked
            )));
        };
        let digest = crate::referee::hex(&Sha256::digest(request.as_bytes()));
        if digest != turn.request_sha256 {
            return Err(differs(format!(
                "the request of this side's turn {} is not the one recorded",
                self.asked
            )));
        }
        match (turn.reply, turn.fault) {
            (Some(line), _) => Ok(Answer {
                line,
                spent: turn.spent,
            }),
            (None, Some(reason)) => Err(TurnError {
                fault: fault_of(reason, None),
                spent: turn.spent,
            }),
            (None, None) => Err(differs(format!("turn {} has neither a reply nor a fault", self.asked))),
        }
    }

    fn stderr(&self) -> Vec<u8> {
        Vec::new()
    }
}

/// A fault that ends a game with `reason`.
fn fault_of(reason: FinishReason, detail: Option<String>) -> Fault {
    let detail = detail.unwrap_or_else(|| "as recorded".to_string());
    match reason {
        FinishReason::Timeout => Fault::Timeout,
        FinishReason::BadReply => Fault::BadReply(detail),
        FinishReason::Resigned => Fault::Resigned,
        _ => Fault::Crash(detail),
    }
}
