//! One remote Othello match under FlipSight's rules, as the agent API plays
//! it: two legs from one opening with colours swapped, played at the same
//! time on the server's clock. Pure state: the hall feeds it moves and the
//! time, it answers with refusals in the seed's words, and at the end it
//! gives the replay.

use arbiter_games::othello::{Color, HistoryEntry, Mode, Move, Othello, Placed};
use arbiter_games::{FinishReason, Game, RequestContext, Side};
use arbiter_referee::replay::{GameRecord, MatchResult, ReplaySettings, TurnRecord};
use arbiter_referee::{EntrantInfo, Replay, Spent};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Where a match is, in the seed's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Waiting for `bot_b` to accept.
    Pending,
    /// Both legs are being played.
    Running,
    /// Played to the end (or lost by a disconnect); rated when ranked.
    Finished,
    /// Nobody moved first in time: never rated.
    Aborted,
    /// `bot_b` said no.
    Rejected,
    /// `bot_b` did not answer in time.
    Expired,
}

impl Status {
    /// The text of the seed (and of the `matches.status` column).
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Running => "running",
            Status::Finished => "finished",
            Status::Aborted => "aborted",
            Status::Rejected => "rejected",
            Status::Expired => "expired",
        }
    }

    /// Whether nothing more happens to the match.
    pub fn is_over(self) -> bool {
        !matches!(self, Status::Pending | Status::Running)
    }
}

/// How a leg stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LegStatus {
    /// Being played.
    Active,
    /// Played out.
    Finished,
    /// The side to move ran out of its clock.
    Timeout,
    /// Ended by the match (a disconnect or an abort).
    Stopped,
}

/// Why a match ended, in the seed's words.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchFinish {
    /// Both legs played out; discs decided.
    Discs,
    /// A leg ended on time.
    Timeout,
    /// Both legs ended on time.
    DoubleTimeout,
    /// A bot was away too long while its opponent was there.
    Disconnect,
    /// A bot did not move first in time: aborted, unrated.
    NoFirstMove,
}

/// Legs of an agent match: the same opening with colours swapped.
pub const LEGS: usize = 2;

mod saved;
pub use saved::RestoreError;

/// A move the rules or the protocol refused; the text is the seed's error.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// The match is not running.
    #[error("match not running")]
    NotRunning,
    /// The leg has ended.
    #[error("leg_finished")]
    LegFinished,
    /// The other colour is to move in that leg.
    #[error("not_your_turn")]
    NotYourTurn,
    /// The revision is not the leg's current one.
    #[error("stale_revision")]
    StaleRevision,
    /// Not a move the rules allow here.
    #[error("illegal_move")]
    IllegalMove,
    /// A name that is no square.
    #[error("invalid move coordinate")]
    InvalidCoordinate,
    /// A number that is no square of this board.
    #[error("move outside board")]
    OutsideBoard,
    /// The leg number is not 0 or 1.
    #[error("leg must be 0 or 1")]
    NoSuchLeg,
}

/// One participant as the match knows it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Participant {
    /// The bot's id (the agent API's bot id).
    pub bot: i64,
    /// The version playing.
    pub version: i64,
    /// For replays: name, kind (`agent` or `wasm`), module digest.
    pub info: EntrantInfo,
    /// Whether it is an agent (it moves through the API); else a house bot
    /// the hall moves on its own fuel clock.
    pub agent: bool,
}

/// One played move, as the match object's `history` shows it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Played {
    color: Color,
    participant: u8,
    mv: Move,
    at_ms: i64,
}

/// One leg.
#[derive(Clone, Debug)]
pub struct Leg {
    game: Othello,
    black: u8,
    clocks_ms: [i64; 2],
    turn_started_ms: i64,
    revision: u32,
    history: Vec<Played>,
    status: LegStatus,
    finished_ms: Option<i64>,
    result_discs: Option<[u32; 2]>,
    turns: Vec<TurnRecord>,
    fault: Option<(Side, FinishReason, String)>,
}

impl Leg {
    /// The colour to move, while the leg is active.
    pub fn turn(&self) -> Color {
        self.game.position().to_move()
    }

    /// The participant to move, while the leg is active.
    pub fn mover(&self) -> u8 {
        self.participant_of(self.turn())
    }

    /// The participant playing `color`.
    pub fn participant_of(&self, color: Color) -> u8 {
        if color == Color::Black {
            self.black
        } else {
            1 - self.black
        }
    }

    /// Whether the leg is still played.
    pub fn is_active(&self) -> bool {
        self.status == LegStatus::Active
    }

    /// The leg's revision (+1 on every change).
    pub fn revision(&self) -> u32 {
        self.revision
    }

    /// The mover's clock left at `now`, in milliseconds (never below 0).
    pub fn remaining_ms(&self, now: i64) -> i64 {
        (self.clocks_ms[self.turn().index()] - (now - self.turn_started_ms)).max(0)
    }

    /// When the mover's clock runs out.
    pub fn deadline_ms(&self) -> i64 {
        self.turn_started_ms + self.clocks_ms[self.turn().index()]
    }

