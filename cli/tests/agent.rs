//! Agent bots (FlipSight's agent API) against a real `arbiter serve`: a
//! scripted client written from `docs/spec/remote.md` alone (plain HTTP
//! and JSON, nothing of the server's code) registers two agent bots, gets
//! their tokens, challenges, accepts and plays both legs to the end with
//! its own passes, and meets the API's refusals on the way.

mod support;

use serde_json::{Value, json};
use std::time::{Duration, Instant};
use support::{StatusCode, TestServer, backends};

/// One agent bot's connector, as a stranger would write it.
#[derive(Clone)]
struct Agent {
    http: reqwest::Client,
    base: String,
    token: String,
}

impl Agent {
    fn new(server: &TestServer, token: &str) -> Agent {
        Agent {
            http: reqwest::Client::builder().no_proxy().build().expect("a client"),
            base: server.url(""),
            token: token.to_owned(),
        }
    }

    /// `POST /api/agent` with `body`: the status and the JSON answer, which
    /// always carries `server_now_ms`.
    async fn call(&self, body: Value) -> (StatusCode, Value) {
        let (status, answer) = self.call_raw(&body).await;
        assert!(answer["server_now_ms"].is_i64(), "{body} → {answer}");
        assert_eq!(answer["ok"], json!(status.is_success()), "{body} → {answer}");
        (status, answer)
    }

    /// `POST /api/agent` with `body`: the status and the JSON answer,
    /// unchecked.
    async fn call_raw(&self, body: &Value) -> (StatusCode, Value) {
        let response = self
            .http
            .post(format!("{}/api/agent", self.base))
            .bearer_auth(&self.token)
            .json(body)
            .send()
            .await
            .expect("an answer");
        let status = response.status();
        let answer: Value = response.json().await.expect("a JSON answer");
        (status, answer)
    }

    async fn ok(&self, body: Value) -> Value {
        let (status, answer) = self.call(body.clone()).await;
        assert_eq!(status, StatusCode::OK, "{body} → {answer}");
        answer
    }

    async fn poll(&self) -> Value {
        self.ok(json!({ "action": "agent_poll", "environment": { "cpu": "test", "engine": "first-legal" } }))
            .await
    }

    async fn refused(&self, body: Value, status: StatusCode, error: &str) {
        let (got, answer) = self.call(body.clone()).await;
        assert_eq!(
            (got, answer["error"].as_str()),
            (status, Some(error)),
            "{body} → {answer}"
        );
    }

    /// `GET /api/agent/stream`: the answer, its body unread.
    async fn stream(&self) -> reqwest::Response {
        self.http
            .get(format!("{}/api/agent/stream", self.base))
            .bearer_auth(&self.token)
            .send()
            .await
            .expect("an answer")
    }
}

/// The participant (0 or 1) to move in `leg`, from the colour to move and
/// who is black.
fn mover(leg: &Value) -> i64 {
    let black = leg["black_participant"].as_i64().expect("black_participant");
    if leg["turn"] == json!(1) { black } else { 1 - black }
}

/// Registers `name` as an agent bot of `user` and issues its token.
async fn agent_bot(server: &TestServer, user: &str, name: &str) -> (i64, String, support::Client) {
    let client = server.signup(user).await;
    let form = reqwest::multipart::Form::new()
        .text("name", name.to_owned())
        .text("ladders", "othello:std,othello:anti")
        .text("agent", "true");
    let (status, body) = client.post_multipart("/api/bots", form).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["version"]["status"], "active", "{body}");
    assert_eq!(
        body["version"]["ladders"],
        json!(["remote:othello:std", "remote:othello:anti"]),
        "{body}"
    );
    let (status, issued) = client.post_json(&format!("/api/bots/{name}/token"), &json!({})).await;
    assert_eq!(status, StatusCode::OK, "{issued}");
    let token = issued["token"].as_str().expect("a token").to_owned();
    assert!(token.starts_with("arbbot_"), "{token}");
    (body["bot"]["id"].as_i64().expect("an id"), token, client)
}

