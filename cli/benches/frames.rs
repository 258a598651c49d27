//! What a skirmish match's frames and training data cost the server, before
//! and after they were kept (issue 43).
//!
//! A fresh [`Core`] on a temporary SQLite data folder (its sandbox compiles
//! with the `arbiter` binary), the house bots seeded, plays one ranked
//! `skirmish-economy` – `skirmish-defence` match on `skirmish:standard`
//! with an in-process worker ([`worker::run`]), as the ladder records one.
//! Then, in the same run, over the router `arbiter serve` runs, served on
//! a loopback socket in this process (each request timed by the client
//! until its body is read whole: the server's time plus well under a
//! millisecond):
//!
//! 1. **Frames, both games.** The baseline: re-simulated from the stored
//!    replay on every request, as the server did before
//!    ([`matches::frames_json_recomputed`]); the first request now (computed
//!    and kept); a game read back from the database alone (the path after a
//!    restart, [`replays::read_derived`]); and the answer served from the
//!    in-memory cache, plain and gzipped. The ratio is baseline / cached.
//! 2. **Training data.** The JSONL re-simulated (what `training.jsonl`
//!    does on every request) and its size; `training.jsonl.gz` the first
//!    time (made and kept) and afterwards (read back), with its size.
//!
//! Run with `cargo bench -p arbiter --bench frames` (under a minute after
//! the build). `ARBITER_BENCH_RUNS` (default 5) sets how many times each
//! figure is measured; medians are printed. Nothing here asserts on time.

#[path = "../tests/common/ladder.rs"]
mod ladder;

use std::sync::Arc;
use std::time::{Duration, Instant};

use arbiter_http::server::{AppState, ServerConfig};
use arbiter_ladder::matches;
use arbiter_ladder::replays;
use tokio::sync::watch;

const LADDER: &str = "skirmish:standard";
/// The house pair: the two strongest, so both games last.
const BOTS: [&str; 2] = ["skirmish-economy", "skirmish-defence"];
/// The target for a whole match's frames.
const TARGET_MS: f64 = 50.0;