    /// The FlipSight engine request for the side to move, with `budget_ms`.
    pub fn request(&self, match_id: i64, leg: u8, now: i64, budget_ms: u64) -> arbiter_games::othello::Request {
        let remaining = u64::try_from(self.remaining_ms(now)).unwrap_or(0);
        let mut request = self.game.request_for(&RequestContext {
            match_id: u64::try_from(match_id).unwrap_or(0),
            game_index: leg,
            participants: [self.black, 1 - self.black],
            remaining_ms: remaining,
            budget_ms: budget_ms.min(remaining),
        });
        request.history = self.history_entries();
        request
    }

    fn history_entries(&self) -> Vec<HistoryEntry> {
        self.history
            .iter()
            .map(|played| HistoryEntry {
                color: played.color.code(),
                participant: played.participant,
                mv: played.mv.code(),
                at_ms: u64::try_from(played.at_ms).unwrap_or(0),
            })
            .collect()
    }

    /// Discs (or the decided score of a leg lost on time) in colour order.
    fn score(&self) -> [u32; 2] {
        self.result_discs.unwrap_or_else(|| self.game.position().counts())
    }

    /// Ends the leg on the mover's clock at its deadline.
    fn time_out(&mut self, mode: Mode) {
        let color = self.turn();
        let deadline = self.deadline_ms();
        let spent = self.clocks_ms[color.index()].max(0);
        self.clocks_ms[color.index()] = 0;
        let request = self.request_digest();
        self.turns.push(TurnRecord {
            side: color.side(),
            request_sha256: request,
            reply: None,
            action: None,
            spent: spent_of(spent),
            fault: Some(FinishReason::Timeout),
            at_ms: Some(deadline),
        });
        let [lost, won] = mode.result_discs();
        let mut discs = [won, won];
        discs[color.index()] = lost;
        self.result_discs = Some(discs);
        self.fault = Some((color.side(), FinishReason::Timeout, "ran out of its clock".to_owned()));
        self.status = LegStatus::Timeout;
        self.finished_ms = Some(deadline);
        self.revision += 1;
    }

    /// Stops the leg: `loser` forfeits it (`None`: nobody, it just stops).
    fn stop(&mut self, mode: Mode, now: i64, loser: Option<(u8, String)>) {
        if let Some((participant, why)) = loser {
            let color = if participant == self.black {
                Color::Black
            } else {
                Color::White
            };
            let [lost, won] = mode.result_discs();
            let mut discs = [won, won];
            discs[color.index()] = lost;
            self.result_discs = Some(discs);
            self.fault = Some((color.side(), FinishReason::Crash, why));
        }
        self.status = LegStatus::Stopped;
        self.finished_ms = Some(now);
        self.revision += 1;
    }

    fn request_digest(&self) -> String {
        // What an engine would have been asked: the position, not the clock.
        let request = self.request(0, 0, self.turn_started_ms, 0);
        let line = serde_json::to_string(&(&request.board, request.color, &request.legal_moves)).unwrap_or_default();
        hex(&Sha256::digest(line.as_bytes()))
    }

    /// The leg object of the agent API.
    fn view(&self) -> Value {
        let position = self.game.position();
        let placed = position.placed();
        let mut leg = json!({
            "board": position.board(),
            "turn": self.turn().code(),
            "black_participant": self.black,
            "placed": Placed { black: placed[0], white: placed[1] },
            "clocks_ms": self.clocks_ms,
            "turn_started_ms": self.turn_started_ms,
            "revision": self.revision,
            "history": self.history.iter().map(|played| json!({
                "color": played.color.code(),
                "participant": played.participant,
                "move": played.mv.code(),
                "at_ms": played.at_ms,
            })).collect::<Vec<_>>(),
            "status": self.status,
            "discs": position.counts(),
            "finished_ms": self.finished_ms,
            "legal_moves": if self.is_active() {
                position.legal_squares().into_iter().map(i32::from).collect::<Vec<_>>()
            } else {
                Vec::new()
            },
        });
        if let (Some(discs), Some(object)) = (self.result_discs, leg.as_object_mut()) {
            object.insert("result_discs".to_owned(), json!(discs));
        }
        leg
    }
}

/// What changed in a match after a call or a tick.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Change {
    /// Something the match object shows changed.
    pub changed: bool,
    /// The match has just ended.
    pub ended: bool,
}

impl Change {
    fn merge(&mut self, other: Change) {
        self.changed |= other.changed;
        self.ended |= other.ended;
    }
}

