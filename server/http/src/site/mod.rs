//! The web site: server-rendered pages with a little plain JavaScript.
//!
//! Pages are askama templates in `web/templates` (HTML-escaped by default:
//! nothing here marks user text as safe), compiled into the binary together
//! with the CSS and JavaScript of `web/static` (`assets`), so the binary is
//! the whole site and there is no front-end build step.
//!
//! | path | page |
//! |---|---|
//! | `/` | ladders, top bots, live and recent matches |
//! | `/ladders/{ladder}` | leaderboard (refreshes itself), recent matches |
//! | `/bots/{name}` | versions, rating history, recent matches, head-to-head |
//! | `/bots/{name}/play` | play the bot yourself: game, side, clock (guests too) |
//! | `/play/{id}` | a game against a bot: the board as a form, live with `play.js`; `/state` as JSON, `/replay.json` |
//! | `/matches` | every match, filtered (ladder, bot, user, result, finish reason, days) and paged by cursor |
//! | `/users/{name}` | a user's bots (ratings as the ladders show them), their bots' matches, their games against bots |
//! | `/bots/{name}/logs` | the bot's stderr in its matches, a page at a time, for its owner |
//! | `/replays/open` | a downloaded replay file, read in the browser, in the match pages' viewer |
//! | `/matches/{id}` | result, games, fuel per move, replay viewer, downloads, owner logs; live while running |
//! | `/upload` | upload form, then the check's progress and verdict |
//! | `/account` | the user's bots, API token (shown once), password, deletion, sign out |
//! | `/signup`, `/signin` | forms |
//! | `/challenge` | challenge form |
//! | `/tournaments`, `/tournaments/{id}` | list and creation, crosstable |
//! | `/guide` | how to write a bot; where the tools come from |
//! | `/download/arbiter`, `/download/arbiter.sha256` | this server's own executable and its digest |
//! | `/download/kits/{lang}.tar.gz` | a bot kit |
//! | `/api/reference` | the JSON API's reference, rendered from its OpenAPI document |
//! | `/static/{file}` | embedded CSS, JavaScript and icon; linked as `/static/NAME.DIGEST.EXT`, cached as immutable |
//! | `/robots.txt` | what crawlers may fetch |
//!
//! Forms that change state post to the site itself (`forms`: a hidden
//! CSRF field, then `303 See Other`), so they work with JavaScript off;
//! when `site.js` runs it sends them to the JSON API instead, with the
//! session's CSRF token in the `X-CSRF-Token` header.
//!
//! # Guarantees
//!
//! - User-supplied text (bot, user and tournament names, rejection reasons,
//!   stderr) is HTML-escaped by askama, and the scripts only ever put data
//!   into the page with `textContent`. Every page is also served with a
//!   Content-Security-Policy that allows scripts and styles from the site's
//!   own `/static` files only, so an escaping mistake cannot run a script.
//! - A bot's stderr is rendered only for its owner.

mod account;
mod assets;
mod bots;
mod chart;
pub mod downloads;
mod forms;
mod guide;
mod home;
mod match_list;
mod match_rows;
mod matches;
mod play;
mod reference;
mod replay_open;
mod robots;
mod tournaments;
mod users;
mod view;

use crate::error::ApiError;
use crate::server::AppState;
use arbiter_ladder::auth::{Caller, Via};
use arbiter_ladder::error::Error;
use askama::Template;
use axum::Router;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use std::convert::Infallible;
use std::sync::{Arc, Mutex};

