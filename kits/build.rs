//! Embeds every bot kit: for each `LANG/` folder beside this file that has a
//! `template/`, its `README.md`, its `setup.sh`, the files `setup.sh` reads
//! ([`SETUP_FILES`]: npm's pins of a producer) and every file
//! of the template, nested folders included, but build outputs. The kits'
//! tests (`test.sh`, helpers for them) are not embedded.
//!
//! The Rust kit also carries crates of the workspace ([`VENDORED`]: the SDK
//! and the rules it re-exports) as `arbiter/NAME/` in the bot folder: their
//! `src/` as they are, and a `Cargo.toml` made here from theirs with every
//! `workspace = true` resolved to the workspace's concrete values (no
//! dev-dependencies, benches or lints), plus a `Cargo.lock` for the bot
//! with the workspace's own versions of their dependencies, so the bot
//! builds standalone with crates.io alone.

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

/// Files of a kit's own folder that its `setup.sh` reads, as (file in the
/// kit's folder, path in a bot folder): the JavaScript kit's pins of
/// componentize-js, which `npm ci` installs into the kit cache. A bot
/// folder keeps them in `producer/`, so its own `package.json` (the bot's
/// packages, if any) never lists the producer and `npm install` there never
/// installs it.
const SETUP_FILES: &[(&str, &str)] = &[
    ("package.json", "producer/package.json"),
    ("package-lock.json", "producer/package-lock.json"),
];

/// Workspace crates a kit's bot folder carries, by kit: (kit, folders of
/// the workspace), each written as `arbiter/FOLDER/`, so the path
/// dependencies between them keep the workspace's layout (`../games` from
/// `sdk`).
const VENDORED: &[(&str, &[&str])] = &[("rust", &["games", "sdk"])];

/// The crate a vendoring kit's bot depends on: the root of its
/// `Cargo.lock`.
const VENDORED_ROOT: &str = "arbiter-sdk";