/// A remote Othello match.
#[derive(Clone, Debug)]
pub struct LiveMatch {
    /// Its id (the `matches` row).
    pub id: i64,
    /// The remote ladder it counts on.
    pub ladder: String,
    /// The mode.
    pub mode: Mode,
    /// The seed of its opening.
    pub seed: u64,
    /// Participant 0 (`bot_a`, the challenger) and 1 (`bot_b`).
    pub participants: [Participant; 2],
    /// Each leg's clock per colour, milliseconds.
    pub time_limit_ms: i64,
    /// Where it is.
    pub status: Status,
    /// Whether it moves ratings.
    pub ranked: bool,
    /// Whether the scheduler made it.
    pub auto: bool,
    /// When it was created (Unix ms).
    pub created_ms: i64,
    /// The accept deadline.
    pub expires_ms: i64,
    /// When both legs started.
    pub started_ms: Option<i64>,
    /// When it ended.
    pub finished_ms: Option<i64>,
    opening: Vec<Move>,
    legs: Vec<Leg>,
    winner: Option<u8>,
    finish: Option<MatchFinish>,
    /// Each participant's rating before and after, once applied.
    pub ratings: Option<[[f64; 2]; 2]>,
    /// Whether each participant has moved yet.
    moved: [bool; 2],
    /// The match-level revision: +1 on every change, for the event stream.
    pub revision: u64,
    /// Snapshots taken ([`LiveMatch::snapshot`]): a later one replaces an
    /// earlier one in the database, never the other way.
    saves: u64,
    /// The match object's text as last built ([`LiveMatch::view_text`]).
    view_cache: ViewCache,
}

/// The text of `"last_now_ms":` in a match object, followed by the time.
const LAST_NOW: &str = "\"last_now_ms\":";

/// A match object's text, kept with the revisions it shows: (the match's
/// revision, its legs' revisions summed) and the text split where the time
/// goes (`None`: no time in it).
#[derive(Default)]
struct ViewCache(std::sync::Mutex<Option<BuiltView>>);

/// A built match object: the revisions it shows, the text before the time
/// and the text after it (`None`: no time in it).
type BuiltView = ((u64, u64), String, Option<String>);

impl Clone for ViewCache {
    /// A clone starts empty (it is rebuilt on first use).
    fn clone(&self) -> ViewCache {
        ViewCache::default()
    }
}

impl std::fmt::Debug for ViewCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ViewCache")
    }
}

impl LiveMatch {
    /// A pending challenge of `participants[1]` by `participants[0]`.
    #[allow(clippy::too_many_arguments, reason = "each is a column of the match row")]
    pub fn new(
        id: i64,
        ladder: String,
        mode: Mode,
        seed: u64,
        participants: [Participant; 2],
        time_limit_ms: i64,
        ranked: bool,
        auto: bool,
        now: i64,
        accept_ms: i64,
    ) -> LiveMatch {
        let opening = arbiter_games::othello::opening(mode, seed);
        LiveMatch {
            id,
            ladder,
            mode,
            seed,
            participants,
            time_limit_ms,
            status: Status::Pending,
            ranked,
            auto,
            created_ms: now,
            expires_ms: now + accept_ms,
            started_ms: None,
            finished_ms: None,
            opening,
            legs: Vec::new(),
            winner: None,
            finish: None,
            ratings: None,
            moved: [false; 2],
            revision: 0,
            saves: 0,
            view_cache: ViewCache::default(),
        }
    }

    /// Starts both legs at `now` (the challenge was accepted).
    pub fn start(&mut self, now: i64) {
        let game = Othello::from_opening(self.mode, &self.opening)
            .unwrap_or_else(|_| Othello::from_position(arbiter_games::othello::Position::start(self.mode)));
        self.legs = (0..LEGS as u8)
            .map(|leg| Leg {
                game: game.clone(),
                black: leg,
                clocks_ms: [self.time_limit_ms; 2],
                turn_started_ms: now,
                revision: 0,
                history: Vec::new(),
                status: LegStatus::Active,
                finished_ms: None,
                result_discs: None,
                turns: Vec::new(),
                fault: None,
            })
            .collect();
        self.status = Status::Running;
        self.started_ms = Some(now);
        self.revision += 1;
    }

    /// Ends a pending challenge as rejected or expired.
    pub fn close(&mut self, status: Status, now: i64) {
        self.status = status;
        self.finished_ms = Some(now);
        self.revision += 1;
    }

    /// The legs (empty before the start).
    pub fn legs(&self) -> &[Leg] {
        &self.legs
    }

    /// Why it ended.
    pub fn finish(&self) -> Option<MatchFinish> {
        self.finish
    }

    /// The winning participant, once over (`None`: a draw or not over).
    pub fn winner(&self) -> Option<u8> {
        self.winner
    }

    /// The participant number of `bot`, if it plays here.
    pub fn participant_of(&self, bot: i64) -> Option<u8> {
        self.participants.iter().position(|p| p.bot == bot).map(|i| i as u8)
    }

