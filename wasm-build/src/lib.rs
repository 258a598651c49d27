//! Builds a Cargo package's binaries for `wasm32-wasip1` from inside another
//! build: the house bots' build script and the tests and benches that build
//! their own test bots.
//!
//! A nested `cargo build` must not inherit the outer build's settings: its
//! target folder (the outer build holds its lock), its target, its flags
//! (coverage, sanitizers) or its compiler wrappers (`scripts/test` compiles
//! the workspace with clippy's driver). [`command`] starts from a clean
//! slate, so each caller adds only what it builds.
//!
//! ```no_run
//! let target = std::path::Path::new("target/my-bots");
//! let status = arbiter_wasm_build::command(target)
//!     .args(["--release", "--offline", "--manifest-path", "bots/Cargo.toml"])
//!     .status()?;
//! assert!(status.success());
//! let wasm = arbiter_wasm_build::output_dir(target, "release").join("my-bot.wasm");
//! # Ok::<(), std::io::Error>(())
//! ```
//!
//! [`component::build`] does the same for Python and JavaScript bots, built
//! into WASI 0.2 components with the producers the kits pin.
#![deny(missing_docs)]

pub mod component;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every bot is built for.
pub const TARGET: &str = "wasm32-wasip1";

/// Settings of the outer build that do not belong in a nested one.
const OUTER_SETTINGS: &[&str] = &[
    "CARGO_BUILD_RUSTFLAGS",
    "CARGO_BUILD_TARGET",
    "CARGO_ENCODED_RUSTFLAGS",
    "CARGO_MAKEFLAGS",
    "CARGO_TARGET_DIR",
    "RUSTC_WORKSPACE_WRAPPER",
    "RUSTC_WRAPPER",
    "RUSTFLAGS",
];

/// `cargo build --target wasm32-wasip1 --target-dir TARGET_DIR` (the
/// `cargo` running the outer build), without the outer build's settings,
/// after making sure the target is installed (see [`ensure_target`]). The
/// caller adds the package, the profile and the rest.
pub fn command(target_dir: &Path) -> Command {
    ensure_target();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut command = Command::new(cargo);
    command
        .args(["build", "--target", TARGET, "--target-dir"])
        .arg(target_dir);
    for var in OUTER_SETTINGS {
        command.env_remove(var);
    }
    command
}

/// Where a build by [`command`] with `target_dir` and the profile whose
/// folder is `profile_dir` (`release` for `--release`, else the profile's
/// name) puts its `.wasm` files.
pub fn output_dir(target_dir: &Path, profile_dir: &str) -> PathBuf {
    target_dir.join(TARGET).join(profile_dir)
}

/// Installs the `wasm32-wasip1` standard library with `rustup` when the
/// toolchain lacks it (rustup does not add the targets of
/// `rust-toolchain.toml` to a toolchain already installed). Panics, naming
/// the command to run, when that fails: every caller is a build or a test
/// that cannot go on without it.
pub fn ensure_target() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .map(|s| PathBuf::from(s.trim()));
    let installed = sysroot.is_some_and(|root| root.join("lib/rustlib").join(TARGET).exists());
    if !installed {
        let status = Command::new("rustup").args(["target", "add", TARGET]).status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "the {TARGET} target is missing and `rustup target add {TARGET}` failed"
        );
    }
}
