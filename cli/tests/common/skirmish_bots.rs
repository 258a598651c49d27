//! The hostile skirmish test bots (`tests/skirmish-bots`, std only), built
//! for `wasm32-wasip1` once per process; shared by the skirmish tests and
//! the skirmish bench.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The folder of the built bots (`NAME.wasm`).
pub fn dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/skirmish-bots/Cargo.toml");
        let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skirmish-test-bots");
        let status = arbiter_wasm_build::command(&target)
            .args(["--release", "--offline", "--locked", "--manifest-path"])
            .arg(&manifest)
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the skirmish test bots failed");
        arbiter_wasm_build::output_dir(&target, "release")
    })
}

/// The module of the test bot `name`.
pub fn wasm(name: &str) -> Vec<u8> {
    std::fs::read(dir().join(format!("{name}.wasm"))).expect("the test bot was built")
}
