//! The site's static files, compiled into the binary from `web/static`.

use axum::extract::Path;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use std::sync::OnceLock;

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    bytes: &'static [u8],
}

/// Every file served under `/static/`.
const ASSETS: &[Asset] = &[
    Asset {
        name: "style.css",
        content_type: "text/css; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/style.css"),
    },
    Asset {
        name: "site.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/site.js"),
    },
    Asset {
        name: "replay.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/replay.js"),
    },
    Asset {
        name: "othello.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/othello.js"),
    },
    Asset {
        name: "skirmish.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/skirmish.js"),
    },
    Asset {
        name: "replay_open.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/replay_open.js"),
    },
    Asset {
        name: "play.js",
        content_type: "text/javascript; charset=utf-8",
        bytes: include_bytes!("../../../../web/static/play.js"),
    },
    Asset {
        name: "favicon.svg",
        content_type: "image/svg+xml",
        bytes: include_bytes!("../../../../web/static/favicon.svg"),
    },
];

/// How a file served with its digest in its name is cached: for a year,
/// never revalidated (a changed file has another name).
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// How a file asked for by its plain name (or an old digest) is cached:
/// revalidated on every use, against its [`header::ETAG`].
pub const REVALIDATED: &str = "no-cache";

/// How many hex digits of a file's SHA-256 its hashed name carries.
const DIGEST_DIGITS: usize = 12;

/// Each asset's digest ([`DIGEST_DIGITS`] hex digits of its SHA-256),
/// in the order of [`ASSETS`], computed once.
fn digests() -> &'static [String] {
    static DIGESTS: OnceLock<Vec<String>> = OnceLock::new();
    DIGESTS.get_or_init(|| {
        ASSETS
            .iter()
            .map(|asset| arbiter_ladder::blobs::sha256_hex(asset.bytes)[..DIGEST_DIGITS].to_owned())
            .collect()
    })
}

/// `name` with `digest` before its extension: `style.css` →
/// `style.3f2a9c1b04de.css`.
fn hashed_name(name: &str, digest: &str) -> String {
    match name.rsplit_once('.') {
        Some((stem, extension)) => format!("{stem}.{digest}.{extension}"),
        None => format!("{name}.{digest}"),
    }
}

/// The URL pages link the asset `name` (`style.css`) by: its digest in the
/// file name, `/static/style.3f2a9c1b04de.css`, served as [`IMMUTABLE`].
/// A name that is no asset gets its plain path (a 404).
pub fn url(name: &str) -> String {
    match ASSETS.iter().position(|asset| asset.name == name) {
        Some(i) => format!("/static/{}", hashed_name(name, &digests()[i])),
        None => format!("/static/{name}"),
    }
}

/// The asset `file` names, and whether it names it with its current digest:
/// `style.css` (plain), `style.3f2a9c1b04de.css` (current) or
/// `style.000000000000.css` (an old digest, or none that ever was).
fn find(file: &str) -> Option<(usize, bool)> {
    if let Some(i) = ASSETS.iter().position(|asset| asset.name == file) {
        return Some((i, false));
    }
    let (rest, extension) = file.rsplit_once('.')?;
    let (stem, digest) = rest.rsplit_once('.')?;
    if digest.len() != DIGEST_DIGITS || !digest.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return None;
    }
    let i = ASSETS.iter().position(|asset| {
        asset
            .name
            .strip_prefix(stem)
            .and_then(|tail| tail.strip_prefix('.'))
            .is_some_and(|tail| tail == extension)
    })?;
    Some((i, digests()[i] == digest))
}

/// `GET /static/{file}`: an embedded file. By its hashed name (see [`url`])
/// it is cached as [`IMMUTABLE`]; by its plain name or an outdated digest
/// the current file is sent, [`REVALIDATED`], with a weak `ETag` (a
/// matching `If-None-Match` gets `304 Not Modified`).
pub async fn serve(Path(file): Path<String>, headers: HeaderMap) -> Response {
    let Some((i, current)) = find(&file) else {
        return (StatusCode::NOT_FOUND, "no such file").into_response();
    };
    let asset = &ASSETS[i];
    let etag = format!("W/\"{}\"", digests()[i]);
    let cache = if current { IMMUTABLE } else { REVALIDATED };
    let answer_headers = [
        (header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type)),
        (header::CACHE_CONTROL, HeaderValue::from_static(cache)),
        (
            header::ETAG,
            HeaderValue::from_str(&etag).unwrap_or_else(|_| HeaderValue::from_static("W/\"\"")),
        ),
    ];
    let seen = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|tags| tags.split(',').any(|tag| tag.trim() == etag || tag.trim() == "*"));
    if seen {
        return (StatusCode::NOT_MODIFIED, answer_headers).into_response();
    }
    (answer_headers, asset.bytes).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_names_find_their_file_and_say_if_current() {
        let digest = &digests()[0];
        assert_eq!(ASSETS[0].name, "style.css");
        assert_eq!(url("style.css"), format!("/static/style.{digest}.css"));
        assert_eq!(find("style.css"), Some((0, false)));
        assert_eq!(find(&format!("style.{digest}.css")), Some((0, true)));
        assert_eq!(find("style.0123456789ab.css"), Some((0, false)));
        assert_eq!(find("style.0123.css"), None, "not a digest");
        assert_eq!(find("style.0123456789ab.js"), None, "no such file");
        assert_eq!(find("nothing.js"), None);
        assert_eq!(url("nothing.js"), "/static/nothing.js");
    }

    /// Every `nav.asset("NAME")` in the templates names an embedded file.
    #[test]
    fn templates_link_only_embedded_files() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/templates");
        let mut linked = 0;
        for entry in std::fs::read_dir(&folder).expect("the templates") {
            let path = entry.expect("an entry").path();
            let text = std::fs::read_to_string(&path).expect("a template");
            assert!(
                !text.contains("/static/"),
                "{}: link files with nav.asset(\"NAME\")",
                path.display()
            );
            for piece in text.split("nav.asset(\"").skip(1) {
                let name = piece.split('"').next().unwrap_or_default();
                assert!(
                    ASSETS.iter().any(|asset| asset.name == name),
                    "{}: {name} is not embedded",
                    path.display()
                );
                linked += 1;
            }
        }
        assert!(linked >= 5, "the layout links the CSS, scripts and icon");
    }
}
