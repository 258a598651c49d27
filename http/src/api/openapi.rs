//! The OpenAPI 3.1 document of the JSON API, served at `/api/openapi.json`.

use crate::server::AppState;
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/openapi.json", get(|| async { Json(document()) }))
}

/// One operation: summary, whether it needs a caller, and its success
/// status. Every operation may answer 401: a token or session that is sent
/// and not valid is refused even where none is needed.
fn op(summary: &str, auth: bool, ok: u16, body: Option<Value>) -> Value {
    let mut responses = json!({
        ok.to_string(): {"description": "success", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Ok"}}}},
        "400": {"$ref": "#/components/responses/Error"},
        "401": {"$ref": "#/components/responses/Error"},
        "404": {"$ref": "#/components/responses/Error"},
        "429": {"$ref": "#/components/responses/Error"},
        "503": {"$ref": "#/components/responses/Error"},
    });
    if auth {
        responses["403"] = json!({"$ref": "#/components/responses/Error"});
    }
    let mut operation = json!({"summary": summary, "responses": responses});
    if auth {
        operation["security"] = json!([{"bearer": []}, {"session": []}]);
    }
    if let Some(body) = body {
        operation["requestBody"] = body;
    }
    operation
}

fn json_body(properties: Value, required: &[&str]) -> Value {
    json!({"required": true, "content": {"application/json": {"schema": {
        "type": "object", "properties": properties, "required": required}}}})
}

fn path_param(name: &str, description: &str) -> Value {
    json!([{"name": name, "in": "path", "required": true, "description": description, "schema": {"type": "string"}}])
}

/// A positive integer id in the path.
fn id_param(name: &str, description: &str) -> Value {
    json!([{"name": name, "in": "path", "required": true, "description": description,
        "schema": {"type": "integer", "minimum": 1, "format": "int64"}}])
}

/// An optional query parameter.
fn query(name: &str, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": "query", "required": false, "description": description, "schema": schema})
}

/// Adds `status` with the error envelope to `operation`'s responses.
fn with_error(mut operation: Value, status: u16) -> Value {
    operation["responses"][status.to_string()] = json!({"$ref": "#/components/responses/Error"});
    operation
}

/// Sets `operation`'s query parameters.
fn with_query(mut operation: Value, parameters: Vec<Value>) -> Value {
    operation["parameters"] = Value::Array(parameters);
    operation
}

/// The document.
pub fn document() -> Value {
    let credentials = json_body(
        json!({"name": {"type": "string"}, "password": {"type": "string"}}),
        &["name", "password"],
    );
    let upload = json!({"required": true, "content": {"multipart/form-data": {"schema": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "bot name: 3-32 letters, digits, _ or -"},
            "ladders": {"type": "string", "description": "ladders, comma-separated or repeated, e.g. othello:std"},
            "module": {"type": "string", "format": "binary", "description": "the .wasm (WASI preview 1 command), at most 16 MiB"},
            "csrf": {"type": "string", "description": "the session's CSRF token (not needed with an API token)"}
        },
        "required": ["name", "ladders", "module"]}}}});
    let mut paths = json!({
        "/api/users": {"post": with_error(op("Sign up; sets the session cookie (409 for a name that is taken)", false, 201, Some(credentials.clone())), 409)},
        "/api/users/{name}": {"get": op("A user's public profile", false, 200, None), "parameters": path_param("name", "user name")},
        "/api/sessions": {
            "post": with_error(op("Sign in; sets the session cookie (401 for a wrong name or password)", false, 200, Some(credentials)), 401),
            "delete": op("Sign out", true, 200, None)
        },
        "/api/me": {"get": op("The signed-in user (and the session's CSRF token)", true, 200, None)},
        "/api/tokens": {"post": op("Issue an API token, shown once; revokes the previous one", true, 201, None)},
        "/api/bots": {
            "get": op("Every bot", false, 200, None),
            "post": with_error(with_error(op("Upload a module: a new bot or a new version of yours; checked off the request path (413 over the size limit, 409 same module twice)", true, 202, Some(upload)), 409), 413)
        },
        "/api/bots/{name}": {"get": op("A bot, its versions with status and ratings, its recent matches", false, 200, None), "parameters": path_param("name", "bot name")},
        "/api/bots/{name}/retire": {"post": op("Retire a bot of yours from matchmaking", true, 200, None), "parameters": path_param("name", "bot name")},
        "/api/versions/{id}": {"get": op("A version: checking, active, retired or rejected (with the reason; stderr for the owner)", false, 200, None), "parameters": id_param("id", "version id")},
        "/api/health": {"get": op("Liveness: 200 while the server answers", false, 200, None)},
        "/api/ready": {"get": op("Readiness: 200 when the database answers within 2 s with its schema current, else 503", false, 200, None)},
        "/api/ladders": {"get": op("Every ladder, with its time control and the longer ones a challenge may choose", false, 200, None)},
        "/api/ladders/{ladder}/leaderboard": {"get": with_query(op("A leaderboard: rank, rating ± 2·RD, conservative rating (rating − 2·RD), W/D/L, matches, provisional", false, 200, None), vec![
            query("sort", "rating (default: established versions first, by rating) or conservative (by rating − 2·RD)", json!({"type": "string", "enum": ["rating", "conservative"]})),
            query("limit", "rows, default 100", json!({"type": "integer", "minimum": 1, "maximum": 500})),
            query("offset", "rows to skip, default 0", json!({"type": "integer", "minimum": 0})),
        ]), "parameters": path_param("ladder", "e.g. othello:std")},
        "/api/matches": {"get": with_query(op("Matches, newest first", false, 200, None), vec![
            query("ladder", "only this ladder, e.g. othello:std", json!({"type": "string"})),
            query("status", "only matches in this state", json!({"type": "string", "enum": ["queued", "running", "finished", "failed"]})),
            query("bot", "only matches of this bot (404 for an unknown bot)", json!({"type": "string"})),
            query("before", "only matches with a smaller id (the next page)", json!({"type": "integer", "minimum": 0, "format": "int64"})),
            query("limit", "at most this many, default 50", json!({"type": "integer", "minimum": 1, "maximum": 200})),
        ])},
        "/api/matches/{id}": {"get": op("A match: participants, result, finish reasons, rating changes", false, 200, None), "parameters": id_param("id", "match id")},
        "/api/matches/{id}/replay": {"get": with_query(op("The replay JSON", false, 200, None), vec![
            query("download", "any value: served as an attachment", json!({"type": "string"})),
        ]), "parameters": id_param("id", "match id")},
        "/api/matches/{id}/transcript": {"get": op("Othello move transcripts, one line per leg (text/plain)", false, 200, None), "parameters": id_param("id", "match id")},
        "/api/matches/{id}/frames": {"get": with_query(op("A skirmish game as frames for viewers: the map, the start, what changed in every tick, the end (gzip when asked)", false, 200, None), vec![
            query("game", "1 (default) or 2", json!({"type": "string", "enum": ["1", "2"]})),
        ]), "parameters": id_param("id", "match id")},
        "/api/matches/{id}/training.jsonl": {"get": op("A skirmish match as training data: one JSON line per game, tick and side (application/x-ndjson)", false, 200, None), "parameters": id_param("id", "match id")},
        "/api/matches/{id}/logs": {"get": op("Your bot's stderr in this match (owners only)", true, 200, None), "parameters": id_param("id", "match id")},
        "/api/challenges": {"post": op("Challenge another bot with one of yours; jumps the queue", true, 201, Some(json_body(
            json!({"bot": {"type": "string"}, "opponent": {"type": "string"}, "ladder": {"type": "string"},
                "time": {"type": "string", "description": "`ladder` (default) or one of the ladder's challenge_time_controls, MOVE_MS/BANK_MS, e.g. 10000/60000"}}),
            &["bot", "opponent", "ladder"])))},
        "/api/tournaments": {
            "get": op("Tournaments", false, 200, None),
            "post": op("A round-robin tournament", true, 201, Some(json_body(
                json!({"name": {"type": "string"}, "ladder": {"type": "string"}, "bots": {"type": "array", "items": {"type": "string"}}, "matches_per_pair": {"type": "integer"}}),
                &["name", "ladder", "bots"])))
        },
        "/api/tournaments/{id}": {"get": op("Standings and crosstable", false, 200, None), "parameters": id_param("id", "tournament id")},
        "/api/events": {"get": with_query(op("Live events (server-sent events); with ?match=, the turns so far first (429 past 8 streams per address)", false, 200, None), vec![
            query("match", "only this match's events (404 for an unknown match)", json!({"type": "integer", "minimum": 1, "format": "int64"})),
        ])},
        "/api/openapi.json": {"get": op("This document", false, 200, None)}
    });
    if let Some(events) = paths.pointer_mut("/~1api~1events/get/responses/200/content") {
        *events = json!({"text/event-stream": {"schema": {"type": "string"}}});
    }
    if let Some(transcript) = paths.pointer_mut("/~1api~1matches~1{id}~1transcript/get/responses/200/content") {
        *transcript = json!({"text/plain": {"schema": {"type": "string"}}});
    }
    if let Some(training) = paths.pointer_mut("/~1api~1matches~1{id}~1training.jsonl/get/responses/200/content") {
        *training = json!({"application/x-ndjson": {"schema": {"type": "string"}}});
    }
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Arbiter",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The ladder for game-playing bots. Every refusal is {\"ok\": false, \"error\": \"...\"} with the fitting status."
        },
        "paths": paths,
        "components": {
            "schemas": {
                "Ok": {"type": "object", "properties": {"ok": {"const": true}}, "required": ["ok"]},
                "Error": {"type": "object", "properties": {"ok": {"const": false}, "error": {"type": "string"}}, "required": ["ok", "error"]}
            },
            "responses": {
                "Error": {"description": "refused, with the reason", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
            },
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "an API token from POST /api/tokens"},
                "session": {"type": "apiKey", "in": "cookie", "name": "arbiter_session"}
            }
        }
    })
}
