//! The "write a bot" guide: a static page, but for where the tools come
//! from — the download links of this server's `arbiter` executable (with
//! its version, platform, size and SHA-256) and of each kit's archive.

use super::downloads::{self, EXECUTABLE_NAME, VERSION};
use super::{Nav, SiteResult, Viewer, render};
use arbiter_games::{Scoring, Variant};
use askama::Template;

/// A kit offered on the guide.
struct KitLink {
    /// `c`, `zig`, … as `arbiter new` takes it.
    language: &'static str,
    /// `/download/kits/LANG.tar.gz`.
    href: String,
}

/// The executable offered on the guide, when it could be read.
struct ExecutableLink {
    sha256: String,
    megabytes: String,
}

#[derive(Template)]
#[template(path = "guide.html", config = "../../web/askama.toml")]
struct GuidePage {
    nav: Nav,
    title: String,
    version: &'static str,
    platform: String,
    executable_name: &'static str,
    executable: Option<ExecutableLink>,
    kits: Vec<KitLink>,
    /// The Othello family's modes, from the games' catalogue.
    othello_modes: Vec<&'static str>,
    /// Ladders the examples name: two Othello modes other than the default.
    play_example: String,
    check_example: String,
    /// The Othello modes where fewer discs win.
    lower_wins: Vec<&'static str>,
}

/// `GET /guide`.
pub async fn guide(viewer: Viewer) -> SiteResult {
    let executable = downloads::executable().await.ok().map(|e| ExecutableLink {
        sha256: e.sha256.clone(),
        megabytes: format!("{:.1}", e.bytes.len() as f64 / 1_000_000.0),
    });
    let kits = arbiter_kits::kits()
        .iter()
        .map(|kit| KitLink {
            language: kit.language(),
            href: format!("/download/kits/{}", downloads::kit_file(kit.language())),
        })
        .collect();
    let othello: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|v| matches!(v, Variant::Othello(_)))
        .collect();
    let example = |from_end: usize| {
        othello
            .iter()
            .rev()
            .nth(from_end)
            .map_or_else(String::new, Variant::to_string)
    };
    Ok(render(&GuidePage {
        nav: viewer.nav("guide"),
        title: "Write a bot".into(),
        version: VERSION,
        platform: downloads::platform(),
        executable_name: EXECUTABLE_NAME,
        executable,
        kits,
        othello_modes: othello.iter().map(|v| v.mode()).collect(),
        play_example: example(1),
        check_example: example(0),
        lower_wins: othello
            .iter()
            .filter(|v| v.scoring() == Scoring::LowerWins)
            .map(|v| v.mode())
            .collect(),
    }))
}
