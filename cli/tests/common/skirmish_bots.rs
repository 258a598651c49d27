//! The hostile skirmish test bots (`tests/skirmish-bots`, std only), built
//! for `wasm32-wasip1` once per process; shared by the skirmish tests and
//! the skirmish bench.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The folder of the built bots (`NAME.wasm`).
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/skirmish-bots/Cargo.toml");
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skirmish-test-bots");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let status = Command::new(cargo)
            .args([
                "build",
                "--release",
                "--offline",
                "--locked",
                "--target",
                "wasm32-wasip1",
            ])
            .arg("--manifest-path")
            .arg(&manifest)
            .arg("--target-dir")
            .arg(&target)
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_BUILD_TARGET")
            .env_remove("RUSTFLAGS")
            .env_remove("CARGO_ENCODED_RUSTFLAGS")
            .env_remove("RUSTC_WORKSPACE_WRAPPER")
            .env_remove("RUSTC_WRAPPER")
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the skirmish test bots failed");
        target.join("wasm32-wasip1/release")
    })
}

/// The module of the test bot `name`.
pub fn wasm(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(format!("{name}.wasm"))).expect("the test bot was built")
}
