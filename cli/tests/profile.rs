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
