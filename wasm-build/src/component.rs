//! Builds Python and JavaScript sources into WASI 0.2 command components
//! with the producers the kits pin (`kits/python`, `kits/javascript`), for
//! tests and benches: the producer is installed once by the kit's own
//! `setup.sh` into `TARGET_DIR/kit-cache`, and each source is built once,
//! kept under `TARGET_DIR/components/` by the digest of the source and the
//! kit's files.
//!
//! A Python source is the component's entry module: it defines
//! `class Run(exports.Run)` (`from wit_world import exports`) whose `run`
//! is the program. A JavaScript source exports `run = { run() { ... } }`.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

/// A language with a component kit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// `componentize-py`, world `bot` of `kits/python/template/wit`.
    Python,
    /// `componentize-js`, world `bot` of `kits/javascript/template/wit`.
    JavaScript,
}

impl Language {
    fn kit(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::JavaScript => "javascript",
        }
    }
}

/// What to build.
#[derive(Clone, Copy, Debug)]
pub struct Source<'a> {
    /// The language of `code`.
    pub language: Language,
    /// The entry module's source.
    pub code: &'a str,
    /// JavaScript only: keep ComponentizeJS's default features (it then
    /// imports `wasi:http`), where normally `-d http fetch-event` leaves
    /// them out.
    pub keep_http: bool,
}

/// Serialises setups and builds of one process (the producers' caches are
/// shared folders).
static BUILDS: Mutex<()> = Mutex::new(());

fn other(msg: String) -> io::Error {
    io::Error::other(msg)
}

fn run(command: &mut Command, what: &str) -> io::Result<()> {
    let out = command.output()?;
    if out.status.success() {
        return Ok(());
    }
    Err(other(format!(
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )))
}

/// Digest of every file under `dir`, names included, in a stable order.
fn hash_dir(hasher: &mut Sha256, dir: &Path) -> io::Result<()> {
    let mut entries: Vec<_> = std::fs::read_dir(dir)?.collect::<Result<_, _>>()?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        hasher.update(entry.file_name().as_encoded_bytes());
        if path.is_dir() {
            hash_dir(hasher, &path)?;
        } else {
            hasher.update(std::fs::read(&path)?);
        }
    }
    Ok(())
}

/// Digest of what the kit's `setup.sh` installs: the script and the
/// package lock it installs from, if any.
fn setup_digest(kit: &Path) -> io::Result<Vec<u8>> {
    let mut hasher = Sha256::new();
    hasher.update(std::fs::read(kit.join("setup.sh"))?);
    match std::fs::read(kit.join("package-lock.json")) {
        Ok(lock) => hasher.update(lock),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    Ok(hasher.finalize().to_vec())
}

/// Builds `source` with the kit in `kits_dir` (the repository's `kits/`)
/// and returns the component's path, under `target_dir`. Installs the
/// producer with the kit's `setup.sh` when it is missing (from the package
/// registries).
pub fn build(kits_dir: &Path, target_dir: &Path, source: Source<'_>) -> io::Result<PathBuf> {
    let _guard = BUILDS.lock().unwrap_or_else(|e| e.into_inner());
    let kit = kits_dir.join(source.language.kit());
    let wit = kit.join("template").join("wit");
    let mut hasher = Sha256::new();
    hasher.update(source.code.as_bytes());
    hasher.update([u8::from(source.keep_http)]);
    hash_dir(&mut hasher, &wit)?;
    hasher.update(setup_digest(&kit)?);
    let digest: String = hasher.finalize()[..12].iter().map(|b| format!("{b:02x}")).collect();
    let dir = target_dir
        .join("components")
        .join(format!("{}-{digest}", source.language.kit()));
    let out = dir.join("bot.wasm");
    if out.is_file() {
        return Ok(out);
    }

    let cache = target_dir.join("kit-cache");
    // setup.sh runs once per version of it (it installs from the registries).
    let setup = std::fs::read(kit.join("setup.sh"))?;
    let stamp_digest: String = Sha256::digest(&setup)[..12]
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let stamp = cache.join(format!("{}-setup-{stamp_digest}.done", source.language.kit()));
    if !stamp.is_file() {
        run(
            Command::new("bash")
                .arg(kit.join("setup.sh"))
                .env("ARBITER_KIT_CACHE", &cache),
            &format!("{}/setup.sh", source.language.kit()),
        )?;
        std::fs::write(&stamp, b"")?;
    }
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let partial = dir.join("bot.wasm.partial");
    match source.language {
        Language::Python => {
            std::fs::write(dir.join("app.py"), source.code)?;
            let tool = cache.join("python/venv/bin/componentize-py");
            run(
                Command::new(tool)
                    .current_dir(&dir)
                    .arg("-d")
                    .arg(&wit)
                    .args(["-w", "bot", "componentize", "app", "-o"])
                    .arg(&partial),
                "componentize-py",
            )?;
        }
        Language::JavaScript => {
            std::fs::write(dir.join("bot.js"), source.code)?;
            let tool = cache.join("javascript/node_modules/.bin/componentize-js");
            let mut command = Command::new(tool);
            command
                .current_dir(&dir)
                .arg("--wit")
                .arg(&wit)
                .args(["--world-name", "bot"]);
            if !source.keep_http {
                command.args(["-d", "http", "fetch-event"]);
            }
            run(command.arg("-o").arg(&partial).arg("bot.js"), "componentize-js")?;
        }
    }
    std::fs::rename(&partial, &out)?;
    Ok(out)
}
