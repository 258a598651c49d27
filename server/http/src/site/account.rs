//! Pages with forms: sign-up, sign-in, account (API token, password,
//! deletion, sign-out), upload and challenge. Each form posts to the site itself ([`super::forms`])
//! and works without JavaScript; `site.js`, when it runs, sends it to the
//! JSON API instead and stays on the page.

use super::view::{self, When};
use super::{Nav, SiteResult, Viewer, render};
use crate::server::AppState;
use arbiter_ladder::auth;
use arbiter_ladder::bots;
use arbiter_ladder::challenges::{self, ChallengeRequest};
use arbiter_ladder::ladders;
use arbiter_ladder::model::UserId;
use askama::Template;
use axum::extract::{Query, State};
use axum::http::header::{CACHE_CONTROL, SET_COOKIE};
use axum::http::{HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Redirect};
use axum_extra::extract::CookieJar;

/// A ladder a form offers.
struct LadderOption {
    name: String,
    title: String,
    selected: bool,
}

fn ladder_options(selected: &[&str]) -> Vec<LadderOption> {
    ladders::names()
        .into_iter()
        .map(|name| LadderOption {
            title: view::ladder_title(&name),
            selected: selected.contains(&name.as_str()),
            name,
        })
        .collect()
}

/// Where to go after signing in: a local path only (never another site).
pub fn safe_next(next: Option<&str>) -> String {
    match next {
        Some(path) if path.starts_with('/') && !path.starts_with("//") && !path.contains('\\') => path.to_owned(),
        _ => "/account".to_owned(),
    }
}

/// `?next=` of the sign-in and sign-up pages.
#[derive(serde::Deserialize)]
pub struct NextQuery {
    next: Option<String>,
}

#[derive(Template)]
#[template(path = "signin.html", config = "../../web/askama.toml")]
struct SignPage {
    nav: Nav,
    title: String,
    signup: bool,
    next: String,
    /// The form's token (see [`super::forms::FormToken`]).
    form_token: String,
    /// The name typed before, when the form comes back with an error.
    name: String,
    /// What was wrong with the last attempt.
    error: Option<String>,
}

/// The sign-up or sign-in page, with the name and error of a failed
/// attempt, and the form token's cookie when the browser had none.
pub(super) fn sign_page(
    viewer: &Viewer,
    signup: bool,
    next: &str,
    token: super::forms::FormToken,
    name: &str,
    error: Option<String>,
) -> axum::response::Response {
    let page = SignPage {
        nav: viewer.nav(if signup { "signup" } else { "signin" }),
        title: if signup { "Sign up" } else { "Sign in" }.into(),
        signup,
        next: safe_next(Some(next)),
        form_token: token.value().to_owned(),
        name: name.to_owned(),
        error,
    };
    (token, render(&page)).into_response()
}

/// `GET /signup`.
pub async fn signup(viewer: Viewer, token: super::forms::FormToken, Query(query): Query<NextQuery>) -> SiteResult {
    let next = safe_next(query.next.as_deref());
    Ok(sign_page(&viewer, true, &next, token, "", None))
}

/// `GET /signin`.
pub async fn signin(viewer: Viewer, token: super::forms::FormToken, Query(query): Query<NextQuery>) -> SiteResult {
    let next = safe_next(query.next.as_deref());
    Ok(sign_page(&viewer, false, &next, token, "", None))
}

/// Sends a signed-out visitor to the sign-in page, then back.
pub(super) fn sign_in_first(viewer: &Viewer) -> SiteResult {
    let next: String = viewer
        .path
        .bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' => (b as char).to_string(),
            other => format!("%{other:02X}"),
        })
        .collect();
    Ok(Redirect::to(&format!("/signin?next={next}")).into_response())
}

/// A bot of the signed-in user.
struct MyBot {
    name: String,
    status: String,
    retired: bool,
}

#[derive(Template)]
#[template(path = "account.html", config = "../../web/askama.toml")]
struct AccountPage {
    nav: Nav,
    title: String,
    name: String,
    since: When,
    bots: Vec<MyBot>,
    /// A token just issued (shown once).
    token: Option<String>,
    /// This site's address, for the examples.
    site_url: String,
    /// Why the last password change was refused.
    password_error: Option<String>,
    /// Why the last deletion was refused.
    delete_error: Option<String>,
}

/// Which of the account page's forms a refusal belongs to.
pub(super) enum AccountForm {
    /// `POST /account/password`.
    Password,
    /// `POST /account/delete`.
    Delete,
}

