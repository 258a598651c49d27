//! [`Core`]: what the ladder's background parts (scheduler, checker,
//! workers) and a web server share.

use crate::blobs::Blobs;
use crate::db::{Db, DbOptions};
use crate::events::Events;
use crate::metrics::Metrics;
use crate::ratings::RatingSystem;
use anyhow::Context;
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
}

impl Core {
    /// The largest module an upload may carry, in bytes: the sandbox's
    /// [`max_module_bytes`](SandboxConfig::max_module_bytes) (16 MiB by
    /// default). The one limit every upload path reads, so the web layer
    /// refuses early exactly what the sandbox would refuse later.
    pub fn max_module_bytes(&self) -> usize {
        self.sandbox.config().max_module_bytes
    }

    /// Opens the data directory (`arbiter.db`, `blobs/`, `compiled/`), or
    /// the database at `database_url` and the blob store at `blobs` (a folder
    /// or `s3://BUCKET[/PREFIX]`, see [`Blobs::at`]) instead of theirs. The
    /// sandbox compiles untrusted modules in child processes started with
    /// `compiler`, which the caller provides (the `arbiter` binary names
    /// itself with a hidden subcommand; the core knows no binary).
    pub async fn open(
        data_dir: &std::path::Path,
        database_url: Option<&str>,
        blobs: Option<&str>,
        rating: RatingSystem,
        compiler: CompilerCommand,
    ) -> anyhow::Result<Core> {
        Core::open_with(data_dir, database_url, blobs, rating, DbOptions::default(), compiler).await
    }

    /// [`Core::open`] with the database waited for as `db_options` say.
    pub async fn open_with(
        data_dir: &std::path::Path,
        database_url: Option<&str>,
        blobs: Option<&str>,
        rating: RatingSystem,
        db_options: DbOptions,
        compiler: CompilerCommand,
    ) -> anyhow::Result<Core> {
        std::fs::create_dir_all(data_dir).with_context(|| format!("cannot create {}", data_dir.display()))?;
        let db = Db::open_with(data_dir, database_url, db_options)
            .await
            .with_context(|| match database_url {
                Some(_) => "cannot open the database".to_owned(),
                None => format!("cannot open the database in {}", data_dir.display()),
            })?;
        let blobs = match blobs {
            Some(location) => Blobs::at(location)?,
            None => Blobs::open(&data_dir.join("blobs")).context("cannot open the blob folder")?,
        };
        let sandbox_config = SandboxConfig {
            cache_dir: Some(data_dir.join("compiled")),
            compiler,
            ..SandboxConfig::default()
        };
        let sandbox = Sandbox::new(sandbox_config).context("cannot start the WebAssembly sandbox")?;
        Ok(Core {
            db,
            blobs,
            metrics: Metrics::new(&sandbox),
            sandbox,
            events: Events::default(),
            rating,
        })
    }
}
