//! The sandbox this binary runs bots in, compiling untrusted modules by
//! re-running itself with a hidden subcommand
//! ([`arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND`]).

use anyhow::Context;
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The compiler child of this executable: itself, with the hidden
/// subcommand `main` answers first. The binary hands it to the ladder's core
/// ([`arbiter_ladder::core::Core::open`]).
pub fn compiler() -> anyhow::Result<CompilerCommand> {
    let exe = std::env::current_exe().context("cannot find this executable to compile modules with")?;
    Ok(CompilerCommand::embedded_in(exe))
}

/// A sandbox configuration whose compiler child is this executable, with
/// the disk caches' bounds set in the environment
/// (`ARBITER_COMPILE_CACHE_BYTES`, `ARBITER_FUNCTION_CACHE_BYTES`; see
/// [`SandboxConfig::from_env`]).
pub fn config() -> anyhow::Result<SandboxConfig> {
    Ok(SandboxConfig {
        compiler: compiler()?,
        ..SandboxConfig::from_env()?
    })
}

/// Where local commands keep compiled modules between runs:
/// `$ARBITER_CACHE_DIR`, else `$XDG_CACHE_HOME/arbiter/compiled`, else
/// `~/.cache/arbiter/compiled`; `None` when none is known.
pub fn user_cache_dir() -> Option<PathBuf> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    if let Some(dir) = var("ARBITER_CACHE_DIR") {
        return Some(dir);
    }
    let base = var("XDG_CACHE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|home| home.join(".cache")))?;
    Some(base.join("arbiter").join("compiled"))
}

/// A sandbox with [`config`] for one command.
///
/// Its compiled modules (and the compiled functions that modules of one
/// language runtime share) are kept in [`user_cache_dir`], so that the next
/// `play`, `check` or `verify` of the same bot compiles nothing; where that
/// folder cannot be made, in a temporary folder that is removed when the
/// sandbox and every bot made from it are dropped. A command should
/// therefore own it and return normally, never leave through
/// `std::process::exit`.
pub fn new() -> anyhow::Result<Sandbox> {
    let config = config()?;
    if let Some(dir) = user_cache_dir().filter(|dir| std::fs::create_dir_all(dir).is_ok()) {
        let kept = SandboxConfig {
            cache_dir: Some(dir),
            ..config.clone()
        };
        if let Ok(sandbox) = Sandbox::new(kept) {
            return Ok(sandbox);
        }
    }
    Sandbox::new(config).context("cannot start the WebAssembly sandbox")
}

/// A sandbox for one command, made by [`new`] when a bot first needs it.
#[derive(Default)]
pub struct LazySandbox(OnceLock<Sandbox>);

impl LazySandbox {
    /// The sandbox, made on the first call.
    pub fn get(&self) -> anyhow::Result<Sandbox> {
        if let Some(sandbox) = self.0.get() {
            return Ok(sandbox.clone());
        }
        let sandbox = new()?;
        Ok(self.0.get_or_init(|| sandbox).clone())
    }
}
