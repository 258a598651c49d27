//! The home page and the ladder pages.

use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, match_rows, render};
use crate::server::AppState;
use arbiter_ladder::ladders;
use arbiter_ladder::leaderboard::{self, LeaderboardRow, Sort, TREND_MATCHES};
use arbiter_ladder::model::VersionId;
use askama::Template;
use axum::extract::{Path, Query, State};
use std::collections::HashMap;

/// A ladder on the home page.
struct LadderCard {
    name: String,
    title: String,
    active: i64,
    top: Vec<BoardRow>,
}

#[derive(Template)]
#[template(path = "home.html", config = "../../web/askama.toml")]
struct HomePage {
    nav: Nav,
    title: String,
    ladders: Vec<LadderCard>,
    /// The remote bots' boards that have a remote bot.
    remote_ladders: Vec<LadderCard>,
    live: Vec<MatchRow>,
    /// When the live list was read.
    rendered: When,
    recent: Vec<MatchRow>,
}

/// The live matches alone, for the home page's script.
#[derive(Template)]
#[template(path = "home_live.html", config = "../../web/askama.toml")]
struct HomeLive {
    live: Vec<MatchRow>,
}

/// Live matches the home page lists.
pub const LIVE_MATCHES: i64 = 10;

/// `?fragment=live` asks for the live matches' list only (the page's
/// script refreshes the list with it when a match starts or ends).
#[derive(serde::Deserialize)]
pub struct HomeQuery {
    fragment: Option<String>,
}

/// `GET /[?fragment=live]`: ladders with their top bots, live and recent
/// matches; with `fragment=live`, the live matches' list alone.
pub async fn home(State(state): State<AppState>, Query(query): Query<HomeQuery>, viewer: Viewer) -> SiteResult {
    if query.fragment.as_deref() == Some("live") {
        let live = match_rows::list(&state, "", "running", 0, LIVE_MATCHES).await?;
        let mut response = render(&HomeLive { live });
        response.headers_mut().insert(
            axum::http::header::CACHE_CONTROL,
            axum::http::HeaderValue::from_static("no-store"),
        );
        return Ok(response);
    }
    let mut cards = Vec::new();
    let mut remote_cards = Vec::new();
    for name in ladders::all_names() {
        let remote = name.starts_with(ladders::REMOTE_PREFIX);
        // A remote board shows once a remote bot plays on it.
        if remote && leaderboard::remote_versions(&state.core.db, &name).await? == 0 {
            continue;
        }
        let top = leaderboard::rows(&state.core.db, &name, Sort::default(), 3, 0).await?;
        let card = LadderCard {
            title: view::ladder_title(&name),
            active: leaderboard::active_versions(&state.core.db, &name).await?,
            top: top.iter().map(|row| BoardRow::new(row, &HashMap::new())).collect(),
            name,
        };
        if remote {
            remote_cards.push(card);
        } else {
            cards.push(card);
        }
    }
    let live = match_rows::list(&state, "", "running", 0, LIVE_MATCHES).await?;
    let rendered = When::at(arbiter_ladder::db::now_ms());
    let recent = match_rows::list(&state, "", "finished", 0, 15).await?;
    Ok(render(&HomePage {
        nav: viewer.nav("home"),
        title: "Arbiter — a ladder for game bots".into(),
        ladders: cards,
        remote_ladders: remote_cards,
        live,
        rendered,
        recent,
    }))
}

/// One leaderboard row.
pub(super) struct BoardRow {
    pub(super) rank: i64,
    pub(super) bot: String,
    /// The bot's photo, shown as a thumbnail.
    pub(super) photo: Option<String>,
    pub(super) owner: String,
    /// Whether the owner has a page (a deleted account has none).
    pub(super) owner_linked: bool,
    pub(super) version: i64,
    /// The Glicko-2 rating and its `± 2·RD`, shown beside the headline.
    pub(super) rating: String,
    pub(super) plus_minus: String,
    pub(super) low: String,
    pub(super) high: String,
    pub(super) provisional: bool,
    /// The whole-log fit, the headline: `1523` and `± 41`; empty before a
    /// rated match.
    pub(super) fitted: String,
    pub(super) fitted_plus_minus: String,
    /// Its exact value, for scripts and tests (empty before a rated match).
    pub(super) fitted_value: String,
    /// The chance that it is stronger than the next row down (`97%`),
    /// empty when not known.
    pub(super) above_next: String,
    pub(super) wins: i64,
    pub(super) draws: i64,
    pub(super) losses: i64,
    pub(super) matches: i64,
    pub(super) trend: String,
    pub(super) trend_class: &'static str,
    pub(super) spark: String,
    pub(super) last_played: Option<When>,
}

/// A chance as a whole percent, never rounded to a certainty.
fn chance(p: f64) -> String {
    if p >= 0.995 {
        "> 99%".into()
    } else if p <= 0.005 {
        "< 1%".into()
    } else {
        format!("{:.0}%", 100.0 * p)
    }
}

