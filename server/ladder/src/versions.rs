//! Bots and versions: uploads, their checks and their life cycle.
//!
//! A version is `checking` until the checks (sandbox checks, compilation in
//! a child process, a smoke match against a house bot) accept or reject it,
//! off the request path. Each ladder ticked gets its own smoke match and
//! verdict ([`LadderVerdict`]): the version is accepted on the ladders it
//! passed (and plays only those) and rejected only when it passed none.
//! Accepting it makes it `active` and retires the bot's previous active
//! version from matchmaking.

use crate::check::{Verdict, check};
use crate::core::Core;
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::events::Event;
use arbiter_games::Variant;
use sqlx::{AnyConnection, Row};
use std::time::Duration;
use tokio::sync::watch;

/// The id of the bot called `name` (case-insensitively), created for
/// `owner` if there is none. It does not check who owns an existing bot:
/// callers that must, look it up with [`find_bot`] first.
pub async fn ensure_bot(tx: &mut AnyConnection, owner: i64, name: &str) -> Result<i64> {
    let key = name.to_lowercase();
    if let Some(id) = sqlx::query_scalar::<_, i64>("SELECT id FROM bots WHERE name_key = $1")
        .bind(&key)
        .fetch_optional(&mut *tx)
        .await?
    {
        return Ok(id);
    }
    Ok(sqlx::query_scalar(
        "INSERT INTO bots (owner_id, name, name_key, created_ms) VALUES ($1, $2, $3, $4) RETURNING id",
    )
    .bind(owner)
    .bind(name)
    .bind(key)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?)
}

/// A bot's id and owner, by name (case-insensitive).
pub async fn find_bot(tx: &mut AnyConnection, name: &str) -> Result<Option<(i64, i64)>> {
    let row = sqlx::query("SELECT id, owner_id FROM bots WHERE name_key = $1")
        .bind(name.to_lowercase())
        .fetch_optional(&mut *tx)
        .await?;
    Ok(row
        .map(|r| Ok::<_, sqlx::Error>((r.try_get(0)?, r.try_get(1)?)))
        .transpose()?)
}

/// A version just inserted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NewVersion {
    /// Its id.
    pub id: i64,
    /// Its number within the bot (the bot's last + 1).
    pub number: i64,
}

/// Adds a version (number = the bot's last + 1) in `status`, with its
/// ladders.
pub async fn insert_version(
    tx: &mut AnyConnection,
    bot_id: i64,
    sha256: &str,
    size: usize,
    ladders: &[String],
    status: &str,
) -> Result<NewVersion> {
    let number: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(number), 0) + 1 FROM versions WHERE bot_id = $1")
        .bind(bot_id)
        .fetch_one(&mut *tx)
        .await?;
    let ladders_json = serde_json::to_string(ladders).unwrap_or_else(|_| "[]".into());
    let id: i64 = sqlx::query_scalar(
        "INSERT INTO versions (bot_id, number, sha256, size, status, ladders, created_ms) \
         VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
    )
    .bind(bot_id)
    .bind(number)
    .bind(sha256)
    .bind(i64::try_from(size).unwrap_or(i64::MAX))
    .bind(status)
    .bind(ladders_json)
    .bind(now_ms())
    .fetch_one(&mut *tx)
    .await?;
    for ladder in ladders {
        sqlx::query("INSERT INTO version_ladders (version_id, ladder) VALUES ($1, $2)")
            .bind(id)
            .bind(ladder)
            .execute(&mut *tx)
            .await?;
    }
    Ok(NewVersion { id, number })
}

/// Makes a checked version active: retires the bot's other active versions
/// and gives it a starting rating on each of its ladders.
pub async fn activate(tx: &mut AnyConnection, version_id: i64) -> Result<()> {
    let now = now_ms();
    sqlx::query(
        "UPDATE versions SET status = 'retired' WHERE status = 'active' \
         AND bot_id = (SELECT bot_id FROM versions WHERE id = $1) AND id <> $1",
    )
    .bind(version_id)
    .execute(&mut *tx)
    .await?;
    sqlx::query("UPDATE versions SET status = 'active', checked_ms = $2 WHERE id = $1")
        .bind(version_id)
        .bind(now)
        .execute(&mut *tx)
        .await?;
    let ladders: Vec<String> = sqlx::query_scalar("SELECT ladder FROM version_ladders WHERE version_id = $1")
        .bind(version_id)
        .fetch_all(&mut *tx)
        .await?;
    for ladder in ladders {
        crate::ratings::ensure_row(tx, version_id, &ladder).await?;
    }
    Ok(())
}

