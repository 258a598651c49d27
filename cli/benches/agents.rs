//! The agent hall under a crowd of agents, as FlipSight's connectors use
//! it, against a real `arbiter serve --workers 0` over HTTP.
//!
//! N agent bots are registered in the server's database (25 users of at
//! most 20 bots each; tokens issued), then each agent runs as FlipSight's
//! documentation says a connector does: an event stream open, a poll on
//! every stream event, every second while it plays a match and every 5 s
//! while idle; when one of its legs is its turn it plays the first legal
//! move (or passes). Half the agents play: pairs challenge each other
//! (automatic matching off) and challenge again when their match ends. A
//! page reader beside them fetches the home page and the remote ladder's
//! page in turn, 5 times a second.
//!
//! Two phases, in one run: the pages alone (the baseline), then pages with
//! the agents. It prints, side by side: agent requests per second, the
//! server's CPU per agent request (its user + system time over the phase,
//! from `/proc`, divided by the agent requests), agent request p50 / p99,
//! page p50 / p99 alone and with the agents, and how many legs ended on
//! time (engines here answer at once, so none should).
//!
//! Run with `cargo bench -p arbiter --bench agents` (release build; or
//! build it in any profile and point `ARBITER_BIN` at a release `arbiter`).
//! Settings: `ARBITER_BENCH_AGENTS` (N, default 500),
//! `ARBITER_BENCH_SECONDS` (each phase, default 30). Nothing here asserts
//! on time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use arbiter_ladder::accounts::{self, Credentials};
use arbiter_ladder::core::Core;
use arbiter_ladder::ratings::RatingSystem;
use arbiter_ladder::uploads::{self, Upload};
use serde_json::{Value, json};
use std::io::BufRead;

/// The server: this build's `arbiter`, or `ARBITER_BIN` (e.g. a release
/// build's, when this bench was built for debugging).
fn arbiter() -> String {
    std::env::var("ARBITER_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_arbiter").to_owned())
}
const BOTS_PER_USER: usize = 20;

fn setting(name: &str, default: u64) -> u64 {
    std::env::var(name).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Latencies of one kind of request, in microseconds.
#[derive(Default)]
struct Latencies(std::sync::Mutex<Vec<u64>>);

impl Latencies {
    fn add(&self, took: Duration) {
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(u64::try_from(took.as_micros()).unwrap_or(u64::MAX));
    }

    /// Count, p50 and p99 in milliseconds.
    fn summary(&self) -> (usize, f64, f64) {
        let mut all = self.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner).clone();
        all.sort_unstable();
        let at = |q: f64| {
            all.get(((all.len() as f64 * q) as usize).min(all.len().saturating_sub(1)))
                .map_or(0.0, |&us| us as f64 / 1000.0)
        };
        (all.len(), at(0.5), at(0.99))
    }
}

/// The server's user + system CPU time so far.
fn cpu_of(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command's closing parenthesis: utime is the 12th,
    // stime the 13th of those (14th and 15th of the line).
    let rest = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok()).unwrap_or(0);
    // The kernel's clock ticks are 100 a second on Linux here.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

struct Agent {
    http: reqwest::Client,
    base: String,
    token: String,
    id: i64,
}

impl Agent {
    async fn call(&self, body: Value, latencies: &Latencies) -> Option<Value> {
        let start = Instant::now();
        let answer = self
            .http
            .post(format!("{}/api/agent", self.base))
            .bearer_auth(&self.token)
            .json(&body)
            .send()
            .await
            .ok()?;
        let value = answer.json::<Value>().await.ok();
        latencies.add(start.elapsed());
        value
    }
}

/// What the agents' phase counted.
#[derive(Default)]
struct Counts {
    requests: AtomicU64,
    moves: AtomicU64,
    matches_ended: AtomicU64,
    legs_on_time: AtomicU64,
}

