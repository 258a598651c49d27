//! The sandbox this binary runs bots in, compiling untrusted modules by
//! re-running itself with a hidden subcommand
//! ([`arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND`]).

use anyhow::Context;
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};
use std::sync::OnceLock;

/// The compiler child of this executable: itself, with the hidden
/// subcommand `main` answers first. The binary hands it to the ladder's core
/// ([`arbiter_ladder::core::Core::open`]).
pub fn compiler() -> anyhow::Result<CompilerCommand> {
    let exe = std::env::current_exe().context("cannot find this executable to compile modules with")?;
    Ok(CompilerCommand::embedded_in(exe))
}

/// A sandbox configuration whose compiler child is this executable.
pub fn config() -> anyhow::Result<SandboxConfig> {
    Ok(SandboxConfig {
        compiler: compiler()?,
        ..SandboxConfig::default()
    })
}

/// A sandbox with [`config`] for one command.
///
/// Its compiled modules live in a temporary folder that is removed when the
/// sandbox and every bot made from it are dropped. A command should
/// therefore own it and return normally, never leave through
/// `std::process::exit`.
pub fn new() -> anyhow::Result<Sandbox> {
    Sandbox::new(config()?).context("cannot start the WebAssembly sandbox")
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
