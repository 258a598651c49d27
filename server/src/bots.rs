//! Bot specifications on the command line: `builtin:NAME`,
//! `cmd:'python3 bot.py'`.

use anyhow::{Context, bail};
use arbiter_games::Variant;
use arbiter_referee::native::NativeCommand;
use arbiter_referee::{Entrant, builtin};
use std::sync::Arc;

/// Help text listing the bot forms.
pub const BOT_FORMS: &str = "A BOT is one of:
  builtin:NAME          an in-process built-in bot (tictactoe: random, perfect; othello: random, greedy)
  cmd:'COMMAND ARGS'    a native process speaking the JSON-lines protocol (wall-clock time, not reproducible)";

/// Reads one bot specification for `variant`.
pub fn parse(spec: &str, variant: Variant) -> anyhow::Result<Arc<dyn Entrant>> {
    if let Some(name) = spec.strip_prefix("builtin:") {
        return match builtin::entrant(variant, name) {
            Some(entrant) => Ok(entrant),
            None => bail!(
                "no built-in bot {name:?} for {variant}: choose one of {}",
                builtin::names(variant).join(", ")
            ),
        };
    }
    if let Some(command) = spec.strip_prefix("cmd:") {
        let command = NativeCommand::parse(command).with_context(|| format!("bad bot command {spec:?}"))?;
        return Ok(Arc::new(command));
    }
    bail!("cannot read bot {spec:?}\n{BOT_FORMS}")
}
