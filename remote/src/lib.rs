//! Remote players: bots that run on their owners' machines as HTTP or
//! WebSocket servers, played by the referee like any other [`Entrant`].
//!
//! - **HTTP** (`http://`, `https://`; botsarena's transport): every request
//!   line is POSTed as the body of one request, and the response body is the
//!   reply ([`http`]).
//! - **WebSocket** (`ws://`, `wss://`; the transport of skirmish's design
//!   document): one connection per game, each request line one text frame,
//!   each reply one text frame ([`websocket`]).
//!
//! What every remote player guarantees, whatever the far side does:
//!
//! - it only ever connects to the address its URL resolved to when the bot
//!   was made, after the [`AddressPolicy`] accepted it (see [`address`]);
//! - a turn never outlasts its budget by more than the time a connection
//!   takes to notice it: the budget is wall-clock time, measured here;
//! - no redirects are followed, no cookies, credentials or proxies are used,
//!   and a reply is at most [`MAX_REPLY_BYTES`] bytes (the rest is never
//!   read);
//! - every failure of the far side is a [`Fault`] that loses that bot its
//!   own game, with a reason that says what happened (`HTTP 500 from …`,
//!   `connection refused`, …); none is a host failure, so the match goes on;
//! - its results are marked not reproducible: the referee cannot re-run a
//!   bot it does not hold.

#![deny(missing_docs)]

pub mod address;
pub mod http;
pub mod websocket;

use std::sync::Once;
use std::time::Duration;

use arbiter_referee::{Entrant, EntrantInfo, GameSetup, Player, SpawnError};

pub use address::{AddressPolicy, BotUrl, Target, Transport, UrlError};
pub use http::HttpBot;
pub use websocket::WebSocketBot;

/// The longest reply accepted from a remote bot, in bytes (a response body
/// or a text frame): the same cap as a sandboxed bot's reply line.
pub const MAX_REPLY_BYTES: usize = arbiter_referee::native::MAX_REPLY_LINE;

/// How long opening a connection may take at most, whatever the budget.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// A remote bot of either transport: what the command line and the server
/// make from a bot URL.
pub enum RemoteBot {
    /// An HTTP bot.
    Http(HttpBot),
    /// A WebSocket bot.
    WebSocket(WebSocketBot),
}

/// Why a remote bot could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The URL is unusable or refused.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// The HTTP client could not be built (a host failure).
    #[error("cannot build an HTTP client: {0}")]
    Client(String),
}

impl RemoteBot {
    /// Reads `url`, resolves it once under `policy` and makes the bot,
    /// named `name` in replays and tables.
    ///
    /// # Errors
    ///
    /// [`RemoteError::Url`] for a URL that does not parse, resolve or pass
    /// the policy; nothing has been connected to then.
    pub fn new(name: &str, url: &str, policy: AddressPolicy) -> Result<RemoteBot, RemoteError> {
        let url = BotUrl::parse(url)?;
        let target = policy.resolve(&url)?;
        Ok(match url.transport() {
            Transport::Http => RemoteBot::Http(HttpBot::new(name, target)?),
            Transport::WebSocket => RemoteBot::WebSocket(WebSocketBot::new(name, target)),
        })
    }

    fn entrant(&self) -> &dyn Entrant {
        match self {
            RemoteBot::Http(bot) => bot,
            RemoteBot::WebSocket(bot) => bot,
        }
    }
}

impl Entrant for RemoteBot {
    fn info(&self) -> EntrantInfo {
        self.entrant().info()
    }

    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        self.entrant().spawn(setup)
    }
}

/// The entrant description shared by both transports.
fn info(name: &str, kind: &str) -> EntrantInfo {
    EntrantInfo {
        name: name.to_owned(),
        kind: kind.to_owned(),
        sha256: None,
        reproducible: false,
    }
}

/// Makes rustls use *ring*, once per process, unless something already
/// chose a provider.
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // An error means another provider is already installed: fine.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// A reply as the referee reads it: one line. Surrounding whitespace is
/// dropped, an empty body is `{}` (botsarena accepts an empty answer to
/// `init`), and a JSON object spread over several lines is put on one.
fn reply_line(body: &str) -> String {
    let body = body.trim();
    if body.is_empty() {
        return "{}".to_owned();
    }
    if body.contains(['\n', '\r'])
        && let Ok(value) = serde_json::from_str::<serde_json::Value>(body)
    {
        return value.to_string();
    }
    body.to_owned()
}

#[cfg(test)]
mod tests {
    use super::reply_line;

    #[test]
    fn replies_become_one_line() {
        assert_eq!(reply_line(""), "{}");
        assert_eq!(reply_line("  \n"), "{}");
        assert_eq!(reply_line("{\"play\":\"1-1\"}\n"), "{\"play\":\"1-1\"}");
        assert_eq!(reply_line("{\n  \"play\": \"1-1\"\n}\n"), "{\"play\":\"1-1\"}");
        assert_eq!(reply_line("not json\nat all"), "not json\nat all");
    }
}
