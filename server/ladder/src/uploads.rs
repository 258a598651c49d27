//! An upload as a step of the ladder: a module checked for the sandbox's
//! contract, stored, and added as a version of the caller's bot (created if
//! the name is new) in one transaction; its full check runs later, off the
//! request path. The JSON API (`POST /api/bots`) and the site's form
//! (`POST /upload`) both call [`upload`].

use crate::auth::rate_limit;
use crate::blobs::sha256_hex;
use crate::core::Core;
use crate::error::{Error, Result};
use crate::{ladders, versions};

/// Uploads per user per minute.
pub const UPLOADS_PER_MINUTE: i64 = 10;

/// How long registering a remote bot waits for its host to resolve.
pub const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// Checks a bot name: 3–32 letters, digits, `_` or `-`.
pub fn valid_bot_name(name: &str) -> Result<(), Error> {
    let ok = (3..=32).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(
            "a bot name has 3 to 32 characters: letters, digits, `_` and `-`".into(),
        ))
    }
}

/// What an upload carries: each part may be missing, which
/// [`upload`] refuses with a message naming it.
#[derive(Debug, Default)]
pub struct Upload {
    /// The bot's name.
    pub name: Option<String>,
    /// The ladders it is to play (names or aliases).
    pub ladders: Vec<String>,
    /// The module's bytes.
    pub module: Option<Vec<u8>>,
    /// Instead of a module: the URL of a bot that is an HTTP or WebSocket
    /// server (a remote bot, for the remote ladders).
    pub url: Option<String>,
    /// Instead of a module or a URL: an agent bot, an Othello engine on
    /// its owner's machine that calls the agent API with a bot token.
    pub agent: bool,
}

/// A version just added, in `checking`.
#[derive(Debug, Clone)]
pub struct Uploaded {
    /// The bot's id.
    pub bot_id: i64,
    /// The bot's name as uploaded.
    pub name: String,
    /// The new version's id.
    pub version_id: i64,
    /// Its number within the bot (1, 2, ...).
    pub number: i64,
    /// The module's SHA-256, hex.
    pub sha256: String,
    /// The ladders it is to play, by canonical name.
    pub ladders: Vec<String>,
    /// `checking` for a module, `active` for a remote bot.
    pub status: crate::model::VersionStatus,
}

