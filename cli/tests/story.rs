//! A newcomer's story against the real server, on every backend: sign up,
//! get a token, upload a working bot and a broken one, watch the working one
//! play, read the leaderboard, download a replay and re-run it byte for
//! byte, challenge another bot, run a tournament, read logs.

mod support;

use arbiter_referee::verify::verify;
use arbiter_referee::{Replay, WasmBot};
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use support::{AnswerCheck, Method, StatusCode, TestServer, backends, house};

#[tokio::test(flavor = "multi_thread")]
async fn a_newcomer_uploads_a_bot_that_plays_is_rated_and_replays_byte_for_byte() {
    for backend in backends() {
        let mut server = TestServer::start_opts(support::Options::on(backend).workers(2).schedule(true)).await;
        let spec = Arc::new(Spec::fetch(&server).await);
        server.check_answers(Spec::answer_check(&spec));
        let ann = server.signup("ann").await;
        let (status, body) = ann.post_json("/api/tokens", &json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "token: {body}");
        let api = server.token_client(body["token"].as_str().expect("a token"));
        let (status, me) = api.get("/api/me").await;
        assert_eq!((status, &me["via"]), (StatusCode::OK, &json!("token")), "{me}");
        let (status, _) = ann.get("/api/users/ann").await;
        assert_eq!(status, StatusCode::OK);
        for path in [
            "/api/health",
            "/api/ready",
            "/api/bots",
            "/api/tournaments",
            "/api/matches",
        ] {
            let (status, body) = api.get(path).await;
            assert_eq!(status, StatusCode::OK, "{path}: {body}");
        }

        // A working bot: the greedy house bot's module under a new name.
        let version = support::upload_and_check(&api, "ann-greedy", "othello:std", house("othello-greedy")).await;
        assert_eq!(version["version"]["status"], "active", "{version}");
        let sha256 = version["version"]["sha256"].as_str().expect("sha").to_string();

        // A broken bot: a tic-tac-toe bot entered on an Othello ladder answers
        // the wrong protocol and is rejected with the reason, after the upload.
        let verdict = support::upload_and_check(&api, "ann-confused", "othello:std", house("tictactoe-random")).await;
        assert_eq!(verdict["version"]["status"], "rejected", "{verdict}");
        let reason = verdict["version"]["reason"].as_str().unwrap_or("");
        assert!(
            reason.contains("bad_reply") && reason.contains("smoke match"),
            "{reason}"
        );

        // The scheduler has it playing: wait for a finished match of ann-greedy.
        let matches = support::wait_for(
            &api,
            "/api/matches?bot=ann-greedy&status=finished",
            Duration::from_secs(240),
            |b| b["matches"].as_array().is_some_and(|m| !m.is_empty()),
        )
        .await;
        let played = &matches["matches"][0];
        let match_id = played["id"].as_i64().expect("match id");
        let (status, body) = api.get(&format!("/api/matches/{match_id}")).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (status, body) = api.get("/api/bots/ann-greedy").await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert!(played["participants"][0]["rating_after"].is_f64(), "{played}");

        // The leaderboard shows it with a moved rating.
        let (_, board) = api.get("/api/ladders/othello:std/leaderboard").await;
        let row = board["entries"]
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["bot"] == "ann-greedy"))
            .cloned()
            .expect("ann-greedy is on the leaderboard");
        assert!(row["matches"].as_i64() >= Some(1), "{row}");
        // The rating moved: its deviation always shrinks after a match (the
        // rating itself may stay at 1500 after a draw between equals).
        assert!(row["deviation"].as_f64().is_some_and(|rd| rd < 350.0), "{row}");
        assert_eq!(row["provisional"], true);

        // Download the replay and re-run it with the same modules: same bytes.
        let response = api
            .raw(Method::GET, &format!("/api/matches/{match_id}/replay?download=1"))
            .send()
            .await
            .expect("replay");
        assert_eq!(response.status(), StatusCode::OK);
        assert!(
            response.headers()["content-disposition"]
                .to_str()
                .unwrap_or("")
                .starts_with("attachment"),
            "a download"
        );
        let bytes = response.bytes().await.expect("bytes");
        spec.check(
            "GET",
            &format!("/api/matches/{match_id}/replay"),
            StatusCode::OK,
            &serde_json::from_slice(&bytes).expect("the replay is JSON"),
        );
        let replay = Replay::from_json(&bytes).expect("a replay");
        assert!(
            replay
                .participants
                .iter()
                .any(|p| p.sha256.as_deref() == Some(sha256.as_str()))
        );
        let sandbox = Sandbox::new(SandboxConfig {
            compiler: CompilerCommand::new(env!("CARGO_BIN_EXE_arbiter"), ["__compile-module"]),
            ..SandboxConfig::default()
        })
        .expect("sandbox");
        let module_of = |p: usize| {
            let sha = replay.participants[p].sha256.clone().expect("a module digest");
            let wasm = arbiter_house::ALL
                .iter()
                .map(|b| b.wasm())
                .find(|w| arbiter_ladder::blobs::sha256_hex(w) == sha);
            WasmBot::new(
                sandbox.clone(),
                sandbox.load(wasm.expect("a house module")).expect("loads"),
                "bot",
            )
        };
        let (a, b) = (module_of(0), module_of(1));
        verify(&replay, [&a, &b]).expect("the replay re-runs byte for byte");
        let transcript = api
            .raw(Method::GET, &format!("/api/matches/{match_id}/transcript"))
            .send()
            .await
            .expect("transcript");
        assert_eq!(transcript.status(), StatusCode::OK);
        spec.content_type(
            "GET",
            &format!("/api/matches/{match_id}/transcript"),
            StatusCode::OK,
            transcript.headers()["content-type"].to_str().unwrap_or(""),
        );
        assert_eq!(
            transcript.text().await.expect("text").lines().count(),
            2,
            "one line per leg"
        );

        // Logs: the owner reads them, another user may not.
        let (status, logs) = api.get(&format!("/api/matches/{match_id}/logs")).await;
        assert_eq!(status, StatusCode::OK, "{logs}");
        let bob = server.signup("bob").await;
        let (status, _) = bob.get(&format!("/api/matches/{match_id}/logs")).await;
        assert_eq!(status, StatusCode::FORBIDDEN);

        // A challenge jumps the queue and is played.
        support::challenge_and_wait(&api, "ann-greedy", "othello-random", "othello:std").await;
        let (status, _) = bob
            .post_json(
                "/api/challenges",
                &json!({"bot": "ann-greedy", "opponent": "othello-random", "ladder": "othello:std"}),
            )
            .await;
        assert_eq!(status, StatusCode::FORBIDDEN, "only the owner challenges with a bot");

        // Time controls: the ladder's is listed; a challenge may pick a
        // longer one from the ladder's list, and nothing else.
        let (_, ladders) = api.get("/api/ladders").await;
        let std = ladders["ladders"]
            .as_array()
            .expect("ladders")
            .iter()
            .find(|l| l["name"] == "othello:std")
            .expect("othello:std")
            .clone();
        assert_eq!(std["time_control"]["turn_ms"], 1000, "{std}");
        assert_eq!(std["time_control"]["bank_ms"], 10000, "{std}");
        assert_eq!(std["time_control"]["fuel_per_ms"], 10_000_000, "{std}");
        assert_eq!(std["challenge_time_controls"], json!(["5000/30000", "10000/60000"]));
        let (status, body) = api
            .post_json(
                "/api/challenges",
                &json!({"bot": "ann-greedy", "opponent": "othello-random", "ladder": "othello:std", "time": "20000/90000"}),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
        assert!(
            body["error"].as_str().is_some_and(|e| e.contains("10000/60000")),
            "names the controls offered: {body}"
        );
        let (status, body) = api
            .post_json(
                "/api/challenges",
                &json!({"bot": "ann-greedy", "opponent": "othello-random", "ladder": "othello:std", "time": "5000/30000"}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let long_match = body["match"]["id"].as_i64().expect("id");
        let db = server.db().await;
        let (turn, bank): (Option<i64>, Option<i64>) =
            sqlx::query_as("SELECT turn_ms, bank_ms FROM matches WHERE id = $1")
                .bind(long_match)
                .fetch_one(&db.pool)
                .await
                .expect("the match");
        assert_eq!(
            (turn, bank),
            (Some(5000), Some(30000)),
            "the match keeps the chosen control"
        );

        // A small round-robin tournament with a crosstable.
        let (status, body) = api
            .post_json(
                "/api/tournaments",
                &json!({"name": "ann's cup", "ladder": "othello:std", "bots": ["ann-greedy", "othello-random", "othello-ab-weak"], "matches_per_pair": 1}),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        let tournament = body["tournament"]["id"].as_i64().expect("id");
        let done = support::wait_for(
            &api,
            &format!("/api/tournaments/{tournament}"),
            Duration::from_secs(240),
            |b| b["tournament"]["finished"] == b["tournament"]["matches"],
        )
        .await;
        let points: f64 = done["standings"]
            .as_array()
            .expect("standings")
            .iter()
            .filter_map(|s| s["points"].as_f64())
            .sum();
        assert_eq!(points, 3.0, "three pairs, one point each: {done}");
        assert_eq!(done["crosstable"].as_object().map(|c| c.len()), Some(3));

        // Retiring takes the bot out of matchmaking.
        let (status, body) = api.post_json("/api/bots/ann-greedy/retire", &json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        let (_, board) = api.get("/api/ladders/othello:std/leaderboard").await;
        assert!(
            !board["entries"]
                .as_array()
                .expect("rows")
                .iter()
                .any(|r| r["bot"] == "ann-greedy")
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_openapi_document_lists_every_resource() {
    let mut server = TestServer::start_opts(
        support::Options::on(support::Backend::Sqlite)
            .workers(0)
            .schedule(false),
    )
    .await;
    let spec = Arc::new(Spec::fetch(&server).await);
    let doc = spec.doc.clone();
    server.check_answers(Spec::answer_check(&spec));
    assert_eq!(doc["openapi"], "3.1.0");
    for path in [
        "/api/bots",
        "/api/ladders/{ladder}/leaderboard",
        "/api/matches/{id}/replay",
        "/api/challenges",
        "/api/tournaments",
        "/api/events",
        "/api/tokens",
    ] {
        assert!(doc["paths"].get(path).is_some(), "{path} is documented");
    }

    // What the server answers is what the document says (each of these
    // disagreed once: 201 documented as 200, an undocumented 401, query
    // parameters and limits not declared, plain text declared as JSON).
    let client = server.signup("doc_reader").await;
    let (status, _) = client.post_json("/api/tokens", &json!({})).await;
    assert_eq!(status, StatusCode::CREATED);
    assert!(
        doc.pointer("/paths/~1api~1tokens/post/responses/201").is_some(),
        "201 of POST /api/tokens"
    );
    let (status, _) = server
        .client()
        .post_json("/api/sessions", &json!({"name": "doc_reader", "password": "wrong one"}))
        .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(
        doc.pointer("/paths/~1api~1sessions/post/responses/401").is_some(),
        "401 of POST /api/sessions"
    );
    let parameters = |pointer: &str| -> Vec<(String, Value)> {
        doc.pointer(pointer)
            .and_then(Value::as_array)
            .map(|list| {
                list.iter()
                    .map(|p| (p["name"].as_str().unwrap_or_default().to_owned(), p["schema"].clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    let matches = parameters("/paths/~1api~1matches/get/parameters");
    let names: Vec<&str> = matches.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(
        names,
        [
            "ladder", "status", "bot", "user", "result", "reason", "from", "to", "after", "before", "limit"
        ]
    );
    let limit = &matches.iter().find(|(name, _)| name == "limit").expect("limit").1;
    assert_eq!(
        (limit["minimum"].as_i64(), limit["maximum"].as_i64()),
        (Some(1), Some(200))
    );
    let (status, body) = client.get("/api/matches?limit=201").await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    let (status, _) = client.get("/api/matches?limit=200").await;
    assert_eq!(status, StatusCode::OK, "the documented maximum is accepted");
    let board = parameters("/paths/~1api~1ladders~1{ladder}~1leaderboard/get/parameters");
    let limit = &board.iter().find(|(name, _)| name == "limit").expect("limit").1;
    let most = limit["maximum"].as_i64().expect("a maximum");
    let (status, _) = client
        .get(&format!("/api/ladders/othello:std/leaderboard?limit={most}"))
        .await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = client
        .get(&format!("/api/ladders/othello:std/leaderboard?limit={}", most + 1))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert!(
        doc.pointer("/paths/~1api~1matches~1{id}~1transcript/get/responses/200/content/text~1plain")
            .is_some(),
        "the transcript is text/plain"
    );
}

/// The server's own OpenAPI document, and every answer of the story checked
/// against it: the operation (method and path template), the status and
/// the body's JSON schema must all be declared, and the body must match.
struct Spec {
    doc: Value,
}

impl Spec {
    /// `GET /api/openapi.json` of `server`.
    async fn fetch(server: &TestServer) -> Spec {
        let response = server
            .client()
            .raw(Method::GET, "/api/openapi.json")
            .send()
            .await
            .expect("the document");
        assert_eq!(response.status(), StatusCode::OK);
        Spec {
            doc: response.json().await.expect("JSON"),
        }
    }

    /// A check that validates every JSON answer a client gets against
    /// `spec` ([`Spec::check`]).
    fn answer_check(spec: &Arc<Spec>) -> AnswerCheck {
        let spec = Arc::clone(spec);
        AnswerCheck(Arc::new(move |method, path, status, body| {
            spec.check(method, path, status, body)
        }))
    }

    /// The response object the document declares for `method path` and
    /// `status` (a `$ref` to a shared response resolved).
    fn response(&self, method: &str, path: &str, status: StatusCode) -> &Value {
        let path = path.split('?').next().unwrap_or(path);
        let segments: Vec<&str> = path.split('/').collect();
        let paths = self.doc["paths"].as_object().expect("paths");
        let template = paths
            .keys()
            .filter(|template| {
                let parts: Vec<&str> = template.split('/').collect();
                parts.len() == segments.len()
                    && parts
                        .iter()
                        .zip(&segments)
                        .all(|(t, s)| t == s || (t.starts_with('{') && t.ends_with('}') && !s.is_empty()))
            })
            // An exact path before a template.
            .min_by_key(|template| template.matches('{').count())
            .unwrap_or_else(|| panic!("{method} {path} is not in the document"));
        let operation = &paths[template][method.to_lowercase()];
        assert!(operation.is_object(), "{method} {template} is not in the document");
        let mut response = &operation["responses"][status.as_str()];
        assert!(
            response.is_object(),
            "{method} {template} answered {status}, which the document does not declare"
        );
        if let Some(reference) = response["$ref"].as_str() {
            let pointer = reference.strip_prefix('#').expect("a local reference");
            response = self
                .doc
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{reference} is not in the document"));
        }
        response
    }

    /// Panics unless the document declares `content_type` (its media type)
    /// for `method path` answering `status`.
    fn content_type(&self, method: &str, path: &str, status: StatusCode, content_type: &str) {
        let media = content_type.split(';').next().unwrap_or("").trim();
        let response = self.response(method, path, status);
        assert!(
            response["content"].get(media).is_some(),
            "{method} {path} answered {status} as {media}, declared: {}",
            response["content"]
        );
    }

    /// Panics unless `body` matches the JSON schema the document declares
    /// for `method path` answering `status`.
    fn check(&self, method: &str, path: &str, status: StatusCode, body: &Value) {
        let response = self.response(method, path, status);
        let schema = response
            .pointer("/content/application~1json/schema")
            .unwrap_or_else(|| panic!("{method} {path} answered {status} with JSON, and no JSON schema is declared"));
        // The schema with the document's components at its root, so that
        // its `#/components/schemas/...` references resolve.
        let mut root = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "components": self.doc["components"].clone(),
        });
        match schema.as_object() {
            Some(schema) => {
                for (key, value) in schema {
                    root[key] = value.clone();
                }
            }
            None => root["allOf"] = json!([schema]),
        }
        let validator = jsonschema::draft202012::new(&root)
            .unwrap_or_else(|e| panic!("the schema of {method} {path} {status} does not compile: {e}"));
        let errors: Vec<String> = validator
            .iter_errors(body)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{method} {path} answered {status} against its schema: {errors:#?}\nbody: {body}"
        );
    }
}
