//! The harness for tests against the real server: [`TestServer`] runs the
//! `arbiter serve` binary on a fresh data directory (and a fresh PostgreSQL
//! database when asked), and [`Client`] talks to it over HTTP with a cookie
//! jar, as a browser or an API client would.
//!
//! ```ignore
//! mod support;
//! use support::{TestServer, backends};
//!
//! #[tokio::test]
//! async fn story() {
//!     for backend in backends() {
//!         let server = TestServer::start_with(backend).await;
//!         let ann = server.signup("ann").await;          // session cookie + CSRF token
//!         let token = server.token(&ann).await;          // an API token
//!         let api = server.token_client(&token);         // Authorization: Bearer
//!         let (status, body) = api.get("/api/me").await;
//!         assert_eq!(status, 200, "{body}");
//!     }
//! }
//! ```
//!
//! Every reply read through [`Client::get`], [`Client::post_json`] and the
//! like must be JSON in the API's envelope (`"ok": true` on success,
//! `{"ok": false, "error": "..."}` on refusal): the harness panics
//! otherwise, so every test checks that for free. Use [`Client::raw`] for
//! answers that are not JSON.
//!
//! PostgreSQL: with `TEST_PG_URL=postgres://user@host:port/db` set,
//! [`backends`] includes [`Backend::Postgres`], and each such server gets
//! its own database `arbiter_test_<random>`, dropped when the server is.

#![allow(dead_code, reason = "each test binary uses a part of the harness")]

pub use arbiter_ladder::db::Backend;
pub use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[path = "../../../server/ladder/tests/support/pg.rs"]
mod pg;
#[allow(unused_imports, reason = "each test binary uses a part of the PostgreSQL helper")]
pub use pg::{PgDatabase, TEST_PG_URL, with_database};

/// The password [`TestServer::signup`] gives every user.
pub const PASSWORD: &str = "correct horse battery staple";
/// How long a server may take to print `listening on`.
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(120);

/// The backends every cross-backend test runs on: SQLite always, PostgreSQL
/// when `TEST_PG_URL` is set.
pub fn backends() -> Vec<Backend> {
    let mut backends = vec![Backend::Sqlite];
    if std::env::var_os(TEST_PG_URL).is_some_and(|url| !url.is_empty()) {
        backends.push(Backend::Postgres);
    }
    backends
}

/// How to start a [`TestServer`].
#[derive(Clone, Debug)]
pub struct Options {
    /// The database engine. Default: SQLite in the data directory.
    pub backend: Backend,
    /// `--workers`. Default: 0 (no match is played).
    pub workers: usize,
    /// Whether the scheduler runs (`--no-schedule` when false). Default:
    /// false.
    pub schedule: bool,
    /// A database URL to use instead of a fresh one (the harness neither
    /// creates nor drops it). Default: none.
    pub database_url: Option<String>,
    /// More arguments for `arbiter serve`.
    pub args: Vec<String>,
    /// More environment variables for the server process.
    pub env: Vec<(String, String)>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            backend: Backend::Sqlite,
            workers: 0,
            schedule: false,
            database_url: None,
            args: Vec::new(),
            env: Vec::new(),
        }
    }
}

impl Options {
    /// The defaults on `backend`.
    pub fn on(backend: Backend) -> Options {
        Options {
            backend,
            ..Options::default()
        }
    }

    /// With `workers` in-process workers.
    pub fn workers(mut self, workers: usize) -> Options {
        self.workers = workers;
        self
    }

    /// With the scheduler on or off.
    pub fn schedule(mut self, schedule: bool) -> Options {
        self.schedule = schedule;
        self
    }

    /// With one more `arbiter serve` argument.
    pub fn arg(mut self, arg: impl Into<String>) -> Options {
        self.args.push(arg.into());
        self
    }

    /// With one more environment variable.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Options {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Starts the server.
    pub async fn start(self) -> TestServer {
        TestServer::start_opts(self).await
    }
}