/// Adds `upload` as a new version of `user_id`'s bot and wakes the checker.
/// 400 for a missing or bad name, ladder or module (naming what is wrong),
/// 403 for someone else's bot name, 409 for a module that is already a
/// version of the bot, 429 past [`UPLOADS_PER_MINUTE`]. A refused upload
/// stores nothing.
pub async fn upload(core: &Core, user_id: i64, upload: Upload) -> Result<Uploaded> {
    let name = upload
        .name
        .ok_or_else(|| Error::Invalid("the form needs a `name` field".into()))?;
    valid_bot_name(&name)?;
    if upload.ladders.is_empty() {
        return Err(Error::Invalid(format!(
            "tick at least one ladder (`ladders` field): {}",
            ladders::names().join(", ")
        )));
    }
    if upload.agent {
        if upload.module.is_some() || upload.url.as_deref().is_some_and(|url| !url.trim().is_empty()) {
            return Err(Error::Invalid(
                "an agent bot has neither a `module` nor a `url`: it connects to this server with a bot token".into(),
            ));
        }
        return upload_agent(core, user_id, name, &upload.ladders).await;
    }
    if let Some(url) = upload.url.filter(|url| !url.trim().is_empty()) {
        if upload.module.is_some() {
            return Err(Error::Invalid(
                "give either a `module` file or a `url`, not both".into(),
            ));
        }
        return upload_remote(core, user_id, name, &upload.ladders, &url).await;
    }
    let mut ladder_names = Vec::new();
    for ladder in &upload.ladders {
        let name = ladders::name(ladders::parse(ladder)?);
        if !ladder_names.contains(&name) {
            ladder_names.push(name);
        }
    }
    let module = upload
        .module
        .ok_or_else(|| Error::Invalid("the form needs a `module` file (.wasm) or a remote bot's `url`".into()))?;
    if !module.starts_with(b"\0asm") {
        return Err(Error::Invalid(
            "the module is not WebAssembly (a .wasm file starts with \\0asm): build it with --target wasm32-wasip1"
                .into(),
        ));
    }
    rate_limit(&core.db, &format!("upload:{}", user_id), UPLOADS_PER_MINUTE, 60_000).await?;
    let sandbox = core.sandbox.clone();
    let checked = {
        let module = module.clone();
        tokio::task::spawn_blocking(move || sandbox.inspect(&module))
            .await
            .map_err(|e| Error::Internal(e.to_string()))?
    };
    let info = match checked {
        Ok(info) => info,
        Err(error) if error.is_host_failure() => return Err(Error::Internal(error.to_string())),
        Err(error) => return Err(Error::Invalid(format!("the module was refused: {error}"))),
    };
    // The most its compile may take, reserved against the account's hour
    // before anything compiles.
    let config = core.sandbox.config();
    let worst = match info.kind {
        arbiter_sandbox::ModuleKind::Core => config.compile_timeout,
        arbiter_sandbox::ModuleKind::Component => config.component_compile_timeout,
    };
    let sha256 = sha256_hex(&module);
    let module_len = module.len();
    let stored = core.blobs.run(move |blobs| blobs.put_module(&module)).await?;
    debug_assert_eq!(stored, sha256);

    let mut tx = core.db.begin_write().await?;
    let (bot_id, duplicate) = own_bot_and_duplicate(&mut tx, user_id, &name, &sha256).await?;
    if let Some(number) = duplicate {
        return Err(Error::Conflict(format!(
            "this module is already version {number} of {name}"
        )));
    }
    let versions::NewVersion { id: version_id, number } =
        versions::insert_version(&mut tx, bot_id, &sha256, module_len, &ladder_names, "checking").await?;
    reserve_compile_time(&mut tx, core.db.backend, user_id, version_id, worst).await?;
    sqlx::query("UPDATE bots SET retired = 0 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    versions::wake_checker();
    Ok(Uploaded {
        bot_id,
        name,
        version_id,
        number,
        sha256,
        ladders: ladder_names,
        status: crate::model::VersionStatus::Checking,
    })
}

/// `user_id`'s bot `name` (created if the name is new; 403 if it is
/// someone else's) and the number of its version with digest `sha256`, if
/// it has one.
async fn own_bot_and_duplicate(
    tx: &mut sqlx::AnyConnection,
    user_id: i64,
    name: &str,
    sha256: &str,
) -> Result<(i64, Option<i64>)> {
    let bot_id = match versions::find_bot(tx, name).await? {
        Some((id, owner)) if owner == user_id => id,
        Some(_) => return Err(Error::Forbidden(format!("the bot {name} belongs to someone else"))),
        None => versions::ensure_bot(tx, user_id, name).await?,
    };
    let duplicate: Option<i64> = sqlx::query_scalar("SELECT number FROM versions WHERE bot_id = $1 AND sha256 = $2")
        .bind(bot_id)
        .bind(sha256)
        .fetch_optional(&mut *tx)
        .await?;
    Ok((bot_id, duplicate))
}

/// Adds a remote bot's URL as a new, active version of `user_id`'s bot
/// `name` on the remote ladders of the games `ladders` names (`othello:std`
/// and `remote:othello:std` both mean the remote Othello ladder). The URL
/// must parse and resolve to addresses the core's policy accepts; nothing
/// connects to it here. There is no smoke match: a remote bot's first
/// matches show whether it answers.
async fn upload_remote(core: &Core, user_id: i64, name: String, ladders: &[String], url: &str) -> Result<Uploaded> {
    let ladder_names = remote_ladders(ladders, false)?;
    let url =
        arbiter_remote::BotUrl::parse(url).map_err(|e| Error::Invalid(format!("the bot URL was refused: {e}")))?;
    rate_limit(&core.db, &format!("upload:{}", user_id), UPLOADS_PER_MINUTE, 60_000).await?;
    let policy = core.remote_urls;
    let checked = url.clone();
    // Resolving may wait on DNS: off the async threads, and not for long.
    let resolving = tokio::task::spawn_blocking(move || policy.resolve(&checked));
    tokio::time::timeout(RESOLVE_TIMEOUT, resolving)
        .await
        .map_err(|_| {
            let timeout = arbiter_remote::UrlError::ResolveTimeout {
                host: url.host_text(),
                within: RESOLVE_TIMEOUT,
            };
            Error::Invalid(format!("the bot URL was refused: {timeout}"))
        })?
        .map_err(|e| Error::Internal(e.to_string()))?
        .map_err(|e| {
            if matches!(e, arbiter_remote::UrlError::NotPublic { .. }) {
                // The visitor reads what the address is; the operator also
                // reads how to allow such addresses.
                tracing::info!(
                    user_id,
                    "a bot URL was refused: {e} (a server started with --allow-private-bot-urls accepts it)"
                );
            }
            Error::Invalid(format!("the bot URL was refused: {e}"))
        })?;
    let text = url.to_string();
    let sha256 = sha256_hex(text.as_bytes());
    let mut tx = core.db.begin_write().await?;
    let (bot_id, duplicate) = own_bot_and_duplicate(&mut tx, user_id, &name, &sha256).await?;
    if let Some(number) = duplicate {
        // A paused remote bot is resumed by posting its URL again.
        let paused: Option<(i64, String)> =
            sqlx::query_as("SELECT id, ladders FROM versions WHERE bot_id = $1 AND number = $2 AND status = 'paused'")
                .bind(bot_id)
                .bind(number)
                .fetch_optional(&mut *tx)
                .await?;
        let Some((version_id, ladders_json)) = paused else {
            return Err(Error::Conflict(format!(
                "this URL is already version {number} of {name}"
            )));
        };
        sqlx::query("UPDATE versions SET reason = NULL WHERE id = $1")
            .bind(version_id)
            .execute(&mut *tx)
            .await?;
        versions::activate(&mut tx, version_id).await?;
        tx.commit().await?;
        return Ok(Uploaded {
            bot_id,
            name,
            version_id,
            number,
            sha256,
            ladders: serde_json::from_str(&ladders_json).unwrap_or_default(),
            status: crate::model::VersionStatus::Active,
        });
    }
    let versions::NewVersion { id: version_id, number } =
        versions::insert_version(&mut tx, bot_id, &sha256, 0, &ladder_names, "checking").await?;
    // Not the URL itself: the page is public, the owner's server is not.
    let module = format!(
        "remote bot: {} server on its owner's machine (wall clock, not reproducible)",
        url.transport()
    );
    sqlx::query("UPDATE versions SET remote_url = $2, module = $3 WHERE id = $1")
        .bind(version_id)
        .bind(&text)
        .bind(module)
        .execute(&mut *tx)
        .await?;
    let version = versions::NewVersion { id: version_id, number };
    activate_and_commit(tx, bot_id, name, version, sha256, ladder_names).await
}

/// What an agent version's page says of it: its owner's engine is not
/// here to show.
pub const AGENT_MODULE: &str = "agent bot: an Othello engine on its owner's machine that calls this server with a bot token \
     (FlipSight's agent API; wall clock, not reproducible)";

/// Registers `user_id`'s bot `name` as an agent bot on the remote Othello
/// ladders `ladders` names (any Othello ladder name or alias; another game
/// is refused: the agent API plays Othello only). The version is active at
/// once; the bot plays once its owner has issued it a token and its
/// connector is online. Registering it again changes nothing (409).
async fn upload_agent(core: &Core, user_id: i64, name: String, ladders: &[String]) -> Result<Uploaded> {
    let ladder_names = remote_ladders(ladders, true)?;
    let sha256 = sha256_hex(format!("agent:{}", name.to_lowercase()).as_bytes());
    let mut tx = core.db.begin_write().await?;
    agent_bot_room(&mut tx, core.db.backend, user_id, &name).await?;
    let (bot_id, duplicate) = own_bot_and_duplicate(&mut tx, user_id, &name, &sha256).await?;
    let (version_id, number) = match duplicate {
        Some(number) => {
            // A retired agent bot comes back with its old version (and its
            // ratings); an active one is already there.
            let (version_id, status): (i64, String) =
                sqlx::query_as("SELECT id, status FROM versions WHERE bot_id = $1 AND number = $2")
                    .bind(bot_id)
                    .bind(number)
                    .fetch_one(&mut *tx)
                    .await?;
            if status == "active" {
                return Err(Error::Conflict(format!(
                    "{name} is already an agent bot (version {number}): issue it a token on its page, or \
                     change its games in its profile"
                )));
            }
            (version_id, number)
        }
        None => {
            let versions::NewVersion { id, number } =
                versions::insert_version(&mut tx, bot_id, &sha256, 0, &ladder_names, "checking").await?;
            sqlx::query("UPDATE versions SET agent = 1, module = $2 WHERE id = $1")
                .bind(id)
                .bind(AGENT_MODULE)
                .execute(&mut *tx)
                .await?;
            (id, number)
        }
    };
    let version = versions::NewVersion { id: version_id, number };
    activate_and_commit(tx, bot_id, name, version, sha256, ladder_names).await
}

/// Compile CPU time an account may spend in an hour, in milliseconds (10
/// minutes): what keeps one account from keeping the server's cores
/// compiling. An upload reserves the most its kind may take (the sandbox's
/// compile limit: 12 s for a module, 120 s for a component) and the checker
/// settles the reservation to what the compile took (nothing when the
/// module was found compiled), so an allowance is spent by real work.
pub const COMPILE_MS_PER_HOUR: i64 = 10 * 60 * 1000;

/// Reserves `worst` of compile time for version `version_id` of `user_id`
/// against [`COMPILE_MS_PER_HOUR`], in the upload's transaction (on
/// PostgreSQL under a lock per account, so simultaneous uploads cannot
/// spend one allowance twice); [`Error::RateLimited`] with the wait when
/// the hour's allowance cannot hold it.
async fn reserve_compile_time(
    tx: &mut sqlx::AnyConnection,
    backend: crate::db::Backend,
    user_id: i64,
    version_id: i64,
    worst: std::time::Duration,
) -> Result<()> {
    if backend == crate::db::Backend::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("compile-time:{user_id}"))
            .execute(&mut *tx)
            .await?;
    }
    let now = crate::db::now_ms();
    let hour_ago = now - 3_600_000;
    let worst_ms = i64::try_from(worst.as_millis()).unwrap_or(i64::MAX);
    // (PostgreSQL sums BIGINTs as NUMERIC, which the Any driver cannot read.)
    let (spent, oldest): (i64, Option<i64>) = sqlx::query_as(
        "SELECT CAST(COALESCE(SUM(cpu_ms), 0) AS BIGINT), MIN(at_ms) FROM compile_spend \
         WHERE user_id = $1 AND at_ms > $2",
    )
    .bind(user_id)
    .bind(hour_ago)
    .fetch_one(&mut *tx)
    .await?;
    if spent.saturating_add(worst_ms) > COMPILE_MS_PER_HOUR {
        let retry_after_s = u64::try_from(oldest.map_or(60_000, |at| at + 3_600_000 - now))
            .unwrap_or(0)
            .div_ceil(1000)
            .max(1);
        return Err(Error::RateLimited {
            message: format!(
                "this account's uploads took {} s of the {} s of compile time an hour allows, and this one may \
                 take {} s: try again in {retry_after_s} s",
                spent / 1000,
                COMPILE_MS_PER_HOUR / 1000,
                worst_ms / 1000
            ),
            retry_after_s,
        });
    }
    sqlx::query("INSERT INTO compile_spend (version_id, user_id, at_ms, cpu_ms) VALUES ($1, $2, $3, $4)")
        .bind(version_id)
        .bind(user_id)
        .bind(now)
        .bind(worst_ms)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// Agent bots one account may have playing (not retired) at once. An agent
