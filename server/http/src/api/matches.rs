//! Matches: lists, details, replays (JSON and Othello transcript), skirmish
//! frames and training data (plain and gzipped), and the owner-only logs.

use crate::api::ApiQuery;
use crate::api::{ErrorResponse, True};
use crate::error::{ApiError, ApiResult};
use crate::server::AppState;
use arbiter_games::Variant;
use arbiter_ladder::auth::Caller;
use arbiter_ladder::error::Error;
use arbiter_ladder::match_search::{self, Cursor, MatchQuery, Written};
use arbiter_ladder::matches::{self, MatchLog, MatchSummary};
use arbiter_ladder::model::{MatchId, MatchStatus, UserId};
use arbiter_referee::Replay;
use axum::Json;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{Extensions, HeaderMap, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::convert::Infallible;
use std::sync::Arc;
use tower::{Layer, ServiceExt};
use tower_http::compression::{CompressionLayer, CompressionLevel};
use utoipa::ToSchema;
use utoipa_axum::router::{OpenApiRouter, UtoipaMethodRouter};
use utoipa_axum::routes;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list))
        .routes(routes!(detail))
        .routes(compressed(routes!(replay)))
        .routes(routes!(transcript))
        .routes(compressed(routes!(frames)))
        .routes(compressed(routes!(training)))
        // A gzip file already: not compressed again.
        .routes(routes!(training_gz))
        .routes(routes!(logs))
}

/// `routes` answering gzip (or another coding) when the client accepts it.
fn compressed((schemas, paths, method_router): UtoipaMethodRouter<AppState>) -> UtoipaMethodRouter<AppState> {
    (schemas, paths, method_router.layer(CompressionLayer::new()))
}

/// `GET /api/matches`: matches, newest first, and the cursors of the
/// pages beside them.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchList {
    /// `true`.
    pub ok: True,
    /// The matches.
    pub matches: Vec<MatchSummary>,
    /// The cursor of the next page (older matches) for `after`; `null` on
    /// the last page.
    pub older: Option<String>,
    /// The cursor of the page before (newer matches) for `after`; `null`
    /// on the newest page.
    pub newer: Option<String>,
}

/// The results `GET /api/matches` filters by (documentation of
/// `result`; read by [`match_search::ResultFilter::parse`]).
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[expect(dead_code, reason = "a schema for the document; the query is read as text")]
enum ResultName {
    Win,
    Loss,
    Draw,
    Decisive,
}

/// The finish reasons `GET /api/matches` filters by, and `fault` (any
/// fault); documentation of `reason`, read by
/// [`match_search::ReasonFilter::parse`].
#[derive(ToSchema)]
#[schema(rename_all = "snake_case")]
#[expect(dead_code, reason = "a schema for the document; the query is read as text")]
enum ReasonName {
    Fault,
    Discs,
    Line,
    Draw,
    Elimination,
    Score,
    Timeout,
    IllegalMove,
    BadReply,
    Crash,
    Resigned,
}

/// `GET /api/matches/{id}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchBody {
    /// `true`.
    pub ok: True,
    /// The match.
    #[serde(rename = "match")]
    pub match_: MatchSummary,
}

/// `GET /api/matches/{id}/logs`: the caller's bots' stderr.
#[derive(Debug, Serialize, ToSchema)]
pub struct MatchLogs {
    /// `true`.
    pub ok: True,
    /// One entry per participant of the caller and game.
    pub logs: Vec<MatchLog>,
}

/// The id of a match in a path.
const ID: &str = "match id";

/// Reads a match id from the path: a segment that is not one (not a
/// positive integer) names no match, a 404.
pub fn parse_id(id: &str) -> Result<i64, ApiError> {
    crate::api::path_id("match", id)
}

/// The most matches one page lists.
pub const MAX_LIMIT: i64 = 200;

/// Filters of `GET /api/matches` (any other parameter is refused).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Filter {
    ladder: Option<String>,
    status: Option<String>,
    bot: Option<String>,
    user: Option<String>,
    result: Option<String>,
    reason: Option<String>,
    from: Option<String>,
    to: Option<String>,
    after: Option<String>,
    before: Option<i64>,
    limit: Option<i64>,
}

