//! The upload checks: what a server tells a bot author about a module.
//!
//! A module is accepted when it passes the sandbox's checks (size, validity,
//! imports, exports, function sizes), compiles in the child compiler (within
//! [`SandboxConfig::compile_timeout`](arbiter_sandbox::SandboxConfig)), and
//! plays a smoke match against a house bot without a fault of its own.
//!
//! The smoke match never refuses a bot that plays within the ladder's time
//! control: the candidate's first move of each game (its set-up: tables,
//! opening books) gets the ladder's own per-move cap, and the later moves a
//! short control, [`SMOKE_BUDGET`], so the check stays cheap. A later move
//! that outruns only the short control is not refused: the module is
//! accepted with a warning that names the move and its time. A first move
//! that outruns the ladder's cap is refused (loops end there), and the
//! second game is then not played, so a loop costs one first move.

use crate::error::{Error, chain};
use arbiter_games::{Budget, FinishReason, Side, Variant};
use arbiter_referee::{
    Answer, Entrant, EntrantInfo, Fault, GameSetup, HostError, MatchSettings, Player, SpawnError, TurnError, WasmBot,
    play_match,
};
use arbiter_sandbox::{BotModule, Sandbox};
use std::fmt::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Lines of stderr shown with a rejection.
pub const STDERR_LINES: usize = 10;
/// The seed of every smoke match, so a verdict can be reproduced.
pub const SMOKE_SEED: u64 = 1;
/// The smoke match's short control for every move after the first: 100 ms
/// per move and 400 ms per game, virtual, at the sandbox's fuel rate (never
/// more than the ladder's own). The first move of each game is not charged
/// to it: it gets the ladder's per-move cap (see [`smoke_settings`]).
///
/// What a check costs: the candidate computes for at most two first moves
/// at the ladder's cap plus 0.8 virtual seconds, and a first move that runs
/// out refuses the module at once (the second game is not played). For
/// ordinary code a virtual second is about a second of a core; the slowest
/// code there is (`table.copy` and empty loops) burns fuel up to 15 times
/// slower (`cargo bench -p arbiter --bench fuel_rate`), so a loop on the
/// first move of Othello's 1 s cap takes 5–15 s of a core. Bots that read
/// `budget_ms` / `remaining_ms` (Othello) or `deadlineMs` fit in it.
pub const SMOKE_BUDGET: Budget = Budget::new(100, 400);

/// The settings of the smoke match on `variant`, whose ladder plays under
/// `ladder`: turn-based games give each side's first move `ladder.turn_ms`
/// (not charged to the bank) and the later moves [`SMOKE_BUDGET`], capped
/// by the ladder's own control; skirmish gives tick 0 the ladder's set-up
/// budget (`ladder.bank_ms`) and every later tick `SMOKE_BUDGET.turn_ms`.
pub fn smoke_settings(variant: Variant, ladder: Budget, fuel_per_ms: u64) -> MatchSettings {
    let mut settings = MatchSettings::new(variant, SMOKE_SEED);
    settings.fuel_per_ms = Some(fuel_per_ms);
    if variant.is_tick_based() {
        settings.budget = Budget::new(SMOKE_BUDGET.turn_ms, ladder.bank_ms);
    } else {
        settings.budget = Budget::new(
            SMOKE_BUDGET.turn_ms.min(ladder.turn_ms),
            SMOKE_BUDGET.bank_ms.min(ladder.bank_ms),
        );
        settings.first_turn_ms = Some(ladder.turn_ms);
    }
    settings
}

/// The smoke match's time control in words, e.g. `1000 ms for each game's
/// first move, then 100 ms per move and 400 ms per game, virtual`.
fn control_words(settings: &MatchSettings) -> String {
    match settings.first_turn_ms {
        Some(first) => format!(
            "{first} ms for each game's first move (the ladder's own cap), then {} ms per move and {} ms per game, \
             virtual",
            settings.budget.turn_ms, settings.budget.bank_ms
        ),
        None => format!(
            "{} ms at tick 0, then {} ms per tick, virtual",
            settings.budget.bank_ms, settings.budget.turn_ms
        ),
    }
}