/// One agent's loop until `stop`: stream, polls, moves, challenges.
async fn run_agent(
    agent: Arc<Agent>,
    partner: Option<i64>,
    stop: Arc<AtomicBool>,
    latencies: Arc<Latencies>,
    counts: Arc<Counts>,
) {
    let wake = Arc::new(tokio::sync::Notify::new());
    // The event stream: a poll on every event.
    let stream = {
        let (agent, wake, stop) = (agent.clone(), wake.clone(), stop.clone());
        tokio::spawn(async move {
            while !stop.load(Ordering::Relaxed) {
                let Ok(mut response) = agent
                    .http
                    .get(format!("{}/api/agent/stream", agent.base))
                    .bearer_auth(&agent.token)
                    .send()
                    .await
                else {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                };
                let mut line = Vec::new();
                while let Ok(Some(chunk)) = response.chunk().await {
                    line.extend_from_slice(&chunk);
                    if line.windows(2).any(|w| w == b"\n\n") {
                        line.clear();
                        wake.notify_one();
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                }
            }
        })
    };
    let mut current: Option<i64> = None;
    while !stop.load(Ordering::Relaxed) {
        counts.requests.fetch_add(1, Ordering::Relaxed);
        let polled = agent
            .call(
                json!({ "action": "agent_poll", "environment": { "engine": "first-legal" } }),
                &latencies,
            )
            .await;
        let mut playing = false;
        if let Some(polled) = polled {
            for m in polled["matches"].as_array().into_iter().flatten() {
                let status = m["status"].as_str().unwrap_or("");
                if status == "running" {
                    playing = true;
                    let me = if m["bot_a"] == json!(agent.id) { 0 } else { 1 };
                    for (index, leg) in m["state"]["legs"].as_array().into_iter().flatten().enumerate() {
                        let black = leg["black_participant"].as_i64().unwrap_or(0);
                        let mover = if leg["turn"] == json!(1) { black } else { 1 - black };
                        if leg["status"] != "active" || mover != me {
                            continue;
                        }
                        let square = leg["legal_moves"].as_array().and_then(|l| l.first()).cloned();
                        counts.requests.fetch_add(1, Ordering::Relaxed);
                        counts.moves.fetch_add(1, Ordering::Relaxed);
                        agent
                            .call(
                                json!({ "action": "agent_move", "match_id": m["id"], "leg": index,
                                        "revision": leg["revision"], "move": square.unwrap_or(json!("pass")) }),
                                &latencies,
                            )
                            .await;
                    }
                } else if current == m["id"].as_i64() && ["finished", "aborted"].contains(&status) {
                    current = None;
                    counts.matches_ended.fetch_add(1, Ordering::Relaxed);
                    let legs = m["state"]["legs"].as_array().cloned().unwrap_or_default();
                    let on_time = legs.iter().filter(|l| l["status"] == "timeout").count();
                    counts.legs_on_time.fetch_add(on_time as u64, Ordering::Relaxed);
                } else if status == "pending" && m["bot_b"] == json!(agent.id) {
                    counts.requests.fetch_add(1, Ordering::Relaxed);
                    agent
                        .call(json!({ "action": "agent_accept", "match_id": m["id"] }), &latencies)
                        .await;
                }
            }
        }
        if let Some(partner) = partner
            && current.is_none()
            && !playing
        {
            counts.requests.fetch_add(1, Ordering::Relaxed);
            current = agent
                .call(json!({ "action": "agent_challenge", "target_id": partner }), &latencies)
                .await
                .and_then(|answer| answer["match_id"].as_i64());
        }
        let pause = if playing || current.is_some() { 1 } else { 5 };
        tokio::select! {
            () = tokio::time::sleep(Duration::from_secs(pause)) => {}
            () = wake.notified() => {}
        }
    }
    stream.abort();
}

/// Reads pages until `stop`, 5 a second.
async fn read_pages(base: String, stop: Arc<AtomicBool>, latencies: Arc<Latencies>) {
    let http = reqwest::Client::builder().no_proxy().build().expect("a client");
    let pages = ["/", "/ladders/remote:othello:std"];
    let mut n = 0;
    while !stop.load(Ordering::Relaxed) {
        let start = Instant::now();
        if let Ok(answer) = http.get(format!("{base}{}", pages[n % 2])).send().await {
            let _ = answer.bytes().await;
            latencies.add(start.elapsed());
        }
        n += 1;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

async fn phase(
    base: &str,
    seconds: u64,
    agents: &[(Arc<Agent>, Option<i64>)],
    pid: u32,
) -> (Arc<Latencies>, Arc<Latencies>, Arc<Counts>, Duration) {
    let stop = Arc::new(AtomicBool::new(false));
    let (pages, agent_latencies, counts) = (
        Arc::new(Latencies::default()),
        Arc::new(Latencies::default()),
        Arc::new(Counts::default()),
    );
    let mut tasks = Vec::new();
    for (agent, partner) in agents {
        tasks.push(tokio::spawn(run_agent(
            agent.clone(),
            *partner,
            stop.clone(),
            agent_latencies.clone(),
            counts.clone(),
        )));
    }
    // The agents settle in before the window opens.
    if !agents.is_empty() {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    let (window_pages, window_agents) = (Arc::new(Latencies::default()), Arc::new(Latencies::default()));
    *agent_latencies
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = Vec::new();
    let requests_before = counts.requests.load(Ordering::Relaxed);
    let reader = tokio::spawn(read_pages(base.to_owned(), stop.clone(), window_pages.clone()));
    let cpu_before = cpu_of(pid);
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    let cpu = cpu_of(pid).saturating_sub(cpu_before);
    let requests = counts.requests.load(Ordering::Relaxed) - requests_before;
    stop.store(true, Ordering::Relaxed);
    let _ = reader.await;
    for task in tasks {
        task.abort();
    }
    *window_agents
        .0
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner) = std::mem::take(
        &mut *agent_latencies
            .0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    counts.requests.store(requests, Ordering::Relaxed);
    let _ = pages;
    (window_pages, window_agents, counts, cpu)
}

fn main() {
    let n = setting("ARBITER_BENCH_AGENTS", 500) as usize;
    let seconds = setting("ARBITER_BENCH_SECONDS", 30);
    arbiter_ladder::install_tls_provider();
    let dir = tempfile::tempdir().expect("a temporary folder");
    let data = dir.path().join("data");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        // The bots, written where the server will read them.
        let core = Core::open(
            &data,
            None,
            None,
            RatingSystem::Glicko2,
            arbiter_sandbox::CompilerCommand::embedded_in(arbiter()),
        )
        .await
        .expect("the data folder opens");
        arbiter_ladder::house::seed(&core).await.expect("house bots");
        let mut registered = Vec::new();
        for user in 0..n.div_ceil(BOTS_PER_USER) {
            let name = format!("bench{user}");
            let signed = accounts::sign_up(
                &core,
                &format!("10.{}.0.1", user % 250),
                &Credentials {
                    name: name.clone(),
                    password: "bench-password-1".to_owned(),
                },
                None,
            )
            .await
            .expect("a user");
            for b in 0..BOTS_PER_USER.min(n - user * BOTS_PER_USER) {
                let bot = format!("agent-{user}-{b}");
                let uploaded = uploads::upload(
                    &core,
                    signed.user_id,
                    Upload {
                        name: Some(bot.clone()),
                        ladders: vec!["othello:std".to_owned()],
                        module: None,
                        url: None,
                        agent: true,
                    },
                )
                .await
                .expect("an agent bot");
                sqlx::query("UPDATE bots SET auto_match = 0 WHERE id = $1")
                    .bind(uploaded.bot_id)
                    .execute(&core.db.pool)
                    .await
                    .expect("automatic matching off");
                let token = arbiter_ladder::agent::tokens::issue(&core.db, signed.user_id, &bot)
                    .await
                    .expect("a token");
                registered.push((uploaded.bot_id, token));
            }
        }
        drop(core);

        let mut server = std::process::Command::new(arbiter())
            .args(["serve", "--workers", "0", "--listen", "127.0.0.1:0", "--data"])
            .arg(&data)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("arbiter serve starts");
        let stdout = server.stdout.take().expect("its output");
        let mut base = String::new();
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(at) = line.find("http://") {
                base = line[at..].trim().to_owned();
                break;
            }
        }
        let pid = server.id();
        let http = reqwest::Client::builder()
            .no_proxy()
            .pool_max_idle_per_host(4)
            .build()
            .expect("a client");
        let agents: Vec<(Arc<Agent>, Option<i64>)> = registered
            .iter()
            .enumerate()
            .map(|(i, (id, token))| {
                let agent = Arc::new(Agent {
                    http: http.clone(),
                    base: base.clone(),
                    token: token.clone(),
                    id: *id,
                });
                // The first half plays: even ones challenge the next.
                let partner = (i < n / 2 && i % 2 == 0).then(|| registered.get(i + 1).map(|(id, _)| *id)).flatten();
                (agent, partner)
            })
            .collect();

        println!("arbiter serve --workers 0 at {base}; {n} agents, {seconds} s per phase");
        let (alone, _, _, cpu_alone) = phase(&base, seconds, &[], pid).await;
        let (pages, agent_latencies, counts, cpu) = phase(&base, seconds, &agents, pid).await;
        let _ = server.kill();
        let _ = server.wait();

        let (_, alone50, alone99) = alone.summary();
        let (_, page50, page99) = pages.summary();
        let (answered, agent50, agent99) = agent_latencies.summary();
        let requests = counts.requests.load(Ordering::Relaxed).max(1);
        println!();
        println!("| online agents | agent requests/s | server CPU per agent request | agent p50 / p99 | page p50 / p99 alone | page p50 / p99 with agents | moves | matches ended | legs lost on time |");
        println!("|---|---|---|---|---|---|---|---|---|");
        println!(
            "| {n} | {:.0} | {:.2} ms | {agent50:.1} / {agent99:.1} ms | {alone50:.1} / {alone99:.1} ms | {page50:.1} / {page99:.1} ms | {} | {} | {} |",
            answered as f64 / seconds as f64,
            cpu.saturating_sub(cpu_alone).as_secs_f64() * 1000.0 / requests as f64,
            counts.moves.load(Ordering::Relaxed),
            counts.matches_ended.load(Ordering::Relaxed),
            counts.legs_on_time.load(Ordering::Relaxed),
        );
        println!(
            "(server CPU: {:.1} s with the agents, {:.1} s with the pages alone, over {seconds} s each)",
            cpu.as_secs_f64(),
            cpu_alone.as_secs_f64()
        );
    });
}
