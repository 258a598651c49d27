//! The "write a bot" guide: a static page.

use super::{Nav, SiteResult, Viewer, render};
use askama::Template;

#[derive(Template)]
#[template(path = "guide.html", config = "../web/askama.toml")]
struct GuidePage {
    nav: Nav,
    title: String,
}

/// `GET /guide`.
pub async fn guide(viewer: Viewer) -> SiteResult {
    Ok(render(&GuidePage {
        nav: viewer.nav("guide"),
        title: "Write a bot".into(),
    }))
}
