//! The bot page: versions, rating history, recent matches, head-to-head.

use super::chart::Chart;
use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, data, render};
use crate::server::AppState;
use arbiter_ladder::ratings::{Rating, matches_to_establish};
use askama::Template;
use axum::extract::{Path, State};
use sqlx::Row;
use std::collections::BTreeMap;

/// Below this many matches a head-to-head record is marked as not yet
/// conclusive (ladder.md: 20 paired games detect only large differences).
pub const CONCLUSIVE_MATCHES: i64 = 20;

/// A version's rating on one ladder.
struct VersionRating {
    ladder: String,
    text: String,
    provisional: bool,
    /// Matches until it is no longer provisional (about).
    to_establish: u32,
    /// Its 95% interval in words.
    interval: String,
    record: String,
}

/// One version of the bot.
struct VersionView {
    number: i64,
    status: String,
    reason: Option<String>,
    stderr: Option<String>,
    ladders: String,
    sha256: String,
    created: When,
    ratings: Vec<VersionRating>,
}

/// The record against one opponent on one ladder.
struct HeadToHead {
    opponent: String,
    ladder: String,
    wins: i64,
    draws: i64,
    losses: i64,
    matches: i64,
    score: String,
    conclusive: bool,
}

#[derive(Template)]
#[template(path = "bot.html", config = "../web/askama.toml")]
struct BotPage {
    nav: Nav,
    title: String,
    name: String,
    owner: String,
    mine: bool,
    retired: bool,
    created: When,
    versions: Vec<VersionView>,
    chart: Option<Chart>,
    matches: Vec<MatchRow>,
    head_to_head: Vec<HeadToHead>,
    conclusive_matches: i64,
}

/// `GET /bots/{name}`.
/// Matches a bot page reads for its chart and head-to-head table: the
/// newest ones, so a bot with years of history still loads fast.
pub const HISTORY_MATCHES: i64 = 2000;