/// `GET /api/matches?ladder=&status=&bot=&user=&result=&reason=&from=&to=&after=&limit=`:
/// newest first, a page at a time.
#[utoipa::path(get, path = "/matches", tag = "matches",
    summary = "Matches, newest first, filtered and paged by cursor",
    description = "Each filter given narrows the list. Pages are read by keyset: `after` takes the `older` or `newer` cursor of a page, so matches queued meanwhile never shift a page. 400 for a filter that cannot be read, 404 for an unknown bot or user.",
    params(
        ("ladder" = Option<crate::api::ladders::AnyLadderName>, Query, description = "only this ladder, e.g. othello:std"),
        ("status" = Option<MatchStatus>, Query, description = "only matches in this state"),
        ("bot" = Option<String>, Query, description = "only matches of this bot (404 for an unknown bot)"),
        ("user" = Option<String>, Query, description = "only matches of this user's bots (404 for an unknown user)"),
        ("result" = inline(Option<ResultName>), Query, description = "win or loss: of the bot, else of the user's bots (without either: decided, as decisive); draw; decisive"),
        ("reason" = inline(Option<ReasonName>), Query, description = "only matches with a game that ended this way: a finish reason, or fault (any of timeout, illegal_move, bad_reply, crash)"),
        ("from" = Option<String>, Query, description = "only matches finished (else started, else queued) on or after this day, UTC, YYYY-MM-DD", format = Date),
        ("to" = Option<String>, Query, description = "… and on or before this day, UTC, YYYY-MM-DD (a day before from: no match)", format = Date),
        ("after" = Option<String>, Query, description = "a page's `older` or `newer` cursor: the page next to it (400 for anything else)", pattern = "^[on][0-9a-z]{1,12}$"),
        ("before" = Option<i64>, Query, description = "only matches with a smaller id; 0 or absent: any", minimum = 0),
        ("limit" = Option<i64>, Query, description = "at most this many, default 50", minimum = 1, maximum = 200),
    ),
    responses(
        (status = 200, description = "the matches", body = MatchList),
        (status = 400, response = ErrorResponse),
    ))]
async fn list(State(state): State<AppState>, ApiQuery(filter): ApiQuery<Filter>) -> ApiResult<Json<MatchList>> {
    let limit = crate::api::in_range("limit", filter.limit, 50, 1..=MAX_LIMIT)?;
    // 0, like no `before`, is the first page.
    let before = crate::api::in_range("before", filter.before, 0, 0..=i64::MAX)?;
    // The site's form sends blank fields for "any"; the API takes a
    // parameter as written or not at all.
    for (name, value) in [
        ("ladder", &filter.ladder),
        ("status", &filter.status),
        ("result", &filter.result),
        ("reason", &filter.reason),
        ("from", &filter.from),
        ("to", &filter.to),
        ("after", &filter.after),
    ] {
        if let Some(value) = value
            && (value.is_empty() || value.trim() != value)
        {
            return Err(ApiError(Error::Invalid(format!(
                "{name} {value:?} is empty or has spaces around it: leave {name} out for any"
            ))));
        }
    }
    let after = filter.after.as_deref().map(Cursor::parse).transpose()?;
    let query = MatchQuery {
        after,
        below: (before != 0).then_some(MatchId(before)),
        limit,
        ..match_search::resolve(&state.core.db, &Written::from(&filter)).await?
    };
    let page = match_search::search(&state.core.db, &query).await?;
    Ok(Json(MatchList {
        ok: True,
        matches: page.matches,
        older: page.older.map(Cursor::token),
        newer: page.newer.map(Cursor::token),
    }))
}

impl From<&Filter> for Written {
    fn from(filter: &Filter) -> Written {
        Written {
            ladder: filter.ladder.clone(),
            status: filter.status.clone(),
            bot: filter.bot.clone(),
            user: filter.user.clone(),
            result: filter.result.clone(),
            reason: filter.reason.clone(),
            from: filter.from.clone(),
            to: filter.to.clone(),
        }
    }
}

/// `GET /api/matches/{id}`.
#[utoipa::path(get, path = "/matches/{id}", tag = "matches",
    summary = "A match: participants, result, finish reasons, rating changes",
    params(("id" = i64, Path, description = ID, minimum = 1)),
    responses(
        (status = 200, description = "the match", body = MatchBody),
    ))]
async fn detail(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Json<MatchBody>> {
    let id = MatchId(parse_id(&id)?);
    let found = matches::find(&state.core.db, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("match {id}")))?;
    Ok(Json(MatchBody {
        ok: True,
        match_: found,
    }))
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Download {
    download: Option<String>,
}

/// `GET /api/matches/{id}/replay[?download=1]`: the replay JSON.
#[utoipa::path(get, path = "/matches/{id}/replay", tag = "matches",
    summary = "The replay JSON (gzip when asked)",
    params(
        ("id" = i64, Path, description = ID, minimum = 1),
        ("download" = Option<String>, Query, description = "any value: served as an attachment"),
    ),
    responses(
        (status = 200, description = "the replay", content_type = "application/json", body = Object),
    ))]
