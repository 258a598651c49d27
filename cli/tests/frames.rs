//! A skirmish match's frames and training data, kept once computed (issue
//! 43): one match of two house skirmish bots, played and recorded by an
//! in-process worker as the ladder records one, then asked for over HTTP
//! (the router `arbiter serve` runs, on a loopback socket).
//!
//! - Frames of a new match, plain and gzipped, are the very bytes the
//!   replay re-simulates to, and are kept in the database.
//! - Frames of a match whose replay has no kept frames (as every match
//!   recorded before frames were kept) are computed then, the same bytes.
//! - `training.jsonl.gz` is a gzip file of exactly the JSONL
//!   `training.jsonl` serves, `training.jsonl` gives the same file as its
//!   `Content-Encoding` to a client that accepts gzip, and the match page
//!   shows the file's size once it is made.
//!
//! The gzip files are read back with the system's `gzip -dc`.

#[path = "common/ladder.rs"]
mod ladder;

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::Arc;

use arbiter_http::server::{AppState, ServerConfig};
use arbiter_ladder::core::Core;
use arbiter_ladder::matches;
use arbiter_ladder::model::MatchId;
use arbiter_ladder::replays;
use tokio::sync::watch;

const LADDER: &str = "skirmish:standard";
const BOTS: [&str; 2] = ["skirmish-economy", "skirmish-rush"];

/// A core with the house bots, one recorded skirmish match, and the
/// server on a socket.
struct Served {
    core: Core,
    id: MatchId,
    base: String,
    http: reqwest::Client,
    stop: watch::Sender<bool>,
    _dir: tempfile::TempDir,
}

impl Served {
    async fn start() -> Served {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let core = ladder::open_core(dir.path()).await;
        let id = ladder::play_one(&core, LADDER, BOTS, 7, "test-frames").await;
        let app = arbiter_http::router::app(AppState {
            core: core.clone(),
            config: Arc::new(ServerConfig::default()),
            streams: Default::default(),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a socket");
        let base = format!("http://{}", listener.local_addr().expect("an address"));
        let (stop, stopped) = watch::channel(false);
        tokio::spawn(arbiter_http::server::serve_http(listener, app, stopped));
        arbiter_ladder::install_tls_provider();
        Served {
            core,
            id,
            base,
            http: reqwest::Client::builder().no_proxy().build().expect("an HTTP client"),
            stop,
            _dir: dir,
        }
    }

    /// GET `path`, with `Accept-Encoding: gzip` or none: the answer's
    /// `Content-Type`, `Content-Encoding` and body as sent.
    async fn get(&self, path: &str, gzip: bool) -> (String, Option<String>, Vec<u8>) {
        let mut request = self.http.get(format!("{}{path}", self.base));
        if gzip {
            request = request.header("accept-encoding", "gzip");
        }
        let response = request.send().await.expect("an answer");
        assert!(response.status().is_success(), "{path}: {}", response.status());
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().expect("a text header").to_owned())
        };
        let content_type = header("content-type").unwrap_or_default();
        let encoding = header("content-encoding");
        (
            content_type,
            encoding,
            response.bytes().await.expect("the body").to_vec(),
        )
    }

