//! Load on the agent API: 50 agent bots (simulated connectors in this test
//! process) stream, poll, accept automatic challenges and play first legal
//! moves against one `arbiter serve` while its worker plays the sandboxed
//! ladders. Nothing may answer 5xx, and every match the clients saw end is
//! recorded once and rated once.
//!
//! `AGENT_LOAD_SECONDS` sets how long the bots play (default 20, then on
//! until three matches have ended; the figures in the closing notes come
//! from 120). The latencies are printed
//! (`--nocapture`), not asserted: speed is measured, not tested.

mod support;

use serde_json::{Value, json};
use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use support::StatusCode;

const BOTS: usize = 50;
const USERS: usize = 5;

#[derive(Default)]
struct Tally {
    poll_ms: Vec<f64>,
    move_ms: Vec<f64>,
    stream_ms: Vec<f64>,
    server_errors: Vec<String>,
    statuses: BTreeMap<u16, usize>,
    finished: HashSet<i64>,
    moves: usize,
}

fn percentile(values: &mut [f64], p: f64) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    values.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * (values.len() - 1) as f64).round() as usize;
    values[rank.min(values.len() - 1)]
}

async fn call(http: &reqwest::Client, url: &str, token: &str, body: &Value, tally: &Mutex<Tally>) -> Option<Value> {
    let start = Instant::now();
    let response = http.post(url).bearer_auth(token).json(body).send().await;
    let took = start.elapsed().as_secs_f64() * 1000.0;
    let response = match response {
        Ok(response) => response,
        Err(error) => {
            let what = format!("{}: {error}", body["action"]);
            tally.lock().expect("tally").server_errors.push(what);
            return None;
        }
    };
    let status = response.status().as_u16();
    {
        let mut tally = tally.lock().expect("tally");
        *tally.statuses.entry(status).or_default() += 1;
        match body["action"].as_str() {
            Some("agent_poll") => tally.poll_ms.push(took),
            Some("agent_move") => tally.move_ms.push(took),
            _ => {}
        }
        if status >= 500 {
            tally.server_errors.push(format!("{}: HTTP {status}", body["action"]));
        }
    }
    response.json().await.ok()
}

