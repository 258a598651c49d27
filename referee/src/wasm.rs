//! Sandboxed WebAssembly players: uploaded bots under the fuel clock.

use crate::player::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};
use arbiter_sandbox::{
    BotEnv, BotInstance, BotModule, CrashReason, FaultKind, OnTimeout, Sandbox, TurnFault, TurnReply,
};
use sha2::{Digest, Sha256};

/// Where every bot's virtual clocks start: 2026-01-01T00:00:00Z. Fixed, so
/// that a bot reading the date behaves the same in every re-run.
pub const CLOCK_ORIGIN_NS: u64 = 1_767_225_600_000_000_000;

/// A WebAssembly bot: a compiled module and the sandbox that runs it. Every
/// game gets a fresh instance whose random stream is seeded from the match
/// seed, the game and the side.
#[derive(Clone, Debug)]
pub struct WasmBot {
    sandbox: Sandbox,
    module: BotModule,
    name: String,
}

impl WasmBot {
    /// A bot called `name` running `module` in `sandbox`.
    pub fn new(sandbox: Sandbox, module: BotModule, name: impl Into<String>) -> WasmBot {
        WasmBot {
            sandbox,
            module,
            name: name.into(),
        }
    }

    /// Fuel per virtual millisecond of its sandbox, used where a match
    /// records none.
    pub fn fuel_per_ms(&self) -> u64 {
        self.sandbox.config().fuel_per_ms
    }
}

/// The first `N` bytes a sandboxed bot's `random_get` returns in the game
/// whose bot seed is `seed` (see [`bot_seed`]): what a native run needs to
/// draw the same random numbers.
pub fn first_random_bytes<const N: usize>(seed: u64) -> [u8; N] {
    let mut bytes = [0u8; N];
    arbiter_sandbox::first_random_bytes(seed, &mut bytes);
    bytes
}

/// The seed of a bot's random stream in one game of a match.
pub fn bot_seed(match_seed: u64, game_index: u8, side: u8) -> u64 {
    let digest = Sha256::new()
        .chain_update(match_seed.to_le_bytes())
        .chain_update([game_index, side])
        .finalize();
    let mut bytes = [0u8; 8];
    bytes.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(bytes)
}

impl Entrant for WasmBot {
    fn info(&self) -> EntrantInfo {
        EntrantInfo {
            name: self.name.clone(),
            kind: "wasm".to_string(),
            sha256: Some(self.module.sha256().to_string()),
            reproducible: true,
        }
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        let fuel_per_ms = setup.fuel_per_ms.unwrap_or_else(|| self.fuel_per_ms()).max(1);
        let env = BotEnv {
            seed: bot_seed(setup.seed, setup.game_index, setup.side),
            vars: vec![
                ("ARBITER_GAME".to_string(), setup.game.clone()),
                ("ARBITER_MODE".to_string(), setup.mode.clone()),
            ],
            start_time_ns: CLOCK_ORIGIN_NS,
            // A timeout ends the bot's game in turn-based games: stop it at
            // exactly its budget. In tick-based ones it only skips the tick.
            on_timeout: if setup.tick_based {
                OnTimeout::Pause
            } else {
                OnTimeout::Stop
            },
            fuel_per_ms: Some(fuel_per_ms),
        };
        let instance = self
            .sandbox
            .instantiate(&self.module, env)
            .map_err(|error| SpawnError::Host(error.to_string()))?;
        Ok(Box::new(WasmPlayer { instance, fuel_per_ms }))
    }
}

struct WasmPlayer {
    instance: BotInstance,
    fuel_per_ms: u64,
}

impl WasmPlayer {
    fn spent(&self, fuel: u64) -> Spent {
        let us = (u128::from(fuel) * 1000).div_ceil(u128::from(self.fuel_per_ms.max(1)));
        Spent {
            us: u64::try_from(us).unwrap_or(u64::MAX),
            fuel: Some(fuel),
        }
    }
}

impl WasmPlayer {
    /// Fuel for `budget_us` virtual microseconds.
    fn fuel(&self, budget_us: u64) -> u64 {
        let fuel = u128::from(budget_us) * u128::from(self.fuel_per_ms) / 1000;
        u64::try_from(fuel).unwrap_or(u64::MAX)
    }

    /// A sandbox turn's outcome as the referee's.
    fn answer(&self, outcome: Result<TurnReply, TurnFault>) -> Result<Answer, TurnError> {
        match outcome {
            Ok(reply) => {
                let spent = self.spent(reply.fuel_used);
                match String::from_utf8(reply.line) {
                    Ok(line) => Ok(Answer { line, spent }),
                    Err(_) => Err(TurnError {
                        fault: Fault::BadReply("reply is not UTF-8".to_string()),
                        spent,
                    }),
                }
            }
            Err(fault) => {
                let spent = self.spent(fault.fuel_used);
                let fault = match fault.kind {
                    FaultKind::Timeout => Fault::Timeout,
                    FaultKind::Crash(CrashReason::RestartFailed(why)) => Fault::Host(why),
                    FaultKind::Crash(reason @ CrashReason::Backstop { .. }) => Fault::Stalled(reason.to_string()),
                    FaultKind::Crash(reason) => Fault::Crash(reason.to_string()),
                    FaultKind::BadReply(reason) => Fault::BadReply(reason.to_string()),
                    other => Fault::Crash(other.to_string()),
                };
                Err(TurnError { fault, spent })
            }
        }
    }
}

impl Player for WasmPlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        let outcome = self.instance.turn(request.as_bytes(), self.fuel(budget_us));
        self.answer(outcome)
    }

    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        let outcome = self.instance.resume(self.fuel(budget_us));
        self.answer(outcome)
    }

    fn stderr(&self) -> Vec<u8> {
        self.instance.stderr().to_vec()
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        Some(self.instance.peak_memory_bytes())
    }
}