/// Two agent bots, ann's and bea's, with automatic matching off (only the
/// matches the test makes), and their connectors.
async fn ann_and_bea(server: &TestServer) -> ((i64, Agent), (i64, Agent)) {
    let (ann_id, ann_token, ann_user) = agent_bot(server, "ann", "ann-engine").await;
    let (bea_id, bea_token, bea_user) = agent_bot(server, "bea", "bea-engine").await;
    for (user, name) in [(&ann_user, "ann-engine"), (&bea_user, "bea-engine")] {
        let (status, body) = user
            .send_json(
                support::Method::PUT,
                &format!("/api/bots/{name}/profile"),
                &json!({ "auto_match": false }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    (
        (ann_id, Agent::new(server, &ann_token)),
        (bea_id, Agent::new(server, &bea_token)),
    )
}

/// The house bot `othello-greedy` among a poll's bots.
fn greedy(polled: &Value) -> Value {
    polled["bots"]
        .as_array()
        .and_then(|bots| bots.iter().find(|b| b["name"] == "othello-greedy"))
        .unwrap_or_else(|| panic!("othello-greedy among the bots: {polled}"))
        .clone()
}

/// The match `id` as `agent` polls it.
async fn polled_match(agent: &Agent, id: i64) -> Value {
    let polled = agent.poll().await;
    polled["matches"]
        .as_array()
        .and_then(|matches| matches.iter().find(|m| m["id"] == json!(id)).cloned())
        .unwrap_or_else(|| panic!("match {id} is not in the poll: {polled}"))
}

/// Plays `id` to its end for the bots in `agents` (each with its bot id):
/// every position where a bot is to move gets its first legal move, or its
/// pass. Returns the ended match object.
async fn play_out(agents: &[(i64, &Agent)], id: i64, limit: Duration) -> Value {
    play_until(agents, id, limit, None, |m| {
        ["finished", "aborted"].contains(&m["status"].as_str().unwrap_or(""))
    })
    .await
}

/// As [`play_out`], with the bot `idle` (bot id, leg) never moving in that
/// leg, until `done` holds of the match object.
async fn play_until(
    agents: &[(i64, &Agent)],
    id: i64,
    limit: Duration,
    idle: Option<(i64, usize)>,
    done: impl Fn(&Value) -> bool,
) -> Value {
    let start = Instant::now();
    loop {
        assert!(start.elapsed() < limit, "match {id} did not end within {limit:?}");
        let mut last = Value::Null;
        for &(bot, agent) in agents {
            let m = polled_match(agent, id).await;
            let me = if m["bot_a"] == json!(bot) { 0 } else { 1 };
            for (index, leg) in m["state"]["legs"].as_array().into_iter().flatten().enumerate() {
                if leg["status"] != "active" || mover(leg) != me || idle == Some((bot, index)) {
                    continue;
                }
                let square = leg["legal_moves"].as_array().and_then(|moves| moves.first()).cloned();
                let (status, answer) = agent
                    .call(json!({
                        "action": "agent_move", "match_id": id, "leg": index,
                        "revision": leg["revision"], "move": square.unwrap_or(json!("pass")),
                    }))
                    .await;
                // A house bot or the other leg may have moved meanwhile:
                // only the seed's "reload" refusals are expected.
                assert!(
                    status == StatusCode::OK || status == StatusCode::CONFLICT,
                    "{status}: {answer}"
                );
            }
            last = m;
        }
        if done(&last) {
            return last;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_scripted_client_plays_both_legs_and_meets_every_refusal() {
    for backend in backends() {
        let server = TestServer::start_with(backend).await;
        let (ann_id, ann_token, ann_user) = agent_bot(&server, "ann", "ann-engine").await;
        let (bea_id, bea_token, _) = agent_bot(&server, "bea", "bea-engine").await;
        let ann = Agent::new(&server, &ann_token);
        let bea = Agent::new(&server, &bea_token);

        // Bad requests, in the seed's words.
        for (body, error) in [
            (json!([1]), "JSON object required"),
            (json!({ "action": "dance" }), "unknown action"),
        ] {
            let (status, answer) = ann.call(body).await;
            assert_eq!(status, StatusCode::BAD_REQUEST, "{answer}");
            assert!(answer["error"].as_str().unwrap_or("").starts_with(error), "{answer}");
        }

        // Both are online; each sees the other and the house bots.
        let polled = bea.poll().await;
        let seen = ann.poll().await;
        let others = seen["bots"].as_array().expect("bots");
        let bea_seen = others
            .iter()
            .find(|b| b["id"] == json!(bea_id))
            .expect("bea in the bots");
        assert_eq!(bea_seen["online"], true, "{bea_seen}");
        assert!(others.iter().any(|b| b["is_builtin"] == true), "house bots: {seen}");
        assert_eq!(seen["bot"]["id"], json!(ann_id), "{seen}");
        assert_eq!(polled["bot"]["name"], "bea-engine", "{polled}");

        ann.refused(
            json!({ "action": "agent_challenge", "target_name": "bea-engine", "game_mode": "grand" }),
            StatusCode::CONFLICT,
            "unsupported game mode",
        )
        .await;
        ann.refused(
            json!({ "action": "agent_challenge", "target_name": "nobody-here" }),
            StatusCode::CONFLICT,
            "target bot not found",
        )
        .await;
        let challenged = ann
            .ok(json!({ "action": "agent_challenge", "target_name": "bea-engine" }))
            .await;
        let id = challenged["match_id"].as_i64().expect("a match id");
        // Only bot_b accepts.
        ann.refused(
            json!({ "action": "agent_accept", "match_id": id }),
            StatusCode::CONFLICT,
            "challenge expired or answered",
        )
        .await;
        let pending = polled_match(&bea, id).await;
        assert_eq!(
            (pending["status"].as_str(), &pending["bot_b"]),
            (Some("pending"), &json!(bea_id))
        );
        let accepted = bea.ok(json!({ "action": "agent_accept", "match_id": id })).await;
        assert_eq!(accepted["match"]["status"], "running", "{accepted}");

        // Two legs from one opening, colours swapped.
        let running = polled_match(&ann, id).await;
        let legs = running["state"]["legs"].as_array().expect("two legs").clone();
        assert_eq!(legs.len(), 2, "{running}");
        assert_eq!(legs[0]["board"], legs[1]["board"], "one opening");
        assert_ne!(legs[0]["black_participant"], legs[1]["black_participant"]);

        // In the leg where ann is not to move: not_your_turn. Where she is:
        // stale_revision, then illegal_move, the board unchanged by both.
        let theirs = legs
            .iter()
            .position(|leg| mover(leg) == 1)
            .expect("bea moves in one leg");
        let mine = 1 - theirs;
        let leg = &legs[mine];
        ann.refused(
            json!({ "action": "agent_move", "match_id": id, "leg": theirs,
                    "revision": legs[theirs]["revision"], "move": legs[theirs]["legal_moves"][0] }),
            StatusCode::CONFLICT,
            "not_your_turn",
        )
        .await;
        let revision = leg["revision"].as_i64().expect("a revision");
        ann.refused(
            json!({ "action": "agent_move", "match_id": id, "leg": mine, "revision": revision + 1,
                    "move": leg["legal_moves"][0] }),
            StatusCode::CONFLICT,
            "stale_revision",
        )
        .await;
        let legal: Vec<i64> = leg["legal_moves"]
            .as_array()
            .expect("legal moves")
            .iter()
            .filter_map(Value::as_i64)
            .collect();
        let illegal = (0..64)
            .find(|square| !legal.contains(square))
            .expect("an illegal square");
        ann.refused(
            json!({ "action": "agent_move", "match_id": id, "leg": mine, "revision": revision, "move": illegal }),
            StatusCode::CONFLICT,
            "illegal_move",
        )
        .await;
        let after = polled_match(&ann, id).await;
        assert_eq!(
            after["state"]["legs"][mine]["board"], leg["board"],
            "an illegal move changes nothing"
        );
        assert_eq!(after["state"]["legs"][mine]["revision"], leg["revision"]);

        // A square's name plays as its number does (d3 is 19 on 8×8).
        let names: Vec<String> = legal
            .iter()
            .map(|square| format!("{}{}", char::from(b'a' + (*square % 8) as u8), square / 8 + 1))
            .collect();
        let moved = ann
            .ok(
                json!({ "action": "agent_move", "match_id": id, "leg": mine, "revision": revision,
                        "move": names[0].to_uppercase() }),
            )
            .await;
        assert_eq!(moved["match"]["status"], "running", "{moved}");
        // The same answer again: its revision is gone.
        ann.refused(
            json!({ "action": "agent_move", "match_id": id, "leg": mine, "revision": revision, "move": legal[0] }),
            StatusCode::CONFLICT,
            "stale_revision",
        )
        .await;

        // Both legs to the end, with the bots' own passes.
        let ended = play_out(&[(ann_id, &ann), (bea_id, &bea)], id, Duration::from_secs(120)).await;
        assert_eq!(ended["status"], "finished", "{ended}");
        assert_eq!(ended["state"]["finish_reason"], "discs", "{ended}");
        for leg in ended["state"]["legs"].as_array().expect("legs") {
            assert_eq!(leg["status"], "finished", "{leg}");
            let discs: i64 = leg["discs"]
                .as_array()
                .expect("discs")
                .iter()
                .filter_map(Value::as_i64)
                .sum();
            let history = leg["history"].as_array().expect("history");
            assert!(discs > 12 && history.len() as i64 >= discs - 12, "{leg}");
        }
        let totals = ended["state"]["totals"].clone();
        let winner = &ended["state"]["winner"];
        match (totals[0].as_i64(), totals[1].as_i64()) {
            (Some(a), Some(b)) if a > b => assert_eq!(winner, &json!(0), "{ended}"),
            (Some(a), Some(b)) if a < b => assert_eq!(winner, &json!(1), "{ended}"),
            _ => assert!(winner.is_null(), "{ended}"),
        }

        // Recorded once, rated, with a replay of both legs.
        let db = server.db().await;
        let row: (String, String, String) = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let row: (String, String, String) =
                    sqlx::query_as("SELECT status, ladder, kind FROM matches WHERE id = $1")
                        .bind(id)
                        .fetch_one(&db.pool)
                        .await
                        .expect("the row");
                if row.0 == "finished" {
                    return row;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("the match is recorded");
        assert_eq!(row, ("finished".into(), "remote:othello:std".into(), "ranked".into()));
        let rated: i64 = sqlx::query_scalar(
            "SELECT COUNT(*) FROM ratings r JOIN versions v ON v.id = r.version_id \
             WHERE r.ladder = 'remote:othello:std' AND r.wins + r.draws + r.losses = 1",
        )
        .fetch_one(&db.pool)
        .await
        .expect("ratings");
        assert_eq!(rated, 2, "both bots rated once");
        let replay = server
            .client()
            .raw(support::Method::GET, &format!("/api/matches/{id}/replay"))
            .send()
            .await
            .expect("replay");
        assert_eq!(replay.status(), StatusCode::OK);
        let replay: Value = replay.json().await.expect("a replay");
        assert_eq!(replay["games"].as_array().map(Vec::len), Some(2), "{replay}");
        let ended = polled_match(&ann, id).await;
        assert_eq!(ended["rating_applied"], true, "{ended}");

        // The event stream: hello, then this bot's matches as they change;
        // three at once, a fourth refused.
        let mut streams = Vec::new();
        for _ in 0..3 {
            let mut stream = ann.stream().await;
            assert_eq!(stream.status(), StatusCode::OK);
            assert_eq!(
                stream.headers()["content-type"].to_str().ok(),
                Some("application/x-ndjson")
            );
            let first = stream.chunk().await.expect("a chunk").expect("hello");
            let line = first.split(|&b| b == b'\n').next().unwrap_or_default();
            let hello: Value = serde_json::from_slice(line).expect("one JSON object per line");
            assert_eq!(
                (hello["type"].as_str(), &hello["bot_id"]),
                (Some("hello"), &json!(ann_id))
            );
            streams.push(stream);
        }
        let fourth = ann.stream().await;
        assert_eq!(fourth.status(), StatusCode::TOO_MANY_REQUESTS);
        let refusal: Value = fourth.json().await.expect("JSON");
        assert_eq!(refusal["error"], "too many streams", "{refusal}");
        let next = bea
            .ok(json!({ "action": "agent_challenge", "target_id": ann_id, "game_mode": "anti" }))
            .await["match_id"]
            .clone();
        let mut stream = streams.pop().expect("a stream");
        // (Automatic matching may challenge ann meanwhile: its events come
        // on the same stream.)
        let event = tokio::time::timeout(Duration::from_secs(10), async {
            loop {
                let chunk = stream.chunk().await.expect("a chunk").expect("an event");
                for line in chunk.split(|&b| b == b'\n').filter(|line| !line.is_empty()) {
                    let event: Value = serde_json::from_slice(line).expect("one JSON object per line");
                    if event["type"] == "match" && event["match"]["id"] == next {
                        return event;
                    }
                }
            }
        })
        .await
        .expect("the challenge's event soon");
        assert_eq!(event["match"]["status"], "pending", "{event}");
        assert_eq!(event["match"]["bot_b"], json!(ann_id), "{event}");
        // A closed stream frees its place.
        drop(stream);
        let again = tokio::time::timeout(Duration::from_secs(5), async {
            loop {
                let stream = ann.stream().await;
                if stream.status() == StatusCode::OK {
                    return stream;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("a closed stream's place is free again");
        drop(again);
        ann.ok(json!({ "action": "agent_reject", "match_id": next })).await;

        // A new token revokes the old one at once; a user's API token is
        // no bot token, and a bot token is no API token.
        let (status, issued) = ann_user.post_json("/api/bots/ann-engine/token", &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{issued}");
        ann.refused(
            json!({ "action": "agent_poll" }),
            StatusCode::UNAUTHORIZED,
            "invalid bot credential",
        )
        .await;
        let revoked = ann.stream().await;
        assert_eq!(revoked.status(), StatusCode::UNAUTHORIZED);
        let api_token = server.token(&ann_user).await;
        Agent::new(&server, &api_token)
            .refused(
                json!({ "action": "agent_poll" }),
                StatusCode::UNAUTHORIZED,
                "invalid bot credential",
            )
            .await;
        let (status, _) = server.token_client(&ann_token).get("/api/me").await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
        let fresh = Agent::new(&server, issued["token"].as_str().expect("a token"));
        fresh.poll().await;
        // Someone else's bot gets no token.
        let (status, body) = ann_user.post_json("/api/bots/bea-engine/token", &json!({})).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    }
}

#[tokio::test]
async fn an_agent_bot_plays_a_house_bot_that_moves_on_its_own() {
    let server = TestServer::start().await;
    let (ann_id, token, _) = agent_bot(&server, "ann", "ann-engine").await;
    let ann = Agent::new(&server, &token);
    let house = greedy(&ann.poll().await);
    assert_eq!(house["is_builtin"], true, "{house}");
    let id = ann
        .ok(json!({ "action": "agent_challenge", "target_id": house["id"] }))
        .await["match_id"]
        .as_i64()
        .expect("a match id");
    // A house bot accepts at once.
    let running = polled_match(&ann, id).await;
    assert_eq!(running["status"], "running", "{running}");
    let ended = play_out(&[(ann_id, &ann)], id, Duration::from_secs(120)).await;
    assert_eq!(ended["status"], "finished", "{ended}");
    for leg in ended["state"]["legs"].as_array().expect("legs") {
        let history = leg["history"].as_array().expect("history");
        let house_moves = history.iter().filter(|h| h["participant"] == json!(1)).count();
        assert!(house_moves > 0, "the house bot moved in every leg: {leg}");
    }
    // The replay: every move with its time; `verify` re-checks legality.
    assert_eq!(ended_row(&server, id).await, "finished");
    let replay = replay_bytes(&server, id).await;
    let parsed: Value = serde_json::from_slice(&replay).expect("JSON");
    assert_eq!(parsed["reproducible"], false, "{parsed}");
    let turns: usize = parsed["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| g["turns"].as_array().map_or(0, Vec::len))
        .sum();
    let moves: usize = ended["state"]["legs"]
        .as_array()
        .expect("legs")
        .iter()
        .map(|l| l["history"].as_array().map_or(0, Vec::len))
        .sum();
    assert_eq!(turns, moves, "one turn per move played: {parsed}");
    // Every move with its time on the server's clock, in order.
    for game in parsed["games"].as_array().expect("games") {
        let times: Vec<i64> = game["turns"]
            .as_array()
            .expect("turns")
            .iter()
            .filter_map(|t| t["at_ms"].as_i64())
            .collect();
        assert_eq!(times.len(), game["turns"].as_array().map_or(0, Vec::len), "{game}");
        assert!(
            times.windows(2).all(|w| w[0] <= w[1]) && times[0] > 1_700_000_000_000,
            "{times:?}"
        );
    }
    verify_replay(&server, id).await;
    // A move changed in the file is caught.
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("replay.json");
    let mut forged = parsed.clone();
    let turn = &mut forged["games"][0]["turns"][0];
    let reply = turn["reply"].as_str().unwrap_or_default().to_owned();
    turn["reply"] = json!(if reply.contains("\"pass\"") {
        r#"{"move":0}"#
    } else {
        r#"{"move":"pass"}"#
    });
    std::fs::write(&file, serde_json::to_vec(&forged).expect("JSON")).expect("written");
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .arg("verify")
        .arg(&file)
        .output()
        .expect("arbiter verify runs");
    assert!(
        !refused.status.success(),
        "{}",
        String::from_utf8_lossy(&refused.stdout)
    );
}

/// How many rated games `bot` (a bot id) has on the remote Othello ladder.
async fn rated_games(server: &TestServer, bot: i64) -> i64 {
    let db = server.db().await;
    sqlx::query_scalar(
        "SELECT CAST(COALESCE(SUM(r.wins + r.draws + r.losses), 0) AS BIGINT) FROM ratings r JOIN versions v ON v.id = r.version_id \
         WHERE v.bot_id = $1 AND r.ladder = 'remote:othello:std'",
    )
    .bind(bot)
    .fetch_one(&db.pool)
    .await
    .expect("ratings")
}

/// The status of match `id`'s row, once it is no longer pending or running.
async fn ended_row(server: &TestServer, id: i64) -> String {
    let db = server.db().await;
    tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let status: String = sqlx::query_scalar("SELECT status FROM matches WHERE id = $1")
                .bind(id)
                .fetch_one(&db.pool)
                .await
                .expect("the row");
            if status != "pending" && status != "running" {
                return status;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the row ends")
}

/// Starts a match of `a` against `b` (a challenges, b accepts).
async fn started(a: &Agent, b: &Agent, b_id: i64) -> i64 {
    let id = a.ok(json!({ "action": "agent_challenge", "target_id": b_id })).await["match_id"]
        .as_i64()
        .expect("a match id");
    b.ok(json!({ "action": "agent_accept", "match_id": id })).await;
    id
}

/// FlipSight's clock rules on short controls: 4 s per leg and colour, 1.5 s
/// for the first moves, 2.5 s to be away.
#[tokio::test]
async fn clocks_abort_timeouts_and_disconnections() {
    let server = support::Options::default()
        .env("ARBITER_AGENT_RULES", "first_move_ms=1500,disconnect_ms=2500")
        .arg("--time")
        .arg("remote:othello:std=4000/4000")
        .start()
        .await;
    let ((ann_id, ann), (bea_id, bea)) = ann_and_bea(&server).await;
    let both = [(ann_id, &ann), (bea_id, &bea)];

    // Nobody moves: aborted after the first-move time, never rated.
    let id = started(&ann, &bea, bea_id).await;
    let running = polled_match(&ann, id).await;
    assert_eq!(running["status"], "running", "{running}");
    let aborted = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            bea.poll().await;
            let m = polled_match(&ann, id).await;
            if m["status"] != "running" {
                return m;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("aborted");
    assert_eq!(
        (aborted["status"].as_str(), aborted["state"]["finish_reason"].as_str()),
        (Some("aborted"), Some("no_first_move")),
        "{aborted}"
    );
    assert_eq!(aborted["ranked"], false, "{aborted}");
    assert_eq!(ended_row(&server, id).await, "aborted");

    // One bot stops polling after its first moves: it loses, rated.
    let id = started(&ann, &bea, bea_id).await;
    let bea_participant = 1;
    play_until(&both, id, Duration::from_secs(30), None, |m| {
        let legs = m["state"]["legs"].as_array().cloned().unwrap_or_default();
        let moved = |p: i64| {
            legs.iter().any(|leg| {
                leg["history"]
                    .as_array()
                    .is_some_and(|h| h.iter().any(|x| x["participant"] == json!(p)))
            })
        };
        moved(0) && moved(1)
    })
    .await;
    let gone = play_until(&[(ann_id, &ann)], id, Duration::from_secs(30), None, |m| {
        m["status"] != "running"
    })
    .await;
    assert_eq!(
        (
            gone["status"].as_str(),
            gone["state"]["finish_reason"].as_str(),
            &gone["state"]["winner"]
        ),
        (Some("finished"), Some("disconnect"), &json!(1 - bea_participant)),
        "{gone}"
    );
    assert_eq!(ended_row(&server, id).await, "finished");
    assert_eq!(
        (rated_games(&server, ann_id).await, rated_games(&server, bea_id).await),
        (1, 1)
    );
    verify_replay(&server, id).await;

    // Bea never moves in leg 1: that leg is lost on time, leg 0 is played out.
    let id = started(&ann, &bea, bea_id).await;
    let ended = play_until(&both, id, Duration::from_secs(60), Some((bea_id, 1)), |m| {
        ["finished", "aborted"].contains(&m["status"].as_str().unwrap_or(""))
    })
    .await;
    let legs = ended["state"]["legs"].as_array().expect("legs");
    assert_eq!(
        (legs[0]["status"].as_str(), legs[1]["status"].as_str()),
        (Some("finished"), Some("timeout")),
        "{ended}"
    );
    assert!(legs[1]["result_discs"].is_array(), "{ended}");
    assert_eq!(ended["state"]["finish_reason"], "timeout", "{ended}");
    assert_eq!(ended_row(&server, id).await, "finished");
    assert_eq!(
        (rated_games(&server, ann_id).await, rated_games(&server, bea_id).await),
        (2, 2)
    );
    verify_replay(&server, id).await;
}

/// Automatic matching: two idle online agent bots are paired within a
/// round; the one challenged that does not accept is out for a while (the
/// other is then paired with a house bot); a practising bot is never
/// paired, and its matches are unrated.
#[tokio::test]
async fn automatic_matching_pairs_online_bots_and_leaves_practice_alone() {
    let server = support::Options::default()
        .env("ARBITER_AGENT_RULES", "accept_ms=1500")
        .start()
        .await;
    let (ann_id, ann_token, _) = agent_bot(&server, "ann", "ann-engine").await;
    let (bea_id, bea_token, _) = agent_bot(&server, "bea", "bea-engine").await;
    let (cid_id, cid_token, _) = agent_bot(&server, "cid", "cid-engine").await;
    let (ann, bea, cid) = (
        Agent::new(&server, &ann_token),
        Agent::new(&server, &bea_token),
        Agent::new(&server, &cid_token),
    );
    let practice = json!({ "action": "agent_poll", "environment": { "engine": "trial", "practice": true } });
    cid.ok(practice.clone()).await;
    let pending = |polled: &Value| -> Vec<Value> {
        polled["matches"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["status"] == "pending" && m["auto"] == true)
            .cloned()
            .collect()
    };
    // Paired with each other within a round (one automatic match a second).
    let first = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let seen = pending(&ann.poll().await);
            bea.poll().await;
            cid.ok(practice.clone()).await;
            if let Some(m) = seen.first() {
                return m.clone();
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("an automatic challenge");
    let pair = [first["bot_a"].as_i64(), first["bot_b"].as_i64()];
    assert!(
        pair == [Some(ann_id), Some(bea_id)] || pair == [Some(bea_id), Some(ann_id)],
        "{first}"
    );
    assert_eq!(first["ranked"], true, "{first}");
    let challenged = first["bot_b"].as_i64().expect("bot_b");
    let other = if challenged == ann_id { bea_id } else { ann_id };
    // Nobody accepts: it expires; the challenged bot is out, the other is
    // paired again (with a house bot, the only one left).
    let mut later = Vec::new();
    let watch = Instant::now();
    while watch.elapsed() < Duration::from_secs(6) {
        for (bot, agent) in [(ann_id, &ann), (bea_id, &bea)] {
            for m in pending(&agent.poll().await) {
                if m["id"] != first["id"] && !later.iter().any(|x: &(i64, Value)| x.1["id"] == m["id"]) {
                    later.push((bot, m));
                }
            }
        }
        cid.ok(practice.clone()).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let expired = polled_match(&ann, first["id"].as_i64().expect("id")).await;
    assert_eq!(expired["status"], "expired", "{expired}");
    assert!(
        later.iter().all(|(bot, m)| *bot == other && m["bot_b"] == json!(other)),
        "{later:?}"
    );
    assert!(!later.is_empty(), "the bot that was not challenged is paired again");
    // The practising bot was never paired, and its own matches are unrated.
    let polled = cid.ok(practice.clone()).await;
    assert!(polled["matches"].as_array().is_some_and(Vec::is_empty), "{polled}");
    let house = greedy(&polled);
    let id = cid
        .ok(json!({ "action": "agent_challenge", "target_id": house["id"] }))
        .await["match_id"]
        .as_i64()
        .expect("a match id");
    let ended = play_out(&[(cid_id, &cid)], id, Duration::from_secs(120)).await;
    assert_eq!(
        (ended["status"].as_str(), &ended["ranked"]),
        (Some("finished"), &json!(false)),
        "{ended}"
    );
    assert_eq!(ended_row(&server, id).await, "finished");
    assert_eq!(rated_games(&server, cid_id).await, 0);
}

/// `arbiter connect` with `ARBITER_BOT_TOKEN`, against `server`: its exit
/// code and its output.
async fn connect(server: &TestServer, token: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .arg("connect")
        .args(["--api", &server.url("")])
        .args(args)
        .env("ARBITER_BOT_TOKEN", token)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("arbiter connect ends")
        .expect("arbiter connect runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

/// The connector plays a match against a house bot to its end with the
/// example engine, then exits 0; a refused token exits 2, a run out of
/// time 3.
#[tokio::test]
async fn arbiter_connect_plays_a_match_with_an_engine() {
    let server = TestServer::start().await;
    let (_, token, _) = agent_bot(&server, "ann", "ann-engine").await;
    let ann = Agent::new(&server, &token);
    let house = greedy(&ann.poll().await);
    // The example engine, and the Python and JavaScript kits' templates
    // run natively: each plays a whole match.
    for engine in [
        "python3 examples/first_legal.py",
        "python3 kits/python/template/bot.py",
        "node kits/javascript/template/bot.js",
    ] {
        let id = ann
            .ok(json!({ "action": "agent_challenge", "target_id": house["id"] }))
            .await["match_id"]
            .as_i64()
            .expect("a match id");
        let (code, output) = connect(
            &server,
            &token,
            &[
                "--engine",
                engine,
                "--once-match",
                &id.to_string(),
                "--max-runtime",
                "120",
            ],
        )
        .await;
        assert_eq!(code, Some(0), "{engine}: {output}");
        assert_stamped(&output);
        assert!(
            output.contains(&format!("match {id} vs othello-greedy, leg 0")),
            "{output}"
        );
        let ended = polled_match(&ann, id).await;
        assert_eq!(
            (ended["status"].as_str(), ended["state"]["finish_reason"].as_str()),
            (Some("finished"), Some("discs")),
            "{engine}: {ended}\n{output}"
        );
        // Its last line says how it ended (ann challenged: participant 0).
        let totals = &ended["state"]["totals"];
        let result = match ended["state"]["winner"].as_i64() {
            Some(0) => "won",
            Some(_) => "lost",
            None => "drew",
        };
        let last = format!(
            "match {id} vs othello-greedy: ended: {result} {}–{} (discs)",
            totals[0], totals[1]
        );
        assert!(
            output
                .lines()
                .last()
                .is_some_and(|line| line.ends_with(&format!(" {last}"))),
            "{last}\n{output}"
        );
        assert_eq!(ended_row(&server, id).await, "finished");
    }

    // A refused token: 2. Nothing to do until the time is up: 3.
    let (code, output) = connect(&server, "arbbot_not-a-token", &["--engine", "true"]).await;
    assert_eq!(code, Some(2), "{output}");
    assert!(output.contains("invalid bot credential"), "{output}");
    assert_stamped(&output);
    let (code, output) = connect(
        &server,
        &token,
        &["--engine", "true", "--max-runtime", "1", "--no-stream"],
    )
    .await;
    assert_eq!(code, Some(3), "{output}");
    assert_stamped(&output);
    assert!(output.contains(" max runtime reached"), "{output}");
}

/// Panics unless every line of `output` starts with its time: UTC, RFC
/// 3339 with milliseconds (`2026-12-07T13:31:02.417Z `).
fn assert_stamped(output: &str) {
    assert!(!output.trim().is_empty(), "no output");
    for line in output.lines() {
        let bytes = line.as_bytes();
        let stamped = bytes.len() > 25
            && bytes[24] == b' '
            && bytes[..24].iter().enumerate().all(|(i, &c)| match i {
                4 | 7 => c == b'-',
                10 => c == b'T',
                13 | 16 => c == b':',
                19 => c == b'.',
                23 => c == b'Z',
                _ => c.is_ascii_digit(),
            });
        assert!(stamped, "a line without its time: {line:?}\n{output}");
    }
}

/// `arbiter connect --api API` with `ARBITER_BOT_TOKEN`: its exit code and
/// its output (stdout, then stderr).
async fn connect_to(api: &str, token: &str, args: &[&str]) -> (Option<i32>, String) {
    let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .arg("connect")
        .args(["--api", api])
        .args(args)
        .env("ARBITER_BOT_TOKEN", token)
        .current_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/.."))
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(180), command.output())
        .await
        .expect("arbiter connect ends")
        .expect("arbiter connect runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.code(), text)
}

/// A TCP proxy in front of a server that can be switched off, as a network
/// outage: off cuts every connection through it and closes new ones at
/// once, until it is on again.
struct Proxy {
    url: String,
    on: std::sync::Arc<std::sync::atomic::AtomicBool>,
    open: std::sync::Arc<std::sync::Mutex<Vec<std::net::TcpStream>>>,
}

impl Proxy {
    fn start(target: std::net::SocketAddr) -> Proxy {
        use std::sync::atomic::Ordering;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
        let url = format!("http://{}", listener.local_addr().expect("its address"));
        let proxy = Proxy {
            url,
            on: std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true)),
            open: std::sync::Arc::default(),
        };
        let (on, open) = (proxy.on.clone(), proxy.open.clone());
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { continue };
                if !on.load(Ordering::SeqCst) {
                    continue; // closed as it is dropped
                }
                let Ok(server) = std::net::TcpStream::connect(target) else {
                    continue;
                };
                let clone = |s: &std::net::TcpStream| s.try_clone().expect("a socket handle");
                open.lock().expect("the list").extend([clone(&client), clone(&server)]);
                for (mut from, mut to) in [(clone(&client), clone(&server)), (server, client)] {
                    std::thread::spawn(move || {
                        let _ = std::io::copy(&mut from, &mut to);
                        let _ = to.shutdown(std::net::Shutdown::Write);
                    });
                }
            }
        });
        proxy
    }

    /// Switches the proxy on or off (cutting what goes through it).
    fn set(&self, on: bool) {
        self.on.store(on, std::sync::atomic::Ordering::SeqCst);
        if !on {
            for stream in self.open.lock().expect("the list").drain(..) {
                let _ = stream.shutdown(std::net::Shutdown::Both);
            }
        }
    }
}

/// The connector says when its stream drops mid-match (and that it polls
/// meanwhile), when the stream and the server are back and after how long,
/// and how its match ended: here aborted, the other side never moving.
#[tokio::test]
async fn arbiter_connect_says_when_its_stream_drops_and_its_match_is_aborted() {
    let server = support::Options::default()
        .env("ARBITER_AGENT_RULES", "first_move_ms=15000")
        .start()
        .await;
    let (ann_id, ann_token, ann_user) = agent_bot(&server, "ann", "ann-engine").await;
    let (_, bea_token, bea_user) = agent_bot(&server, "bea", "bea-engine").await;
    for (user, name) in [(&ann_user, "ann-engine"), (&bea_user, "bea-engine")] {
        let (status, body) = user
            .send_json(
                support::Method::PUT,
                &format!("/api/bots/{name}/profile"),
                &json!({ "auto_match": false }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let bea = Agent::new(&server, &bea_token);
    // Bea challenges ann, whose connector accepts; bea never moves.
    let id = bea
        .ok(json!({ "action": "agent_challenge", "target_id": ann_id }))
        .await["match_id"]
        .as_i64()
        .expect("a match id");
    let proxy = Proxy::start(server.addr);
    let outage = async {
        // Once ann has moved (its stream open meanwhile), 1.5 s without
        // the server.
        tokio::time::timeout(Duration::from_secs(60), async {
            loop {
                let m = polled_match(&bea, id).await;
                let moved = m["state"]["legs"].as_array().is_some_and(|legs| {
                    legs.iter()
                        .any(|leg| leg["history"].as_array().is_some_and(|h| !h.is_empty()))
                });
                if m["status"] == "running" && moved {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
        .await
        .expect("ann moves");
        tokio::time::sleep(Duration::from_millis(500)).await;
        proxy.set(false);
        let cut = Instant::now();
        while cut.elapsed() < Duration::from_millis(1500) {
            bea.poll().await;
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        proxy.set(true);
        // Bea stays online until the match is aborted.
        while polled_match(&bea, id).await["status"] == "running" {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    };
    let id_text = id.to_string();
    let args = [
        "--engine",
        "python3 examples/first_legal.py",
        "--once-match",
        &id_text,
        "--max-runtime",
        "120",
    ];
    let ((code, output), ()) = tokio::join!(connect_to(&proxy.url, &ann_token, &args), outage);
    assert_eq!(code, Some(0), "{output}");
    assert_stamped(&output);
    let ended = polled_match(&bea, id).await;
    assert_eq!(
        (ended["status"].as_str(), ended["state"]["finish_reason"].as_str()),
        (Some("aborted"), Some("no_first_move")),
        "{ended}\n{output}"
    );
    // In this order (stdout and stderr, by their times): dropped
    // mid-match, back, aborted.
    let when = |what: &str| -> String {
        let line = output
            .lines()
            .find(|line| line.contains(what))
            .unwrap_or_else(|| panic!("{what:?} is not in the output:\n{output}"));
        line[..24].to_owned()
    };
    when("accepted bea-engine's challenge");
    let dropped = when(&format!(" stream: dropped during match {id} ("));
    assert!(
        output.contains("polling every second until it is open again"),
        "{output}"
    );
    let stream_back = when(" stream: open again after ");
    let server_back = when(" server: answering again after ");
    let aborted = when(&format!(" match {id} vs bea-engine: aborted, unrated (no_first_move)"));
    assert!(
        dropped <= stream_back && dropped <= server_back && server_back <= aborted,
        "{output}"
    );
}

/// Match `id`'s replay as served.
async fn replay_bytes(server: &TestServer, id: i64) -> Vec<u8> {
    server
        .client()
        .raw(support::Method::GET, &format!("/api/matches/{id}/replay"))
        .send()
        .await
        .expect("the replay")
        .bytes()
        .await
        .expect("its bytes")
        .to_vec()
}

/// Downloads match `id`'s replay and checks it with `arbiter verify`.
async fn verify_replay(server: &TestServer, id: i64) {
    let replay = replay_bytes(server, id).await;
    let dir = tempfile::tempdir().expect("a folder");
    let file = dir.path().join("replay.json");
    std::fs::write(&file, &replay).expect("written");
    let verified = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
        .arg("verify")
        .arg(&file)
        .output()
        .expect("arbiter verify runs");
    let said = String::from_utf8_lossy(&verified.stdout);
    assert!(
        verified.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    assert!(said.contains("every move is legal"), "{said}");
}

/// Without JavaScript: the site registers an agent bot, and its owner
/// issues its token on the bot's page, shown once on a page not stored.
#[tokio::test]
async fn the_site_registers_an_agent_bot_and_issues_its_token() {
    let server = TestServer::start().await;
    let ann = server.signup("ann").await;
    let csrf = ann.csrf.clone().expect("a CSRF token");
    let page = ann
        .raw(support::Method::GET, "/upload/agent")
        .send()
        .await
        .expect("the page");
    assert_eq!(page.status(), StatusCode::OK);
    let page = page.text().await.expect("HTML");
    assert!(page.contains(r#"name="agent" value="true""#), "{page}");
    assert!(!page.contains("tictactoe"), "Othello ladders only: {page}");
    // A game the agent API does not play is refused with the reason.
    let form = |ladders: &str| {
        reqwest::multipart::Form::new()
            .text("csrf", csrf.clone())
            .text("name", "ann-engine")
            .text("ladders", ladders.to_owned())
            .text("agent", "true")
    };
    let refused = ann
        .raw(support::Method::POST, "/upload")
        .multipart(form("tictactoe"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    let refused = refused.text().await.expect("HTML");
    assert!(refused.contains("plays Othello only"), "{refused}");
    assert!(
        refused.contains("Register an agent bot"),
        "the agent form again: {refused}"
    );
    let registered = ann
        .raw(support::Method::POST, "/upload")
        .multipart(form("othello:std"))
        .send()
        .await
        .expect("an answer");
    assert!(
        registered.url().path().ends_with("/bots/ann-engine"),
        "{}",
        registered.url()
    );
    let bot_page = registered.text().await.expect("HTML");
    assert!(bot_page.contains("Issue a new bot token"), "{bot_page}");
    // Someone else sees no token form.
    let bea = server.signup("bea").await;
    let seen = bea
        .raw(support::Method::GET, "/bots/ann-engine")
        .send()
        .await
        .expect("the page");
    assert!(!seen.text().await.expect("HTML").contains("Issue a new bot token"));
    let issued = ann
        .raw(support::Method::POST, "/bots/ann-engine/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .expect("an answer");
    assert_eq!(issued.status(), StatusCode::OK);
    assert_eq!(issued.headers()["cache-control"], "no-store");
    let issued = issued.text().await.expect("HTML");
    let start = issued.find("arbbot_").expect("the token on the page");
    let token: String = issued[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '-')
        .collect();
    let polled = Agent::new(&server, &token).poll().await;
    assert_eq!(polled["bot"]["name"], "ann-engine", "{polled}");
    // Without the session's CSRF token: refused, no token issued.
    let forged = ann
        .raw(support::Method::POST, "/bots/ann-engine/token")
        .header("content-type", "application/x-www-form-urlencoded")
        .body("csrf=wrong")
        .send()
        .await
        .expect("an answer");
    assert_eq!(forged.status(), StatusCode::FORBIDDEN);
    Agent::new(&server, &token).poll().await;
}

/// A bot token is named as such where a user's credential is wanted, and
/// a leg that no match has is a malformed request (400), not a conflict.
#[tokio::test]
async fn a_bot_token_on_a_user_endpoint_and_a_leg_that_does_not_exist_are_told_apart() {
    let server = TestServer::start().await;
    let (_, token, _) = agent_bot(&server, "tess", "tess-engine").await;
    let (status, body) = server.token_client(&token).get("/api/me").await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    let message = body["error"].as_str().unwrap_or_default();
    assert!(
        message.contains("bot token") && message.contains("/api/agent") && !message.contains("reissued"),
        "{body}"
    );
    let agent = Agent::new(&server, &token);
    for leg in [7, 2, -1] {
        agent
            .refused(
                json!({ "action": "agent_move", "match_id": 12345, "leg": leg, "revision": 0, "move": "d3" }),
                StatusCode::BAD_REQUEST,
                "leg must be 0 or 1",
            )
            .await;
    }
}

/// An account's agent bots are bounded by number (not by the upload rate):
/// a crowd of simultaneous registrations past the limit lets exactly the
/// remaining places through, on every backend.
#[tokio::test]
async fn agent_bots_per_account_are_bounded_under_a_crowd() {
    const LIMIT: usize = 20;
    for backend in backends() {
        let server = support::Options::on(backend).start().await;
        let client = server.signup("crowd").await;
        let register = |name: String| {
            let client = client.clone();
            async move {
                let form = reqwest::multipart::Form::new()
                    .text("name", name)
                    .text("ladders", "othello:std")
                    .text("agent", "true");
                client.post_multipart("/api/bots", form).await
            }
        };
        // More than an upload rate (10 a minute) would let through.
        for n in 0..LIMIT - 5 {
            let (status, body) = register(format!("engine-{n}")).await;
            assert_eq!(status, StatusCode::ACCEPTED, "{backend:?} bot {n}: {body}");
        }
        let crowd: Vec<_> = (0..12).map(|n| tokio::spawn(register(format!("crowd-{n}")))).collect();
        let mut accepted = 0;
        for answer in crowd {
            let (status, body) = answer.await.expect("the request ran");
            match status {
                StatusCode::ACCEPTED => accepted += 1,
                StatusCode::CONFLICT => assert!(
                    body["error"]
                        .as_str()
                        .is_some_and(|e| e.contains("at most 20 agent bots")),
                    "{body}"
                ),
                other => panic!("{backend:?}: {other}: {body}"),
            }
        }
        assert_eq!(accepted, 5, "{backend:?}: exactly the places left");
        // Retiring one frees its place.
        let (status, body) = client.post_json("/api/bots/engine-0/retire", &json!({})).await;
        assert!(status.is_success(), "{backend:?}: {body}");
        let (status, body) = register("late".to_owned()).await;
        assert_eq!(status, StatusCode::ACCEPTED, "{backend:?}: {body}");
    }
}

/// `POST /api/agent` as a connector keeps sending it while the server may
/// be failing: the status, and the answer if it was JSON.
async fn raw_poll(agent: &Agent) -> Option<StatusCode> {
    let response = agent
        .http
        .post(format!("{}/api/agent", agent.base))
        .bearer_auth(&agent.token)
        .json(&json!({ "action": "agent_poll" }))
        .timeout(Duration::from_secs(5))
        .send()
        .await
        .ok()?;
    Some(response.status())
}

/// While the database is away the server cannot hear a move, so no clock
/// runs: a PostgreSQL outage longer than a leg's whole bank and the
/// disconnect limit, in the middle of an agent match, decides nothing; the
/// match goes on afterwards and ends on the board.
#[tokio::test(flavor = "multi_thread")]
async fn a_database_outage_mid_match_runs_no_clock() {
    if std::env::var_os(support::TEST_PG_URL).is_none_or(|url| url.is_empty()) {
        eprintln!("TEST_PG_URL is not set: skipping the PostgreSQL outage test");
        return;
    }
    let cluster = tokio::task::spawn_blocking(support::PgCluster::start)
        .await
        .expect("a cluster");
    let server = support::Options {
        database_url: Some(cluster.url()),
        ..support::Options::on(support::Backend::Postgres)
    }
    .env("ARBITER_AGENT_RULES", "first_move_ms=3000,disconnect_ms=2500")
    .arg("--time")
    .arg("remote:othello:std=4000/4000")
    .arg("--web-db-timeout")
    .arg("1")
    .start()
    .await;
    let ((ann_id, ann), (bea_id, bea)) = ann_and_bea(&server).await;
    let both = [(ann_id, &ann), (bea_id, &bea)];
    let id = started(&ann, &bea, bea_id).await;
    // Both bots move in both legs, then the database goes away.
    play_until(&both, id, Duration::from_secs(30), None, |m| {
        m["state"]["legs"].as_array().is_some_and(|legs| {
            legs.iter()
                .all(|leg| leg["history"].as_array().is_some_and(|h| h.len() >= 2))
        })
    })
    .await;
    cluster.stop_immediately();
    // 6 s away (a leg's bank is 4 s, the disconnect limit 2.5 s), the
    // connectors polling all along, as FlipSight's do.
    let outage = Instant::now();
    let mut refused = 0;
    while outage.elapsed() < Duration::from_secs(6) {
        for agent in [&ann, &bea] {
            if raw_poll(agent).await != Some(StatusCode::OK) {
                refused += 1;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    assert!(refused > 0, "the outage was not seen");
    cluster.start_again();
    // Polls answer again, and the match is where it was: running.
    let back = Instant::now();
    let resumed = loop {
        assert!(back.elapsed() < Duration::from_secs(30), "the server did not come back");
        if raw_poll(&ann).await == Some(StatusCode::OK) {
            break polled_match(&ann, id).await;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(resumed["status"], "running", "decided during the outage: {resumed}");
    let ended = play_out(&both, id, Duration::from_secs(60)).await;
    assert_eq!(
        (ended["status"].as_str(), ended["state"]["finish_reason"].as_str()),
        (Some("finished"), Some("discs")),
        "{ended}"
    );
    let log = server.output();
    assert!(log.contains("clocks stand still"), "the pause is logged:\n{log}");
}

/// The mover's clock left in each active leg of `m`, as a client reads it
/// at the server's `now`.
fn clocks_left(m: &Value, now: i64) -> Vec<i64> {
    m["state"]["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|leg| leg["status"] == "active")
        .map(|leg| {
            let color = usize::try_from(leg["turn"].as_i64().unwrap_or(1) - 1).unwrap_or(0);
            let clock = leg["clocks_ms"][color].as_i64().expect("a clock");
            clock - (now - leg["turn_started_ms"].as_i64().expect("turn_started_ms"))
        })
        .collect()
}

/// Moves played in every leg of `m`.
fn moves_played(m: &Value) -> usize {
    m["state"]["legs"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|leg| leg["history"].as_array().map_or(0, Vec::len))
        .sum()
}

/// Match `id` as `agent` polls it, with the server's time of the poll.
async fn polled_at(agent: &Agent, id: i64) -> (i64, Value) {
    let polled = agent.poll().await;
    let now = polled["server_now_ms"].as_i64().expect("server_now_ms");
    let m = polled["matches"]
        .as_array()
        .and_then(|matches| matches.iter().find(|m| m["id"] == json!(id)).cloned())
        .unwrap_or_else(|| panic!("match {id} is not in the poll: {polled}"));
    (now, m)
}

/// A deploy mid-match: SIGTERM, 3 s without a server, and a new
/// `arbiter serve` on the same database and address. Both matches in
/// flight, agent against agent and agent against a house bot, carry on
/// where they were (boards, histories, revisions; no clock run while no
/// process held them) and end rated, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_restart_resumes_every_agent_match_where_it_was() {
    for backend in backends() {
        let mut server = TestServer::start_with(backend).await;
        let ((ann_id, ann), (bea_id, bea)) = ann_and_bea(&server).await;
        let (cy_id, cy_token, cy_user) = agent_bot(&server, "cyd", "cy-engine").await;
        let (status, body) = cy_user
            .send_json(
                support::Method::PUT,
                "/api/bots/cy-engine/profile",
                &json!({ "auto_match": false }),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let cy = Agent::new(&server, &cy_token);
        let duel = started(&bea, &ann, ann_id).await;
        let house = greedy(&cy.poll().await);
        let against_house = cy
            .ok(json!({ "action": "agent_challenge", "target_id": house["id"] }))
            .await["match_id"]
            .as_i64()
            .expect("a match id");
        let duelists = [(ann_id, &ann), (bea_id, &bea)];
        play_until(&duelists, duel, Duration::from_secs(60), None, |m| moves_played(m) >= 8).await;
        play_until(&[(cy_id, &cy)], against_house, Duration::from_secs(60), None, |m| {
            moves_played(m) >= 8
        })
        .await;
        let (then, duel_before) = polled_at(&ann, duel).await;
        let (_, house_before) = polled_at(&cy, against_house).await;

        server.signal("TERM");
        assert_eq!(server.exit_code(Duration::from_secs(20)).await, Some(0), "{backend:?}");
        let db = server.db().await;
        for id in [duel, against_house] {
            let status: String = sqlx::query_scalar("SELECT status FROM matches WHERE id = $1")
                .bind(id)
                .fetch_one(&db.pool)
                .await
                .expect("the row");
            assert_eq!(status, "running", "{backend:?}: match {id} is left for the next start");
        }
        tokio::time::sleep(Duration::from_secs(3)).await;
        server.restart().await;

        let (now, duel_after) = polled_at(&ann, duel).await;
        assert_eq!(duel_after["status"], "running", "{backend:?}: {duel_after}");
        for leg in 0..2 {
            let (before, after) = (&duel_before["state"]["legs"][leg], &duel_after["state"]["legs"][leg]);
            for field in ["board", "history", "revision", "clocks_ms", "turn", "legal_moves"] {
                assert_eq!(after[field], before[field], "{backend:?}: leg {leg}'s {field}");
            }
        }
        // Nobody moved in the duel meanwhile: the movers' clocks lost only
        // the time the two processes ran, not the 3 s between them.
        let (left_before, left_after) = (clocks_left(&duel_before, then), clocks_left(&duel_after, now));
        assert_eq!(left_before.len(), left_after.len(), "{backend:?}");
        for (before, after) in left_before.iter().zip(&left_after) {
            let lost = before - after;
            assert!(
                (0..2_500).contains(&lost),
                "{backend:?}: {lost} ms of clock lost over a restart (server time {} ms)",
                now - then
            );
        }
        assert!(now - then >= 3_000, "{backend:?}: the server's time went on");
        // The house bot may have moved after the last look: what was played
        // is still there, in order.
        let (_, house_after) = polled_at(&cy, against_house).await;
        for leg in 0..2 {
            let before = house_before["state"]["legs"][leg]["history"]
                .as_array()
                .expect("a history");
            let after = house_after["state"]["legs"][leg]["history"]
                .as_array()
                .expect("a history");
            assert_eq!(&after[..before.len()], &before[..], "{backend:?}: leg {leg}");
        }

        let ended = play_out(&duelists, duel, Duration::from_secs(120)).await;
        assert_eq!(
            (ended["status"].as_str(), ended["state"]["finish_reason"].as_str()),
            (Some("finished"), Some("discs")),
            "{backend:?}: {ended}"
        );
        let ended = play_out(&[(cy_id, &cy)], against_house, Duration::from_secs(120)).await;
        assert_eq!(ended["status"], "finished", "{backend:?}: {ended}");
        for id in [duel, against_house] {
            assert_eq!(ended_row(&server, id).await, "finished", "{backend:?}");
            verify_replay(&server, id).await;
        }
        for bot in [ann_id, bea_id, cy_id] {
            assert_eq!(rated_games(&server, bot).await, 1, "{backend:?}: rated once");
        }
        let saved: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM hall_matches")
            .fetch_one(&db.pool)
            .await
            .expect("a count");
        assert_eq!(saved, 0, "{backend:?}: nothing left saved once both ended");
        let output = server.output();
        assert_eq!(
            output.matches("remote match resumed").count(),
            2,
            "{backend:?}: {output}"
        );
        assert!(!output.contains("panicked"), "{backend:?}: {output}");
    }
}

/// Two `arbiter serve` front ends on one database, a load balancer's view:
/// agents and a person reach either. The first front end's hall leads; the
/// second forwards every live request to it. When the leader stops, the
/// second takes the lead and resumes the match in flight.
#[tokio::test(flavor = "multi_thread")]
async fn two_front_ends_answer_every_live_request_and_one_takes_over_from_the_other() {
    for backend in backends() {
        let mut first = TestServer::start_with(backend).await;
        let http = support::plain_http();
        // A game against a house bot: started on `on`, its place and cookie.
        let start_game = |on: String| {
            let http = http.clone();
            async move {
                let answer = http
                    .post(format!("{on}/bots/tictactoe-random/play"))
                    .header("content-type", "application/x-www-form-urlencoded")
                    .body("game=tictactoe&side=first&clock=5m")
                    .send()
                    .await
                    .expect("an answer");
                assert_eq!(answer.status(), StatusCode::SEE_OTHER);
                let place = answer.headers()["location"].to_str().expect("a location").to_owned();
                let cookie = answer.headers()["set-cookie"].to_str().expect("a cookie");
                (place, cookie.split(';').next().expect("name=value").to_owned())
            }
        };
        // Its state as `on` shows it.
        let game_state = |on: String, place: String, cookie: String| {
            let http = http.clone();
            async move {
                let answer = http
                    .get(format!("{on}{place}/state"))
                    .header("cookie", cookie)
                    .send()
                    .await
                    .expect("an answer");
                assert_eq!(answer.status(), StatusCode::OK);
                answer.json::<Value>().await.expect("JSON")
            }
        };
        // One game begun before the second front end starts (which must
        // not take it for a game left over), one begun on the second.
        let early = start_game(first.url("")).await;
        let second = first.beside().await;
        let late = start_game(second.url("")).await;
        for (place, cookie) in [&early, &late] {
            for on in [&first, &second] {
                let state = game_state(on.url(""), place.clone(), cookie.clone()).await;
                assert_eq!(state["status"], "running", "{backend:?}: {state}");
            }
            let page = http
                .get(second.url(place))
                .header("cookie", cookie)
                .send()
                .await
                .expect("an answer");
            assert_eq!(page.status(), StatusCode::OK, "{backend:?}");
        }

        let ((ann_id, ann), (bea_id, bea_first)) = ann_and_bea(&first).await;
        // Bea's connector talks to the second front end only.
        let bea = Agent::new(&second, &bea_first.token);
        let duel = started(&bea, &ann, ann_id).await;
        let duelists = [(ann_id, &ann), (bea_id, &bea)];
        let ended = play_out(&duelists, duel, Duration::from_secs(120)).await;
        assert_eq!(ended["status"], "finished", "{backend:?}: {ended}");
        assert_eq!(ended_row(&first, duel).await, "finished", "{backend:?}");
        assert!(
            second.output().contains("another front end leads the agent hall"),
            "{backend:?}: {}",
            second.output()
        );

        // A match in flight when the leader stops: the second front end
        // takes the lead and resumes it; both bots carry on through it.
        let duel = started(&bea, &ann, ann_id).await;
        play_until(&duelists, duel, Duration::from_secs(60), None, |m| moves_played(m) >= 6).await;
        let (_, before) = polled_at(&bea, duel).await;
        first.signal("TERM");
        assert_eq!(first.exit_code(Duration::from_secs(20)).await, Some(0), "{backend:?}");
        let ann = Agent::new(&second, &ann.token);
        let duelists = [(ann_id, &ann), (bea_id, &bea)];
        let resumed = tokio::time::timeout(Duration::from_secs(20), async {
            loop {
                // While the second front end finds out, it answers 503
                // with Retry-After, as a connector expects of a restart.
                let (status, polled) = bea
                    .call_raw(
                        &json!({ "action": "agent_poll", "environment": { "cpu": "test", "engine": "first-legal" } }),
                    )
                    .await;
                if status == StatusCode::SERVICE_UNAVAILABLE {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
                if let Some(m) = polled["matches"]
                    .as_array()
                    .and_then(|matches| matches.iter().find(|m| m["id"] == json!(duel)))
                {
                    return m.clone();
                }
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
        })
        .await
        .expect("the second front end resumes the match");
        assert_eq!(resumed["status"], "running", "{backend:?}: {resumed}");
        assert_eq!(
            resumed["state"]["legs"][0]["history"], before["state"]["legs"][0]["history"],
            "{backend:?}"
        );
        let ended = play_out(&duelists, duel, Duration::from_secs(120)).await;
        assert_eq!(ended["status"], "finished", "{backend:?}: {ended}");
        assert_eq!(ended_row(&second, duel).await, "finished", "{backend:?}");
        for bot in [ann_id, bea_id] {
            assert_eq!(rated_games(&second, bot).await, 2, "{backend:?}: each match rated once");
        }
        assert!(
            second.output().contains("this front end leads the agent hall"),
            "{backend:?}: {}",
            second.output()
        );
    }
}
