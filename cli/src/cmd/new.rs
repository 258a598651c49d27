//! `arbiter new`: a new bot folder from a kit's template.

use anyhow::{Context, bail};
use std::path::PathBuf;

/// Writes a new bot folder from a language kit: the protocol library, a
/// template bot that plays legal Othello and perfect tic-tac-toe, one build
/// script, the kit's whole README (`KIT-README.md`) and the script that
/// installs its toolchain (`setup.sh`), so the folder needs nothing else
/// from the Arbiter sources.
#[derive(clap::Args)]
#[command(
    after_help = "Examples:\n  arbiter new c my-bot\n  arbiter new zig greedy-z --dir bots/greedy-z\n  arbiter new python my-bot\n  arbiter new rust my-bot\n\nThen: cd my-bot && bash setup.sh (once; as root for C, Zig, AssemblyScript and Go) && sh build.sh && arbiter check bot.wasm"
)]
pub struct Args {
    /// The kit's language (`arbiter new --list` shows them).
    #[arg(required_unless_present = "list")]
    language: Option<String>,
    /// The bot's name: 3 to 32 letters, digits, `_` or `-`.
    #[arg(required_unless_present = "list")]
    name: Option<String>,
    /// The folder to create (default: NAME); it must not exist or be empty.
    #[arg(long)]
    dir: Option<PathBuf>,
    /// Lists the languages there is a kit for.
    #[arg(long)]
    list: bool,
}

/// Runs `arbiter new`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let languages = arbiter_kits::languages().join(", ");
    if args.list {
        println!("{languages}");
        return Ok(());
    }
    let (Some(language), Some(name)) = (args.language, args.name) else {
        bail!("give a language ({languages}) and a bot name");
    };
    let Some(kit) = arbiter_kits::kit(&language) else {
        bail!("there is no kit for {language:?}: the kits are {languages}");
    };
    arbiter_ladder::uploads::valid_bot_name(&name).map_err(|e| anyhow::anyhow!("{e}"))?;
    if let Some(why) = kit.refuse_name(&name) {
        bail!("{why}: choose another name for a {} bot", kit.language());
    }
    let dir = args.dir.unwrap_or_else(|| PathBuf::from(&name));
    if dir.exists() && std::fs::read_dir(&dir).map(|mut d| d.next().is_some()).unwrap_or(true) {
        bail!(
            "{} exists and is not empty: choose another name or --dir",
            dir.display()
        );
    }
    let files = kit.bot_folder(&name);
    for file in &files {
        let target = dir.join(&file.path);
        if let Some(parent) = target.parent() {
            std::fs::create_dir_all(parent).with_context(|| format!("cannot create {}", parent.display()))?;
        }
        std::fs::write(&target, &file.bytes).with_context(|| format!("cannot write {}", target.display()))?;
        #[cfg(unix)]
        if file.executable {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))
                .with_context(|| format!("cannot make {} executable", target.display()))?;
        }
    }
    let language = kit.language();
    println!("wrote {} files of the {language} kit to {}", files.len(), dir.display());
    println!(
        "next: cd {} && bash {} (installs the toolchain, once; {}) && sh build.sh && arbiter check bot.wasm",
        dir.display(),
        arbiter_kits::SETUP,
        if matches!(language, "python" | "javascript") {
            "into your user cache"
        } else if language == "rust" {
            "rustup's wasm32-wasip1 target, for your user"
        } else {
            "as root"
        }
    );
    println!(
        "{} (the kit's README) says what to watch out for",
        arbiter_kits::KIT_README
    );
    Ok(())
}
