//! `/replays/open`: a downloaded replay file (a match page's or a people
//! game's "Download replay", or `arbiter play --out`) shown in the same
//! viewer as the match pages. The file is read in the browser by
//! `replay_open.js` and never sent to the server; the page itself only
//! carries the games' catalogue the viewer draws the boards from.

use super::{Nav, SiteResult, Viewer, render};
use askama::Template;

#[derive(Template)]
#[template(path = "replay_open.html", config = "../../web/askama.toml")]
struct ReplayOpenPage {
    nav: Nav,
    title: String,
    /// The games' catalogue as JSON (`arbiter games --json`), safe inside
    /// a `<script type="application/json">`.
    games_json: String,
}

/// `GET /replays/open`: the file input and the (empty) viewer.
pub async fn page(viewer: Viewer) -> SiteResult {
    let games_json = serde_json::to_string(&arbiter_games::catalogue())
        .unwrap_or_else(|_| "[]".into())
        .replace("</", "<\\/");
    Ok(render(&ReplayOpenPage {
        nav: viewer.nav(""),
        title: "Open a replay file".into(),
        games_json,
    }))
}
