//! Integration tests of arbiter-sandbox: one binary, modules by topic.
//!
//! - `support`: the shared sandbox, WAT helpers, the Rust test bots.
//! - `checks`: modules refused before (or by) compilation.
//! - `hostile`: bots that misbehave while running; each test also checks
//!   that the host still serves a well-behaved bot afterwards.
//! - `host_costs`: loops of host work (grows, WASI calls) are judged by
//!   fuel, not by the wall-clock backstop; a calibration of their charges.
//! - `stop`: `OnTimeout::Stop` stops hostile loops at exactly their budget.
//! - `rust_bot`: real Rust bots built for wasm32-wasip1 from `tests/bots`.
//! - `determinism`: same module, seed and requests give the same bytes and fuel.
//! - `cache`: the compiler child process and the artifact cache.
//! - `bounds`: the disk caches' size bounds, alone and shared.
//! - `components`: WASI 0.2 components built by the kits' producers.
//! - `closing`: the end of a game (stdin closed, the bot may exit).
//! - `iovecs`: reads and writes with several iovecs.

mod bounds;
mod cache;
mod checks;
mod closing;
mod components;
mod determinism;
mod host_costs;
mod hostile;
mod iovecs;
mod rust_bot;
mod stop;
mod support;
