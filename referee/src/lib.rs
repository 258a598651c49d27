//! Plays matches between bots and records them as replays.
//!
//! A match is two games with sides swapped (Othello's two legs from one
//! opening, tic-tac-toe's two games with X and O swapped). Every game gets
//! fresh [`Player`]s from each [`Entrant`]; the referee builds each request
//! from the rules in `arbiter-games`, charges each turn against the per-turn
//! cap and the per-game bank, checks every reply before it is applied, and
//! turns every bot fault into the loss of that bot's own game.
//!
//! ```
//! use arbiter_referee::{GameSetup, InProcess, MatchSettings, play_match};
//!
//! // A bot that always passes: it loses both legs as `illegal_move`.
//! let passer = InProcess::new("passer", |_: &GameSetup| Box::new(|_: &str| r#"{"move":"pass"}"#.to_string()));
//! let settings = MatchSettings::new("othello:std".parse().unwrap(), 7);
//! let played = play_match(&settings, [&passer, &passer]).unwrap();
//! assert_eq!(played.replay.games.len(), 2);
//! assert_eq!(played.replay.games[0].reason.as_str(), "illegal_move");
//! ```
//!
//! # Guarantees
//!
//! - Nothing a bot does makes the referee panic or hang beyond its budget;
//!   a bot's fault ends only the game it happened in.
//! - Failures of the host (a player that cannot be started for reasons that
//!   are not the bot's) are returned as [`HostError`], never scored.
//! - With reproducible players (in-process or sandboxed), the same entrants,
//!   settings and seed give the same replay, byte for byte.
#![deny(missing_docs)]

pub mod cancel;
pub mod frames;
mod in_process;
pub mod native;
pub mod player;
mod referee;
pub mod replay;
pub mod skirmish;
pub mod verify;
pub mod wasm;

pub use cancel::Cancellable;
pub use in_process::InProcess;
pub use player::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};
pub use referee::{
    HostError, MATCH_LEGS, MatchSettings, PlayedMatch, Progress, engine, play_game_observed, play_match,
    play_match_observed,
};
pub use replay::Replay;
pub use wasm::WasmBot;
