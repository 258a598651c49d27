//! Bot profiles: photos re-encoded without their metadata and served as
//! PNG, bounded uploads refused with the reason, the bio escaped, only the
//! owner changing anything, and the site's form without JavaScript.

mod support;

use std::io::Cursor;

use serde_json::json;

use image::{ImageFormat, Rgb, RgbImage};
use support::{Method, StatusCode, TestServer};

fn encoded(format: ImageFormat, width: u32, height: u32) -> Vec<u8> {
    let image = RgbImage::from_fn(width, height, |x, y| Rgb([(x % 251) as u8, (y % 241) as u8, 7]));
    let mut bytes = Vec::new();
    image.write_to(&mut Cursor::new(&mut bytes), format).expect("encodes");
    bytes
}

fn chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut out = u32::try_from(data.len()).expect("small").to_be_bytes().to_vec();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(kind);
    hasher.update(data);
    out.extend_from_slice(&hasher.finalize().to_be_bytes());
    out
}

/// A PNG carrying `secret` in a text chunk.
fn png_with_text(secret: &str) -> Vec<u8> {
    let png = encoded(ImageFormat::Png, 320, 240);
    let text = chunk(b"tEXt", format!("Comment\0{secret}").as_bytes());
    [&png[..33], &text[..], &png[33..]].concat()
}

/// A JPEG carrying `secret` in an EXIF block.
fn jpeg_with_exif(secret: &str) -> Vec<u8> {
    let jpeg = encoded(ImageFormat::Jpeg, 300, 500);
    let mut exif = b"Exif\0\0MM\0*\0\0\0\x08".to_vec();
    exif.extend_from_slice(secret.as_bytes());
    let mut app1 = vec![0xff, 0xe1];
    app1.extend_from_slice(&u16::try_from(exif.len() + 2).expect("small").to_be_bytes());
    app1.extend_from_slice(&exif);
    [&jpeg[..2], &app1[..], &jpeg[2..]].concat()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
}

