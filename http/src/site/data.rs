//! Database reads the pages share. Matches come from the ladder
//! ([`arbiter_ladder::matches`]) as the same typed rows the API serialises,
//! so a page and `/api/matches` always agree.

use super::view::{MatchRow, Side, When, signed};
use crate::server::AppState;
use arbiter_ladder::error::Result;
use arbiter_ladder::matches::{self, MatchFilter, MatchSummary};
use arbiter_ladder::model::{BotId, MatchStatus, TournamentId};
use serde_json::Value;
use sqlx::Row;

/// A match as a row of a list: who played, who won, the score, and when it
/// last moved (finished, else started, else created).
pub fn match_row(m: &MatchSummary) -> MatchRow {
    let finished = m.status == MatchStatus::Finished;
    let side = |i: usize| -> Side {
        let p = &m.participants[i];
        Side {
            bot: p.bot.clone(),
            version: p.version,
            won: finished && m.winner == Some(i as i64),
            delta: match (p.rating_before, p.rating_after) {
                (Some(before), Some(after)) => signed(after - before),
                _ => String::new(),
            },
        }
    };
    let (a, b) = (side(0), side(1));
    let score = match m.scores {
        [Some(x), Some(y)] => format!("{x}–{y}"),
        _ => String::new(),
    };
    let result = match (m.status, m.winner) {
        (MatchStatus::Finished, Some(0)) => format!("{} wins", a.bot),
        (MatchStatus::Finished, Some(_)) => format!("{} wins", b.bot),
        (MatchStatus::Finished, None) => "draw".to_owned(),
        (other, _) => other.as_str().to_owned(),
    };
    MatchRow {
        id: m.id.0,
        ladder: m.ladder.clone(),
        kind: m.kind.as_str().to_owned(),
        status: m.status.as_str().to_owned(),
        a,
        b,
        score,
        result,
        when: When::at(m.finished_ms.or(m.started_ms).unwrap_or(m.created_ms)),
    }
}

/// The latest `limit` matches of a bot (any of its versions) as rows,
/// newest first.
pub async fn recent_for_bot(state: &AppState, bot_id: i64, limit: i64) -> Result<Vec<MatchRow>> {
    let recent = matches::recent_for_bot(&state.core.db, BotId(bot_id), limit).await?;
    Ok(recent.iter().map(match_row).collect())
}

/// The newest matches, optionally of one ladder (`""` = all), one status
/// (`""` = all) and one tournament (`0` = any), as the API's JSON (the
/// pages that still read rows with `MatchRow::from_json` take this; the
/// JSON is [`MatchSummary`] serialised, the same as `/api/matches`).
pub async fn matches(state: &AppState, ladder: &str, status: &str, tournament: i64, limit: i64) -> Result<Vec<Value>> {
    let filter = MatchFilter {
        ladder: (!ladder.is_empty()).then(|| ladder.to_owned()),
        status: match status {
            "" => None,
            status => Some(status.parse()?),
        },
        tournament: (tournament != 0).then_some(TournamentId(tournament)),
        ..MatchFilter::newest(limit)
    };
    matches::list(&state.core.db, &filter)
        .await?
        .iter()
        .map(|m| serde_json::to_value(m).map_err(|e| arbiter_ladder::error::Error::Internal(e.to_string())))
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use arbiter_ladder::matches::Participant;
    use arbiter_ladder::model::{MatchId, MatchKind, VersionId};

    fn summary(status: MatchStatus, winner: Option<i64>) -> MatchSummary {
        let side = |bot: &str, before: f64, after: f64| Participant {
            version_id: VersionId(1),
            bot: bot.into(),
            version: 2,
            rating_before: Some(before),
            rating_after: Some(after),
        };
        MatchSummary {
            id: MatchId(7),
            ladder: "othello:std".into(),
            kind: MatchKind::Ranked,
            status,
            created_ms: 1_000,
            started_ms: Some(2_000),
            finished_ms: None,
            participants: [side("a", 1500.0, 1510.0), side("b", 1500.0, 1490.0)],
            winner,
            scores: [Some(50), Some(78)],
            reasons: Value::Null,
            error: None,
            attempts: 1,
            tournament_id: None,
            replay: None,
        }
    }

    #[test]
    fn match_rows_name_the_winner() {
        let row = match_row(&summary(MatchStatus::Finished, Some(1)));
        assert_eq!(row.result, "b wins");
        assert_eq!(row.score, "50–78");
        assert!(row.b.won && !row.a.won);
        assert_eq!(row.a.delta, "+10");
        assert_eq!(row.when.iso, When::at(2_000).iso);
        let queued = match_row(&summary(MatchStatus::Queued, None));
        assert_eq!((queued.result.as_str(), queued.status.as_str()), ("queued", "queued"));
        assert_eq!(match_row(&summary(MatchStatus::Finished, None)).result, "draw");
    }

    /// Pages that still read the API's JSON (`MatchRow::from_json`) show
    /// the same rows as pages built from the typed match.
    #[test]
    fn typed_rows_agree_with_rows_read_from_the_json() {
        for (status, winner) in [
            (MatchStatus::Finished, Some(0)),
            (MatchStatus::Finished, None),
            (MatchStatus::Running, None),
            (MatchStatus::Failed, None),
        ] {
            let m = summary(status, winner);
            let typed = match_row(&m);
            let read = MatchRow::from_json(&serde_json::to_value(&m).expect("a match serialises"));
            let fields = |r: &MatchRow| {
                (
                    r.id,
                    r.ladder.clone(),
                    r.kind.clone(),
                    r.status.clone(),
                    [r.a.bot.clone(), r.b.bot.clone(), r.a.delta.clone(), r.b.delta.clone()],
                    [r.a.won, r.b.won],
                    [r.a.version, r.b.version],
                    r.score.clone(),
                    r.result.clone(),
                    r.when.iso.clone(),
                )
            };
            assert_eq!(fields(&typed), fields(&read));
        }
    }
}
