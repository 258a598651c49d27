//! One module per subcommand.

pub mod bots;
pub mod check;
pub mod ladders;
pub mod perft;
pub mod play;
pub mod position;
pub mod ratings;
pub mod replay;
pub mod serve;
pub mod shutdown;
pub mod verify;
pub mod worker;

/// The async runtime of the server commands.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}
