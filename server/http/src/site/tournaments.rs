//! Tournaments: the list with a creation form, and each tournament's
//! standings and crosstable.

use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, match_rows, render};
use crate::server::AppState;
use arbiter_ladder::ladders;
use arbiter_ladder::model::TournamentId;
use arbiter_ladder::tournaments::{self, Tournament};
use askama::Template;
use axum::extract::{Path, State};

/// A tournament in the list.
struct TournamentRow {
    id: TournamentId,
    name: String,
    ladder: String,
    owner: String,
    matches_per_pair: i64,
    created: When,
}

impl TournamentRow {
    /// Shows `tournament`.
    fn new(tournament: Tournament) -> TournamentRow {
        TournamentRow {
            id: tournament.id,
            name: tournament.name,
            ladder: tournament.ladder,
            owner: tournament.owner,
            matches_per_pair: tournament.matches_per_pair,
            created: When::at(tournament.created_ms),
        }
    }
}

#[derive(Template)]
#[template(path = "tournaments.html", config = "../../web/askama.toml")]
struct ListPage {
    nav: Nav,
    title: String,
    tournaments: Vec<TournamentRow>,
    ladders: Vec<String>,
    bots: Vec<String>,
}

/// `GET /tournaments`.
pub async fn list(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    let tournaments = tournaments::list(&state.core.db)
        .await?
        .into_iter()
        .map(TournamentRow::new)
        .collect();
    Ok(render(&ListPage {
        nav: viewer.nav("tournaments"),
        title: "Tournaments".into(),
        tournaments,
        ladders: ladders::names(),
        bots: arbiter_ladder::bots::active_names(&state.core.db).await?,
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
#[template(path = "tournament.html", config = "../../web/askama.toml")]
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
    let tournaments::Detail { tournament, table } = tournaments::detail(&state.core.db, TournamentId(id))
        .await?
        .ok_or_else(|| SiteError::not_found(format!("tournament {id}")))?;
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
    let Tournament {
        name,
        ladder,
        owner,
        matches_per_pair,
        ..
    } = tournament;
    let matches = match_rows::list(&state, "", "", id, 200).await?;
    Ok(render(&TournamentPage {
        nav: viewer.nav("tournaments"),
        title: format!("{name} — tournament"),
        name,
        ladder_title: view::ladder_title(&ladder),
        ladder,
        matches_per_pair,
        owner,
        total: table.matches,
        finished,
        columns,
        rows,
        matches,
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
