//! The bot kits, embedded from `kits/LANG` at build time: for every
//! language with a `template/`, the kit's README, its `setup.sh` (which
//! installs the toolchain), the files `setup.sh` reads (the JavaScript
//! kit's pins of its producer, as `producer/package.json` and
//! `producer/package-lock.json`) and the
//! template bot, nested folders included (the Python and JavaScript kits'
//! `wit/`). The Rust kit also carries the SDK and the rules as standalone
//! crates (`arbiter/sdk`, `arbiter/games`: the workspace's sources, their
//! manifests with no workspace inheritance) and a `Cargo.lock` with the
//! workspace's versions, so `cargo build` needs only crates.io.
//!
//! Two views of a kit, with the same files:
//! - [`Kit::bot_folder`]: what `arbiter new LANG NAME` writes — the template
//!   with the bot's name filled in, plus [`KIT_README`] (the kit's whole
//!   README), `setup.sh` and its files, so the folder works without the
//!   Arbiter sources.
//! - [`Kit::archive`]: the same folder for the placeholder name
//!   [`PLACEHOLDER`], as a `.tar.gz` under [`Kit::archive_root`], with
//!   fixed times and owners and sorted entries: the same bytes on every
//!   build of the same sources.

use flate2::Compression;
use flate2::write::GzEncoder;

/// A file of a kit's template: its path in the template (with `/`) and its
/// bytes.
#[derive(Debug)]
pub struct File {
    /// Path relative to the template folder, `/`-separated.
    pub path: &'static str,
    /// The file's contents.
    pub bytes: &'static [u8],
}

/// One language's kit.
#[derive(Debug)]
pub struct Kit {
    language: &'static str,
    readme: Option<&'static [u8]>,
    setup: Option<&'static [u8]>,
    setup_files: &'static [File],
    template: &'static [File],
    vendored: &'static [File],
}

/// A file of a new bot folder: path (with `/`), contents, and whether it is
/// a script to mark executable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFile {
    /// Path relative to the bot folder, `/`-separated.
    pub path: String,
    /// The file's contents, the placeholder name replaced.
    pub bytes: Vec<u8>,
    /// True for shell scripts (mode 0755 instead of 0644).
    pub executable: bool,
}

include!(concat!(env!("OUT_DIR"), "/kits.rs"));

/// The placeholder bot name in the templates, replaced by the new bot's.
pub const PLACEHOLDER: &str = "my-bot";

/// Where a bot folder keeps the kit's own README (the folder's `README.md`
/// is the template's short one).
pub const KIT_README: &str = "KIT-README.md";

/// Where a bot folder keeps the kit's toolchain installer.
pub const SETUP: &str = "setup.sh";

/// The modification time of every archive entry: 2025-01-01 00:00 UTC.
const ARCHIVE_MTIME: u64 = 1_735_689_600;

/// Every kit, in the order of their languages' names.
pub fn kits() -> &'static [Kit] {
    KITS
}

/// The languages there is a kit for, in order.
pub fn languages() -> Vec<&'static str> {
    KITS.iter().map(|kit| kit.language).collect()
}

/// The kit for `language` (ASCII case ignored), if there is one.
pub fn kit(language: &str) -> Option<&'static Kit> {
    KITS.iter().find(|kit| kit.language.eq_ignore_ascii_case(language))
}