/// The confirmation a page shows after `?saved=KEY` (a POST that
/// redirected there after it succeeded), or `None` for another key: only
/// these fixed texts are ever shown.
pub(super) fn saved_message(key: &str) -> Option<&'static str> {
    Some(match key {
        "profile" => "Saved: the profile is updated.",
        "password" => {
            "Saved: your password is changed. Every other session is signed out and your API token is revoked \
             (issue a new one below)."
        }
        "retired" => "Saved: the bot is retired. It plays no more matches; its versions, ratings and matches stay.",
        "unretired" => "Saved: the bot is back in matchmaking with its last checked version.",
        "deleted" => {
            "Your account is deleted. Its bots are retired and kept as \"deleted user\"'s, so their matches and \
             replays stay."
        }
        _ => return None,
    })
}

/// The `saved` key of a path's query (`/account?saved=password`).
pub(super) fn saved_key(path: &str) -> Option<&str> {
    let query = path.split_once('?')?.1;
    query.split('&').find_map(|pair| pair.strip_prefix("saved="))
}

/// This site's address as the browser reached it (`https://` when the
/// site sets secure cookies), for copy-and-paste examples; the listening
/// address when the request named no usable host.
pub(super) fn site_url(state: &AppState, headers: &HeaderMap) -> String {
    let scheme = if state.config.secure_cookies { "https" } else { "http" };
    let host = headers
        .get(axum::http::header::HOST)
        .and_then(|value| value.to_str().ok())
        .filter(|host| {
            !host.is_empty()
                && host.len() <= 255
                && host
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'))
        })
        .map_or_else(|| state.config.listen.to_string(), str::to_owned);
    format!("{scheme}://{host}")
}

/// `GET /account` (`?saved=password` after a password change). Right after `POST /account/token` it shows the new
/// token (handed over in a short-lived cookie, checked to be the viewer's)
/// once: the answer clears the cookie and is not stored by the browser.
pub async fn account(State(state): State<AppState>, viewer: Viewer, headers: HeaderMap) -> SiteResult {
    let handed_over = CookieJar::from_headers(&headers)
        .get(super::forms::NEW_TOKEN_COOKIE)
        .map(|cookie| cookie.value().to_owned())
        .filter(|value| !value.is_empty());
    let Some(handed_over) = handed_over else {
        return account_page(&state, &viewer, &headers, None, None).await;
    };
    let mine = match &viewer.caller {
        Some(caller) => auth::caller_by_token(&state.core.db, &handed_over)
            .await
            .is_ok_and(|owner| owner.user_id == caller.user_id),
        None => false,
    };
    let mut page = account_page(&state, &viewer, &headers, mine.then_some(handed_over), None).await?;
    let answer = page.headers_mut();
    answer.insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(clear) = super::forms::new_token_cookie("", 0, state.config.secure_cookies) {
        answer.append(SET_COOKIE, clear);
    }
    Ok(page)
}

/// The account page, showing `token` when one was just issued, and
/// `refused`'s message on its form.
pub(super) async fn account_page(
    state: &AppState,
    viewer: &Viewer,
    headers: &HeaderMap,
    token: Option<String>,
    refused: Option<(AccountForm, String)>,
) -> SiteResult {
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(viewer);
    };
    let created = bots::member_since(&state.core.db, UserId(caller.user_id)).await?;
    let bots = bots::owned_by(&state.core.db, UserId(caller.user_id))
        .await?
        .into_iter()
        .map(|bot| MyBot {
            status: bot.newest.map(|status| status.as_str().to_owned()).unwrap_or_default(),
            name: bot.name,
            retired: bot.retired,
        })
        .collect();
    Ok(render(&AccountPage {
        nav: viewer.nav("account"),
        title: "Your account".into(),
        name: caller.name,
        since: When::at(created),
        bots,
        token,
        site_url: site_url(state, headers),
        password_error: match &refused {
            Some((AccountForm::Password, message)) => Some(message.clone()),
            _ => None,
        },
        delete_error: match refused {
            Some((AccountForm::Delete, message)) => Some(message),
            _ => None,
        },
    }))
}

#[derive(Template)]
#[template(path = "upload.html", config = "../../web/askama.toml")]
struct UploadPage {
    nav: Nav,
    title: String,
    ladders: Vec<LadderOption>,
    /// The viewer's bots, each with the ladders of its newest version
    /// (`site.js` ticks them when the name is typed).
    my_bots: Vec<(String, String)>,
    name: String,
    max_mib: usize,
    /// Why the last upload was refused (the form shown again).
    error: Option<String>,
}

