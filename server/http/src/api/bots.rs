//! Bots and versions: upload, list, inspect, retire; the JSON face of
//! [`arbiter_ladder::bots`] and [`arbiter_ladder::uploads`].

use crate::api::{ErrorResponse, True};
use crate::error::{ApiError, ApiResult};
use crate::extract::{JsonBody, OptionalJsonBody};
use crate::extract::{MaybeCaller, sent_csrf};
use crate::server::AppState;
use crate::upload_form::{read_upload, upload_too_large};
use arbiter_ladder::auth::Caller;
use arbiter_ladder::bots::{self, Bot, BotSummary, VersionOfBot, VersionWithRatings};
use arbiter_ladder::matches::MatchSummary;
use arbiter_ladder::model::{UserId, VersionId, VersionStatus};
use arbiter_ladder::profile::MAX_PHOTO_BYTES;
use arbiter_ladder::uploads;
use axum::Json;
use axum::extract::{Multipart, Path, State};
use axum::http::StatusCode;
use serde::Serialize;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

use crate::upload_form::FORM_OVERHEAD;

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list, upload))
        .routes(routes!(detail))
        .routes(routes!(retire))
        .routes(routes!(unretire))
        .routes(routes!(update_profile))
        .merge(
            // A photo's body is read up to its limit and no further.
            OpenApiRouter::new()
                .routes(routes!(put_photo, delete_photo))
                .layer(axum::extract::DefaultBodyLimit::max(MAX_PHOTO_BYTES)),
        )
        .routes(routes!(issue_bot_token))
        .routes(routes!(version))
}

/// The multipart form of an upload (documentation of what
/// [`read_upload`] reads; it refuses any other field).
#[derive(ToSchema)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "a schema of what the handler reads, never built")]
pub struct UploadForm {
    /// Bot name: 3-32 letters, digits, _ or -.
    #[schema(pattern = "^[A-Za-z0-9_-]{3,32}$")]
    name: String,
    /// Ladders, comma-separated or repeated, e.g. othello:std.
    ladders: String,
    /// More ladders, as `ladders` (the site's form sends one per box ticked).
    #[schema(nullable = false)]
    ladder: Option<String>,
    /// The .wasm: a WASI preview-1 command module (at most 16 MiB by
    /// default) or a WASI 0.2 command component (at most 40 MiB). Either
    /// this or `url`.
    #[schema(value_type = Option<String>, format = Binary, nullable = false)]
    module: Option<Vec<u8>>,
    /// Instead of a module: a remote bot, the `http(s)://` or `ws(s)://`
    /// URL of a server on its owner's machine (public addresses only). It
    /// plays on the remote ladders of the games in `ladders`, on the wall
    /// clock, and is active at once.
    #[schema(nullable = false)]
    url: Option<String>,
    /// Instead of a module or a URL, `true`: an agent bot, an Othello
    /// engine on its owner's machine that calls `POST /api/agent` with a
    /// bot token (issued with `POST /api/bots/{name}/token`). Othello
    /// ladders only; active at once.
    #[schema(nullable = false)]
    agent: Option<bool>,
    /// The session's CSRF token (not needed with an API token).
    #[schema(nullable = false)]
    csrf: Option<String>,
}

/// A bot as an upload names it.
#[derive(Debug, Serialize, ToSchema)]
pub struct BotRef {
    /// The bot's id.
    pub id: i64,
    /// The bot's name.
    pub name: String,
}

/// The version an upload created, in `checking`.
#[derive(Debug, Serialize, ToSchema)]
pub struct UploadedVersion {
    /// The version's id (poll `GET /api/versions/{id}`).
    pub id: i64,
    /// Its number within the bot.
    pub number: i64,
    /// The module's SHA-256, hex.
    pub sha256: String,
    /// `checking`.
    pub status: VersionStatus,
    /// The ladders it is to play.
    pub ladders: Vec<String>,
}

