//! State shared between a running bot (its host calls, on the wasm fiber)
//! and the driver ([`BotInstance::turn`](crate::BotInstance::turn)), and the
//! fuel accounting both sides do.
//!
//! Fuel accounting: at every refill the store's tank is set (recorded in
//! `tank`) and handed out in chunks of `chunk` fuel; when a chunk is used up
//! wasmtime yields to the driver, which reads the wall clock for the
//! backstop. At every host call the host *syncs*: it reads the exact fuel
//! used since the previous refill, adds it to the turn and refills the tank.
//!
//! How big the tank is depends on what a timeout does
//! ([`OnTimeout`](crate::OnTimeout)):
//!
//! - `Stop`: the tank is exactly what is left of the turn's budget, so
//!   wasmtime itself stops the bot (an out-of-fuel trap) at the first fuel
//!   check past its budget. Nothing is estimated: a bulk instruction whose
//!   length would cross the budget is charged and stopped before it runs.
//! - `Pause`: the tank is huge ([`FUEL_TANK`]) so that the bot can be paused
//!   and resumed. Between syncs the driver only knows a lower bound
//!   (`yields × chunk`), which is enough to decide that a budget ran out;
//!   what it charged to turns that timed out is remembered in
//!   `since_sync_charged` and settled at the next sync.
//!
//! All of this is deterministic: the same program and inputs give the same
//! yields, syncs and totals.

use std::sync::{Arc, Mutex, MutexGuard};
use std::task::Poll;
use std::time::Instant;

use rand_chacha::ChaCha20Rng;

/// Fuel put in a store's tank at every sync when timeouts pause the bot;
/// never reached in practice.
pub(crate) const FUEL_TANK: u64 = 1 << 62;
/// Smallest chunk of fuel between two yields.
pub(crate) const MIN_CHUNK: u64 = 10_000;

/// Why a paused bot handed control back to the driver.
pub(crate) enum Event {
    /// A reply line (without newline) and the fuel the turn used.
    Reply(Vec<u8>, u64),
    /// The turn's budget ran out during a host call.
    Timeout,
}

/// Parameters fixed for the life of a [`BotInstance`](crate::BotInstance).
pub(crate) struct Params {
    pub(crate) fuel_per_ms: u64,
    pub(crate) on_timeout: crate::OnTimeout,
    pub(crate) granularity: u64,
    pub(crate) call_fuel: u64,
    pub(crate) byte_fuel: u64,
    pub(crate) max_reply: usize,
    pub(crate) max_stderr: usize,
    pub(crate) max_stack: usize,
    pub(crate) max_memory: usize,
    pub(crate) max_table: usize,
    pub(crate) start_time_ns: u64,
    /// The environment, as pairs (for components).
    pub(crate) vars: Vec<(String, String)>,
    /// `KEY=VALUE\0` for each environment variable.
    pub(crate) environ: Vec<Vec<u8>>,
}

impl Params {
    /// Fuel that corresponds to `ns` virtual nanoseconds.
    pub(crate) fn ns_to_fuel(&self, ns: u64) -> u64 {
        let f = u128::from(ns) * u128::from(self.fuel_per_ms) / 1_000_000;
        u64::try_from(f).unwrap_or(u64::MAX)
    }

    /// Virtual nanoseconds that `fuel` corresponds to.
    pub(crate) fn fuel_to_ns(&self, fuel: u64) -> u64 {
        let ns = u128::from(fuel) * 1_000_000 / u128::from(self.fuel_per_ms.max(1));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// Bytes a single `fd_write` accepts (a short write beyond).
    pub(crate) fn write_cap(&self) -> usize {
        (self.max_reply + 1).max(64 * 1024)
    }
}

/// Turn state of one [`BotInstance`](crate::BotInstance).
pub(crate) struct Io {
    pub(crate) stdin: Vec<u8>,
    pub(crate) stdin_pos: usize,
    /// Where the current request starts in `stdin`.
    pub(crate) request_start: usize,
    /// Requests delivered.
    pub(crate) requests: u64,
    /// Complete stdout lines (the n-th line answers the n-th request).
    pub(crate) lines: u64,
    /// Lines written by the current wasm instance.
    pub(crate) instance_lines: u64,
    pub(crate) stdout_line: Vec<u8>,
    /// stderr not yet handed to the driver.
    pub(crate) stderr: Vec<u8>,
    pub(crate) stderr_kept: usize,
    pub(crate) stderr_truncated: bool,
    /// The most linear memory seen at a read or write call, in bytes.
    pub(crate) peak_memory: u64,
    /// Changes when a new turn starts; paused host calls wait for it.
    pub(crate) turn_seq: u64,
    pub(crate) event: Option<Event>,
    pub(crate) budget: u64,
    /// Fuel charged to the current turn, exact as of the last sync.
    pub(crate) turn_used: u64,
    /// Fuel used by this bot since it started (all instances): its clock.
    pub(crate) total_used: u64,
    /// Fuel used since the last sync that was already charged to turns that
    /// timed out.
    pub(crate) since_sync_charged: u64,
    /// Chunks used up since the last sync.
    pub(crate) yields: u64,
    /// Size of the chunks since the last sync.
    pub(crate) chunk: u64,
    /// The store's fuel as of the last refill.
    pub(crate) tank: u64,
    pub(crate) backstop: Instant,
    pub(crate) backstop_ms: u64,
    pub(crate) rng: ChaCha20Rng,
    /// The game is over: reads find end of file instead of waiting.
    pub(crate) closed: bool,
}

impl Io {
    pub(crate) fn new(rng: ChaCha20Rng, chunk: u64) -> Io {
        Io {
            stdin: Vec::new(),
            stdin_pos: 0,
            request_start: 0,
            requests: 0,
            lines: 0,
            instance_lines: 0,
            stdout_line: Vec::new(),
            stderr: Vec::new(),
            stderr_kept: 0,
            stderr_truncated: false,
            peak_memory: 0,
            turn_seq: 0,
            event: None,
            budget: 0,
            turn_used: 0,
            total_used: 0,
            since_sync_charged: 0,
            yields: 0,
            chunk,
            tank: FUEL_TANK,
            backstop: Instant::now(),
            backstop_ms: 0,
            rng,
            closed: false,
        }
    }