/// A running `arbiter serve` on `127.0.0.1`, a port of its own, a temporary
/// data directory and (on PostgreSQL) a database of its own. Dropping it
/// kills the process and removes both; if the test is failing, the server's
/// last output lines are printed first.
pub struct TestServer {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    /// The data directory (SQLite database, blobs, compiled modules).
    pub data_dir: PathBuf,
    /// The database engine.
    pub backend: Backend,
    /// The database URL the server was given, if any.
    pub database_url: Option<String>,
    child: Child,
    output: Arc<Mutex<Vec<String>>>,
    pg: Option<PgDatabase>,
    check: Option<AnswerCheck>,
    options: Options,
    /// The temporary folder of the data directory, removed with the
    /// server that made it (`None` for one started [`TestServer::beside`]).
    _dir: Option<tempfile::TempDir>,
}

/// A check every JSON answer a client gets goes through, beside
/// [`check_envelope`]: called with the method, the path (without query),
/// the status and the body (the story test validates them against the
/// OpenAPI document).
#[derive(Clone)]
pub struct AnswerCheck(pub Arc<CheckFn>);

/// The function an [`AnswerCheck`] calls: method, path, status, body.
pub type CheckFn = dyn Fn(&str, &str, StatusCode, &Value) + Send + Sync;

impl std::fmt::Debug for AnswerCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AnswerCheck")
    }
}

impl TestServer {
    /// A server on SQLite, no workers, no scheduler.
    pub async fn start() -> TestServer {
        TestServer::start_opts(Options::default()).await
    }

    /// A server on `backend`, no workers, no scheduler.
    pub async fn start_with(backend: Backend) -> TestServer {
        TestServer::start_opts(Options::on(backend)).await
    }

    /// A server as `options` say.
    pub async fn start_opts(options: Options) -> TestServer {
        let dir = tempfile::Builder::new()
            .prefix("arbiter-test-")
            .tempdir()
            .expect("a temporary directory");
        let data_dir = dir.path().join("data");
        let (database_url, pg) = match (&options.database_url, options.backend) {
            (Some(url), _) => (Some(url.clone()), None),
            (None, Backend::Sqlite) => (None, None),
            (None, Backend::Postgres) => {
                let pg = PgDatabase::create().await;
                (Some(pg.url.clone()), Some(pg))
            }
        };
        let (child, output, addr) = spawn(&options, &data_dir, database_url.as_deref(), "127.0.0.1:0").await;
        TestServer {
            addr,
            base_url: format!("http://{addr}"),
            data_dir,
            backend: options.backend,
            database_url,
            child,
            output,
            pg,
            check: None,
            options,
            _dir: Some(dir),
        }
    }

    /// Another `arbiter serve` on the same data directory and database, on
    /// an address of its own (a second front end).
    pub async fn beside(&self) -> TestServer {
        let (child, output, addr) = spawn(
            &self.options,
            &self.data_dir,
            self.database_url.as_deref(),
            "127.0.0.1:0",
        )
        .await;
        TestServer {
            addr,
            base_url: format!("http://{addr}"),
            data_dir: self.data_dir.clone(),
            backend: self.backend,
            database_url: self.database_url.clone(),
            child,
            output,
            pg: None,
            check: None,
            options: self.options.clone(),
            _dir: None,
        }
    }

    /// Starts the server again after it exited (a deploy): the same data
    /// directory, database and address, a new process. Its earlier output
    /// is kept before the new one.
    pub async fn restart(&mut self) {
        assert!(!self.is_running(), "restart() after the process exited");
        let listen = self.addr.to_string();
        let (child, output, addr) = spawn(&self.options, &self.data_dir, self.database_url.as_deref(), &listen).await;
        let mut earlier = std::mem::take(&mut *lock(&self.output));
        earlier.push("--- restarted ---".to_owned());
        earlier.append(&mut lock(&output));
        *lock(&output) = earlier;
        self.child = child;
        self.output = output;
        assert_eq!(addr, self.addr, "the same address");
    }