    async fn page(&self) -> String {
        let (_, _, body) = self.get(&format!("/matches/{}", self.id), false).await;
        String::from_utf8(body).expect("a page")
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// `bytes` decompressed by `gzip -dc`.
fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut child = Command::new("gzip")
        .arg("-dc")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("gzip runs");
    let mut stdin = child.stdin.take().expect("gzip's input");
    let input = bytes.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("gzip ends");
    writer.join().expect("the writer").expect("gzip reads it all");
    assert!(
        output.status.success(),
        "gzip -dc failed: the bytes are not a gzip file"
    );
    output.stdout
}

/// Whether frames of game `game` (1 or 2) of the replay under `key` are
/// kept in the database, and what they are.
async fn kept_frames(core: &Core, key: &str, game: usize) -> Option<Vec<u8>> {
    replays::read_derived(&core.db, &replays::derived_key(key, &format!("frames-{game}.json")))
        .await
        .expect("the database answers")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn frames_and_training_data_are_computed_once_and_served_unchanged() {
    let served = Served::start().await;
    let (core, id) = (&served.core, served.id);
    let key = matches::replay_key(&core.db, id).await.expect("a replay");

    // A new match: nothing kept until asked for.
    assert_eq!(kept_frames(core, &key, 1).await, None, "frames are made when asked for");
    let mut expected = Vec::new();
    for game in 1..=2 {
        let recomputed = matches::frames_json_recomputed(core, id, game - 1)
            .await
            .expect("the replay re-simulates");
        let path = format!("/api/matches/{id}/frames?game={game}");
        let (content_type, encoding, plain) = served.get(&path, false).await;
        assert_eq!(content_type, "application/json");
        assert_eq!(encoding, None, "plain to a client that does not accept gzip");
        assert!(
            plain == recomputed,
            "game {game}: the first answer is the re-simulated JSON"
        );
        assert_eq!(
            kept_frames(core, &key, game).await.as_deref(),
            Some(recomputed.as_slice()),
            "game {game}: the frames are kept"
        );
        let (_, again_encoding, again) = served.get(&path, false).await;
        assert_eq!(again_encoding, None);
        assert!(again == recomputed, "game {game}: the kept answer is the same JSON");
        let (content_type, encoding, gzipped) = served.get(&path, true).await;
        assert_eq!(content_type, "application/json");
        assert_eq!(encoding.as_deref(), Some("gzip"));
        assert!(gunzip(&gzipped) == recomputed, "game {game}: gzipped, the same JSON");
        expected.push(recomputed);
    }
    assert!(expected[0] != expected[1], "two games, two sets of frames");

    // A match as recorded before frames were kept: its replay (the same
    // game, stored as other bytes, so under another key) has none.
    let json = matches::replay_bytes(core, id).await.expect("the replay");
    let value: serde_json::Value = serde_json::from_slice(&json).expect("replay JSON");
    let older = serde_json::to_vec_pretty(&value).expect("JSON");
    let stored = replays::prepare(&core.blobs, &older).expect("compressed");
    sqlx::query("INSERT INTO replays (sha256, zstd) VALUES ($1, $2)")
        .bind(&stored.sha256)
        .bind(
            stored
                .row
                .clone()
                .expect("a local folder keeps replays in the database"),
        )
        .execute(&core.db.pool)
        .await
        .expect("the replay is stored");
    sqlx::query("UPDATE matches SET replay_sha256 = $2 WHERE id = $1")
        .bind(id.0)
        .bind(&stored.sha256)
        .execute(&core.db.pool)
        .await
        .expect("the match refers to it");
    for game in [2, 1] {
        assert_eq!(
            kept_frames(core, &stored.sha256, game).await,
            None,
            "nothing kept for it"
        );
        let path = format!("/api/matches/{id}/frames?game={game}");
        let (_, _, gzipped) = served.get(&path, true).await;
        assert!(
            gunzip(&gzipped) == expected[game - 1],
            "game {game}: the same JSON from the older replay"
        );
        let (_, _, plain) = served.get(&path, false).await;
        assert!(plain == expected[game - 1], "game {game}: plain, the same JSON");
        assert_eq!(
            kept_frames(core, &stored.sha256, game).await.as_deref(),
            Some(expected[game - 1].as_slice()),
            "game {game}: computed lazily and kept"
        );
    }

    // Training data: the page offers the gzip file, its size unknown until
    // it is made.
    let page = served.page().await;
    assert!(
        page.contains(&format!("href=\"/api/matches/{id}/training.jsonl.gz\"")),
        "the page links the gzip file"
    );
    assert!(page.contains("Download training data (JSONL, gzip)</a>"), "no size yet");
    let jsonl = matches::training_jsonl(core, id).await.expect("the training data");
    assert!(jsonl.ends_with(b"\n") && jsonl.len() > 1000, "JSON lines");
    let (content_type, encoding, plain) = served.get(&format!("/api/matches/{id}/training.jsonl"), false).await;
    assert_eq!(content_type, "application/x-ndjson");
    assert_eq!(encoding, None);
    assert!(plain == jsonl, "training.jsonl as before");
    let (content_type, encoding, gz) = served.get(&format!("/api/matches/{id}/training.jsonl.gz"), false).await;
    assert_eq!(content_type, "application/gzip");
    assert_eq!(
        encoding, None,
        "a gzip file, not a content encoding: it stays compressed when saved"
    );
    assert!(
        gz.len() * 10 < jsonl.len(),
        "compressed: {} of {} bytes",
        gz.len(),
        jsonl.len()
    );
    assert!(gunzip(&gz) == jsonl, "the gzip file holds exactly the JSONL");
    let (_, _, again) = served.get(&format!("/api/matches/{id}/training.jsonl.gz"), false).await;
    assert!(again == gz, "kept: the same file again");
    let (_, encoding, wire) = served.get(&format!("/api/matches/{id}/training.jsonl"), true).await;
    assert_eq!(encoding.as_deref(), Some("gzip"));
    assert!(
        wire == gz,
        "training.jsonl to a client that accepts gzip: the kept file"
    );
    assert_eq!(
        matches::training_gzip_size(&core.db, id).await.expect("the size"),
        Some(gz.len() as u64)
    );
    let page = served.page().await;
    let size = gz.len() as f64;
    let shown = if size >= 999_500.0 {
        format!("{:.1} MB", size / 1e6)
    } else {
        format!("{:.0} KB", size / 1e3)
    };
    assert!(
        page.contains(&format!("Download training data (JSONL, gzip, {shown})</a>")),
        "the page shows the size, {shown}"
    );
}
