//! HTTP bots (botsarena's transport): every request line is POSTed to the
//! bot's URL as a JSON body, and the response body is the reply.
//!
//! For tic-tac-toe these are exactly botsarena's `init` and `play-turn`
//! messages (docs/spec/tictactoe.md); for the other games the same JSON line
//! a sandboxed bot reads on stdin. A turn succeeds only with a `2xx` status
//! and a body of at most [`MAX_REPLY_BYTES`](crate::MAX_REPLY_BYTES) bytes
//! of UTF-8, received within the turn's budget; anything else loses the
//! bot its game with the reason.

use std::io::Read;
use std::time::{Duration, Instant};

use arbiter_referee::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};
use reqwest::blocking::Client;
use reqwest::header::{ACCEPT, CONTENT_TYPE, LOCATION};
use reqwest::redirect::Policy;

use crate::address::Target;
use crate::{CONNECT_TIMEOUT, MAX_REPLY_BYTES, RemoteError};

/// The `User-Agent` the referee sends.
pub const USER_AGENT: &str = concat!("arbiter-referee/", env!("CARGO_PKG_VERSION"));

/// A bot behind an HTTP URL: an [`Entrant`] whose players POST to it.
pub struct HttpBot {
    name: String,
    target: Target,
    client: Client,
}

impl HttpBot {
    /// A bot named `name` at `target` (already resolved and checked). The
    /// client never follows redirects, uses no proxy and keeps no cookies.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Client`] if the HTTP client cannot be built.
    pub fn new(name: &str, target: Target) -> Result<HttpBot, RemoteError> {
        crate::install_crypto();
        let mut builder = Client::builder()
            .redirect(Policy::none())
            .no_proxy()
            .referer(false)
            .user_agent(USER_AGENT)
            .connect_timeout(CONNECT_TIMEOUT)
            .tcp_nodelay(true)
            .timeout(None);
        if let Some(url::Host::Domain(domain)) = target.url.as_url().host() {
            // Connect to the address the policy checked, never to a fresh
            // lookup of the name.
            builder = builder.resolve(domain, target.addr);
        }
        let client = builder.build().map_err(|err| RemoteError::Client(err.to_string()))?;
        Ok(HttpBot {
            name: name.to_owned(),
            target,
            client,
        })
    }

    /// Where it is.
    #[must_use]
    pub fn target(&self) -> &Target {
        &self.target
    }
}

impl Entrant for HttpBot {
    /// Kind `http`, never reproducible.
    fn info(&self) -> EntrantInfo {
        crate::info(&self.name, "http")
    }

    /// Connects to nothing yet: the first request does.
    fn spawn(&self, _setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        Ok(Box::new(HttpPlayer {
            url: self.target.url.as_url().clone(),
            client: self.client.clone(),
        }))
    }
}

/// One game of an [`HttpBot`].
struct HttpPlayer {
    url: url::Url,
    client: Client,
}

impl HttpPlayer {
    fn post(&self, request: &str, budget: Duration) -> Result<String, Fault> {
        let url = &self.url;
        let response = self
            .client
            .post(url.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .timeout(budget.max(Duration::from_millis(1)))
            .body(request.to_owned())
            .send()
            .map_err(|err| request_fault(url, &err))?;
        let status = response.status();
        if status.is_redirection() {
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|value| value.to_str().ok())
                .map(|value| format!(" to {}", value.chars().take(200).collect::<String>()))
                .unwrap_or_default();
            return Err(Fault::Crash(format!(
                "HTTP {} from {url}{location}: redirects are not followed",
                status.as_u16()
            )));
        }
        if !status.is_success() {
            return Err(Fault::Crash(format!("HTTP {} from {url}", status.as_u16())));
        }
        if response
            .content_length()
            .is_some_and(|length| length > MAX_REPLY_BYTES as u64)
        {
            return Err(too_long());
        }
        let mut body = Vec::new();
        response
            .take(MAX_REPLY_BYTES as u64 + 1)
            .read_to_end(&mut body)
            .map_err(|err| read_fault(url, &err))?;
        if body.len() > MAX_REPLY_BYTES {
            return Err(too_long());
        }
        String::from_utf8(body).map_err(|err| {
            Fault::BadReply(format!(
                "reply is not valid UTF-8 (bad byte at offset {})",
                err.utf8_error().valid_up_to()
            ))
        })
    }
}

impl Player for HttpPlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        let start = Instant::now();
        let result = self.post(request, Duration::from_micros(budget_us));
        let spent = Spent {
            us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            fuel: None,
        };
        match result {
            Ok(_) if spent.us > budget_us => Err(TurnError {
                fault: Fault::Timeout,
                spent,
            }),
            Ok(body) => Ok(Answer {
                line: crate::reply_line(&body),
                spent,
            }),
            Err(fault) => Err(TurnError { fault, spent }),
        }
    }

    fn stderr(&self) -> Vec<u8> {
        Vec::new()
    }
}

fn too_long() -> Fault {
    Fault::BadReply(format!("reply body longer than {MAX_REPLY_BYTES} bytes"))
}

/// The fault for a request that got no response.
fn request_fault(url: &url::Url, err: &reqwest::Error) -> Fault {
    if err.is_timeout() {
        return Fault::Timeout;
    }
    let cause = root_cause(err);
    if err.is_connect() {
        Fault::Crash(format!("cannot connect to {url}: {cause}"))
    } else {
        Fault::Crash(format!("request to {url} failed: {cause}"))
    }
}

/// The fault for a body that could not be read to its end.
fn read_fault(url: &url::Url, err: &std::io::Error) -> Fault {
    let timed_out = matches!(
        err.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    ) || std::error::Error::source(err)
        .and_then(|source| source.downcast_ref::<reqwest::Error>())
        .is_some_and(reqwest::Error::is_timeout);
    if timed_out {
        Fault::Timeout
    } else {
        Fault::Crash(format!("reading the reply from {url} failed: {err}"))
    }
}

/// The innermost error's message (`connection refused`, not `error sending
/// request`).
fn root_cause(err: &(dyn std::error::Error + 'static)) -> String {
    let mut inner = err;
    while let Some(source) = inner.source() {
        inner = source;
    }
    inner.to_string()
}
