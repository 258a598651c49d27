//! `arbiter connect`: the connector of an agent bot (FlipSight's
//! `bot_match_client.py`, `docs/spec/remote.md`). It holds the bot token,
//! listens to the event stream (polling alone when the stream is down),
//! accepts challenges, and asks a local engine for each move.
//!
//! What it guarantees:
//!
//! - the token is read from `ARBITER_BOT_TOKEN` only, and sent in the
//!   `Authorization` header only;
//! - each (match, leg, revision) is answered at most once; a move the
//!   server refuses as stale is dropped, never resent;
//! - the engine gets the engine JSON a sandboxed bot gets, with `budget_ms`
//!   the per-move limit: `--max-think-seconds`, never beyond the leg's
//!   clock minus 0.75 s;
//! - exit codes: 0 when done (`--once-match` ended), 2 when the token is
//!   refused, 3 when `--max-runtime` is reached;
//! - every line it prints starts with the time (UTC, RFC 3339 with
//!   milliseconds); it says how each match it plays ends (aborted, with the
//!   reason), when the stream drops and it polls instead, and when the
//!   stream or the server is back, after how long.

use anyhow::{Context, bail};
use arbiter_referee::native::{NativeCommand, NativeProcess};
use arbiter_referee::{GameSetup, Player};
use serde_json::{Value, json};
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader};
use std::process::ExitCode;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant, SystemTime};

/// Prints one line on stdout, after the time.
macro_rules! say {
    ($($arg:tt)*) => {
        println!("{} {}", timestamp(SystemTime::now()), format_args!($($arg)*))
    };
}

/// Prints one line on stderr, after the time.
macro_rules! complain {
    ($($arg:tt)*) => {
        eprintln!("{} {}", timestamp(SystemTime::now()), format_args!($($arg)*))
    };
}

/// `time` in UTC, RFC 3339 with milliseconds: `2026-12-07T13:31:02.417Z`.
fn timestamp(time: SystemTime) -> String {
    let ms = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
    let (seconds, millis) = (ms.div_euclid(1000), ms.rem_euclid(1000));
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    // The proleptic Gregorian date of a day number (Howard Hinnant's
    // `civil_from_days`).
    let z = days + 719_468;
    let (era, day_of_era) = (z.div_euclid(146_097), z.rem_euclid(146_097));
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{millis:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60
    )
}

/// `error` with its causes, `what: why: why`, each said once (an HTTP
/// client's error alone says little: `error sending request`).
fn causes(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text = format!("{text}: {said}");
        }
        source = cause.source();
    }
    text
}

/// A time away, for people: `4.2 s`.
fn away(since: Instant) -> String {
    format!("{:.1} s", since.elapsed().as_secs_f64())
}

/// The environment variable that holds the bot token.
pub const TOKEN_ENV: &str = "ARBITER_BOT_TOKEN";

/// What the connector keeps of each leg's clock for the network.
const CLOCK_MARGIN_MS: i64 = 750;

/// The exit code when the server refuses the token.
const TOKEN_REFUSED: u8 = 2;
/// The exit code when `--max-runtime` is reached.
const RUNTIME_REACHED: u8 = 3;

