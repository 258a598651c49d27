//! Pages with forms: sign-up, sign-in, account (API token, sign-out),
//! upload and challenge. Each form posts to the site itself ([`super::forms`])
//! and works without JavaScript; `site.js`, when it runs, sends it to the
//! JSON API instead and stays on the page.

use super::view::{self, When};
use super::{Nav, SiteResult, Viewer, render};
use crate::server::AppState;
use arbiter_ladder::bots;
use arbiter_ladder::ladders;
use arbiter_ladder::model::UserId;
use askama::Template;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};

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
#[template(path = "signin.html", config = "../web/askama.toml")]
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
#[template(path = "account.html", config = "../web/askama.toml")]
struct AccountPage {
    nav: Nav,
    title: String,
    name: String,
    since: When,
    bots: Vec<MyBot>,
    /// A token just issued (shown once).
    token: Option<String>,
}

/// `GET /account`.
pub async fn account(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    account_page(&state, &viewer, None).await
}

/// The account page, showing `token` when one was just issued.
pub(super) async fn account_page(state: &AppState, viewer: &Viewer, token: Option<String>) -> SiteResult {
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
    }))
}

#[derive(Template)]
#[template(path = "upload.html", config = "../web/askama.toml")]
struct UploadPage {
    nav: Nav,
    title: String,
    ladders: Vec<LadderOption>,
    my_bots: Vec<String>,
    name: String,
    max_mib: usize,
}

/// `?bot=` preselects the bot a new version is for.
#[derive(serde::Deserialize)]
pub struct UploadQuery {
    bot: Option<String>,
}

/// `GET /upload`.
pub async fn upload(State(state): State<AppState>, viewer: Viewer, Query(query): Query<UploadQuery>) -> SiteResult {
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(&viewer);
    };
    let my_bots: Vec<String> = bots::owned_by(&state.core.db, UserId(caller.user_id))
        .await?
        .into_iter()
        .map(|bot| bot.name)
        .collect();
    Ok(render(&UploadPage {
        nav: viewer.nav("upload"),
        title: "Upload a bot".into(),
        ladders: ladder_options(&[]),
        my_bots,
        name: query.bot.unwrap_or_default(),
        max_mib: state.config.max_upload_bytes.div_ceil(1024 * 1024),
    }))
}

#[derive(Template)]
#[template(path = "challenge.html", config = "../web/askama.toml")]
struct ChallengePage {
    nav: Nav,
    title: String,
    my_bots: Vec<String>,
    opponents: Vec<String>,
    opponent: String,
    ladders: Vec<LadderOption>,
    /// The longer time controls challenges may ask for, with the ladders
    /// that offer each.
    times: Vec<(String, String)>,
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
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(&viewer);
    };
    let my_bots: Vec<String> = bots::owned_by(&state.core.db, UserId(caller.user_id))
        .await?
        .into_iter()
        .filter(|bot| bot.plays())
        .map(|bot| bot.name)
        .collect();
    let ladder = query.ladder.unwrap_or_else(|| "othello:std".into());
    Ok(render(&ChallengePage {
        nav: viewer.nav("challenge"),
        title: "Challenge a bot".into(),
        my_bots,
        opponents: bots::active_names(&state.core.db).await?,
        opponent: query.opponent.unwrap_or_default(),
        ladders: ladder_options(&[ladder.as_str()]),
        times: longer_time_controls(),
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