async fn replay(
    State(state): State<AppState>,
    Path(id): Path<String>,
    ApiQuery(q): ApiQuery<Download>,
) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let bytes = matches::replay_bytes(&state.core, MatchId(id)).await?;
    let disposition = if q.download.is_some() {
        format!("attachment; filename=\"arbiter-match-{id}.json\"")
    } else {
        format!("inline; filename=\"arbiter-match-{id}.json\"")
    };
    Ok((
        [
            (header::CONTENT_TYPE, "application/json".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        bytes,
    )
        .into_response())
}

/// `GET /api/matches/{id}/transcript`: Othello move transcripts, one line
/// per leg (`f5d6c3…`, `--` for a pass).
#[utoipa::path(get, path = "/matches/{id}/transcript", tag = "matches",
    summary = "Othello move transcripts, one line per leg (text/plain)",
    params(("id" = i64, Path, description = ID, minimum = 1)),
    responses(
        (status = 200, description = "one line per leg", content_type = "text/plain", body = String),
    ))]
async fn transcript(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let bytes = matches::replay_bytes(&state.core, MatchId(id)).await?;
    let replay = Replay::from_json(&bytes).map_err(|e| ApiError(Error::Internal(e.to_string())))?;
    // Another game's match has no transcript: the resource does not exist
    // (the request itself is well formed, as the document allows it).
    if !matches!(replay.variant(), Some(Variant::Othello(_))) {
        return Err(ApiError(Error::NotFound(format!(
            "match {id} has no transcript: transcripts exist for Othello matches only"
        ))));
    }
    let mut text = String::new();
    for game in &replay.games {
        let line = game.record.transcript().unwrap_or("");
        text.push_str(line);
        text.push('\n');
    }
    let disposition = format!("attachment; filename=\"arbiter-match-{id}.txt\"");
    Ok((
        [
            (header::CONTENT_TYPE, "text/plain; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        text,
    )
        .into_response())
}

/// `GET /api/matches/{id}/frames?game=N`: a skirmish game (game 1 or 2,
/// default 1) as frames for viewers: the map, the start, what changed in
/// every tick, and the end (re-simulated from the replay's record when
/// first asked for, then kept: see [`matches::frames_json`]).
#[utoipa::path(get, path = "/matches/{id}/frames", tag = "matches",
    summary = "A skirmish game as frames for viewers: the map, the start, what changed in every tick, the end (gzip when asked; computed once, then kept)",
    params(
        ("id" = i64, Path, description = ID, minimum = 1),
        ("game" = Option<String>, Query, description = "1 (default) or 2", pattern = "^[12]$"),
    ),
    responses(
        (status = 200, description = "the frames", content_type = "application/json", body = Object),
    ))]
async fn frames(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(query): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let games: Vec<&str> = query
        .iter()
        .filter(|(key, _)| key == "game")
        .map(|(_, value)| value.as_str())
        .collect();
    let game = match games.as_slice() {
        [] | ["1"] => 0,
        ["2"] => 1,
        [other] => return Err(ApiError(Error::Invalid(format!("game must be 1 or 2, not {other:?}")))),
        _ => return Err(ApiError(Error::Invalid("give game once: 1 or 2".into()))),
    };
    let kept = matches::frames_json(&state.core, MatchId(id), game).await?;
    if !accepts_gzip(&headers) {
        return Ok((
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(Bytes::from_owner(Shared(kept.json))),
        )
            .into_response());
    }
    // Gzipped once, then served as kept (the compression layer leaves an
    // answer with a `Content-Encoding` alone).
    let gzipped = kept
        .gzip
        .get_or_try_init(|| async { gzip(kept.json.to_vec(), FRAMES_GZIP_LEVEL).await.map(Arc::new) })
        .await
        .map_err(|e| ApiError(Error::Internal(format!("cannot gzip the frames of match {id}: {e}"))))?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/json"),
            (header::CONTENT_ENCODING, "gzip"),
            (header::VARY, "accept-encoding"),
        ],
        Body::from(Bytes::from_owner(Shared(Arc::clone(gzipped)))),
    )
        .into_response())
}

