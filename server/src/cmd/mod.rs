//! One module per subcommand.

pub mod perft;
pub mod play;
pub mod position;
pub mod replay;