/// bot has nothing to check, so registering one is not an upload and is
/// not rate-limited as one; this bounds how many an account holds.
pub const AGENT_BOTS_PER_ACCOUNT: i64 = 20;

/// Refuses the registration of `name` as an agent bot when `user_id`
/// already has [`AGENT_BOTS_PER_ACCOUNT`] other agent bots playing; counted
/// inside the registration's transaction (on PostgreSQL under a lock per
/// account), so simultaneous registrations cannot pass the limit together.
async fn agent_bot_room(
    tx: &mut sqlx::AnyConnection,
    backend: crate::db::Backend,
    user_id: i64,
    name: &str,
) -> Result<()> {
    if backend == crate::db::Backend::Postgres {
        sqlx::query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
            .bind(format!("agent-bots:{user_id}"))
            .execute(&mut *tx)
            .await?;
    }
    let others: i64 = sqlx::query_scalar(
        "SELECT COUNT(DISTINCT b.id) FROM bots b JOIN versions v ON v.bot_id = b.id \
         WHERE b.owner_id = $1 AND b.retired = 0 AND v.agent = 1 AND v.status = 'active' AND b.name_key <> $2",
    )
    .bind(user_id)
    .bind(name.to_lowercase())
    .fetch_one(&mut *tx)
    .await?;
    if others >= AGENT_BOTS_PER_ACCOUNT {
        return Err(Error::Conflict(format!(
            "an account may have at most {AGENT_BOTS_PER_ACCOUNT} agent bots playing; retire one first"
        )));
    }
    Ok(())
}

