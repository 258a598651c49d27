//! In-process players: Rust functions answering request lines, for tests and
//! built-in opponents. They cost no time and are always reproducible.

use crate::player::{Answer, Entrant, EntrantInfo, GameSetup, Player, SpawnError, Spent, TurnError};
use std::sync::Arc;

/// A bot's reply function for one game: request line in, reply line out.
pub type ReplyFn = Box<dyn FnMut(&str) -> String + Send>;

type Factory = dyn Fn(&GameSetup) -> ReplyFn + Send + Sync;

/// An entrant whose players are Rust closures made fresh for every game.
#[derive(Clone)]
pub struct InProcess {
    name: String,
    factory: Arc<Factory>,
}

impl InProcess {
    /// An entrant named `name` whose every game gets a new reply function
    /// from `factory`.
    pub fn new(name: impl Into<String>, factory: impl Fn(&GameSetup) -> ReplyFn + Send + Sync + 'static) -> InProcess {
        InProcess {
            name: name.into(),
            factory: Arc::new(factory),
        }
    }
}

impl std::fmt::Debug for InProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InProcess")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

struct InProcessPlayer {
    reply: ReplyFn,
}

impl Player for InProcessPlayer {
    fn turn(&mut self, request: &str, _budget_us: u64) -> Result<Answer, TurnError> {
        Ok(Answer {
            line: (self.reply)(request),
            spent: Spent::default(),
        })
    }

    fn stderr(&self) -> Vec<u8> {
        Vec::new()
    }
}

impl Entrant for InProcess {
    fn info(&self) -> EntrantInfo {
        EntrantInfo {
            name: self.name.clone(),
            kind: "builtin".to_string(),
            sha256: None,
            reproducible: true,
        }
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        Ok(Box::new(InProcessPlayer {
            reply: (self.factory)(setup),
        }))
    }
}
