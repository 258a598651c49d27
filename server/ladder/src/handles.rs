//! [`Handles`]: the database, blob store, sandbox, events and settings
//! that every part of the ladder uses. The live games (the agent hall,
//! games against people) take these, not the whole [`crate::core::Core`]
//! that holds them.

use crate::blobs::Blobs;
use crate::budget::Budgets;
use crate::db::Db;
use crate::events::Events;
use crate::metrics::Metrics;
use crate::ratings::RatingSystem;
use arbiter_sandbox::Sandbox;

/// The handles every part of the ladder uses (cheap to clone; clones share
/// them).
#[derive(Clone, Debug)]
pub struct Handles {
    /// The database.
    pub db: Db,
    /// Modules and replays.
    pub blobs: Blobs,
    /// Runs bots.
    pub sandbox: Sandbox,
    /// Live events.
    pub events: Events,
    /// Glicko-2 (default) or Elo.
    pub rating: RatingSystem,
    /// What this process counts for Prometheus.
    pub metrics: Metrics,
    /// Which addresses remote bots' URLs may reach: public ones only unless
    /// the operator allowed private ones (`--allow-private-bot-urls`).
    pub remote_urls: arbiter_remote::AddressPolicy,
    /// The sandbox's instances by purpose (the pool is their sum).
    pub budgets: Budgets,
}

impl Handles {
    /// The module stored under the blob key `sha256`, loaded in the
    /// sandbox: from its cache, else read from the blob store and compiled.
    /// The error says which step failed, in words for a log or a page.
    pub fn load_module(&self, sha256: &str) -> std::result::Result<arbiter_sandbox::BotModule, String> {
        if let Some(module) = self.sandbox.cached(sha256) {
            return Ok(module);
        }
        let wasm = self
            .blobs
            .get_module(sha256, self.sandbox.config().max_binary_bytes())
            .map_err(|e| format!("cannot read the module {sha256}: {e}"))?
            .ok_or_else(|| format!("the module {sha256} is missing"))?;
        self.sandbox
            .load(&wasm)
            .map_err(|e| format!("cannot load the module {sha256}: {e}"))
    }

    /// The largest module an upload may carry, in bytes: the larger of the
    /// sandbox's [`max_module_bytes`](arbiter_sandbox::SandboxConfig::max_module_bytes) (16
    /// MiB by default, for preview-1 modules) and
    /// [`max_component_bytes`](arbiter_sandbox::SandboxConfig::max_component_bytes) (40 MiB,
    /// for components). The one limit every upload path reads, so the web
    /// layer refuses early what no check could accept; the sandbox refuses
    /// the rest, by kind.
    pub fn max_module_bytes(&self) -> usize {
        self.sandbox.config().max_binary_bytes()
    }
}
