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