/// Makes the new remote or agent version `version` of `bot_id` the active
/// one (the bot unretired) and commits: the last step of a registration
/// that needs no check.
async fn activate_and_commit(
    mut tx: crate::db::Writing<sqlx::Transaction<'static, sqlx::Any>>,
    bot_id: i64,
    name: String,
    version: versions::NewVersion,
    sha256: String,
    ladders: Vec<String>,
) -> Result<Uploaded> {
    versions::activate(&mut tx, version.id).await?;
    sqlx::query("UPDATE bots SET retired = 0 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Uploaded {
        bot_id,
        name,
        version_id: version.id,
        number: version.number,
        sha256,
        ladders,
        status: crate::model::VersionStatus::Active,
    })
}

/// The remote ladders of the games `ladders` names (any ladder name or
/// alias, `remote:` names too), each once; with `othello_only`, another
/// game is refused (the agent API plays Othello only).
fn remote_ladders(ladders: &[String], othello_only: bool) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for ladder in ladders {
        let (variant, _) = ladders::parse_any(ladder)?;
        if othello_only && !matches!(variant, arbiter_games::Variant::Othello(_)) {
            return Err(Error::Invalid(format!(
                "an agent bot plays Othello only (FlipSight's agent API), not {ladder}: tick Othello ladders, \
                 or register a `url` or upload a `module` for other games"
            )));
        }
        let name = ladders::remote_name(variant);
        if !names.contains(&name) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Retires `user_id`'s bot `name`: it stops playing, and its active or
/// checking versions become `retired`; returns how many did. A later upload
/// under the name brings the bot back. 404 for no such bot, 403 for
/// someone else's.
pub async fn retire(core: &Core, user_id: i64, name: &str) -> Result<u64> {
    let mut tx = core.db.begin_write().await?;
    let (bot_id, owner) = versions::find_bot(&mut tx, name)
        .await?
        .ok_or_else(|| Error::not_found(format!("bot {name:?}")))?;
    if owner != user_id {
        return Err(Error::Forbidden(format!("the bot {name} belongs to someone else")));
    }
    sqlx::query("UPDATE bots SET retired = 1 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    let retired =
        sqlx::query("UPDATE versions SET status = 'retired' WHERE bot_id = $1 AND status IN ('active', 'checking')")
            .bind(bot_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    tx.commit().await?;
    Ok(retired)
}

/// What un-retiring a bot brought back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unretired {
    /// The version that is active again (its ratings and matches kept), if
    /// the bot had one that had passed its check.
    pub active: Option<i64>,
    /// Versions retired before their check ended, checking again.
    pub checking: u64,
}

/// Un-retires `user_id`'s retired bot `name`, undoing [`retire`]: the
/// newest of its retired versions that had passed its check is active
/// again on its ladders (with its ratings), and newer versions retired
/// while still checking are checked again. 404 for no such bot, 403 for
/// someone else's, 409 for a bot that is not retired, or that has no
/// version to bring back (upload one), or an agent bot past
/// [`AGENT_BOTS_PER_ACCOUNT`]. Nothing changes on a refusal.
pub async fn unretire(core: &Core, user_id: i64, name: &str) -> Result<Unretired> {
    let mut tx = core.db.begin_write().await?;
    let (bot_id, owner) = versions::find_bot(&mut tx, name)
        .await?
        .ok_or_else(|| Error::not_found(format!("bot {name:?}")))?;
    if owner != user_id {
        return Err(Error::Forbidden(format!("the bot {name} belongs to someone else")));
    }
    let retired: i64 = sqlx::query_scalar("SELECT retired FROM bots WHERE id = $1")
        .bind(bot_id)
        .fetch_one(&mut *tx)
        .await?;
    if retired == 0 {
        return Err(Error::Conflict(format!("{name} is not retired")));
    }
    let checked: Option<(i64, i64, i64)> = sqlx::query_as(
        "SELECT id, number, agent FROM versions WHERE bot_id = $1 AND status = 'retired' AND checked_ms IS NOT NULL \
         ORDER BY number DESC LIMIT 1",
    )
    .bind(bot_id)
    .fetch_optional(&mut *tx)
    .await?;
    if checked.as_ref().is_some_and(|(_, _, agent)| *agent != 0) {
        agent_bot_room(&mut tx, core.db.backend, user_id, name).await?;
    }
    let after = checked.as_ref().map_or(0, |(_, number, _)| *number);
    let checking = sqlx::query(
        "UPDATE versions SET status = 'checking' WHERE bot_id = $1 AND status = 'retired' AND checked_ms IS NULL \
         AND number > $2",
    )
    .bind(bot_id)
    .bind(after)
    .execute(&mut *tx)
    .await?
    .rows_affected();
    if checked.is_none() && checking == 0 {
        return Err(Error::Conflict(format!(
            "{name} has no version to bring back (none passed its check): upload a new version instead"
        )));
    }
    if let Some((version_id, _, _)) = checked {
        versions::activate(&mut tx, version_id).await?;
    }
    sqlx::query("UPDATE bots SET retired = 0 WHERE id = $1")
        .bind(bot_id)
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    if checking > 0 {
        versions::wake_checker();
    }
    Ok(Unretired {
        active: checked.map(|(id, _, _)| id),
        checking,
    })
}