    /// Plays `participant`'s move `value` (a number or a name, as
    /// `agent_move` sends it) in `leg` at `revision`, at `now`. The time
    /// is settled first, so a move after the mover's deadline is refused.
    pub fn play(
        &mut self,
        participant: u8,
        leg: i64,
        revision: i64,
        value: &Value,
        now: i64,
    ) -> Result<Change, (Refusal, Change)> {
        let change = self.advance(now);
        if self.status != Status::Running {
            return Err((Refusal::NotRunning, change));
        }
        let Some(index) = usize::try_from(leg).ok().filter(|&l| l < self.legs.len()) else {
            return Err((Refusal::NoSuchLeg, change));
        };
        let mode = self.mode;
        let state = &mut self.legs[index];
        if !state.is_active() {
            return Err((Refusal::LegFinished, change));
        }
        // A move computed for a position that changed since is stale,
        // whoever is to move now.
        if i64::from(state.revision) != revision {
            return Err((Refusal::StaleRevision, change));
        }
        if state.mover() != participant {
            return Err((Refusal::NotYourTurn, change));
        }
        let mv = parse_move(value, mode).map_err(|refusal| (refusal, change))?;
        let reply = json!({ "move": value }).to_string();
        let spent = now - state.turn_started_ms;
        self.apply(index, mv, spent, reply, now)
            .map_err(|refusal| (refusal, change))?;
        let mut change = change;
        change.merge(Change {
            changed: true,
            ended: false,
        });
        change.merge(self.settle(now));
        Ok(change)
    }

    /// Plays a house bot's move in `leg`, which cost it `spent_ms` of its
    /// clock (fuel time), at `now`; or its fault. Returns `None` when the
    /// leg moved on meanwhile (the answer is dropped).
    pub fn play_house(
        &mut self,
        leg: usize,
        revision: u32,
        answer: Result<(String, u64), (FinishReason, String, u64)>,
        now: i64,
    ) -> Option<Change> {
        let mode = self.mode;
        let state = self.legs.get_mut(leg)?;
        if self.status != Status::Running || !state.is_active() || state.revision != revision {
            return None;
        }
        match answer {
            Ok((line, spent_ms)) => {
                let spent = i64::try_from(spent_ms).unwrap_or(i64::MAX);
                match arbiter_games::othello::parse_reply(&line, mode) {
                    Ok(mv) => match self.apply(leg, mv, spent, line.clone(), now) {
                        Ok(()) => {}
                        Err(_) => self.house_fault(
                            leg,
                            FinishReason::IllegalMove,
                            format!("{line} is not legal"),
                            spent,
                            now,
                        ),
                    },
                    Err(e) => self.house_fault(leg, FinishReason::BadReply, e.to_string(), spent, now),
                }
            }
            Err((reason, why, spent_ms)) => {
                self.house_fault(leg, reason, why, i64::try_from(spent_ms).unwrap_or(i64::MAX), now)
            }
        }
        let mut change = Change {
            changed: true,
            ended: false,
        };
        change.merge(self.settle(now));
        Some(change)
    }

    fn house_fault(&mut self, leg: usize, reason: FinishReason, why: String, spent: i64, now: i64) {
        let mode = self.mode;
        let state = &mut self.legs[leg];
        let color = state.turn();
        state.turns.push(TurnRecord {
            side: color.side(),
            request_sha256: state.request_digest(),
            reply: None,
            action: None,
            spent: spent_of(spent),
            fault: Some(reason),
            at_ms: Some(now),
        });
        let [lost, won] = mode.result_discs();
        let mut discs = [won, won];
        discs[color.index()] = lost;
        state.result_discs = Some(discs);
        state.fault = Some((color.side(), reason, why));
        state.status = if reason == FinishReason::Timeout {
            LegStatus::Timeout
        } else {
            LegStatus::Finished
        };
        state.finished_ms = Some(now);
        state.revision += 1;
    }

    /// Applies a checked-for-turn move; an illegal one changes nothing.
    fn apply(&mut self, leg: usize, mv: Move, spent: i64, reply: String, now: i64) -> Result<(), Refusal> {
        let start = self.started_ms.unwrap_or(now);
        let state = &mut self.legs[leg];
        let color = state.turn();
        let participant = state.mover();
        let request_sha256 = state.request_digest();
        state
            .game
            .apply(&[(color.side(), mv)], u64::try_from(now - start).unwrap_or(0))
            .map_err(|_| Refusal::IllegalMove)?;
        state.clocks_ms[color.index()] -= spent.max(0);
        state.history.push(Played {
            color,
            participant,
            mv,
            at_ms: now,
        });
        let size = self.mode.board_size();
        state.turns.push(TurnRecord {
            side: color.side(),
            request_sha256,
            reply: Some(reply),
            action: Some(arbiter_games::othello::move_name(mv, size)),
            spent: spent_of(spent),
            fault: None,
            at_ms: Some(now),
        });
        state.turn_started_ms = now;
        state.revision += 1;
        if state.game.position().is_over() {
            state.status = LegStatus::Finished;
            state.finished_ms = Some(now);
        }
        self.moved[usize::from(participant)] = true;
        self.revision += 1;
        Ok(())
    }

