//! The Arbiter ladder's core, with no HTTP, templates or command line: the
//! steps a web layer or a command calls, and the parts that keep ladders
//! playing.
//!
//! A [`core::Core`] holds the database ([`db`]: SQLite in the data
//! directory, or PostgreSQL), the content-addressed blob store ([`blobs`]:
//! a folder or S3-compatible object storage), the sandbox and the live
//! events ([`events`]). On it run the scheduler that keeps every ladder
//! playing ([`scheduler`]) by adding matches to the queue ([`queue`]), workers
//! that claim queued matches and play them through the referee ([`worker`]), Glicko-2 or Elo ratings ([`ratings`])
//! and upload checks ([`versions`]); the steps a caller takes are
//! [`accounts`], [`uploads`], [`challenges`] and [`tournaments`], refused
//! or failed with an [`error::Error`].
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
pub mod agent;
pub mod auth;
pub mod blobs;
pub mod bots;
pub mod budget;
pub mod challenges;
pub mod check;
pub mod core;
pub mod crosstable;
pub mod db;
pub mod error;
pub mod events;
pub mod handles;
pub mod house;
pub mod ladders;
pub mod leaderboard;
pub mod listings;
pub mod match_search;
pub mod matches;
pub mod metrics;
pub mod model;
pub mod people;
pub mod profile;
pub mod queue;
pub mod quota;
pub mod ratings;
pub mod replays;
pub mod scheduler;
pub mod seed;
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