/// Connects an agent bot to a server: listens to its event stream (or
/// polls), accepts challenges, and plays each move with a local engine that
/// reads the Othello engine JSON on stdin (FlipSight's connector, for
/// engines on your own machine). The bot token comes from ARBITER_BOT_TOKEN
#[derive(clap::Args, Debug)]
#[command(after_help = concat!(
    "The bot token is read from ARBITER_BOT_TOKEN (issue one on the bot's page; never put it on a command line).\n\n",
    "Examples:\n",
    "  export ARBITER_BOT_TOKEN=arbbot_...\n",
    "  arbiter connect --engine 'python3 examples/first_legal.py' --api https://arbiter.example.org\n",
    "  arbiter connect --engine './my-engine' --once-match 123 --max-runtime 600\n\n",
    "The engine reads one JSON request per line on stdin (the Othello engine JSON of docs/spec/othello.md)\n",
    "and answers one line {\"move\": ...}; it is kept running for the game, and started again if it exits.\n\n",
    "Exit codes: 0 done, 2 bot token refused, 3 --max-runtime reached.",
))]
pub struct Args {
    /// The engine's command line, e.g. `python3 engine.py`.
    #[arg(long)]
    engine: String,
    /// The most one move may take, in seconds (never beyond the leg's
    /// clock minus 0.75 s).
    #[arg(long, default_value_t = 10.0, value_parser = think_seconds)]
    max_think_seconds: f64,
    /// The engine's name, reported to the server (default: the command's
    /// first word).
    #[arg(long)]
    engine_name: Option<String>,
    /// The CPU's name, reported to the server.
    #[arg(long)]
    cpu_name: Option<String>,
    /// Play this match only (accept it if challenged), then exit 0.
    #[arg(long, value_name = "ID")]
    once_match: Option<i64>,
    /// Exit with code 3 after this many seconds.
    #[arg(long, value_name = "S")]
    max_runtime: Option<f64>,
    /// Poll only: no event stream.
    #[arg(long)]
    no_stream: bool,
    /// The server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    api: String,
    /// The event stream's URL (default: API/api/agent/stream).
    #[arg(long)]
    stream_url: Option<String>,
    /// Report `practice: true` (out of automatic matching, matches unrated).
    #[arg(long)]
    practice: bool,
}

fn think_seconds(text: &str) -> Result<f64, String> {
    let seconds: f64 = text
        .parse()
        .map_err(|_| format!("{text:?} is not a number of seconds"))?;
    if seconds > 0.0 && seconds <= 300.0 {
        Ok(seconds)
    } else {
        Err("--max-think-seconds is more than 0 and at most 300".into())
    }
}

/// Why a call to the server failed.
#[derive(Debug)]
enum CallError {
    /// 401: the token is not (or no longer) valid.
    Unauthorized(String),
    /// 409 and other refusals: reload the state.
    Refused(u16, String),
    /// 503, 429, network errors: back off and retry.
    Retry(String),
}

impl std::fmt::Display for CallError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CallError::Unauthorized(why) => write!(f, "token refused: {why}"),
            CallError::Refused(status, why) => write!(f, "refused ({status}): {why}"),
            CallError::Retry(why) => write!(f, "{why}"),
        }
    }
}

/// The agent API's client.
struct Api {
    http: reqwest::blocking::Client,
    endpoint: String,
    token: String,
}

impl Api {
    fn call(&self, body: &Value) -> Result<Value, CallError> {
        let response = self
            .http
            .post(&self.endpoint)
            .bearer_auth(&self.token)
            .header("content-type", "application/json")
            .body(body.to_string())
            .send()
            .map_err(|e| CallError::Retry(format!("cannot reach {}: {}", self.endpoint, causes(&e))))?;
        let status = response.status().as_u16();
        let text = response.text().map_err(|e| CallError::Retry(causes(&e)))?;
        let answer: Value = serde_json::from_str(&text).unwrap_or_else(|_| json!({ "error": text }));
        let error = || answer["error"].as_str().unwrap_or("no reason given").to_owned();
        match status {
            200..=299 => Ok(answer),
            401 => Err(CallError::Unauthorized(error())),
            429 | 500..=599 => Err(CallError::Retry(format!("HTTP {status}: {}", error()))),
            _ => Err(CallError::Refused(status, error())),
        }
    }
}

/// What the stream thread tells the main loop.
enum StreamNews {
    /// An event (hello, match, ping): poll.
    Event,
    /// The stream is open.
    Open,
    /// The stream is closed: poll on the plain rhythm until it is open.
    Closed,
    /// The token was refused.
    Unauthorized(String),
}

/// The matches the connector is playing (from the last poll), which the
/// stream thread names when the stream drops.
type Playing = Arc<Mutex<Vec<i64>>>;

