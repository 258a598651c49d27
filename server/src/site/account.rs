//! Pages with forms: sign-up, sign-in, account (API token, sign-out),
//! upload and challenge. The forms are sent to the JSON API by `site.js`.

use super::view::{self, When};
use super::{Nav, SiteResult, Viewer, data, render};
use crate::ladders;
use crate::server::AppState;
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
}

/// `GET /signup`.
pub async fn signup(viewer: Viewer, Query(query): Query<NextQuery>) -> SiteResult {
    Ok(render(&SignPage {
        nav: viewer.nav("signup"),
        title: "Sign up".into(),
        signup: true,
        next: safe_next(query.next.as_deref()),
    }))
}

/// `GET /signin`.
pub async fn signin(viewer: Viewer, Query(query): Query<NextQuery>) -> SiteResult {
    Ok(render(&SignPage {
        nav: viewer.nav("signin"),
        title: "Sign in".into(),
        signup: false,
        next: safe_next(query.next.as_deref()),
    }))
}

/// Sends a signed-out visitor to the sign-in page, then back.
fn sign_in_first(viewer: &Viewer) -> SiteResult {
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
}

/// `GET /account`.
pub async fn account(State(state): State<AppState>, viewer: Viewer) -> SiteResult {
    let Some(caller) = viewer.caller.clone() else {
        return sign_in_first(&viewer);
    };
    let created: i64 = sqlx::query_scalar("SELECT created_ms FROM users WHERE id = $1")
        .bind(caller.user_id)
        .fetch_one(&state.core.db.pool)
        .await?;
    let bots = data::bots_of(&state, caller.user_id)
        .await?
        .into_iter()
        .map(|(name, status, retired)| MyBot { name, status, retired })
        .collect();
    Ok(render(&AccountPage {
        nav: viewer.nav("account"),
        title: "Your account".into(),
        name: caller.name,
        since: When::at(created),
        bots,
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
    let my_bots: Vec<String> = data::bots_of(&state, caller.user_id)
        .await?
        .into_iter()
        .map(|b| b.0)
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
    let my_bots: Vec<String> = data::bots_of(&state, caller.user_id)
        .await?
        .into_iter()
        .filter(|(_, status, retired)| status == "active" && !retired)
        .map(|b| b.0)
        .collect();
    let ladder = query.ladder.unwrap_or_else(|| "othello:std".into());
    Ok(render(&ChallengePage {
        nav: viewer.nav("challenge"),
        title: "Challenge a bot".into(),
        my_bots,
        opponents: data::active_bot_names(&state).await?,
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