#[tokio::test]
async fn photos_bios_and_settings_are_the_owners_and_come_back_clean() {
    let server = TestServer::start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    // A remote bot needs no check: the quickest bot to have.
    let form = reqwest::multipart::Form::new()
        .text("name", "pictured")
        .text("ladders", "tictactoe")
        .text("url", "https://93.184.215.14/bot");
    let (status, body) = api.post_multipart("/api/bots", form).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");

    // A PNG with a text chunk comes back re-encoded, without it.
    let put_photo = |bytes: Vec<u8>| api.request(Method::PUT, "/api/bots/pictured/photo").body(bytes);
    let (status, body) = api.send(put_photo(png_with_text("12 Secret Lane"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let path = body["bot"]["photo"].as_str().expect("a photo path").to_owned();
    let served = server.client().raw(Method::GET, &path).send().await.expect("served");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.headers()["content-type"], "image/png");
    assert_eq!(served.headers()["x-content-type-options"], "nosniff");
    let png = served.bytes().await.expect("bytes");
    assert!(png.starts_with(b"\x89PNG"));
    assert!(!contains(&png, "Secret Lane") && !contains(&png, "tEXt"));
    let back = image::load_from_memory_with_format(&png, ImageFormat::Png).expect("a PNG");
    assert_eq!((back.width(), back.height()), (240, 240), "the centre square");

    // A JPEG with EXIF likewise; the address changes with the photo.
    let (status, body) = api.send(put_photo(jpeg_with_exif("GPS 48.8584 2.2945"))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let second = body["bot"]["photo"].as_str().expect("a photo path").to_owned();
    assert_ne!(second, path);
    let png = server
        .client()
        .raw(Method::GET, &second)
        .send()
        .await
        .expect("served")
        .bytes()
        .await
        .expect("bytes");
    assert!(!contains(&png, "Exif") && !contains(&png, "48.8584"));

    // Refused with the reason, the photo unchanged.
    let mut bomb = encoded(ImageFormat::Png, 16, 16);
    let mut ihdr = bomb[16..29].to_vec();
    ihdr[..4].copy_from_slice(&30_000u32.to_be_bytes());
    ihdr[4..8].copy_from_slice(&30_000u32.to_be_bytes());
    bomb = [&bomb[..8], &chunk(b"IHDR", &ihdr)[..], &bomb[33..]].concat();
    for (bytes, reason) in [
        (b"<svg onload=alert(1)>".to_vec(), "not a PNG, JPEG or WebP"),
        (bomb, "30000 × 30000"),
        (vec![0x89; 600 * 1024], "512 KiB"),
    ] {
        let (status, body) = api.send(put_photo(bytes)).await;
        assert!(
            status == StatusCode::BAD_REQUEST || status == StatusCode::PAYLOAD_TOO_LARGE,
            "{status} {body}"
        );
        if status == StatusCode::BAD_REQUEST {
            assert!(body["error"].as_str().unwrap_or_default().contains(reason), "{body}");
        }
    }
    let (_, bot) = api.get("/api/bots/pictured").await;
    assert_eq!(bot["bot"]["photo"], second.as_str(), "{bot}");

    // The bio is plain text, escaped on the page; bounds are checked.
    let bio = "I play <script>alert('x')</script> & win";
    let profile = |body: serde_json::Value| {
        let api = &api;
        async move { api.send_json(Method::PUT, "/api/bots/pictured/profile", &body).await }
    };
    let (status, body) = profile(serde_json::json!({"bio": bio, "auto_match": false, "concurrent_matches": 3})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["bot"]["bio"], bio);
    assert_eq!(body["bot"]["auto_match"], false);
    assert_eq!(body["bot"]["concurrent_matches"], 3);
    let page = server
        .client()
        .raw(Method::GET, "/bots/pictured")
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains("id=\"bot-bio\">I play &#60;script&#62;alert(&#39;x&#39;)&#60;/script&#62; &#38; win</p>"),
        "{page}"
    );
    assert!(!page.contains("<script>alert("), "the bio is escaped");
    assert!(page.contains(&second), "the photo is on the page");
    let (_, board) = api.get("/api/ladders/remote:tictactoe:standard/leaderboard").await;
    let row = board["entries"]
        .as_array()
        .and_then(|rows| rows.iter().find(|r| r["bot"] == "pictured"))
        .expect("on its board");
    assert_eq!(row["photo"], second.as_str(), "leaderboards carry the thumbnail");
    let (status, _) = profile(serde_json::json!({"bio": "x".repeat(501)})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = profile(serde_json::json!({"concurrent_matches": 0})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    let (status, _) = profile(serde_json::json!({"nickname": "x"})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);

    // Only the owner.
    let bob = server.signup("bob").await;
    let bob_api = server.token_client(&server.token(&bob).await);
    let (status, body) = bob_api
        .send_json(
            Method::PUT,
            "/api/bots/pictured/profile",
            &serde_json::json!({"bio": "mine now"}),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    let (status, _) = bob_api
        .send(
            bob_api
                .request(Method::PUT, "/api/bots/pictured/photo")
                .body(encoded(ImageFormat::Png, 8, 8)),
        )
        .await;
    assert_eq!(status, StatusCode::FORBIDDEN);

    // The site's form, without JavaScript: a multipart POST and a 303 back.
    let form = reqwest::multipart::Form::new()
        .text("csrf", ann.csrf.clone().expect("a CSRF token"))
        .text("bio", "Edited on the site")
        .text("auto_match", "on")
        .text("concurrent_matches", "2")
        .part(
            "photo",
            reqwest::multipart::Part::bytes(png_with_text("private")).file_name("me.png"),
        );
    let answer = ann
        .raw(Method::POST, "/bots/pictured/profile")
        .multipart(form)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK, "followed the 303 to the bot page");
    assert_eq!(answer.url().path(), "/bots/pictured");
    let page = answer.text().await.expect("html");
    assert!(page.contains("Edited on the site"), "{page}");
    let (_, bot) = api.get("/api/bots/pictured").await;
    assert_eq!(bot["bot"]["auto_match"], true);
    assert_ne!(bot["bot"]["photo"], second.as_str(), "a new photo");
    // Without a file chosen the photo stays.
    let form = reqwest::multipart::Form::new()
        .text("csrf", ann.csrf.clone().expect("a CSRF token"))
        .text("bio", "")
        .part("photo", reqwest::multipart::Part::bytes(Vec::new()).file_name(""));
    let answer = ann
        .raw(Method::POST, "/bots/pictured/profile")
        .multipart(form)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::OK);
    let (_, after) = api.get("/api/bots/pictured").await;
    assert_eq!(after["bot"]["photo"], bot["bot"]["photo"]);
    assert_eq!(after["bot"]["bio"], "");
    assert_eq!(after["bot"]["auto_match"], false, "an unticked box turns it off");
}

#[tokio::test]
async fn supported_games_are_never_empty_never_unchecked_and_never_changed_mid_match() {
    let server = TestServer::start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    let profile = |name: &'static str, body: serde_json::Value| {
        let api = &api;
        async move {
            api.send_json(Method::PUT, &format!("/api/bots/{name}/profile"), &body)
                .await
        }
    };

    // A remote bot may take any game: on its remote ladder.
    let form = reqwest::multipart::Form::new()
        .text("name", "faraway")
        .text("ladders", "tictactoe")
        .text("url", "https://93.184.215.14/bot");
    let (status, body) = api.post_multipart("/api/bots", form).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    let (status, body) = profile("faraway", json!({"supported_games": ["othello", "tictactoe"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(
        body["bot"]["supported_games"],
        json!(["remote:othello:std", "remote:tictactoe:standard"])
    );
    let (status, body) = profile("faraway", json!({"supported_games": []})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"].as_str().unwrap_or_default().contains("cannot be empty"),
        "{body}"
    );
    let (status, body) = profile("faraway", json!({"supported_games": ["chess"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    // Dropped from a board, it leaves that leaderboard.
    let (_, body) = profile("faraway", json!({"supported_games": ["othello"]})).await;
    assert_eq!(body["bot"]["supported_games"], json!(["remote:othello:std"]), "{body}");
    let (_, board) = api.get("/api/ladders/remote:tictactoe:standard/leaderboard").await;
    assert!(
        !board["entries"]
            .as_array()
            .expect("rows")
            .iter()
            .any(|r| r["bot"] == "faraway"),
        "{board}"
    );

    // An uploaded module only on ladders it was uploaded (and checked) for.
    let checked = support::upload_and_check(
        &api,
        "greedy",
        "othello:std,othello:anti",
        support::house("othello-greedy"),
    )
    .await;
    assert_eq!(checked["version"]["status"], "active", "{checked}");
    let (status, body) = profile("greedy", json!({"supported_games": ["othello:std"]})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["bot"]["supported_games"], json!(["othello:std"]));
    let (status, body) = profile("greedy", json!({"supported_games": ["othello:grand"]})).await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert!(
        body["error"]
            .as_str()
            .unwrap_or_default()
            .contains("uploaded and checked for"),
        "{body}"
    );

    // Not while a match is waiting (no worker runs here: it waits).
    let (status, body) = api
        .post_json(
            "/api/challenges",
            &json!({"bot": "greedy", "opponent": "othello-random", "ladder": "othello:std"}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = profile("greedy", json!({"supported_games": ["othello:std", "othello:anti"]})).await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    let (_, bot) = api.get("/api/bots/greedy").await;
    assert_eq!(
        bot["bot"]["supported_games"],
        json!(["othello:std"]),
        "unchanged: {bot}"
    );
}

/// The worst photo for its size: 4096 × 4096 RGBA of one colour, 64 MiB
/// decoded from about 330 KB.
fn worst_case_png() -> Vec<u8> {
    let mut png = Vec::new();
    image::RgbaImage::new(4096, 4096)
        .write_to(&mut Cursor::new(&mut png), ImageFormat::Png)
        .expect("encodes");
    assert!(png.len() < 512 * 1024, "{} bytes", png.len());
    png
}

/// A signed-up user's API client and a remote bot of theirs named `name`.
async fn owner_with_bot(server: &TestServer, name: &str) -> (support::Client, support::Client) {
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    let form = reqwest::multipart::Form::new()
        .text("name", name.to_owned())
        .text("ladders", "tictactoe")
        .text("url", "https://93.184.215.14/bot");
    let (status, body) = api.post_multipart("/api/bots", form).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    (ann, api)
}

/// A photo body over 512 KiB is refused with 413 as soon as that much has
/// arrived: the server does not wait for the 64 MiB it was announced
/// (it used to read up to the 64 MiB upload limit, then time out).
#[tokio::test]
async fn a_photo_body_over_512_kib_is_refused_as_it_streams_in() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let server = TestServer::start().await;
    let (ann, _) = owner_with_bot(&server, "pictured").await;
    let token = server.token(&ann).await;
    let mut socket = tokio::net::TcpStream::connect(server.addr).await.expect("connects");
    let head = format!(
        "PUT /api/bots/pictured/photo HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: image/png\r\nContent-Length: {}\r\n\r\n",
        server.addr,
        64 * 1024 * 1024
    );
    socket.write_all(head.as_bytes()).await.expect("writes");
    let started = std::time::Instant::now();
    // 600 KiB of the announced 64 MiB, then nothing more.
    let _ = socket.write_all(&vec![0x89; 600 * 1024]).await;
    let mut answer = Vec::new();
    let mut buffer = [0u8; 4096];
    while !answer.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = tokio::time::timeout(std::time::Duration::from_secs(10), socket.read(&mut buffer))
            .await
            .expect("answers without waiting for the rest of the body")
            .expect("reads");
        if n == 0 {
            break;
        }
        answer.extend_from_slice(&buffer[..n]);
    }
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(
        started.elapsed() < arbiter_http::middleware::BODY_TIMEOUT / 2,
        "{:?}",
        started.elapsed()
    );
}

/// A photo's address names its version: that address serves that photo
/// only, cached for good; a replaced photo's address redirects to the
/// current one without being cached; no version, no lasting cache.
#[tokio::test]
async fn a_photo_address_serves_its_own_version_only() {
    let server = TestServer::start().await;
    let (_, api) = owner_with_bot(&server, "pictured").await;
    let put = |bytes: Vec<u8>| api.request(Method::PUT, "/api/bots/pictured/photo").body(bytes);
    let (status, body) = api.send(put(encoded(ImageFormat::Png, 40, 40))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let first = body["bot"]["photo"].as_str().expect("an address").to_owned();
    assert!(first.starts_with("/bots/pictured/photo.png?v="), "{first}");
    let plain = support::plain_http();
    let get = |path: &str| plain.get(server.url(path)).send();

    let served = get(&first).await.expect("served");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.headers()["cache-control"], "public, max-age=31536000, immutable");
    let etag = served.headers()["etag"].to_str().expect("ascii").to_owned();
    let first_png = served.bytes().await.expect("bytes");

    let current = get("/bots/pictured/photo.png").await.expect("served");
    assert_eq!(current.status(), StatusCode::OK);
    assert_eq!(current.headers()["cache-control"], "no-cache");
    assert_eq!(current.bytes().await.expect("bytes"), first_png);
    let unchanged = plain
        .get(server.url("/bots/pictured/photo.png"))
        .header("If-None-Match", &etag)
        .send()
        .await
        .expect("answered");
    assert_eq!(unchanged.status(), StatusCode::NOT_MODIFIED);

    // Replaced: the old address no longer serves anything under a lasting
    // cache; it sends to the new one.
    let (status, body) = api.send(put(encoded(ImageFormat::Png, 50, 50))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let second = body["bot"]["photo"].as_str().expect("an address").to_owned();
    assert_ne!(second, first);
    for stale in [first.as_str(), "/bots/pictured/photo.png?v=000000000000"] {
        let moved = get(stale).await.expect("answered");
        assert_eq!(moved.status(), StatusCode::FOUND, "{stale}");
        assert_eq!(moved.headers()["location"], second.as_str());
        assert_eq!(moved.headers()["cache-control"], "no-cache");
    }
    let served = get(&second).await.expect("served");
    assert_eq!(served.headers()["cache-control"], "public, max-age=31536000, immutable");
    assert_ne!(served.bytes().await.expect("bytes"), first_png);

    // Removed: every address is a 404.
    let (status, _) = api.delete("/api/bots/pictured/photo").await;
    assert_eq!(status, StatusCode::OK);
    for gone in [second.as_str(), "/bots/pictured/photo.png"] {
        assert_eq!(get(gone).await.expect("answered").status(), StatusCode::NOT_FOUND);
    }
}

/// The site's profile form with a photo over 512 KiB: the bot's page again
/// with the form open, the reason on it and everything else that was sent
/// kept (it used to be a bare 400 "malformed form" page), nothing changed.
#[tokio::test]
async fn the_profile_form_keeps_its_fields_when_the_photo_is_too_large() {
    let server = TestServer::start().await;
    let (ann, api) = owner_with_bot(&server, "pictured").await;
    let (_, before) = api.get("/api/bots/pictured").await;
    // Just over the photo's limit (read and refused as it streams in) and
    // well over the form's (refused by the body's limit).
    for size in [520 * 1024, 700 * 1024] {
        let form = reqwest::multipart::Form::new()
            .text("csrf", ann.csrf.clone().expect("a CSRF token"))
            .text("bio", "Kept <after> a refusal")
            .text("people_play", "on")
            .text("concurrent_matches", "3")
            .part(
                "photo",
                reqwest::multipart::Part::bytes(vec![0x89; size]).file_name("huge.png"),
            );
        let answer = ann
            .raw(Method::POST, "/bots/pictured/profile")
            .multipart(form)
            .send()
            .await
            .expect("answered");
        assert_eq!(answer.status(), StatusCode::PAYLOAD_TOO_LARGE, "{size} bytes");
        let page = answer.text().await.expect("html");
        assert!(page.contains("id=\"profile-edit\" open"), "the form is open: {page}");
        assert!(page.contains("id=\"profile-error\""), "{page}");
        assert!(page.contains("larger than 512 KiB"), "{page}");
        assert!(
            page.contains(">Kept &#60;after&#62; a refusal</textarea>"),
            "the bio is kept: {page}"
        );
        assert!(
            page.contains("name=\"people_play\" value=\"on\" checked"),
            "the box ticked stays ticked"
        );
        assert!(
            !page.contains("name=\"auto_match\" value=\"on\" checked"),
            "the box not ticked stays unticked"
        );
        assert!(page.contains("value=\"3\""), "matches at once kept");
    }
    let (_, after) = api.get("/api/bots/pictured").await;
    assert_eq!(after, before, "nothing changed");

    // A bio too long: shown on the form too (400), the rest kept.
    let form = reqwest::multipart::Form::new()
        .text("csrf", ann.csrf.clone().expect("a CSRF token"))
        .text("bio", "x".repeat(501))
        .text("auto_match", "on")
        .text("concurrent_matches", "2");
    let answer = ann
        .raw(Method::POST, "/bots/pictured/profile")
        .multipart(form)
        .send()
        .await
        .expect("answered");
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let page = answer.text().await.expect("html");
    assert!(page.contains("501 characters"), "{page}");
    assert!(page.contains("name=\"auto_match\" value=\"on\" checked"));
}

/// Sixteen uploads of the worst photo for its size (4096 × 4096, 64 MiB
/// decoded) at once: the server decodes a few and tells the rest to come
/// back (503 with Retry-After) at once, instead of decoding all sixteen
/// (2 GB of memory and more).
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_worst_case_photos_beyond_the_decoders_get_503_with_retry_after() {
    let server = TestServer::start().await;
    let (_, api) = owner_with_bot(&server, "pictured").await;
    let png = worst_case_png();
    let uploads = (0..16).map(|_| {
        let request = api.request(Method::PUT, "/api/bots/pictured/photo").body(png.clone());
        async move { request.send().await.expect("answered") }
    });
    let mut handles = Vec::new();
    for upload in uploads {
        handles.push(tokio::spawn(upload));
    }
    let (mut busy, mut decoded) = (0, 0);
    for handle in handles {
        let answer = handle.await.expect("the upload ends");
        match answer.status() {
            StatusCode::SERVICE_UNAVAILABLE => {
                let retry: u64 = answer.headers()["retry-after"]
                    .to_str()
                    .ok()
                    .and_then(|s| s.parse().ok())
                    .expect("Retry-After in seconds");
                assert!(retry >= 1);
                let body: serde_json::Value = answer.json().await.expect("JSON");
                assert!(
                    body["error"].as_str().unwrap_or_default().contains("try again"),
                    "{body}"
                );
                busy += 1;
            }
            // Decoded, or (in an unoptimised test build) refused as too
            // slow to decode: either way one of the few admitted.
            StatusCode::OK | StatusCode::BAD_REQUEST => decoded += 1,
            other => panic!("unexpected {other}: {}", answer.text().await.unwrap_or_default()),
        }
    }
    let admitted = arbiter_ladder::profile::MAX_PHOTO_DECODERS * (1 + arbiter_ladder::profile::PHOTO_QUEUE_PER_DECODER);
    assert!(decoded <= admitted, "{decoded} admitted, at most {admitted}");
    assert!(busy >= 16 - admitted, "{busy} told to retry");
}