/// The site's routes (everything outside `/api`), with an HTML 404 page as
/// the fallback; an upload form may be `upload_limit` bytes.
pub fn router(upload_limit: usize) -> Router<AppState> {
    Router::new()
        .route("/", get(home::home))
        .route("/ladders/{ladder}", get(home::ladder))
        .route("/bots/{name}", get(bots::bot))
        .route("/bots/{name}/photo.png", get(bots::photo))
        .route(
            "/bots/{name}/profile",
            post(forms::profile).layer(axum::extract::DefaultBodyLimit::max(
                arbiter_ladder::profile::MAX_PHOTO_BYTES + 64 * 1024,
            )),
        )
        .route("/bots/{name}/token", post(forms::issue_bot_token))
        .route("/bots/{name}/play", get(play::new_game).post(play::start))
        .route("/play/{id}", get(play::page).post(play::play_move))
        .route("/play/{id}/state", get(play::state))
        .route("/play/{id}/replay.json", get(play::replay))
        .route("/play/{id}/log", get(play::log))
        .route("/games", get(play::games))
        .route("/matches", get(match_list::list))
        .route("/matches/{id}", get(matches::page))
        .route("/users/{name}", get(users::user))
        .route("/replays/open", get(replay_open::page))
        .route("/bots/{name}/logs", get(bots::logs))
        .route(
            "/upload",
            get(account::upload)
                .post(forms::upload)
                .layer(axum::extract::DefaultBodyLimit::max(upload_limit)),
        )
        .route("/upload/remote", get(account::upload_remote))
        .route("/upload/agent", get(account::upload_agent))
        .route("/account", get(account::account))
        .route("/account/token", post(forms::issue_token))
        .route("/account/password", post(forms::change_password))
        .route("/account/delete", post(forms::delete_account))
        .route("/bots/{name}/retire", post(forms::retire))
        .route("/bots/{name}/unretire", post(forms::unretire))
        .route("/signup", get(account::signup).post(forms::sign_up))
        .route("/signin", get(account::signin).post(forms::sign_in))
        .route("/signout", post(forms::sign_out))
        .route("/challenge", get(account::challenge).post(forms::challenge))
        .route("/tournaments", get(tournaments::list).post(forms::tournament))
        .route("/tournaments/{id}", get(tournaments::page))
        .route("/guide", get(guide::guide))
        .route("/download/arbiter", get(downloads::arbiter))
        .route("/download/arbiter.sha256", get(downloads::arbiter_sha256))
        .route("/download/kits/{file}", get(downloads::kit))
        .route("/api/reference", get(reference::reference))
        .route("/static/{file}", get(assets::serve))
        .route("/robots.txt", get(robots::robots))
        .fallback(not_found)
        .layer(axum::middleware::from_fn(error_pages_know_the_viewer))
        .layer(axum::middleware::from_fn(security_headers))
}

/// Where the [`Viewer`] extractor leaves who is looking, so an error page
/// made after it (a [`SiteError`] knows no request) can show the same
/// signed-in header as every other page.
#[derive(Clone, Default)]
struct ViewerSlot(Arc<Mutex<Option<Viewer>>>);

/// What an error page says, kept on its response so
/// [`error_pages_know_the_viewer`] can render it again for the viewer.
#[derive(Clone, Debug)]
struct ErrorPageText {
    title: String,
    message: String,
    back: Option<String>,
}

/// Renders a [`SiteError`]'s page again with the header of the viewer the
/// handler saw (signed in or not), keeping its status and headers.
async fn error_pages_know_the_viewer(mut request: Request, next: Next) -> Response {
    let slot = ViewerSlot::default();
    request.extensions_mut().insert(slot.clone());
    let mut response = next.run(request).await;
    let Some(text) = response.extensions_mut().remove::<ErrorPageText>() else {
        return response;
    };
    let viewer = slot.0.lock().ok().and_then(|mut seen| seen.take());
    let Some(viewer) = viewer.filter(|v| v.caller.is_some()) else {
        return response;
    };
    let status = response.status();
    let page = ErrorPage {
        nav: viewer.nav(""),
        title: text.title,
        status: status.as_u16(),
        message: text.message,
        back: text.back,
    };
    let (mut parts, _) = response.into_parts();
    let (rendered, body) = render(&page).into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    if let Some(kind) = rendered.headers.get(header::CONTENT_TYPE) {
        parts.headers.insert(header::CONTENT_TYPE, kind.clone());
    }
    Response::from_parts(parts, body)
}

/// The policy every page is served with: scripts, styles and requests go
/// to this site only; no inline script or style, no framing, no plugins.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; style-src 'self'; \
     img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; \
     form-action 'self'";

