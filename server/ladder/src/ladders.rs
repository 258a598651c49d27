//! Ladders: one per (game, mode) on the fuel clock, and one per (game,
//! mode) on the wall clock for remote bots (`remote:othello:std`), each with
//! its own leaderboard, ratings and time control. The two kinds never mix:
//! a remote bot enters only remote ladders; house bots play on both, with a
//! rating on each.

use crate::db::{Db, now_ms};
use crate::error::Error;
use arbiter_games::{Budget, Variant};
use std::collections::BTreeMap;

/// What starts the name of every remote ladder.
pub const REMOTE_PREFIX: &str = "remote:";

/// Which clock a ladder's bots run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Clock {
    /// Sandboxed bots, timed by the fuel they burn: fair and re-runnable.
    Fuel,
    /// Remote bots (and house bots meeting them), timed by the wall clock.
    Wall,
}

/// Every fuel-clock ladder's name, e.g. `othello:std`, `tictactoe:standard`:
/// the ladders an upload may enter.
pub fn names() -> Vec<String> {
    Variant::ALL.iter().map(ToString::to_string).collect()
}

/// Every remote ladder's name, e.g. `remote:othello:std`.
pub fn remote_names() -> Vec<String> {
    Variant::ALL.iter().map(|&variant| remote_name(variant)).collect()
}

/// Every ladder, fuel-clock ones first.
pub fn all_names() -> Vec<String> {
    let mut all = names();
    all.extend(remote_names());
    all
}

/// The remote ladder of `variant`.
pub fn remote_name(variant: Variant) -> String {
    format!("{REMOTE_PREFIX}{variant}")
}

/// Reads any ladder's name, fuel-clock or remote (aliases allowed after
/// the prefix), answering 400 with the list of ladders otherwise.
pub fn parse_any(name: &str) -> Result<(Variant, Clock), Error> {
    let remote = name
        .get(..REMOTE_PREFIX.len())
        .filter(|head| head.eq_ignore_ascii_case(REMOTE_PREFIX))
        .map(|head| &name[head.len()..]);
    match remote {
        Some(rest) => rest.parse::<Variant>().map(|v| (v, Clock::Wall)).map_err(|_| {
            Error::Invalid(format!(
                "unknown ladder {name:?}: remote ladders are {}",
                remote_names().join(", ")
            ))
        }),
        None => parse(name).map(|v| (v, Clock::Fuel)),
    }
}

/// The canonical name of a ladder given as any of its names.
pub fn canonical(name: &str) -> Result<String, Error> {
    Ok(match parse_any(name)? {
        (variant, Clock::Fuel) => variant.to_string(),
        (variant, Clock::Wall) => remote_name(variant),
    })
}

/// Reads a ladder name (`othello:anti`, `othello` = `othello:std`,
/// `tictactoe`), answering 400 with the list of ladders otherwise.
pub fn parse(name: &str) -> Result<Variant, Error> {
    name.parse::<Variant>()
        .map_err(|_| Error::Invalid(format!("unknown ladder {name:?}: ladders are {}", names().join(", "))))
}

/// The canonical name of a ladder.
pub fn name(variant: Variant) -> String {
    variant.to_string()
}

/// A ladder's time control: what each side gets per move and per game, in
/// virtual milliseconds, and how much fuel makes one virtual millisecond.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct TimeControl {
    /// The most one move (turn) may take.
    pub turn_ms: u64,
    /// The bank of one game (an Othello leg).
    pub bank_ms: u64,
    /// Fuel per virtual millisecond.
    pub fuel_per_ms: u64,
}

impl TimeControl {
    /// The default of a new ladder: [`Variant::default_budget`] at
    /// [`DEFAULT_FUEL_PER_MS`](arbiter_sandbox::DEFAULT_FUEL_PER_MS).
    pub fn default_for(variant: Variant) -> TimeControl {
        TimeControl::new(variant.default_budget(), arbiter_sandbox::DEFAULT_FUEL_PER_MS)
    }

    /// The default of a remote ladder: FlipSight's 60 s per leg and colour
    /// for Othello (no per-move cap beyond the bank), botsarena-like 2 s per
    /// move and 10 s per game for tic-tac-toe, and the skirmish design's
    /// 200 ms tick, of which 90% (180 ms) is the bot's, with 1 s at tick 0.
    /// House bots meeting remote bots run at the default fuel rate.
    pub fn remote_default_for(variant: Variant) -> TimeControl {
        let budget = match variant {
            Variant::Othello(_) => Budget::new(60_000, 60_000),
            Variant::TicTacToe => Budget::new(2_000, 10_000),
            Variant::Skirmish => Budget::new(180, arbiter_games::skirmish::FIRST_DEADLINE_MS),
        };
        TimeControl::new(budget, arbiter_sandbox::DEFAULT_FUEL_PER_MS)
    }

