//! The application in process: a fresh SQLite database in a temporary
//! folder, the house bots registered as `arbiter serve` does, and the router
//! answering `oneshot` requests. No process, no socket: the same router the
//! server runs, for request–response tests that need nothing else (workers,
//! signals and outages are tested against the binary, in `cli/tests`).
//!
//! The client's calls have the names and shapes of `cli/tests/support`'s
//! client, so a test moves between the two unchanged.

use arbiter_http::server::{AppState, ServerConfig};
use arbiter_ladder::core::Core;
use arbiter_ladder::ratings::RatingSystem;
use axum::body::Body;
use axum::http::Request;
pub use axum::http::{Method, StatusCode};
use serde_json::Value;
use std::convert::Infallible;
use std::sync::Arc;
use tower::ServiceExt;

/// The most a test reads of an answer's body.
const BODY_LIMIT: usize = 64 << 20;

/// The whole application on its own database.
pub struct TestServer {
    app: axum::Router,
    core: Core,
    _dir: tempfile::TempDir,
}

/// A core on a fresh SQLite database in `dir`, opened as `arbiter serve`
/// opens one (house bots not yet registered).
pub async fn open_core(dir: &tempfile::TempDir) -> Core {
    Core::open(
        &dir.path().join("data"),
        None,
        None,
        RatingSystem::Glicko2,
        arbiter_sandbox::CompilerCommand::sibling(),
    )
    .await
    .expect("the core opens")
}

/// The router `arbiter serve` runs over `core`, with the default
/// configuration.
pub fn app(core: Core) -> axum::Router {
    arbiter_http::router::app(AppState {
        core,
        config: Arc::new(ServerConfig::default()),
        streams: Default::default(),
    })
}

impl TestServer {
    /// A fresh database with the house bots, and the router over it with the
    /// default configuration.
    pub async fn start() -> TestServer {
        TestServer::start_with(|_| {}).await
    }

    /// [`TestServer::start`], with `adjust` applied to the core first.
    pub async fn start_with(adjust: impl FnOnce(&mut Core)) -> TestServer {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let mut core = open_core(&dir).await;
        adjust(&mut core);
        arbiter_ladder::house::seed(&core)
            .await
            .expect("the house bots register");
        TestServer {
            app: app(core.clone()),
            core,
            _dir: dir,
        }
    }

    /// An anonymous client.
    pub fn client(&self) -> Client {
        Client { app: self.app.clone() }
    }

    /// The router, for requests the client does not make.
    pub fn router(&self) -> axum::Router {
        self.app.clone()
    }

    /// As after a restart on the same database: new games against people
    /// (the same rules, none in memory) behind a new router.
    pub fn restart_people(&mut self) {
        self.core.people = arbiter_ladder::people::People::new(self.core.people.rules());
        self.app = app(self.core.clone());
    }

    /// The application's core.
    pub fn core(&self) -> &Core {
        &self.core
    }

    /// The application's database, to look behind the API.
    pub async fn db(&self) -> arbiter_ladder::db::Db {
        self.core.db.clone()
    }
}

/// Sends requests to the router.
#[derive(Clone)]
pub struct Client {
    app: axum::Router,
}

impl Client {
    /// A request with nothing added.
    pub fn raw(&self, method: Method, path: &str) -> RequestBuilder {
        RequestBuilder {
            app: self.app.clone(),
            request: Request::builder().method(method).uri(path),
        }
    }

    /// `GET path` as a page: its HTML (panics unless the answer is 200).
    pub async fn page(&self, path: &str) -> String {
        let response = self.raw(Method::GET, path).send().await.expect("a page");
        assert_eq!(response.status().as_u16(), 200, "GET {path}");
        response.text().await.expect("HTML")
    }

    /// `GET path`, read as the API's JSON envelope (panics if the body is
    /// not JSON, or a refusal lacks `{"ok": false, "error": …}`).
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        let response = self.raw(Method::GET, path).send().await.expect("an answer");
        let status = response.status();
        let text = response.text().await.expect("a body");
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("GET {path} answered {status} with a body that is not JSON ({e}): {text:?}"));
        if !status.is_success() {
            assert_eq!(
                body["ok"],
                Value::Bool(false),
                "GET {path}: the refusal's envelope: {body}"
            );
            assert!(body["error"].is_string(), "GET {path}: the refusal's message: {body}");
        }
        (status, body)
    }
}

/// A request being made, sent with [`RequestBuilder::send`].
pub struct RequestBuilder {
    app: axum::Router,
    request: axum::http::request::Builder,
}

impl RequestBuilder {
    /// The router's answer, read whole.
    pub async fn send(self) -> Result<Response, Infallible> {
        let request = self.request.body(Body::empty()).expect("a well-formed request");
        let response = self.app.oneshot(request).await?;
        let status = response.status();
        let body = axum::body::to_bytes(response.into_body(), BODY_LIMIT)
            .await
            .expect("the body is read");
        Ok(Response { status, body })
    }
}

/// An answer.
pub struct Response {
    status: StatusCode,
    body: axum::body::Bytes,
}

impl Response {
    /// Its status.
    pub fn status(&self) -> StatusCode {
        self.status
    }

    /// Its body as text.
    pub async fn text(self) -> Result<String, std::string::FromUtf8Error> {
        String::from_utf8(self.body.to_vec())
    }
}
