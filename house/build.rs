//! Builds every binary of `bots/` for `wasm32-wasip1` and writes
//! `$OUT_DIR/house.rs`, which embeds the modules, packed together with
//! zstd, with `include_bytes!`.
//!
//! The bots are built by a nested `cargo build` in their own target folder
//! (the outer build holds the lock on the main one), the way wasmtime builds
//! its test programs: [`arbiter_wasm_build::command`].

use std::path::{Path, PathBuf};

use arbiter_wasm_build::TARGET;

const PROFILE: &str = "house-bots";
/// zstd level of the packed modules.
const PACK_LEVEL: i32 = 19;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest_dir
        .parent()
        .expect("house/ sits in the workspace")
        .to_path_buf();
    // The sources only: the modules are written by the nested build while
    // this script runs, so watching them would make every next build run it
    // again (and compile everything above this crate).
    for watched in ["bots", "sdk", "games/src", "Cargo.lock", "Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(watched).display());
    }
    let bins = bot_names(&root.join("bots/src/bin"));

    let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir).join("house-bots"),
        None => root.join("target/house-bots"),
    };
    let mut command = arbiter_wasm_build::command(&target_dir);
    command
        .current_dir(&root)
        .args(["--locked", "-p", "arbiter-bots", "--bins", "--profile", PROFILE]);
    let status = command.status().expect("cargo runs");
    assert!(status.success(), "building the house bots for {TARGET} failed");

    // The modules share most of their code (the standard library, the SDK,
    // the rules), so they are packed together: one zstd frame of all of
    // them, one after the other (4.1 MB → 0.13 MB in the executable).
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let mut modules = Vec::new();
    let mut code = String::from(
        "/// Every house bot, in name order (a `static`: one copy in the executable,\n/// where a `const` is copied into every use).\npub static ALL: &[HouseBot] = &[\n",
    );
    for name in &bins {
        let wasm = arbiter_wasm_build::output_dir(&target_dir, PROFILE).join(format!("{name}.wasm"));
        let bytes = std::fs::read(&wasm).unwrap_or_else(|e| panic!("{} was not built: {e}", wasm.display()));
        code.push_str(&format!(
            "    HouseBot {{ name: {name:?}, at: {at}, len: {len} }},\n",
            at = modules.len(),
            len = bytes.len()
        ));
        modules.extend_from_slice(&bytes);
    }
    code.push_str("];\n");
    let packed = zstd::bulk::compress(&modules, PACK_LEVEL).expect("zstd compresses the house modules");
    let packed_path = out_dir.join("house.wasm.zst");
    write_if_changed(&packed_path, &packed);
    code.push_str(&format!(
        "/// The modules of [`ALL`], one after the other, as one zstd frame.\nstatic PACKED: &[u8] = include_bytes!({path:?});\n/// The length of [`PACKED`] unpacked.\nconst UNPACKED_LEN: usize = {len};\n",
        path = packed_path.display().to_string(),
        len = modules.len()
    ));
    write_if_changed(&out_dir.join("house.rs"), code.as_bytes());
}

/// Writes `bytes` to `path` unless it holds them already: an unchanged
/// file keeps its time, so the crate is not compiled again for nothing.
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).ok().as_deref() != Some(bytes) {
        std::fs::write(path, bytes).expect("OUT_DIR is writable");
    }
}

/// The bots' binary names: one file per bot in `bots/src/bin/`.
fn bot_names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("bots/src/bin exists")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            (path.extension()? == "rs").then(|| path.file_stem()?.to_str().map(str::to_string))?
        })
        .collect();
    names.sort();
    names
}
