//! Tournaments: the list with a creation form, and each tournament's
//! standings and crosstable.

use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, data, render};
use crate::server::AppState;
use arbiter_ladder::ladders;
use askama::Template;
use axum::extract::{Path, State};
use sqlx::Row;

/// A tournament in the list.
struct TournamentRow {
    id: i64,
    name: String,
    ladder: String,
    owner: String,
    matches_per_pair: i64,
    created: When,
}

#[derive(Template)]
#[template(path = "tournaments.html", config = "../web/askama.toml")]
struct ListPage {
    nav: Nav,
    title: String,
    tournaments: Vec<TournamentRow>,
    ladders: Vec<String>,
    bots: Vec<String>,
}

/// `GET /tournaments`.
pub async fn list(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    let rows = sqlx::query(
        "SELECT t.id, t.name, t.ladder, u.name, t.matches_per_pair, t.created_ms FROM tournaments t \
         JOIN users u ON u.id = t.owner_id ORDER BY t.id DESC LIMIT 100",
    )
    .fetch_all(&state.core.db.pool)
    .await?;
    let tournaments = rows
        .iter()
        .map(|row| {
            Ok(TournamentRow {
                id: row.try_get(0)?,
                name: row.try_get(1)?,
                ladder: row.try_get(2)?,
                owner: row.try_get(3)?,
                matches_per_pair: row.try_get(4)?,
                created: When::at(row.try_get(5)?),
            })
        })
        .collect::<Result<Vec<_>, sqlx::Error>>()?;
    Ok(render(&ListPage {
        nav: viewer.nav("tournaments"),
        title: "Tournaments".into(),
        tournaments,
        ladders: ladders::names(),
        bots: data::active_bot_names(&state).await?,
    }))
}

/// One row of the crosstable.
struct CrossRow {
    rank: usize,
    bot: String,
    points: String,
    played: i64,
    /// Points against each entrant, in the order of the columns; `None` on
    /// the diagonal.
    cells: Vec<Option<String>>,
}

#[derive(Template)]
#[template(path = "tournament.html", config = "../web/askama.toml")]
struct TournamentPage {
    nav: Nav,
    title: String,
    name: String,
    ladder: String,
    ladder_title: String,
    owner: String,
    matches_per_pair: i64,
    total: usize,
    finished: usize,
    columns: Vec<String>,
    rows: Vec<CrossRow>,
    matches: Vec<MatchRow>,
}

/// Formats points: `1`, `1½`, `½`.
fn points(value: f64) -> String {
    let whole = value.trunc();
    let half = (value - whole) >= 0.25;
    match (whole as i64, half) {
        (0, true) => "½".into(),
        (w, true) => format!("{w}½"),
        (w, false) => w.to_string(),
    }
}

/// `GET /tournaments/{id}`: standings and the crosstable (points of the row
/// bot against the column bot, from finished matches).
pub async fn page(State(state): State<AppState>, Path(id): Path<String>, viewer: Viewer) -> SiteResult {
    let id: i64 = id
        .parse()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| SiteError::not_found("tournament"))?;
    let pool = &state.core.db.pool;
    let header = sqlx::query(
        "SELECT t.name, t.ladder, t.matches_per_pair, u.name FROM tournaments t JOIN users u ON u.id = t.owner_id \
         WHERE t.id = $1",
    )
    .bind(id)
    .fetch_optional(pool)
    .await?
    .ok_or_else(|| SiteError::not_found(format!("tournament {id}")))?;
    let table = arbiter_ladder::crosstable::crosstable(pool, id).await?;
    let (cross, finished) = (&table.cross, table.finished);
    let standings = table.standings();
    let columns: Vec<String> = standings.iter().map(|s| s.0.clone()).collect();
    let rows = standings
        .iter()
        .enumerate()
        .map(|(i, (bot, p, n))| CrossRow {
            rank: i + 1,
            bot: bot.clone(),
            points: points(*p),
            played: *n,
            cells: columns
                .iter()
                .map(|other| {
                    if other == bot {
                        None
                    } else {
                        Some(
                            cross
                                .get(&(bot.clone(), other.clone()))
                                .map_or_else(|| "·".into(), |&p| points(p)),
                        )
                    }
                })
                .collect(),
        })
        .collect();
    let name: String = header.try_get(0)?;
    let ladder: String = header.try_get(1)?;
    let matches = data::matches(&state, "", "", id, 200).await?;
    Ok(render(&TournamentPage {
        nav: viewer.nav("tournaments"),
        title: format!("{name} — tournament"),
        name,
        ladder_title: view::ladder_title(&ladder),
        ladder,
        matches_per_pair: header.try_get(2)?,
        owner: header.try_get(3)?,
        total: table.matches,
        finished,
        columns,
        rows,
        matches: matches.iter().map(MatchRow::from_json).collect(),
    }))
}

#[cfg(test)]
mod tests {
    #[test]
    fn points_use_halves() {
        assert_eq!(super::points(0.0), "0");
        assert_eq!(super::points(0.5), "½");
        assert_eq!(super::points(2.5), "2½");
        assert_eq!(super::points(3.0), "3");
    }
}