/// The placeholder bot name (the package in the vendored `Cargo.lock`).
const PLACEHOLDER: &str = "my-bot";

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
        let mut vendored = Vec::new();
        if let Some((_, crates)) = VENDORED.iter().find(|(kit, _)| *kit == name) {
            vendor(&kits, crates, &mut files, &mut vendored);
        }
        files.sort();
        vendored.sort();
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
        for (file, in_folder) in SETUP_FILES {
            let path = language.join(file);
            if path.is_file() {
                rerun_if_changed(&path);
                let _ = writeln!(
                    source,
                    "            File {{ path: {in_folder:?}, bytes: include_bytes!({:?}) }},",
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
        source.push_str("        ],\n");
        source.push_str("        vendored: &[\n");
        for (relative, path) in vendored {
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
    write_if_changed(&out, source.as_bytes());
}

/// Tells cargo to rerun this script when `path` changes. Only paths that
/// exist are declared: cargo takes a declared path that is missing as
/// changed on every build, which reran this script, rebuilt this crate and
/// relinked everything that embeds it, even when nothing had changed.
/// Nor are the files this script makes in `OUT_DIR` (a bot's `Cargo.lock`):
/// written after the script started, they would read as changed at the next
/// build and rerun it once for nothing.
fn rerun_if_changed(path: &Path) {
    let made_here = std::env::var_os("OUT_DIR").is_some_and(|out| path.starts_with(out));
    if path.exists() && !made_here {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

/// Writes `bytes` to `path` in `OUT_DIR` unless it holds them already: a
/// rerun of this script (a change to the workspace's `Cargo.lock`, say)
/// then leaves the files' times alone, and the crate that includes them is
/// not compiled again for nothing.
fn write_if_changed(path: &Path, bytes: &[u8]) {
    if std::fs::read(path).is_ok_and(|old| old == bytes) {
        return;
    }
    std::fs::write(path, bytes).unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
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

/// Adds the workspace crates `crates` (folders beside `kits/`) to a kit's
/// `vendored` files as `arbiter/FOLDER/...` (each `src/` as it is, a
/// standalone `Cargo.toml`, see [`standalone_manifest`]) and the bot's
/// `Cargo.lock` (see [`lockfile`]) to its template `files` (the bot's name
/// is filled in there); the made files are written to `OUT_DIR`.
fn vendor(kits: &Path, crates: &[&str], files: &mut Vec<(String, PathBuf)>, vendored: &mut Vec<(String, PathBuf)>) {
    let root = kits.parent().expect("kits/ sits in the workspace");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("vendor");
    let workspace_manifest = root.join("Cargo.toml");
    rerun_if_changed(&workspace_manifest);
    let workspace = std::fs::read_to_string(&workspace_manifest).expect("the workspace's Cargo.toml is readable");
    let mut dev_dependencies: Vec<(String, Vec<String>)> = Vec::new();
    for folder in crates {
        let dir = root.join(folder);
        let manifest = dir.join("Cargo.toml");
        rerun_if_changed(&manifest);
        let text = std::fs::read_to_string(&manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
        let (standalone, name, dev) = standalone_manifest(&text, &workspace, folder);
        dev_dependencies.push((name, dev));
        let written = out.join(folder).join("Cargo.toml");
        std::fs::create_dir_all(written.parent().expect("a folder")).expect("OUT_DIR is writable");
        write_if_changed(&written, standalone.as_bytes());
        vendored.push((format!("arbiter/{folder}/Cargo.toml"), written));
        let src = dir.join("src");
        let mut sources = Vec::new();
        collect(&src, &src, &mut sources);
        vendored.extend(
            sources
                .into_iter()
                .map(|(relative, path)| (format!("arbiter/{folder}/src/{relative}"), path)),
        );
    }
    let lock_path = root.join("Cargo.lock");
    rerun_if_changed(&lock_path);
    let lock = std::fs::read_to_string(&lock_path).expect("the workspace's Cargo.lock is readable");
    let written = out.join("Cargo.lock");
    write_if_changed(&written, lockfile(&lock, &dev_dependencies).as_bytes());
    files.push(("Cargo.lock".to_owned(), written));
}

/// The sections of a TOML file, each as (header, lines): the lines before
/// the first header come under an empty header.
fn sections(text: &str) -> Vec<(String, Vec<String>)> {
    let mut out = vec![(String::new(), Vec::new())];
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('[') {
            out.push((trimmed.to_owned(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(line.to_owned());
        }
    }
    out
}

/// The `key = value` lines of a section of the workspace's manifest, as
/// (key, value).
fn table(workspace: &str, header: &str) -> Vec<(String, String)> {
    sections(workspace)
        .into_iter()
        .filter(|(h, _)| h == header)
        .flat_map(|(_, lines)| lines)
        .filter_map(|line| {
            let (key, value) = line.split_once('=')?;
            Some((key.trim().to_owned(), value.trim().to_owned()))
        })
        .collect()
}

/// A workspace crate's manifest made standalone: `KEY.workspace = true`
/// in `[package]` and `[dependencies]` replaced by the workspace's values
/// (a workspace crate by the path `../FOLDER`), and the dev-dependencies,
/// benches, tests and lints left out. Returns the manifest, the package's
/// name and its dev-dependencies' names. Panics on anything it cannot
/// resolve, so no inheritance is ever left in a kit.
fn standalone_manifest(text: &str, workspace: &str, folder: &str) -> (String, String, Vec<String>) {
    let package_values = table(workspace, "[workspace.package]");
    let dependency_values = table(workspace, "[workspace.dependencies]");
    let mut out = format!(
        "# The Arbiter workspace's {folder}/Cargo.toml, made standalone for a bot\n\
         # folder by kits/build.rs: workspace values filled in, no dev-dependencies,\n\
         # benches or lints.\n"
    );
    let mut name = String::new();
    let mut dev = Vec::new();
    for (header, lines) in sections(text) {
        let kept = matches!(header.as_str(), "" | "[package]" | "[dependencies]");
        if header == "[dev-dependencies]" {
            dev.extend(
                lines
                    .iter()
                    .filter_map(|l| l.split(['=', '.']).next())
                    .map(|k| k.trim().to_owned())
                    .filter(|k| !k.is_empty() && !k.starts_with('#')),
            );
        }
        if !kept {
            continue;
        }
        if !header.is_empty() {
            let _ = writeln!(out, "\n{header}");
        }
        for line in lines {
            let Some((key, value)) = line.split_once('=') else {
                if !line.trim().is_empty() {
                    out.push_str(&line);
                    out.push('\n');
                }
                continue;
            };
            let (key, value) = (key.trim(), value.trim());
            if header == "[package]" && key == "name" {
                name = value.trim_matches('"').to_owned();
            }
            let Some(inherited) = key.strip_suffix(".workspace") else {
                assert!(
                    !value.contains("workspace"),
                    "{folder}/Cargo.toml: cannot make `{line}` standalone"
                );
                let _ = writeln!(out, "{key} = {value}");
                continue;
            };
            assert_eq!(value, "true", "{folder}/Cargo.toml: {line}");
            let values = if header == "[package]" {
                &package_values
            } else {
                &dependency_values
            };
            let Some((_, resolved)) = values.iter().find(|(k, _)| k == inherited) else {
                panic!("{folder}/Cargo.toml: the workspace has no {inherited} for `{line}`");
            };
            let resolved = match resolved
                .strip_prefix("{ path = \"")
                .and_then(|p| p.strip_suffix("\" }"))
            {
                Some(path) => format!("{{ path = \"../{path}\" }}"),
                None => resolved.clone(),
            };
            let _ = writeln!(out, "{inherited} = {resolved}");
        }
    }
    assert!(!name.is_empty(), "{folder}/Cargo.toml names no package");
    (out, name, dev)
}

/// One `[[package]]` of a `Cargo.lock`.
struct Locked {
    name: String,
    lines: Vec<String>,
    version: String,
    /// Its dependencies as the lock spells them: `name`, `name version`
    /// or `name version (source)`.
    dependencies: Vec<String>,
    /// Whether it comes from a registry (else a path: a workspace crate).
    registry: bool,
}

/// The bot's `Cargo.lock`: the packages of the workspace's lock that
/// [`VENDORED_ROOT`] needs (a vendored crate's dev-dependencies, the lock
/// lists them too, left out), at the workspace's versions, and the bot
/// [`PLACEHOLDER`] depending on it.
fn lockfile(lock: &str, dev_dependencies: &[(String, Vec<String>)]) -> String {
    let mut packages: Vec<Locked> = Vec::new();
    let mut in_dependencies = false;
    for line in lock.lines() {
        if line == "[[package]]" {
            packages.push(Locked {
                name: String::new(),
                lines: Vec::new(),
                version: String::new(),
                dependencies: Vec::new(),
                registry: false,
            });
            in_dependencies = false;
            continue;
        }
        let Some(package) = packages.last_mut() else { continue };
        if in_dependencies {
            if line == "]" {
                in_dependencies = false;
            } else {
                package
                    .dependencies
                    .push(line.trim().trim_end_matches(',').trim_matches('"').to_owned());
            }
            continue;
        }
        if line == "dependencies = [" {
            in_dependencies = true;
            continue;
        }
        if let Some(value) = line.strip_prefix("name = ") {
            package.name = value.trim_matches('"').to_owned();
        }
        if let Some(value) = line.strip_prefix("version = ") {
            package.version = value.trim_matches('"').to_owned();
        }
        if line.starts_with("source = ") {
            package.registry = true;
        }
        if !line.is_empty() {
            package.lines.push(line.to_owned());
        }
    }
    let find = |dependency: &str| -> Option<usize> {
        let mut parts = dependency.split(' ');
        let name = parts.next()?;
        let version = parts.next();
        packages
            .iter()
            .position(|p| p.name == name && version.is_none_or(|v| p.version == v))
    };
    let mut needed: Vec<usize> = Vec::new();
    let mut queue: Vec<usize> = find(VENDORED_ROOT).into_iter().collect();
    while let Some(i) = queue.pop() {
        if needed.contains(&i) {
            continue;
        }
        needed.push(i);
        let package = &packages[i];
        let dev: &[String] = dev_dependencies
            .iter()
            .find(|(name, _)| *name == package.name)
            .map_or(&[], |(_, dev)| dev.as_slice());
        for dependency in &package.dependencies {
            let name = dependency.split(' ').next().unwrap_or_default();
            if !package.registry && dev.iter().any(|d| d == name) {
                continue;
            }
            queue.extend(find(dependency));
        }
    }
    assert!(!needed.is_empty(), "the workspace's Cargo.lock has no {VENDORED_ROOT}");
    // The lock as cargo writes it: the bot's package among the others, by
    // name then version.
    let mut blocks: Vec<(String, String, String)> = needed
        .iter()
        .map(|&i| {
            let package = &packages[i];
            let dev: &[String] = dev_dependencies
                .iter()
                .find(|(name, _)| *name == package.name)
                .map_or(&[], |(_, dev)| dev.as_slice());
            let mut block = String::from("[[package]]\n");
            for line in &package.lines {
                let _ = writeln!(block, "{line}");
            }
            let dependencies: Vec<&String> = package
                .dependencies
                .iter()
                .filter(|d| package.registry || !dev.iter().any(|x| Some(x.as_str()) == d.split(' ').next()))
                .collect();
            if !dependencies.is_empty() {
                block.push_str("dependencies = [\n");
                for dependency in dependencies {
                    let _ = writeln!(block, " \"{dependency}\",");
                }
                block.push_str("]\n");
            }
            (package.name.clone(), package.version.clone(), block)
        })
        .collect();
    blocks.push((
        PLACEHOLDER.to_owned(),
        "0.1.0".to_owned(),
        format!(
            "[[package]]\nname = \"{PLACEHOLDER}\"\nversion = \"0.1.0\"\ndependencies = [\n \"{VENDORED_ROOT}\",\n]\n"
        ),
    ));
    blocks.sort();
    let header: String = lock
        .lines()
        .take_while(|line| *line != "[[package]]")
        .map(|line| format!("{line}\n"))
        .collect();
    let mut out = header;
    for (i, (_, _, block)) in blocks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(block);
    }
    out
}