/// One simulated connector: a stream that wakes it, a poll on every event
/// and every second, an accept for every challenge, a first legal move
/// wherever it is to move.
async fn connector(base: String, token: String, stop: Arc<AtomicBool>, tally: Arc<Mutex<Tally>>) {
    let http = reqwest::Client::builder().no_proxy().build().expect("a client");
    let url = format!("{base}/api/agent");
    let wake = Arc::new(tokio::sync::Notify::new());
    let stream = {
        let (http, token, wake, tally) = (http.clone(), token.clone(), wake.clone(), tally.clone());
        let stream_url = format!("{base}/api/agent/stream");
        tokio::spawn(async move {
            let Ok(mut response) = http.get(&stream_url).bearer_auth(&token).send().await else {
                return;
            };
            if response.status() != StatusCode::OK {
                tally
                    .lock()
                    .expect("tally")
                    .server_errors
                    .push(format!("stream: HTTP {}", response.status()));
                return;
            }
            let mut pending = Vec::new();
            while let Ok(Some(chunk)) = response.chunk().await {
                pending.extend_from_slice(&chunk);
                while let Some(end) = pending.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(event) = serde_json::from_slice::<Value>(&line) {
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0.0, |d| d.as_secs_f64() * 1000.0);
                        if event["type"] == "match"
                            && let Some(sent) = event["server_now_ms"].as_f64()
                        {
                            tally.lock().expect("tally").stream_ms.push((now - sent).max(0.0));
                        }
                        wake.notify_one();
                    }
                }
            }
        })
    };
    let mut answered: HashSet<(i64, usize, i64)> = HashSet::new();
    while !stop.load(Ordering::SeqCst) {
        let Some(polled) = call(&http, &url, &token, &json!({ "action": "agent_poll" }), &tally).await else {
            tokio::time::sleep(Duration::from_millis(500)).await;
            continue;
        };
        let me = polled["bot"]["id"].clone();
        for m in polled["matches"].as_array().into_iter().flatten() {
            let id = m["id"].as_i64().unwrap_or(0);
            match m["status"].as_str() {
                Some("pending") if m["bot_b"] == me => {
                    call(
                        &http,
                        &url,
                        &token,
                        &json!({ "action": "agent_accept", "match_id": id }),
                        &tally,
                    )
                    .await;
                }
                Some("finished") => {
                    tally.lock().expect("tally").finished.insert(id);
                }
                Some("running") => {
                    let mine = if m["bot_a"] == me { 0 } else { 1 };
                    for (index, leg) in m["state"]["legs"].as_array().into_iter().flatten().enumerate() {
                        let black = leg["black_participant"].as_i64().unwrap_or(0);
                        let mover = if leg["turn"] == json!(1) { black } else { 1 - black };
                        let revision = leg["revision"].as_i64().unwrap_or(0);
                        if leg["status"] != "active" || mover != mine || !answered.insert((id, index, revision)) {
                            continue;
                        }
                        let square = leg["legal_moves"].as_array().and_then(|l| l.first()).cloned();
                        let body = json!({ "action": "agent_move", "match_id": id, "leg": index,
                            "revision": revision, "move": square.unwrap_or(json!("pass")) });
                        if call(&http, &url, &token, &body, &tally).await.is_some() {
                            tally.lock().expect("tally").moves += 1;
                        }
                    }
                }
                _ => {}
            }
        }
        let _ = tokio::time::timeout(Duration::from_secs(1), wake.notified()).await;
    }
    stream.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_agent_bots_stream_and_poll_while_the_ladders_play() {
    let seconds: u64 = std::env::var("AGENT_LOAD_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let server = support::Options::default().workers(1).schedule(true).start().await;
    let mut tokens = Vec::new();
    for user in 0..USERS {
        let client = server.signup(&format!("load{user}")).await;
        for n in 0..BOTS / USERS {
            let name = format!("agent-{user}-{n}");
            let form = reqwest::multipart::Form::new()
                .text("name", name.clone())
                .text("ladders", "othello:std")
                .text("agent", "true");
            let (status, body) = client.post_multipart("/api/bots", form).await;
            assert_eq!(status, StatusCode::ACCEPTED, "{body}");
            let (status, issued) = client.post_json(&format!("/api/bots/{name}/token"), &json!({})).await;
            assert_eq!(status, StatusCode::OK, "{issued}");
            tokens.push(issued["token"].as_str().expect("a token").to_owned());
        }
    }
    let db = server.db().await;
    let sandboxed_before: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished' AND ladder NOT LIKE 'remote:%'")
            .fetch_one(&db.pool)
            .await
            .expect("a count");
    let tally = Arc::new(Mutex::new(Tally::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let base = server.url("");
    let started = Instant::now();
    let clients: Vec<_> = tokens
        .into_iter()
        .map(|token| tokio::spawn(connector(base.clone(), token, stop.clone(), tally.clone())))
        .collect();
    // The time asked for, then (on a slow machine) until a few matches
    // have ended, so that their recording is checked.
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    while tally.lock().expect("tally").finished.len() < 3 && started.elapsed() < Duration::from_secs(seconds + 180) {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let seconds = started.elapsed().as_secs();
    stop.store(true, Ordering::SeqCst);
    for client in clients {
        client.await.expect("a connector ends");
    }
    let sandboxed_after: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE status = 'finished' AND ladder NOT LIKE 'remote:%'")
            .fetch_one(&db.pool)
            .await
            .expect("a count");
    let sandboxed: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT ladder, status, COUNT(*) FROM matches WHERE ladder NOT LIKE 'remote:%' GROUP BY ladder, status",
    )
    .fetch_all(&db.pool)
    .await
    .expect("counts");
    // The hall's matches take no worker and count against no cap: the
    // scheduler keeps the sandboxed ladders supplied throughout.
    let in_flight: i64 = sandboxed
        .iter()
        .filter(|(_, status, _)| status == "queued" || status == "running")
        .map(|(_, _, n)| n)
        .sum();
    assert!(in_flight > 0, "sandboxed ladders at the end: {sandboxed:?}");
    let mut tally = std::mem::take(&mut *tally.lock().expect("tally"));
    let (polls, moves) = (tally.poll_ms.len(), tally.moves);
    let report = format!(
        "{seconds} s, {BOTS} agent bots: {polls} polls (p50 {:.1} ms, p99 {:.1} ms), {moves} moves (p50 {:.1} ms, \
         p99 {:.1} ms), {} stream match events (delivery p50 {:.1} ms, p99 {:.1} ms), {} agent matches finished, \
         {} sandboxed ladder matches finished meanwhile; statuses {:?}",
        percentile(&mut tally.poll_ms, 50.0),
        percentile(&mut tally.poll_ms, 99.0),
        percentile(&mut tally.move_ms, 50.0),
        percentile(&mut tally.move_ms, 99.0),
        tally.stream_ms.len(),
        percentile(&mut tally.stream_ms, 50.0),
        percentile(&mut tally.stream_ms, 99.0),
        tally.finished.len(),
        sandboxed_after - sandboxed_before,
        tally.statuses,
    );
    println!("agent load: {report}");
    assert!(tally.server_errors.is_empty(), "{:?}\n{report}", tally.server_errors);
    assert!(moves > 0 && !tally.finished.is_empty(), "the bots played: {report}");
    assert!(
        sandboxed_after > sandboxed_before,
        "the sandboxed ladders played meanwhile: {report}"
    );

    // Every match a client saw finished is recorded once, and every
    // agent bot's rating counts exactly its recorded rated matches.
    let finished: Vec<i64> = tally.finished.iter().copied().collect();
    for id in &finished {
        let status: String = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let status: String = sqlx::query_scalar("SELECT status FROM matches WHERE id = $1")
                    .bind(id)
                    .fetch_one(&db.pool)
                    .await
                    .expect("the row");
                if status != "running" {
                    return status;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("recorded");
        assert_eq!(status, "finished", "match {id}");
    }
    let mismatched: Vec<(i64, i64, i64)> = sqlx::query_as(
        "SELECT v.id, r.wins + r.draws + r.losses, \
           (SELECT COUNT(*) FROM matches m WHERE m.status = 'finished' AND m.ladder = 'remote:othello:std' \
              AND m.kind = 'ranked' AND (m.a_version = v.id OR m.b_version = v.id)) \
         FROM versions v JOIN ratings r ON r.version_id = v.id AND r.ladder = 'remote:othello:std' WHERE v.agent = 1",
    )
    .fetch_all(&db.pool)
    .await
    .expect("ratings");
    let mismatched: Vec<_> = mismatched
        .into_iter()
        .filter(|(_, rated, played)| rated != played)
        .collect();
    assert!(mismatched.is_empty(), "rated ≠ recorded: {mismatched:?}");
}