/// A verdict and how long the checks took, in real time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// What the checks concluded.
    pub verdict: Verdict,
    /// Checking and compiling the module (or finding it compiled).
    pub compile: Duration,
    /// The compile's CPU time, what an account's hourly allowance is
    /// charged (`uploads::COMPILE_MS_PER_HOUR`): the compiler's own figure,
    /// its limit when it was stopped there, the time taken when neither is
    /// known, nothing when the module was found compiled.
    pub compile_cpu: Duration,
    /// The smoke match; `None` when the module was refused before it.
    pub smoke: Option<Duration>,
    /// The most linear memory the bot used in the smoke match, in bytes,
    /// and the sandbox's limit.
    pub peak_memory: Option<(u64, u64)>,
    /// Advice that does not reject the module (see [`warnings`], and the
    /// later moves that outran only the smoke match's short control).
    pub warnings: Vec<String>,
    /// The smoke match's time control, in words; `None` when the module
    /// was refused before it.
    pub smoke_control: Option<String>,
    /// What was uploaded and how it was compiled, in words (e.g. `WASI 0.2
    /// component, Python (componentize-py 0.25.1), 18.6 MB, compiled in
    /// 7.9 s of CPU (4.1 s), runtime cache warm (97% of its 9912 functions
    /// found compiled, …)`); `None` when it
    /// was refused before it was understood.
    pub module: Option<String>,
}

/// The C stack size below which [`warnings`] speaks up: wasm-ld's default.
pub const SMALL_STACK_BYTES: u64 = 64 * 1024;

/// What a bot author should know about `wasm` that does not reject it: a C
/// stack that is wasm-ld's default 64 KiB or placed after the data (where
/// an overflow silently overwrites data instead of trapping).
pub fn warnings(wasm: &[u8]) -> Vec<String> {
    const FIX: &str = "link with -Wl,-z,stack-size=1048576 -Wl,--stack-first (clang; Zig: --stack 1048576)";
    let Some(layout) = arbiter_sandbox::stack_layout(wasm) else {
        return Vec::new();
    };
    let kib = layout.bytes / 1024;
    let mut out = Vec::new();
    if !layout.first {
        out.push(format!(
            "warning: the module's C stack (at most {kib} KiB) sits after its data, wasm-ld's default: a deep \
             recursion or a large local array overwrites the data silently instead of trapping; {FIX}"
        ));
    } else if layout.bytes <= SMALL_STACK_BYTES {
        out.push(format!(
            "warning: the module's C stack is only {kib} KiB: large local arrays or deep recursion overflow it; {FIX}"
        ));
    }
    out
}

impl Checked {
    /// The verdict's report, any warnings, the peak memory and a line with
    /// the times.
    pub fn report(&self) -> String {
        let mut out = self.verdict.report();
        if let Some(module) = &self.module {
            let _ = writeln!(out, "module: {module}");
        }
        for warning in &self.warnings {
            let _ = writeln!(out, "{warning}");
        }
        if let Some((peak, limit)) = self.peak_memory {
            let mib = |bytes: u64| bytes as f64 / (1024.0 * 1024.0);
            let _ = writeln!(
                out,
                "peak linear memory in the smoke match: {:.1} MiB (the limit is {:.0} MiB)",
                mib(peak),
                mib(limit)
            );
        }
        let _ = write!(
            out,
            "module checks and compilation: {:.2} s",
            self.compile.as_secs_f64()
        );
        if let Some(smoke) = self.smoke {
            let _ = write!(out, ", smoke match: {:.2} s", smoke.as_secs_f64());
            if let Some(control) = &self.smoke_control {
                let _ = write!(out, " (its time control: {control})");
            }
        }
        out.push('\n');
        out
    }
}

