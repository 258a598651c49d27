//! The bot page: versions, rating history, recent matches, head-to-head.

use super::chart::Chart;
use super::match_list::{self, Pager};
use super::users::PeopleGameRow;
use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, render};
use crate::server::AppState;
use arbiter_ladder::bots::{self, VersionWithRatings};
use arbiter_ladder::match_search::{Cursor, MatchQuery};
use arbiter_ladder::model::{MatchStatus, UserId, VersionStatus};
use arbiter_ladder::people::Whose;
use arbiter_ladder::ratings::{RatingSystem, matches_to_establish};
use askama::Template;
use axum::extract::{Path, Query, State};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE, ETAG, IF_NONE_MATCH, LOCATION};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use std::collections::BTreeMap;

/// Below this many matches a head-to-head record is marked as not yet
/// conclusive (ladder.md: 20 paired games detect only large differences).
pub const CONCLUSIVE_MATCHES: i64 = 20;

/// A version's rating on one ladder it has played (the page explains the
/// figures once, above the versions).
struct VersionRating {
    ladder: String,
    /// The whole-log fit ± its 95% interval, the headline (`–` in the
    /// template when empty: rated matches but no fit, which does not
    /// happen).
    fitted: String,
    /// The fit's exact value (empty with it), for scripts and tests.
    fitted_value: String,
    /// The Glicko-2 rating ± 2·RD.
    text: String,
    provisional: bool,
    /// Matches until it is no longer provisional (about).
    to_establish: u32,
    record: String,
}

/// One version of the bot.
struct VersionView {
    number: i64,
    status: VersionStatus,
    reason: Option<String>,
    stderr: Option<String>,
    ladders: String,
    sha256: String,
    /// What its module is, as its check found it; empty before.
    module: String,
    created: When,
    /// Its ratings on the ladders it has played (rated matches or a fit).
    ratings: Vec<VersionRating>,
}

