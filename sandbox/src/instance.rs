//! [`BotInstance`]: one bot for one game, driven turn by turn.
//!
//! The bot's `_start` runs as a future that owns its store. `turn` polls it
//! with a no-op waker: the future returns `Pending` when the bot has replied
//! (it is paused inside `fd_write`), when a host call found the budget gone,
//! or when a chunk of fuel is used up (see [`crate::io`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap};

use crate::error::{CrashReason, FaultKind, SandboxError, TrapKind, TurnFault};
use crate::io::{Event, Io, Params, lock};
use crate::wasi::{Abort, Exit, Host, Limiter, tank_left};
use crate::wasip2::MAX_RESOURCES;
use crate::{BotModule, OnTimeout, Pre, Shared};

type Run = Pin<Box<dyn Future<Output = (Store<Host>, wasmtime::Result<()>)> + Send>>;

/// A reply line and what it cost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnReply {
    /// The line as the bot wrote it, without its `\n`. Bytes are passed
    /// through unchanged (UTF-8 is the referee's business).
    pub line: Vec<u8>,
    /// Fuel charged to this turn: work since the previous reply (or since
    /// the start), host-call charges and sleeps included.
    pub fuel_used: u64,
}

/// One bot for one game: the wasm instance (restarted when the bot exits
/// after replying), its stdin/stdout, its clock, random stream and stderr.
///
/// `Send`: a game may move between threads between turns.
pub struct BotInstance {
    shared: Arc<Shared>,
    module: BotModule,
    params: Arc<Params>,
    io: Arc<Mutex<Io>>,
    run: Option<Run>,
    /// The bot replied and is paused waiting for the next request.
    waiting: bool,
    stderr: Vec<u8>,
    /// The last turn's backstop allowance.
    backstop: Option<BackstopAllowance>,
}

/// Wall-clock time allowed to a turn of `fuel_budget` fuel.
#[derive(Clone, Copy)]
struct BackstopAllowance {
    fuel_budget: u64,
    real: Duration,
    ms: u64,
}

/// Fuel a bot gets to exit in once stdin is closed (an SDK bot needs a few
/// thousand).
const CLOSE_FUEL: u64 = 100_000;

impl std::fmt::Debug for BotInstance {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotInstance")
            .field("module", &self.module.sha256())
            .field("running", &self.run.is_some())
            .finish_non_exhaustive()
    }
}

/// How a run of `_start` ended.
enum Ended {
    Exit(i32),
    Fault(FaultKind),
}

impl BotInstance {
    pub(crate) fn new(
        shared: Arc<Shared>,
        module: BotModule,
        params: Arc<Params>,
        io: Arc<Mutex<Io>>,
    ) -> Result<BotInstance, SandboxError> {
        let mut bot = BotInstance {
            shared,
            module,
            params,
            io,
            run: None,
            waiting: false,
            stderr: Vec::new(),
            backstop: None,
        };
        bot.run = Some(bot.start()?);
        Ok(bot)
    }

    /// Creates a store and an instance and returns the future running
    /// `_start` (a module) or `run` (a component). No wasm code runs here
    /// (a module's start section is refused; a component is instantiated
    /// in the future).
    fn start(&self) -> Result<Run, SandboxError> {
        let p = &self.params;
        let (engine, max_items) = match &self.module.inner.pre {
            Pre::Module(_) => (&self.shared.engine, 1),
            Pre::Component { .. } => (&self.shared.component_engine, COMPONENT_MAX_ITEMS),
        };
        let mut table = ResourceTable::new();
        table.set_max_capacity(MAX_RESOURCES);
        let host = Host {
            io: self.io.clone(),
            params: p.clone(),
            limiter: Limiter::new(p.max_memory, p.max_table, max_items, self.io.clone()),
            memory: None,
            write_buffer: Vec::new(),
            table,
        };
        let wt = |e: wasmtime::Error| SandboxError::Wasmtime(format!("{e:#}"));
        let mut store = Store::new(engine, host);
        store.limiter(|h| &mut h.limiter);
        // No wasm runs before the first poll, which fills the tank for the
        // turn it runs in.
        store.set_fuel(0).map_err(wt)?;
        lock(&self.io).reset_sync(p.granularity);
        let no_slot = |e: wasmtime::Error| {
            if e.is::<wasmtime::PoolConcurrencyLimitError>() {
                SandboxError::NoInstanceSlot(self.shared.config.instance_slots)
            } else {
                wt(e)
            }
        };
        let (io, params) = (self.io.clone(), p.clone());
        match &self.module.inner.pre {
            Pre::Module(pre) => {
                let instance = block_on(pre.instantiate_async(&mut store))
                    .unwrap_or_else(|| Err(wasmtime::format_err!("instantiation did not complete")))
                    .map_err(no_slot)?;
                let memory = instance.get_memory(&mut store, "memory");
                store.data_mut().memory = memory;
                let start = instance.get_typed_func::<(), ()>(&mut store, "_start").map_err(wt)?;
                Ok(Box::pin(async move {
                    let result = match fill(&mut store, &io, &params) {
                        Ok(()) => start.call_async(&mut store, ()).await,
                        Err(e) => Err(e),
                    };
                    (store, result)
                }))
            }
            Pre::Component { pre, run } => {
                // A component's core modules may have start functions (a
                // runtime's initialisation): they run in the first turn,
                // on its fuel, like the rest of the bot's code.
                let (pre, run) = (pre.clone(), *run);
                Ok(Box::pin(async move {
                    let result = async {
                        fill(&mut store, &io, &params)?;
                        let instance = pre.instantiate_async(&mut store).await?;
                        let run = instance.get_typed_func::<(), (Result<(), ()>,)>(&mut store, run)?;
                        match run.call_async(&mut store, ()).await? {
                            (Ok(()),) => Ok(()),
                            // `run` returning an error is exit status 1.
                            (Err(()),) => Err(wasmtime::Error::new(Exit(1))),
                        }
                    }
                    .await;
                    (store, result)
                }))
            }
        }
    }