/// What the checks concluded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Passed every check.
    Accepted {
        /// The module's SHA-256.
        sha256: String,
        /// A one-line account of the smoke match.
        smoke: String,
    },
    /// Failed a check; the reason is for the bot author.
    Rejected {
        /// Why, in words.
        reason: String,
        /// The last lines the bot wrote to stderr, if it ran.
        stderr: Vec<String>,
    },
}

impl Verdict {
    /// The verdict as a short report for a person.
    pub fn report(&self) -> String {
        match self {
            Verdict::Accepted { sha256, smoke } => format!(
                "accepted (sha256 {sha256})\n{smoke}\n(the smoke match's result does not matter: only a fault of \
                 the bot's own, a crash, a bad or illegal reply or a timeout, refuses it)\n"
            ),
            Verdict::Rejected { reason, stderr } => {
                let mut out = format!("rejected: {reason}\n");
                if !stderr.is_empty() {
                    let _ = writeln!(out, "last lines of the bot's stderr:");
                    for line in stderr {
                        let _ = writeln!(out, "  | {line}");
                    }
                }
                out
            }
        }
    }
}

/// The house bot a smoke match is played against.
pub fn smoke_opponent(variant: Variant) -> &'static str {
    match variant {
        Variant::TicTacToe => "tictactoe-random",
        Variant::Othello(_) => "othello-random",
        Variant::Skirmish => "skirmish-rush",
    }
}

/// Runs the upload checks on `wasm` for `variant`, whose ladder plays under
/// `ladder` (its per-move cap and per-game bank), timing them. Errors are
/// host failures ([`Error::Host`], saying what failed: the check must be
/// retried), never the bot's fault.
pub fn check(sandbox: &Sandbox, wasm: &[u8], name: &str, variant: Variant, ladder: Budget) -> Result<Checked, Error> {
    let started = Instant::now();
    let module = match sandbox.load(wasm) {
        Ok(module) => module,
        Err(error) if error.is_host_failure() => {
            return Err(Error::host("cannot check the module", &error));
        }
        Err(error) => {
            let compile = started.elapsed();
            return Ok(Checked {
                verdict: Verdict::Rejected {
                    reason: error.to_string(),
                    stderr: Vec::new(),
                },
                compile,
                compile_cpu: error.compile_cpu_seconds().map_or(compile, Duration::from_secs),
                smoke: None,
                peak_memory: None,
                warnings: Vec::new(),
                smoke_control: None,
                module: None,
            });
        }
    };
    let compile = started.elapsed();
    let compile_cpu = module.compilation().map_or(Duration::ZERO, |c| {
        Duration::from_secs_f64(c.cpu_seconds.unwrap_or(c.seconds).max(0.0))
    });
    let description = describe(&module);
    let started = Instant::now();
    let settings = smoke_settings(variant, ladder, sandbox.config().fuel_per_ms);
    let smoked = smoke(sandbox, module, name, &settings, ladder)?;
    let mut warnings = smoked.warnings;
    warnings.extend(self::warnings(wasm));
    Ok(Checked {
        verdict: smoked.verdict,
        compile,
        compile_cpu,
        smoke: Some(started.elapsed()),
        peak_memory: smoked.peak.map(|peak| (peak, sandbox.config().max_memory_bytes as u64)),
        warnings,
        smoke_control: Some(control_words(&settings)),
        module: Some(description),
    })
}

/// What was uploaded and how it was compiled, in words.
fn describe(module: &arbiter_sandbox::BotModule) -> String {
    let info = module.info();
    let mut out = format!("{}, {:.1} MB", info.describe(), info.size_bytes as f64 / 1_000_000.0);
    match module.compilation() {
        Some(c) => {
            // The CPU time is what the compile limit counts.
            match c.cpu_seconds {
                Some(cpu) => {
                    let _ = write!(out, ", compiled in {cpu:.1} s of CPU ({:.1} s)", c.seconds);
                }
                None => {
                    let _ = write!(out, ", compiled in {:.1} s", c.seconds);
                }
            }
            if c.functions_reused + c.functions_compiled > 0 {
                // A function is found compiled when another bot's module
                // (a language's shared runtime) or an identical function
                // earlier in this same module was compiled: a brand-new
                // cache finds the module's duplicates.
                let share = c.reused_share();
                let _ = write!(
                    out,
                    ", runtime cache {} ({:.0}% of its {} functions found compiled, by other modules or as duplicates in this one)",
                    if share >= 0.5 { "warm" } else { "cold" },
                    share * 100.0,
                    c.functions_reused + c.functions_compiled
                );
            }
        }
        None => out.push_str(", found compiled"),
    }
    out
}

