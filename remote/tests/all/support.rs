//! Bot servers the tests start on loopback: real HTTP (axum) and WebSocket
//! (tungstenite) servers, and the in-process house bots they play.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;

use arbiter_referee::{GameSetup, InProcess};
use arbiter_remote::{AddressPolicy, RemoteBot};
use arbiter_sdk::Rng;
use axum::Router;
use axum::response::Response;

/// An HTTP bot server: answers every POST with `handler(body)` (run on a
/// blocking thread, so a handler may sleep) and keeps every body it got.
pub struct HttpServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<String>>>,
    _runtime: tokio::runtime::Runtime,
}

impl HttpServer {
    pub fn start<F>(handler: F) -> HttpServer
    where
        F: Fn(String) -> Response + Send + Sync + 'static,
    {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("bind");
        let addr = listener.local_addr().expect("address");
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler = Arc::new(handler);
        let kept = Arc::clone(&requests);
        let app = Router::new().fallback(move |body: String| {
            let handler = Arc::clone(&handler);
            let kept = Arc::clone(&kept);
            async move {
                kept.lock().unwrap_or_else(PoisonError::into_inner).push(body.clone());
                tokio::task::spawn_blocking(move || handler(body))
                    .await
                    .expect("handler")
            }
        });
        runtime.spawn(async move { axum::serve(listener, app).await });
        HttpServer {
            url: format!("http://{addr}/bot"),
            requests,
            _runtime: runtime,
        }
    }

    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
}

/// A WebSocket bot server: every connection is handed to `session` on a
/// thread of its own.
pub struct WsServer {
    pub url: String,
    pub connections: Arc<Mutex<usize>>,
}

impl WsServer {
    pub fn start<F>(session: F) -> WsServer
    where
        F: Fn(tungstenite::WebSocket<TcpStream>) + Send + Sync + 'static,
    {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address");
        let session = Arc::new(session);
        let connections = Arc::new(Mutex::new(0));
        let counted = Arc::clone(&connections);
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                *counted.lock().unwrap_or_else(PoisonError::into_inner) += 1;
                let session = Arc::clone(&session);
                thread::spawn(move || {
                    if let Ok(socket) = tungstenite::accept(stream) {
                        session(socket);
                    }
                });
            }
        });
        WsServer {
            url: format!("ws://{addr}/bot"),
            connections,
        }
    }
}

/// A remote bot on loopback (the policy an author's own machine uses).
pub fn remote(name: &str, url: &str) -> RemoteBot {
    RemoteBot::new(name, url, AddressPolicy::ANY).expect("a loopback bot with private addresses allowed")
}

/// A house bot played in-process, seeded as in the sandbox.
pub fn house(name: &'static str) -> InProcess {
    InProcess::new(name, move |setup: &GameSetup| {
        let rng = Rng::as_sandboxed(arbiter_referee::wasm::bot_seed(
            setup.seed,
            setup.game_index,
            setup.side,
        ));
        arbiter_bots::answerer(name, rng).expect("a house bot")
    })
}

/// A port nothing listens on.
pub fn closed_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.local_addr().expect("address")
}

/// A JSON response with status 200.
pub fn json(body: impl Into<String>) -> Response {
    Response::builder()
        .header("content-type", "application/json")
        .body(body.into().into())
        .expect("response")
}
