//! The house bots as WebAssembly modules, ready to run in the sandbox.
//!
//! They are built from `bots/` for `wasm32-wasip1` as part of the normal
//! build (see `build.rs`), so a fresh clone needs no extra step.
//!
//! ```
//! let bot = arbiter_house::find("othello-greedy").unwrap();
//! assert!(bot.wasm.starts_with(b"\0asm"));
//! assert!(bot.plays("othello", "anti"));
//! assert!(arbiter_house::find("skirmish-defence").unwrap().plays("skirmish", "standard"));
//! ```
#![deny(missing_docs)]

/// One house bot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HouseBot {
    /// The bot's name, e.g. `othello-ab-strong`.
    pub name: &'static str,
    /// The module's bytes.
    pub wasm: &'static [u8],
}

impl HouseBot {
    /// The game it plays: the part of its name before the first `-`.
    pub fn game(&self) -> &'static str {
        self.name.split('-').next().unwrap_or(self.name)
    }

    /// Whether it plays `game` in `mode` (Othello bots play every mode;
    /// tic-tac-toe and skirmish bots the `standard` mode).
    pub fn plays(&self, game: &str, mode: &str) -> bool {
        match self.game() {
            "tictactoe" => game == "tictactoe" && mode == "standard",
            "skirmish" => game == "skirmish" && mode == "standard",
            "othello" => game == "othello" && ["std", "anti", "grand", "octagon", "reversi"].contains(&mode),
            _ => false,
        }
    }
}

include!(concat!(env!("OUT_DIR"), "/house.rs"));

/// The house bot called `name`.
pub fn find(name: &str) -> Option<&'static HouseBot> {
    ALL.iter().find(|bot| bot.name == name)
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_bot_is_a_wasm_module_for_a_known_game() {
        assert_eq!(super::ALL.len(), 10);
        let mut per_game = std::collections::BTreeMap::new();
        for bot in super::ALL {
            assert!(bot.wasm.starts_with(b"\0asm"), "{}", bot.name);
            let mode = match bot.game() {
                "othello" => "std",
                "tictactoe" | "skirmish" => "standard",
                other => panic!("{} plays an unknown game {other}", bot.name),
            };
            assert!(bot.plays(bot.game(), mode), "{}", bot.name);
            *per_game.entry(bot.game()).or_insert(0) += 1;
        }
        assert_eq!(
            per_game.into_iter().collect::<Vec<_>>(),
            [("othello", 5), ("skirmish", 3), ("tictactoe", 2)]
        );
        let skirmish = super::find("skirmish-rush").expect("a skirmish bot");
        assert!(skirmish.plays("skirmish", "standard"));
        assert!(!skirmish.plays("skirmish", "std"));
        assert!(!skirmish.plays("othello", "standard"));
    }
}
