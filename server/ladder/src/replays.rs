//! Where finished matches' replays are kept, and how they are read back.
//!
//! A stored replay is the replay's JSON compressed with zstd, named by the
//! SHA-256 of the compressed bytes (`matches.replay_sha256`), as a blob is.
//! Where it lives depends on the blob store:
//!
//! - **A local folder** (one machine): in the `replays` table, written by
//!   the worker in the transaction that records the match, so the result,
//!   the replay and the rating change commit together (a transaction that
//!   rolls back leaves no replay behind). One file per match cost the
//!   ladder more CPU than the rest of its storage work (creating an inode
//!   per replay).
//! - **Object storage** (many machines): a blob in the object store, written
//!   before the transaction; content-addressed, so a retried match writes
//!   nothing new.
//!
//! Readers look in the table first, then in the blob store (replays of
//! matches recorded before the table existed are files in the folder).
//! Either way the bytes read back decompress to exactly the JSON the
//! referee produced.
//!
//! The same table keeps what is derived from a replay and costly to derive
//! again (a skirmish game's frames, a skirmish match's training data): each
//! under [`derived_key`], a SHA-256 of the replay's key and the artifact's
//! name, which no replay's key can equal. Such rows are written when first
//! asked for ([`store_derived`]), in every configuration (object storage
//! included: they are the database's, like the replays of a local folder),
//! and are never referred to by a match.

use crate::blobs::{Blobs, compress, sha256_hex};
use crate::db::Db;
use crate::error::Error;

/// A compressed replay, ready to be recorded with its match.
#[derive(Clone, Debug)]
pub struct StoredReplay {
    /// SHA-256 hex of the compressed bytes: `matches.replay_sha256`.
    pub sha256: String,
    /// The compressed bytes, when they go into the `replays` table with the
    /// match; `None` when they are already in the object store.
    pub row: Option<Vec<u8>>,
}

/// Compresses a replay's JSON and, with object storage, stores it there
/// (blocking: call it from a blocking thread). With a local folder nothing
/// is written yet: the returned bytes go into the `replays` table when the
/// match is recorded ([`insert`]).
pub fn prepare(blobs: &Blobs, json: &[u8]) -> std::io::Result<StoredReplay> {
    let compressed = compress(json)?;
    if blobs.is_folder() {
        Ok(StoredReplay {
            sha256: sha256_hex(&compressed),
            row: Some(compressed),
        })
    } else {
        Ok(StoredReplay {
            sha256: blobs.put(&compressed)?,
            row: None,
        })
    }
}

/// Writes the replay's row, if it has one, with `executor` (the transaction
/// that records its match). The same bytes twice are stored once.
pub(crate) async fn insert<'e>(
    executor: impl sqlx::Executor<'e, Database = sqlx::Any>,
    replay: &StoredReplay,
) -> Result<(), sqlx::Error> {
    let Some(bytes) = &replay.row else {
        return Ok(());
    };
    sqlx::query("INSERT INTO replays (sha256, zstd) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING")
        .bind(&replay.sha256)
        .bind(bytes.as_slice())
        .execute(executor)
        .await?;
    Ok(())
}

/// The replay JSON stored under `key` (a `matches.replay_sha256`): from the
/// `replays` table, else from the blob store; `None` if neither has it.
/// A database that cannot be reached, a blob store that fails, or stored
/// bytes that are not zstd are [`Error::Unavailable`]; any other database
/// failure is [`Error::Internal`].
pub async fn read(db: &Db, blobs: &Blobs, key: &str) -> Result<Option<Vec<u8>>, Error> {
    let row: Option<Vec<u8>> = sqlx::query_scalar("SELECT zstd FROM replays WHERE sha256 = $1")
        .bind(key)
        .fetch_optional(&db.pool)
        .await?;
    match row {
        Some(compressed) => Ok(Some(zstd::decode_all(compressed.as_slice())?)),
        None => {
            let key = key.to_owned();
            Ok(blobs.run(move |blobs| blobs.get_zstd(&key)).await?)
        }
    }
}

/// The key of the artifact `name` (e.g. `frames-1.json`) derived from the
/// replay stored under `replay_key`: the same two always give the same key,
/// and it is never the key of a replay (it hashes words no zstd frame
/// starts with).
pub fn derived_key(replay_key: &str, name: &str) -> String {
    sha256_hex(format!("arbiter derived artifact\n{name}\n{replay_key}").as_bytes())
}

/// Stores `content`, compressed with zstd, under `key` (a [`derived_key`]).
/// The same key twice is stored once: the first writer's bytes stay. A
/// database that cannot be reached is [`Error::Unavailable`]; any other
/// database failure is [`Error::Internal`].
pub async fn store_derived(db: &Db, key: &str, content: Vec<u8>) -> Result<(), Error> {
    let compressed = tokio::task::spawn_blocking(move || compress(&content))
        .await
        .map_err(|e| Error::Internal(format!("compressing a derived artifact: {e}")))??;
    sqlx::query("INSERT INTO replays (sha256, zstd) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING")
        .bind(key)
        .bind(compressed)
        .execute(&db.pool)
        .await?;
    Ok(())
}

/// The content stored under `key` by [`store_derived`], decompressed;
/// `None` if there is none. Errors as [`read`]'s.
pub async fn read_derived(db: &Db, key: &str) -> Result<Option<Vec<u8>>, Error> {
    let row: Option<Vec<u8>> = sqlx::query_scalar("SELECT zstd FROM replays WHERE sha256 = $1")
        .bind(key)
        .fetch_optional(&db.pool)
        .await?;
    match row {
        Some(compressed) => Ok(Some(
            tokio::task::spawn_blocking(move || zstd::decode_all(compressed.as_slice()))
                .await
                .map_err(|e| Error::Internal(format!("decompressing a derived artifact: {e}")))??,
        )),
        None => Ok(None),
    }
}

/// The size in bytes of the content stored under `key` by
/// [`store_derived`], read from the zstd frame header alone (the first
/// bytes of the row); `None` if there is none. Errors as [`read`]'s.
pub async fn derived_size(db: &Db, key: &str) -> Result<Option<u64>, Error> {
    // 18 bytes: the longest a zstd frame header is (the content size is
    // in it). `substr` of a blob (SQLite) or a bytea (PostgreSQL) counts
    // bytes.
    let header: Option<Vec<u8>> = sqlx::query_scalar("SELECT substr(zstd, 1, 18) FROM replays WHERE sha256 = $1")
        .bind(key)
        .fetch_optional(&db.pool)
        .await?;
    match header {
        None => Ok(None),
        Some(header) => match zstd::zstd_safe::get_frame_content_size(&header) {
            Ok(Some(size)) => Ok(Some(size)),
            _ => Err(Error::Internal(format!(
                "the derived artifact {key} has no content size"
            ))),
        },
    }
}
