//! The JSON API under `/api`, described by `/api/openapi.json`.
//!
//! One module per resource: accounts (users, sessions, tokens), bots and
//! versions, ladders and leaderboards, matches and replays, challenges,
//! tournaments, live events. Every handler carries its `#[utoipa::path]`
//! and is registered with `routes!`, so the routes served are the
//! operations documented (see [`openapi`]); every body is a typed struct
//! deriving [`utoipa::ToSchema`].

pub mod accounts;
pub mod agent;
pub mod bots;
pub mod challenges;
pub mod events;
pub mod health;
pub mod ladders;
pub mod matches;
pub mod openapi;
pub mod tournaments;

use crate::error::ApiError;
use crate::server::AppState;
use arbiter_ladder::error::Error;
use axum::Router;
use axum::extract::DefaultBodyLimit;
use serde::{Serialize, Serializer};
use std::collections::HashMap;
use std::sync::OnceLock;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa_axum::router::OpenApiRouter;

/// The JSON API's routes, to be nested under `/api` (see
/// [`crate::router::app`]); an unknown path answers a JSON 404.
pub fn router(upload_limit: usize) -> Router<AppState> {
    let (router, _) = documented(upload_limit).split_for_parts();
    router
        .route_layer(axum::middleware::from_fn(refuse_unknown_query_parameters))
        .method_not_allowed_fallback(accounts::method_not_allowed)
        .fallback(|| async { ApiError(Error::NotFound("no such API endpoint".into())) })
}

/// The routes with their operations (paths relative to `/api`).
pub fn documented(upload_limit: usize) -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .merge(accounts::router())
        .merge(bots::router().layer(DefaultBodyLimit::max(upload_limit)))
        .merge(ladders::router())
        .merge(matches::router())
        .merge(challenges::router())
        .merge(tournaments::router())
        .merge(events::router())
        .merge(agent::router())
        .merge(openapi::router())
        .merge(health::router())
}

/// A query string read into `T`: a parameter that does not parse, or a
/// word outside its enum, is a 400 with the JSON error envelope naming it.
#[derive(Clone, Copy, Debug, Default)]
pub struct ApiQuery<T>(pub T);

impl<T: serde::de::DeserializeOwned, S: Send + Sync> axum::extract::FromRequestParts<S> for ApiQuery<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut axum::http::request::Parts, _: &S) -> Result<ApiQuery<T>, ApiError> {
        axum::extract::Query::try_from_uri(&parts.uri)
            .map(|axum::extract::Query(query)| ApiQuery(query))
            .map_err(|rejection| ApiError(Error::Invalid(rejection.body_text())))
    }
}

/// Reads an optional JSON integer as JSON Schema counts integers: `10` and
/// `10.0` alike (a number with a fraction, or out of `i64`, is refused).
pub fn optional_integer<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<i64>, D::Error> {
    let Some(number) = <Option<serde_json::Number> as serde::Deserialize>::deserialize(deserializer)? else {
        return Ok(None);
    };
    if let Some(integer) = number.as_i64() {
        return Ok(Some(integer));
    }
    match number.as_f64() {
        // i64::MAX as f64 rounds up to 2^63, itself out of range.
        Some(float) if float.fract() == 0.0 && float >= i64::MIN as f64 && float < i64::MAX as f64 => {
            Ok(Some(float as i64))
        }
        _ => Err(serde::de::Error::custom(format!("{number} is not an integer"))),
    }
}

/// The id of a `what` in a path: a positive integer. Any other segment
/// (`0`, `-1`, `abc`) names nothing, so it is a 404 like an id that is not
/// in use.
pub fn path_id(what: &str, id: &str) -> Result<i64, ApiError> {
    id.parse::<i64>()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| ApiError::not_found(format!("{what} {id:?}")))
}

/// `value` (or `default` when absent) if it lies in `range`, else a 400
/// naming the parameter and its bounds, as the OpenAPI document states
/// them.
pub fn in_range(
    name: &str,
    value: Option<i64>,
    default: i64,
    range: std::ops::RangeInclusive<i64>,
) -> Result<i64, ApiError> {
    let value = value.unwrap_or(default);
    if range.contains(&value) {
        Ok(value)
    } else {
        Err(ApiError(Error::Invalid(format!(
            "{name} must be between {} and {}, not {value}",
            range.start(),
            range.end()
        ))))
    }
}

