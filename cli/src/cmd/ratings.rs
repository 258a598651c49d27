//! `arbiter ratings`: rating maintenance.

use anyhow::Context;
use arbiter_ladder::db::Db;
use arbiter_ladder::ratings::{RatingSystem, recompute};
use std::path::PathBuf;
use std::process::ExitCode;

/// Rating maintenance.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Rebuilds every rating from the log of rated matches and reports any
    /// difference from what is stored (there should be none). Exits with 1
    /// when there is a difference.
    #[command(after_help = "Example:\n  arbiter ratings recompute --data arbiter-data")]
    Recompute {
        /// Data folder (the SQLite database unless DATABASE_URL is set).
        #[arg(long, default_value = "arbiter-data")]
        data: PathBuf,
        /// PostgreSQL instead of SQLite.
        #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
        database_url: Option<String>,
        /// Rating system (must match the server's).
        #[arg(long, value_enum, default_value = "glicko2")]
        rating: RatingSystem,
    },
}

/// Runs `arbiter ratings`: success when the ratings match the log, 1 when
/// they differ.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Recompute {
        data,
        database_url,
        rating,
    } = command;
    let differences = super::runtime()?.block_on(async move {
        // Only the database: no sandbox, no blob store.
        let db = Db::open(&data, database_url.as_deref())
            .await
            .context("cannot open the database")?;
        anyhow::Ok(recompute(&db, rating).await?)
    })?;
    if differences.is_empty() {
        println!("ratings recomputed from the match log: no difference");
        return Ok(ExitCode::SUCCESS);
    }
    println!("{} rating(s) differ from the match log:", differences.len());
    for d in &differences {
        println!(
            "  version {} on {}: stored {:.2} ± {:.2}, recomputed {:.2} ± {:.2}",
            d.version_id, d.ladder, d.stored.rating, d.stored.deviation, d.recomputed.rating, d.recomputed.deviation
        );
    }
    Ok(ExitCode::FAILURE)
}