/// `POST /api/bots`: the bot and its new version.
#[derive(Debug, Serialize, ToSchema)]
pub struct UploadedBody {
    /// `true`.
    pub ok: True,
    /// The bot.
    pub bot: BotRef,
    /// The new version.
    pub version: UploadedVersion,
}

/// `GET /api/bots`: every bot.
#[derive(Debug, Serialize, ToSchema)]
pub struct BotList {
    /// `true`.
    pub ok: True,
    /// The bots.
    pub bots: Vec<BotSummary>,
}

/// `GET /api/bots/{name}`: the bot, its versions and recent matches.
#[derive(Debug, Serialize, ToSchema)]
pub struct BotDetail {
    /// `true`.
    pub ok: True,
    /// The bot.
    pub bot: Bot,
    /// Its versions with their ratings.
    pub versions: Vec<VersionWithRatings>,
    /// Its latest matches, newest first.
    pub matches: Vec<MatchSummary>,
}

/// `GET /api/versions/{id}`: one version.
#[derive(Debug, Serialize, ToSchema)]
pub struct VersionBody {
    /// `true`.
    pub ok: True,
    /// The version.
    pub version: VersionOfBot,
}

/// `POST /api/bots/{name}/retire`: how many versions left matchmaking.
#[derive(Debug, Serialize, ToSchema)]
pub struct Retired {
    /// `true`.
    pub ok: True,
    /// Versions retired.
    pub retired_versions: u64,
}

/// `POST /api/bots` (multipart: `name`, `ladders`, `module` or `url`):
/// creates the bot if the name is new, or adds a version to the caller's
/// bot. The module is checked off the request path; the answer is 202 with
/// the version in `checking` (a remote bot's URL is checked at once and its
/// version is `active`). A module that is not even valid WebAssembly, or breaks the
/// import/export contract, is refused at once and nothing is stored.
#[utoipa::path(post, path = "/bots", tag = "bots",
    summary = "Upload a module: a new bot or a new version of yours; checked off the request path (413 over the size limit, 409 same module twice)",
    security(("bearer" = []), ("session" = [])),
    request_body(content = UploadForm, content_type = "multipart/form-data"),
    responses(
        (status = 202, description = "stored; the version is being checked", body = UploadedBody),
        (status = 403, response = ErrorResponse),
        (status = 409, response = ErrorResponse), (status = 413, response = ErrorResponse),
    ))]
async fn upload(
    State(state): State<AppState>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    form: Multipart,
) -> ApiResult<(StatusCode, Json<UploadedBody>)> {
    let limit = state.core.max_module_bytes();
    // Refuse a body announced as too large before reading any of it.
    let announced = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if announced.is_some_and(|length| length > limit + FORM_OVERHEAD) {
        return Err(upload_too_large(limit));
    }
    let form = read_upload(form, limit).await?;
    caller.check_csrf(sent_csrf(&headers, form.csrf.as_deref()))?;
    let uploaded = uploads::upload(&state.core, caller.user_id, form.upload).await?;
    Ok((
        StatusCode::ACCEPTED,
        Json(UploadedBody {
            ok: True,
            bot: BotRef {
                id: uploaded.bot_id,
                name: uploaded.name,
            },
            version: UploadedVersion {
                id: uploaded.version_id,
                number: uploaded.number,
                sha256: uploaded.sha256,
                status: uploaded.status,
                ladders: uploaded.ladders,
            },
        }),
    ))
}

/// `GET /api/bots`: every bot with its active version.
#[utoipa::path(get, path = "/bots", tag = "bots", summary = "Every bot",
    responses(
        (status = 200, description = "the bots", body = BotList),
    ))]
async fn list(State(state): State<AppState>) -> ApiResult<Json<BotList>> {
    let bots = bots::list(&state.core.db).await?;
    Ok(Json(BotList { ok: True, bots }))
}

