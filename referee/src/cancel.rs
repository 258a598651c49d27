//! [`Cancellable`]: an entrant whose players give up once a flag is set, so
//! a match its host abandoned (a lost lease, a stop) ends at the next turn.

use crate::player::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, TurnError};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why a cancelled player stops: a host failure, never scored against the
/// bot.
pub const ABANDONED: &str = "match abandoned by its host";

/// Wraps an entrant: until `cancel` is set its players are the inner
/// entrant's, unchanged (every [`Player`] method is forwarded); once it is
/// set, spawning and every turn fail with [`Fault::Host`] ([`ABANDONED`]),
/// spending nothing.
pub struct Cancellable<'a> {
    inner: &'a dyn Entrant,
    cancel: Arc<AtomicBool>,
}

impl<'a> Cancellable<'a> {
    /// `inner`, given up once `cancel` turns true.
    pub fn new(inner: &'a dyn Entrant, cancel: Arc<AtomicBool>) -> Cancellable<'a> {
        Cancellable { inner, cancel }
    }
}

impl Entrant for Cancellable<'_> {
    fn info(&self) -> EntrantInfo {
        self.inner.info()
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(SpawnError::Host(ABANDONED.to_string()));
        }
        Ok(Box::new(CancellablePlayer {
            inner: self.inner.spawn(setup)?,
            cancel: self.cancel.clone(),
        }))
    }
}

struct CancellablePlayer {
    inner: Box<dyn Player>,
    cancel: Arc<AtomicBool>,
}

impl CancellablePlayer {
    fn abandoned(&self) -> Option<TurnError> {
        self.cancel.load(Ordering::Relaxed).then(|| TurnError {
            fault: Fault::Host(ABANDONED.to_string()),
            spent: Default::default(),
        })
    }
}

impl Player for CancellablePlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        match self.abandoned() {
            Some(error) => Err(error),
            None => self.inner.turn(request, budget_us),
        }
    }

    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        match self.abandoned() {
            Some(error) => Err(error),
            None => self.inner.resume(budget_us),
        }
    }

    fn stderr(&self) -> Vec<u8> {
        self.inner.stderr()
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        self.inner.peak_memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::InProcess;

    fn setup() -> GameSetup {
        GameSetup {
            game: "tictactoe".into(),
            mode: "standard".into(),
            seed: 1,
            match_id: 1,
            game_index: 0,
            side: 0,
            fuel_per_ms: None,
            tick_based: false,
        }
    }

    #[test]
    fn a_cancelled_entrant_stops_at_its_next_turn_and_forwards_until_then() {
        let bot = InProcess::new("echo", |_: &GameSetup| Box::new(|request: &str| request.to_owned()));
        let cancel = Arc::new(AtomicBool::new(false));
        let entrant = Cancellable::new(&bot, cancel.clone());
        assert_eq!(entrant.info(), bot.info());
        let mut player = entrant.spawn(&setup()).expect("spawns before the cancel");
        assert_eq!(
            player.turn("hello", 1_000).map(|answer| answer.line).ok().as_deref(),
            Some("hello")
        );
        // Forwarded: an in-process player has no next line.
        assert!(matches!(
            player.resume(1_000),
            Err(TurnError {
                fault: Fault::Timeout,
                ..
            })
        ));
        cancel.store(true, Ordering::Relaxed);
        let error = player.turn("hello", 1_000).err().map(|error| error.fault);
        assert_eq!(error, Some(Fault::Host(ABANDONED.to_string())));
        let error = player.resume(1_000).err().map(|error| error.fault);
        assert_eq!(error, Some(Fault::Host(ABANDONED.to_string())));
        assert!(matches!(entrant.spawn(&setup()), Err(SpawnError::Host(_))));
    }
}