    /// `base_url` + `path` (`path` starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base_url)
    }

    /// Everything the server printed so far (stdout and stderr lines).
    pub fn output(&self) -> String {
        lock(&self.output).join("\n")
    }

    /// An anonymous client with an empty cookie jar (its answers go through
    /// [`TestServer::check_answers`]' check, if any).
    pub fn client(&self) -> Client {
        Client {
            check: self.check.clone(),
            ..Client::new(&self.base_url)
        }
    }

    /// A client that sends `Authorization: Bearer <token>` and no cookies.
    pub fn token_client(&self, token: &str) -> Client {
        Client {
            token: Some(token.to_owned()),
            ..self.client()
        }
    }

    /// Every client made from now on passes each JSON answer to `check`.
    pub fn check_answers(&mut self, check: AnswerCheck) {
        self.check = Some(check);
    }

    /// Signs up `name` with [`PASSWORD`]; the client holds the session
    /// cookie and the CSRF token. Panics unless the server answers 201.
    pub async fn signup(&self, name: &str) -> Client {
        let mut client = self.client();
        let (status, body) = client
            .post_json("/api/users", &json!({ "name": name, "password": PASSWORD }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "sign-up of {name}: {body}");
        client.csrf = Some(body["csrf"].as_str().expect("a CSRF token").to_owned());
        client.user_id = body["user"]["id"].as_i64();
        client.name = Some(name.to_owned());
        client
    }

    /// Issues an API token for the signed-in `client` (`POST /api/tokens`)
    /// and returns it. Panics unless the server answers 201.
    pub async fn token(&self, client: &Client) -> String {
        let (status, body) = client.post_json("/api/tokens", &json!({})).await;
        assert_eq!(status, StatusCode::CREATED, "token: {body}");
        body["token"].as_str().expect("a token").to_owned()
    }

    /// A direct connection to the server's database, to look behind the
    /// API (migrations are already applied, so this changes nothing).
    pub async fn db(&self) -> arbiter_ladder::db::Db {
        let result = match &self.database_url {
            Some(url) => arbiter_ladder::db::Db::connect(url).await,
            None => arbiter_ladder::db::Db::open_sqlite(&self.data_dir.join("arbiter.db")).await,
        };
        result.expect("the test server's database opens")
    }

    /// Counts the rows of `table` (a literal table name).
    pub async fn count(&self, table: &'static str) -> i64 {
        let db = self.db().await;
        let sql = format!("SELECT COUNT(*) FROM {table}");
        sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&db.pool)
            .await
            .expect("a count")
    }

    /// Whether the server process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Sends `signal` (e.g. `TERM`) to the server process.
    pub fn signal(&self, signal: &str) {
        send_signal(&self.child, signal);
    }

    /// Waits at most `limit` for the server process to exit: its exit code
    /// (`None` if a signal ended it), or a panic if it is still running.
    pub async fn exit_code(&mut self, limit: Duration) -> Option<i32> {
        exit_code(&mut self.child, limit).await
    }
}

/// Starts `arbiter serve` as `options` say on `data_dir` (and
/// `database_url`), listening on `listen`: the process, its output lines
/// (collected as they come) and the address it listens on.
async fn spawn(
    options: &Options,
    data_dir: &std::path::Path,
    database_url: Option<&str>,
    listen: &str,
) -> (Child, Arc<Mutex<Vec<String>>>, SocketAddr) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .arg("serve")
        .arg("--data")
        .arg(data_dir)
        .args(["--listen", listen, "--workers", &options.workers.to_string()])
        .args(&options.args)
        .env_remove("DATABASE_URL")
        .envs(options.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !options.schedule {
        command.arg("--no-schedule");
    }
    if let Some(url) = database_url {
        command.env("DATABASE_URL", url);
    }
    let mut child = command.spawn().expect("the arbiter binary starts");
    let output = Arc::new(Mutex::new(Vec::new()));
    let (addr_tx, addr_rx) = tokio::sync::oneshot::channel();
    let stdout = child.stdout.take().expect("piped stdout");
    let stderr = child.stderr.take().expect("piped stderr");
    collect_lines(stdout, Arc::clone(&output), Some(addr_tx));
    collect_lines(stderr, Arc::clone(&output), None);
    let addr = match tokio::time::timeout(STARTUP_TIMEOUT, addr_rx).await {
        Ok(Ok(addr)) => addr,
        outcome => {
            let _ = child.kill();
            let status = child.wait().map(|s| s.to_string()).unwrap_or_default();
            std::thread::sleep(Duration::from_millis(100)); // let the readers catch the last lines
            let why = if outcome.is_err() {
                "did not start in time"
            } else {
                "exited"
            };
            panic!(
                "arbiter serve ({backend:?}) {why} ({status}); its output:\n{}",
                lock(&output).join("\n"),
                backend = options.backend
            );
        }
    };
    (child, output, addr)
}

