//! Rebuild when the SQL migrations change (they are embedded by
//! `sqlx::migrate!`), and embed the bot kits' templates (`kits/LANG/template`)
//! for `arbiter new`.

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
    "replays",
];

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    let kits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kits");
    println!("cargo:rerun-if-changed={}", kits.display());
    let mut source = String::from("/// Every kit: its language and its template's files.\n");
    source.push_str("pub const KITS: &[Kit] = &[\n");
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
        let _ = writeln!(source, "    ({name:?}, &[");
        for (relative, absolute) in files {
            println!("cargo:rerun-if-changed={}", absolute.display());
            let _ = writeln!(
                source,
                "        ({relative:?}, include_bytes!({:?})),",
                absolute.display().to_string()
            );
        }
        source.push_str("    ]),\n");
    }
    source.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("kits.rs");
    std::fs::write(out, source).expect("the kits' index is written");
}

/// Every file under `dir` (but build outputs), as (path relative to `root`
/// with `/`, absolute path).
fn collect(root: &Path, dir: &Path, files: &mut Vec<(String, PathBuf)>) {
    println!("cargo:rerun-if-changed={}", dir.display());
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.filter_map(|e| e.ok()) {
        let path = entry.path();
        let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if SKIPPED.contains(&name) || name.ends_with(".wasm") || name.ends_with(".o") {
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
            files.push((relative, path.canonicalize().unwrap_or(path)));
        }
    }
}
