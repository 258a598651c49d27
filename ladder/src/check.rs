//! The upload checks: what a server tells a bot author about a module.
//!
//! A module is accepted when it passes the sandbox's checks (size, validity,
//! imports, exports, function sizes), compiles in the child compiler (within
//! [`SandboxConfig::compile_timeout`](arbiter_sandbox::SandboxConfig)), and
//! plays a smoke match against a house bot under [`SMOKE_BUDGET`] without a
//! fault of its own. Either way the answer comes within seconds.

use arbiter_games::{Budget, FinishReason, Side, Variant};
use arbiter_referee::{Entrant, HostError, MatchSettings, WasmBot, play_match};
use arbiter_sandbox::{BotModule, Sandbox};
use std::fmt::Write;
use std::time::{Duration, Instant};

/// Lines of stderr shown with a rejection.
pub const STDERR_LINES: usize = 10;
/// The seed of every smoke match, so a verdict can be reproduced.
pub const SMOKE_SEED: u64 = 1;
/// The smoke match's time control, whatever the ladder's: 100 ms per move
/// and 400 ms per game, virtual, at the sandbox's fuel rate. The candidate
/// plays two games, so it computes for at most 0.8 virtual seconds: a check
/// costs the server a second or two of a core for ordinary code, and up to
/// about twelve for the slowest code there is (`table.copy` and empty loops
/// burn a tenth of the fuel per real millisecond ordinary code does; `cargo
/// bench -p arbiter --bench fuel_rate`). Bots that read
/// `budget_ms` / `remaining_ms` (Othello) or `deadlineMs` fit in it.
pub const SMOKE_BUDGET: Budget = Budget::new(100, 400);

/// A verdict and how long the checks took, in real time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checked {
    /// What the checks concluded.
    pub verdict: Verdict,
    /// Checking and compiling the module (or finding it compiled).
    pub compile: Duration,
    /// The smoke match; `None` when the module was refused before it.
    pub smoke: Option<Duration>,
    /// The most linear memory the bot used in the smoke match, in bytes,
    /// and the sandbox's limit.
    pub peak_memory: Option<(u64, u64)>,
    /// Advice that does not reject the module (see [`warnings`]).
    pub warnings: Vec<String>,
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
            let _ = write!(
                out,
                ", smoke match: {:.2} s (its time control: {} ms per move, {} ms per game, virtual)",
                smoke.as_secs_f64(),
                SMOKE_BUDGET.turn_ms,
                SMOKE_BUDGET.bank_ms
            );
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
            Verdict::Accepted { sha256, smoke } => format!("accepted (sha256 {sha256})\n{smoke}\n"),
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

/// Runs the upload checks on `wasm` for `variant`, timing them. Errors are
/// host failures (the check must be retried), never the bot's fault.
pub fn check(sandbox: &Sandbox, wasm: &[u8], name: &str, variant: Variant) -> Result<Checked, anyhow::Error> {
    let started = Instant::now();
    let module = match sandbox.load(wasm) {
        Ok(module) => module,
        Err(error) if error.is_host_failure() => {
            return Err(anyhow::Error::new(error).context("cannot check the module"));
        }
        Err(error) => {
            return Ok(Checked {
                verdict: Verdict::Rejected {
                    reason: error.to_string(),
                    stderr: Vec::new(),
                },
                compile: started.elapsed(),
                smoke: None,
                peak_memory: None,
                warnings: Vec::new(),
            });
        }
    };
    let compile = started.elapsed();
    let started = Instant::now();
    let (verdict, peak) = smoke(sandbox, module, name, variant)?;
    Ok(Checked {
        verdict,
        compile,
        smoke: Some(started.elapsed()),
        peak_memory: peak.map(|peak| (peak, sandbox.config().max_memory_bytes as u64)),
        warnings: warnings(wasm),
    })
}

/// Plays the smoke match of a loaded module: the verdict, and the most
/// linear memory the candidate used.
fn smoke(
    sandbox: &Sandbox,
    module: BotModule,
    name: &str,
    variant: Variant,
) -> Result<(Verdict, Option<u64>), anyhow::Error> {
    let candidate = WasmBot::new(sandbox.clone(), module, name);
    let opponent_name = smoke_opponent(variant);
    let opponent_module = arbiter_house::find(opponent_name)
        .ok_or_else(|| anyhow::anyhow!("house bot {opponent_name} is missing"))
        .and_then(|bot| Ok(sandbox.load(bot.wasm)?))?;
    let opponent = WasmBot::new(sandbox.clone(), opponent_module, opponent_name);
    let mut settings = MatchSettings::new(variant, SMOKE_SEED);
    settings.budget = SMOKE_BUDGET;
    settings.fuel_per_ms = Some(sandbox.config().fuel_per_ms);
    let played =
        play_match(&settings, [&candidate as &dyn Entrant, &opponent]).map_err(|e: HostError| anyhow::anyhow!(e))?;
    let peak = played.peak_memory[0].iter().flatten().copied().max();
    for game in &played.replay.games {
        let Some(side) = game.faulted else { continue };
        if game.sides[side.index()] != 0 {
            continue;
        }
        let own: Vec<_> = game.turns.iter().filter(|t| t.side == side).collect();
        let turn = own.len();
        let role = role(variant, side);
        let mut reason = format!(
            "in the smoke match against {opponent_name} (game {} as {role}, its turn {turn}): {}: {}",
            game.index + 1,
            game.reason,
            game.detail.as_deref().unwrap_or("no detail")
        );
        if game.reason == FinishReason::Timeout {
            let before_ms = own.iter().rev().skip(1).map(|t| t.spent.us).sum::<u64>() / 1000;
            let bank_ms = SMOKE_BUDGET.bank_ms.saturating_sub(before_ms);
            let _ = write!(
                reason,
                " (the smoke match allows {} ms per move and {} ms per game of virtual time; this move could \
                 take {} ms, after {before_ms} ms on its earlier moves: a bot that loops or searches without \
                 looking at the clock times out; read budget_ms / remaining_ms, or deadlineMs, and answer \
                 before it)",
                SMOKE_BUDGET.turn_ms,
                SMOKE_BUDGET.bank_ms,
                SMOKE_BUDGET.turn_ms.min(bank_ms),
            );
        }
        let stderr = String::from_utf8_lossy(&played.logs[0][usize::from(game.index)]).into_owned();
        let lines: Vec<String> = stderr.lines().map(str::to_string).collect();
        let tail = lines[lines.len().saturating_sub(STDERR_LINES)..].to_vec();
        return Ok((Verdict::Rejected { reason, stderr: tail }, peak));
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
        sha256: candidate.info().sha256.unwrap_or_default(),
        smoke,
    };
    Ok((verdict, peak))
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