/// A bare HTTP client: no proxy, no cookie jar, redirects not followed
/// (the test reads each 303 itself).
pub fn plain_http() -> reqwest::Client {
    arbiter_ladder::install_tls_provider();
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("a client")
}

/// Sends `signal` (e.g. `TERM`) to `child`, as an operator's `kill` would.
pub fn send_signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .expect("kill runs");
    assert!(status.success(), "kill -{signal} {}", child.id());
}

/// Waits at most `limit` for `child` to exit: its exit code (`None` if a
/// signal ended it), or a panic if it is still running.
pub async fn exit_code(child: &mut Child, limit: Duration) -> Option<i32> {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("the process can be waited for") {
            return status.code();
        }
        assert!(
            start.elapsed() < limit,
            "process {} still runs after {limit:?}",
            child.id()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if std::thread::panicking() {
            let output = lock(&self.output);
            let tail = &output[output.len().saturating_sub(60)..];
            eprintln!(
                "--- arbiter serve on {:?} at {}, last {} lines ---\n{}",
                self.backend,
                self.base_url,
                tail.len(),
                tail.join("\n")
            );
        }
    }
}

fn lock(output: &Mutex<Vec<String>>) -> std::sync::MutexGuard<'_, Vec<String>> {
    output.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Reads `stream` line by line into `output` on a thread of its own; the
/// first `listening on http://ADDR` line's address goes to `addr`.
fn collect_lines(
    stream: impl Read + Send + 'static,
    output: Arc<Mutex<Vec<String>>>,
    mut addr: Option<tokio::sync::oneshot::Sender<SocketAddr>>,
) {
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            if let Some(rest) = line.split("listening on http://").nth(1)
                && let Ok(parsed) = rest.trim().parse::<SocketAddr>()
                && let Some(sender) = addr.take()
            {
                let _ = sender.send(parsed);
            }
            lock(&output).push(line);
        }
    });
}

/// An HTTP client of one test user: a cookie jar (shared by its clones),
/// and the CSRF token and API token it sends with every request when it has
/// them.
#[derive(Clone, Debug)]
pub struct Client {
    http: reqwest::Client,
    base_url: String,
    /// The session's CSRF token, sent as `X-CSRF-Token`.
    pub csrf: Option<String>,
    /// An API token, sent as `Authorization: Bearer`.
    pub token: Option<String>,
    /// The user's id, once signed up.
    pub user_id: Option<i64>,
    /// The user's name, once signed up.
    pub name: Option<String>,
    /// What each JSON answer is checked against besides the envelope.
    pub check: Option<AnswerCheck>,
}

impl Client {
    /// An anonymous client of the server at `base_url`, with an empty
    /// cookie jar.
    pub fn new(base_url: &str) -> Client {
        arbiter_ladder::install_tls_provider();
        let http = reqwest::Client::builder()
            .cookie_store(true)
            .no_proxy()
            .timeout(Duration::from_secs(60))
            .build()
            .expect("an HTTP client");
        Client {
            http,
            base_url: base_url.to_owned(),
            csrf: None,
            token: None,
            user_id: None,
            name: None,
            check: None,
        }
    }