    /// Settles the time up to `now`: legs whose mover ran out end on time,
    /// and a match none of whose legs is active ends.
    pub fn advance(&mut self, now: i64) -> Change {
        let mut change = Change::default();
        if self.status != Status::Running {
            return change;
        }
        let agents = [self.participants[0].agent, self.participants[1].agent];
        for leg in &mut self.legs {
            // A house bot's clock is its fuel: however long the machine
            // takes to run its move, only the fuel it burns is charged
            // (its budget is what its clock has left).
            let on_the_wall = agents[usize::from(leg.mover())];
            if leg.is_active() && on_the_wall && leg.deadline_ms() <= now {
                leg.time_out(self.mode);
                change.changed = true;
            }
        }
        if change.changed {
            self.revision += 1;
        }
        change.merge(self.settle(now));
        change
    }

    /// Aborts the match when a bot has not moved `first_move_ms` after the
    /// start (never rated).
    pub fn check_first_moves(&mut self, now: i64, first_move_ms: i64) -> Change {
        let Some(started) = self.started_ms else {
            return Change::default();
        };
        if self.status != Status::Running || now - started < first_move_ms || self.moved.iter().all(|&m| m) {
            return Change::default();
        }
        for leg in &mut self.legs {
            if leg.is_active() {
                leg.stop(self.mode, now, None);
            }
        }
        self.status = Status::Aborted;
        self.finish = Some(MatchFinish::NoFirstMove);
        self.finished_ms = Some(now);
        self.ranked = false;
        self.revision += 1;
        Change {
            changed: true,
            ended: true,
        }
    }

    /// `participant` was away too long: it forfeits its active legs and
    /// loses the match.
    pub fn disconnect(&mut self, participant: u8, now: i64, why: &str) -> Change {
        if self.status != Status::Running {
            return Change::default();
        }
        for leg in &mut self.legs {
            if leg.is_active() {
                leg.stop(self.mode, now, Some((participant, why.to_owned())));
            }
        }
        self.end(now, Some(1 - participant), MatchFinish::Disconnect);
        Change {
            changed: true,
            ended: true,
        }
    }

    /// Ends the match once no leg is active.
    fn settle(&mut self, now: i64) -> Change {
        if self.status != Status::Running || self.legs.iter().any(Leg::is_active) {
            return Change::default();
        }
        let totals = self.totals();
        let winner = match self.mode.scoring().compare(totals[0], totals[1]) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        let timeouts = self.legs.iter().filter(|leg| leg.status == LegStatus::Timeout).count();
        let finish = match timeouts {
            0 => MatchFinish::Discs,
            1 => MatchFinish::Timeout,
            _ => MatchFinish::DoubleTimeout,
        };
        let ended_at = self.legs.iter().filter_map(|leg| leg.finished_ms).max().unwrap_or(now);
        self.end(ended_at, winner, finish);
        Change {
            changed: true,
            ended: true,
        }
    }

    fn end(&mut self, now: i64, winner: Option<u8>, finish: MatchFinish) {
        self.status = Status::Finished;
        self.winner = winner;
        self.finish = Some(finish);
        self.finished_ms = Some(now);
        self.revision += 1;
    }

    /// Each participant's discs over both legs.
    pub fn totals(&self) -> [u32; 2] {
        let mut totals = [0, 0];
        for leg in &self.legs {
            let score = leg.score();
            totals[usize::from(leg.black)] += score[0];
            totals[usize::from(1 - leg.black)] += score[1];
        }
        totals
    }

    /// The match object of the agent API, field for field as the seed
    /// documents it.
    pub fn view(&self, now: i64) -> Value {
        let state = if self.legs.is_empty() {
            Value::Null
        } else {
            json!({
                "version": 1,
                "game_mode": self.mode.as_str(),
                "time_limit_sec": self.time_limit_ms / 1000,
                "status": match self.status {
                    Status::Running => "active",
                    Status::Aborted => "aborted",
                    _ => "finished",
                },
                "revision": self.legs.iter().map(|leg| u64::from(leg.revision)).sum::<u64>(),
                "started_ms": self.started_ms,
                "last_now_ms": now,
                "finished_ms": self.finished_ms,
                "opening_moves": self.opening.iter().map(|mv| mv.code()).collect::<Vec<_>>(),
                "opening_history": self.opening_history(),
                "legs": self.legs.iter().map(|leg| leg.view()).collect::<Vec<_>>(),
                "totals": self.totals(),
                "winner": self.winner,
                "finish_reason": self.finish,
                "board_size": self.mode.board_size(),
                "blocked_squares": self.mode.blocked_squares(),
            })
        };
        json!({
            "id": self.id,
            "bot_a": self.participants[0].bot,
            "bot_b": self.participants[1].bot,
            "game_mode": self.mode.as_str(),
            "time_limit_sec": self.time_limit_ms / 1000,
            "status": self.status,
            "state": state,
            "auto": self.auto,
            "expires_ms": self.expires_ms,
            "ranked": self.ranked,
            "rating_applied": self.ratings.is_some(),
            "rating_before": self.ratings.map_or([None, None], |r| [Some(r[0][0]), Some(r[1][0])]),
            "rating_after": self.ratings.map_or([None, None], |r| [Some(r[0][1]), Some(r[1][1])]),
            "created_at": crate::agent::datetime(self.created_ms),
        })
    }