/// Adds the security headers to every site answer.
async fn security_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("same-origin"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// Who is looking at a page: signed in (with the session's CSRF token) or
/// not. Bad credentials read as anonymous rather than failing the page.
#[derive(Clone, Debug, Default)]
pub struct Viewer {
    /// The signed-in caller, if any.
    pub caller: Option<Caller>,
    /// The request path, for "sign in and come back" links.
    pub path: String,
}

impl FromRequestParts<AppState> for Viewer {
    type Rejection = Infallible;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Viewer, Infallible> {
        let caller = match crate::extract::caller(parts, state).await {
            Ok(caller) => caller,
            Err(error) => {
                // Storage unavailable: the page's own 503 is logged once per outage.
                if matches!(error, ApiError(Error::Internal(_))) {
                    tracing::warn!(%error, "cannot tell who is viewing a page");
                }
                None
            }
        };
        let path = parts
            .uri
            .path_and_query()
            .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
        let viewer = Viewer { caller, path };
        if let Some(slot) = parts.extensions.get::<ViewerSlot>()
            && let Ok(mut seen) = slot.0.lock()
        {
            *seen = Some(viewer.clone());
        }
        Ok(viewer)
    }
}

impl Viewer {
    /// The signed-in user's id.
    pub fn user_id(&self) -> Option<i64> {
        self.caller.as_ref().map(|c| c.user_id)
    }

    /// What the page layout shows about the viewer.
    pub fn nav(&self, section: &'static str) -> Nav {
        let (user, csrf) = match &self.caller {
            Some(caller) => (
                Some(caller.name.clone()),
                match &caller.via {
                    Via::Session { csrf } => csrf.clone(),
                    Via::Token => String::new(),
                },
            ),
            None => (None, String::new()),
        };
        Nav {
            user,
            csrf,
            section,
            next: self.path.clone(),
            saved: account::saved_key(&self.path).and_then(account::saved_message),
        }
    }
}

/// What the layout (`base.html`) needs on every page.
#[derive(Clone, Debug)]
pub struct Nav {
    /// The signed-in user's name.
    pub user: Option<String>,
    /// The session's CSRF token (empty when signed out), for `site.js`.
    pub csrf: String,
    /// The highlighted menu entry.
    pub section: &'static str,
    /// The current path, where sign-in returns to.
    pub next: String,
    /// The confirmation of a form just saved (`?saved=KEY`), shown at the
    /// top of the page and announced (`role=status`).
    pub saved: Option<&'static str>,
}

impl Nav {
    /// The URL of the embedded file `name` (`style.css`), with its digest
    /// in the file name so that it can be cached for good (see
    /// [`assets::url`]).
    pub fn asset(&self, name: &str) -> String {
        assets::url(name)
    }
}

/// A page that could not be shown: an HTML error page with a status (and,
/// on the site's routes, the header of whoever is signed in).
#[derive(Debug)]
pub struct SiteError {
    status: StatusCode,
    message: String,
    /// The page to go back to (a form), if not the ladders.
    back: Option<String>,
    /// Why storage is unavailable, for a 503 that
    /// [`crate::middleware::count_request`] logs once per outage.
    unavailable: Option<crate::error::UnavailableCause>,
}

impl SiteError {
    /// A 404 naming what is missing.
    pub fn not_found(what: impl std::fmt::Display) -> SiteError {
        SiteError {
            status: StatusCode::NOT_FOUND,
            message: format!("{what} not found"),
            back: None,
            unavailable: None,
        }
    }

    /// An error with a status and a message a person can act on.
    pub fn new(status: StatusCode, message: impl Into<String>) -> SiteError {
        SiteError {
            status,
            message: message.into(),
            back: None,
            unavailable: None,
        }
    }

    /// The HTTP status of the page.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// What the page says.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The same error, whose page links back to `path` (the form it came
    /// from).
    pub fn back_to(mut self, path: &str) -> SiteError {
        self.back = Some(path.to_owned());
        self
    }
}

impl From<ApiError> for SiteError {
    fn from(error: ApiError) -> SiteError {
        let status = error.status();
        // Storage unavailable: logged once per outage, as for the API.
        let unavailable = match &error.0 {
            Error::Unavailable(cause) => Some(crate::error::UnavailableCause(cause.to_string())),
            _ => None,
        };
        if status.is_server_error() && unavailable.is_none() {
            // The cause goes to the log; the page shows the generic message.
            tracing::error!(%status, cause = ?error, "a page failed");
        }
        SiteError {
            status,
            message: error.to_string(),
            back: None,
            unavailable,
        }
    }
}

impl From<Error> for SiteError {
    fn from(error: Error) -> SiteError {
        SiteError::from(ApiError(error))
    }
}

#[derive(Template)]
#[template(path = "error.html", config = "../../web/askama.toml")]
struct ErrorPage {
    nav: Nav,
    title: String,
    status: u16,
    message: String,
    back: Option<String>,
}

impl IntoResponse for SiteError {
    fn into_response(self) -> Response {
        let text = ErrorPageText {
            title: self.status.canonical_reason().unwrap_or("Error").to_owned(),
            message: self.message,
            back: self.back,
        };
        let page = ErrorPage {
            nav: Viewer::default().nav(""),
            title: text.title.clone(),
            status: self.status.as_u16(),
            message: text.message.clone(),
            back: text.back.clone(),
        };
        let mut response = (self.status, render(&page)).into_response();
        response.extensions_mut().insert(text);
        if let Some(cause) = self.unavailable {
            response.extensions_mut().insert(cause);
        }
        response
    }
}

/// What page handlers return.
pub type SiteResult = Result<Response, SiteError>;

/// Renders a template as an HTML answer (500 if it cannot be rendered).
pub fn render<T: Template>(template: &T) -> Response {
    match template.render() {
        Ok(html) => Html(html).into_response(),
        Err(error) => {
            tracing::error!(%error, "cannot render a page");
            (StatusCode::INTERNAL_SERVER_ERROR, "internal error").into_response()
        }
    }
}

/// The HTML 404 page for paths nothing else answers.
async fn not_found(viewer: Viewer) -> Response {
    let page = ErrorPage {
        nav: viewer.nav(""),
        title: "Not found".into(),
        status: 404,
        message: format!("there is no page at {}", viewer.path),
        back: None,
    };
    (StatusCode::NOT_FOUND, render(&page)).into_response()
}
