//! How the site is served: answers compressed with gzip or brotli as the
//! client asks (pages, API JSON, CSS and scripts, never event streams or
//! downloads), static files under hashed names cached for good,
//! `/robots.txt`, and two pages' wording (the API reference, the sign-in
//! link).

use crate::support::TestServer;
use arbiter_http::middleware::Compressible;
use axum::body::{Body, Bytes};
use axum::http::{HeaderMap, HeaderValue, Method, Request, StatusCode, header};
use std::io::Read;
use tower::ServiceExt;

/// An answer: status, headers and (unless not read) body as sent.
struct Answer {
    status: StatusCode,
    headers: HeaderMap,
    body: Bytes,
}

impl Answer {
    /// A header's value as text, or "".
    fn header(&self, name: header::HeaderName) -> &str {
        self.headers
            .get(name)
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
    }

    /// The body as text.
    fn text(&self) -> String {
        String::from_utf8(self.body.to_vec()).expect("UTF-8")
    }
}

/// `GET path` with the request headers `headers`; the body is read unless
/// `read_body` is false (an event stream never ends).
async fn get(server: &TestServer, path: &str, headers: &[(&str, &str)], read_body: bool) -> Answer {
    let mut request = Request::builder().method(Method::GET).uri(path);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = server
        .router()
        .oneshot(request.body(Body::empty()).expect("a request"))
        .await
        .expect("an answer");
    let status = response.status();
    let headers = response.headers().clone();
    let body = if read_body {
        axum::body::to_bytes(response.into_body(), 256 << 20)
            .await
            .expect("a body")
    } else {
        Bytes::new()
    };
    Answer { status, headers, body }
}

/// `bytes` decoded from `encoding` (`gzip` or `br`).
fn decoded(encoding: &str, bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match encoding {
        "gzip" => flate2::read::GzDecoder::new(bytes).read_to_end(&mut out),
        "br" => brotli_decompressor::Decompressor::new(bytes, 4096).read_to_end(&mut out),
        other => panic!("unexpected encoding {other}"),
    }
    .expect("the body decodes");
    out
}

/// Every `/static/...` URL a page links.
fn static_links(page: &str) -> Vec<String> {
    page.split("\"/static/")
        .skip(1)
        .map(|rest| format!("/static/{}", rest.split('"').next().unwrap_or_default()))
        .collect()
}

/// A page, an API answer, the stylesheet and a script come back gzip- or
/// brotli-encoded when asked (brotli when both are), decode to exactly the
/// bytes sent to a client that asks for neither, and say `Vary:
/// Accept-Encoding`; the other layers' headers are still there.
#[tokio::test]
async fn pages_api_answers_css_and_scripts_are_compressed_as_asked() {
    let server = TestServer::start().await;
    let home = get(&server, "/", &[], true).await;
    let links = static_links(&home.text());
    let css = links
        .iter()
        .find(|link| link.ends_with(".css"))
        .expect("the page links its stylesheet");
    let js = links
        .iter()
        .find(|link| link.starts_with("/static/site."))
        .expect("the page links site.js");
    for path in ["/", "/api/openapi.json", "/api/ladders", css, js, "/api/reference"] {
        let plain = get(&server, path, &[], true).await;
        assert_eq!(plain.status, StatusCode::OK, "{path}");
        assert_eq!(plain.header(header::CONTENT_ENCODING), "", "{path}: not asked");
        assert!(
            plain.body.len() >= 1024,
            "{path} is worth compressing: {} bytes",
            plain.body.len()
        );
        for (accept, encoding) in [("gzip", "gzip"), ("br", "br"), ("gzip, deflate, br", "br")] {
            let packed = get(&server, path, &[("accept-encoding", accept)], true).await;
            assert_eq!(packed.status, StatusCode::OK, "{path}");
            assert_eq!(packed.header(header::CONTENT_ENCODING), encoding, "{path}, {accept}");
            assert!(
                packed
                    .header(header::VARY)
                    .to_ascii_lowercase()
                    .contains("accept-encoding"),
                "{path}"
            );
            assert_eq!(packed.header(header::X_CONTENT_TYPE_OPTIONS), "nosniff", "{path}");
            assert_eq!(
                packed.header(header::CONTENT_TYPE),
                plain.header(header::CONTENT_TYPE),
                "{path}"
            );
            assert!(packed.body.len() < plain.body.len(), "{path}: smaller");
            assert_eq!(decoded(encoding, &packed.body), plain.body, "{path}, {encoding}");
        }
    }
    // Pages still have their security headers, and the requests are counted.
    let page = get(&server, "/guide", &[("accept-encoding", "br")], true).await;
    assert_eq!(page.header(header::CONTENT_ENCODING), "br");
    assert!(page.headers.contains_key(header::CONTENT_SECURITY_POLICY));
    assert!(server.core().metrics.http_requests("GET", "/guide", 200) >= 1);
    assert!(server.core().metrics.http_requests("GET", "/static/{file}", 200) >= 8);
}