/// Listens to the event stream, reconnecting with back-off from 1 to 30 s,
/// until the main loop goes away. It says when the stream opens, drops
/// (naming the matches being played) and opens again.
fn listen(url: String, token: String, news: Sender<StreamNews>, playing: Playing) {
    let http = match reqwest::blocking::Client::builder().timeout(None::<Duration>).build() {
        Ok(http) => http,
        Err(error) => {
            complain!("stream: no HTTP client: {error}; polling only");
            let _ = news.send(StreamNews::Closed);
            return;
        }
    };
    let mut backoff = Duration::from_secs(1);
    // Since when the stream is down, and whether it was ever open.
    let mut down_since: Option<Instant> = None;
    let mut was_open = false;
    loop {
        let why = match http.get(&url).bearer_auth(&token).send() {
            Ok(response) if response.status().as_u16() == 401 => {
                let _ = news.send(StreamNews::Unauthorized(
                    response.text().unwrap_or_default().trim().to_owned(),
                ));
                return;
            }
            Ok(response) if response.status().is_success() => {
                match down_since.take() {
                    None => say!("stream: open"),
                    Some(since) if was_open => say!("stream: open again after {} away", away(since)),
                    Some(since) => say!("stream: open after {} of failed tries", away(since)),
                }
                was_open = true;
                if news.send(StreamNews::Open).is_err() {
                    return;
                }
                backoff = Duration::from_secs(1);
                let mut why = "closed by the server".to_owned();
                for line in BufReader::new(response).lines() {
                    let line = match line {
                        Ok(line) => line,
                        Err(error) => {
                            why = causes(&error);
                            break;
                        }
                    };
                    if line.trim().is_empty() {
                        continue;
                    }
                    if news.send(StreamNews::Event).is_err() {
                        return;
                    }
                }
                down_since = Some(Instant::now());
                let playing = playing.lock().unwrap_or_else(PoisonError::into_inner).clone();
                if playing.is_empty() {
                    complain!("stream: dropped ({why}); polling every 5 s until it is open again");
                } else {
                    let ids: Vec<String> = playing.iter().map(i64::to_string).collect();
                    complain!(
                        "stream: dropped during match {} ({why}); polling every second until it is open again",
                        ids.join(", ")
                    );
                }
                if news.send(StreamNews::Closed).is_err() {
                    return;
                }
                None
            }
            Ok(response) => Some(format!("HTTP {}", response.status())),
            Err(error) => Some(causes(&error)),
        };
        if let Some(why) = why {
            if down_since.is_none() {
                down_since = Some(Instant::now());
                if news.send(StreamNews::Closed).is_err() {
                    return;
                }
            }
            complain!(
                "stream: cannot open ({why}); polling meanwhile, next try in {} s",
                backoff.as_secs()
            );
        }
        std::thread::sleep(backoff);
        backoff = (backoff * 2).min(Duration::from_secs(30));
    }
}

/// One position to answer.
struct Job {
    key: (i64, usize, i64),
    request: String,
    budget_ms: u64,
    label: String,
}

/// The participant (0 or 1) to move in `leg`.
fn mover(leg: &Value) -> Option<i64> {
    let black = leg["black_participant"].as_i64()?;
    Some(if leg["turn"] == json!(1) { black } else { 1 - black })
}

/// The engine request for `leg` of match `m`, as the server's sandboxed
/// bots get it (`budget_ms` the per-move limit), and that limit.
fn engine_request(m: &Value, index: usize, leg: &Value, now: i64, max_think_ms: u64) -> anyhow::Result<(String, u64)> {
    let color = leg["turn"].as_i64().context("no turn")?;
    let clock = leg["clocks_ms"][usize::try_from(color - 1).unwrap_or(0)]
        .as_i64()
        .context("no clock")?;
    let started = leg["turn_started_ms"].as_i64().unwrap_or(now);
    let leg_started = m["state"]["started_ms"].as_i64().unwrap_or(started);
    let remaining = (clock - (now - started)).max(0);
    let budget = u64::try_from(remaining - CLOCK_MARGIN_MS)
        .unwrap_or(0)
        .min(max_think_ms)
        .max(100);
    let state = &m["state"];
    let request = json!({
        "board": leg["board"],
        "color": color,
        "legal_moves": leg["legal_moves"],
        "game_mode": m["game_mode"],
        "board_size": state["board_size"],
        "blocked_squares": state["blocked_squares"],
        "placed": leg["placed"],
        "remaining_ms": remaining,
        "match_id": m["id"],
        "leg": index,
        "revision": leg["revision"],
        "history": leg["history"].as_array().map(|history| history.iter().map(|h| json!({
            "color": h["color"], "participant": h["participant"], "move": h["move"], "at_ms": h["at_ms"].as_i64().map_or(0, |t| (t - leg_started).max(0)),
        })).collect::<Vec<_>>()).unwrap_or_default(),
        "round_no": null,
        "room_created_at": null,
        "budget_ms": budget,
    });
    // Through the engine protocol's own type: the same fields, in the same
    // order, as a sandboxed bot reads.
    let request: arbiter_games::othello::Request =
        serde_json::from_value(request).context("the match object does not make an engine request")?;
    Ok((request.to_line(), budget))
}