    /// The same client (same cookie jar) without its CSRF token.
    pub fn without_csrf(&self) -> Client {
        Client {
            csrf: None,
            ..self.clone()
        }
    }

    /// The same client (same cookie jar) also sending `token` as
    /// `Authorization: Bearer`.
    pub fn with_token(&self, token: &str) -> Client {
        Client {
            token: Some(token.to_owned()),
            ..self.clone()
        }
    }

    /// A request with nothing added but the cookie jar's cookies.
    pub fn raw(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        self.http.request(method, format!("{}{path}", self.base_url))
    }

    /// A request with the cookies, the CSRF token and the API token this
    /// client has.
    pub fn request(&self, method: Method, path: &str) -> reqwest::RequestBuilder {
        let mut request = self.raw(method, path);
        if let Some(csrf) = &self.csrf {
            request = request.header("X-CSRF-Token", csrf);
        }
        if let Some(token) = &self.token {
            request = request.bearer_auth(token);
        }
        request
    }

    /// Sends `request` (made by any client: it goes out with that client's
    /// cookies) and reads the reply as the API's JSON envelope (panics if it
    /// is not, see [`check_envelope`]).
    pub async fn send(&self, request: reqwest::RequestBuilder) -> (StatusCode, Value) {
        let (http, built) = request.build_split();
        let built = built.expect("a well-formed request");
        let (method, path) = (built.method().to_string(), built.url().path().to_owned());
        let what = format!("{method} {path}");
        let response = http.execute(built).await.unwrap_or_else(|e| panic!("{what}: {e}"));
        let status = response.status();
        let text = response
            .text()
            .await
            .unwrap_or_else(|e| panic!("{what}: cannot read the body: {e}"));
        let body: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{what} answered {status} with a body that is not JSON ({e}): {text:?}"));
        check_envelope(&what, status, &body);
        if let Some(AnswerCheck(check)) = &self.check {
            check(&method, &path, status, &body);
        }
        (status, body)
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::GET, path)).await
    }

    /// `POST path` with a JSON body.
    pub async fn post_json(&self, path: &str, body: &Value) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path).json(body)).await
    }

    /// `method path` with a JSON body.
    pub async fn send_json(&self, method: Method, path: &str, body: &Value) -> (StatusCode, Value) {
        self.send(self.request(method, path).json(body)).await
    }

    /// `POST path` with a multipart form.
    pub async fn post_multipart(&self, path: &str, form: reqwest::multipart::Form) -> (StatusCode, Value) {
        self.send(self.request(Method::POST, path).multipart(form)).await
    }

    /// `DELETE path`.
    pub async fn delete(&self, path: &str) -> (StatusCode, Value) {
        self.send(self.request(Method::DELETE, path)).await
    }
}

/// Panics unless `body` is the API's envelope for `status`: `"ok": true` on
/// success, `{"ok": false, "error": "<words>"}` on refusal.
pub fn check_envelope(what: &str, status: StatusCode, body: &Value) {
    if status.is_success() {
        assert_eq!(
            body["ok"],
            json!(true),
            "{what} answered {status} without \"ok\": true: {body}"
        );
    } else {
        assert_eq!(
            body["ok"],
            json!(false),
            "{what} answered {status} without \"ok\": false: {body}"
        );
        let error = body["error"].as_str().unwrap_or_default();
        assert!(
            !error.is_empty(),
            "{what} answered {status} without an error message: {body}"
        );
    }
}

/// The multipart form of an upload: `name`, `ladders` (comma-separated) and
/// the module.
pub fn module_form(name: &str, ladders: &str, wasm: &[u8]) -> reqwest::multipart::Form {
    reqwest::multipart::Form::new()
        .text("name", name.to_string())
        .text("ladders", ladders.to_string())
        .part(
            "module",
            reqwest::multipart::Part::bytes(wasm.to_vec()).file_name(format!("{name}.wasm")),
        )
}