    /// `budget` at `fuel_per_ms`.
    pub fn new(budget: Budget, fuel_per_ms: u64) -> TimeControl {
        TimeControl {
            turn_ms: budget.turn_ms,
            bank_ms: budget.bank_ms,
            fuel_per_ms,
        }
    }

    /// The per-move cap and per-game bank.
    pub fn budget(self) -> Budget {
        Budget::new(self.turn_ms, self.bank_ms)
    }

    /// From database columns; `None` unless all three are positive.
    pub fn from_columns(turn_ms: Option<i64>, bank_ms: Option<i64>, fuel_per_ms: Option<i64>) -> Option<TimeControl> {
        let positive = |v: Option<i64>| v.and_then(|v| u64::try_from(v).ok()).filter(|&v| v > 0);
        Some(TimeControl {
            turn_ms: positive(turn_ms)?,
            bank_ms: positive(bank_ms)?,
            fuel_per_ms: positive(fuel_per_ms)?,
        })
    }
}

impl std::fmt::Display for TimeControl {
    /// E.g. `1000 ms per move, 10000 ms per game (10000000 fuel per ms)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ms per move, {} ms per game ({} fuel per ms)",
            self.turn_ms, self.bank_ms, self.fuel_per_ms
        )
    }
}

fn column(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}

/// Gives every ladder the code knows a row with its default time control,
/// leaving existing rows as they are. Idempotent.
pub async fn seed_defaults(db: &Db) -> Result<(), Error> {
    Ok(write_defaults(db).await?)
}

/// [`seed_defaults`], failing with the driver's error (for the migrations).
pub(crate) async fn write_defaults(db: &Db) -> Result<(), sqlx::Error> {
    const INSERT: &str = "INSERT INTO ladders (name, turn_ms, bank_ms, fuel_per_ms, updated_ms) \
                          VALUES ($1, $2, $3, $4, $5) ON CONFLICT (name) DO NOTHING";
    for variant in Variant::ALL {
        write(db, INSERT, &name(variant), TimeControl::default_for(variant)).await?;
        write(
            db,
            INSERT,
            &remote_name(variant),
            TimeControl::remote_default_for(variant),
        )
        .await?;
    }
    Ok(())
}

/// Runs `sql` with `$1` the ladder's name, `$2`–`$4` the time control and
/// `$5` the time now.
async fn write(db: &Db, sql: &'static str, ladder: &str, time: TimeControl) -> Result<(), sqlx::Error> {
    sqlx::query(sql)
        .bind(ladder)
        .bind(column(time.turn_ms))
        .bind(column(time.bank_ms))
        .bind(column(time.fuel_per_ms))
        .bind(now_ms())
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// Every ladder's time control, by ladder name (rows the code cannot read
/// are left out).
pub async fn time_controls(db: &Db) -> Result<BTreeMap<String, TimeControl>, Error> {
    let rows: Vec<(String, i64, i64, i64)> =
        sqlx::query_as("SELECT name, turn_ms, bank_ms, fuel_per_ms FROM ladders ORDER BY name")
            .fetch_all(&db.pool)
            .await?;
    Ok(rows
        .into_iter()
        .filter_map(|(name, turn, bank, fuel)| {
            Some((name, TimeControl::from_columns(Some(turn), Some(bank), Some(fuel))?))
        })
        .collect())
}

/// The time control of `variant`'s ladder (its default when it has no row
/// yet).
pub async fn time_control(db: &Db, variant: Variant) -> Result<TimeControl, Error> {
    let row: Option<(i64, i64, i64)> =
        sqlx::query_as("SELECT turn_ms, bank_ms, fuel_per_ms FROM ladders WHERE name = $1")
            .bind(name(variant))
            .fetch_optional(&db.pool)
            .await?;
    Ok(row
        .and_then(|(turn, bank, fuel)| TimeControl::from_columns(Some(turn), Some(bank), Some(fuel)))
        .unwrap_or_else(|| TimeControl::default_for(variant)))
}

/// The time control of any ladder by name, fuel-clock or remote (its
/// default when it has no row yet).
pub async fn time_control_of(db: &Db, ladder: &str) -> Result<TimeControl, Error> {
    let (variant, clock) = parse_any(ladder)?;
    let name = canonical(ladder)?;
    let row: Option<(i64, i64, i64)> =
        sqlx::query_as("SELECT turn_ms, bank_ms, fuel_per_ms FROM ladders WHERE name = $1")
            .bind(&name)
            .fetch_optional(&db.pool)
            .await?;
    Ok(row
        .and_then(|(turn, bank, fuel)| TimeControl::from_columns(Some(turn), Some(bank), Some(fuel)))
        .unwrap_or_else(|| match clock {
            Clock::Fuel => TimeControl::default_for(variant),
            Clock::Wall => TimeControl::remote_default_for(variant),
        }))
}

/// Sets `variant`'s time control for matches queued from now on; matches
/// already queued keep the control they were queued with. Returns the
/// control it replaced.
pub async fn set_time_control(db: &Db, variant: Variant, time: TimeControl) -> Result<TimeControl, Error> {
    let before = time_control(db, variant).await?;
    write(
        db,
        "UPDATE ladders SET turn_ms = $2, bank_ms = $3, fuel_per_ms = $4, updated_ms = $5 WHERE name = $1",
        &name(variant),
        time,
    )
    .await?;
    Ok(before)
}

/// What [`apply_time_control`] did: the control a ladder had and the one it
/// has now.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TimeControlChange {
    /// The control before.
    pub before: TimeControl,
    /// The control now (the same as `before` when nothing changed).
    pub after: TimeControl,
}