/// Asks `engine` (started if needed) for a move: the `move` of its reply.
fn think(command: &NativeCommand, engine: &mut Option<NativeProcess>, job: &Job, mode: &str) -> anyhow::Result<Value> {
    if engine.is_none() {
        let setup = GameSetup {
            game: "othello".to_owned(),
            mode: mode.to_owned(),
            seed: 0,
            match_id: u64::try_from(job.key.0).unwrap_or(0),
            game_index: u8::try_from(job.key.1).unwrap_or(0),
            side: 0,
            fuel_per_ms: None,
            tick_based: false,
        };
        *engine = Some(
            command
                .start(&setup)
                .map_err(|e| anyhow::anyhow!("cannot start the engine: {e}"))?,
        );
    }
    let Some(process) = engine.as_mut() else {
        bail!("no engine");
    };
    match process.turn(&job.request, job.budget_ms.saturating_mul(1000)) {
        Ok(answer) => {
            let reply: Value = serde_json::from_str(&answer.line)
                .with_context(|| format!("the engine's reply is not JSON: {:?}", answer.line))?;
            match reply.get("move") {
                Some(mv) if mv.is_i64() || mv.is_string() => Ok(mv.clone()),
                _ => bail!("the engine's reply has no `move`: {}", answer.line),
            }
        }
        Err(error) => {
            // Started afresh for the next move.
            let stderr = engine.take().map(|process| process.stderr()).unwrap_or_default();
            let stderr = String::from_utf8_lossy(&stderr);
            let stderr = stderr.trim();
            if stderr.is_empty() {
                bail!("the engine failed: {}", error.fault)
            }
            bail!("the engine failed: {} (its stderr: {stderr})", error.fault)
        }
    }
}

/// The exit code when the connector cannot go on (as `arbiter`'s other
/// errors).
const FAILED: u8 = 2;

/// `arbiter connect`: its exit code; an error that stops it is printed
/// here, with the time, like every other line.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    match connect(args) {
        Ok(code) => Ok(code),
        Err(error) => {
            complain!("arbiter connect: {error:#}");
            Ok(ExitCode::from(FAILED))
        }
    }
}

