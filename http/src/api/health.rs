//! Health for load balancers and orchestrators: liveness (the process
//! answers) and readiness (the database answers and its schema is current).

use crate::server::AppState;
use arbiter_ladder::db::NotReady;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde_json::{Value, json};
use std::time::Duration;

/// How long a readiness probe waits for the database.
pub const READY_TIMEOUT: Duration = Duration::from_secs(2);

/// Routes of this resource.
pub fn router() -> Router<AppState> {
    Router::new().route("/health", get(live)).route("/ready", get(ready))
}

/// `GET /api/health`: 200 while the process serves requests.
async fn live() -> Json<Value> {
    Json(json!({"ok": true, "status": "live"}))
}

/// `GET /api/ready`: 200 when the database answers within
/// [`READY_TIMEOUT`] and has every migration this binary knows; 503 with
/// the reason otherwise.
async fn ready(State(state): State<AppState>) -> Response {
    let why = match tokio::time::timeout(READY_TIMEOUT, state.core.db.schema_current()).await {
        Ok(Ok(())) => return Json(json!({"ok": true, "status": "ready"})).into_response(),
        Ok(Err(behind @ NotReady::Behind { .. })) => behind.to_string(),
        Ok(Err(NotReady::Unreachable(error))) => {
            // The details (addresses, drivers) are for the log only, and
            // the outage itself is logged once by `Db::watch`, not per probe.
            tracing::debug!(%error, "readiness probe failed");
            "the database does not answer".to_string()
        }
        Err(_) => format!("the database did not answer within {} s", READY_TIMEOUT.as_secs()),
    };
    (
        StatusCode::SERVICE_UNAVAILABLE,
        Json(json!({"ok": false, "status": "not ready", "error": format!("not ready: {why}")})),
    )
        .into_response()
}
