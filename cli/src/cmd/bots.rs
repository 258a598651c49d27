//! `arbiter bots`: list the house bots.

/// Lists the house bots: sandboxed WebAssembly bots of graded strength that
/// every ladder starts with. Use them as `house:NAME`.
#[derive(clap::Args)]
#[command(after_help = "Example:\n  arbiter bots\n  arbiter play othello house:othello-ab-weak house:othello-greedy")]
pub struct Args {}

/// Runs `arbiter bots`.
pub fn run(_args: Args) -> anyhow::Result<()> {
    println!("{:<20} {:<10} {:<30} {:>8}", "name", "game", "modes", "size");
    for bot in arbiter_house::ALL {
        let modes: Vec<&str> = bot.variants().into_iter().map(|v| v.mode()).collect();
        let modes = modes.join(" ");
        println!(
            "{:<20} {:<10} {:<30} {:>6} KB",
            bot.name,
            bot.game(),
            modes,
            bot.wasm().len() / 1024
        );
    }
    Ok(())
}
