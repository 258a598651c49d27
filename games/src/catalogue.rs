//! The games and modes as listings show them: the one list that the command
//! line's help and `arbiter games`, the house bots, the site's titles and
//! guide, the replay viewers and the kit tests are all made from. Adding a
//! mode to [`Variant::ALL`] lists it everywhere.
//!
//! ```
//! let games = arbiter_games::catalogue();
//! let othello = games.iter().find(|g| g.name == "othello").unwrap();
//! assert_eq!(othello.default_ladder, "othello:std");
//! assert_eq!(othello.modes.len(), 5);
//! assert_eq!(othello.modes[1].board.as_ref().unwrap().size, 8);
//! ```

use crate::Variant;
use serde::Serialize;

/// One game with its modes, in the order of [`Variant::ALL`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GameListing {
    /// The game's name, e.g. `othello`.
    pub name: &'static str,
    /// Its title, e.g. `Othello`.
    pub title: &'static str,
    /// What the two sides are called, e.g. `Black` and `White`.
    pub sides: [&'static str; 2],
    /// The ladder that the game's name alone stands for, e.g. `othello:std`.
    pub default_ladder: String,
    /// Its modes.
    pub modes: Vec<ModeListing>,
}

/// One mode of a game: a ladder.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ModeListing {
    /// The ladder's name, `GAME:MODE`, e.g. `othello:anti`.
    pub ladder: String,
    /// The mode's name, e.g. `anti`.
    pub name: &'static str,
    /// What listings call it, e.g. `anti (fewest discs wins)`.
    pub label: &'static str,
    /// One sentence on what sets it apart.
    pub description: &'static str,
    /// The board, for games played on one (the Othello family).
    pub board: Option<BoardListing>,
}

/// An Othello-family board, as a replay viewer needs it to rebuild games.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BoardListing {
    /// Squares a side: 8 or 10.
    pub size: u8,
    /// Squares nobody can play, numbered `row × size + column`.
    pub blocked: Vec<u8>,
    /// Whether the board starts empty and the four centre squares come
    /// first.
    pub starts_empty: bool,
}

/// Every game and its modes, in the order of [`Variant::ALL`].
pub fn catalogue() -> Vec<GameListing> {
    let mut games: Vec<GameListing> = Vec::new();
    for variant in Variant::ALL {
        let mode = ModeListing {
            ladder: variant.to_string(),
            name: variant.mode(),
            label: variant.mode_label(),
            description: variant.description(),
            board: match variant {
                Variant::Othello(mode) => Some(BoardListing {
                    size: mode.board_size(),
                    blocked: mode.blocked_squares().to_vec(),
                    starts_empty: mode.starts_empty(),
                }),
                Variant::TicTacToe | Variant::Skirmish => None,
            },
        };
        match games.iter_mut().find(|g| g.name == variant.game()) {
            Some(game) => game.modes.push(mode),
            None => games.push(GameListing {
                name: variant.game(),
                title: variant.title(),
                sides: variant.side_names(),
                default_ladder: variant
                    .game()
                    .parse::<Variant>()
                    .map_or_else(|_| mode.ladder.clone(), |v| v.to_string()),
                modes: vec![mode],
            }),
        }
    }
    games
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_variant_is_listed_once_under_its_game() {
        let games = catalogue();
        let ladders: Vec<String> = games
            .iter()
            .flat_map(|g| g.modes.iter().map(|m| m.ladder.clone()))
            .collect();
        let all: Vec<String> = Variant::ALL.iter().map(Variant::to_string).collect();
        assert_eq!(ladders, all);
        for game in &games {
            let default: Variant = game.name.parse().expect("a game's name alone is a ladder");
            assert_eq!(game.default_ladder, default.to_string());
            for mode in &game.modes {
                let variant: Variant = mode.ladder.parse().expect("every listed ladder parses");
                assert_eq!((variant.game(), variant.mode()), (game.name, mode.name));
                assert!(!mode.label.is_empty() && !mode.description.is_empty());
            }
        }
    }

    #[test]
    fn othello_boards_come_from_the_rules() {
        let games = catalogue();
        let othello = games.iter().find(|g| g.name == "othello").expect("othello");
        for (listing, mode) in othello.modes.iter().zip(crate::othello::Mode::ALL) {
            let board = listing.board.as_ref().expect("an othello board");
            assert_eq!(board.size, mode.board_size());
            assert_eq!(board.blocked, mode.blocked_squares());
            let start = crate::othello::Position::start(mode);
            assert_eq!(board.starts_empty, start.counts() == [0, 0]);
        }
    }

    #[test]
    fn an_unknown_game_is_told_the_listed_ones() {
        let error = "chess".parse::<Variant>().expect_err("no chess");
        assert_eq!(
            error.to_string(),
            "unknown game \"chess\": expected tictactoe, othello[:std|anti|grand|octagon|reversi] or skirmish"
        );
        assert_eq!(Variant::games(), ["tictactoe", "othello", "skirmish"]);
    }
}
