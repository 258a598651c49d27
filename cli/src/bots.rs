//! Bot specifications on the command line: `house:NAME`, `PATH.wasm`,
//! `builtin:NAME`, `cmd:'python3 bot.py'`.

use crate::sandbox::LazySandbox;
use anyhow::{Context, bail};
use arbiter_games::Variant;
use arbiter_house::HouseBot;
use arbiter_referee::native::NativeCommand;
use arbiter_referee::wasm::bot_seed;
use arbiter_referee::{Entrant, GameSetup, InProcess, WasmBot};
use arbiter_sdk::Rng;
use std::path::Path;
use std::sync::Arc;

/// Help text listing the bot forms.
pub const BOT_FORMS: &str = "A BOT is one of:
  house:NAME            a house bot, sandboxed (list them with `arbiter bots`)
  PATH.wasm             a WebAssembly bot, sandboxed under the fuel clock
  builtin:NAME          a house bot run in-process, natively (fast, for trying things out)
  cmd:'COMMAND ARGS'    a native process speaking the JSON-lines protocol (wall-clock time, not reproducible)";

/// Reads one bot specification for `variant`; WebAssembly bots run in
/// `sandbox`.
pub fn parse(spec: &str, variant: Variant, sandbox: &LazySandbox) -> anyhow::Result<Arc<dyn Entrant>> {
    if let Some(name) = spec.strip_prefix("house:") {
        return wasm(sandbox, house_bot(name, variant)?.wasm, spec);
    }
    if let Some(name) = spec.strip_prefix("builtin:") {
        house_bot(name, variant)?;
        let name = name.to_string();
        return Ok(Arc::new(InProcess::new(spec, move |setup: &GameSetup| {
            let rng = Rng::as_sandboxed(bot_seed(setup.seed, setup.game_index, setup.side));
            match arbiter_bots::answerer(&name, rng) {
                Some(answerer) => answerer,
                None => Box::new(|_: &str| String::new()),
            }
        })));
    }
    if let Some(command) = spec.strip_prefix("cmd:") {
        let command = NativeCommand::parse(command).with_context(|| format!("bad bot command {spec:?}"))?;
        return Ok(Arc::new(command));
    }
    if spec.ends_with(".wasm") {
        let path = Path::new(spec);
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        let name = path.file_stem().and_then(|s| s.to_str()).unwrap_or(spec);
        return wasm(sandbox, &bytes, name);
    }
    bail!("cannot read bot {spec:?}\n{BOT_FORMS}")
}

/// The house bot `name`, if it plays `variant`.
fn house_bot(name: &str, variant: Variant) -> anyhow::Result<&'static HouseBot> {
    let Some(bot) = arbiter_house::find(name) else {
        let names: Vec<&str> = arbiter_house::ALL
            .iter()
            .filter(|b| b.plays(variant.game(), variant.mode()))
            .map(|b| b.name)
            .collect();
        bail!(
            "no house bot {name:?} for {variant}: choose one of {}",
            names.join(", ")
        );
    };
    if !bot.plays(variant.game(), variant.mode()) {
        bail!("house bot {name} does not play {variant}");
    }
    Ok(bot)
}

fn wasm(sandbox: &LazySandbox, bytes: &[u8], name: &str) -> anyhow::Result<Arc<dyn Entrant>> {
    let sandbox = sandbox.get()?;
    let module = sandbox.load(bytes).with_context(|| format!("{name} cannot run"))?;
    Ok(Arc::new(WasmBot::new(sandbox, module, name)))
}
