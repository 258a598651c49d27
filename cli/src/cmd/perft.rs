//! `arbiter perft`: count the leaves of the move tree, to check move
//! generators.

use arbiter_games::Variant;
use arbiter_games::othello::Position;
use arbiter_games::tictactoe;

/// Prints the number of leaves DEPTH plies deep from the start position. A
/// pass is one ply; a game that ends above DEPTH is one leaf.
#[derive(clap::Args)]
#[command(after_help = format!(
    "Examples:\n  arbiter perft othello 8        # 390216\n  arbiter perft {} 5\n  arbiter perft tictactoe 9      # 255168",
    Variant::Othello(arbiter_games::othello::Mode::Octagon)
))]
pub struct Args {
    #[arg(help = crate::cmd::games::variant_help())]
    game: Variant,
    /// Plies to search.
    depth: u32,
}

/// Runs `arbiter perft`.
pub fn run(args: Args) -> anyhow::Result<()> {
    let leaves = match args.game {
        Variant::TicTacToe => tictactoe::Position::new().perft(args.depth),
        Variant::Othello(mode) => Position::start(mode).perft(args.depth),
        Variant::Skirmish => anyhow::bail!("perft counts the move trees of turn-based games; skirmish has none"),
    };
    println!("{leaves}");
    Ok(())
}
