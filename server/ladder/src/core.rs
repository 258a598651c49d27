//! [`Core`]: what the ladder's background parts (scheduler, checker,
//! workers) and a web server share: the [`Handles`] and the live games.

use crate::blobs::Blobs;
use crate::budget::Budgets;
use crate::db::{Db, DbOptions};
use crate::error::{Error, Result};
use crate::events::Events;
pub use crate::handles::Handles;
use crate::metrics::Metrics;
use crate::ratings::RatingSystem;
use arbiter_sandbox::{CompilerCommand, Sandbox, SandboxConfig};

/// What the ladder's background parts and the web server share: the
/// [`Handles`] every part uses, and the live games this process keeps.
/// Derefs to its handles (`core.db`, `core.sandbox`, …; a `&Core` is a
/// `&Handles` wherever one is asked for).
#[derive(Clone, Debug)]
pub struct Core {
    /// The database, blobs, sandbox, events and settings.
    pub handles: Handles,
    /// Agent bots' matches (the agent API), kept by this process.
    pub agents: crate::agent::Hall,
    /// Games people play against bots from the site, kept by this process.
    pub people: crate::people::People,
}

impl std::ops::Deref for Core {
    type Target = Handles;

    fn deref(&self) -> &Handles {
        &self.handles
    }
}

impl std::ops::DerefMut for Core {
    fn deref_mut(&mut self) -> &mut Handles {
        &mut self.handles
    }
}

impl Core {
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
            handles: Handles {
                db,
                blobs,
                metrics: Metrics::new(&sandbox),
                sandbox,
                events: Events::default(),
                rating,
                remote_urls: arbiter_remote::AddressPolicy::PUBLIC_ONLY,
                budgets,
            },
            agents: crate::agent::Hall::with_house_budget(
                crate::agent::AgentRules::from_env(),
                crate::agent::AgentClock::System,
                budgets.house,
            ),
            people: crate::people::People::new(crate::people::PeopleRules {
                games: budgets.people as usize,
                ..crate::people::PeopleRules::default()
            }),
        })
    }
}