/// `/bots/{name}`.
pub async fn bot(State(state): State<AppState>, Path(name): Path<String>, viewer: Viewer) -> SiteResult {
    let bot = data::bot_by_name(&state, &name)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("bot {name:?}")))?;
    let mine = viewer.user_id() == Some(bot.owner_id);
    let pool = &state.core.db.pool;

    let rows = sqlx::query(
        "SELECT id, number, sha256, status, reason, stderr, ladders, created_ms FROM versions \
         WHERE bot_id = $1 ORDER BY number DESC",
    )
    .bind(bot.id)
    .fetch_all(pool)
    .await?;
    let mut versions = Vec::with_capacity(rows.len());
    for row in &rows {
        let id: i64 = row.try_get(0)?;
        let ladders: Vec<String> = serde_json::from_str(&row.try_get::<String, _>(6)?).unwrap_or_default();
        let sha256: String = row.try_get(2)?;
        let ratings = sqlx::query(
            "SELECT ladder, rating, deviation, wins, draws, losses, volatility FROM ratings WHERE version_id = $1 ORDER BY ladder",
        )
        .bind(id)
        .fetch_all(pool)
        .await?
        .iter()
        .map(|r| -> Result<VersionRating, sqlx::Error> {
            let rating = Rating {
                rating: r.try_get(1)?,
                deviation: r.try_get(2)?,
                volatility: r.try_get(6)?,
            };
            Ok(VersionRating {
                ladder: r.try_get(0)?,
                text: view::rating_text(rating.rating, rating.deviation),
                provisional: rating.provisional(),
                to_establish: matches_to_establish(state.core.rating, rating),
                interval: format!(
                    "95% sure its rating is between {} and {}",
                    view::whole(rating.rating - 2.0 * rating.deviation),
                    view::whole(rating.rating + 2.0 * rating.deviation)
                ),
                record: format!(
                    "{}–{}–{}",
                    r.try_get::<i64, _>(3)?,
                    r.try_get::<i64, _>(4)?,
                    r.try_get::<i64, _>(5)?
                ),
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
        versions.push(VersionView {
            number: row.try_get(1)?,
            status: row.try_get(3)?,
            reason: row.try_get(4)?,
            stderr: if mine {
                row.try_get::<Option<String>, _>(5)?.filter(|s| !s.is_empty())
            } else {
                None
            },
            ladders: ladders.join(", "),
            sha256: sha256.chars().take(12).collect(),
            created: When::at(row.try_get(7)?),
            ratings,
        });
    }

    // The newest finished matches of any of the bot's versions, read oldest
    // first. The id set comes from the per-side indexes (an `OR` over both
    // sides scanned every match); the status is checked here, since a
    // status filter in SQL makes SQLite pick the queue index instead.
    let played = sqlx::query(
        "SELECT m.ladder, m.winner, av.bot_id, ab.name, bb.name, m.a_before, m.a_after, m.b_before, m.b_after, m.status \
         FROM matches m \
         JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
         JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id \
         WHERE m.id IN (SELECT id FROM matches WHERE a_version IN (SELECT id FROM versions WHERE bot_id = $1) \
                        UNION SELECT id FROM matches WHERE b_version IN (SELECT id FROM versions WHERE bot_id = $1)) \
         ORDER BY m.id DESC LIMIT $2",
    )
    .bind(bot.id)
    .bind(HISTORY_MATCHES)
    .fetch_all(pool)
    .await?;
    let mut history: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut records: BTreeMap<(String, String), [i64; 3]> = BTreeMap::new();
    for row in played.iter().rev() {
        if row.try_get::<String, _>(9)? != "finished" {
            continue;
        }
        let ladder: String = row.try_get(0)?;
        let winner: Option<i64> = row.try_get(1)?;
        let we_are_a = row.try_get::<i64, _>(2)? == bot.id;
        let (me, opponent) = if we_are_a {
            (0, row.try_get::<String, _>(4)?)
        } else {
            (1, row.try_get::<String, _>(3)?)
        };
        let (before, after): (Option<f64>, Option<f64>) = if we_are_a {
            (row.try_get(5)?, row.try_get(6)?)
        } else {
            (row.try_get(7)?, row.try_get(8)?)
        };
        if let Some(after) = after {
            let line = history.entry(ladder.clone()).or_default();
            if line.is_empty() {
                line.push(before.unwrap_or(after));
            }
            line.push(after);
        }
        let record = records.entry((opponent, ladder)).or_default();
        match winner {
            Some(w) if w == me => record[0] += 1,
            Some(_) => record[2] += 1,
            None => record[1] += 1,
        }
    }
    let series: Vec<(String, Vec<f64>)> = history.into_iter().collect();
    let mut head_to_head: Vec<HeadToHead> = records
        .into_iter()
        .map(|((opponent, ladder), [wins, draws, losses])| {
            let matches = wins + draws + losses;
            HeadToHead {
                opponent,
                ladder,
                wins,
                draws,
                losses,
                matches,
                score: format!(
                    "{:.0}%",
                    100.0 * (wins as f64 + draws as f64 / 2.0) / matches.max(1) as f64
                ),
                conclusive: matches >= CONCLUSIVE_MATCHES,
            }
        })
        .collect();
    head_to_head.sort_by(|x, y| y.matches.cmp(&x.matches).then_with(|| x.opponent.cmp(&y.opponent)));

    let matches = crate::api::matches::recent_for_bot(&state, bot.id, 20).await?;
    Ok(render(&BotPage {
        nav: viewer.nav("bots"),
        title: format!("{} — bot", bot.name),
        name: bot.name,
        owner: bot.owner,
        mine,
        retired: bot.retired,
        created: When::at(bot.created_ms),
        versions,
        chart: Chart::new(&series),
        matches: matches.iter().map(MatchRow::from_json).collect(),
        head_to_head,
        conclusive_matches: CONCLUSIVE_MATCHES,
    }))
}
