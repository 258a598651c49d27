//! The site's static files, compiled into the binary from `web/static`.

use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
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

/// A short digest of all assets: pages link `/static/x?v=VERSION`, so a new
/// build's files are never mixed with cached old ones.
pub fn version() -> &'static str {
    static VERSION: OnceLock<String> = OnceLock::new();
    VERSION.get_or_init(|| {
        let mut all = Vec::new();
        for asset in ASSETS {
            all.extend_from_slice(asset.bytes);
        }
        arbiter_ladder::blobs::sha256_hex(&all)[..12].to_owned()
    })
}

/// `GET /static/{file}`.
pub async fn serve(Path(file): Path<String>) -> Response {
    match ASSETS.iter().find(|asset| asset.name == file) {
        Some(asset) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(asset.content_type)),
                (header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=86400")),
            ],
            asset.bytes,
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "no such file").into_response(),
    }
}
