//! Layers every request passes through: the cross-site guard, JSON
//! refusals under `/api`, `nosniff`, `Connection: close` after a refused
//! body, the body timeout, the request metrics and response compression.

use crate::error::ApiError;
use crate::server::AppState;
use arbiter_ladder::error::Error;
use arbiter_ladder::metrics::ABANDONED;
use axum::extract::{MatchedPath, Request, State};
use axum::http::header::{
    CONNECTION, CONTENT_LENGTH, CONTENT_TYPE, HOST, ORIGIN, TRANSFER_ENCODING, X_CONTENT_TYPE_OPTIONS,
};
use axum::http::{HeaderMap, HeaderValue, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// How long a request's body may stall (no new bytes) before the request
/// fails: a client cannot hold a connection open by never finishing a body.
/// (Headers have [`crate::server::HEADER_READ_TIMEOUT`] in all.)
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(15);

/// The most bytes a request's header fields may take together (each
/// counted as `name: value` and its line end): over it the answer is
/// `431 Request Header Fields Too Large` (a 500 KB header block still
/// reaches this check; the HTTP/1 connection drops megabytes before it).
pub const MAX_HEADER_BYTES: usize = 32 * 1024;

/// The size of `headers` as [`MAX_HEADER_BYTES`] counts it.
pub fn header_bytes(headers: &HeaderMap) -> usize {
    headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + 4)
        .sum()
}

/// Answers 431 to a request whose header fields together are over
/// [`MAX_HEADER_BYTES`], before anything else reads them (under `/api` the
/// answer is the JSON error envelope, by [`json_errors`]).
pub async fn refuse_large_headers(request: Request, next: Next) -> Response {
    let size = header_bytes(request.headers());
    if size > MAX_HEADER_BYTES {
        let message = format!(
            "the request's header fields take {size} bytes; the limit is {} KiB",
            MAX_HEADER_BYTES / 1024
        );
        return (axum::http::StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE, message).into_response();
    }
    next.run(request).await
}

/// Every answer, JSON included, is to be read as the type it says it is.
pub async fn no_sniffing(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    response
        .headers_mut()
        .insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    response
}

/// Answers smaller than this many bytes are sent as they are: compressing
/// them saves less than the `Content-Encoding` header costs.
pub const MIN_COMPRESSED_BYTES: u64 = 1024;

/// Compresses answers with brotli or gzip, as the request's
/// `Accept-Encoding` prefers, when [`Compressible`] says so and the body
/// is at least [`MIN_COMPRESSED_BYTES`] (or of unknown length). An answer
/// that already has a `Content-Encoding` is left as it is.
pub fn compression() -> tower_http::compression::CompressionLayer<Compressed> {
    use tower_http::compression::predicate::{Predicate, SizeAbove};
    tower_http::compression::CompressionLayer::new()
        .no_deflate()
        .no_zstd()
        .compress_when(SizeAbove::new(MIN_COMPRESSED_BYTES).and(Compressible))
}

/// What [`compression`] compresses: big enough and [`Compressible`].
pub type Compressed =
    tower_http::compression::predicate::And<tower_http::compression::predicate::SizeAbove, Compressible>;

/// Which answers may be compressed: not streams (server-sent events,
/// NDJSON such as the agent stream, anything marked `X-Accel-Buffering:
/// no`), which compression would hold back (the match frames' NDJSON is
/// compressed by its own route, whole); not downloads that are compressed
/// already or whose bytes a client checks against a digest and a
/// `Content-Length` (`application/octet-stream`, gzip, zstd, zip,
/// WebAssembly); not images other than SVG, audio or video.
#[derive(Clone, Copy, Debug, Default)]
pub struct Compressible;

