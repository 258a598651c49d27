//! Health for load balancers and orchestrators: liveness (the process
//! answers) and readiness (the database answers and its schema is current).

use crate::api::False;
use crate::api::True;
use crate::server::AppState;
use arbiter_ladder::db::NotReady;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// How long a readiness probe waits for the database.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Routes of this resource.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(live)).routes(routes!(ready))
}

/// The state a probe reports.
#[derive(Debug, Serialize, ToSchema)]
pub enum ProbeStatus {
    /// The process serves requests.
    #[serde(rename = "live")]
    Live,
    /// The database answers with its schema current.
    #[serde(rename = "ready")]
    Ready,
}

/// A probe that passed.
#[derive(Debug, Serialize, ToSchema)]
pub struct Probe {
    /// `true`.
    pub ok: True,
    /// `live` or `ready`.
    pub status: ProbeStatus,
}

/// The not-ready marker of a failed readiness probe.
#[derive(Debug, Serialize, ToSchema)]
pub enum NotReadyStatus {
    /// Not ready.
    #[serde(rename = "not ready")]
    NotReady,
}

/// A readiness probe that failed: the error envelope and `status`.
#[derive(Debug, Serialize, ToSchema)]
pub struct NotReadyBody {
    /// `false`.
    pub ok: False,
    /// `not ready`.
    pub status: NotReadyStatus,
    /// Why.
    pub error: String,
}

/// `GET /api/health`: 200 while the process serves requests.
#[utoipa::path(get, path = "/health", tag = "operations", summary = "Liveness: 200 while the server answers",
    responses(
        (status = 200, description = "live", body = Probe),
    ))]
async fn live() -> Json<Probe> {
    Json(Probe {
        ok: True,
        status: ProbeStatus::Live,
    })
}

/// `GET /api/ready`: 200 when the database answers within
/// [`READY_TIMEOUT`] and has every migration this binary knows; 503 with
/// the reason otherwise.
#[utoipa::path(get, path = "/ready", tag = "operations",
    summary = "Readiness: 200 when the database answers within 2 s with its schema current, else 503",
    responses(
        (status = 200, description = "ready", body = Probe),
        (status = 503, description = "not ready, with the reason", body = NotReadyBody),
    ))]
async fn ready(State(state): State<AppState>) -> Response {
    let why = match tokio::time::timeout(READY_TIMEOUT, state.core.db.schema_current()).await {
        Ok(Ok(())) => {
            return Json(Probe {
                ok: True,
                status: ProbeStatus::Ready,
            })
            .into_response();
        }
        Ok(Err(behind @ NotReady::Behind { .. })) => behind.to_string(),
        Ok(Err(NotReady::Unreachable(error))) => {
            // The details (addresses, drivers) are for the log only, and
            // the outage itself is logged once by `Db::watch`, not per probe.
            tracing::debug!(error = %error.detail(), "readiness probe failed");
            "the database does not answer".to_string()
        }
        Err(_) => format!("the database did not answer within {} s", READY_TIMEOUT.as_secs()),
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(NotReadyBody {
            ok: False,
            status: NotReadyStatus::NotReady,
            error: format!("not ready: {why}"),
        }),
    )
        .into_response()
}
