//! `GET /robots.txt`: crawlers may read the public pages (ladders, bots,
//! matches, tournaments, the guide, the API reference); not the JSON API,
//! the downloads, the forms, games against bots or the metrics.

use axum::http::header;
use axum::response::{IntoResponse, Response};

/// The file. `Allow: /api/reference` wins over `Disallow: /api/` as the
/// longer match (RFC 9309).
pub const ROBOTS_TXT: &str = "\
# Arbiter: crawl the public pages; not the API, downloads, forms, games against bots or their live state.
User-agent: *
Allow: /api/reference
Disallow: /api/
Disallow: /download/
Disallow: /signin
Disallow: /signup
Disallow: /signout
Disallow: /account
Disallow: /upload
Disallow: /challenge
Disallow: /bots/*/play
Disallow: /bots/*/profile
Disallow: /bots/*/token
Disallow: /play/
Disallow: /metrics
";

/// `GET /robots.txt`, cached for a day.
pub async fn robots() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
        ],
        ROBOTS_TXT,
    )
        .into_response()
}
