//! [`Core`]: what the ladder's background parts (scheduler, checker,
//! workers) and a web server share.

use crate::blobs::Blobs;
use crate::budget::Budgets;
use crate::db::{Db, DbOptions};
use crate::error::{Error, Result};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::ratings::RatingSystem;
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};

/// What the ladder's background parts and the web server share.
#[derive(Clone, Debug)]
pub struct Core {
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
    /// Agent bots' matches (the agent API), kept by this process.
    pub agents: crate::agent::Hall,
    /// Games people play against bots from the site, kept by this process.
    pub people: crate::people::People,
    /// The sandbox's instances by purpose (the pool is their sum).
    pub budgets: crate::budget::Budgets,
}

impl Core {
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
    /// sandbox's [`max_module_bytes`](SandboxConfig::max_module_bytes) (16
    /// MiB by default, for preview-1 modules) and
    /// [`max_component_bytes`](SandboxConfig::max_component_bytes) (40 MiB,
    /// for components). The one limit every upload path reads, so the web
    /// layer refuses early what no check could accept; the sandbox refuses
    /// the rest, by kind.
    pub fn max_module_bytes(&self) -> usize {
        self.sandbox.config().max_binary_bytes()
    }

    /// Opens the data directory (`arbiter.db`, `blobs/`, `compiled/`), or
    /// the database at `database_url` and the blob store at `blobs` (a folder
    /// or `s3://BUCKET[/PREFIX]`, see [`Blobs::at`]) instead of theirs. The
    /// sandbox compiles untrusted modules in child processes started with
    /// `compiler`, which the caller provides (the `arbiter` binary names
    /// itself with a hidden subcommand; the core knows no binary).
    ///
    /// Every failure is [`Error::Host`], whose message says what could not
    /// be opened and why, with the whole chain of causes: `cannot create
    /// DIR: …`, `cannot open the database[ in DIR]: …`, the blob store's
    /// own message (see [`crate::blobs::OpenError`]), `cannot open the blob
    /// folder: …`, `cannot start the WebAssembly sandbox: …`.
    pub async fn open(
        data_dir: &std::path::Path,
        database_url: Option<&str>,
        blobs: Option<&str>,
        rating: RatingSystem,
        compiler: CompilerCommand,
    ) -> Result<Core> {
        Core::open_with(
            data_dir,
            database_url,
            blobs,
            rating,
            DbOptions::default(),
            Budgets::default(),
            compiler,
        )
        .await
    }

    /// [`Core::open`] with the database waited for as `db_options` say and
    /// the sandbox's instances divided as `budgets` say (failing as
    /// [`Core::open`] does).
    pub async fn open_with(
        data_dir: &std::path::Path,
        database_url: Option<&str>,
        blobs: Option<&str>,
        rating: RatingSystem,
        db_options: DbOptions,
        budgets: Budgets,
        compiler: CompilerCommand,
    ) -> Result<Core> {
        std::fs::create_dir_all(data_dir)
            .map_err(|e| Error::host(format_args!("cannot create {}", data_dir.display()), &e))?;
        let db = Db::open_with(data_dir, database_url, db_options)
            .await
            .map_err(|e| match database_url {
                Some(_) => Error::Host(format!("cannot open the database: {}", e.detail())),
                None => Error::Host(format!(
                    "cannot open the database in {}: {}",
                    data_dir.display(),
                    e.detail()
                )),
            })?;
        let blobs = match blobs {
            Some(location) => Blobs::at(location).map_err(|e| Error::Host(crate::error::chain(&e)))?,
            None => Blobs::open(&data_dir.join("blobs")).map_err(|e| Error::host("cannot open the blob folder", &e))?,
        };
        let sandbox_config = SandboxConfig {
            cache_dir: Some(data_dir.join("compiled")),
            compiler,
            instance_slots: budgets.instance_slots(),
            // The disk caches' bounds, from ARBITER_COMPILE_CACHE_BYTES and
            // ARBITER_FUNCTION_CACHE_BYTES.
            ..SandboxConfig::from_env().map_err(|e| Error::host("cannot start the WebAssembly sandbox", &e))?
        };
        let sandbox =
            Sandbox::new(sandbox_config).map_err(|e| Error::host("cannot start the WebAssembly sandbox", &e))?;
        Ok(Core {
            db,
            blobs,
            metrics: Metrics::new(&sandbox),
            sandbox,
            events: Events::default(),
            rating,
            remote_urls: arbiter_remote::AddressPolicy::PUBLIC_ONLY,
            agents: crate::agent::Hall::with_house_budget(
                crate::agent::AgentRules::from_env(),
                crate::agent::AgentClock::System,
                budgets.house,
            ),
            people: crate::people::People::new(crate::people::PeopleRules {
                games: budgets.people as usize,
                ..crate::people::PeopleRules::default()
            }),
            budgets,
        })
    }
}
