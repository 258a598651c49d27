//! The JSON API under `/api`, described by `/api/openapi.json`.
//!
//! One module per resource: accounts (users, sessions, tokens), bots and
//! versions, ladders and leaderboards, matches and replays, challenges,
//! tournaments, live events. Every handler carries its `#[utoipa::path]`
//! and is registered with `routes!`, so the routes served are the
//! operations documented (see [`openapi`]); every body is a typed struct
//! deriving [`utoipa::ToSchema`].

pub mod accounts;
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
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa_axum::router::OpenApiRouter;

/// The JSON API's routes, to be nested under `/api` (see
/// [`crate::router::app`]); an unknown path answers a JSON 404.
pub fn router(upload_limit: usize) -> Router<AppState> {
    let (router, _) = documented(upload_limit).split_for_parts();
    router
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
        .merge(openapi::router())
        .merge(health::router())
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

/// The shape of every refusal: `{"ok": false, "error": "..."}` (built by
/// [`ApiError`]'s `IntoResponse`).
#[derive(Debug, Serialize, utoipa::ToSchema)]
#[schema(as = Error)]
pub struct Refusal {
    /// `false`.
    pub ok: False,
    /// Why, in words.
    pub error: String,
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
/// token (or send it as `X-CSRF-Token`; API tokens need neither).
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct CsrfBody {
    /// The session's CSRF token.
    #[serde(default)]
    pub csrf: Option<String>,
}
