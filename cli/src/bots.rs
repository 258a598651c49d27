//! Bot specifications on the command line: `house:NAME`, `PATH.wasm`,
//! `builtin:NAME`, `cmd:'python3 bot.py'`, `http://…` and `ws://…`.

use crate::sandbox::LazySandbox;
use anyhow::{Context, bail};
use arbiter_games::Variant;
use arbiter_house::HouseBot;
use arbiter_referee::native::NativeCommand;
use arbiter_referee::wasm::bot_seed;
use arbiter_referee::{Entrant, GameSetup, InProcess, WasmBot};
use arbiter_remote::{AddressPolicy, RemoteBot};
use arbiter_sdk::Rng;
use std::path::Path;
use std::sync::Arc;

/// Help text listing the bot forms.
pub const BOT_FORMS: &str = "A BOT is one of:
  house:NAME            a house bot, sandboxed (list them with `arbiter bots`)
  PATH.wasm             a WebAssembly bot, sandboxed under the fuel clock
  builtin:NAME          a house bot run in-process, natively (fast, for trying things out)
  cmd:'COMMAND ARGS'    a native process speaking the JSON-lines protocol (wall-clock time, not reproducible)
  http://HOST:PORT/PATH a bot that is an HTTP server: each request POSTed, the body is the reply
                        (botsarena's transport; https:// too; wall-clock time, not reproducible)
  ws://HOST:PORT/PATH   a bot that is a WebSocket server: one text frame each way per request
                        (skirmish's transport; wss:// too; wall-clock time, not reproducible)";

/// Reads the two bot specifications of a match for `variant`, each named by
/// [`labels`] so that the two never share a name; WebAssembly bots run in
/// `sandbox`.
pub fn parse_pair(specs: [&str; 2], variant: Variant, sandbox: &LazySandbox) -> anyhow::Result<[Arc<dyn Entrant>; 2]> {
    let [a, b] = labels(specs);
    Ok([
        parse_named(specs[0], &a, variant, sandbox)?,
        parse_named(specs[1], &b, variant, sandbox)?,
    ])
}

/// Reads one bot specification for `variant`, named as [`labels`] names a
/// bot that plays someone else.
pub fn parse_one(spec: &str, variant: Variant, sandbox: &LazySandbox) -> anyhow::Result<Arc<dyn Entrant>> {
    let [name, _] = labels([spec, spec]);
    parse_named(spec, &name, variant, sandbox)
}

/// The names of two bot specifications in tables and replays: a `.wasm`
/// file's stem (`bots/greedy.wasm` → `greedy`), any other specification as
/// written. When the two would be the same, `.wasm` files are named by
/// their parent folder and stem (`a/bot`, `b/bot`), then by their path as
/// written, and a bot played against itself gets ` (2)` on its second name.
pub fn labels(specs: [&str; 2]) -> [String; 2] {
    let stem = |spec: &str| -> String {
        if spec.ends_with(".wasm") {
            let path = Path::new(spec);
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                return stem.to_string();
            }
        }
        spec.to_string()
    };
    let with_parent = |spec: &str| -> String {
        let path = Path::new(spec);
        let parent = path
            .parent()
            .and_then(|p| p.file_name())
            .and_then(|p| p.to_str())
            .filter(|p| !p.is_empty());
        match (spec.ends_with(".wasm"), parent) {
            (true, Some(parent)) => format!("{parent}/{}", stem(spec)),
            (true, None) => spec.to_string(),
            (false, _) => stem(spec),
        }
    };
    let whole = |spec: &str| -> String {
        if spec.ends_with(".wasm") {
            spec.to_string()
        } else {
            stem(spec)
        }
    };
    let namings: [&dyn Fn(&str) -> String; 3] = [&stem, &with_parent, &whole];
    for naming in namings {
        let pair = specs.map(naming);
        if pair[0] != pair[1] {
            return pair;
        }
    }
    let [a, b] = specs.map(stem);
    [a, format!("{b} (2)")]
}

/// Reads one bot specification for `variant`; a WebAssembly bot is named
/// `name` and runs in `sandbox`.
fn parse_named(spec: &str, name: &str, variant: Variant, sandbox: &LazySandbox) -> anyhow::Result<Arc<dyn Entrant>> {
    if let Some(house) = spec.strip_prefix("house:") {
        return wasm(sandbox, house_bot(house, variant)?.wasm(), name);
    }
    if let Some(builtin) = spec.strip_prefix("builtin:") {
        house_bot(builtin, variant)?;
        let builtin = builtin.to_string();
        return Ok(Arc::new(InProcess::new(name, move |setup: &GameSetup| {
            let rng = Rng::as_sandboxed(bot_seed(setup.seed, setup.game_index, setup.side));
            match arbiter_bots::answerer(&builtin, rng) {
                Some(answerer) => answerer,
                None => Box::new(|_: &str| String::new()),
            }
        })));
    }
    if let Some(command) = spec.strip_prefix("cmd:") {
        let command = NativeCommand::parse(command).with_context(|| format!("bad bot command {spec:?}"))?;
        return Ok(Arc::new(command));
    }
    if ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| spec.get(..scheme.len()).is_some_and(|s| s.eq_ignore_ascii_case(scheme)))
    {
        // The author's own machine: loopback and the LAN are allowed.
        let bot = RemoteBot::new(name, spec, AddressPolicy::ANY).with_context(|| format!("bad bot URL {spec:?}"))?;
        return Ok(Arc::new(bot));
    }
    if spec.ends_with(".wasm") {
        let path = Path::new(spec);
        let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
        return wasm(sandbox, &bytes, name);
    }
    bail!("cannot read bot {spec:?}\n{BOT_FORMS}")
}

