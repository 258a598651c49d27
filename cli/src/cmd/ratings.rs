//! `arbiter ratings`: rating maintenance.

use super::ladder_error;
use anyhow::bail;
use arbiter_ladder::db::{Db, NotReady};
use arbiter_ladder::ratings::fitted::compare_all;
use arbiter_ladder::ratings::{RatingSystem, Recomputation, recompute_all};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// How long `ratings recompute` tries to reach the database before it
/// gives up with the cause.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// Rating maintenance.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Rebuilds every rating from the log of rated matches and reports any
    /// difference from what is stored (there should be none), with how many
    /// matches, versions and ladders it compared; then fits each ladder's
    /// whole log again (the leaderboard's headline rating) and sets it beside
    /// the Glicko-2 ratings: slope, RMS difference, Kendall τ. Only reads: the database
    /// is opened read-only and never created or migrated. Exits with 1 when
    /// there is a difference, 2 when there is nothing to compare (no
    /// database, no schema, no rated match) or the database cannot be
    /// reached (within 3 s).
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
/// they differ (or a whole-log fit does not converge), an error (exit 2)
/// when there is nothing to compare.
pub fn run(command: Command) -> anyhow::Result<ExitCode> {
    let Command::Recompute {
        data,
        database_url,
        rating,
    } = command;
    let report = super::runtime()?.block_on(async move {
        // Only the database, read-only: no sandbox, no blob store.
        let db = Db::open_read_only(&data, database_url.as_deref(), CONNECT_TIMEOUT).await?;
        let at = db.describe();
        match db.schema_current().await {
            Ok(()) => {}
            Err(NotReady::Unreachable(error)) if error.is_unavailable() => {
                bail!("cannot reach {at}: {}", error.detail())
            }
            Err(NotReady::Unreachable(error)) => {
                bail!(
                    "no ladder schema in {at} ({}): nothing to compare; is --data or DATABASE_URL right?",
                    error.detail()
                )
            }
            Err(NotReady::Behind { applied, known }) => bail!(
                "{at} is at migration {applied} but this binary needs {known}: \
                 start `arbiter serve` on it once to migrate it, then recompute"
            ),
        }
        let report = recompute_all(&db, rating).await.map_err(ladder_error)?;
        if report.matches == 0 {
            bail!("no rated match in {at}: nothing to compare");
        }
        let fits = compare_all(&db).await?;
        anyhow::Ok((report, fits))
    })?;
    let (report, fits) = report;
    let mut unconverged = false;
    for fit in &fits {
        println!(
            "whole-log fit of {}: {} rated match(es), {} version(s), {}; Glicko-2 against it: slope {:.3}, RMS difference {:.1}, Kendall τ {:.3}",
            fit.ladder,
            fit.matches,
            fit.versions,
            if fit.converged { "converged" } else { "NOT converged" },
            fit.glicko_slope,
            fit.rms_difference,
            fit.tau
        );
        unconverged |= !fit.converged;
    }
    let Recomputation {
        matches,
        versions,
        ladders,
        ratings,
        differences,
    } = &report;
    let compared = format!(
        "{matches} rated match(es) replayed; {ratings} rating(s) of {versions} version(s) on {ladders} ladder(s) compared"
    );
    if differences.is_empty() {
        println!("ratings recomputed from the match log: {compared}: no difference");
        return Ok(if unconverged {
            ExitCode::FAILURE
        } else {
            ExitCode::SUCCESS
        });
    }
    println!(
        "ratings recomputed from the match log: {compared}: {} differ:",
        differences.len()
    );
    for d in differences {
        println!(
            "  version {} on {}: stored {:.2} ± {:.2}, recomputed {:.2} ± {:.2}",
            d.version_id, d.ladder, d.stored.rating, d.stored.deviation, d.recomputed.rating, d.recomputed.deviation
        );
    }
    Ok(ExitCode::FAILURE)
}