impl Compressible {
    /// Whether an answer with these headers may be compressed.
    pub fn allows(headers: &HeaderMap) -> bool {
        if headers
            .get("x-accel-buffering")
            .is_some_and(|value| value.as_bytes().eq_ignore_ascii_case(b"no"))
        {
            return false;
        }
        let kind = headers
            .get(CONTENT_TYPE)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .trim()
            .to_ascii_lowercase();
        if kind.starts_with("image/svg+xml") {
            return true;
        }
        const NEVER: [&str; 12] = [
            "text/event-stream",
            "application/x-ndjson",
            "application/octet-stream",
            "application/gzip",
            "application/x-gzip",
            "application/zstd",
            "application/zip",
            "application/wasm",
            "application/grpc",
            "image/",
            "audio/",
            "video/",
        ];
        !NEVER.iter().any(|never| kind.starts_with(never))
    }
}

impl tower_http::compression::predicate::Predicate for Compressible {
    fn should_compress<B: axum::body::HttpBody>(&self, response: &axum::http::Response<B>) -> bool {
        Compressible::allows(response.headers())
    }
}

/// Answers a refused request that came with a body with `Connection: close`.
///
/// A refusal may come before the body is read (a cross-site post, an
/// upload announced as too large, a rate limit): the server then drops the
/// connection rather than read an unwanted body, and a client that sent the
/// next request on the same connection would see it fail instead of getting
/// an answer. With the header the client opens a new connection.
pub async fn close_after_refusing_a_body(request: Request, next: Next) -> Response {
    let headers = request.headers();
    let has_body = headers.contains_key(TRANSFER_ENCODING)
        || headers
            .get(CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok())
            .is_some_and(|length| length > 0);
    let mut response = next.run(request).await;
    if has_body && (response.status().is_client_error() || response.status().is_server_error()) {
        response
            .headers_mut()
            .insert(CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Makes every refusal under `/api` JSON: an answer of 400 or more whose
/// body is not `application/json` (axum's own rejections, a 405 from a
/// method router, a layer's 413) becomes `{"ok": false, "error": "..."}`
/// with the same status and headers, its text kept as the message when it
/// is short. Other paths (the site's pages) pass untouched.
pub async fn json_errors(request: Request, next: Next) -> Response {
    let is_api = request.uri().path().starts_with("/api/") || request.uri().path() == "/api";
    let response = next.run(request).await;
    let is_json = response
        .headers()
        .get(CONTENT_TYPE)
        .is_some_and(|value| value.as_bytes().starts_with(b"application/json"));
    if !is_api || is_json || response.status().as_u16() < 400 {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, 1024)
        .await
        .ok()
        .and_then(|bytes| String::from_utf8(bytes.to_vec()).ok())
        .map(|text| text.trim().to_owned())
        .filter(|text| !text.is_empty());
    let message = text.unwrap_or_else(|| {
        parts
            .status
            .canonical_reason()
            .unwrap_or("request refused")
            .to_ascii_lowercase()
    });
    let body = crate::api::Refusal::new(message).to_bytes();
    parts
        .headers
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    parts.headers.remove(axum::http::header::CONTENT_LENGTH);
    // The new body is plain: a compressed original's encoding must go too.
    parts.headers.remove(axum::http::header::CONTENT_ENCODING);
    Response::from_parts(parts, axum::body::Body::from(body))
}

/// Refuses state-changing requests that a browser marks as cross-site.
///
/// For POST, PUT, PATCH and DELETE without `Authorization: Bearer`: 403 when
/// `Sec-Fetch-Site: cross-site`, or when an `Origin` header names another
/// host and port than the `Host` header (an opaque `Origin: null` too).
/// Safe methods and API clients pass untouched.
pub async fn refuse_cross_site(request: Request, next: Next) -> Response {
    match cross_site_refusal(request.method(), request.headers(), request.uri()) {
        Some(why) => ApiError(Error::Forbidden(why.into())).into_response(),
        None => next.run(request).await,
    }
}

/// Why [`refuse_cross_site`] refuses a request, if it does.
fn cross_site_refusal(method: &Method, headers: &HeaderMap, uri: &axum::http::Uri) -> Option<&'static str> {
    if !matches!(*method, Method::POST | Method::PUT | Method::PATCH | Method::DELETE) {
        return None;
    }
    if crate::extract::bearer_token(headers).is_some_and(|token| token.is_ok()) {
        return None;
    }
    let fetch_site = headers.get("sec-fetch-site").map(HeaderValue::as_bytes);
    if fetch_site.is_some_and(|site| site.eq_ignore_ascii_case(b"cross-site")) {
        return Some("cross-site request refused: this browser request came from another site");
    }
    let origin = headers.get(ORIGIN)?;
    let host = headers
        .get(HOST)
        .and_then(|host| host.to_str().ok())
        .or_else(|| uri.authority().map(|authority| authority.as_str()));
    let same = match (origin.to_str().ok().and_then(origin_authority), host) {
        (Some((scheme, origin)), Some(host)) => origin == authority_with_port(scheme, host),
        _ => false,
    };
    (!same).then_some("cross-site request refused: the Origin header does not match this site")
}

/// `http://Example.com` → `("http", "example.com:80")`; `None` for
/// anything but an `http(s)` origin (`null`, paths, user info).
fn origin_authority(origin: &str) -> Option<(&str, String)> {
    let (scheme, rest) = origin.split_once("://")?;
    let scheme = if scheme.eq_ignore_ascii_case("https") {
        "https"
    } else if scheme.eq_ignore_ascii_case("http") {
        "http"
    } else {
        return None;
    };
    if rest.is_empty() || rest.contains(['/', '@', '?', '#']) {
        return None;
    }
    Some((scheme, authority_with_port(scheme, rest)))
}

/// `host[:port]` lowercased, with the scheme's default port made explicit.
fn authority_with_port(scheme: &str, authority: &str) -> String {
    let authority = authority.trim().to_ascii_lowercase();
    // A port follows the last colon, unless that colon is inside an IPv6 literal.
    let has_port = authority.rsplit_once(':').is_some_and(|(_, port)| !port.contains(']'));
    if has_port {
        authority
    } else {
        let port = if scheme == "https" { 443 } else { 80 };
        format!("{authority}:{port}")
    }
}

/// Counts every request by method, route pattern and status, and times it
/// (see [`counted`]); logs the first 503 of an outage (with its cause), API
/// and pages alike, and only that one: the others are counted in
/// `arbiter_http_requests_total{status="503"}`, and the database's watch
/// logs when it answers again.
pub async fn count_request(State(state): State<AppState>, request: Request, next: Next) -> Response {
    let response = counted(&state.core.metrics, request, next).await;
    // Only a request refused for want of storage: a readiness probe's 503
    // says why in its body and is not an outage of its own.
    if let Some(cause) = response.extensions().get::<crate::error::UnavailableCause>()
        && state.core.db.first_refusal_since_up()
    {
        tracing::warn!(
            cause = %cause.0,
            "answering 503: storage unavailable; further 503s are counted in \
             arbiter_http_requests_total{{status=\"503\"}}, not logged, until the database is back"
        );
    }
    response
}

/// Runs `request` and records it in `metrics` by method, route pattern and
/// status, with the time it took. A request dropped before it was answered
/// (its client went away, or the server closed its connection at a stop)
/// is recorded too, with the status [`ABANDONED`] (499).
pub async fn counted(metrics: &arbiter_ladder::metrics::Metrics, request: Request, next: Next) -> Response {
    // Any token is a method: only the standard ones get a series each.
    let method = match *request.method() {
        Method::GET | Method::HEAD | Method::POST | Method::PUT | Method::DELETE | Method::PATCH | Method::OPTIONS => {
            request.method().as_str().to_owned()
        }
        _ => "other".to_owned(),
    };
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or_else(|| "unmatched".to_owned(), |path| path.as_str().to_owned());
    let mut count = Count {
        metrics,
        method,
        route,
        started: std::time::Instant::now(),
        status: ABANDONED,
    };
    let response = next.run(request).await;
    count.status = response.status().as_u16();
    response
}

/// One request's entry in the metrics, made when it is dropped: with the
/// answer's status, or [`ABANDONED`] if the request's future was dropped
/// before it had one.
struct Count<'a> {
    metrics: &'a arbiter_ladder::metrics::Metrics,
    method: String,
    route: String,
    started: std::time::Instant,
    status: u16,
}

impl Drop for Count<'_> {
    fn drop(&mut self) {
        self.metrics
            .http_request(&self.method, &self.route, self.status, self.started.elapsed());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::Router;
    use axum::http::StatusCode;
    use axum::routing::get;

    #[tokio::test]
    async fn bare_refusals_under_api_become_json() {
        use tower::ServiceExt;
        let app = Router::new()
            .route(
                "/api/plain",
                get(|| async { (StatusCode::BAD_REQUEST, "Failed to parse the request path") }),
            )
            .route("/api/json", get(|| async { ApiError(Error::Conflict("taken".into())) }))
            .route("/page", get(|| async { (StatusCode::NOT_FOUND, "<h1>not here</h1>") }))
            .layer(axum::middleware::from_fn(json_errors));
        let answer = |path: &'static str, method: Method| {
            let app = app.clone();
            async move {
                let request = axum::http::Request::builder()
                    .method(method)
                    .uri(path)
                    .body(axum::body::Body::empty());
                let response = app.oneshot(request.expect("a request")).await.expect("an answer");
                let status = response.status();
                let bytes = axum::body::to_bytes(response.into_body(), 4096).await.expect("a body");
                (status, String::from_utf8_lossy(&bytes).into_owned())
            }
        };
        let (status, body) = answer("/api/plain", Method::GET).await;
        assert_eq!(status, StatusCode::BAD_REQUEST);
        assert_eq!(body, r#"{"error":"Failed to parse the request path","ok":false}"#);
        let (status, body) = answer("/api/plain", Method::POST).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
        assert_eq!(body, r#"{"error":"method not allowed","ok":false}"#);
        let (_, body) = answer("/api/json", Method::GET).await;
        assert_eq!(body, r#"{"error":"taken","ok":false}"#, "JSON passes untouched");
        let (status, body) = answer("/page", Method::GET).await;
        assert_eq!(
            (status, body.as_str()),
            (StatusCode::NOT_FOUND, "<h1>not here</h1>"),
            "not under /api"
        );
    }

    fn refusal(method: Method, headers: &[(&'static str, &'static str)]) -> Option<&'static str> {
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(*name, HeaderValue::from_static(value));
        }
        cross_site_refusal(&method, &map, &axum::http::Uri::from_static("/api/tokens"))
    }

    #[test]
    fn cross_site_unsafe_requests_are_refused() {
        let host = ("host", "ladder.example:8080");
        assert!(
            refusal(Method::POST, &[host]).is_none(),
            "no Origin: a non-browser client"
        );
        assert!(refusal(Method::POST, &[host, ("origin", "http://ladder.example:8080")]).is_none());
        assert!(refusal(Method::POST, &[host, ("origin", "HTTP://Ladder.Example:8080")]).is_none());
        assert!(
            refusal(
                Method::POST,
                &[("host", "ladder.example"), ("origin", "https://ladder.example")]
            )
            .is_none()
        );
        assert!(refusal(Method::POST, &[("host", "[::1]:80"), ("origin", "http://[::1]")]).is_none());
        assert!(refusal(Method::POST, &[host, ("sec-fetch-site", "same-origin")]).is_none());
        assert!(
            refusal(Method::GET, &[host, ("origin", "http://evil.example")]).is_none(),
            "safe method"
        );
        for method in [Method::POST, Method::PUT, Method::PATCH, Method::DELETE] {
            assert!(
                refusal(method.clone(), &[host, ("origin", "http://evil.example")]).is_some(),
                "{method}"
            );
        }
        assert!(refusal(Method::POST, &[host, ("origin", "http://ladder.example:8081")]).is_some());
        assert!(
            refusal(
                Method::POST,
                &[host, ("origin", "http://ladder.example:8080.evil.example")]
            )
            .is_some()
        );
        assert!(refusal(Method::POST, &[host, ("origin", "null")]).is_some());
        assert!(refusal(Method::POST, &[host, ("sec-fetch-site", "cross-site")]).is_some());
        assert!(
            refusal(Method::POST, &[("origin", "http://ladder.example:8080")]).is_some(),
            "no Host"
        );
        let api = ("authorization", "Bearer arb_x");
        assert!(refusal(Method::POST, &[host, api, ("origin", "http://evil.example")]).is_none());
        assert!(
            refusal(
                Method::POST,
                &[host, ("authorization", "Basic eA=="), ("sec-fetch-site", "cross-site")]
            )
            .is_some()
        );
    }

    /// Counts the events at WARN or above it sees.
    struct Warnings(std::sync::Arc<std::sync::atomic::AtomicUsize>);

    impl tracing::Subscriber for Warnings {
        fn enabled(&self, _: &tracing::Metadata<'_>) -> bool {
            true
        }
        fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
            tracing::span::Id::from_u64(1)
        }
        fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
        fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
        fn event(&self, event: &tracing::Event<'_>) {
            if *event.metadata().level() <= tracing::Level::WARN {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
        fn enter(&self, _: &tracing::span::Id) {}
        fn exit(&self, _: &tracing::span::Id) {}
    }

    /// How many lines at WARN or above `f` logs.
    fn warnings_of(f: impl FnOnce()) -> usize {
        let count = std::sync::Arc::default();
        tracing::subscriber::with_default(Warnings(std::sync::Arc::clone(&count)), f);
        count.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A page refused for want of storage logs nothing itself and carries
    /// its cause to [`count_request`], which logs the outage's first 503
    /// only, pages and API alike; a page that fails otherwise is logged.
    #[test]
    fn a_page_refused_for_want_of_storage_is_logged_once_per_outage() {
        let mut response = None;
        let logged = warnings_of(|| {
            let error = crate::site::SiteError::from(Error::Unavailable("pool timed out".into()));
            response = Some(error.into_response());
        });
        let response = response.expect("a page");
        assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(logged, 0, "not logged by the page");
        let cause = response.extensions().get::<crate::error::UnavailableCause>();
        assert_eq!(
            cause.map(|cause| cause.0.as_str()),
            Some("pool timed out"),
            "for count_request"
        );
        let logged = warnings_of(|| {
            let _ = crate::site::SiteError::from(Error::Internal("a bug".into())).into_response();
        });
        assert_eq!(logged, 1, "other failures are logged");
    }

    /// A request dropped before its answer is counted as abandoned (499),
    /// beside those answered.
    #[tokio::test]
    async fn requests_dropped_unanswered_are_counted_as_abandoned() {
        use tower::ServiceExt;
        let dir = tempfile::tempdir().expect("a temporary folder");
        let sandbox = arbiter_sandbox::Sandbox::new(arbiter_sandbox::SandboxConfig {
            cache_dir: Some(dir.path().join("compiled")),
            instance_slots: 1,
            ..arbiter_sandbox::SandboxConfig::default()
        })
        .expect("a sandbox");
        let metrics = arbiter_ladder::metrics::Metrics::new(&sandbox);
        let counting = metrics.clone();
        let app = Router::new()
            .route("/never", get(std::future::pending::<&'static str>))
            .route("/busy", get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "busy") }))
            .layer(axum::middleware::from_fn(move |request: Request, next: Next| {
                let metrics = counting.clone();
                async move { counted(&metrics, request, next).await }
            }));
        let get = |path: &'static str| {
            axum::http::Request::builder()
                .uri(path)
                .body(axum::body::Body::empty())
                .expect("a request")
        };
        for _ in 0..5 {
            let never = app.clone().oneshot(get("/never"));
            let waited = tokio::time::timeout(std::time::Duration::from_millis(20), never).await;
            assert!(waited.is_err(), "never answered");
            let busy = app.clone().oneshot(get("/busy")).await.expect("an answer");
            assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        }
        assert_eq!(metrics.http_requests("GET", "/never", ABANDONED), 5);
        assert_eq!(metrics.http_requests("GET", "/busy", 503), 5);
    }
}