/// The query parameters each operation of the document lists, by method
/// (lower case) and path template (`/api/matches/{id}`).
fn documented_query_parameters() -> &'static HashMap<(String, String), Vec<String>> {
    static PARAMETERS: OnceLock<HashMap<(String, String), Vec<String>>> = OnceLock::new();
    PARAMETERS.get_or_init(|| {
        let mut parameters = HashMap::new();
        let paths = openapi::document()
            .get("paths")
            .and_then(serde_json::Value::as_object)
            .into_iter()
            .flatten();
        for (path, item) in paths {
            for (method, operation) in item.as_object().into_iter().flatten() {
                let names = operation
                    .get("parameters")
                    .and_then(serde_json::Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter(|parameter| parameter.get("in").and_then(serde_json::Value::as_str) == Some("query"))
                    .filter_map(|parameter| parameter.get("name").and_then(serde_json::Value::as_str))
                    .map(str::to_owned)
                    .collect();
                parameters.insert((method.clone(), path.clone()), names);
            }
        }
        parameters
    })
}

/// Refuses (400) a request to an API operation whose query string has a
/// parameter the operation does not document: the one rule of the API is
/// that what the document does not allow is refused, in query strings as in
/// bodies (`additionalProperties: false`), so a misspelt parameter is never
/// silently ignored.
pub async fn refuse_unknown_query_parameters(
    matched: axum::extract::MatchedPath,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    if let Some(query) = request.uri().query() {
        let method = match *request.method() {
            axum::http::Method::HEAD => "get".to_owned(),
            ref method => method.as_str().to_ascii_lowercase(),
        };
        let known = documented_query_parameters().get(&(method, matched.as_str().to_owned()));
        if let Some(known) = known {
            let unknown = url::form_urlencoded::parse(query.as_bytes())
                .map(|(name, _)| name)
                .find(|name| !known.iter().any(|known| known == name));
            if let Some(name) = unknown {
                let allowed = if known.is_empty() {
                    "it takes none".to_owned()
                } else {
                    format!("it takes {}", known.join(", "))
                };
                return ApiError(Error::Invalid(format!(
                    "unknown query parameter {name:?} for {} {}: {allowed}",
                    request.method(),
                    matched.as_str()
                )))
                .into_response();
            }
        }
    }
    next.run(request).await
}

/// `true`, the `ok` of every success body.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct True;

impl Serialize for True {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(true)
    }
}

impl utoipa::PartialSchema for True {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Boolean)
            .enum_values(Some([true]))
            .into()
    }
}

impl utoipa::ToSchema for True {}

/// `false`, the `ok` of every refusal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct False;

impl Serialize for False {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bool(false)
    }
}

impl utoipa::PartialSchema for False {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::Boolean)
            .enum_values(Some([false]))
            .into()
    }
}

impl utoipa::ToSchema for False {}

/// A body with nothing but `"ok": true`.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub struct Done {
    /// `true`.
    pub ok: True,
}

/// The body of every refusal under `/api`: `{"error": "...", "ok": false}`
/// (the keys in that order, as the API has always written them). Every
/// refusal the server writes is built from this type ([`ApiError`]'s
/// `IntoResponse`, the 405 handler, the middleware that makes other
/// refusals JSON).
///
/// [`ApiError`]: crate::error::ApiError
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct Refusal {
    /// Why, in words.
    pub error: String,
    /// `false`.
    pub ok: False,
}

impl Refusal {
    /// A refusal saying `error`.
    pub fn new(error: impl Into<String>) -> Refusal {
        Refusal {
            error: error.into(),
            ok: False,
        }
    }

    /// The refusal as JSON bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        // A struct of a string and a bool always serialises.
        serde_json::to_vec(self).unwrap_or_default()
    }
}

/// The reusable `Error` response of every refusal.
pub struct ErrorResponse;

impl<'s> utoipa::ToResponse<'s> for ErrorResponse {
    fn response() -> (&'s str, RefOr<utoipa::openapi::Response>) {
        (
            "Error",
            utoipa::openapi::ResponseBuilder::new()
                .description("refused, with the reason")
                .content(
                    "application/json",
                    utoipa::openapi::ContentBuilder::new()
                        .schema(Some(utoipa::openapi::Ref::from_schema_name("Error")))
                        .build(),
                )
                .into(),
        )
    }
}

/// The JSON body of a state-changing request from a session: its CSRF
/// token (or send it as `X-CSRF-Token`; API tokens need neither). Any
/// other property is refused, like every body of the API.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CsrfBody {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: Option<String>,
}