/// `?bot=` preselects the bot a new version is for.
#[derive(serde::Deserialize)]
pub struct UploadQuery {
    bot: Option<String>,
}

/// `GET /upload`: with `?bot=NAME` of one's own bot, its name is filled in
/// and its ladders ticked.
pub async fn upload(State(state): State<AppState>, viewer: Viewer, Query(query): Query<UploadQuery>) -> SiteResult {
    let name = query.bot.unwrap_or_default();
    upload_page(&state, &viewer, &name, None, None).await
}

/// The upload form for `viewer`: `name` filled in; `sent` ladders ticked, or
/// (`None`) the ladders of the viewer's bot called `name`; `error` shown.
pub(super) async fn upload_page(
    state: &AppState,
    viewer: &Viewer,
    name: &str,
    sent: Option<&[String]>,
    error: Option<String>,
) -> SiteResult {
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(viewer);
    };
    let db = &state.core.db;
    let mut my_bots = Vec::new();
    for bot in bots::owned_by(db, UserId(caller.user_id)).await? {
        let ladders = match bots::by_name(db, &bot.name).await? {
            Some(found) => bots::versions_with_ratings(db, found.id, found.owner_id, Some(found.owner_id))
                .await?
                .into_iter()
                .next()
                .map(|newest| newest.version.ladders)
                .unwrap_or_default(),
            None => Vec::new(),
        };
        my_bots.push((bot.name, ladders));
    }
    let ticked: Vec<String> = match sent {
        Some(sent) => sent
            .iter()
            .map(|ladder| ladders::parse(ladder).map_or_else(|_| ladder.clone(), ladders::name))
            .collect(),
        None => my_bots
            .iter()
            .find(|(bot, _)| !name.is_empty() && bot.eq_ignore_ascii_case(name))
            .map(|(_, ladders)| ladders.clone())
            .unwrap_or_default(),
    };
    let ticked: Vec<&str> = ticked.iter().map(String::as_str).collect();
    Ok(render(&UploadPage {
        nav: viewer.nav("upload"),
        title: "Upload a bot".into(),
        ladders: ladder_options(&ticked),
        my_bots: my_bots
            .into_iter()
            .map(|(bot, ladders)| (bot, ladders.join(" ")))
            .collect(),
        name: name.to_owned(),
        max_mib: state.core.max_module_bytes().div_ceil(1024 * 1024),
        error,
    }))
}

#[derive(Template)]
#[template(path = "upload_remote.html", config = "../../web/askama.toml")]
struct RemoteUploadPage {
    nav: Nav,
    title: String,
    ladders: Vec<LadderOption>,
    name: String,
    url: String,
    /// Why the last registration was refused (the form shown again).
    error: Option<String>,
    /// The agent bot's form (no URL; Othello ladders only).
    agent: bool,
}

/// `GET /upload/remote`: the form that registers a remote bot.
pub async fn upload_remote(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    remote_upload_page(&state, &viewer, "", "", &[], None).await
}

/// `GET /upload/agent`: the form that registers an agent bot.
pub async fn upload_agent(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    remote_upload_page(&state, &viewer, "", AGENT, &[], None).await
}

/// What [`remote_upload_page`] takes for `url` to show the agent bot's
/// form.
pub(super) const AGENT: &str = "agent:";

/// The remote bot form for `viewer`, filled in as sent, with `error`; the
/// agent bot's form when `url` is [`AGENT`].
pub(super) async fn remote_upload_page(
    _state: &AppState,
    viewer: &Viewer,
    name: &str,
    url: &str,
    sent: &[String],
    error: Option<String>,
) -> SiteResult {
    if viewer.caller.is_none() {
        return sign_in_first(viewer);
    }
    let ticked: Vec<String> = sent
        .iter()
        .filter_map(|ladder| {
            ladders::parse_any(ladder)
                .ok()
                .map(|(variant, _)| ladders::name(variant))
        })
        .collect();
    let ticked: Vec<&str> = ticked.iter().map(String::as_str).collect();
    let agent = url == AGENT;
    let mut ladders = ladder_options(&ticked);
    if agent {
        ladders.retain(|ladder| ladder.name.starts_with("othello:"));
    }
    Ok(render(&RemoteUploadPage {
        nav: viewer.nav("upload"),
        title: if agent {
            "Register an agent bot".into()
        } else {
            "Register a remote bot".into()
        },
        ladders,
        name: name.to_owned(),
        url: if agent { String::new() } else { url.to_owned() },
        error,
        agent,
    }))
}