impl Kit {
    /// The kit's language, as `arbiter new` and the archive's name spell it.
    pub fn language(&self) -> &'static str {
        self.language
    }

    /// The template's files, sorted by path.
    pub fn template(&self) -> &'static [File] {
        self.template
    }

    /// Workspace crates the bot folder carries as they are (the Rust
    /// kit's `arbiter/sdk/...` and `arbiter/games/...`), sorted by path;
    /// empty for the other kits.
    pub fn vendored(&self) -> &'static [File] {
        self.vendored
    }

    /// Everything `arbiter new LANG name` writes, sorted by path: the
    /// template with [`PLACEHOLDER`] replaced by `name`, the kit's README as
    /// [`KIT_README`], its toolchain installer as [`SETUP`], the files
    /// the installer reads beside itself and the [`Kit::vendored`] crates,
    /// as they are.
    pub fn bot_folder(&self, name: &str) -> Vec<FolderFile> {
        let mut files: Vec<FolderFile> = self
            .template
            .iter()
            .map(|file| FolderFile {
                path: file.path.to_owned(),
                bytes: personalize(file.path, file.bytes, name),
                executable: file.path.ends_with(".sh"),
            })
            .collect();
        let kit_files = [(KIT_README, self.readme), (SETUP, self.setup)]
            .into_iter()
            .chain(self.setup_files.iter().map(|file| (file.path, Some(file.bytes))))
            .chain(self.vendored.iter().map(|file| (file.path, Some(file.bytes))));
        for (path, bytes) in kit_files {
            // A template file of the same name wins: it is the bot's own.
            if let Some(bytes) = bytes
                && !files.iter().any(|f| f.path == path)
            {
                files.push(FolderFile {
                    path: path.to_owned(),
                    bytes: bytes.to_vec(),
                    executable: path.ends_with(".sh"),
                });
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        files
    }

    /// Why `name` cannot name a bot of this kit, if it cannot (beyond the
    /// site's own rule for names): the Rust kit's bot is a cargo package
    /// of that name, which cannot start with a digit or be a Rust keyword
    /// or `test`.
    pub fn refuse_name(&self, name: &str) -> Option<String> {
        if self.language != "rust" {
            return None;
        }
        const RESERVED: &[&str] = &[
            "abstract", "async", "await", "become", "box", "const", "continue", "crate", "dyn", "else", "enum",
            "extern", "false", "final", "impl", "let", "loop", "macro", "match", "mod", "move", "mut", "override",
            "priv", "pub", "ref", "return", "self", "static", "struct", "super", "test", "trait", "true", "try",
            "type", "typeof", "unsafe", "unsized", "use", "virtual", "where", "while", "yield",
        ];
        if name.starts_with(|c: char| c.is_ascii_digit()) {
            return Some(format!(
                "{name:?} starts with a digit, which a cargo package name cannot"
            ));
        }
        if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
            return Some(format!(
                "{name:?} is a Rust keyword or reserved name, which cargo refuses as a package name"
            ));
        }
        None
    }

    /// The folder every entry of [`Kit::archive`] sits in:
    /// `arbiter-kit-LANG`.
    pub fn archive_root(&self) -> String {
        format!("arbiter-kit-{}", self.language)
    }

    /// The kit as a gzip-compressed tar archive: [`Kit::bot_folder`] for
    /// [`PLACEHOLDER`] under [`Kit::archive_root`], folders first where
    /// they are needed, entries sorted, owner root (0), a fixed time and
    /// modes 0755 (folders, scripts) or 0644. Deterministic: the same kit
    /// gives the same bytes.
    pub fn archive(&self) -> std::io::Result<Vec<u8>> {
        let root = self.archive_root();
        let encoder = GzEncoder::new(Vec::new(), Compression::best());
        let mut tar = tar::Builder::new(encoder);
        tar.mode(tar::HeaderMode::Deterministic);
        let mut folders_written: Vec<String> = Vec::new();
        let mut folder = |tar: &mut tar::Builder<GzEncoder<Vec<u8>>>, path: &str| -> std::io::Result<()> {
            if folders_written.iter().any(|f| f == path) {
                return Ok(());
            }
            folders_written.push(path.to_owned());
            let mut header = header(tar::EntryType::Directory, 0o755, 0);
            tar.append_data(&mut header, format!("{path}/"), std::io::empty())
        };
        folder(&mut tar, &root)?;
        for file in self.bot_folder(PLACEHOLDER) {
            // Parent folders, outermost first.
            let parts: Vec<&str> = file.path.split('/').collect();
            for depth in 1..parts.len() {
                folder(&mut tar, &format!("{root}/{}", parts[..depth].join("/")))?;
            }
            let mode = if file.executable { 0o755 } else { 0o644 };
            let mut header = header(tar::EntryType::Regular, mode, file.bytes.len() as u64);
            tar.append_data(&mut header, format!("{root}/{}", file.path), file.bytes.as_slice())?;
        }
        tar.into_inner()?.finish()
    }
}