    /// Adds the exact fuel used since the last refill (`tank_left` is what
    /// is left of [`Io::tank`]).
    pub(crate) fn sync(&mut self, tank_left: u64) {
        let used = self.tank.saturating_sub(tank_left);
        self.total_used = self.total_used.saturating_add(used);
        self.turn_used = self
            .turn_used
            .saturating_add(used.saturating_sub(self.since_sync_charged));
        self.since_sync_charged = 0;
        self.yields = 0;
    }

    /// Charges host work (no wasm ran for it).
    pub(crate) fn charge(&mut self, fuel: u64) {
        self.turn_used = self.turn_used.saturating_add(fuel);
        self.total_used = self.total_used.saturating_add(fuel);
    }

    /// Sizes the tank and its chunks for the rest of this turn: returns
    /// `(tank, chunk)` for the store.
    pub(crate) fn refill(&mut self, p: &Params) -> (u64, u64) {
        let left = self.budget.saturating_sub(self.turn_used);
        self.chunk = left.clamp(MIN_CHUNK, p.granularity.max(MIN_CHUNK));
        self.tank = match p.on_timeout {
            crate::OnTimeout::Stop => left,
            crate::OnTimeout::Pause => FUEL_TANK,
        };
        (self.tank, self.chunk)
    }

    /// When the turn has used more than its budget (as of the last sync):
    /// carries the excess over to the next turn, reports a timeout and
    /// returns the turn a paused host call must wait past. `None` while
    /// budget is left.
    pub(crate) fn time_out_if_over(&mut self) -> Option<u64> {
        if self.turn_used <= self.budget {
            return None;
        }
        self.turn_used -= self.budget;
        self.event = Some(Event::Timeout);
        Some(self.turn_seq)
    }

    /// Lower bound of the fuel the current turn has used.
    pub(crate) fn turn_estimate(&self) -> u64 {
        self.turn_used.saturating_add(
            self.yields
                .saturating_mul(self.chunk)
                .saturating_sub(self.since_sync_charged),
        )
    }

    /// Appends to stderr, keeping at most `max` bytes and a marker line.
    pub(crate) fn write_stderr(&mut self, bytes: &[u8], max: usize) {
        let room = max.saturating_sub(self.stderr_kept);
        let keep = room.min(bytes.len());
        self.stderr.extend_from_slice(&bytes[..keep]);
        self.stderr_kept += keep;
        if keep < bytes.len() && !self.stderr_truncated {
            self.stderr_truncated = true;
            self.stderr
                .extend_from_slice(format!("\n[arbiter: stderr truncated after {max} bytes]\n").as_bytes());
        }
    }

    /// Drops consumed input before more is appended.
    fn compact_stdin(&mut self) {
        self.stdin.drain(..self.stdin_pos);
        self.request_start = self.request_start.saturating_sub(self.stdin_pos);
        self.stdin_pos = 0;
    }

    /// Input and line counters for a fresh wasm instance that must answer
    /// the current request (whose bytes stay in `stdin`).
    pub(crate) fn reset_for_restart(&mut self) {
        let start = self.request_start.min(self.stdin.len());
        self.stdin.drain(..start);
        self.stdin_pos = 0;
        self.request_start = 0;
        self.lines = self.requests.saturating_sub(1);
        self.instance_lines = 0;
        self.stdout_line.clear();
    }

    /// Forgets the sync state of a store that is gone.
    pub(crate) fn reset_sync(&mut self, chunk: u64) {
        self.since_sync_charged = 0;
        self.yields = 0;
        self.chunk = chunk;
    }

    /// Delivers a request and opens a turn.
    pub(crate) fn begin_turn(&mut self, request: &[u8], budget: u64, fresh: bool) {
        if fresh {
            self.stdin.clear();
            self.stdin_pos = 0;
            self.lines = self.requests;
            self.instance_lines = 0;
            self.stdout_line.clear();
            self.turn_used = 0;
        }
        self.compact_stdin();
        self.request_start = self.stdin.len();
        self.stdin.extend_from_slice(request);
        self.stdin.push(b'\n');
        self.requests += 1;
        self.turn_seq += 1;
        self.budget = budget;
        self.event = None;
    }

    /// Opens a turn that delivers no request: the bot, paused after a
    /// reply, goes on with what it has read.
    pub(crate) fn resume_turn(&mut self, budget: u64) {
        self.turn_seq += 1;
        self.budget = budget;
        self.event = None;
    }

    /// Closes stdin after the last turn and wakes a bot waiting for a
    /// request, with `budget` fuel to exit in.
    pub(crate) fn close(&mut self, budget: u64) {
        self.closed = true;
        self.turn_seq += 1;
        self.budget = budget;
        self.turn_used = 0;
        self.event = None;
    }
}

/// Locks `m`, ignoring poisoning (the data stays consistent: every critical
/// section is short and panic-free by construction).
pub(crate) fn lock(m: &Mutex<Io>) -> MutexGuard<'_, Io> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Completes when the driver has started a turn after `seq`.
pub(crate) async fn next_turn(io: &Arc<Mutex<Io>>, seq: u64) {
    std::future::poll_fn(|_| {
        if lock(io).turn_seq != seq {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
    .await
}