impl BoardRow {
    /// Shows a leaderboard row, with the version's recent ratings (oldest
    /// first) from `history`.
    pub(super) fn new(row: &LeaderboardRow, history: &HashMap<VersionId, Vec<f64>>) -> BoardRow {
        let points = history.get(&row.version_id).map(Vec::as_slice).unwrap_or_default();
        let (trend, trend_class) = match (points.first(), points.last()) {
            (Some(first), Some(last)) if points.len() > 1 => {
                let delta = last - first;
                let class = if delta >= 0.5 {
                    "up"
                } else if delta <= -0.5 {
                    "down"
                } else {
                    "flat"
                };
                (view::signed(delta), class)
            }
            _ => (String::new(), "flat"),
        };
        BoardRow {
            rank: row.rank,
            bot: row.bot.clone(),
            photo: row.photo.clone(),
            owner: row.owner.clone(),
            owner_linked: row.owner != arbiter_ladder::accounts::DELETED_NAME,
            version: row.version,
            rating: view::whole(row.rating),
            plus_minus: format!("± {:.0}", 2.0 * row.deviation),
            low: view::whole(row.low),
            high: view::whole(row.high),
            provisional: row.provisional,
            fitted: row.fitted.map(view::whole).unwrap_or_default(),
            fitted_plus_minus: row.fitted_interval.map(|i| format!("± {i:.0}")).unwrap_or_default(),
            fitted_value: row.fitted.map(|f| f.to_string()).unwrap_or_default(),
            above_next: row.above_next.map(chance).unwrap_or_default(),
            wins: row.wins,
            draws: row.draws,
            losses: row.losses,
            matches: row.matches,
            trend,
            trend_class,
            spark: sparkline(points, 64.0, 18.0),
            last_played: row.last_played_ms.map(When::at),
        }
    }
}

/// The points of a sparkline of `values` in a `width`×`height` box.
pub fn sparkline(values: &[f64], width: f64, height: f64) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let (min, max) = values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), &v| (lo.min(v), hi.max(v)));
    let span = (max - min).max(1.0);
    let step = width / (values.len() - 1) as f64;
    values
        .iter()
        .enumerate()
        .map(|(i, v)| {
            format!(
                "{:.1},{:.1}",
                i as f64 * step,
                height - 1.0 - (v - min) / span * (height - 2.0)
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[derive(Template)]
#[template(path = "ladder.html", config = "../../web/askama.toml")]
struct LadderPage {
    nav: Nav,
    title: String,
    ladder: String,
    rows: Vec<BoardRow>,
    recent: Vec<MatchRow>,
    trend_matches: usize,
    time: ladders::TimeControl,
    /// A remote bots' ladder (wall clock).
    remote: bool,
    longer: Vec<String>,
    /// `fitted` (the default), `conservative` or `rating`.
    sort: &'static str,
    /// House bots a visitor may play on this ladder's game.
    house_bots: Vec<String>,
}

#[derive(Template)]
#[template(path = "ladder_rows.html", config = "../../web/askama.toml")]
struct LadderRows {
    rows: Vec<BoardRow>,
}

/// `?fragment=rows` asks for the leaderboard's rows only (the page's script
/// refreshes the table with it).
#[derive(serde::Deserialize)]
pub struct LadderQuery {
    fragment: Option<String>,
    /// `fitted` (the default: by the bold headline), `conservative` or
    /// `rating` (Glicko-2's).
    sort: Option<String>,
}

/// `GET /ladders/{ladder}`: the leaderboard and the ladder's recent matches.
pub async fn ladder(
    State(state): State<AppState>,
    Path(ladder): Path<String>,
    Query(query): Query<LadderQuery>,
    viewer: Viewer,
) -> SiteResult {
    let (variant, clock) =
        ladders::parse_any(&ladder).map_err(|_| SiteError::not_found(format!("ladder {ladder:?}")))?;
    let name = ladders::canonical(&ladder).map_err(|_| SiteError::not_found(format!("ladder {ladder:?}")))?;
    let sort = Sort::parse(query.sort.as_deref())?;
    let history = leaderboard::recent_ratings(&state.core.db, &name).await?;
    let rows = leaderboard::rows(&state.core.db, &name, sort, 200, 0).await?;
    let board: Vec<BoardRow> = rows.iter().map(|row| BoardRow::new(row, &history)).collect();
    if query.fragment.as_deref() == Some("rows") {
        return Ok(render(&LadderRows { rows: board }));
    }
    let recent = match_rows::list(&state, &name, "", 0, 20).await?;
    let time = ladders::time_control_of(&state.core.db, &name).await?;
    let remote = clock == ladders::Clock::Wall;
    // The house bots on the board: people may play them (the house never
    // turns games against people off).
    let house_bots = if remote || variant.is_tick_based() {
        Vec::new()
    } else {
        let mut house: Vec<String> = rows
            .iter()
            .filter(|row| row.owner == arbiter_ladder::house::HOUSE_USER)
            .map(|row| row.bot.clone())
            .collect();
        house.sort();
        house
    };
    Ok(render(&LadderPage {
        house_bots,
        time,
        remote,
        longer: if remote {
            Vec::new()
        } else {
            variant.longer_budgets().iter().map(ToString::to_string).collect()
        },
        nav: viewer.nav("ladders"),
        title: view::ladder_title(&name),
        ladder: name,
        rows: board,
        recent,
        trend_matches: TREND_MATCHES,
        sort: sort.as_str(),
    }))
}
