//! `arbiter ladders`: the ladders and their time controls.

use anyhow::Context;
use arbiter_games::Budget;
use arbiter_ladder::db::Db;
use arbiter_ladder::ladders;
use std::path::PathBuf;

/// Where the ladder's database is.
#[derive(clap::Args)]
pub struct Database {
    /// Data folder (the SQLite database unless DATABASE_URL is set).
    #[arg(long, default_value = "arbiter-data")]
    data: PathBuf,
    /// PostgreSQL instead of SQLite.
    #[arg(long, env = "DATABASE_URL", hide_env_values = true)]
    database_url: Option<String>,
}

/// The ladders and their time controls.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Lists every ladder with its time control.
    #[command(after_help = "Example:\n  arbiter ladders list --data arbiter-data")]
    List {
        #[command(flatten)]
        database: Database,
    },
    /// Sets a ladder's time control for the matches queued from now on
    /// (queued and finished matches keep theirs, so old replays still
    /// verify). A running server picks it up at once.
    #[command(after_help = "Examples:\n  arbiter ladders time othello:std 2000/20000\n  \
                            arbiter ladders time tictactoe 100/1000 --fuel-per-ms 10000000\n  \
                            arbiter ladders time remote:othello:std 30000/30000   # a remote bots' ladder (wall clock)")]
    Time {
        /// The ladder, e.g. othello:std or remote:othello:std.
        ladder: String,
        /// Per-move cap and per-game bank in virtual milliseconds.
        #[arg(value_name = "MOVE_MS/BANK_MS")]
        budget: Budget,
        /// Fuel per virtual millisecond (default: unchanged).
        #[arg(long)]
        fuel_per_ms: Option<u64>,
        #[command(flatten)]
        database: Database,
    },
}

/// Runs `arbiter ladders`.
pub fn run(command: Command) -> anyhow::Result<()> {
    super::runtime()?.block_on(async move {
        match command {
            Command::List { database } => {
                let db = open(&database).await?;
                for (name, time) in ladders::time_controls(&db).await.map_err(super::ladder_error)? {
                    println!("{name:<20} {time}");
                }
            }
            Command::Time {
                ladder,
                budget,
                fuel_per_ms,
                database,
            } => {
                let db = open(&database).await?;
                let change = ladders::apply_time_control_of(&db, &ladder, budget, fuel_per_ms).await?;
                let ladder = ladders::canonical(&ladder)?;
                println!(
                    "{ladder}: {} (was {}); matches queued from now on play with it",
                    change.after, change.before
                );
            }
        }
        anyhow::Ok(())
    })
}

async fn open(database: &Database) -> anyhow::Result<Db> {
    Db::open(&database.data, database.database_url.as_deref())
        .await
        .map_err(super::ladder_error)
        .context("cannot open the database")
}

/// `LADDER=MOVE_MS/BANK_MS`, as `arbiter serve --time` takes it.
#[derive(Clone, Debug)]
pub struct LadderTime {
    /// The ladder's canonical name (a remote one too).
    pub ladder: String,
    /// Its per-move cap and per-game bank.
    pub budget: Budget,
}

impl std::str::FromStr for LadderTime {
    type Err = String;

    fn from_str(text: &str) -> Result<LadderTime, String> {
        let (ladder, budget) = text
            .split_once('=')
            .ok_or_else(|| format!("expected LADDER=MOVE_MS/BANK_MS, e.g. othello:std=1000/10000, not {text:?}"))?;
        Ok(LadderTime {
            ladder: ladders::canonical(ladder).map_err(|e| e.detail().to_owned())?,
            budget: budget.parse().map_err(|e: arbiter_games::BadBudget| e.to_string())?,
        })
    }
}