/// `GET /api/bots/{name}`: the bot, its versions (with ratings) and its
/// recent matches.
#[utoipa::path(get, path = "/bots/{name}", tag = "bots",
    summary = "A bot, its versions with status and ratings, its recent matches",
    params(("name" = String, Path, description = "bot name")),
    responses(
        (status = 200, description = "the bot", body = BotDetail),
    ))]
async fn detail(
    State(state): State<AppState>,
    Path(name): Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> ApiResult<Json<BotDetail>> {
    let bot = bots::by_name(&state.core.db, &name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("bot {name:?}")))?;
    let viewer = caller.map(|c| UserId(c.user_id));
    let versions = bots::versions_with_ratings(&state.core.db, bot.id, bot.owner_id, viewer).await?;
    let matches = arbiter_ladder::matches::recent_for_bot(&state.core.db, bot.id, 20).await?;
    Ok(Json(BotDetail {
        ok: True,
        bot,
        versions,
        matches,
    }))
}

/// `GET /api/versions/{id}`: one version (poll it to follow a check).
#[utoipa::path(get, path = "/versions/{id}", tag = "bots",
    summary = "A version: checking, active, retired or rejected (with the reason; stderr for the owner)",
    params(("id" = i64, Path, description = "version id", minimum = 1)),
    responses(
        (status = 200, description = "the version", body = VersionBody),
    ))]
async fn version(
    State(state): State<AppState>,
    Path(id): Path<String>,
    MaybeCaller(caller): MaybeCaller,
) -> ApiResult<Json<VersionBody>> {
    let id = crate::api::path_id("version", &id)?;
    let version = bots::version(&state.core.db, VersionId(id), caller.map(|c| UserId(c.user_id)))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("version {id}")))?;
    Ok(Json(VersionBody { ok: True, version }))
}

/// `POST /api/bots/{name}/retire`: the owner takes the bot out of
/// matchmaking (its history stays).
#[utoipa::path(post, path = "/bots/{name}/retire", tag = "bots",
    summary = "Retire a bot of yours from matchmaking",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    request_body(content = Option<crate::api::CsrfBody>, description = "the session's CSRF token (optional; or `X-CSRF-Token`)"),
    responses(
        (status = 200, description = "retired", body = Retired),
        (status = 403, response = ErrorResponse),
    ))]
async fn retire(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    OptionalJsonBody(body): OptionalJsonBody<crate::api::CsrfBody>,
) -> ApiResult<Json<Retired>> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let retired = uploads::retire(&state.core, caller.user_id, &name).await?;
    Ok(Json(Retired {
        ok: True,
        retired_versions: retired,
    }))
}

/// `POST /api/bots/{name}/unretire`: what came back.
#[derive(Debug, Serialize, ToSchema)]
pub struct Unretired {
    /// `true`.
    pub ok: True,
    /// The version active again (with its ratings), if one had passed its
    /// check.
    pub active_version: Option<i64>,
    /// Versions retired while still checking, checking again.
    pub checking_versions: u64,
}

/// `POST /api/bots/{name}/unretire`: the owner puts a retired bot back.
#[utoipa::path(post, path = "/bots/{name}/unretire", tag = "bots",
    summary = "Un-retire a bot of yours: its last checked version plays again (409 if it is not retired or has nothing to bring back)",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    request_body(content = Option<crate::api::CsrfBody>, description = "the session's CSRF token (optional; or `X-CSRF-Token`)"),
    responses(
        (status = 200, description = "back in matchmaking", body = Unretired),
        (status = 403, response = ErrorResponse),
        (status = 409, response = ErrorResponse),
    ))]
async fn unretire(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    OptionalJsonBody(body): OptionalJsonBody<crate::api::CsrfBody>,
) -> ApiResult<Json<Unretired>> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let back = uploads::unretire(&state.core, caller.user_id, &name).await?;
    Ok(Json(Unretired {
        ok: True,
        active_version: back.active,
        checking_versions: back.checking,
    }))
}

