//! WebSocket bots (the transport of skirmish's design document): one
//! connection per game; each request line goes out as one text frame and
//! each reply comes back as one text frame.
//!
//! In tick-based games the referee may stop waiting for a reply (the tick
//! is skipped); the connection stays open and a reply that comes later is
//! handed over at the next turn, where the referee drops it as stale, as it
//! does for a sandboxed bot. Pings are answered; a binary frame, a frame
//! over [`MAX_REPLY_BYTES`](crate::MAX_REPLY_BYTES) bytes or a closed
//! connection loses the bot its game.

use std::io::ErrorKind;
use std::net::TcpStream;
use std::time::{Duration, Instant};

use arbiter_referee::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};
use tungstenite::protocol::WebSocketConfig;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::address::Target;
use crate::{CONNECT_TIMEOUT, MAX_REPLY_BYTES};

/// A bot behind a `ws://` or `wss://` URL: an [`Entrant`] whose players
/// each open one connection.
pub struct WebSocketBot {
    name: String,
    target: Target,
}

impl WebSocketBot {
    /// A bot named `name` at `target` (already resolved and checked).
    #[must_use]
    pub fn new(name: &str, target: Target) -> WebSocketBot {
        crate::install_crypto();
        WebSocketBot {
            name: name.to_owned(),
            target,
        }
    }

    /// Where it is.
    #[must_use]
    pub fn target(&self) -> &Target {
        &self.target
    }

    fn connect(&self) -> Result<WebSocket<MaybeTlsStream<TcpStream>>, Fault> {
        let url = self.target.url.as_url();
        let cannot = |why: String| Fault::Crash(format!("cannot connect to {url}: {why}"));
        let stream =
            TcpStream::connect_timeout(&self.target.addr, CONNECT_TIMEOUT).map_err(|err| cannot(err.to_string()))?;
        let _ = stream.set_nodelay(true);
        stream
            .set_read_timeout(Some(CONNECT_TIMEOUT))
            .and_then(|()| stream.set_write_timeout(Some(CONNECT_TIMEOUT)))
            .map_err(|err| cannot(err.to_string()))?;
        let config = WebSocketConfig::default()
            .max_message_size(Some(MAX_REPLY_BYTES))
            .max_frame_size(Some(MAX_REPLY_BYTES));
        let (socket, _response) = tungstenite::client_tls_with_config(url.as_str(), stream, Some(config), None)
            .map_err(|err| cannot(format!("WebSocket handshake failed: {err}")))?;
        Ok(socket)
    }
}

impl Entrant for WebSocketBot {
    /// Kind `websocket`, never reproducible.
    fn info(&self) -> EntrantInfo {
        crate::info(&self.name, "websocket")
    }

    /// Opens the game's connection. A bot that cannot be reached loses the
    /// game ([`SpawnError::Bot`]).
    fn spawn(&self, _setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        let socket = self.connect()?;
        Ok(Box::new(WebSocketPlayer {
            url: self.target.url.to_string(),
            socket,
            stopped: None,
        }))
    }
}

/// One game of a [`WebSocketBot`]: one connection.
struct WebSocketPlayer {
    url: String,
    socket: WebSocket<MaybeTlsStream<TcpStream>>,
    /// The fault that ended the connection; every later turn repeats it.
    stopped: Option<Fault>,
}

impl WebSocketPlayer {
    fn tcp(&self) -> Option<&TcpStream> {
        match self.socket.get_ref() {
            MaybeTlsStream::Plain(stream) => Some(stream),
            MaybeTlsStream::Rustls(stream) => Some(stream.get_ref()),
            _ => None,
        }
    }

    fn set_timeout(&self, timeout: Duration) {
        if let Some(stream) = self.tcp() {
            let timeout = Some(timeout.max(Duration::from_millis(1)));
            let _ = stream.set_read_timeout(timeout);
            let _ = stream.set_write_timeout(timeout);
        }
    }

    /// Sends `request` (if any) and waits until `deadline` for the next
    /// text frame.
    fn exchange(&mut self, request: Option<&str>, deadline: Instant) -> Result<String, Fault> {
        if let Some(fault) = &self.stopped {
            return Err(fault.clone());
        }
        let result = self.exchange_open(request, deadline);
        if let Err(fault) = &result
            && *fault != Fault::Timeout
        {
            self.stopped = Some(fault.clone());
        }
        result
    }

    fn exchange_open(&mut self, request: Option<&str>, deadline: Instant) -> Result<String, Fault> {
        if let Some(request) = request {
            self.set_timeout(deadline.saturating_duration_since(Instant::now()));
            self.socket
                .send(Message::text(request))
                .map_err(|err| self.fault(err))?;
        }
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Fault::Timeout);
            }
            self.set_timeout(left);
            match self.socket.read() {
                Ok(Message::Text(text)) => return Ok(text.as_str().to_owned()),
                Ok(Message::Binary(_)) => {
                    return Err(Fault::BadReply(
                        "sent a binary frame; replies are text frames holding one JSON line".to_owned(),
                    ));
                }
                Ok(Message::Close(_)) => {
                    return Err(Fault::Crash(format!("{} closed the WebSocket", self.url)));
                }
                Ok(Message::Ping(_) | Message::Pong(_) | Message::Frame(_)) => {}
                Err(err) => return Err(self.fault(err)),
            }
        }
    }

    fn fault(&self, err: tungstenite::Error) -> Fault {
        match err {
            tungstenite::Error::Io(err) if matches!(err.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                Fault::Timeout
            }
            tungstenite::Error::Capacity(_) => {
                Fault::BadReply(format!("reply frame longer than {MAX_REPLY_BYTES} bytes"))
            }
            tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
                Fault::Crash(format!("{} closed the WebSocket", self.url))
            }
            tungstenite::Error::Utf8(_) => Fault::BadReply("reply frame is not valid UTF-8".to_owned()),
            err => Fault::Crash(format!("WebSocket to {} failed: {err}", self.url)),
        }
    }

    fn answer(&mut self, request: Option<&str>, budget_us: u64) -> Result<Answer, TurnError> {
        let start = Instant::now();
        let deadline = start + Duration::from_micros(budget_us);
        let result = self.exchange(request, deadline);
        let spent = Spent {
            us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            fuel: None,
        };
        match result {
            Ok(text) => Ok(Answer {
                line: crate::reply_line(&text),
                spent,
            }),
            Err(fault) => Err(TurnError { fault, spent }),
        }
    }
}

impl Player for WebSocketPlayer {
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        self.answer(Some(request), budget_us)
    }

    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        self.answer(None, budget_us)
    }

    fn stderr(&self) -> Vec<u8> {
        Vec::new()
    }
}

impl Drop for WebSocketPlayer {
    /// Says goodbye with a close frame, waiting at most 100 ms.
    fn drop(&mut self) {
        if self.stopped.is_none() {
            self.set_timeout(Duration::from_millis(100));
            let _ = self.socket.close(None);
            let _ = self.socket.flush();
        }
    }
}
