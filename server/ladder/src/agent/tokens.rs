//! Bot tokens: the credential of one agent bot. Distinct from users' API
//! tokens (another table, another prefix): a bot token speaks for its bot
//! in the agent API and nowhere else, and never changes a profile or a
//! setting.

use super::AgentBot;
use crate::auth::secret_hash;
use crate::db::Db;
use crate::error::{Error, Result};
use sqlx::Row;

/// Bot tokens start with this, so people and secret scanners can tell them
/// from API tokens (`arb_`).
pub const BOT_TOKEN_PREFIX: &str = "arbbot_";

/// Issues a new token for `user_id`'s agent bot `name` and returns it (the
/// only time it is seen); the bot's previous token stops working at once.
/// 404 for no such bot, 403 for someone else's, 409 for a bot that is not
/// an agent bot.
pub async fn issue(db: &Db, user_id: i64, name: &str) -> Result<String> {
    let row = sqlx::query(
        "SELECT b.id, b.owner_id, (SELECT COUNT(*) FROM versions v WHERE v.bot_id = b.id AND v.agent = 1 \
           AND v.status = 'active') FROM bots b WHERE b.name_key = $1",
    )
    .bind(name.to_lowercase())
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| Error::NotFound(format!("no bot named {name}")))?;
    let (bot_id, owner): (i64, i64) = (row.try_get(0)?, row.try_get(1)?);
    if owner != user_id {
        return Err(Error::Forbidden(format!("{name} is not your bot")));
    }
    if row.try_get::<i64, _>(2)? == 0 {
        return Err(Error::Conflict(format!(
            "{name} is not an agent bot: register it as one (kind `agent`) to get a bot token"
        )));
    }
    crate::auth::replace_token(db, crate::auth::TokenTable::Bot, bot_id).await
}

/// The agent bot a token belongs to. 401 `invalid bot credential` for a
/// token never issued or reissued since, or whose bot has no active agent
/// version (retired).
pub async fn bot_by_token(db: &Db, token: &str) -> Result<AgentBot> {
    let row = sqlx::query(
        "SELECT b.id, b.name, u.name, v.id FROM bot_tokens t JOIN bots b ON b.id = t.bot_id \
         JOIN users u ON u.id = b.owner_id \
         JOIN versions v ON v.bot_id = b.id AND v.agent = 1 AND v.status = 'active' \
         WHERE t.token_hash = $1 ORDER BY v.number DESC LIMIT 1",
    )
    .bind(secret_hash(token))
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| Error::Unauthenticated("invalid bot credential".into()))?;
    Ok(AgentBot {
        id: row.try_get(0)?,
        name: row.try_get(1)?,
        owner: row.try_get(2)?,
        version: row.try_get(3)?,
    })
}

/// Whether bot `bot_id` has an active agent version (and so may hold a bot
/// token).
pub async fn is_agent_bot(db: &Db, bot_id: i64) -> Result<bool> {
    let count: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM versions WHERE bot_id = $1 AND agent = 1 AND status = 'active'")
            .bind(bot_id)
            .fetch_one(&db.pool)
            .await?;
    Ok(count > 0)
}
