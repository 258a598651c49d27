//! House bots as agents' opponents: one sandboxed player per (match, leg),
//! kept for the leg like a worker keeps it for a game, asked for a move
//! whenever it is the house bot's turn.

use crate::handles::Handles;
use arbiter_games::FinishReason;
use arbiter_referee::{Entrant, Fault, GameSetup, Player, WasmBot};
use std::collections::HashMap;
use std::sync::Mutex;
use tokio::sync::OwnedSemaphorePermit;

/// A house bot's answer: its reply line and the milliseconds of fuel time
/// it spent, or its fault (reason, words, milliseconds spent).
pub(super) type HouseAnswer = Result<(String, u64), (FinishReason, String, u64)>;

/// A house bot's player for one leg, with the sandbox instance it holds
/// (given back when the player is dropped).
struct Held {
    player: Box<dyn Player>,
    _instance: Option<OwnedSemaphorePermit>,
}

/// The hall's sandboxed players.
#[derive(Default)]
pub(super) struct HousePlayers {
    players: Mutex<HashMap<(i64, usize), Held>>,
}

impl HousePlayers {
    /// Asks the house bot `module` (a blob key) for its move in leg `leg` of
    /// match `id`; blocks while it thinks. Its player is started on its
    /// first turn of the leg.
    /// `instance` is the leg's place in the house bots' budget, taken by
    /// the caller for the leg's first move (`None` after it): the player
    /// keeps it until the match is forgotten.
    #[expect(clippy::too_many_arguments, reason = "one house turn's facts, each used once")]
    pub fn turn(
        &self,
        core: &Handles,
        id: i64,
        leg: usize,
        module: &str,
        request: &str,
        budget_ms: u64,
        instance: Option<OwnedSemaphorePermit>,
    ) -> HouseAnswer {
        let taken = self.lock().remove(&(id, leg));
        let mut held = match taken {
            Some(held) => held,
            None => Held {
                player: spawn(core, id, leg, module, request).map_err(|why| (FinishReason::Crash, why, 0))?,
                _instance: instance,
            },
        };
        let answer = held.player.turn(request, budget_ms.saturating_mul(1000));
        self.lock().insert((id, leg), held);
        match answer {
            Ok(answer) => Ok((answer.line, answer.spent.us / 1000)),
            Err(error) => {
                let reason = match error.fault {
                    Fault::Timeout => FinishReason::Timeout,
                    Fault::BadReply(_) => FinishReason::BadReply,
                    _ => FinishReason::Crash,
                };
                Err((reason, error.fault.to_string(), error.spent.us / 1000))
            }
        }
    }

    /// Whether leg `leg` of match `id` has its player (and so its
    /// instance).
    pub fn has(&self, id: i64, leg: usize) -> bool {
        self.lock().contains_key(&(id, leg))
    }

    /// Players held now (each holds one sandbox instance).
    pub fn held(&self) -> usize {
        self.lock().len()
    }

    /// Drops match `id`'s players.
    pub fn forget(&self, id: i64) {
        self.lock().retain(|&(match_id, _), _| match_id != id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(i64, usize), Held>> {
        self.players.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Loads the module (from the sandbox's cache or the blob store) and
/// starts a player for the side to move in `request`.
fn spawn(core: &Handles, id: i64, leg: usize, module: &str, request: &str) -> Result<Box<dyn Player>, String> {
    let loaded = core.load_module(module)?;
    let parsed: serde_json::Value = serde_json::from_str(request).unwrap_or_default();
    let mode = parsed["game_mode"].as_str().unwrap_or("std").to_owned();
    let color = parsed["color"].as_u64().unwrap_or(1);
    let bot = WasmBot::new(core.sandbox.clone(), loaded, "house");
    bot.spawn(&GameSetup {
        game: "othello".to_owned(),
        mode,
        seed: u64::try_from(id).unwrap_or(0),
        match_id: u64::try_from(id).unwrap_or(0),
        game_index: leg as u8,
        side: if color == 1 { 0 } else { 1 },
        fuel_per_ms: None,
        tick_based: false,
    })
    .map_err(|e| format!("cannot start the house bot: {e}"))
}