/// Whether `Accept-Encoding` names gzip (or `*`) with a weight above zero.
fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .any(|coding| {
            let mut parts = coding.split(';').map(str::trim);
            let name = parts.next().unwrap_or("");
            let zero = parts.any(|p| {
                p.strip_prefix("q=")
                    .is_some_and(|q| q.parse::<f32>().is_ok_and(|q| q <= 0.0))
            });
            (name.eq_ignore_ascii_case("gzip") || name == "*") && !zero
        })
}

/// Bytes kept in a cache, served without a copy.
struct Shared(Arc<Vec<u8>>);

impl AsRef<[u8]> for Shared {
    fn as_ref(&self) -> &[u8] {
        self.0.as_slice()
    }
}

/// `GET /api/matches/{id}/training.jsonl`: a skirmish match as training
/// data, one JSON line per game, tick and side (see `arbiter replay export
/// --jsonl`). To a client that accepts gzip, the gzip file of
/// `training.jsonl.gz` as the `Content-Encoding` (made once, then kept);
/// to another, re-simulated on every request.
#[utoipa::path(get, path = "/matches/{id}/training.jsonl", tag = "matches",
    summary = "A skirmish match as training data: one JSON line per game, tick and side (application/x-ndjson; gzip on the wire when asked; training.jsonl.gz is the same lines as a gzip file)",
    params(("id" = i64, Path, description = ID, minimum = 1)),
    responses(
        (status = 200, description = "one JSON object per line", content_type = "application/x-ndjson", body = String),
    ))]
async fn training(State(state): State<AppState>, Path(id): Path<String>, headers: HeaderMap) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let disposition = format!("attachment; filename=\"arbiter-match-{id}.jsonl\"");
    if accepts_gzip(&headers) {
        let gzipped =
            matches::training_gzip(&state.core, MatchId(id), |jsonl| gzip(jsonl, TRAINING_GZIP_LEVEL)).await?;
        return Ok((
            [
                (header::CONTENT_TYPE, "application/x-ndjson".to_string()),
                (header::CONTENT_DISPOSITION, disposition),
                (header::CONTENT_ENCODING, "gzip".to_string()),
                (header::VARY, "accept-encoding".to_string()),
            ],
            gzipped,
        )
            .into_response());
    }
    let body = matches::training_jsonl(&state.core, MatchId(id)).await?;
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-ndjson".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// `GET /api/matches/{id}/training.jsonl.gz`: the lines of
/// `training.jsonl` as a gzip file (not a `Content-Encoding`: what is
/// saved stays compressed), made when first asked for and then kept.
#[utoipa::path(get, path = "/matches/{id}/training.jsonl.gz", tag = "matches",
    summary = "A skirmish match as gzipped training data: the lines of training.jsonl in a gzip file (application/gzip), made once, then kept",
    params(("id" = i64, Path, description = ID, minimum = 1)),
    responses(
        (status = 200, description = "a gzip file (binary) of one JSON object per line", content_type = "application/gzip", body = String),
    ))]
async fn training_gz(State(state): State<AppState>, Path(id): Path<String>) -> ApiResult<Response> {
    let id = parse_id(&id)?;
    let body = matches::training_gzip(&state.core, MatchId(id), |jsonl| gzip(jsonl, TRAINING_GZIP_LEVEL)).await?;
    let disposition = format!("attachment; filename=\"arbiter-match-{id}.jsonl.gz\"");
    Ok((
        [
            (header::CONTENT_TYPE, "application/gzip".to_string()),
            (header::CONTENT_DISPOSITION, disposition),
        ],
        body,
    )
        .into_response())
}

/// How hard the training data is gzipped: gzip's default (level 6). The
/// first download waits for it, so the slowest levels, a few percent
/// smaller, are not worth their time.
const TRAINING_GZIP_LEVEL: CompressionLevel = CompressionLevel::Default;

/// How hard frames are gzipped: gzip's default, once per game while the
/// process keeps them.
const FRAMES_GZIP_LEVEL: CompressionLevel = CompressionLevel::Default;

/// `bytes` as a gzip file at `level`, made by the same encoder that
/// compresses the answers (tower-http's), on a blocking thread: tens of
/// megabytes of training data take a good part of a second.
pub async fn gzip(bytes: Vec<u8>, level: CompressionLevel) -> std::io::Result<Vec<u8>> {
    let runtime = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || runtime.block_on(gzip_here(bytes, level)))
        .await
        .map_err(std::io::Error::other)?
}

