//! One module per subcommand.

pub mod bots;
pub mod check;
pub mod connect;
pub mod games;
pub mod ladders;
pub mod new;
pub mod perft;
pub mod play;
pub mod position;
pub mod ratings;
pub mod replay;
pub mod serve;
pub mod shutdown;
pub mod simulate;
pub mod verify;
pub mod worker;

/// The async runtime of the server commands.
pub fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().enable_all().build()?)
}

/// A ladder error as the operator reads it: a refusal's message, or a
/// failure with its cause (which a web client never sees).
pub fn ladder_error(error: arbiter_ladder::error::Error) -> anyhow::Error {
    anyhow::Error::msg(error.detail().to_owned())
}

/// A database wait of `seconds` given as `flag`, checked.
pub fn db_options(flag: &str, seconds: f64) -> anyhow::Result<arbiter_ladder::db::DbOptions> {
    let acquire_timeout = std::time::Duration::try_from_secs_f64(seconds)
        .ok()
        .filter(|timeout| !timeout.is_zero())
        .ok_or_else(|| anyhow::anyhow!("{flag} must be a positive number of seconds, not {seconds}"))?;
    Ok(arbiter_ladder::db::DbOptions { acquire_timeout })
}