impl VersionView {
    /// Shows `version`; its log only when it was read for the owner and is
    /// not empty.
    fn new(with: VersionWithRatings, system: RatingSystem) -> VersionView {
        let version = with.version;
        let ratings = with
            .ratings
            .iter()
            .filter(|r| r.fitted.is_some() || r.wins + r.draws + r.losses > 0)
            .map(|r| {
                let rating = r.glicko();
                VersionRating {
                    fitted: r
                        .fitted
                        .zip(r.fitted_interval)
                        .map(|(f, i)| format!("{f:.0} ± {i:.0}"))
                        .unwrap_or_default(),
                    fitted_value: r.fitted.map(|f| f.to_string()).unwrap_or_default(),
                    ladder: r.ladder.clone(),
                    text: view::rating_text(rating.rating, rating.deviation),
                    provisional: rating.provisional(),
                    to_establish: matches_to_establish(system, rating),
                    record: format!("{}–{}–{}", r.wins, r.draws, r.losses),
                }
            })
            .collect();
        VersionView {
            number: version.number,
            status: version.status,
            reason: version.reason,
            stderr: version.stderr.flatten().filter(|s| !s.is_empty()),
            ladders: version.ladders.join(", "),
            sha256: version.sha256.chars().take(12).collect(),
            module: version.module.unwrap_or_default(),
            created: When::at(version.created_ms),
            ratings,
        }
    }
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
#[template(path = "bot.html", config = "../../web/askama.toml")]
struct BotPage {
    nav: Nav,
    title: String,
    name: String,
    owner: String,
    /// Whether the owner has a page (a deleted account has none).
    owner_linked: bool,
    mine: bool,
    retired: bool,
    created: When,
    versions: Vec<VersionView>,
    chart: Option<Chart>,
    matches: Vec<MatchRow>,
    /// The pages of its matches.
    pager: Pager,
    /// For its owner: the page of the logs of the matches shown.
    logs_link: Option<String>,
    head_to_head: Vec<HeadToHead>,
    conclusive_matches: i64,
    /// The profile: plain text, escaped by the template.
    bio: String,
    photo: Option<String>,
    auto_match: bool,
    /// The owner's profile form as shown: the stored profile, or what was
    /// sent when it was refused.
    form: ProfileDraft,
    /// The ladders its active version plays.
    supported_games: Vec<String>,
    /// An agent bot (FlipSight's agent API): its owner may issue a token.
    agent: bool,
    /// People may play it here (its owner allows it and it plays
    /// tic-tac-toe or Othello on the server).
    playable: bool,
    /// Its games against people: the tally from the bot's side.
    people_tally: arbiter_ladder::people::Tally,
    /// The latest of them.
    people_games: Vec<PeopleGameRow>,
}

/// Matches a bot page reads for its chart and head-to-head table: the
/// newest ones, so a bot with years of history still loads fast.
pub const HISTORY_MATCHES: i64 = 2000;

/// What the owner's profile form shows: the bot's settings, or what the
/// owner sent when it was refused, with the reason.
#[derive(Clone, Debug, Default)]
pub struct ProfileDraft {
    /// The bio (plain text, escaped by the template).
    pub bio: String,
    /// Automatic matching ticked.
    pub auto_match: bool,
    /// People may play it, ticked.
    pub people_play: bool,
    /// Matches at once, as written.
    pub concurrent_matches: String,
    /// Why the form was refused (the form is shown open, with it).
    pub error: Option<String>,
}

/// The page of a bot's matches list: `?after=` (a cursor).
#[derive(serde::Deserialize)]
pub struct PageQuery {
    after: Option<String>,
}

/// `/bots/{name}[?after=CURSOR]`: `after` pages its matches (400 for a bad
/// cursor).
pub async fn bot(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<PageQuery>,
    viewer: Viewer,
) -> SiteResult {
    let after = match_list::cursor(query.after.as_deref())?;
    bot_page_at(&state, &name, &viewer, None, after).await
}

/// The page of bot `name` for `viewer`; its owner's profile form filled in
/// as `draft` when given (a refused form, shown again with its reason),
/// else with the bot's settings.
pub async fn bot_page(state: &AppState, name: &str, viewer: &Viewer, draft: Option<ProfileDraft>) -> SiteResult {
    bot_page_at(state, name, viewer, draft, None).await
}

/// [`bot_page`] with its matches from `after` (`None`: the newest).
async fn bot_page_at(
    state: &AppState,
    name: &str,
    viewer: &Viewer,
    draft: Option<ProfileDraft>,
    after: Option<Cursor>,
) -> SiteResult {
    let bot = bots::by_name(&state.core.db, name)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("bot {name:?}")))?;
    let mine = viewer.user_id() == Some(bot.owner_id.0);
    let owner = bot.owner_id;
    let viewer_id = viewer.user_id().map(UserId);
    let versions = bots::versions_with_ratings(&state.core.db, bot.id, owner, viewer_id).await?;
    let versions = versions
        .into_iter()
        .map(|v| VersionView::new(v, state.core.rating))
        .collect();

    // The newest matches of any of the bot's versions, oldest first; only
    // finished ones count.
    let mut history: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut records: BTreeMap<(String, String), [i64; 3]> = BTreeMap::new();
    for played in bots::played_matches(&state.core.db, bot.id, HISTORY_MATCHES).await? {
        if played.status != MatchStatus::Finished {
            continue;
        }
        if let Some(after) = played.after {
            let line = history.entry(played.ladder.clone()).or_default();
            if line.is_empty() {
                line.push(played.before.unwrap_or(after));
            }
            line.push(after);
        }
        let record = records.entry((played.opponent, played.ladder)).or_default();
        match played.won {
            Some(true) => record[0] += 1,
            Some(false) => record[2] += 1,
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

    let matches_query = MatchQuery {
        bot: Some(bot.id),
        after,
        limit: match_list::PAGE,
        ..MatchQuery::default()
    };
    let path = format!("/bots/{}", super::users::urlencoding(&bot.name));
    let (matches, pager) = match_list::page(state, &matches_query, &path, &[], "matches").await?;
    let logs_link = mine.then(|| match after {
        Some(cursor) => format!("{path}/logs?after={}", cursor.token()),
        None => format!("{path}/logs"),
    });
    let agent = arbiter_ladder::agent::tokens::is_agent_bot(&state.core.db, bot.id.0).await?;
    // People may play it when its owner allows it and its active version
    // is a sandboxed one that plays a turn-based game (a remote bot's
    // ladders are `remote:…`, no variant; an agent bot plays no module).
    let playable = bot.people_play
        && !agent
        && bot.supported_games.iter().any(|ladder| {
            ladder
                .parse::<arbiter_games::Variant>()
                .is_ok_and(|variant| !variant.is_tick_based())
        });
    let people_tally = arbiter_ladder::people::tally_of_bot(&state.core.db, &bot.name).await?;
    // The games (running ones first) with the accounts that played them,
    // to link their pages.
    let people_games = arbiter_ladder::people::list(&state.core.db, Whose::Bot(&bot.name), 20)
        .await?
        .into_iter()
        .map(PeopleGameRow::new)
        .collect();
    let form = draft.unwrap_or_else(|| ProfileDraft {
        bio: bot.bio.clone(),
        auto_match: bot.auto_match,
        people_play: bot.people_play,
        concurrent_matches: bot.concurrent_matches.to_string(),
        error: None,
    });
    Ok(render(&BotPage {
        form,
        agent,
        playable,
        people_tally,
        people_games,
        nav: viewer.nav("bots"),
        title: format!("{} — bot", bot.name),
        name: bot.name,
        owner_linked: bot.owner != arbiter_ladder::accounts::DELETED_NAME,
        owner: bot.owner,
        mine,
        retired: bot.retired,
        bio: bot.bio,
        photo: bot.photo,
        auto_match: bot.auto_match,
        supported_games: bot.supported_games,
        created: When::at(bot.created_ms),
        versions,
        chart: Chart::new(&series),
        matches,
        pager,
        logs_link,
        head_to_head,
        conclusive_matches: CONCLUSIVE_MATCHES,
    }))
}

/// The query of a photo's address.
#[derive(serde::Deserialize)]
pub struct PhotoQuery {
    /// The photo's version ([`arbiter_ladder::profile::PhotoRef::version`]).
    v: Option<String>,
}

/// A year: how long a photo's versioned address may be cached.
const PHOTO_IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// `GET /bots/{name}/photo.png[?v=VERSION]`: the bot's photo, a PNG the
/// server made itself (served as `image/png`, `nosniff`).
///
/// - `v` the current photo's version (the address the bot's JSON and pages
///   give): the photo, cached for a year as `immutable` (a new photo has a
///   new address).
/// - no `v`: the current photo, `no-cache` with an `ETag` (revalidated each
///   time; 304 when unchanged).
/// - `v` of another photo (replaced): 302 to the current photo's address,
///   `no-cache`; 404 when the bot has no photo now. An address never serves
///   another photo than the one its `v` names under a lasting cache.
pub async fn photo(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<PhotoQuery>,
    headers: HeaderMap,
) -> Result<Response, SiteError> {
    let missing = || SiteError::not_found(format!("a photo of bot {name:?}"));
    let current = arbiter_ladder::profile::photo_ref(&state.core, &name)
        .await?
        .ok_or_else(missing)?;
    let version = current.version();
    let etag = format!("\"{version}\"");
    match query.v.as_deref() {
        Some(v) if v != version => {
            let Some(bot) = bots::by_name(&state.core.db, &name).await? else {
                return Err(missing());
            };
            let Some(address) = bot.photo else {
                return Err(missing());
            };
            return Ok((
                StatusCode::FOUND,
                [(LOCATION, address), (CACHE_CONTROL, "no-cache".to_owned())],
            )
                .into_response());
        }
        None if headers
            .get(IF_NONE_MATCH)
            .and_then(|sent| sent.to_str().ok())
            .is_some_and(|sent| sent.split(',').any(|tag| tag.trim() == etag)) =>
        {
            return Ok((
                StatusCode::NOT_MODIFIED,
                [(ETAG, etag), (CACHE_CONTROL, "no-cache".to_owned())],
            )
                .into_response());
        }
        _ => {}
    }
    let cache = if query.v.is_some() { PHOTO_IMMUTABLE } else { "no-cache" };
    let png = arbiter_ladder::profile::photo_png(&state.core, &current)
        .await?
        .ok_or_else(missing)?;
    Ok((
        [
            (CONTENT_TYPE, arbiter_ladder::profile::PHOTO_CONTENT_TYPE.to_owned()),
            (CACHE_CONTROL, cache.to_owned()),
            (ETAG, etag),
        ],
        png,
    )
        .into_response())
}

/// Matches the logs page shows at once (logs can be long).
pub const LOG_PAGE: i64 = 10;

/// One match on a bot's logs page, with what the bot wrote in it.
struct MatchLogs {
    row: MatchRow,
    /// `(game number from 1, stderr)`, by game.
    games: Vec<(i64, String)>,
}

#[derive(Template)]
#[template(path = "bot_logs.html", config = "../../web/askama.toml")]
struct BotLogsPage {
    nav: Nav,
    title: String,
    name: String,
    matches: Vec<MatchLogs>,
    pager: Pager,
}

/// `GET /bots/{name}/logs[?after=CURSOR]`: for the bot's owner, what it
/// wrote to stderr in its matches, a page at a time (the matches of its
/// page, by the same cursor). 401 signed out, 403 for anyone else (the
/// rule of one match's logs), 404 for no such bot.
pub async fn logs(
    State(state): State<AppState>,
    Path(name): Path<String>,
    Query(query): Query<PageQuery>,
    viewer: Viewer,
) -> SiteResult {
    let bot = bots::by_name(&state.core.db, &name)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("bot {name:?}")))?;
    let after = match_list::cursor(query.after.as_deref())?;
    let viewer_id = viewer.user_id().map(UserId);
    // Refused before any match is read.
    if let Err(refused) =
        arbiter_ladder::listings::bot_logs(&state.core.db, bot.id, bot.owner_id, viewer_id, &[]).await?
    {
        return Err(arbiter_ladder::error::Error::from(refused).into());
    }
    let path = format!("/bots/{}/logs", super::users::urlencoding(&bot.name));
    let matches_query = MatchQuery {
        bot: Some(bot.id),
        after,
        limit: LOG_PAGE,
        ..MatchQuery::default()
    };
    let (rows, pager) = match_list::page(&state, &matches_query, &path, &[], "").await?;
    let ids: Vec<_> = rows.iter().map(|row| arbiter_ladder::model::MatchId(row.id)).collect();
    let logs = arbiter_ladder::listings::bot_logs(&state.core.db, bot.id, bot.owner_id, viewer_id, &ids)
        .await?
        .map_err(arbiter_ladder::error::Error::from)?;
    let matches = rows
        .into_iter()
        .map(|row| MatchLogs {
            games: logs
                .iter()
                .filter(|log| log.match_id.0 == row.id)
                .map(|log| (log.game + 1, log.stderr.clone()))
                .collect(),
            row,
        })
        .collect();
    Ok(render(&BotLogsPage {
        nav: viewer.nav("bots"),
        title: format!("{} — logs", bot.name),
        name: bot.name,
        matches,
        pager,
    }))
}