/// [`gzip`] on the calling task.
async fn gzip_here(bytes: Vec<u8>, level: CompressionLevel) -> std::io::Result<Vec<u8>> {
    let mut bytes = Some(bytes);
    let answer = tower::service_fn(move |_: axum::extract::Request| {
        let body = Body::from(bytes.take().unwrap_or_default());
        async move { Ok::<_, Infallible>(Response::new(body)) }
    });
    let compress = CompressionLayer::new()
        .quality(level)
        .compress_when(|_, _, _: &HeaderMap, _: &Extensions| true)
        .layer(answer);
    let request = axum::extract::Request::builder()
        .header(header::ACCEPT_ENCODING, "gzip")
        .body(Body::empty())
        .map_err(std::io::Error::other)?;
    let Ok(response) = compress.oneshot(request).await;
    if response.headers().get(header::CONTENT_ENCODING).map(|v| v.as_bytes()) != Some(b"gzip") {
        return Err(std::io::Error::other("the encoder did not gzip"));
    }
    let gzipped = axum::body::to_bytes(Body::new(response.into_body()), usize::MAX)
        .await
        .map_err(std::io::Error::other)?;
    Ok(gzipped.to_vec())
}

/// `GET /api/matches/{id}/logs`: what the caller's bot wrote to stderr in
/// this match. Only a participating bot's owner may read it.
#[utoipa::path(get, path = "/matches/{id}/logs", tag = "matches",
    summary = "Your bot's stderr in this match (owners only)",
    security(("bearer" = []), ("session" = [])),
    params(("id" = i64, Path, description = ID, minimum = 1)),
    responses(
        (status = 200, description = "the logs", body = MatchLogs),
        (status = 403, response = ErrorResponse),
    ))]
async fn logs(State(state): State<AppState>, Path(id): Path<String>, caller: Caller) -> ApiResult<Json<MatchLogs>> {
    let id = parse_id(&id)?;
    let id = MatchId(id);
    let logs = matches::logs_for(&state.core.db, id, Some(UserId(caller.user_id)))
        .await?
        .map_err(|refused| ApiError(refused.into()))?;
    Ok(Json(MatchLogs { ok: True, logs }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn accepting(value: &'static str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT_ENCODING, HeaderValue::from_static(value));
        headers
    }

    /// The document lists exactly the results and reasons the list reads.
    #[test]
    fn the_documented_filters_are_the_ones_read() {
        let document = crate::api::openapi::document();
        let parameters = document["paths"]["/api/matches"]["get"]["parameters"]
            .as_array()
            .expect("parameters");
        let values = |name: &str| -> Vec<String> {
            let parameter = parameters.iter().find(|p| p["name"] == name).expect(name);
            let schema = &parameter["schema"];
            let schema = match schema["$ref"].as_str() {
                Some(reference) => &document["components"]["schemas"][reference.rsplit('/').next().expect("a name")],
                None => schema,
            };
            let found = schema["enum"]
                .as_array()
                .or_else(|| {
                    schema["oneOf"]
                        .as_array()
                        .and_then(|o| o.iter().find_map(|s| s["enum"].as_array()))
                })
                .unwrap_or_else(|| panic!("{name}: {schema}"));
            found.iter().map(|v| v.as_str().expect("text").to_owned()).collect()
        };
        let reasons: Vec<String> = std::iter::once("fault")
            .chain(match_search::REASONS.iter().map(|r| r.as_str()))
            .map(str::to_owned)
            .collect();
        assert_eq!(values("reason"), reasons);
        for value in &reasons {
            assert!(match_search::ReasonFilter::parse(value).is_ok(), "{value}");
        }
        let results: Vec<String> = match_search::ResultFilter::ALL
            .iter()
            .map(|r| r.as_str().to_owned())
            .collect();
        assert_eq!(values("result"), results);
    }

    #[test]
    fn gzip_is_accepted_only_when_named_with_a_weight() {
        assert!(accepts_gzip(&accepting("gzip")));
        assert!(accepts_gzip(&accepting("br, GZIP;q=0.5")));
        assert!(accepts_gzip(&accepting("*")));
        assert!(!accepts_gzip(&HeaderMap::new()));
        assert!(!accepts_gzip(&accepting("br, deflate")));
        assert!(!accepts_gzip(&accepting("gzip;q=0")));
        assert!(!accepts_gzip(&accepting("gzip; q=0.0, br")));
        assert!(!accepts_gzip(&accepting("xgzip")));
    }
}