/// Checks one `checking` version and records the verdict. Host failures
/// leave it `checking` (it is tried again later) and are returned: a
/// module missing from the blob store is [`Error::Unavailable`], a failing
/// sandbox [`Error::Host`]. A version that is not `checking` is left as it
/// is.
pub async fn check_one(core: &Core, version_id: i64) -> Result<()> {
    let row = sqlx::query(
        "SELECT v.sha256, v.ladders, b.name FROM versions v JOIN bots b ON b.id = v.bot_id \
         WHERE v.id = $1 AND v.status = 'checking'",
    )
    .bind(version_id)
    .fetch_optional(&core.db.pool)
    .await?;
    let Some(row) = row else { return Ok(()) };
    let sha256: String = row.try_get(0)?;
    let ladders: Vec<String> =
        serde_json::from_str(&row.try_get::<String, _>(1)?).map_err(|e| Error::Internal(e.to_string()))?;
    let name: String = row.try_get(2)?;
    // Each ladder's own control: the smoke match gives a game's first move
    // the ladder's per-move cap.
    let controls = crate::ladders::time_controls(&core.db).await?;
    let blobs = core.blobs.clone();
    let sandbox = core.sandbox.clone();
    let started = std::time::Instant::now();
    let (verdicts, module, compile_cpu, stderr) = tokio::task::spawn_blocking(
        move || -> Result<(Vec<LadderVerdict>, Option<String>, Duration, String)> {
            let wasm = blobs
                .get_module(&sha256, sandbox.config().max_binary_bytes())?
                .ok_or_else(|| Error::Unavailable(format!("module {sha256} is missing from the blob store")))?;
            // Smoke-test on every ladder the author ticked, each on its own:
            // a bot that works on one mode may crash on another, and it
            // plays on the ladders it passed.
            let mut verdicts = Vec::new();
            let mut module = None;
            let mut compile_cpu = Duration::ZERO;
            let mut stderr = String::new();
            for ladder in &ladders {
                let variant: Variant = ladder.parse().map_err(|e| Error::Internal(format!("{e}")))?;
                let control = controls
                    .get(&crate::ladders::name(variant))
                    .copied()
                    .unwrap_or_else(|| crate::ladders::TimeControl::default_for(variant));
                let checked = check(&sandbox, &wasm, &name, variant, control.budget())?;
                compile_cpu += checked.compile_cpu;
                // The first check compiled the module; the others found it.
                module = module.or(checked.module);
                verdicts.push(match checked.verdict {
                    Verdict::Accepted { .. } => LadderVerdict {
                        ladder: ladder.clone(),
                        passed: true,
                        reason: None,
                    },
                    Verdict::Rejected { reason, stderr: lines } => {
                        if !lines.is_empty() {
                            if ladders.len() > 1 {
                                stderr.push_str(&format!("--- {ladder} ---\n"));
                            }
                            stderr.push_str(&lines.join("\n"));
                            stderr.push('\n');
                        }
                        LadderVerdict {
                            ladder: ladder.clone(),
                            passed: false,
                            reason: Some(reason),
                        }
                    }
                });
            }
            if verdicts.is_empty() {
                return Err(Error::Internal("the version names no ladder".to_owned()));
            }
            Ok((verdicts, module, compile_cpu, stderr.trim_end().to_owned()))
        },
    )
    .await
    .map_err(|e| Error::Internal(e.to_string()))
    .and_then(|verdict| verdict)
    .inspect_err(|_| core.metrics.check_finished("error", started.elapsed()))?;
    let took = started.elapsed();
    let passed: Vec<String> = verdicts.iter().filter(|v| v.passed).map(|v| v.ladder.clone()).collect();
    let refusals = refusal_lines(&verdicts);
    let verdicts_json = serde_json::to_string(&verdicts).map_err(|e| Error::Internal(e.to_string()))?;
    let mut tx = core.db.begin_write().await?;
    // The upload reserved the most the compile could take; it took this.
    sqlx::query("UPDATE compile_spend SET cpu_ms = $2 WHERE version_id = $1")
        .bind(version_id)
        .bind(i64::try_from(compile_cpu.as_millis()).unwrap_or(i64::MAX))
        .execute(&mut *tx)
        .await?;
    let updated = sqlx::query("UPDATE versions SET module = $2, verdicts = $3 WHERE id = $1 AND status = 'checking'")
        .bind(version_id)
        .bind(module)
        .bind(verdicts_json)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    if updated == 0 {
        // Retired (or checked by another process) meanwhile.
        tx.commit().await?;
        return Ok(());
    }
    let status = if passed.is_empty() {
        sqlx::query(
            "UPDATE versions SET status = 'rejected', reason = $2, stderr = $3, checked_ms = $4 \
             WHERE id = $1 AND status = 'checking'",
        )
        .bind(version_id)
        .bind(refusals)
        .bind(stderr)
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
        "rejected"
    } else {
        if passed.len() < verdicts.len() {
            // Accepted on the ladders it passed: it plays those only, and
            // says why not the others.
            sqlx::query("DELETE FROM version_ladders WHERE version_id = $1")
                .bind(version_id)
                .execute(&mut *tx)
                .await?;
            for ladder in &passed {
                sqlx::query("INSERT INTO version_ladders (version_id, ladder) VALUES ($1, $2)")
                    .bind(version_id)
                    .bind(ladder)
                    .execute(&mut *tx)
                    .await?;
            }
            sqlx::query("UPDATE versions SET ladders = $2, reason = $3, stderr = $4 WHERE id = $1")
                .bind(version_id)
                .bind(serde_json::to_string(&passed).map_err(|e| Error::Internal(e.to_string()))?)
                .bind(refusals)
                .bind(stderr)
                .execute(&mut *tx)
                .await?;
        }
        activate(&mut tx, version_id).await?;
        "active"
    };
    tx.commit().await?;
    core.metrics.check_finished(status, took);
    core.events.send(Event::VersionChecked {
        id: version_id,
        status: status.to_string(),
    });
    Ok(())
}