/// Polls `path` until `done(body)` or panics after `limit`.
pub async fn wait_for(client: &Client, path: &str, limit: Duration, done: impl Fn(&Value) -> bool) -> Value {
    let start = std::time::Instant::now();
    loop {
        let (status, body) = client.get(path).await;
        assert_eq!(status, StatusCode::OK, "{path}: {body}");
        if done(&body) {
            return body;
        }
        assert!(start.elapsed() < limit, "{path} did not get there in {limit:?}: {body}");
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}

/// The module of the house bot `name`.
pub fn house(name: &str) -> &'static [u8] {
    arbiter_house::find(name).expect("house bot").wasm()
}

/// The variable naming an S3-compatible server for tests
/// (`http://127.0.0.1:PORT`, accepting any credentials).
pub const TEST_S3_URL: &str = "TEST_S3_URL";

/// A bucket of its own on the `TEST_S3_URL` server, and the `AWS_*`
/// variables that reach it; `None` without that server.
pub struct S3Bucket {
    /// `s3://NAME`.
    pub url: String,
    /// The variables `arbiter serve` and `arbiter worker` need to reach it.
    pub env: Vec<(String, String)>,
    endpoint: String,
    name: String,
}

impl S3Bucket {
    /// Creates a fresh bucket, or `None` when `TEST_S3_URL` is not set.
    pub async fn create() -> Option<S3Bucket> {
        let endpoint = std::env::var(TEST_S3_URL).ok()?.trim_end_matches('/').to_owned();
        let mut bytes = [0u8; 6];
        getrandom::fill(&mut bytes).expect("randomness");
        let name = format!(
            "arbiter-test-{}",
            bytes.iter().map(|b| format!("{b:02x}")).collect::<String>()
        );
        let created = http()
            .put(format!("{endpoint}/{name}"))
            .send()
            .await
            .expect("the S3 server answers");
        assert!(
            created.status().is_success(),
            "creating bucket {name}: {}",
            created.status()
        );
        let env = [
            ("AWS_ENDPOINT_URL", endpoint.as_str()),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_ACCESS_KEY_ID", "test"),
            ("AWS_SECRET_ACCESS_KEY", "test"),
            ("AWS_DEFAULT_REGION", "us-east-1"),
        ]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        Some(S3Bucket {
            url: format!("s3://{name}"),
            env,
            endpoint,
            name,
        })
    }

    /// The keys of every object in the bucket (first 1000).
    pub async fn keys(&self) -> Vec<String> {
        let listing = http()
            .get(format!("{}/{}?list-type=2", self.endpoint, self.name))
            .send()
            .await
            .expect("the S3 server answers")
            .text()
            .await
            .expect("a listing");
        listing
            .split("<Key>")
            .skip(1)
            .filter_map(|part| part.split("</Key>").next())
            .map(str::to_owned)
            .collect()
    }
}

/// A plain HTTP client (no cookies, no envelope checks).
pub fn http() -> reqwest::Client {
    arbiter_ladder::install_tls_provider();
    reqwest::Client::new()
}

/// Uploads `wasm` as bot `name` on `ladders` (answered 202, version
/// `checking`) and waits for the check; returns the version's final JSON
/// (`{"version": {"id", "sha256", "status", "reason", ...}}`).
pub async fn upload_and_check(api: &Client, name: &str, ladders: &str, wasm: &[u8]) -> Value {
    let (status, body) = api.post_multipart("/api/bots", module_form(name, ladders, wasm)).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    assert_eq!(body["version"]["status"], "checking", "{body}");
    let id = body["version"]["id"].as_i64().expect("version id");
    wait_for(api, &format!("/api/versions/{id}"), Duration::from_secs(120), |b| {
        b["version"]["status"] != "checking"
    })
    .await
}