    /// Hands one request line (bytes without `\n`; the host appends it) and
    /// runs the bot until it has written one `\n`-terminated line to stdout,
    /// or faults, using at most `fuel_budget` fuel.
    ///
    /// `request` should not contain `\n`: the bot would see two lines.
    ///
    /// - A reply pauses the bot inside its write; work it does after that is
    ///   charged to the next turn.
    /// - [`FaultKind::Timeout`]: the budget ran out (computing, sleeping, or
    ///   in host calls); exactly `fuel_budget` is charged. What happens next
    ///   is the instance's [`OnTimeout`]: with `Stop`, a bot that ran out
    ///   while computing is stopped at the first fuel check past its budget
    ///   and a further `turn` starts a fresh instance; with `Pause` (and with
    ///   `Stop` for a bot that ran out inside a host call) the bot stays
    ///   paused where it was and continues in the next turn's budget, the
    ///   next request is queued on its stdin. With `Stop`, a line it
    ///   writes for a request whose turn timed out is dropped; with `Pause`
    ///   every line is a reply, and [`BotInstance::resume`] waits for the
    ///   next one.
    /// - Any other fault discards the wasm instance; a further `turn` starts
    ///   a fresh one.
    /// - A bot that exits after replying is restarted, from a fresh
    ///   instance, within the next turn.
    pub fn turn(&mut self, request: &[u8], fuel_budget: u64) -> Result<TurnReply, TurnFault> {
        let fresh = self.run.is_none();
        let allowed = self.backstop_allowance(fuel_budget);
        {
            let mut g = lock(&self.io);
            g.begin_turn(request, fuel_budget, fresh);
            let now = Instant::now();
            g.backstop = now
                .checked_add(allowed.real)
                .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
            g.backstop_ms = allowed.ms;
        }
        if fresh {
            match self.start() {
                Ok(run) => self.run = Some(run),
                Err(e) => return Err(self.fault(FaultKind::Crash(CrashReason::RestartFailed(e.to_string())))),
            }
        }
        let result = self.drive(fuel_budget);
        self.waiting = result.is_ok();
        self.collect_stderr();
        result
    }

