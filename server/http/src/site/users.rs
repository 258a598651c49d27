//! A user's page (`/users/{name}`): their bots with the ladders' headline
//! rating, rank and order, the matches of their bots (paged by cursor),
//! and the games they played against bots themselves.

use super::home::BoardRow;
use super::match_list::{self, Pager};
use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, render};
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::leaderboard::{self, Sort};
use arbiter_ladder::listings;
use arbiter_ladder::match_search::MatchQuery;
use arbiter_ladder::model::VersionStatus;
use arbiter_ladder::people::{GameRow, Whose};
use askama::Template;
use axum::extract::{Path, Query, State};
use std::collections::HashMap;

/// People games a user page lists.
pub const PEOPLE_GAMES: i64 = 20;

/// A user's bots on one ladder, as its leaderboard shows them.
struct LadderBots {
    ladder: String,
    title: String,
    rows: Vec<BoardRow>,
}

/// One of the user's bots.
struct OwnedBot {
    name: String,
    /// `active`, `rejected`, …, `retired` (taken out), or `no version`.
    state: String,
}

/// A game against a bot, as a list row.
pub struct PeopleGameRow {
    /// The game (`/play/{id}`).
    pub id: i64,
    /// Its variant.
    pub variant: String,
    /// The bot.
    pub bot: String,
    /// The person's name as the game shows it.
    pub person: String,
    /// Their account, when signed in.
    pub account: Option<String>,
    /// From the person's side: `won`, `lost`, `draw`, `aborted`, or
    /// `playing` while it runs.
    pub result_for_person: &'static str,
    /// From the bot's side.
    pub result_for_bot: &'static str,
    /// Why it ended, in words.
    pub reason: String,
    /// When it started.
    pub when: When,
}

impl PeopleGameRow {
    /// Shows a listed game.
    pub fn new(game: GameRow) -> PeopleGameRow {
        let (person, bot) = match (game.status.as_str(), game.winner.as_deref()) {
            ("running", _) => ("playing", "playing"),
            ("finished", Some("bot")) => ("lost", "won"),
            ("finished", Some("person")) => ("won", "lost"),
            ("finished", _) => ("draw", "draw"),
            _ => ("aborted", "aborted"),
        };
        PeopleGameRow {
            id: game.id,
            variant: view::ladder_title(&game.variant),
            bot: game.bot,
            person: game.person,
            account: game.account,
            result_for_person: person,
            result_for_bot: bot,
            reason: game.reason.unwrap_or_default().replace('_', " "),
            when: When::at(game.created_ms),
        }
    }
}

#[derive(Template)]
#[template(path = "user.html", config = "../../web/askama.toml")]
struct UserPage {
    nav: Nav,
    title: String,
    name: String,
    mine: bool,
    house: bool,
    since: When,
    bots: Vec<OwnedBot>,
    boards: Vec<LadderBots>,
    matches: Vec<MatchRow>,
    pager: Pager,
    people_games: Vec<PeopleGameRow>,
}

/// The page of `/users/{name}`: `?after=` pages their bots' matches.
#[derive(serde::Deserialize)]
pub struct UserQuery {
    after: Option<String>,
}

/// `GET /users/{name}`: 404 for no such user, 400 for a bad page cursor.
pub async fn user(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<UserQuery>,
    viewer: Viewer,
) -> SiteResult {
    let db = &state.core.db;
    let profile = match arbiter_ladder::accounts::profile(db, &name).await {
        Ok(profile) => profile,
        Err(Error::NotFound(_)) => return Err(SiteError::not_found(format!("user {name:?}"))),
        Err(other) => return Err(other.into()),
    };
    let after = match_list::cursor(query.after.as_deref())?;
    let bots = arbiter_ladder::bots::owned_by(db, profile.id)
        .await?
        .into_iter()
        .map(|bot| OwnedBot {
            state: if bot.retired {
                "retired".to_owned()
            } else {
                bot.newest
                    .map_or_else(|| "no version".to_owned(), |s: VersionStatus| s.to_string())
            },
            name: bot.name,
        })
        .collect();
    // Each ladder a bot of theirs is rated on, in the ladders' order, with
    // its rows as the leaderboard ranks and shows them.
    let rated = listings::rated_ladders_of_user(db, profile.id).await?;
    let mut boards = Vec::new();
    for ladder in arbiter_ladder::ladders::all_names() {
        if !rated.contains(&ladder) {
            continue;
        }
        let rows: Vec<BoardRow> = leaderboard::rows(db, &ladder, Sort::default(), i64::MAX, 0)
            .await?
            .iter()
            .filter(|row| row.owner == profile.name)
            .map(|row| BoardRow::new(row, &HashMap::new()))
            .collect();
        if !rows.is_empty() {
            boards.push(LadderBots {
                title: view::ladder_title(&ladder),
                ladder,
                rows,
            });
        }
    }
    let matches_query = MatchQuery {
        owner: Some(profile.id),
        after,
        limit: match_list::PAGE,
        ..MatchQuery::default()
    };
    let path = format!("/users/{}", urlencoding(&profile.name));
    let (matches, pager) = match_list::page(&state, &matches_query, &path, &[], "matches").await?;
    // Theirs: started signed in, or claimed (running ones first).
    let people_games = arbiter_ladder::people::list(&state.core.db, Whose::Account(profile.id.0), PEOPLE_GAMES)
        .await?
        .into_iter()
        .map(PeopleGameRow::new)
        .collect();
    Ok(render(&UserPage {
        nav: viewer.nav(if viewer.user_id() == Some(profile.id.0) {
            "account"
        } else {
            ""
        }),
        title: format!("{} — user", profile.name),
        mine: viewer.user_id() == Some(profile.id.0),
        house: profile.house,
        since: When::at(profile.created_ms),
        name: profile.name,
        bots,
        boards,
        matches,
        pager,
        people_games,
    }))
}

/// `text` as one path segment.
pub fn urlencoding(text: &str) -> String {
    url::form_urlencoded::byte_serialize(text.as_bytes())
        .collect::<String>()
        .replace('+', "%20")
}
