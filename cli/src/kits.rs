//! The bot kits' templates, embedded from `kits/LANG/template` at build
//! time: what `arbiter new LANG NAME` writes.

/// A template file: its path in the template (with `/`) and its bytes.
pub type File = (&'static str, &'static [u8]);
/// A kit: its language and its template's files.
pub type Kit = (&'static str, &'static [File]);

include!(concat!(env!("OUT_DIR"), "/kits.rs"));

/// The placeholder bot name in the templates, replaced by the new bot's.
pub const PLACEHOLDER: &str = "my-bot";

/// The languages there is a kit for, in order.
pub fn languages() -> Vec<&'static str> {
    KITS.iter().map(|(language, _)| *language).collect()
}

/// The files of `language`'s template: (path, bytes).
pub fn template(language: &str) -> Option<&'static [File]> {
    KITS.iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(language))
        .map(|(_, files)| *files)
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

    #[test]
    fn every_kit_has_a_build_script_and_no_build_output() {
        assert!(languages().contains(&"c"), "{:?}", languages());
        for (language, files) in KITS {
            let paths: Vec<&str> = files.iter().map(|(path, _)| *path).collect();
            assert!(paths.contains(&"build.sh"), "{language}: {paths:?}");
            assert!(
                paths
                    .iter()
                    .all(|p| !p.ends_with(".wasm") && !p.contains("node_modules")),
                "{language}: {paths:?}"
            );
        }
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
}