fn main() {
    let runs = std::env::var("ARBITER_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(5)
        .max(1);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    runtime.block_on(bench(runs));
}

async fn bench(runs: usize) {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let core = ladder::open_core(dir.path()).await;
    let started = Instant::now();
    let id = ladder::play_one(&core, LADDER, BOTS, 43, "bench-frames").await;
    println!(
        "frames benchmark: {} vs {} on {LADDER}, match {id} played and recorded in {:.1} s; {runs} runs per figure",
        BOTS[0],
        BOTS[1],
        started.elapsed().as_secs_f64()
    );
    let app = arbiter_http::router::app(AppState {
        core: core.clone(),
        config: Arc::new(ServerConfig::default()),
        streams: Default::default(),
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("a socket");
    let base = format!("http://{}", listener.local_addr().expect("an address"));
    let (stop_http, stopped) = watch::channel(false);
    let server = tokio::spawn(arbiter_http::server::serve_http(listener, app, stopped));
    arbiter_ladder::install_tls_provider();
    let app = Client {
        base,
        http: reqwest::Client::builder().no_proxy().build().expect("an HTTP client"),
    };

    // 1. Frames.
    let mut baseline = Vec::new();
    let mut plain_bytes = [0; 2];
    for _ in 0..runs {
        let started = Instant::now();
        for (game, size) in plain_bytes.iter_mut().enumerate() {
            *size = matches::frames_json_recomputed(&core, id, game)
                .await
                .expect("the frames re-simulate")
                .len();
        }
        baseline.push(started.elapsed());
    }
    let started = Instant::now();
    for game in ["1", "2"] {
        get(&app, &format!("/api/matches/{id}/frames?game={game}"), false).await;
    }
    let first = started.elapsed();
    let key = matches::replay_key(&core.db, id).await.expect("a replay");
    let mut stored = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        for game in 1..=2 {
            replays::read_derived(&core.db, &replays::derived_key(&key, &format!("frames-{game}.json")))
                .await
                .expect("the database answers")
                .expect("the frames are kept");
        }
        stored.push(started.elapsed());
    }
    let mut cached = Vec::new();
    let mut cached_gzip = Vec::new();
    let mut gzip_bytes = 0;
    for _ in 0..runs {
        for (times, gzip) in [(&mut cached, false), (&mut cached_gzip, true)] {
            let started = Instant::now();
            let mut bytes = 0;
            for game in ["1", "2"] {
                bytes += get(&app, &format!("/api/matches/{id}/frames?game={game}"), gzip)
                    .await
                    .len();
            }
            times.push(started.elapsed());
            if gzip {
                gzip_bytes = bytes;
            }
        }
    }
    let baseline = median(&baseline);
    let cached_ms = median(&cached);
    println!(
        "frames of both games ({} + {} bytes of JSON; {gzip_bytes} bytes gzipped):",
        plain_bytes[0], plain_bytes[1]
    );
    println!(
        "  {:<52} {:>9.1} ms",
        "before: re-simulated from the replay per request", baseline
    );
    println!(
        "  {:<52} {:>9.1} ms",
        "first request now (re-simulated, then kept)",
        ms(first)
    );
    println!(
        "  {:<52} {:>9.1} ms",
        "read back from the database (after a restart)",
        median(&stored)
    );
    println!("  {:<52} {:>9.1} ms", "after: served from the cache", cached_ms);
    println!(
        "  {:<52} {:>9.1} ms",
        "after: served from the cache, gzip",
        median(&cached_gzip)
    );
    println!(
        "  before / after: {:.0}x; after (gzip) {} the {TARGET_MS:.0} ms target",
        baseline / cached_ms,
        if median(&cached_gzip) <= TARGET_MS {
            "meets"
        } else {
            "misses"
        }
    );

    // 2. Training data.
    let mut jsonl = Vec::new();
    let mut jsonl_bytes = 0;
    for _ in 0..runs.min(3) {
        let started = Instant::now();
        jsonl_bytes = matches::training_jsonl(&core, id)
            .await
            .expect("the training data")
            .len();
        jsonl.push(started.elapsed());
    }
    let started = Instant::now();
    let gz = get(&app, &format!("/api/matches/{id}/training.jsonl.gz"), false).await;
    let gz_first = started.elapsed();
    let mut gz_kept = Vec::new();
    for _ in 0..runs {
        let started = Instant::now();
        get(&app, &format!("/api/matches/{id}/training.jsonl.gz"), false).await;
        gz_kept.push(started.elapsed());
    }
    println!("training data:");
    println!(
        "  {:<52} {:>9.1} ms  {:>6.1} MB",
        "training.jsonl, re-simulated per request",
        median(&jsonl),
        jsonl_bytes as f64 / 1e6
    );
    println!(
        "  {:<52} {:>9.1} ms  {:>6.2} MB ({:.1}% of the JSONL)",
        "training.jsonl.gz, first request (made, then kept)",
        ms(gz_first),
        gz.len() as f64 / 1e6,
        100.0 * gz.len() as f64 / jsonl_bytes as f64
    );
    println!(
        "  {:<52} {:>9.1} ms",
        "training.jsonl.gz, afterwards (read back)",
        median(&gz_kept)
    );
    let _ = stop_http.send(true);
    let _ = server.await;
}

/// The server on its socket.
struct Client {
    base: String,
    http: reqwest::Client,
}

/// GET `uri` from the server, asking for gzip or not; the body as sent.
async fn get(client: &Client, uri: &str, gzip: bool) -> Vec<u8> {
    let mut request = client.http.get(format!("{}{uri}", client.base));
    if gzip {
        request = request.header("accept-encoding", "gzip");
    }
    let response = request.send().await.expect("an answer");
    assert!(response.status().is_success(), "{uri}: {}", response.status());
    response.bytes().await.expect("the body").to_vec()
}

fn ms(time: Duration) -> f64 {
    time.as_secs_f64() * 1e3
}

/// The median, in milliseconds.
fn median(times: &[Duration]) -> f64 {
    let mut ms: Vec<f64> = times.iter().copied().map(ms).collect();
    ms.sort_by(f64::total_cmp);
    ms[ms.len() / 2]
}