impl TimeControlChange {
    /// Whether the control is different now.
    pub fn changed(&self) -> bool {
        self.before != self.after
    }
}

/// Gives `variant`'s ladder the per-move cap and per-game bank `budget`
/// (`arbiter serve --time`, `arbiter ladders time`) for matches queued from
/// now on, with `fuel_per_ms` fuel per virtual millisecond, or the fuel rate
/// it has when `None`. Writes only when the control changes. A fuel rate of
/// 0 is [`Error::Invalid`].
pub async fn apply_time_control(
    db: &Db,
    variant: Variant,
    budget: Budget,
    fuel_per_ms: Option<u64>,
) -> Result<TimeControlChange, Error> {
    if fuel_per_ms == Some(0) {
        return Err(Error::Invalid("the fuel per millisecond must be positive".into()));
    }
    let before = time_control(db, variant).await?;
    let after = TimeControl::new(budget, fuel_per_ms.unwrap_or(before.fuel_per_ms));
    if after != before {
        set_time_control(db, variant, after).await?;
    }
    Ok(TimeControlChange { before, after })
}

/// [`apply_time_control`] for any ladder by name, the remote ones
/// (`remote:othello:std`) included.
pub async fn apply_time_control_of(
    db: &Db,
    ladder: &str,
    budget: Budget,
    fuel_per_ms: Option<u64>,
) -> Result<TimeControlChange, Error> {
    if fuel_per_ms == Some(0) {
        return Err(Error::Invalid("the fuel per millisecond must be positive".into()));
    }
    let name = canonical(ladder)?;
    let before = time_control_of(db, &name).await?;
    let after = TimeControl::new(budget, fuel_per_ms.unwrap_or(before.fuel_per_ms));
    if after != before {
        write(
            db,
            "INSERT INTO ladders (name, turn_ms, bank_ms, fuel_per_ms, updated_ms) VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (name) DO UPDATE SET turn_ms = $2, bank_ms = $3, fuel_per_ms = $4, updated_ms = $5",
            &name,
            after,
        )
        .await?;
    }
    Ok(TimeControlChange { before, after })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_time_control_applies_once_and_keeps_the_fuel_rate_unless_given() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db")).await.expect("database");
        let ladder = Variant::TicTacToe;
        let default = TimeControl::default_for(ladder);

        let budget = Budget::new(default.turn_ms + 1, default.bank_ms + 10);
        let change = apply_time_control(&db, ladder, budget, None).await.expect("applied");
        assert_eq!(change.before, default);
        assert_eq!(change.after, TimeControl::new(budget, default.fuel_per_ms));
        assert!(change.changed());
        assert_eq!(time_control(&db, ladder).await.expect("read"), change.after);

        let again = apply_time_control(&db, ladder, budget, None)
            .await
            .expect("applied again");
        assert!(!again.changed(), "the same control twice changes nothing");

        let faster = apply_time_control(&db, ladder, budget, Some(7))
            .await
            .expect("new fuel rate");
        assert_eq!(faster.after.fuel_per_ms, 7);
        assert_eq!(time_control(&db, ladder).await.expect("read").fuel_per_ms, 7);

        let refused = apply_time_control(&db, ladder, budget, Some(0)).await;
        assert!(matches!(refused, Err(Error::Invalid(_))), "{refused:?}");
        assert_eq!(time_control(&db, ladder).await.expect("read").fuel_per_ms, 7);
        assert_eq!(
            time_control(&db, Variant::Skirmish).await.expect("read"),
            TimeControl::default_for(Variant::Skirmish),
            "other ladders keep theirs"
        );
    }
}
