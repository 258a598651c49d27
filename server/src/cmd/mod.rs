//! One module per subcommand.

pub mod bots;
pub mod check;
pub mod perft;
pub mod play;
pub mod position;
pub mod replay;