    /// Lets a bot that has just replied (or timed out) go on without a new
    /// request, until it writes its next line or `fuel_budget` runs out;
    /// the outcomes are those of [`BotInstance::turn`]. For tick-based
    /// games, whose referee drops a stale reply and waits, within what is
    /// left of the tick, for the current one. A bot that has crashed has
    /// nothing to resume: that is a [`CrashReason::RestartFailed`].
    pub fn resume(&mut self, fuel_budget: u64) -> Result<TurnReply, TurnFault> {
        if self.run.is_none() {
            return Err(self.fault(FaultKind::Crash(CrashReason::RestartFailed(
                "no bot to resume: it has crashed".into(),
            ))));
        }
        let allowed = self.backstop_allowance(fuel_budget);
        {
            let mut g = lock(&self.io);
            g.resume_turn(fuel_budget);
            let now = Instant::now();
            g.backstop = now
                .checked_add(allowed.real)
                .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 24 * 3600));
            g.backstop_ms = allowed.ms;
        }
        let result = self.drive(fuel_budget);
        self.waiting = result.is_ok();
        self.collect_stderr();
        result
    }

    /// The wall-clock time a turn with `fuel_budget` may take before the
    /// backstop stops it (remembered: turns of a game share their budget).
    fn backstop_allowance(&mut self, fuel_budget: u64) -> BackstopAllowance {
        if let Some(allowed) = self.backstop.filter(|allowed| allowed.fuel_budget == fuel_budget) {
            return allowed;
        }
        let real_ns = u128::from(fuel_budget) * 1_000_000 / u128::from(self.params.fuel_per_ms.max(1))
            * u128::from(self.shared.config.backstop_factor);
        let real = Duration::from_nanos(u64::try_from(real_ns).unwrap_or(u64::MAX))
            .saturating_add(self.shared.config.backstop_grace);
        let allowed = BackstopAllowance {
            fuel_budget,
            real,
            ms: u64::try_from(real.as_millis()).unwrap_or(u64::MAX),
        };
        self.backstop = Some(allowed);
        allowed
    }

    /// Ends the game for this bot: closes its stdin and, if it is waiting
    /// for a request, lets it run on a small fixed fuel allowance so that
    /// it can see end of file and exit by itself. Returns whether it did
    /// (what it writes meanwhile goes to [`BotInstance::stderr`]). The
    /// instance is gone afterwards either way; dropping a `BotInstance`
    /// closes it. Nothing here counts towards any turn.
    pub fn close(&mut self) -> bool {
        let Some(run) = self.run.as_mut() else {
            return false;
        };
        if !std::mem::take(&mut self.waiting) {
            self.run = None;
            return false;
        }
        lock(&self.io).close(CLOSE_FUEL);
        // One chunk of fuel at most: the bot exits, waits again, or is
        // stopped when the chunk is used up.
        let exited = match run.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready((_store, result)) => matches!(self.classify(result, false), Ended::Exit(_)),
            Poll::Pending => false,
        };
        self.run = None;
        self.collect_stderr();
        exited
    }

    fn drive(&mut self, budget: u64) -> Result<TurnReply, TurnFault> {
        let mut cx = Context::from_waker(Waker::noop());
        loop {
            let Some(run) = self.run.as_mut() else {
                return Err(self.fault(FaultKind::Crash(CrashReason::RestartFailed(
                    "no running instance".into(),
                ))));
            };
            match run.as_mut().poll(&mut cx) {
                Poll::Pending => {
                    let mut g = lock(&self.io);
                    match g.event.take() {
                        Some(Event::Reply(line, fuel_used)) => {
                            return Ok(TurnReply { line, fuel_used });
                        }
                        Some(Event::Timeout) => {
                            return Err(TurnFault {
                                kind: FaultKind::Timeout,
                                fuel_used: budget,
                            });
                        }
                        None => {
                            // A chunk of fuel is used up: the one place the
                            // wall clock is read while the bot computes.
                            if Instant::now() >= g.backstop {
                                let ms = g.backstop_ms;
                                // Charge what is known of the chunks since the
                                // last sync; the store is not reachable here.
                                let estimate = g.turn_estimate();
                                let unsynced = estimate.saturating_sub(g.turn_used);
                                g.total_used = g.total_used.saturating_add(unsynced);
                                g.turn_used = estimate;
                                g.reset_sync(self.params.granularity);
                                drop(g);
                                // The store is stuck mid-computation: drop it.
                                self.run = None;
                                return Err(self.fault(FaultKind::Crash(CrashReason::Backstop { ms })));
                            }
                            g.yields += 1;
                            // With `Stop`, wasmtime stops the bot at its
                            // budget itself (the tank is the budget).
                            if self.params.on_timeout == OnTimeout::Pause && g.turn_estimate() >= budget {
                                let post_sync = budget.saturating_sub(g.turn_used);
                                g.since_sync_charged = g.since_sync_charged.saturating_add(post_sync);
                                g.turn_used = 0;
                                return Err(TurnFault {
                                    kind: FaultKind::Timeout,
                                    fuel_used: budget,
                                });
                            }
                        }
                    }
                }
                Poll::Ready((store, result)) => {
                    self.run = None;
                    let refused = store.data().limiter.refused;
                    {
                        let mut g = lock(&self.io);
                        g.sync(tank_left(&store));
                        g.reset_sync(self.params.granularity);
                    }
                    drop(store);
                    let ended = self.classify(result, refused);
                    let mut g = lock(&self.io);
                    if g.turn_used > budget {
                        drop(g);
                        return Err(self.fault(FaultKind::Timeout));
                    }
                    match ended {
                        Ended::Exit(code) => {
                            let replied_before = g.instance_lines > 0 && g.stdin_pos <= g.request_start;
                            if !replied_before {
                                drop(g);
                                // A runtime that reports a failed allocation and
                                // exits (CPython's MemoryError) ran out of memory.
                                let reason = if refused {
                                    CrashReason::MemoryLimit(TrapKind::Other(format!("exited with code {code}")))
                                } else {
                                    CrashReason::ExitBeforeReply { code }
                                };
                                return Err(self.fault(FaultKind::Crash(reason)));
                            }
                            g.reset_for_restart();
                            drop(g);
                            match self.start() {
                                Ok(run) => self.run = Some(run),
                                Err(e) => {
                                    return Err(self.fault(FaultKind::Crash(CrashReason::RestartFailed(e.to_string()))));
                                }
                            }
                        }
                        Ended::Fault(kind) => {
                            drop(g);
                            return Err(self.fault(kind));
                        }
                    }
                }
            }
        }
    }

    /// Ends the turn with `kind`, charging what the turn used (at most its
    /// budget); the next turn starts from zero.
    fn fault(&mut self, kind: FaultKind) -> TurnFault {
        let mut g = lock(&self.io);
        let fuel_used = g.turn_used.min(g.budget);
        g.turn_used = 0;
        TurnFault { kind, fuel_used }
    }

    fn classify(&mut self, result: wasmtime::Result<()>, refused: bool) -> Ended {
        let e = match result {
            Ok(()) => return Ended::Exit(0),
            Err(e) => e,
        };
        if let Some(Exit(code)) = e.downcast_ref::<Exit>() {
            return Ended::Exit(*code);
        }
        if let Some(Abort(kind)) = e.downcast_ref::<Abort>() {
            return Ended::Fault(kind.clone());
        }
        let reason = match e.downcast_ref::<Trap>() {
            Some(Trap::StackOverflow) => CrashReason::StackOverflow {
                limit: self.params.max_stack,
            },
            Some(Trap::OutOfFuel) => return Ended::Fault(FaultKind::Timeout),
            Some(t) if refused => CrashReason::MemoryLimit(TrapKind::from(*t)),
            Some(t) => CrashReason::Trap(TrapKind::from(*t)),
            None => CrashReason::Trap(TrapKind::Other(format!("{e:#}"))),
        };
        // Tell the bot author where it happened.
        // Only the wasm frames: the host's own backtrace (RUST_BACKTRACE) is
        // not the bot author's business and would push the bot's last lines
        // out of the tail shown to them.
        let frames = e
            .downcast_ref::<wasmtime::WasmBacktrace>()
            .map(|trace| format!("{trace}\n"))
            .unwrap_or_default();
        let mut note = format!("\n[arbiter: crashed: {reason}]\n{frames}").into_bytes();
        note.truncate(4096);
        lock(&self.io).stderr.extend_from_slice(&note);
        Ended::Fault(FaultKind::Crash(reason))
    }

    fn collect_stderr(&mut self) {
        let mut g = lock(&self.io);
        if self.stderr.is_empty() {
            std::mem::swap(&mut self.stderr, &mut g.stderr);
        } else {
            self.stderr.append(&mut g.stderr);
        }
    }

    /// Everything the bot wrote to stderr so far (across restarts), capped
    /// at `max_stderr_bytes` plus a marker line and crash notes.
    pub fn stderr(&self) -> &[u8] {
        &self.stderr
    }

    /// The most linear memory the bot has had, in bytes (all its memories
    /// together, for a component).
    pub fn peak_memory_bytes(&self) -> u64 {
        lock(&self.io).peak_memory
    }

    /// Virtual nanoseconds the bot's clock has advanced since its start.
    pub fn clock_ns(&self) -> u64 {
        self.params.fuel_to_ns(lock(&self.io).total_used)
    }
}

impl Drop for BotInstance {
    fn drop(&mut self) {
        // A bot that exits by itself is cheaper to drop than one stopped
        // mid-call (no unwinding through its frames).
        if !std::thread::panicking() {
            self.close();
        }
    }
}

/// Core instances, memories and tables one component may have (CPython's
/// component has 14 core instances).
const COMPONENT_MAX_ITEMS: usize = 64;

/// Fills the tank for the turn the first poll runs in.
fn fill(store: &mut Store<Host>, io: &Mutex<Io>, params: &Params) -> wasmtime::Result<()> {
    let (tank, chunk) = lock(io).refill(params);
    store.fuel_async_yield_interval(Some(chunk))?;
    store.set_fuel(tank)
}

/// Polls a future that is expected to complete without waiting (no wasm
/// code runs during instantiation); `None` if it does not.
fn block_on<F: Future>(f: F) -> Option<F::Output> {
    let mut f = std::pin::pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    for _ in 0..1000 {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return Some(v);
        }
    }
    None
}
