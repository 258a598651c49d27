//! The person's side of a game as the referee sees it: a player whose
//! turn waits for the person's move (or the person's clock), and a bot
//! whose turns wait for a free core.

use super::live::{Live, LiveState};
use arbiter_referee::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The person, as an entrant of the referee.
pub(super) struct Person {
    pub(super) live: Arc<Live>,
}

impl Entrant for Person {
    fn info(&self) -> EntrantInfo {
        EntrantInfo {
            name: self.live.head.person.clone(),
            kind: arbiter_referee::verify::HUMAN_KIND.to_owned(),
            sha256: None,
            // Given the person's recorded moves, the bot's side re-runs.
            reproducible: true,
        }
    }

    fn spawn(&self, _setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        Ok(Box::new(PersonPlayer {
            live: self.live.clone(),
        }))
    }
}

struct PersonPlayer {
    live: Arc<Live>,
}

/// A turn that ends without a move.
fn fault(fault: Fault) -> TurnError {
    TurnError {
        fault,
        spent: Spent::default(),
    }
}

impl Player for PersonPlayer {
    fn turn(&mut self, request: &str, _budget_us: u64) -> Result<Answer, TurnError> {
        let answer = |line: String| Answer {
            line,
            spent: Spent::default(),
        };
        // Tic-tac-toe's greeting needs no answer from the person.
        if serde_json::from_str::<serde_json::Value>(request).is_ok_and(|r| r["action"] == "init") {
            return Ok(answer("{}".to_owned()));
        }
        let live = &self.live;
        let mut state = live.lock();
        if let Some(why) = &state.diverged {
            return Err(fault(Fault::Host(why.clone())));
        }
        // A resumed game played again: the person's saved move, at once
        // (or, at a stop, released again as it was saved).
        if state.replay.is_some() && state.stopping {
            return Err(fault(Fault::Host("the server stopped during the game".to_owned())));
        }
        if let Some(replayed) = replayed_move(&mut state) {
            return replayed.map(answer).map_err(|why| fault(Fault::Host(why)));
        }
        if state.board.must_pass() {
            // Passes are the server's to make, as in FlipSight's rooms.
            state.board.apply("--");
            state.moves.push("--".to_owned());
            let line = state.board.pass_reply();
            drop(state);
            live.changed();
            return Ok(answer(line));
        }
        let started = Instant::now();
        // The clock and the move limit, less what the person spent on this
        // turn before a restart.
        let allowed = state
            .clock_left_ms
            .unwrap_or(u64::MAX)
            .min(live.idle_ms)
            .saturating_sub(state.turn_spent_ms);
        let deadline = started + Duration::from_millis(allowed);
        state.waiting = true;
        state.turn_started = Some(started);
        drop(state);
        live.changed();
        let mut state = live.lock();
        loop {
            if let Some(line) = state.reply.take() {
                // The move's time was counted when it was taken
                // (`People::play_move`).
                state.turn_started = None;
                state.turn_spent_ms = 0;
                return Ok(answer(line));
            }
            let now = Instant::now();
            let stop = if state.saving {
                // A move is being saved: it was made in time.
                None
            } else if state.resigned {
                Some(Fault::Resigned)
            } else if state.stopping {
                Some(Fault::Host("the server stopped during the game".to_owned()))
            } else if now >= deadline {
                let thought = state.thought_ms();
                if let Some(left) = state.clock_left_ms.as_mut() {
                    *left = left.saturating_sub(thought);
                }
                Some(Fault::Timeout)
            } else {
                None
            };
            if let Some(stop) = stop {
                // What the person spent on this turn, for a release.
                state.turn_spent_ms = state.thought_ms();
                state.waiting = false;
                state.turn_started = None;
                return Err(fault(stop));
            }
            let wait = if state.saving {
                Duration::from_millis(50)
            } else {
                deadline.saturating_duration_since(now)
            };
            state = live
                .wake
                .wait_timeout(state, wait)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|poisoned| poisoned.into_inner().0);
        }
    }

    fn stderr(&self) -> Vec<u8> {
        Vec::new()
    }
}

/// The person's reply from the saved moves while a resumed game is played
/// again (`None` once it has caught up), or why the saved move cannot be
/// the person's here.
fn replayed_move(state: &mut LiveState) -> Option<Result<String, String>> {
    let mut replay = state.replay.take()?;
    let at = replay.at;
    let saved = state.moves.get(at)?.clone();
    let line = if replay.board.must_pass() {
        (saved == "--").then(|| replay.board.pass_reply())
    } else {
        replay.board.reply_for(&saved)
    };
    let Some(line) = line else {
        let why = format!("the person's saved move {} ({saved}) is not legal there", at + 1);
        state.diverged = Some(why.clone());
        return Some(Err(why));
    };
    replay.board.apply(&saved);
    replay.at += 1;
    if replay.at < state.moves.len() {
        state.replay = Some(replay);
    }
    Some(Ok(line))
}

/// At most this many bot moves of games against people think at once;
/// the rest wait their turn (their clock is fuel, so waiting costs them
/// nothing).
pub(super) struct Cpus {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Cpus {
    pub(super) fn new(count: usize) -> Cpus {
        Cpus {
            free: Mutex::new(count.max(1)),
            freed: Condvar::new(),
        }
    }

    fn acquire(&self) {
        let mut free = self.free.lock().unwrap_or_else(|p| p.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|p| p.into_inner());
        }
        *free -= 1;
    }

    fn release(&self) {
        *self.free.lock().unwrap_or_else(|p| p.into_inner()) += 1;
        self.freed.notify_one();
    }
}

/// The bot, thinking only when a core is free.
pub(super) struct Gated {
    pub(super) bot: Box<dyn Entrant>,
    pub(super) cores: Arc<Cpus>,
}

impl Entrant for Gated {
    fn info(&self) -> EntrantInfo {
        self.bot.info()
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        self.cores.acquire();
        let player = self.bot.spawn(setup);
        self.cores.release();
        Ok(Box::new(GatedPlayer {
            player: player?,
            cores: self.cores.clone(),
        }))
    }
}

struct GatedPlayer {
    player: Box<dyn Player>,
    cores: Arc<Cpus>,
}

impl Player for GatedPlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        self.cores.acquire();
        let answer = self.player.turn(request, budget_us);
        self.cores.release();
        answer
    }

    fn stderr(&self) -> Vec<u8> {
        self.player.stderr()
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        self.player.peak_memory_bytes()
    }
}
