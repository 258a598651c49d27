//! Getting started from the site alone, against the real server: the
//! guide's downloads (the running `arbiter` executable and its SHA-256, each
//! kit's archive) and the rendered API reference. The browser test
//! `web/tests/downloads.test.mjs` clicks the same links.

mod support;

use sha2::Digest;
use support::{Method, StatusCode, TestServer};

fn sha256_hex(bytes: &[u8]) -> String {
    sha2::Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// GETs `path`: status, a header's value, body bytes.
async fn get(server: &TestServer, path: &str) -> (StatusCode, reqwest::header::HeaderMap, Vec<u8>) {
    let response = server
        .client()
        .raw(Method::GET, path)
        .send()
        .await
        .expect("the server answers");
    let status = response.status();
    let headers = response.headers().clone();
    (status, headers, response.bytes().await.expect("a body").to_vec())
}

fn header<'a>(headers: &'a reqwest::header::HeaderMap, name: &str) -> &'a str {
    headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or_default()
}

#[tokio::test]
async fn the_server_offers_its_own_executable_with_its_digest() {
    let server = TestServer::start().await;
    let running = std::fs::read(env!("CARGO_BIN_EXE_arbiter")).expect("the binary under test");
    let digest = sha256_hex(&running);

    let (status, headers, bytes) = get(&server, "/download/arbiter").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(header(&headers, "content-type"), "application/octet-stream");
    assert_eq!(
        header(&headers, "content-disposition"),
        "attachment; filename=\"arbiter\""
    );
    assert!(
        bytes == running,
        "the download is the running binary ({} bytes, not {})",
        bytes.len(),
        running.len()
    );

    let (status, headers, bytes) = get(&server, "/download/arbiter.sha256").await;
    assert_eq!(status, StatusCode::OK);
    assert!(header(&headers, "content-type").starts_with("text/plain"));
    assert_eq!(String::from_utf8(bytes).expect("text"), format!("{digest}  arbiter\n"));

    let (status, _, guide) = get(&server, "/guide").await;
    assert_eq!(status, StatusCode::OK);
    let guide = String::from_utf8(guide).expect("HTML");
    assert!(guide.contains(&digest), "the guide shows the SHA-256");
    assert!(guide.contains(env!("CARGO_PKG_VERSION")), "the guide shows the version");
    assert!(guide.contains("href=\"/download/arbiter\""));
    for language in arbiter_kits::languages() {
        assert!(
            guide.contains(&format!("href=\"/download/kits/{language}.tar.gz\"")),
            "{language}"
        );
    }
}

#[tokio::test]
async fn each_kit_downloads_as_its_deterministic_archive() {
    let server = TestServer::start().await;
    for kit in arbiter_kits::kits() {
        let path = format!("/download/kits/{}.tar.gz", kit.language());
        let (status, headers, bytes) = get(&server, &path).await;
        assert_eq!(status, StatusCode::OK, "{path}");
        assert_eq!(header(&headers, "content-type"), "application/gzip");
        assert_eq!(
            header(&headers, "content-disposition"),
            format!("attachment; filename=\"arbiter-kit-{}.tar.gz\"", kit.language())
        );
        assert!(
            bytes == kit.archive().expect("an archive"),
            "{path}: the kit's archive, the same bytes"
        );
    }
    for missing in [
        "/download/kits/cobol.tar.gz",
        "/download/kits/c.zip",
        "/download/kits/fortran.tar.gz",
    ] {
        let (status, headers, _) = get(&server, missing).await;
        assert_eq!(status, StatusCode::NOT_FOUND, "{missing}");
        assert!(
            header(&headers, "content-type").starts_with("text/html"),
            "{missing}: the 404 page"
        );
    }
}

#[tokio::test]
async fn the_api_reference_renders_every_operation_and_schema() {
    let server = TestServer::start().await;
    let (status, headers, page) = get(&server, "/api/reference").await;
    assert_eq!(status, StatusCode::OK);
    assert!(header(&headers, "content-type").starts_with("text/html"));
    assert!(header(&headers, "content-security-policy").contains("script-src 'self'"));
    let page = String::from_utf8(page).expect("HTML");
    let (_, _, document) = get(&server, "/api/openapi.json").await;
    let document: serde_json::Value = serde_json::from_slice(&document).expect("the OpenAPI document");
    for (path, item) in document["paths"].as_object().expect("paths") {
        for method in item.as_object().expect("an item").keys() {
            let shown = format!("{} {}", method.to_ascii_uppercase(), path);
            assert!(page.contains(&shown), "{shown} is on the page");
        }
    }
    for name in document["components"]["schemas"].as_object().expect("schemas").keys() {
        assert!(
            page.contains(&format!("id=\"schema-{name}\"")),
            "schema {name} is on the page"
        );
    }
    let (_, _, home) = get(&server, "/").await;
    let home = String::from_utf8(home).expect("HTML");
    assert!(
        home.contains("href=\"/api/reference\""),
        "the footer links to the reference"
    );
}