/// One ladder's verdict of a version's check: whether its smoke game on
/// that ladder passed, and why not.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct LadderVerdict {
    /// The ladder, e.g. `othello:std`.
    pub ladder: String,
    /// Whether the version passed its smoke game there (and so plays there).
    pub passed: bool,
    /// Why it was refused there (`null` when it passed).
    pub reason: Option<String>,
}

/// The refused ladders of `verdicts`, one `LADDER: REASON` line each, as
/// a version's `reason` says them (`None` when every ladder passed).
fn refusal_lines(verdicts: &[LadderVerdict]) -> Option<String> {
    let lines: Vec<String> = verdicts
        .iter()
        .filter_map(|v| {
            let reason = v.reason.as_deref().unwrap_or("refused");
            (!v.passed).then(|| format!("{}: {reason}", v.ladder))
        })
        .collect();
    if lines.is_empty() {
        return None;
    }
    let passed: Vec<&str> = verdicts
        .iter()
        .filter(|v| v.passed)
        .map(|v| v.ladder.as_str())
        .collect();
    let mut text = lines.join("\n");
    if !passed.is_empty() {
        text = format!(
            "accepted on {}; refused on the other ladders (untick them or fix the bot):\n{text}",
            passed.join(", ")
        );
    }
    Some(text)
}

/// Wakes the checker at once (after an upload).
pub fn wake_checker() {
    CHECKER_WAKE.notify_one();
}

static CHECKER_WAKE: tokio::sync::Notify = tokio::sync::Notify::const_new();

/// Checks uploaded versions, oldest first, until `stop` turns true. Runs in
/// every `serve` process; checking is idempotent, so two servers on one
/// database at worst check a version twice.
pub async fn run_checker(core: Core, mut stop: watch::Receiver<bool>) {
    loop {
        let pending: Result<Vec<i64>, sqlx::Error> =
            sqlx::query_scalar("SELECT id FROM versions WHERE status = 'checking' ORDER BY id LIMIT 16")
                .fetch_all(&core.db.pool)
                .await;
        match pending {
            Ok(ids) => {
                for id in ids {
                    if let Err(error) = check_one(&core, id).await {
                        tracing::warn!(version = id, error = %error.detail(), "checking a version failed; will retry");
                    }
                }
            }
            Err(error) => tracing::warn!(%error, "cannot list versions to check"),
        }
        tokio::select! {
            _ = stop.wait_for(|stop| *stop) => return,
            _ = CHECKER_WAKE.notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(2)) => {}
        }
    }
}
