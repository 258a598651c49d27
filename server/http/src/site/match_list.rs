//! The match list (`/matches`): a GET form of filters (ladder, bot, user,
//! result, finish reason with the fault kinds, days) over the matches,
//! newest first, paged by cursor with "Newer" and "Older" links. The same
//! pager pages a bot's and a user's matches. Plain links and a plain form:
//! it all works without JavaScript.

use super::view::{self, MatchRow};
use super::{Nav, SiteError, SiteResult, Viewer, match_rows, render};
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::match_search::{self, Cursor, MatchPage, MatchQuery, REASONS, ResultFilter, Written};
use askama::Template;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::IntoResponse;

/// Matches one page of a site list shows.
pub const PAGE: i64 = 25;

/// The "Newer" and "Older" links of a paged list (`None`: no such page).
#[derive(Clone, Debug, Default)]
pub struct Pager {
    /// The page of newer matches.
    pub newer: Option<String>,
    /// The page of older matches.
    pub older: Option<String>,
}

impl Pager {
    /// The links of `page`, to `path` with the query `pairs` (empty values
    /// left out) and the page's cursor, ending with `#fragment` when given.
    pub fn new(path: &str, pairs: &[(&str, &str)], page: &MatchPage, fragment: &str) -> Pager {
        let link = |cursor: Cursor| {
            let mut query = url::form_urlencoded::Serializer::new(String::new());
            for (key, value) in pairs.iter().filter(|(_, v)| !v.is_empty()) {
                query.append_pair(key, value);
            }
            query.append_pair("after", &cursor.token());
            let hash = if fragment.is_empty() {
                String::new()
            } else {
                format!("#{fragment}")
            };
            format!("{path}?{}{hash}", query.finish())
        };
        Pager {
            newer: page.newer.map(link),
            older: page.older.map(link),
        }
    }

    /// Whether there is another page either way.
    pub fn any(&self) -> bool {
        self.newer.is_some() || self.older.is_some()
    }
}

/// Reads a page's `?after=` cursor: a bad one is a 400 page.
pub fn cursor(after: Option<&str>) -> Result<Option<Cursor>, SiteError> {
    match after.map(str::trim).filter(|a| !a.is_empty()) {
        None => Ok(None),
        Some(token) => Ok(Some(Cursor::parse(token)?)),
    }
}

/// The rows and pager of one page of `query` on `path`.
pub async fn page(
    state: &AppState,
    query: &MatchQuery,
    path: &str,
    pairs: &[(&str, &str)],
    fragment: &str,
) -> Result<(Vec<MatchRow>, Pager), Error> {
    let page = match_search::search(&state.core.db, query).await?;
    let pager = Pager::new(path, pairs, &page, fragment);
    Ok((page.matches.iter().map(match_rows::match_row).collect(), pager))
}

/// The query of `/matches`: the form's fields and the page.
#[derive(Clone, Debug, Default, serde::Deserialize)]
pub struct ListForm {
    #[serde(default)]
    ladder: String,
    #[serde(default)]
    bot: String,
    #[serde(default)]
    user: String,
    #[serde(default)]
    result: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    from: String,
    #[serde(default)]
    to: String,
    #[serde(default)]
    after: String,
}

/// An option of a select.
struct Choice {
    value: String,
    label: String,
}

#[derive(Template)]
#[template(path = "matches.html", config = "../../web/askama.toml")]
struct MatchesPage {
    nav: Nav,
    title: String,
    form: ListForm,
    ladders: Vec<Choice>,
    results: Vec<Choice>,
    outcomes: Vec<Choice>,
    faults: Vec<Choice>,
    /// Why the filters were refused (shown on the form, which keeps them).
    error: Option<String>,
    /// Whether any filter is set.
    filtered: bool,
    rows: Vec<MatchRow>,
    pager: Pager,
}

/// `GET /matches`: the filter form and a page of matches. Filters that
/// cannot be read show the form again with the reason, as sent (400; 404
/// for an unknown bot or user).
pub async fn list(State(state): State<AppState>, Query(form): Query<ListForm>, viewer: Viewer) -> SiteResult {
    let written = Written {
        ladder: Some(form.ladder.clone()),
        status: None,
        bot: Some(form.bot.clone()),
        user: Some(form.user.clone()),
        result: Some(form.result.clone()),
        reason: Some(form.reason.clone()),
        from: Some(form.from.clone()),
        to: Some(form.to.clone()),
    };
    let found = async {
        let after = match form.after.trim() {
            "" => None,
            token => Some(Cursor::parse(token)?),
        };
        let query = MatchQuery {
            after,
            limit: PAGE,
            ..match_search::resolve(&state.core.db, &written).await?
        };
        let pairs = [
            ("ladder", form.ladder.trim()),
            ("bot", form.bot.trim()),
            ("user", form.user.trim()),
            ("result", form.result.trim()),
            ("reason", form.reason.trim()),
            ("from", form.from.trim()),
            ("to", form.to.trim()),
        ];
        page(&state, &query, "/matches", &pairs, "").await
    }
    .await;
    let (rows, pager, error, status) = match found {
        Ok((rows, pager)) => (rows, pager, None, StatusCode::OK),
        Err(error @ (Error::Invalid(_) | Error::NotFound(_))) => {
            let status = if matches!(error, Error::NotFound(_)) {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::BAD_REQUEST
            };
            (
                Vec::new(),
                Pager::default(),
                Some(SiteError::from(error).message().to_owned()),
                status,
            )
        }
        Err(other) => return Err(other.into()),
    };
    let ladders = arbiter_ladder::ladders::all_names()
        .into_iter()
        .map(|name| Choice {
            label: view::ladder_title(&name),
            value: name,
        })
        .collect();
    let results = ResultFilter::ALL
        .into_iter()
        .map(|r| Choice {
            value: r.as_str().to_owned(),
            label: match r {
                ResultFilter::Win => "won by the bot (else the user's bots)",
                ResultFilter::Loss => "lost by the bot (else the user's bots)",
                ResultFilter::Draw => "drawn",
                ResultFilter::Decisive => "won by either side",
            }
            .to_owned(),
        })
        .collect();
    let (faults, outcomes): (Vec<_>, Vec<_>) = REASONS.into_iter().partition(|r| r.is_fault());
    let choices = |reasons: Vec<arbiter_games::FinishReason>| -> Vec<Choice> {
        reasons
            .into_iter()
            .map(|r| Choice {
                value: r.as_str().to_owned(),
                label: r.as_str().replace('_', " "),
            })
            .collect()
    };
    let filtered = written.any();
    let page = MatchesPage {
        nav: viewer.nav("matches"),
        title: "Matches".into(),
        form,
        ladders,
        results,
        outcomes: choices(outcomes),
        faults: choices(faults),
        error,
        filtered,
        rows,
        pager,
    };
    Ok((status, render(&page)).into_response())
}