    /// [`LiveMatch::view`] at `now` as JSON text, the same bytes, built
    /// once per change: between changes only `last_now_ms` differs, and it
    /// is written into the text kept from the last build.
    pub fn view_text(&self, now: i64) -> String {
        let key = (self.revision, self.legs.iter().map(|leg| u64::from(leg.revision)).sum());
        let mut cache = self
            .view_cache
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if cache.as_ref().is_none_or(|(built, _, _)| *built != key) {
            let text = self.view(0).to_string();
            *cache = Some(match text.find(LAST_NOW) {
                // `0` is what `view(0)` wrote after it.
                Some(at) => {
                    let cut = at + LAST_NOW.len();
                    (key, text[..cut].to_owned(), Some(text[cut + 1..].to_owned()))
                }
                None => (key, text, None),
            });
        }
        match cache.as_ref() {
            Some((_, before, Some(after))) => format!("{before}{now}{after}"),
            Some((_, whole, None)) => whole.clone(),
            None => self.view(now).to_string(),
        }
    }

    fn opening_history(&self) -> Vec<Value> {
        let mut position = arbiter_games::othello::Position::start(self.mode);
        let mut history = Vec::new();
        for &mv in &self.opening {
            history.push(json!({ "color": position.to_move().code(), "move": mv.code() }));
            position = position.play(mv).unwrap_or(position);
        }
        history
    }

    /// The replay of a match that ended (`None` before, or for a match that
    /// never started).
    pub fn replay(&self, engine: &str, fuel_per_ms: Option<u64>) -> Option<Replay> {
        if !self.status.is_over() || self.legs.is_empty() {
            return None;
        }
        let games = self
            .legs
            .iter()
            .enumerate()
            .map(|(index, leg)| {
                let scores = leg.score();
                let (faulted, reason, detail) = match &leg.fault {
                    Some((side, reason, why)) => (Some(*side), *reason, Some(why.clone())),
                    None => (None, FinishReason::Discs, None),
                };
                GameRecord {
                    index: index as u8,
                    sides: [leg.black, 1 - leg.black],
                    turns: leg.turns.clone(),
                    scores,
                    reason,
                    faulted,
                    detail,
                    record: leg.game.record().into(),
                }
            })
            .collect();
        let totals = self.totals();
        let points = match self.winner {
            Some(0) => [1.0, 0.0],
            Some(_) => [0.0, 1.0],
            None => [0.5, 0.5],
        };
        Some(Replay {
            format: arbiter_referee::replay::FORMAT.to_owned(),
            version: arbiter_referee::replay::FORMAT_VERSION,
            game: "othello".to_owned(),
            mode: self.mode.as_str().to_owned(),
            seed: self.seed,
            match_id: u64::try_from(self.id).unwrap_or(0),
            settings: ReplaySettings {
                turn_ms: u64::try_from(self.time_limit_ms).unwrap_or(0),
                bank_ms: u64::try_from(self.time_limit_ms).unwrap_or(0),
                first_turn_ms: None,
                fuel_per_ms,
                standard_opening: false,
            },
            engine: engine.to_owned(),
            participants: [self.participants[0].info.clone(), self.participants[1].info.clone()],
            reproducible: false,
            games,
            result: MatchResult {
                totals,
                points,
                winner: self.winner,
            },
        })
    }
}

/// Reads `agent_move`'s `move`: a square number, `-1`, a square name
/// (`d3`, `D3`, `j10` = `J0`) or a pass spelling.
pub fn parse_move(value: &Value, mode: Mode) -> Result<Move, Refusal> {
    let size = i64::from(mode.board_size());
    match value {
        Value::Number(number) => match number.as_i64() {
            Some(-1) => Ok(Move::Pass),
            Some(n) if (0..size * size).contains(&n) => Ok(Move::Place(n as u8)),
            _ => Err(Refusal::OutsideBoard),
        },
        Value::String(text) => {
            let text = text.trim();
            if arbiter_games::othello::PASS_NAMES
                .iter()
                .any(|p| text.eq_ignore_ascii_case(p))
                || text == "-1"
            {
                return Ok(Move::Pass);
            }
            if let Ok(n) = text.parse::<i64>() {
                return parse_move(&Value::from(n), mode);
            }
            arbiter_games::othello::parse_square(text, mode.board_size())
                .map(Move::Place)
                .ok_or(Refusal::InvalidCoordinate)
        }
        _ => Err(Refusal::InvalidCoordinate),
    }
}

