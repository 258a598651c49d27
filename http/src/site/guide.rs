//! The "write a bot" guide: a static page, but for where the tools come
//! from — the download links of this server's `arbiter` executable (with
//! its version, platform, size and SHA-256) and of each kit's archive.

use super::downloads::{self, EXECUTABLE_NAME, VERSION};
use super::{Nav, SiteResult, Viewer, render};
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
#[template(path = "guide.html", config = "../web/askama.toml")]
struct GuidePage {
    nav: Nav,
    title: String,
    version: &'static str,
    platform: String,
    executable_name: &'static str,
    executable: Option<ExecutableLink>,
    kits: Vec<KitLink>,
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
    Ok(render(&GuidePage {
        nav: viewer.nav("guide"),
        title: "Write a bot".into(),
        version: VERSION,
        platform: downloads::platform(),
        executable_name: EXECUTABLE_NAME,
        executable,
        kits,
    }))
}
