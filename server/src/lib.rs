//! The Arbiter ladder server and the pieces the `arbiter` command line
//! shares with it.
//!
//! `arbiter serve` runs everything on one machine: an axum web server with
//! the JSON API ([`api`]), the scheduler that keeps every ladder playing
//! ([`scheduler`]), in-process workers that claim queued matches and play them
//! through the referee ([`worker`]), Glicko-2 ratings ([`ratings`]), upload
//! checks ([`versions`]) and a content-addressed blob store ([`blobs`]), on a
//! SQLite database in the data directory or on PostgreSQL ([`db`]), with
//! blobs in a folder or in S3-compatible object storage.
//!
//! # Guarantees
//!
//! - A match is rated exactly once, even when a worker dies mid-match and the
//!   match is claimed again: the result, the replay reference and the rating
//!   change are written in one transaction guarded by the worker's lease.
//! - A failure of the host never counts as a loss: such a match is retried,
//!   then marked failed and left unrated.
//! - Ratings are derived data: replaying the log of rated matches in order
//!   gives the stored ratings ([`ratings::recompute`]).

pub mod accounts;
pub mod api;
pub mod auth;
pub mod blobs;
pub mod bots;
pub mod challenges;
pub mod check;
pub mod crosstable;
pub mod db;
pub mod error;
pub mod events;
pub mod house;
pub mod kits;
pub mod ladders;
pub mod metrics;
pub mod ratings;
pub mod sandbox;
pub mod scheduler;
pub mod server;
pub mod simulate;
pub mod site;
pub mod stats;
pub mod tournaments;
pub mod uploads;
pub mod versions;
pub mod worker;

/// Makes ring the process's TLS crypto provider (the one sqlx uses too).
/// HTTPS clients (object storage) need one; call this before building any.
/// Calling it again does nothing.
pub fn install_tls_provider() {
    let _ = rustls::crypto::ring::default_provider().install_default();
}