/// Challenges `opponent` with `bot` on `ladder` (answered 201) and waits
/// until the match is finished; returns its id.
pub async fn challenge_and_wait(api: &Client, bot: &str, opponent: &str, ladder: &str) -> i64 {
    let (status, body) = api
        .post_json(
            "/api/challenges",
            &json!({"bot": bot, "opponent": opponent, "ladder": ladder}),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let id = body["match"]["id"].as_i64().expect("match id");
    wait_for(api, &format!("/api/matches/{id}"), Duration::from_secs(120), |b| {
        b["match"]["status"] == "finished"
    })
    .await;
    id
}

/// A PostgreSQL server of its own (a throwaway cluster on a free port), for
/// tests that stop and restart the database: Debian's binaries (the newest
/// `/usr/lib/postgresql/*/bin`, or `TEST_PG_BIN`), run as the `postgres`
/// user when the tests run as root (`initdb` refuses root). Stopped and
/// deleted on drop.
pub struct PgCluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    /// Its port on 127.0.0.1.
    pub port: u16,
    as_postgres: bool,
}

impl PgCluster {
    /// Creates and starts a cluster (panics if PostgreSQL is not installed).
    pub fn start() -> PgCluster {
        let bin = std::env::var_os("TEST_PG_BIN").map(PathBuf::from).unwrap_or_else(|| {
            let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
                .expect("PostgreSQL's binaries in /usr/lib/postgresql (or TEST_PG_BIN)")
                .filter_map(|entry| Some(entry.ok()?.path().join("bin")))
                .filter(|bin| bin.join("initdb").is_file())
                .collect();
            found.sort_by_key(|bin| {
                bin.parent()
                    .and_then(|version| version.file_name()?.to_str()?.parse::<u32>().ok())
            });
            found.pop().expect("an initdb under /usr/lib/postgresql/*/bin")
        });
        let dir = tempfile::Builder::new()
            .prefix("arbiter-test-pg-")
            .tempdir()
            .expect("a temporary directory");
        let as_postgres = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0");
        if as_postgres {
            let status = Command::new("chown")
                .args(["postgres:postgres"])
                .arg(dir.path())
                .status()
                .expect("chown runs");
            assert!(status.success(), "chown postgres {}", dir.path().display());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .expect("a free port")
            .port();
        let cluster = PgCluster {
            dir,
            bin,
            port,
            as_postgres,
        };
        let data = cluster.data();
        cluster.run(
            "initdb",
            &["-D", &data, "-U", "postgres", "-A", "trust", "--no-sync", "-E", "UTF8"],
        );
        cluster.start_again();
        cluster
    }

    fn data(&self) -> String {
        self.dir.path().join("data").display().to_string()
    }

    /// Runs one of the cluster's programs, as `postgres` if need be.
    fn run(&self, program: &str, args: &[&str]) {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command
            .args(args)
            .stdin(Stdio::null())
            .output()
            .expect("PostgreSQL runs");
        assert!(
            output.status.success(),
            "{program} {args:?}: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// `postgres://postgres@127.0.0.1:PORT/postgres`.
    pub fn url(&self) -> String {
        format!("postgres://postgres@127.0.0.1:{}/postgres", self.port)
    }

    /// Stops the server abruptly (`-m immediate`: every connection is cut,
    /// nothing is shut down cleanly; it recovers on the next start).
    pub fn stop_immediately(&self) {
        self.run("pg_ctl", &["-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    /// Starts the (stopped) server and waits until it accepts connections.
    pub fn start_again(&self) {
        let options = format!(
            "-p {} -k {} -c listen_addresses=127.0.0.1 -c max_connections=200",
            self.port,
            self.dir.path().display()
        );
        let log = self.dir.path().join("log").display().to_string();
        self.run(
            "pg_ctl",
            &[
                "-D",
                &self.data(),
                "-l",
                &log,
                "-w",
                "-t",
                "60",
                "-o",
                &options,
                "start",
            ],
        );
    }
}

impl Drop for PgCluster {
    fn drop(&mut self) {
        let path = self.bin.join("pg_ctl");
        let data = self.data();
        let args = ["-D", data.as_str(), "-m", "immediate", "stop"];
        let _ = if self.as_postgres {
            Command::new("runuser")
                .args(["-u", "postgres", "--"])
                .arg(&path)
                .args(args)
                .output()
        } else {
            Command::new(&path).args(args).output()
        };
    }
}