/// What the smoke match concluded.
struct Smoked {
    verdict: Verdict,
    /// The most linear memory the candidate used.
    peak: Option<u64>,
    /// Later moves that outran only the short control.
    warnings: Vec<String>,
}

/// The candidate of a turn-based smoke match: its players are the inner
/// entrant's, but once a first move of a game faults (runs out of its cap,
/// which is the ladder's own, or crashes) the module is refused, so the
/// next game is not played: its spawn fails at no cost.
struct Candidate<'a> {
    inner: &'a dyn Entrant,
    refused: Arc<AtomicBool>,
}

/// Why the candidate's second game is not played; never shown, since the
/// first game's fault is reported first.
const NOT_PLAYED: &str = "not played: the first game's first move already refused the module";

impl Entrant for Candidate<'_> {
    fn info(&self) -> EntrantInfo {
        self.inner.info()
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        if self.refused.load(Ordering::Relaxed) {
            return Err(SpawnError::Bot(Fault::Crash(NOT_PLAYED.to_string())));
        }
        Ok(Box::new(CandidatePlayer {
            inner: self.inner.spawn(setup)?,
            refused: self.refused.clone(),
            moved: false,
        }))
    }
}

struct CandidatePlayer {
    inner: Box<dyn Player>,
    refused: Arc<AtomicBool>,
    moved: bool,
}

impl Player for CandidatePlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        let result = self.inner.turn(request, budget_us);
        if !std::mem::replace(&mut self.moved, true) {
            let faulted = match &result {
                Ok(answer) => answer.spent.us > budget_us,
                Err(error) => !matches!(error.fault, Fault::Host(_)),
            };
            if faulted {
                self.refused.store(true, Ordering::Relaxed);
            }
        }
        result
    }

    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        self.inner.resume(budget_us)
    }

    fn stderr(&self) -> Vec<u8> {
        self.inner.stderr()
    }

    fn peak_memory_bytes(&self) -> Option<u64> {
        self.inner.peak_memory_bytes()
    }
}

