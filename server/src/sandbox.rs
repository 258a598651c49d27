//! The sandbox this binary runs bots in, compiling untrusted modules by
//! re-running itself with a hidden subcommand.

use anyhow::Context;
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};
use std::sync::OnceLock;

/// The hidden subcommand that compiles one module in a child process.
pub const COMPILE_SUBCOMMAND: &str = "__compile-module";

/// A sandbox configuration whose compiler child is this executable.
pub fn config() -> anyhow::Result<SandboxConfig> {
    let exe = std::env::current_exe().context("cannot find this executable to compile modules with")?;
    Ok(SandboxConfig {
        compiler: CompilerCommand::new(exe, [COMPILE_SUBCOMMAND]),
        ..SandboxConfig::default()
    })
}

/// The process-wide sandbox, made on first use.
pub fn shared() -> anyhow::Result<Sandbox> {
    static SANDBOX: OnceLock<Sandbox> = OnceLock::new();
    if let Some(sandbox) = SANDBOX.get() {
        return Ok(sandbox.clone());
    }
    let sandbox = Sandbox::new(config()?).context("cannot start the WebAssembly sandbox")?;
    Ok(SANDBOX.get_or_init(|| sandbox).clone())
}