/// Event streams, downloads and tiny answers are sent as they are, to a
/// client that accepts every coding: a stream would be held back, and a
/// download's bytes and `Content-Length` are what its digest is checked
/// against. Refusals by the header limit still come as JSON.
#[tokio::test]
async fn streams_downloads_and_tiny_answers_are_not_encoded() {
    let server = TestServer::start().await;
    let any = [("accept-encoding", "gzip, br")];
    let events = get(&server, "/api/events", &any, false).await;
    assert_eq!(events.status, StatusCode::OK);
    assert!(events.header(header::CONTENT_TYPE).starts_with("text/event-stream"));
    assert_eq!(events.header(header::CONTENT_ENCODING), "", "the event stream");

    let language = arbiter_kits::languages()[0];
    let kit = get(&server, &format!("/download/kits/{language}.tar.gz"), &any, true).await;
    assert_eq!(kit.status, StatusCode::OK);
    assert_eq!(kit.header(header::CONTENT_ENCODING), "", "a kit");
    assert_eq!(kit.header(header::CONTENT_LENGTH), kit.body.len().to_string());
    assert_eq!(&kit.body[..2], [0x1f, 0x8b], "the gzip archive itself");

    let executable = get(&server, "/download/arbiter", &any, true).await;
    assert_eq!(executable.status, StatusCode::OK);
    assert_eq!(executable.header(header::CONTENT_ENCODING), "", "the executable");
    assert_eq!(
        executable.header(header::CONTENT_LENGTH),
        executable.body.len().to_string()
    );
    let digest = get(&server, "/download/arbiter.sha256", &any, true).await;
    assert_eq!(digest.header(header::CONTENT_ENCODING), "", "tiny");
    assert_eq!(
        digest.text().split_whitespace().next(),
        Some(arbiter_ladder::blobs::sha256_hex(&executable.body).as_str())
    );

    let icon = get(&server, "/static/favicon.svg", &any, true).await;
    assert!(icon.body.len() < 1024);
    assert_eq!(icon.header(header::CONTENT_ENCODING), "", "tiny");

    let padding = "x".repeat(arbiter_http::middleware::MAX_HEADER_BYTES);
    let refused = get(
        &server,
        "/api/ladders",
        &[("accept-encoding", "gzip"), ("x-padding", &padding)],
        true,
    )
    .await;
    assert_eq!(refused.status, StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE);
    assert_eq!(refused.header(header::CONTENT_ENCODING), "");
    assert!(refused.text().starts_with(r#"{"error":"#), "{}", refused.text());

    // The agent stream is marked as a stream; downloads by their types.
    let marked = |pairs: &[(&'static str, &'static str)]| {
        let mut headers = HeaderMap::new();
        for (name, value) in pairs {
            headers.insert(*name, HeaderValue::from_static(value));
        }
        Compressible::allows(&headers)
    };
    assert!(!marked(&[
        ("content-type", "application/x-ndjson"),
        ("x-accel-buffering", "no")
    ]));
    assert!(!marked(&[("content-type", "application/x-ndjson")]), "the agent stream");
    assert!(!marked(&[
        ("content-type", "application/json"),
        ("x-accel-buffering", "no")
    ]));
    assert!(!marked(&[("content-type", "text/event-stream")]));
    assert!(!marked(&[("content-type", "application/wasm")]));
    assert!(!marked(&[("content-type", "application/zstd")]));
    assert!(!marked(&[("content-type", "image/png")]));
    assert!(marked(&[("content-type", "image/svg+xml")]));
    assert!(marked(&[("content-type", "text/html; charset=utf-8")]));
}

/// Pages link static files by names carrying their digest, served as
/// immutable; the plain name and an old digest get the current file,
/// revalidated (never immutable), with an `ETag` that answers 304.
#[tokio::test]
async fn hashed_static_files_are_immutable_and_others_are_revalidated() {
    let server = TestServer::start().await;
    let home = get(&server, "/", &[], true).await;
    let links = static_links(&home.text());
    assert!(links.len() >= 3, "{links:?}");
    for link in &links {
        let file = get(&server, link, &[], true).await;
        assert_eq!(file.status, StatusCode::OK, "{link}");
        assert_eq!(
            file.header(header::CACHE_CONTROL),
            "public, max-age=31536000, immutable",
            "{link}"
        );
        let name = link.trim_start_matches("/static/");
        let (rest, extension) = name.rsplit_once('.').expect("an extension");
        let (stem, digest) = rest.rsplit_once('.').expect("a digest");
        assert_eq!(digest.len(), 12, "{link}");
        assert_eq!(
            &arbiter_ladder::blobs::sha256_hex(&file.body)[..12],
            digest,
            "{link}: the digest is the content's"
        );
        let plain = get(&server, &format!("/static/{stem}.{extension}"), &[], true).await;
        let old = get(&server, &format!("/static/{stem}.0123456789ab.{extension}"), &[], true).await;
        for other in [&plain, &old] {
            assert_eq!(other.status, StatusCode::OK, "{link}");
            assert_eq!(other.body, file.body, "{link}: the current file");
            assert_eq!(other.header(header::CACHE_CONTROL), "no-cache", "{link}");
        }
        let etag = plain.header(header::ETAG).to_owned();
        assert_eq!(etag, format!("W/\"{digest}\""));
        let again = get(
            &server,
            &format!("/static/{stem}.{extension}"),
            &[("if-none-match", &etag)],
            true,
        )
        .await;
        assert_eq!(again.status, StatusCode::NOT_MODIFIED, "{link}");
        assert!(again.body.is_empty());
    }
    for missing in [
        "/static/nothing.js",
        "/static/nothing.0123456789ab.js",
        "/static/style.1234.css",
    ] {
        let answer = get(&server, missing, &[], true).await;
        assert_eq!(answer.status, StatusCode::NOT_FOUND, "{missing}");
    }
}

/// `/robots.txt` lets crawlers read the public pages and the API
/// reference, not the API, downloads, forms or games against bots.
#[tokio::test]
async fn robots_txt_keeps_crawlers_to_the_public_pages() {
    let server = TestServer::start().await;
    let robots = get(&server, "/robots.txt", &[], true).await;
    assert_eq!(robots.status, StatusCode::OK);
    assert!(robots.header(header::CONTENT_TYPE).starts_with("text/plain"));
    let text = robots.text();
    assert!(text.starts_with("# "), "a comment first: {text}");
    assert!(text.contains("User-agent: *\n"));
    let rules: Vec<&str> = text.lines().filter(|line| !line.starts_with('#')).collect();
    for rule in [
        "Allow: /api/reference",
        "Disallow: /api/",
        "Disallow: /download/",
        "Disallow: /signin",
        "Disallow: /signup",
        "Disallow: /bots/*/play",
        "Disallow: /play/",
    ] {
        assert!(rules.contains(&rule), "{rule} in {text}");
    }
    for public in ["/", "/ladders/", "/bots/", "/matches/", "/tournaments", "/guide"] {
        assert!(
            !rules.contains(&format!("Disallow: {public}").as_str()),
            "{public} is public"
        );
    }
}

/// The API reference shows code as `<code>`, never Markdown's backticks,
/// and says once what a refusal looks like.
#[tokio::test]
async fn the_api_reference_shows_code_and_says_things_once() {
    let server = TestServer::start().await;
    let page = server.client().page("/api/reference").await;
    assert!(
        !page.contains('`'),
        "a literal backtick at {:?}",
        page.find('`').map(|i| &page[i.saturating_sub(60)..i + 20])
    );
    assert_eq!(page.matches("Every refusal").count(), 1);
    assert!(
        page.contains("<code>name: value</code>"),
        "the header limit's code span"
    );
}

/// The menu's sign-in link comes back to the page it is on, except on the
/// sign-in and sign-up pages, where it is plain `/signin`.
#[tokio::test]
async fn the_sign_in_link_does_not_return_to_the_sign_in_page() {
    let server = TestServer::start().await;
    let client = server.client();
    for path in ["/signin", "/signup"] {
        let page = client.page(path).await;
        assert!(page.contains(r#"<a href="/signin""#), "{path}");
        assert!(!page.contains("next=/sign") && !page.contains("next=%2Fsign"), "{path}");
    }
    let guide = client.page("/guide").await;
    assert!(
        guide.contains(r#"href="/signin?next=/guide""#) || guide.contains(r#"href="/signin?next=%2Fguide""#),
        "elsewhere it returns to the page"
    );
}
