//! Read-only lists for the pages that find things: the ladders a user's
//! bots are rated on, and the stderr a bot wrote in a page of its matches
//! (for its owner). (Games against people are listed by
//! [`crate::people::list`].)
//!
//! Only reads; the tables belong to `people` and the worker.

use crate::db::Db;
use crate::error::Result;
use crate::matches::LogsRefused;
use crate::model::{BotId, MatchId, UserId};
use sqlx::Row;

/// The ladders on which a version of one of `user`'s bots has a rating,
/// in no particular order.
pub async fn rated_ladders_of_user(db: &Db, user: UserId) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT DISTINCT r.ladder FROM ratings r JOIN versions v ON v.id = r.version_id \
         JOIN bots b ON b.id = v.bot_id WHERE b.owner_id = $1",
    )
    .bind(user.0)
    .fetch_all(&db.pool)
    .await?)
}

/// What `bot` wrote to stderr in one game of one match.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BotLog {
    /// The match.
    pub match_id: MatchId,
    /// The bot's participant in it, 0 or 1.
    pub participant: i64,
    /// The game (leg).
    pub game: i64,
    /// What it wrote, as stored.
    pub stderr: String,
}

/// The stderr `bot` (owned by `owner`) wrote in `matches`, by match (as
/// given) then game, for `viewer`: its owner reads it, anyone else gets
/// the same [`LogsRefused`] as for one match's logs
/// ([`crate::matches::logs_for`]).
pub async fn bot_logs(
    db: &Db,
    bot: BotId,
    owner: UserId,
    viewer: Option<UserId>,
    matches: &[MatchId],
) -> Result<std::result::Result<Vec<BotLog>, LogsRefused>> {
    match viewer {
        None => return Ok(Err(LogsRefused::SignedOut)),
        Some(user) if user != owner => return Ok(Err(LogsRefused::NotAnOwner)),
        Some(_) => {}
    }
    if matches.is_empty() {
        return Ok(Ok(Vec::new()));
    }
    let ids: Vec<String> = (0..matches.len()).map(|i| format!("${}", i + 2)).collect();
    let sql = format!(
        "SELECT l.match_id, l.participant, l.game, l.stderr FROM match_logs l JOIN matches m ON m.id = l.match_id \
         JOIN versions v ON v.id = CASE WHEN l.participant = 0 THEN m.a_version ELSE m.b_version END \
         WHERE v.bot_id = $1 AND l.match_id IN ({}) ORDER BY l.match_id DESC, l.participant, l.game",
        ids.join(", ")
    );
    let mut query = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(bot.0);
    for id in matches {
        query = query.bind(id.0);
    }
    let rows = query.fetch_all(&db.pool).await?;
    let mut logs = rows
        .iter()
        .map(|row| {
            Ok(BotLog {
                match_id: MatchId(row.try_get(0)?),
                participant: row.try_get(1)?,
                game: row.try_get(2)?,
                stderr: row.try_get(3)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let order = |id: MatchId| matches.iter().position(|m| *m == id).unwrap_or(usize::MAX);
    logs.sort_by_key(|log| (order(log.match_id), log.participant, log.game));
    Ok(Ok(logs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn people_games_and_logs_are_listed_for_their_people_on_sqlite_and_postgres() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = Db::open_sqlite(&dir.path().join("arbiter.db")).await.expect("database");
        listed_for_their_people(&db).await;
        if crate::match_search::pg::test_pg_url().is_some() {
            let database = crate::match_search::pg::PgDatabase::create().await;
            let db = Db::connect(&database.url).await.expect("PostgreSQL");
            listed_for_their_people(&db).await;
            db.pool.close().await;
        }
    }

    async fn listed_for_their_people(db: &Db) {
        let db = db.clone();
        for sql in [
            "INSERT INTO users (id, name, name_key, password_hash, created_ms) VALUES (1, 'u1', 'u1', '', 0), (2, 'Ann', 'ann', '', 0)",
            "INSERT INTO bots (id, owner_id, name, name_key, created_ms) VALUES (1, 1, 'Alpha', 'alpha', 0), (2, 1, 'beta', 'beta', 0)",
            "INSERT INTO versions (id, bot_id, number, sha256, size, status, ladders, created_ms) VALUES \
             (10, 1, 1, 'x', 1, 'active', '[]', 0), (20, 2, 1, 'y', 1, 'active', '[]', 0)",
            "INSERT INTO people_games (id, version_id, variant, person, user_id, person_side, seed, status, winner, reason, created_ms) VALUES \
             (1, 10, 'othello:std', 'Ann', 2, 0, 1, 'finished', 'person', 'discs', 100), \
             (2, 10, 'othello:std', 'guest-7', NULL, 0, 1, 'aborted', NULL, 'restart', 200), \
             (3, 20, 'tictactoe:standard', 'Ann', 2, 1, 1, 'running', NULL, NULL, 300)",
            "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, status, created_ms, attempts) VALUES \
             (5, 'othello:std', 10, 20, 1, 'ranked', 'finished', 1, 1), (6, 'othello:std', 20, 10, 1, 'ranked', 'finished', 2, 1)",
            "INSERT INTO match_logs (match_id, participant, game, stderr) VALUES \
             (5, 0, 0, 'a5'), (5, 1, 0, 'b5'), (6, 0, 1, 'b6'), (6, 1, 0, 'a6-0'), (6, 1, 1, 'a6-1')",
        ] {
            sqlx::query(sql).execute(&db.pool).await.expect(sql);
        }
        let alpha = crate::people::list(&db, crate::people::Whose::Bot("Alpha"), 10)
            .await
            .expect("Alpha's games");
        assert_eq!(
            alpha.iter().map(|g| (g.id, g.account.clone())).collect::<Vec<_>>(),
            [(2, None), (1, Some("Ann".to_owned()))]
        );
        let logs = bot_logs(&db, BotId(1), UserId(1), Some(UserId(1)), &[MatchId(6), MatchId(5)])
            .await
            .expect("read")
            .expect("the owner reads them");
        let text: Vec<&str> = logs.iter().map(|l| l.stderr.as_str()).collect();
        assert_eq!(text, ["a6-0", "a6-1", "a5"], "Alpha's side only, by match as asked");
        assert_eq!(
            bot_logs(&db, BotId(1), UserId(1), Some(UserId(2)), &[MatchId(5)])
                .await
                .expect("read"),
            Err(LogsRefused::NotAnOwner)
        );
        assert_eq!(
            bot_logs(&db, BotId(1), UserId(1), None, &[MatchId(5)])
                .await
                .expect("read"),
            Err(LogsRefused::SignedOut)
        );
    }
}
