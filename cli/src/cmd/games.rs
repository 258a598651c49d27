//! `arbiter games`: list the games and modes (the ladders), as the games'
//! catalogue has them.

use arbiter_games::{GameListing, Variant, catalogue};

/// Lists the games and their modes: each ladder's name, its label and what
/// sets it apart. Scripts read `--ladders` (one name a line) or `--json`.
#[derive(clap::Args)]
#[command(after_help = "Examples:\n  arbiter games\n  arbiter games --ladders othello\n  arbiter games --json")]
pub struct Args {
    /// Only these games (all when none are named).
    #[arg(value_parser = game_name)]
    games: Vec<String>,
    /// Print only the ladders' names, one a line.
    #[arg(long, conflicts_with = "json")]
    ladders: bool,
    /// Print the catalogue as JSON: each game with its title, default
    /// ladder and modes (name, label, description, board).
    #[arg(long)]
    json: bool,
}

/// A game's name as listed, or why it is not one.
fn game_name(text: &str) -> Result<String, String> {
    let games = Variant::games();
    games
        .iter()
        .find(|game| game.eq_ignore_ascii_case(text.trim()))
        .map(|game| game.to_string())
        .ok_or_else(|| format!("unknown game {text:?}: expected one of {}", games.join(", ")))
}

/// The help of an argument naming a game and mode.
pub fn variant_help() -> String {
    format!(
        "Game and mode: {} (the game alone is its first mode; `arbiter games` lists them)",
        Variant::expected()
    )
}

/// The catalogue's games that `args` names, in the catalogue's order.
fn chosen(args: &Args) -> Vec<GameListing> {
    catalogue()
        .into_iter()
        .filter(|game| args.games.is_empty() || args.games.iter().any(|name| name == game.name))
        .collect()
}

/// What `arbiter games` prints for `args`.
pub fn render(args: &Args) -> anyhow::Result<String> {
    let games = chosen(args);
    if args.json {
        return Ok(serde_json::to_string_pretty(&games)? + "\n");
    }
    let mut out = String::new();
    for mode in games.iter().flat_map(|game| &game.modes) {
        if args.ladders {
            out.push_str(&mode.ladder);
        } else {
            out.push_str(&format!("{:<18} {:<26} {}", mode.ladder, mode.label, mode.description));
        }
        out.push('\n');
    }
    Ok(out)
}

/// Runs `arbiter games`.
pub fn run(args: Args) -> anyhow::Result<()> {
    print!("{}", render(&args)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        args: Args,
    }

    fn output(argv: &[&str]) -> String {
        let cli = Cli::try_parse_from(std::iter::once("games").chain(argv.iter().copied())).expect("arguments");
        render(&cli.args).expect("rendered")
    }

    #[test]
    fn ladders_are_every_variant_in_order() {
        let all: Vec<String> = Variant::ALL.iter().map(|v| format!("{v}\n")).collect();
        assert_eq!(output(&["--ladders"]), all.concat());
        let othello: Vec<String> = Variant::modes_of("othello").iter().map(|v| format!("{v}\n")).collect();
        assert_eq!(output(&["--ladders", "Othello"]), othello.concat());
        assert!(Cli::try_parse_from(["games", "chess"]).is_err());
    }

    #[test]
    fn the_table_and_the_json_show_the_catalogue() {
        let table = output(&[]);
        for variant in Variant::ALL {
            let line = table
                .lines()
                .find(|line| line.split_whitespace().next() == Some(&variant.to_string()))
                .unwrap_or_else(|| panic!("{variant} listed"));
            assert!(
                line.contains(variant.mode_label()) && line.contains(variant.description()),
                "{line}"
            );
        }
        let json: serde_json::Value = serde_json::from_str(&output(&["--json"])).expect("JSON");
        assert_eq!(json, serde_json::to_value(catalogue()).expect("the catalogue as JSON"));
    }
}
