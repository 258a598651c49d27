//! Remote bots against real servers on loopback.

mod http;
mod ssrf;
mod support;
mod websocket;
