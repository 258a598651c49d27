//! Embeds every bot kit: for each `LANG/` folder beside this file that has a
//! `template/`, its `README.md`, its `setup.sh`, the files `setup.sh` reads
//! beside itself ([`SETUP_FILES`]: npm's pins of a producer) and every file
//! of the template, nested folders included, but build outputs. The kits'
//! tests (`test.sh`, helpers for them) are not embedded.

use std::fmt::Write;
use std::path::{Path, PathBuf};

/// Build outputs a template folder may hold after a local build: never
/// embedded.
const SKIPPED: &[&str] = &[
    "node_modules",
    ".zig-cache",
    "zig-cache",
    "zig-out",
    "__pycache__",
    "target",
    "native-bot",
    "bot",
    "replays",
    // The JavaScript kit's bundle, made by its build.sh.
    "build",
];

/// Files of a kit's own folder that its `setup.sh` reads beside itself, so a
/// bot folder gets them with `setup.sh` (the JavaScript kit's pins of
/// componentize-js, which `npm ci` installs).
const SETUP_FILES: &[&str] = &["package.json", "package-lock.json"];

fn main() {
    let kits = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    // The kits' folder itself (a new language, a new README or setup.sh in
    // one): a folder that exists, so the declaration never goes stale.
    rerun_if_changed(&kits);
    let mut source = String::from("/// Every kit, by language.\nstatic KITS: &[Kit] = &[\n");
    let mut languages: Vec<PathBuf> = std::fs::read_dir(&kits)
        .map(|entries| entries.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    languages.sort();
    for language in languages {
        let template = language.join("template");
        if !template.is_dir() {
            continue;
        }
        let Some(name) = language.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        let mut files = Vec::new();
        collect(&template, &template, &mut files);
        files.sort();
        let _ = writeln!(source, "    Kit {{\n        language: {name:?},");
        for (field, file) in [("readme", "README.md"), ("setup", "setup.sh")] {
            let path = language.join(file);
            if path.is_file() {
                rerun_if_changed(&path);
                let _ = writeln!(source, "        {field}: Some(include_bytes!({:?})),", absolute(&path));
            } else {
                let _ = writeln!(source, "        {field}: None,");
            }
        }
        source.push_str("        setup_files: &[\n");
        for file in SETUP_FILES {
            let path = language.join(file);
            if path.is_file() {
                rerun_if_changed(&path);
                let _ = writeln!(
                    source,
                    "            File {{ path: {file:?}, bytes: include_bytes!({:?}) }},",
                    absolute(&path)
                );
            }
        }
        source.push_str("        ],\n");
        source.push_str("        template: &[\n");
        for (relative, path) in files {
            rerun_if_changed(&path);
            let _ = writeln!(
                source,
                "            File {{ path: {relative:?}, bytes: include_bytes!({:?}) }},",
                absolute(&path)
            );
        }
        source.push_str("        ],\n    },\n");
    }
    source.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("kits.rs");
    std::fs::write(out, source).expect("the kits' index is written");
}

/// Tells cargo to rerun this script when `path` changes. Only paths that
/// exist are declared: cargo takes a declared path that is missing as
/// changed on every build, which reran this script, rebuilt this crate and
/// relinked everything that embeds it, even when nothing had changed.
fn rerun_if_changed(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// `path` made absolute, as a string for `include_bytes!`.
fn absolute(path: &Path) -> String {
    path.canonicalize()
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}

/// Every file under `dir` (but build outputs), as (path relative to `root`
/// with `/`, path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    rerun_if_changed(dir);
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if SKIPPED.contains(&name) || [".wasm", ".o", ".partial"].iter().any(|end| name.ends_with(end)) {
            continue;
        }
        if path.is_dir() {
            collect(root, &path, files);
        } else if let Ok(relative) = path.strip_prefix(root) {
            let relative = relative
                .components()
                .map(|c| c.as_os_str().to_string_lossy())
                .collect::<Vec<_>>()
                .join("/");
            files.push((relative, path));
        }
    }
}