/// Plays the smoke match of a loaded module under `settings` (see
/// [`smoke_settings`]; the ladder plays under `ladder`).
fn smoke(
    sandbox: &Sandbox,
    module: BotModule,
    name: &str,
    settings: &MatchSettings,
    ladder: Budget,
) -> Result<Smoked, Error> {
    let variant = settings.variant;
    let wasm_bot = WasmBot::new(sandbox.clone(), module, name);
    let guarded = Candidate {
        inner: &wasm_bot,
        refused: Arc::new(AtomicBool::new(false)),
    };
    // Skirmish's tick 0 may run late without a fault: no guard there.
    let candidate: &dyn Entrant = if variant.is_tick_based() { &wasm_bot } else { &guarded };
    let opponent_name = smoke_opponent(variant);
    let opponent_module = arbiter_house::find(opponent_name)
        .ok_or_else(|| Error::Host(format!("house bot {opponent_name} is missing")))
        .and_then(|bot| sandbox.load(bot.wasm()).map_err(|e| Error::Host(chain(&e))))?;
    let opponent = WasmBot::new(sandbox.clone(), opponent_module, opponent_name);
    let played = play_match(settings, [candidate, &opponent]).map_err(|e: HostError| Error::Host(chain(&e)))?;
    let peak = played.peak_memory[0].iter().flatten().copied().max();
    let mut warnings = Vec::new();
    for game in &played.replay.games {
        let Some(side) = game.faulted else { continue };
        if game.sides[side.index()] != 0 {
            continue;
        }
        let own: Vec<_> = game.turns.iter().filter(|t| t.side == side).collect();
        let turn = own.len();
        let role = role(variant, side);
        let at = format!("game {} as {role}, its turn {turn}", game.index + 1);
        let before_ms = own.iter().skip(1).rev().skip(1).map(|t| t.spent.us).sum::<u64>() / 1000;
        if game.reason == FinishReason::Timeout && turn > 1 && settings.first_turn_ms.is_some() {
            // A later move: its cap was the short control's, unless that is
            // the ladder's own per-move cap and the bank still covered it.
            let bank_ms = settings.budget.bank_ms.saturating_sub(before_ms);
            let cap_ms = settings.budget.turn_ms.min(bank_ms);
            let ladder_cap = cap_ms == ladder.turn_ms && settings.budget.turn_ms <= bank_ms;
            if !ladder_cap {
                let spent_ms = own.last().map_or(0, |t| t.spent.us / 1000);
                warnings.push(format!(
                    "warning: in the smoke match against {opponent_name} ({at}) the move ran out of the check's \
                     short time control after {spent_ms} ms of virtual time (it could take {cap_ms} ms, after \
                     {before_ms} ms on the moves since the first); the ladder allows {} ms per move and {} ms per \
                     game. The check stops such a move and cannot tell a long search from a loop: on the ladder a \
                     move that outruns its budget_ms / remaining_ms loses the game on time",
                    ladder.turn_ms, ladder.bank_ms
                ));
                continue;
            }
        }
        let mut reason = format!(
            "in the smoke match against {opponent_name} ({at}): {}: {}",
            game.reason,
            game.detail.as_deref().unwrap_or("no detail")
        );
        if game.reason == FinishReason::Timeout {
            match settings.first_turn_ms.filter(|_| turn == 1) {
                Some(first) => {
                    let _ = write!(
                        reason,
                        " (a game's first move may take {first} ms of virtual time, the ladder's own cap for a \
                         move: a bot that loops or searches without looking at the clock times out; read \
                         budget_ms / remaining_ms, or deadlineMs, and answer before it)"
                    );
                }
                None => {
                    let bank_ms = settings.budget.bank_ms.saturating_sub(before_ms);
                    let _ = write!(
                        reason,
                        " (the smoke match allows {}; this move could take {} ms, after {before_ms} ms on its \
                         earlier moves: a bot that loops or searches without looking at the clock times out; \
                         read budget_ms / remaining_ms, or deadlineMs, and answer before it)",
                        control_words(settings),
                        settings.budget.turn_ms.min(bank_ms),
                    );
                }
            }
        }
        let stderr = String::from_utf8_lossy(&played.logs[0][usize::from(game.index)]).into_owned();
        let lines: Vec<String> = stderr.lines().map(str::to_string).collect();
        let tail = lines[lines.len().saturating_sub(STDERR_LINES)..].to_vec();
        return Ok(Smoked {
            verdict: Verdict::Rejected { reason, stderr: tail },
            peak,
            warnings: Vec::new(),
        });
    }
    let result = &played.replay.result;
    let smoke = format!(
        "smoke match against {opponent_name}: {} - {} ({})",
        result.totals[0],
        result.totals[1],
        match result.winner {
            Some(0) => "won",
            Some(_) => "lost",
            None => "drawn",
        }
    );
    let verdict = Verdict::Accepted {
        sha256: wasm_bot.info().sha256.unwrap_or_default(),
        smoke,
    };
    Ok(Smoked {
        verdict,
        peak,
        warnings,
    })
}

fn role(variant: Variant, side: Side) -> &'static str {
    match (variant, side) {
        (Variant::TicTacToe, Side::First) => "X",
        (Variant::TicTacToe, Side::Second) => "O",
        (Variant::Skirmish, Side::First) => "side 1",
        (Variant::Skirmish, Side::Second) => "side 2",
        (_, Side::First) => "black",
        (_, Side::Second) => "white",
    }
}
