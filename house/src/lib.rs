//! The house bots as WebAssembly modules, ready to run in the sandbox.
//!
//! They are built from `bots/` for `wasm32-wasip1` as part of the normal
//! build (see `build.rs`), so a fresh clone needs no extra step.
//!
//! ```
//! use arbiter_games::Variant;
//!
//! let bot = arbiter_house::find("othello-greedy").unwrap();
//! assert!(bot.wasm().starts_with(b"\0asm"));
//! assert!(Variant::modes_of("othello").into_iter().all(|v| bot.plays(v)));
//! assert!(arbiter_house::find("skirmish-defence").unwrap().plays(Variant::Skirmish));
//! ```
#![deny(missing_docs)]

use std::sync::OnceLock;

use arbiter_games::Variant;

/// One house bot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HouseBot {
    /// The bot's name, e.g. `othello-ab-strong`.
    pub name: &'static str,
    /// Where its module starts in the unpacked modules.
    at: usize,
    /// Its module's length.
    len: usize,
}

/// Every house module, unpacked on first use.
static MODULES: OnceLock<Vec<u8>> = OnceLock::new();

impl HouseBot {
    /// The module's bytes (the first call unpacks every house module, 4.1 MB,
    /// in a few milliseconds).
    pub fn wasm(&self) -> &'static [u8] {
        let modules = MODULES.get_or_init(|| {
            zstd::bulk::decompress(PACKED, UNPACKED_LEN).expect("the house modules packed by build.rs unpack")
        });
        &modules[self.at..self.at + self.len]
    }

    /// The game it plays: the part of its name before the first `-`.
    pub fn game(&self) -> &'static str {
        self.name.split('-').next().unwrap_or(self.name)
    }

    /// Whether it plays `variant`: every mode of its game (the games and
    /// modes are those of [`Variant::ALL`]).
    pub fn plays(&self, variant: Variant) -> bool {
        variant.game() == self.game()
    }

    /// The ladders it plays, in the order of [`Variant::ALL`].
    pub fn variants(&self) -> Vec<Variant> {
        Variant::modes_of(self.game())
    }
}

include!(concat!(env!("OUT_DIR"), "/house.rs"));

/// The house bot called `name`.
pub fn find(name: &str) -> Option<&'static HouseBot> {
    ALL.iter().find(|bot| bot.name == name)
}

#[cfg(test)]
mod tests {
    use arbiter_games::Variant;

    #[test]
    fn every_bot_is_a_wasm_module_for_a_known_game() {
        assert_eq!(super::ALL.len(), 10);
        let mut per_game = std::collections::BTreeMap::new();
        for bot in super::ALL {
            assert!(bot.wasm().starts_with(b"\0asm"), "{}", bot.name);
            assert!(
                Variant::games().contains(&bot.game()),
                "{} plays an unknown game",
                bot.name
            );
            assert!(!bot.variants().is_empty(), "{}", bot.name);
            for variant in Variant::ALL {
                assert_eq!(
                    bot.plays(variant),
                    bot.variants().contains(&variant),
                    "{} {variant}",
                    bot.name
                );
                assert_eq!(
                    bot.plays(variant),
                    variant.game() == bot.game(),
                    "{} {variant}",
                    bot.name
                );
            }
            *per_game.entry(bot.game()).or_insert(0) += 1;
        }
        assert_eq!(
            per_game.into_iter().collect::<Vec<_>>(),
            [("othello", 5), ("skirmish", 3), ("tictactoe", 2)]
        );
        let skirmish = super::find("skirmish-rush").expect("a skirmish bot");
        assert_eq!(skirmish.variants(), [Variant::Skirmish]);
        let othello = super::find("othello-random").expect("an othello bot");
        assert_eq!(othello.variants(), Variant::modes_of("othello"));
        assert_eq!(othello.variants().len(), 5);
    }
}