/// A tar header for an entry of the archive: GNU format (long names
/// allowed), owner 0/0 named `root`, [`ARCHIVE_MTIME`].
fn header(kind: tar::EntryType, mode: u32, size: u64) -> tar::Header {
    let mut header = tar::Header::new_gnu();
    header.set_entry_type(kind);
    header.set_mode(mode);
    header.set_size(size);
    header.set_uid(0);
    header.set_gid(0);
    header.set_mtime(ARCHIVE_MTIME);
    // Names of at most 32 bytes: cannot fail.
    let _ = header.set_username("root");
    let _ = header.set_groupname("root");
    header
}

/// A template file as the new bot `name` gets it: the placeholder name
/// replaced (lowercased in npm's `package.json` files, where upper case is
/// not allowed); files that are not text are kept as they are.
pub fn personalize(path: &str, bytes: &[u8], name: &str) -> Vec<u8> {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return bytes.to_vec();
    };
    let file = path.rsplit('/').next().unwrap_or(path);
    let name = if file.starts_with("package") && file.ends_with(".json") {
        name.to_ascii_lowercase()
    } else {
        name.to_owned()
    };
    text.replace(PLACEHOLDER, &name).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    /// The archive's entries: (path, mode, owner, mtime, contents).
    fn entries(archive: &[u8]) -> Vec<(String, u32, u64, u64, Vec<u8>)> {
        let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
        let mut out = Vec::new();
        for entry in tar.entries().expect("a tar archive") {
            let mut entry = entry.expect("an entry");
            let path = entry.path().expect("a path").display().to_string();
            let header = entry.header();
            let (mode, uid, mtime) = (
                header.mode().expect("a mode"),
                header.uid().expect("a uid"),
                header.mtime().expect("a time"),
            );
            let mut bytes = Vec::new();
            entry.read_to_end(&mut bytes).expect("contents");
            out.push((path, mode, uid, mtime, bytes));
        }
        out
    }

    #[test]
    fn every_kit_has_a_build_script_readme_setup_and_no_build_output() {
        for language in ["assemblyscript", "c", "go", "javascript", "python", "rust", "zig"] {
            assert!(languages().contains(&language), "{language}: {:?}", languages());
        }
        for kit in kits() {
            let paths: Vec<String> = kit.bot_folder("x-bot").into_iter().map(|f| f.path).collect();
            for needed in ["build.sh", "README.md", KIT_README, SETUP] {
                assert!(
                    paths.iter().any(|p| p == needed),
                    "{}: {needed} in {paths:?}",
                    kit.language()
                );
            }
            assert!(
                paths.iter().all(|p| !p.ends_with(".wasm")
                    && !p.contains("node_modules")
                    && !p.contains("__pycache__")
                    && !p.starts_with("build/")
                    && !p.ends_with("test.sh")
                    && !p.contains("stack-default")),
                "{}: {paths:?}",
                kit.language()
            );
        }
    }

    #[test]
    fn the_bot_folder_carries_the_whole_kit_readme_and_setup() {
        let c = kit("C").expect("a C kit");
        let folder = c.bot_folder("zed");
        let readme = folder.iter().find(|f| f.path == KIT_README).expect("the kit README");
        assert_eq!(readme.bytes, include_bytes!("../c/README.md"));
        let setup = folder.iter().find(|f| f.path == SETUP).expect("setup.sh");
        assert_eq!(setup.bytes, include_bytes!("../c/setup.sh"));
        assert!(setup.executable);
        let bot = folder
            .iter()
            .find(|f| f.path == "README.md")
            .expect("the template README");
        assert!(
            String::from_utf8_lossy(&bot.bytes).starts_with("# zed "),
            "the name is filled in"
        );
        assert!(!folder.iter().find(|f| f.path == "bot.c").expect("bot.c").executable);
    }

    /// The text of `path` in `kit`'s bot folder for `name`.
    fn text(folder: &[FolderFile], path: &str) -> String {
        let file = folder
            .iter()
            .find(|f| f.path == path)
            .unwrap_or_else(|| panic!("{path} in {:?}", folder.iter().map(|f| &f.path).collect::<Vec<_>>()));
        String::from_utf8(file.bytes.clone()).expect("text")
    }

    #[test]
    fn the_component_kits_carry_their_wit_entry_and_pinned_producer() {
        let python = kit("python").expect("a Python kit").bot_folder("zed");
        for needed in [
            "bot.py",
            "component.py",
            "arbiter/__init__.py",
            "arbiter/skirmish.py",
            "wit/bot.wit",
        ] {
            assert!(python.iter().any(|f| f.path == needed), "python: {needed}");
        }
        assert!(
            python
                .iter()
                .any(|f| f.path.starts_with("wit/deps/") && f.path.ends_with(".wit"))
        );
        assert!(
            text(&python, "bot.py").contains("name = \"zed\""),
            "the name is filled in"
        );
        assert!(text(&python, SETUP).contains("COMPONENTIZE_PY_VERSION=0.25.1"));
        assert!(text(&python, "wit/bot.wit").contains("include wasi:cli/command@0.2.12"));

        let js = kit("javascript").expect("a JavaScript kit").bot_folder("Zed");
        for needed in [
            "bot.js",
            "arbiter.js",
            "io.js",
            "io-wasi.js",
            "bundle.mjs",
            "component.js",
            "wit/bot.wit",
        ] {
            assert!(js.iter().any(|f| f.path == needed), "javascript: {needed}");
        }
        // setup.sh's pins, in producer/: the bot's own package.json says
        // "type": "module" (for `node bot.js`) and lists no producer, so
        // `npm install` in the folder installs only the bot's packages.
        let pins = text(&js, "producer/package.json");
        assert_eq!(
            pins.as_bytes(),
            include_bytes!("../javascript/package.json"),
            "written as it is"
        );
        assert!(
            pins.contains("\"@bytecodealliance/componentize-js\": \"0.23.0\""),
            "{pins}"
        );
        let lock = text(&js, "producer/package-lock.json");
        assert!(
            lock.contains("\"node_modules/@bytecodealliance/componentize-js\": {\n      \"version\": \"0.23.0\""),
            "the lock pins componentize-js 0.23.0"
        );
        let package = text(&js, "package.json");
        assert!(package.contains("\"type\": \"module\""), "{package}");
        assert!(package.contains("\"name\": \"zed\""), "the name, lower case: {package}");
        assert!(
            !package.contains("@bytecodealliance"),
            "no pin of the producer: {package}"
        );
        assert!(
            !js.iter().any(|f| f.path == "package-lock.json"),
            "no lock of the producer at the top"
        );
        assert!(text(&js, SETUP).contains("COMPONENTIZE_JS_VERSION=0.23.0"));
        assert!(
            text(&js, "build.sh").contains("-d http fetch-event"),
            "no wasi:http imports"
        );
        assert!(text(&js, "wit/bot.wit").contains("export wasi:cli/run@0.2.12"));
    }

    #[test]
    fn the_rust_kit_carries_the_sdk_and_the_rules_standalone() {
        let rust = kit("rust").expect("a Rust kit");
        let folder = rust.bot_folder("zed-bot");
        for needed in [
            "Cargo.toml",
            "Cargo.lock",
            "src/main.rs",
            "arbiter/sdk/Cargo.toml",
            "arbiter/sdk/src/lib.rs",
            "arbiter/games/Cargo.toml",
            "arbiter/games/src/lib.rs",
            "arbiter/games/src/skirmish/maps/duel48.txt",
        ] {
            assert!(folder.iter().any(|f| f.path == needed), "rust: {needed}");
        }
        // The sources are the workspace's, as they are (not personalized).
        assert_eq!(
            text(&folder, "arbiter/sdk/src/lib.rs").as_bytes(),
            include_bytes!("../../sdk/src/lib.rs")
        );
        assert_eq!(
            text(&folder, "arbiter/games/src/othello/position.rs").as_bytes(),
            include_bytes!("../../games/src/othello/position.rs")
        );
        // No inheritance from a workspace the folder does not have.
        for manifest in ["arbiter/sdk/Cargo.toml", "arbiter/games/Cargo.toml"] {
            let manifest = text(&folder, manifest);
            assert!(
                !manifest.contains(".workspace") && !manifest.contains("workspace ="),
                "{manifest}"
            );
            assert!(manifest.contains("edition = \"2024\""), "{manifest}");
            assert!(
                !manifest.contains("criterion") && !manifest.contains("[[bench]]"),
                "{manifest}"
            );
        }
        assert!(text(&folder, "arbiter/sdk/Cargo.toml").contains("arbiter-games = { path = \"../games\" }"));
        // The bot's package and lock carry its name; the lock pins the
        // workspace's crates.io crates the SDK needs, and no dev-dependency.
        let manifest = text(&folder, "Cargo.toml");
        assert!(manifest.contains("name = \"zed-bot\""), "{manifest}");
        assert!(
            manifest.contains("arbiter-sdk = { path = \"arbiter/sdk\" }"),
            "{manifest}"
        );
        let lock = text(&folder, "Cargo.lock");
        for needed in [
            "name = \"zed-bot\"",
            "name = \"arbiter-sdk\"",
            "name = \"serde_json\"",
            "name = \"rand_chacha\"",
        ] {
            assert!(lock.contains(needed), "{needed} in {lock}");
        }
        assert!(
            !lock.contains("name = \"criterion\"") && !lock.contains("name = \"proptest\""),
            "{lock}"
        );
        assert!(!lock.contains("name = \"wasmtime\""), "only what the SDK needs");
        assert!(text(&folder, "src/main.rs").contains("\"zed-bot\""), "the init name");
    }

    #[test]
    fn the_rust_kit_refuses_names_cargo_refuses() {
        let rust = kit("rust").expect("a Rust kit");
        assert!(rust.refuse_name("9lives").is_some());
        assert!(rust.refuse_name("self").is_some());
        assert!(rust.refuse_name("Test").is_some());
        assert_eq!(rust.refuse_name("zed-bot"), None);
        assert_eq!(kit("c").expect("a C kit").refuse_name("9lives"), None);
    }

    #[test]
    fn the_placeholder_becomes_the_bot_name() {
        assert_eq!(personalize("README.md", b"# my-bot\n", "Zed_9"), b"# Zed_9\n");
        assert_eq!(
            personalize("package.json", br#"{"name":"my-bot"}"#, "Zed_9"),
            br#"{"name":"zed_9"}"#
        );
        assert_eq!(personalize("x.bin", &[0xff, 0xfe], "Zed"), [0xff, 0xfe]);
    }

    #[test]
    fn the_archive_holds_the_bot_folder_with_fixed_owners_times_and_modes() {
        for kit in kits() {
            let archive = kit.archive().expect("an archive");
            let got = entries(&archive);
            let root = kit.archive_root();
            let folder = kit.bot_folder(PLACEHOLDER);
            let files: Vec<&(String, u32, u64, u64, Vec<u8>)> =
                got.iter().filter(|(path, ..)| !path.ends_with('/')).collect();
            assert_eq!(files.len(), folder.len(), "{}: {got:?}", kit.language());
            for (entry, file) in files.iter().zip(&folder) {
                assert_eq!(entry.0, format!("{root}/{}", file.path));
                assert_eq!(entry.4, file.bytes, "{}", entry.0);
                assert_eq!(entry.1, if file.executable { 0o755 } else { 0o644 }, "{}", entry.0);
            }
            assert!(
                got.iter()
                    .all(|(_, _, uid, mtime, _)| *uid == 0 && *mtime == ARCHIVE_MTIME)
            );
            assert_eq!(got[0].0, format!("{root}/"), "the root folder comes first");
            // Every file's folder is listed before it.
            for (i, (path, ..)) in got.iter().enumerate() {
                if let Some((parent, _)) = path.trim_end_matches('/').rsplit_once('/') {
                    let parent = format!("{parent}/");
                    assert!(got[..i].iter().any(|(p, ..)| *p == parent), "{path} before {parent}");
                }
            }
        }
        let go: Vec<String> = entries(&kit("go").expect("a Go kit").archive().expect("an archive"))
            .into_iter()
            .map(|e| e.0)
            .collect();
        assert!(go.contains(&"arbiter-kit-go/arbiter/".to_owned()), "{go:?}");
        assert!(go.contains(&"arbiter-kit-go/arbiter/arbiter.go".to_owned()), "{go:?}");
    }

    #[test]
    fn the_archive_is_the_same_bytes_every_time() {
        let c = kit("c").expect("a C kit");
        let first = c.archive().expect("an archive");
        assert_eq!(first, c.archive().expect("an archive"));
        // gzip header: no file name, time 0, so only the contents count.
        assert_eq!(&first[..2], [0x1f, 0x8b]);
        assert_eq!(&first[4..8], [0, 0, 0, 0], "gzip mtime");
    }
}