#[derive(Template)]
#[template(path = "challenge.html", config = "../../web/askama.toml")]
struct ChallengePage {
    nav: Nav,
    title: String,
    /// The viewer's bots that can play, each with the ladders it plays
    /// (space-separated, for `site.js` to narrow the ladder list).
    my_bots: Vec<(String, String)>,
    /// The bot chosen before (the form shown again).
    bot: String,
    opponents: Vec<String>,
    opponent: String,
    ladders: Vec<LadderOption>,
    /// The longer time controls challenges may ask for, with the ladders
    /// that offer each.
    times: Vec<(String, String)>,
    /// The time control chosen (`ladder` or `MOVE_MS/BANK_MS`).
    time: String,
    /// Why the last challenge was refused (the form shown again).
    error: Option<String>,
}

/// Every longer time control a challenge may ask for, as `MOVE_MS/BANK_MS`
/// and the ladders that offer it.
fn longer_time_controls() -> Vec<(String, String)> {
    let mut times: Vec<(arbiter_games::Budget, Vec<String>)> = Vec::new();
    for variant in arbiter_games::Variant::ALL {
        for &budget in variant.longer_budgets() {
            match times.iter_mut().find(|(b, _)| *b == budget) {
                Some((_, games)) if !games.contains(&variant.game().to_string()) => {
                    games.push(variant.game().to_string())
                }
                Some(_) => {}
                None => times.push((budget, vec![variant.game().to_string()])),
            }
        }
    }
    times.sort_by_key(|(b, _)| (b.turn_ms, b.bank_ms));
    times
        .into_iter()
        .map(|(budget, games)| (budget.to_string(), games.join(", ")))
        .collect()
}

/// `?opponent=&ladder=` prefill the challenge form.
#[derive(serde::Deserialize)]
pub struct ChallengeQuery {
    opponent: Option<String>,
    ladder: Option<String>,
}

/// `GET /challenge`.
pub async fn challenge(
    State(state): State<AppState>,
    viewer: Viewer,
    Query(query): Query<ChallengeQuery>,
) -> SiteResult {
    let request = ChallengeRequest {
        bot: String::new(),
        opponent: query.opponent.unwrap_or_default(),
        ladder: query.ladder.unwrap_or_else(|| "othello:std".into()),
        time: None,
    };
    challenge_page(&state, &viewer, &request, None).await
}

/// The challenge form for `viewer`, filled in as `request` (an empty `bot`
/// picks none), with `error` shown.
pub(super) async fn challenge_page(
    state: &AppState,
    viewer: &Viewer,
    request: &ChallengeRequest,
    error: Option<String>,
) -> SiteResult {
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(viewer);
    };
    let challengers = challenges::challengers(&state.core, caller.user_id).await?;
    // Every ladder one of the bots plays, fuel-clock ones first; the form
    // picks the chosen bot's (site.js narrows the list to them).
    let wanted = arbiter_ladder::ladders::canonical(&request.ladder).unwrap_or_default();
    let ladders = arbiter_ladder::ladders::all_names()
        .into_iter()
        .filter(|ladder| challengers.iter().any(|bot| bot.ladders.contains(ladder)))
        .map(|name| LadderOption {
            title: view::ladder_title(&name),
            selected: name == wanted,
            name,
        })
        .collect();
    Ok(render(&ChallengePage {
        nav: viewer.nav("challenge"),
        title: "Challenge a bot".into(),
        my_bots: challengers
            .into_iter()
            .map(|bot| (bot.name, bot.ladders.join(" ")))
            .collect(),
        bot: request.bot.clone(),
        opponents: bots::active_names(&state.core.db).await?,
        opponent: request.opponent.clone(),
        ladders,
        time: request.time.clone().unwrap_or_else(|| "ladder".into()),
        times: longer_time_controls(),
        error,
    }))
}

#[cfg(test)]
mod tests {
    use super::safe_next;

    #[test]
    fn sign_in_returns_to_local_paths_only() {
        assert_eq!(safe_next(Some("/upload")), "/upload");
        assert_eq!(safe_next(Some("//evil.example/")), "/account");
        assert_eq!(safe_next(Some("https://evil.example/")), "/account");
        assert_eq!(safe_next(Some("/\\evil.example")), "/account");
        assert_eq!(safe_next(None), "/account");
    }
}