/// `PUT /api/bots/{name}/profile`: what the owner may change; a field left
/// out keeps its value.
#[derive(Debug, Default, serde::Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(as = BotProfileChange)]
pub struct ProfileBody {
    /// Plain text, at most 500 characters (escaped wherever shown); `""`
    /// removes it.
    pub bio: Option<String>,
    /// Whether the scheduler pairs the bot automatically.
    pub auto_match: Option<bool>,
    /// Whether people may play the bot from the site (one game, never
    /// rated; default true).
    pub people_play: Option<bool>,
    /// How many matches a remote bot plays at once, 1 to 8 (default 2).
    #[serde(default, deserialize_with = "crate::api::optional_integer")]
    #[schema(minimum = 1, maximum = 8)]
    pub concurrent_matches: Option<i64>,
    /// The games or ladders its active version plays: never empty; an
    /// uploaded module only on ladders it was uploaded for; refused (409)
    /// while the bot has a match queued or running.
    pub supported_games: Option<Vec<String>>,
    /// The session's CSRF token (not needed with an API token).
    pub csrf: Option<String>,
}

/// A bot after a profile change.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProfileAnswer {
    /// `true`.
    pub ok: True,
    /// The bot, with its profile.
    pub bot: Bot,
}

/// `PUT /api/bots/{name}/profile`: the owner changes the bot's bio,
/// automatic matching, concurrent matches or supported games (never a
/// bot's own token).
#[utoipa::path(put, path = "/bots/{name}/profile", tag = "bots",
    summary = "Change the profile of a bot of yours: bio, automatic matching, concurrent matches",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    request_body(content = ProfileBody),
    responses(
        (status = 200, description = "changed", body = ProfileAnswer),
        (status = 403, response = ErrorResponse), (status = 404, response = ErrorResponse),
        (status = 409, response = ErrorResponse),
    ))]
async fn update_profile(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    JsonBody(body): JsonBody<ProfileBody>,
) -> ApiResult<Json<ProfileAnswer>> {
    caller.check_csrf(sent_csrf(&headers, body.csrf.as_deref()))?;
    let change = arbiter_ladder::profile::ProfileChange {
        bio: body.bio,
        auto_match: body.auto_match,
        people_play: body.people_play,
        concurrent_matches: body.concurrent_matches,
        supported_games: body.supported_games,
    };
    let bot = arbiter_ladder::profile::update(&state.core, caller.user_id, &name, change).await?;
    Ok(Json(ProfileAnswer { ok: True, bot }))
}

/// `PUT /api/bots/{name}/photo`: the body is a PNG, JPEG or WebP of at
/// most 512 KiB ([`MAX_PHOTO_BYTES`]: a longer body is refused with 413 as
/// soon as that much has been read) and 4096 × 4096 pixels; it is stored
/// re-encoded as a square PNG thumbnail, without any of the upload's
/// metadata. Decoding is bounded per process: when every decoder is busy
/// and the queue is full, 503 with `Retry-After` (nothing stored).
#[utoipa::path(put, path = "/bots/{name}/photo", tag = "bots",
    summary = "Set the photo of a bot of yours (PNG, JPEG or WebP ≤ 512 KiB; re-encoded, metadata dropped)",
    description = "The body is the image file: a PNG, JPEG or WebP of at most 512 KiB (a longer body is refused \
        with 413 once 512 KiB have been read), 4096 × 4096 pixels and 64 MiB decoded. It is stored re-encoded as \
        a square PNG thumbnail of at most 256 × 256, without the upload's metadata. Photos are decoded a few at a \
        time per server (one per core, at most two, and two waiting per decoder); beyond that the answer is 503 \
        with `Retry-After` and nothing is stored. A photo that takes over 5 s to decode is refused (400). The \
        bot's `photo` is then `/bots/{name}/photo.png?v=VERSION`: that address serves this photo only, cached \
        for a year (`immutable`); once the photo is replaced, it redirects (302, `no-cache`) to the new one.",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    request_body(content = Vec<u8>, content_type = "application/octet-stream", description = "the image file"),
    responses(
        (status = 200, description = "stored", body = ProfileAnswer),
        (status = 403, response = ErrorResponse), (status = 404, response = ErrorResponse),
        (status = 413, response = ErrorResponse),
        (status = 503, description = "every photo decoder is busy: try again after `Retry-After` seconds", body = crate::api::Refusal,
            headers(("Retry-After" = u64, description = "seconds to wait"))),
    ))]