/// The house bot `name`, if it plays `variant`.
fn house_bot(name: &str, variant: Variant) -> anyhow::Result<&'static HouseBot> {
    let Some(bot) = arbiter_house::find(name) else {
        let names: Vec<&str> = arbiter_house::ALL
            .iter()
            .filter(|b| b.plays(variant))
            .map(|b| b.name)
            .collect();
        bail!(
            "no house bot {name:?} for {variant}: choose one of {}",
            names.join(", ")
        );
    };
    if !bot.plays(variant) {
        bail!("house bot {name} does not play {variant}");
    }
    Ok(bot)
}

fn wasm(sandbox: &LazySandbox, bytes: &[u8], name: &str) -> anyhow::Result<Arc<dyn Entrant>> {
    let sandbox = sandbox.get()?;
    let module = sandbox.load(bytes).with_context(|| format!("{name} cannot run"))?;
    Ok(Arc::new(WasmBot::new(sandbox, module, name)))
}

#[cfg(test)]
mod tests {
    use super::labels;

    fn pair(a: &str, b: &str) -> [String; 2] {
        [a.to_string(), b.to_string()]
    }

    #[test]
    fn labels_are_stems_unless_they_collide() {
        assert_eq!(
            labels(["x/greedy.wasm", "house:othello-random"]),
            pair("greedy", "house:othello-random")
        );
        assert_eq!(labels(["a/bot.wasm", "b/bot.wasm"]), pair("a/bot", "b/bot"));
        assert_eq!(
            labels(["a/x/bot.wasm", "b/x/bot.wasm"]),
            pair("a/x/bot.wasm", "b/x/bot.wasm")
        );
        assert_eq!(labels(["bot.wasm", "x/bot.wasm"]), pair("bot.wasm", "x/bot"));
        assert_eq!(labels(["bot.wasm", "bot.wasm"]), pair("bot", "bot (2)"));
        assert_eq!(
            labels(["builtin:othello-greedy", "builtin:othello-greedy"]),
            pair("builtin:othello-greedy", "builtin:othello-greedy (2)")
        );
    }
}
