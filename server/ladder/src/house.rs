//! The house account and its bots, registered on first start so a fresh
//! install has a living ladder.
//!
//! House bots are built from the project's own source (`arbiter-house`) and
//! trusted: they skip the smoke match but are stored and played like any
//! uploaded version. A new build of a house bot becomes a new version and
//! retires the old one.

use crate::core::Core;
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::versions;

/// The house account's name.
pub const HOUSE_USER: &str = "house";

/// Registers the house account and the current build of every house bot
/// (idempotent: run at every start).
pub async fn seed(core: &Core) -> Result<()> {
    let db = &core.db;
    let mut tx = db.begin_write().await?;
    let existing: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE name_key = $1")
        .bind(HOUSE_USER)
        .fetch_optional(&mut *tx)
        .await?;
    let house_id = match existing {
        Some(id) => id,
        None => {
            sqlx::query_scalar(
                "INSERT INTO users (name, name_key, password_hash, is_house, created_ms) VALUES ($1, $1, '', 1, $2) RETURNING id",
            )
            .bind(HOUSE_USER)
            .bind(now_ms())
            .fetch_one(&mut *tx)
            .await?
        }
    };
    tx.commit().await?;
    for bot in arbiter_house::ALL {
        let ladders: Vec<String> = bot.variants().iter().map(ToString::to_string).collect();
        let key = core
            .blobs
            .run(move |blobs| blobs.put_module(bot.wasm()))
            .await
            .map_err(|e| Error::Unavailable(format!("cannot store house bot {}: {e}", bot.name)))?;
        let mut tx = db.begin_write().await?;
        let bot_id = versions::ensure_bot(&mut tx, house_id, bot.name).await?;
        let current: Option<i64> = sqlx::query_scalar("SELECT id FROM versions WHERE bot_id = $1 AND sha256 = $2")
            .bind(bot_id)
            .bind(&key)
            .fetch_optional(&mut *tx)
            .await?;
        let version_id = match current {
            Some(id) => id,
            None => {
                let version_id =
                    versions::insert_version(&mut tx, bot_id, &key, bot.wasm().len(), &ladders, "checking")
                        .await?
                        .id;
                versions::activate(&mut tx, version_id).await?;
                version_id
            }
        };
        // House bots are the remote ladders' sparring partners: sandboxed,
        // on the server's clock, rated there apart from their fuel-clock
        // ratings. (Added here so that databases from before remote ladders
        // get them too.)
        for variant in bot.variants() {
            let ladder = crate::ladders::remote_name(variant);
            let known: Option<i64> =
                sqlx::query_scalar("SELECT version_id FROM version_ladders WHERE version_id = $1 AND ladder = $2")
                    .bind(version_id)
                    .bind(&ladder)
                    .fetch_optional(&mut *tx)
                    .await?;
            if known.is_none() {
                sqlx::query("INSERT INTO version_ladders (version_id, ladder) VALUES ($1, $2)")
                    .bind(version_id)
                    .bind(&ladder)
                    .execute(&mut *tx)
                    .await?;
                crate::ratings::ensure_row(&mut tx, version_id, &ladder).await?;
            }
        }
        tx.commit().await?;
    }
    Ok(())
}
