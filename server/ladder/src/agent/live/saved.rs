//! A match as the database keeps it between moves, and rebuilt from it
//! exactly ([`LiveMatch::snapshot`], [`LiveMatch::restore`]).

use super::{Leg, LegStatus, LiveMatch, MatchFinish, Participant, Played, Status};
use arbiter_games::othello::{Color, Mode, Move, Othello};
use arbiter_games::{FinishReason, Game, Side};
use arbiter_referee::replay::TurnRecord;
use serde::{Deserialize, Serialize};

/// A match as the database keeps it between moves: everything
/// [`LiveMatch::restore`] needs to rebuild it exactly. The boards are not
/// stored but replayed from the opening and the moves, and checked against
/// the board that was saved.
#[derive(Serialize, Deserialize)]
struct Saved {
    id: i64,
    ladder: String,
    mode: Mode,
    seed: u64,
    participants: [Participant; 2],
    time_limit_ms: i64,
    status: Status,
    ranked: bool,
    auto: bool,
    created_ms: i64,
    expires_ms: i64,
    started_ms: Option<i64>,
    finished_ms: Option<i64>,
    legs: Vec<SavedLeg>,
    winner: Option<u8>,
    finish: Option<MatchFinish>,
    ratings: Option<[[f64; 2]; 2]>,
    moved: [bool; 2],
    revision: u64,
    saves: u64,
}

/// One leg of a [`Saved`] match.
#[derive(Serialize, Deserialize)]
struct SavedLeg {
    black: u8,
    clocks_ms: [i64; 2],
    turn_started_ms: i64,
    revision: u32,
    /// Each move: colour code, participant, move code (-1: pass), hall ms.
    history: Vec<(u8, u8, i32, i64)>,
    status: LegStatus,
    finished_ms: Option<i64>,
    result_discs: Option<[u32; 2]>,
    turns: Vec<TurnRecord>,
    fault: Option<(Side, FinishReason, String)>,
    /// The board the moves must lead to.
    board: Vec<u8>,
}

/// Why a saved match cannot be rebuilt.
#[derive(Debug, thiserror::Error)]
pub enum RestoreError {
    /// The text is not a saved match.
    #[error("not a saved match: {0}")]
    Format(#[from] serde_json::Error),
    /// Its moves do not replay to its boards.
    #[error("leg {leg}: {why}")]
    Moves {
        /// The leg.
        leg: usize,
        /// What went wrong.
        why: String,
    },
}

impl LiveMatch {
    /// The match as the database keeps it (JSON), with its snapshot
    /// number: a larger number is a later state of the same match.
    pub fn snapshot(&mut self) -> (u64, String) {
        self.saves += 1;
        let saved = Saved {
            id: self.id,
            ladder: self.ladder.clone(),
            mode: self.mode,
            seed: self.seed,
            participants: self.participants.clone(),
            time_limit_ms: self.time_limit_ms,
            status: self.status,
            ranked: self.ranked,
            auto: self.auto,
            created_ms: self.created_ms,
            expires_ms: self.expires_ms,
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            legs: self
                .legs
                .iter()
                .map(|leg| SavedLeg {
                    black: leg.black,
                    clocks_ms: leg.clocks_ms,
                    turn_started_ms: leg.turn_started_ms,
                    revision: leg.revision,
                    history: leg
                        .history
                        .iter()
                        .map(|p| (p.color.code(), p.participant, p.mv.code(), p.at_ms))
                        .collect(),
                    status: leg.status,
                    finished_ms: leg.finished_ms,
                    result_discs: leg.result_discs,
                    turns: leg.turns.clone(),
                    fault: leg.fault.clone(),
                    board: leg.game.position().board(),
                })
                .collect(),
            winner: self.winner,
            finish: self.finish,
            ratings: self.ratings,
            moved: self.moved,
            revision: self.revision,
            saves: self.saves,
        };
        (self.saves, serde_json::to_string(&saved).unwrap_or_default())
    }

    /// Rebuilds a match from its [`LiveMatch::snapshot`]: the same views,
    /// clocks, revisions and replay as the match that was saved.
    pub fn restore(text: &str) -> Result<LiveMatch, RestoreError> {
        let saved: Saved = serde_json::from_str(text)?;
        let opening = arbiter_games::othello::opening(saved.mode, saved.seed);
        let start = Othello::from_opening(saved.mode, &opening)
            .unwrap_or_else(|_| Othello::from_position(arbiter_games::othello::Position::start(saved.mode)));
        let started = saved.started_ms.unwrap_or(0);
        let mut legs = Vec::with_capacity(saved.legs.len());
        for (index, leg) in saved.legs.into_iter().enumerate() {
            let bad = |why: String| RestoreError::Moves { leg: index, why };
            let mut game = start.clone();
            let mut history = Vec::with_capacity(leg.history.len());
            for (color, participant, code, at_ms) in leg.history {
                let color = Color::from_code(color).ok_or_else(|| bad(format!("colour {color}")))?;
                let mv = if code < 0 {
                    Move::Pass
                } else {
                    Move::Place(u8::try_from(code).map_err(|_| bad(format!("square {code}")))?)
                };
                game.apply(&[(color.side(), mv)], u64::try_from(at_ms - started).unwrap_or(0))
                    .map_err(|e| bad(e.to_string()))?;
                history.push(Played {
                    color,
                    participant,
                    mv,
                    at_ms,
                });
            }
            if game.position().board() != leg.board {
                return Err(bad("its moves do not lead to its board".to_owned()));
            }
            legs.push(Leg {
                game,
                black: leg.black,
                clocks_ms: leg.clocks_ms,
                turn_started_ms: leg.turn_started_ms,
                revision: leg.revision,
                history,
                status: leg.status,
                finished_ms: leg.finished_ms,
                result_discs: leg.result_discs,
                turns: leg.turns,
                fault: leg.fault,
            });
        }
        Ok(LiveMatch {
            id: saved.id,
            ladder: saved.ladder,
            mode: saved.mode,
            seed: saved.seed,
            participants: saved.participants,
            time_limit_ms: saved.time_limit_ms,
            status: saved.status,
            ranked: saved.ranked,
            auto: saved.auto,
            created_ms: saved.created_ms,
            expires_ms: saved.expires_ms,
            started_ms: saved.started_ms,
            finished_ms: saved.finished_ms,
            opening,
            legs,
            winner: saved.winner,
            finish: saved.finish,
            ratings: saved.ratings,
            moved: saved.moved,
            revision: saved.revision,
            saves: saved.saves,
            view_cache: Default::default(),
        })
    }

    /// Moves the match's running deadlines `delta_ms` later: the time no
    /// process held it does not count against anyone (the accept
    /// deadline, the first-move limit, the clocks of the movers).
    pub fn rebase(&mut self, delta_ms: i64) {
        if delta_ms == 0 || self.status.is_over() {
            return;
        }
        self.expires_ms += delta_ms;
        if let Some(started) = &mut self.started_ms {
            *started += delta_ms;
        }
        for leg in &mut self.legs {
            if leg.is_active() {
                leg.turn_started_ms += delta_ms;
            }
        }
    }
}
