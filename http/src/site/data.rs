//! Database reads the pages share. Matches are read with the API's column
//! set and turned into JSON by `api::matches::match_json`, so a page and
//! `/api/matches` always agree.

use crate::api::matches::{SELECT, match_json};
use crate::server::AppState;
use serde_json::Value;
use sqlx::Row;

/// One match as JSON, if it exists.
pub async fn match_by_id(state: &AppState, id: i64) -> Result<Option<Value>, sqlx::Error> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT} WHERE m.id = $1")))
        .bind(id)
        .fetch_optional(&state.core.db.pool)
        .await?;
    row.as_ref().map(match_json).transpose()
}

/// The newest matches, optionally of one ladder (`""` = all), one status
/// (`""` = all) and one tournament (`0` = any).
pub async fn matches(
    state: &AppState,
    ladder: &str,
    status: &str,
    tournament: i64,
    limit: i64,
) -> Result<Vec<Value>, sqlx::Error> {
    // A filter that is given is a plain condition, so its index is used
    // (`$2 = '' OR m.status = $2` scanned every match).
    let status_condition = if status.is_empty() { "$2 = ''" } else { "m.status = $2" };
    let tournament_condition = if tournament == 0 {
        "$3 = 0"
    } else {
        "m.tournament_id = $3"
    };
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE ($1 = '' OR m.ladder = $1) AND {status_condition} AND {tournament_condition} \
         ORDER BY m.id DESC LIMIT $4"
    )))
    .bind(ladder)
    .bind(status)
    .bind(tournament)
    .bind(limit)
    .fetch_all(&state.core.db.pool)
    .await?;
    rows.iter().map(match_json).collect()
}

/// A bot's row: id, name, owner's id and name, retired, created.
pub struct BotRow {
    /// Bot id.
    pub id: i64,
    /// Its name as registered.
    pub name: String,
    /// Owner's user id.
    pub owner_id: i64,
    /// Owner's name.
    pub owner: String,
    /// Taken out of matchmaking.
    pub retired: bool,
    /// Created, Unix ms.
    pub created_ms: i64,
}

/// The bot called `name` (case-insensitive).
pub async fn bot_by_name(state: &AppState, name: &str) -> Result<Option<BotRow>, sqlx::Error> {
    let row = sqlx::query(
        "SELECT b.id, b.name, b.owner_id, u.name, b.retired, b.created_ms FROM bots b \
         JOIN users u ON u.id = b.owner_id WHERE b.name_key = $1",
    )
    .bind(name.to_lowercase())
    .fetch_optional(&state.core.db.pool)
    .await?;
    row.map(|row| {
        Ok(BotRow {
            id: row.try_get(0)?,
            name: row.try_get(1)?,
            owner_id: row.try_get(2)?,
            owner: row.try_get(3)?,
            retired: row.try_get::<i64, _>(4)? != 0,
            created_ms: row.try_get(5)?,
        })
    })
    .transpose()
}

/// A user's bots: name, newest version's status, and whether retired.
pub async fn bots_of(state: &AppState, user_id: i64) -> Result<Vec<(String, String, bool)>, sqlx::Error> {
    let rows = sqlx::query(
        "SELECT b.name, b.retired, \
           (SELECT v.status FROM versions v WHERE v.bot_id = b.id ORDER BY v.number DESC LIMIT 1) \
         FROM bots b WHERE b.owner_id = $1 ORDER BY b.name_key",
    )
    .bind(user_id)
    .fetch_all(&state.core.db.pool)
    .await?;
    rows.iter()
        .map(|row| {
            Ok((
                row.try_get(0)?,
                row.try_get::<Option<String>, _>(2)?.unwrap_or_default(),
                row.try_get::<i64, _>(1)? != 0,
            ))
        })
        .collect()
}

/// Names of the bots with an active version, for pickers.
pub async fn active_bot_names(state: &AppState) -> Result<Vec<String>, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT b.name FROM bots b WHERE EXISTS \
           (SELECT 1 FROM versions v WHERE v.bot_id = b.id AND v.status = 'active') \
         ORDER BY b.name_key LIMIT 2000",
    )
    .fetch_all(&state.core.db.pool)
    .await
}

/// Number of active versions on `ladder`.
pub async fn active_on(state: &AppState, ladder: &str) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM version_ladders l JOIN versions v ON v.id = l.version_id \
         WHERE l.ladder = $1 AND v.status = 'active'",
    )
    .bind(ladder)
    .fetch_one(&state.core.db.pool)
    .await
}