/// What [`run`] does.
fn connect(args: Args) -> anyhow::Result<ExitCode> {
    let token = std::env::var(TOKEN_ENV)
        .ok()
        .filter(|t| !t.trim().is_empty())
        .ok_or_else(|| anyhow::anyhow!("no bot token: set {TOKEN_ENV} (issue one on your bot's page)"))?;
    let command = NativeCommand::parse(&args.engine)?;
    let engine_name = args.engine_name.clone().unwrap_or_else(|| command.name().to_owned());
    let base = args.api.trim_end_matches('/').to_owned();
    let api = Api {
        http: reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .context("no HTTP client")?,
        endpoint: format!("{base}/api/agent"),
        token: token.clone(),
    };
    let started = Instant::now();
    let deadline = args.max_runtime.map(|s| started + Duration::from_secs_f64(s.max(0.0)));
    let (news_tx, news) = mpsc::channel();
    let playing: Playing = Arc::default();
    let streaming = !args.no_stream;
    if streaming {
        let url = args
            .stream_url
            .clone()
            .unwrap_or_else(|| format!("{base}/api/agent/stream"));
        let token = token.clone();
        let playing = Arc::clone(&playing);
        std::thread::spawn(move || listen(url, token, news_tx, playing));
    } else {
        drop(news_tx);
    }
    // Whether the stream is open (polls are then woken by its events).
    let mut stream_open = false;
    // The matches played at the last poll, with the opponent's name.
    let mut in_play: HashMap<i64, String> = HashMap::new();
    // Since when, and how many, polls have failed.
    let mut failing: Option<(Instant, u32)> = None;
    let max_think_ms = (args.max_think_seconds * 1000.0) as u64;
    let mut environment = json!({ "engine": engine_name, "os": std::env::consts::OS, "practice": args.practice });
    if let Some(cpu) = &args.cpu_name {
        environment["cpu"] = json!(cpu);
    }
    let poll = json!({ "action": "agent_poll", "environment": environment });
    let mut answered: HashSet<(i64, usize, i64)> = HashSet::new();
    let mut accepted: HashSet<i64> = HashSet::new();
    let mut reported: HashSet<i64> = HashSet::new();
    let mut engines: HashMap<(i64, usize), Option<NativeProcess>> = HashMap::new();
    let mut backoff = Duration::from_secs(1);
    let mut announced = false;
    loop {
        if deadline.is_some_and(|d| Instant::now() >= d) {
            say!("max runtime reached: exiting");
            return Ok(ExitCode::from(RUNTIME_REACHED));
        }
        let polled = match api.call(&poll) {
            Ok(polled) => polled,
            Err(CallError::Unauthorized(why)) => {
                complain!("arbiter connect: the server refused the bot token ({why})");
                return Ok(ExitCode::from(TOKEN_REFUSED));
            }
            Err(error) => {
                let (_, failures) = failing.get_or_insert((Instant::now(), 0));
                *failures += 1;
                let wait = match deadline {
                    Some(d) => backoff.min(d.saturating_duration_since(Instant::now())),
                    None => backoff,
                };
                complain!("poll: {error}; retrying in {:.0} s", wait.as_secs_f64());
                std::thread::sleep(wait);
                backoff = (backoff * 2).min(Duration::from_secs(30));
                continue;
            }
        };
        backoff = Duration::from_secs(1);
        if let Some((since, failures)) = failing.take() {
            let polls = if failures == 1 { "poll" } else { "polls" };
            say!(
                "server: answering again after {failures} failed {polls}, {} away",
                away(since)
            );
        }
        let me = polled["bot"]["id"].as_i64().unwrap_or(-1);
        if !announced {
            announced = true;
            say!(
                "connected as {} (bot {me}) to {base}; engine: {}",
                polled["bot"]["name"].as_str().unwrap_or("?"),
                args.engine
            );
        }
        let now = polled["server_now_ms"].as_i64().unwrap_or(0);
        let names: HashMap<i64, String> = polled["bots"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|b| Some((b["id"].as_i64()?, b["name"].as_str()?.to_owned())))
            .collect();
        let matches = polled["matches"].as_array().cloned().unwrap_or_default();
        let wanted = |id: i64| args.once_match.is_none_or(|only| only == id);
        let mut jobs = Vec::new();
        let mut now_playing: HashMap<i64, String> = HashMap::new();
        for m in &matches {
            let Some(id) = m["id"].as_i64() else { continue };
            let me_index = if m["bot_a"] == json!(me) { 0 } else { 1 };
            let opponent = m[if me_index == 0 { "bot_b" } else { "bot_a" }].as_i64().unwrap_or(0);
            let opponent = names
                .get(&opponent)
                .cloned()
                .unwrap_or_else(|| format!("bot {opponent}"));
            match m["status"].as_str().unwrap_or("") {
                "pending" if m["bot_b"] == json!(me) && wanted(id) && accepted.insert(id) => {
                    match api.call(&json!({ "action": "agent_accept", "match_id": id })) {
                        Ok(_) => {
                            say!(
                                "match {id}: accepted {opponent}'s challenge ({})",
                                m["game_mode"].as_str().unwrap_or("?")
                            );
                            now_playing.insert(id, opponent);
                        }
                        Err(error) => say!("match {id}: cannot accept: {error}"),
                    }
                }
                "running" if wanted(id) => {
                    now_playing.insert(id, opponent.clone());
                    for (index, leg) in m["state"]["legs"].as_array().into_iter().flatten().enumerate() {
                        let revision = leg["revision"].as_i64().unwrap_or(-1);
                        let key = (id, index, revision);
                        if leg["status"] != "active" || mover(leg) != Some(me_index) || answered.contains(&key) {
                            continue;
                        }
                        match engine_request(m, index, leg, now, max_think_ms) {
                            Ok((request, budget_ms)) => jobs.push((
                                m["game_mode"].as_str().unwrap_or("std").to_owned(),
                                Job {
                                    key,
                                    request,
                                    budget_ms,
                                    label: format!("match {id} vs {opponent}, leg {index}, revision {revision}"),
                                },
                            )),
                            Err(error) => complain!("match {id} leg {index}: {error:#}"),
                        }
                    }
                }
                "finished" | "aborted" | "expired" | "rejected" if reported.insert(id) && wanted(id) => {
                    engines.retain(|(match_id, _), _| *match_id != id);
                    if accepted.contains(&id) || m["status"] != "expired" {
                        say!("{}", summary(m, me_index, &opponent));
                    }
                }
                _ => {}
            }
        }
        // A match played at the last poll that the server no longer lists
        // ended unseen: the server restarted (which aborts it), or it ended
        // and left the polls while this connector was away.
        for (id, opponent) in &in_play {
            if !now_playing.contains_key(id) && !matches.iter().any(|m| m["id"] == json!(id)) && reported.insert(*id) {
                engines.retain(|(match_id, _), _| match_id != id);
                say!(
                    "match {id} vs {opponent}: no longer listed by the server (it restarted, which aborts a match, \
                     or the match ended while the connector was away); its result is on the match's page"
                );
            }
        }
        let in_match = !now_playing.is_empty();
        {
            let mut shared = playing.lock().unwrap_or_else(PoisonError::into_inner);
            *shared = now_playing.keys().copied().collect();
            shared.sort_unstable();
        }
        in_play = now_playing;
        // The legs are thought about side by side, each by its engine.
        let moves: Vec<(Job, anyhow::Result<Value>, Duration)> = std::thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .into_iter()
                .map(|(mode, job)| {
                    let mut engine = engines.remove(&(job.key.0, job.key.1)).flatten();
                    let command = &command;
                    scope.spawn(move || {
                        let clock = Instant::now();
                        let result = think(command, &mut engine, &job, &mode);
                        (job, result, clock.elapsed(), engine)
                    })
                })
                .collect();
            handles
                .into_iter()
                .filter_map(|handle| handle.join().ok())
                .map(|(job, result, took, engine)| {
                    engines.insert((job.key.0, job.key.1), engine);
                    (job, result, took)
                })
                .collect()
        });
        for (job, result, took) in moves {
            let (id, leg, revision) = job.key;
            match result {
                Ok(mv) => {
                    let sent = api.call(&json!({
                        "action": "agent_move", "match_id": id, "leg": leg, "revision": revision, "move": mv,
                    }));
                    match sent {
                        Ok(_) => say!("{}: {mv} ({:.2} s)", job.label, took.as_secs_f64()),
                        Err(CallError::Unauthorized(why)) => {
                            complain!("arbiter connect: the server refused the bot token ({why})");
                            return Ok(ExitCode::from(TOKEN_REFUSED));
                        }
                        Err(error) => say!("{}: {mv} not played: {error}", job.label),
                    }
                    // Answered, whatever the server said: never resent.
                    answered.insert(job.key);
                }
                Err(error) => say!("{}: {error:#}", job.label),
            }
        }
        if let Some(only) = args.once_match
            && reported.contains(&only)
        {
            return Ok(ExitCode::SUCCESS);
        }
        // Wait for news: a stream event, else the seed's polling rhythm.
        let wait = if stream_open {
            Duration::from_secs(10)
        } else if in_match {
            Duration::from_secs(1)
        } else {
            Duration::from_secs(5)
        };
        let wait = match deadline {
            Some(d) => wait.min(d.saturating_duration_since(Instant::now())),
            None => wait,
        };
        if let Some(code) = wait_for_news(&news, wait, &mut stream_open) {
            return Ok(code);
        }
    }
}