fn spent_of(ms: i64) -> Spent {
    Spent {
        us: u64::try_from(ms.max(0)).unwrap_or(0).saturating_mul(1000),
        fuel: None,
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn participant(bot: i64, agent: bool) -> Participant {
        Participant {
            bot,
            version: bot * 10,
            info: EntrantInfo {
                name: format!("bot{bot}"),
                kind: "agent".to_owned(),
                sha256: None,
                reproducible: false,
            },
            agent,
        }
    }

    fn running(mode: Mode, now: i64) -> LiveMatch {
        let mut m = LiveMatch::new(
            7,
            "remote:othello:std".into(),
            mode,
            42,
            [participant(1, true), participant(2, true)],
            60_000,
            true,
            false,
            now,
            120_000,
        );
        m.start(now);
        m
    }

    /// Plays the first legal move (or the pass) for whoever is to move in
    /// `leg`, `spent` ms after its turn began.
    fn first_legal(m: &mut LiveMatch, leg: usize, now: i64) -> Result<Change, (Refusal, Change)> {
        let l = &m.legs()[leg];
        let mv = l.game.position().legal_squares().first().map_or(-1, |&s| i64::from(s));
        let (mover, revision) = (l.mover(), i64::from(l.revision()));
        m.play(mover, leg as i64, revision, &Value::from(mv), now)
    }

    #[test]
    fn a_snapshot_restores_the_same_match_in_every_mode_and_state() {
        for mode in [Mode::Std, Mode::Anti, Mode::Grand, Mode::Octagon, Mode::Reversi] {
            let mut m = running(mode, 1_000);
            let mut now = 1_000;
            let mut checked = 0;
            // Through the whole match, a snapshot after every few moves.
            while m.status == Status::Running && now < 1_000_000 {
                for leg in 0..LEGS {
                    if m.legs()[leg].is_active() {
                        now += 37;
                        let _ = first_legal(&mut m, leg, now);
                    }
                }
                // The match object's text, built once per change, is the
                // object's bytes at any time (a second look is the cache's).
                for at in [now, now + 1] {
                    assert_eq!(m.view_text(at), m.view(at).to_string(), "{mode:?}");
                }
                let (number, text) = m.snapshot();
                let restored = LiveMatch::restore(&text).unwrap_or_else(|e| panic!("{mode:?}: {e}"));
                assert_eq!(restored.view(now), m.view(now), "{mode:?}");
                assert_eq!(restored.saves, number);
                checked += 1;
            }
            assert!(checked > 20, "{mode:?}: {checked} snapshots");
            assert_eq!(m.status, Status::Finished, "{mode:?}");
            let (_, text) = m.snapshot();
            let restored = LiveMatch::restore(&text).expect("an ended match restores");
            let replay = |m: &LiveMatch| serde_json::to_string(&m.replay("engine", None)).expect("a replay");
            assert_eq!(replay(&restored), replay(&m), "{mode:?}: the same replay");
        }
    }

    #[test]
    fn a_restored_match_loses_no_clock_time_to_the_gap_and_refuses_tampered_moves() {
        let mut m = running(Mode::Std, 1_000);
        first_legal(&mut m, 0, 3_000).expect("a move");
        let remaining = m.legs()[0].remaining_ms(5_000);
        let (_, text) = m.snapshot();
        let mut restored = LiveMatch::restore(&text).expect("restores");
        // Saved at 5 000 on the old clock; the new process resumes it at
        // 95 000 on its own.
        restored.rebase(95_000 - 5_000);
        assert_eq!(restored.legs()[0].remaining_ms(95_000), remaining);
        assert_eq!(restored.check_first_moves(95_000, 30_000), Change::default());
        // White's move in black's place: the moves no longer replay.
        let tampered = text.replacen("\"history\":[[1,", "\"history\":[[2,", 1);
        assert_ne!(tampered, text);
        assert!(LiveMatch::restore(&tampered).is_err(), "{tampered}");
        assert!(LiveMatch::restore("{}").is_err());
    }

    #[test]
    fn a_house_bot_is_timed_by_its_fuel_not_by_the_wall() {
        let mut m = LiveMatch::new(
            7,
            "remote:othello:std".into(),
            Mode::Std,
            42,
            [participant(1, true), participant(2, false)],
            60_000,
            true,
            false,
            1_000,
            120_000,
        );
        m.start(1_000);
        // Leg 1: the house bot (participant 1) is black and moves first.
        assert_eq!(m.legs()[1].mover(), 1);
        // Long past its clock on the wall (a busy machine): not a timeout.
        m.advance(1_000 + 600_000);
        assert!(m.legs()[1].is_active(), "the house bot's leg is still on");
        // The agent's leg times out on the wall.
        assert!(!m.legs()[0].is_active(), "the agent's clock ran out");
        assert_eq!(m.legs()[0].status, LegStatus::Timeout);
    }

    #[test]
    fn both_legs_play_to_the_end_with_passes_and_the_totals_decide() {
        let mut m = running(Mode::Std, 1_000);
        let mut now = 1_000;
        while m.status == Status::Running {
            now += 5;
            for leg in 0..2 {
                if m.legs()[leg].is_active() {
                    first_legal(&mut m, leg, now).expect("a legal move is taken");
                }
            }
        }
        assert_eq!(m.status, Status::Finished);
        assert_eq!(m.finish(), Some(MatchFinish::Discs));
        let totals = m.totals();
        let expected = match totals[0].cmp(&totals[1]) {
            std::cmp::Ordering::Greater => Some(0),
            std::cmp::Ordering::Less => Some(1),
            std::cmp::Ordering::Equal => None,
        };
        assert_eq!(m.winner(), expected);
        let replay = m.replay("arbiter test", None).expect("a replay");
        assert!(!replay.reproducible);
        assert_eq!(replay.games.len(), 2);
        assert_eq!(replay.result.totals, totals);
        let bytes = replay.to_json();
        assert_eq!(Replay::from_json(&bytes).expect("it reads back").to_json(), bytes);
    }

    #[test]
    fn refused_moves_change_nothing_and_say_why_in_the_seeds_words() {
        let mut m = running(Mode::Std, 0);
        let leg = &m.legs()[0];
        let (mover, board) = (leg.mover(), leg.game.position().board());
        let other = 1 - mover;
        let view = |m: &LiveMatch| m.view(10)["state"]["legs"][0].clone();
        let before = view(&m);
        assert_eq!(
            m.play(other, 0, 0, &Value::from(19), 10).map_err(|e| e.0),
            Err(Refusal::NotYourTurn)
        );
        assert_eq!(
            m.play(mover, 0, 3, &Value::from(19), 10).map_err(|e| e.0),
            Err(Refusal::StaleRevision)
        );
        let illegal = (0..64u8)
            .find(|s| !m.legs()[0].game.position().legal_squares().contains(s))
            .expect("an illegal square");
        assert_eq!(
            m.play(mover, 0, 0, &Value::from(illegal), 10).map_err(|e| e.0),
            Err(Refusal::IllegalMove)
        );
        assert_eq!(
            m.play(mover, 0, 0, &Value::from(64), 10).map_err(|e| e.0),
            Err(Refusal::OutsideBoard)
        );
        assert_eq!(
            m.play(mover, 0, 0, &Value::from("z9"), 10).map_err(|e| e.0),
            Err(Refusal::InvalidCoordinate)
        );
        assert_eq!(
            m.play(mover, 0, 0, &Value::from("pass"), 10).map_err(|e| e.0),
            Err(Refusal::IllegalMove)
        );
        assert_eq!(
            m.play(mover, 2, 0, &Value::from(19), 10).map_err(|e| e.0),
            Err(Refusal::NoSuchLeg)
        );
        assert_eq!(view(&m), before);
        assert_eq!(m.legs()[0].game.position().board(), board);
        // A name is as good as a number.
        let square = m.legs()[0].game.position().legal_squares()[0];
        let name = arbiter_games::othello::square_name(square, 8).to_uppercase();
        first_legal(&mut m, 1, 10).expect("leg 1 moves");
        m.play(mover, 0, 0, &Value::from(name), 20)
            .expect("D3-style names are taken");
        assert_eq!(m.legs()[0].revision(), 1);
        assert_eq!(
            m.play(mover, 0, 1, &Value::from(19), 30).map_err(|e| e.0),
            Err(Refusal::NotYourTurn)
        );
    }

    #[test]
    fn a_clock_run_out_ends_its_leg_and_the_other_is_played_out() {
        let mut m = running(Mode::Std, 0);
        // Leg 0's black (participant 0) never moves; leg 1 goes on.
        first_legal(&mut m, 1, 100).expect("participant 1 moves in leg 1");
        let change = m.advance(60_001);
        assert!(change.changed && !change.ended);
        assert_eq!(m.legs()[0].status, LegStatus::Timeout);
        assert_eq!(m.status, Status::Running);
        assert_eq!(
            m.play(0, 0, 0, &Value::from(19), 60_002).map_err(|e| e.0),
            Err(Refusal::LegFinished)
        );
        let mut now = 60_000;
        while m.status == Status::Running {
            now += 1;
            first_legal(&mut m, 1, now).expect("leg 1 is played out");
        }
        assert_eq!(m.finish(), Some(MatchFinish::Timeout));
        assert_eq!(m.legs()[0].score(), [0, 64]);
        let replay = m.replay("arbiter test", None).expect("a replay");
        assert_eq!(replay.games[0].reason, FinishReason::Timeout);
        assert_eq!(replay.games[0].faulted, Some(Side::First));
    }

    #[test]
    fn no_first_move_aborts_unrated_and_a_disconnect_loses_rated() {
        let mut m = running(Mode::Std, 0);
        assert_eq!(m.check_first_moves(29_999, 30_000), Change::default());
        let change = m.check_first_moves(30_000, 30_000);
        assert!(change.ended);
        assert_eq!(
            (m.status, m.finish(), m.ranked),
            (Status::Aborted, Some(MatchFinish::NoFirstMove), false)
        );

        let mut m = running(Mode::Std, 0);
        first_legal(&mut m, 0, 10).expect("participant 0 moves");
        first_legal(&mut m, 1, 10).expect("participant 1 moves");
        let change = m.disconnect(1, 40_000, "disconnected");
        assert!(change.ended);
        assert_eq!(
            (m.status, m.winner(), m.finish(), m.ranked),
            (Status::Finished, Some(0), Some(MatchFinish::Disconnect), true)
        );
        assert!(m.legs().iter().all(|leg| leg.status == LegStatus::Stopped));
    }
}
