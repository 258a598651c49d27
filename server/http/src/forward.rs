//! Live requests on a front end whose agent hall does not lead: the agent
//! API (`/api/agent`, its stream) and games against people (`/play/…`,
//! `/bots/NAME/play`) are answered by the one `arbiter serve` that runs the
//! live matches ([`arbiter_ladder::agent::Hall::leader_elsewhere`]); any
//! other front end passes them there and streams the answer back, so that
//! a load balancer may send any request anywhere.
//!
//! A forwarded request carries the leader's secret and the client's
//! address as this front end saw it (after its trusted proxies): the
//! leader counts per-client limits against that client, and trusts the
//! address only with the secret.

use crate::server::AppState;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderName, HeaderValue, StatusCode, Uri, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use std::net::{IpAddr, SocketAddr};
use std::sync::OnceLock;
use std::time::Duration;

/// The header with the leader's secret.
const SECRET: HeaderName = HeaderName::from_static("x-arbiter-hall-secret");
/// The header with the client's address.
const CLIENT: HeaderName = HeaderName::from_static("x-arbiter-client");

/// Whether `path` is a live request: one the leading hall answers.
pub fn is_live(path: &str) -> bool {
    path == "/api/agent"
        || path.starts_with("/api/agent/")
        || path.starts_with("/play/")
        || (path.starts_with("/bots/") && path.ends_with("/play"))
}

/// The layer: live requests go to the leader when another front end's
/// hall leads; a request forwarded here with this hall's secret is
/// answered here, for the client it names.
pub async fn live_requests(State(state): State<AppState>, mut request: Request, next: Next) -> Response {
    if !is_live(request.uri().path()) {
        return next.run(request).await;
    }
    let hall = &state.core.agents;
    let forwarded = request
        .headers()
        .get(&SECRET)
        .is_some_and(|secret| hall.trusts(secret.as_bytes()));
    if forwarded {
        let client = request
            .headers()
            .get(&CLIENT)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse::<IpAddr>().ok());
        if let Some(ip) = client {
            request.extensions_mut().insert(ConnectInfo(SocketAddr::new(ip, 0)));
        }
        // The client's own forwarding headers were read by the first front
        // end; none is read again here.
        request.headers_mut().remove(header::FORWARDED);
        request.headers_mut().remove("x-forwarded-for");
        return next.run(request).await;
    }
    request.headers_mut().remove(&SECRET);
    request.headers_mut().remove(&CLIENT);
    match hall.leader_elsewhere() {
        None => next.run(request).await,
        Some(leader) => to_leader(&state, &leader, request).await,
    }
}

/// Sends `request` to `leader` and streams its answer back.
async fn to_leader(state: &AppState, leader: &arbiter_ladder::agent::Leader, mut request: Request) -> Response {
    let target = format!(
        "{}{}",
        leader.url,
        request.uri().path_and_query().map_or("/", |p| p.as_str())
    );
    let Ok(uri) = target.parse::<Uri>() else {
        return unavailable("the front end running live games has an address that cannot be used");
    };
    let client = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(peer)| {
            crate::extract::client_address(peer.ip(), request.headers(), &state.config.trusted_proxies)
        });
    *request.uri_mut() = uri;
    let headers = request.headers_mut();
    // The Host header stays: the leader checks same-origin requests and
    // builds links as the client addressed the site.
    for hop in [header::CONNECTION, header::TE, header::TRAILER, header::UPGRADE] {
        headers.remove(hop);
    }
    headers.remove("keep-alive");
    headers.remove("proxy-connection");
    if let Ok(secret) = HeaderValue::from_str(&leader.secret) {
        headers.insert(SECRET, secret);
    }
    if let Some(ip) = client.and_then(|ip| HeaderValue::from_str(&ip.to_string()).ok()) {
        headers.insert(CLIENT, ip);
    }
    match client_pool().request(request).await {
        Ok(answer) => answer.map(Body::new).into_response(),
        Err(error) => {
            tracing::warn!(leader = %leader.url, %error, "cannot reach the front end running live games");
            // It may have stopped: look again now rather than at the next
            // renewal, and take the lead if it is free.
            let core = state.core.clone();
            tokio::spawn(async move { core.agents.reconsider_lead(&core).await });
            unavailable("the front end running live games does not answer; try again in a moment")
        }
    }
}

/// 503 with a JSON error and `Retry-After`.
fn unavailable(why: &str) -> Response {
    (
        StatusCode::SERVICE_UNAVAILABLE,
        [(header::RETRY_AFTER, "1")],
        axum::Json(serde_json::json!({ "ok": false, "error": why })),
    )
        .into_response()
}

/// The connections to the leader, kept open between requests.
fn client_pool() -> &'static Client<HttpConnector, Body> {
    static CLIENT_POOL: OnceLock<Client<HttpConnector, Body>> = OnceLock::new();
    CLIENT_POOL.get_or_init(|| {
        let mut connector = HttpConnector::new();
        connector.set_connect_timeout(Some(Duration::from_secs(2)));
        connector.set_nodelay(true);
        Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(30))
            .build(connector)
    })
}

#[cfg(test)]
mod tests {
    use super::is_live;

    #[test]
    fn live_requests_are_the_agent_api_and_games_against_people() {
        for live in [
            "/api/agent",
            "/api/agent/stream",
            "/play/12",
            "/play/12/state",
            "/bots/othello-greedy/play",
        ] {
            assert!(is_live(live), "{live}");
        }
        for not in ["/", "/api/agents", "/api/bots/x", "/bots/x", "/players", "/bots/play/x"] {
            assert!(!is_live(not), "{not}");
        }
    }
}