async fn put_photo(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
    body: Result<axum::body::Bytes, axum::extract::rejection::BytesRejection>,
) -> ApiResult<Json<ProfileAnswer>> {
    caller.check_csrf(sent_csrf(&headers, None))?;
    let body = body.map_err(|rejection| {
        if rejection.status() == StatusCode::PAYLOAD_TOO_LARGE {
            ApiError(arbiter_ladder::error::Error::TooLarge(format!(
                "the photo is larger than 512 KiB ({MAX_PHOTO_BYTES} bytes)"
            )))
        } else {
            ApiError(arbiter_ladder::error::Error::Invalid(rejection.body_text()))
        }
    })?;
    let bot = arbiter_ladder::profile::set_photo(&state.core, caller.user_id, &name, body.to_vec()).await?;
    Ok(Json(ProfileAnswer { ok: True, bot }))
}

/// `DELETE /api/bots/{name}/photo`: the owner removes the photo.
#[utoipa::path(delete, path = "/bots/{name}/photo", tag = "bots",
    summary = "Remove the photo of a bot of yours",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    responses(
        (status = 200, description = "removed", body = ProfileAnswer),
        (status = 403, response = ErrorResponse), (status = 404, response = ErrorResponse),
    ))]
async fn delete_photo(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
) -> ApiResult<Json<ProfileAnswer>> {
    caller.check_csrf(sent_csrf(&headers, None))?;
    let bot = arbiter_ladder::profile::remove_photo(&state.core, caller.user_id, &name).await?;
    Ok(Json(ProfileAnswer { ok: True, bot }))
}

/// A bot token just issued: the only time it is shown.
#[derive(Debug, Serialize, ToSchema)]
pub struct BotTokenBody {
    /// `true`.
    pub ok: True,
    /// The bot it speaks for.
    pub bot: String,
    /// The token (`arbbot_…`): send it as `Authorization: Bearer` to
    /// `/api/agent` and `/api/agent/stream`, and nowhere else. It is not
    /// stored in a form anyone can read back: keep it now.
    pub token: String,
}

/// `POST /api/bots/{name}/token`: issues a bot token for an agent bot of
/// the caller's; its previous token stops working at once. The token speaks
/// for this bot in the agent API only: it changes no profile or setting
/// and is refused everywhere else.
#[utoipa::path(post, path = "/bots/{name}/token", tag = "bots",
    summary = "Issue a bot token for an agent bot of yours (shown once; the old one is revoked at once)",
    security(("bearer" = []), ("session" = [])),
    params(("name" = String, Path, description = "bot name")),
    responses(
        (status = 200, description = "the new token", body = BotTokenBody),
        (status = 403, response = ErrorResponse), (status = 404, response = ErrorResponse),
        (status = 409, response = ErrorResponse),
    ))]
async fn issue_bot_token(
    State(state): State<AppState>,
    Path(name): Path<String>,
    caller: Caller,
    headers: axum::http::HeaderMap,
) -> ApiResult<Json<BotTokenBody>> {
    caller.check_csrf(sent_csrf(&headers, None))?;
    let token = state
        .core
        .agents
        .issue_token(&state.core.db, caller.user_id, &name)
        .await?;
    Ok(Json(BotTokenBody {
        ok: True,
        bot: name,
        token,
    }))
}