/// Waits up to `wait` for stream news, keeping `stream_open` up to date;
/// `Some(exit code)` when the stream says the token is refused.
fn wait_for_news(news: &Receiver<StreamNews>, wait: Duration, stream_open: &mut bool) -> Option<ExitCode> {
    let mut all = Vec::new();
    match news.recv_timeout(wait) {
        Ok(item) => all.push(item),
        Err(RecvTimeoutError::Timeout) => return None,
        // No stream (`--no-stream`, or its thread gave up): the plain
        // rhythm.
        Err(RecvTimeoutError::Disconnected) => {
            *stream_open = false;
            std::thread::sleep(wait);
            return None;
        }
    }
    all.extend(news.try_iter());
    for item in all {
        match item {
            StreamNews::Event => {}
            StreamNews::Open => *stream_open = true,
            StreamNews::Closed => *stream_open = false,
            StreamNews::Unauthorized(why) => {
                complain!("arbiter connect: the server refused the bot token ({why})");
                return Some(ExitCode::from(TOKEN_REFUSED));
            }
        }
    }
    None
}

/// A match's end, in one line: `match 12 vs NAME: ended: won 40–24
/// (discs)`, `match 12 vs NAME: aborted, unrated (no_first_move)`, with the
/// server's error text when the match object carries one.
fn summary(m: &Value, me: i64, opponent: &str) -> String {
    let id = &m["id"];
    let state = &m["state"];
    let status = m["status"].as_str().unwrap_or("?");
    let mut reason = state["finish_reason"].as_str().unwrap_or(status).to_owned();
    if let Some(error) = [&m["error"], &state["error"]]
        .into_iter()
        .find_map(|e| e.as_str().filter(|e| !e.trim().is_empty()))
    {
        reason = format!("{reason}: {}", error.trim());
    }
    let totals = [state["totals"][0].as_i64(), state["totals"][1].as_i64()];
    let (mine, theirs) = if me == 0 {
        (totals[0], totals[1])
    } else {
        (totals[1], totals[0])
    };
    match status {
        "finished" => {
            let result = match state["winner"].as_i64() {
                Some(w) if w == me => "won",
                Some(_) => "lost",
                None => "drew",
            };
            match (mine, theirs) {
                (Some(a), Some(b)) => format!("match {id} vs {opponent}: ended: {result} {a}–{b} ({reason})"),
                _ => format!("match {id} vs {opponent}: ended: {result} ({reason})"),
            }
        }
        "aborted" => format!("match {id} vs {opponent}: aborted, unrated ({reason})"),
        _ => format!("match {id} vs {opponent}: {status}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_are_utc_rfc3339_with_milliseconds() {
        let at = |ms: u64| timestamp(SystemTime::UNIX_EPOCH + Duration::from_millis(ms));
        assert_eq!(at(0), "1970-01-01T00:00:00.000Z");
        // 2026-12-07T13:31:02.417Z
        assert_eq!(at(1_796_650_262_417), "2026-12-07T13:31:02.417Z");
        // Leap days and the end of a century's year.
        assert_eq!(at(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(at(978_307_199_999), "2000-12-31T23:59:59.999Z");
    }

    #[test]
    fn ends_say_the_result_or_why_the_match_was_aborted() {
        let finished = json!({ "id": 7, "status": "finished",
            "state": { "finish_reason": "discs", "totals": [24, 40], "winner": 1 } });
        assert_eq!(summary(&finished, 1, "bea"), "match 7 vs bea: ended: won 40–24 (discs)");
        let aborted = json!({ "id": 8, "status": "aborted", "error": "the server stopped",
            "state": { "finish_reason": "no_first_move", "totals": [2, 2], "winner": null } });
        assert_eq!(
            summary(&aborted, 0, "bea"),
            "match 8 vs bea: aborted, unrated (no_first_move: the server stopped)"
        );
    }
}
