//! Content-addressed blob storage: zstd-compressed modules, each stored
//! under the SHA-256 of its uncompressed bytes, and, with object storage,
//! zstd-compressed replays (see [`crate::replays`]), each stored under the
//! SHA-256 of its compressed bytes, in a local folder (one machine) or
//! in S3-compatible object storage (a front end and workers on many
//! machines, all seeing the same blobs).
//!
//! Writing the same bytes twice stores them once; readers never see half a
//! blob (the folder writes a temporary file and renames it into place; an
//! object store makes a whole object visible at once).
//!
//! The methods block: from async code call them through [`Blobs::run`].
//! Object storage requests run on a small runtime owned by the store, so
//! blocking on them is safe from any thread.

use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt, PutPayload};
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// zstd level of stored replays. Replays are small JSON; measured on an
/// Othello replay (33 KB), level 1 gives 5.85 KB, level 3 5.94 KB and level
/// 9 6.0 KB, level 1 compressing about a fifth faster than level 3, while a
/// fresh level-9 context per replay (zeroing its tables) cost about as much
/// CPU as the ladder's database work for the match.
const ZSTD_LEVEL: i32 = 1;

/// zstd level of stored modules: stored once, read by every worker that
/// has not compiled them yet. Level 3 takes an 18.6 MB Python component to
/// 6.0 MB in well under a second.
const MODULE_ZSTD_LEVEL: i32 = 3;

/// The first bytes of a zstd frame (a module starts with `\0asm`).
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];

/// Compresses `bytes` with a context kept per thread: contexts are costly to
/// make, cheap to reuse. The same bytes always give the same output,
/// whatever the thread compressed before.
pub(crate) fn compress(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    thread_local! {
        static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    }
    COMPRESSOR.with(|cell| {
        let mut slot = cell.borrow_mut();
        let compressor = match slot.as_mut() {
            Some(compressor) => compressor,
            None => slot.insert(zstd::bulk::Compressor::new(ZSTD_LEVEL)?),
        };
        compressor.compress(bytes)
    })
}

/// A blob store: a folder of blobs named by their SHA-256 (`ab/cdef…`), or
/// the same names under a prefix of an object storage bucket.
#[derive(Clone, Debug)]
pub struct Blobs {
    backend: Backend,
}

#[derive(Clone, Debug)]
enum Backend {
    Folder(PathBuf),
    Objects(Arc<Objects>),
}

/// An object store, the prefix the blobs live under, and the runtime its
/// requests run on.
#[derive(Debug)]
struct Objects {
    store: Arc<dyn ObjectStore>,
    prefix: String,
    runtime: BlobRuntime,
}

/// A runtime that may be dropped anywhere (even inside another runtime).
#[derive(Debug)]
struct BlobRuntime(Option<tokio::runtime::Runtime>);

impl Drop for BlobRuntime {
    fn drop(&mut self) {
        if let Some(runtime) = self.0.take() {
            runtime.shutdown_background();
        }
    }
}

/// Why a blob store cannot be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The local folder.
    #[error("cannot create the blob folder {path}: {source}")]
    Folder {
        /// The folder.
        path: PathBuf,
        /// What the system said.
        source: std::io::Error,
    },
    /// The location is neither a path nor an `s3://` URL.
    #[error("blob location {0:?} is not understood: give a folder or s3://BUCKET[/PREFIX]")]
    Location(String),
    /// The object store could not be configured.
    #[error("cannot configure the object store {url}: {reason}")]
    ObjectStore {
        /// The location given.
        url: String,
        /// What went wrong.
        reason: String,
    },
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// `ab/cdef…` for a SHA-256 key; `None` if `key` is not 64 lowercase hex
/// digits (so no key can name anything outside the store).
fn relative_name(key: &str) -> Option<(&str, &str)> {
    if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
        return None;
    }
    Some((&key[..2], &key[2..]))
}

impl Blobs {
    /// A store in the folder `root` (created when missing).
    pub fn open(root: &Path) -> std::io::Result<Blobs> {
        std::fs::create_dir_all(root)?;
        Ok(Blobs {
            backend: Backend::Folder(root.to_path_buf()),
        })
    }

    /// The store at `location`: `s3://BUCKET[/PREFIX]` (credentials, region
    /// and endpoint from the usual `AWS_*` variables, e.g. `AWS_ENDPOINT_URL`
    /// and `AWS_ALLOW_HTTP=true` for a local S3-compatible server), or a
    /// folder path. Checks nothing remote: a wrong bucket shows at the first
    /// read or write.
    pub fn at(location: &str) -> Result<Blobs, OpenError> {
        if !location.contains("://") {
            let path = PathBuf::from(location);
            return Blobs::open(&path).map_err(|source| OpenError::Folder { path, source });
        }
        let url = url::Url::parse(location).map_err(|_| OpenError::Location(location.to_owned()))?;
        if url.scheme() != "s3" {
            return Err(OpenError::Location(location.to_owned()));
        }
        let failed = |reason: String| OpenError::ObjectStore {
            url: location.to_owned(),
            reason,
        };
        let bucket = url.host_str().ok_or_else(|| failed("no bucket name".into()))?;
        crate::install_tls_provider();
        let store = object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .map_err(|e| failed(e.to_string()))?;
        Blobs::in_object_store(Arc::new(store), url.path()).map_err(|e| failed(e.to_string()))
    }

    /// A store in `store`, under `prefix` (may be empty).
    pub fn in_object_store(store: Arc<dyn ObjectStore>, prefix: &str) -> std::io::Result<Blobs> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("arbiter-blobs")
            .enable_all()
            .build()?;
        let prefix = prefix.trim_matches('/');
        Ok(Blobs {
            backend: Backend::Objects(Arc::new(Objects {
                store,
                prefix: if prefix.is_empty() {
                    String::new()
                } else {
                    format!("{prefix}/")
                },
                runtime: BlobRuntime(Some(runtime)),
            })),
        })
    }

    /// Runs `f` on this store from async code, on tokio's blocking pool
    /// (the store's methods block).
    pub async fn run<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Blobs) -> std::io::Result<T> + Send + 'static,
    ) -> std::io::Result<T> {
        let blobs = self.clone();
        tokio::task::spawn_blocking(move || f(&blobs))
            .await
            .map_err(std::io::Error::other)?
    }

    /// Whether the blobs are in a local folder (one machine) rather than in
    /// object storage.
    pub fn is_folder(&self) -> bool {
        matches!(self.backend, Backend::Folder(_))
    }

    /// Where blobs are kept, in words (for logs).
    pub fn describe(&self) -> String {
        match &self.backend {
            Backend::Folder(root) => format!("folder {}", root.display()),
            Backend::Objects(o) => format!("object store {} under {:?}", o.store, o.prefix),
        }
    }

    /// Stores `bytes` and returns their key (SHA-256 hex).
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let key = sha256_hex(bytes);
        self.put_as(&key, bytes)?;
        Ok(key)
    }

    /// Stores `bytes` under `key`, a SHA-256 hex digest that names them
    /// (of these bytes or of what they encode).
    fn put_as(&self, key: &str, bytes: &[u8]) -> std::io::Result<()> {
        let Some((dir, file)) = relative_name(key) else {
            return Err(std::io::Error::other("bad blob key"));
        };
        match &self.backend {
            Backend::Folder(root) => {
                let path = root.join(dir).join(file);
                if path.exists() {
                    return Ok(());
                }
                let dir = root.join(dir);
                std::fs::create_dir_all(&dir)?;
                let mut temp = tempfile::NamedTempFile::new_in(&dir)?;
                std::io::Write::write_all(&mut temp, bytes)?;
                temp.persist(&path).map_err(|e| e.error)?;
            }
            Backend::Objects(o) => {
                let path = o.path(dir, file);
                let payload = PutPayload::from(bytes.to_vec());
                let store = Arc::clone(&o.store);
                o.block_on(async move { store.put(&path, payload).await.map(|_| ()) })?;
            }
        }
        Ok(())
    }

    /// The blob stored under `key`; `None` if there is none or the key is
    /// not a SHA-256.
    pub fn get(&self, key: &str) -> std::io::Result<Option<Vec<u8>>> {
        let Some((dir, file)) = relative_name(key) else {
            return Ok(None);
        };
        let result = match &self.backend {
            Backend::Folder(root) => std::fs::read(root.join(dir).join(file)),
            Backend::Objects(o) => {
                let path = o.path(dir, file);
                let store = Arc::clone(&o.store);
                o.block_on(async move {
                    let found = store.get(&path).await?;
                    found.bytes().await.map(|bytes| bytes.to_vec())
                })
            }
        };
        match result {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Stores a bot's module zstd-compressed (a Python component's 18.6 MB
    /// take 5.2 MB) under the SHA-256 of its *uncompressed* bytes, which it
    /// returns: a version names its module by that digest.
    pub fn put_module(&self, wasm: &[u8]) -> std::io::Result<String> {
        let key = sha256_hex(wasm);
        let compressed = zstd::bulk::compress(wasm, MODULE_ZSTD_LEVEL)?;
        self.put_as(&key, &compressed)?;
        Ok(key)
    }

    /// The module stored under `key` by [`Blobs::put_module`] (or, from
    /// before modules were compressed, by [`Blobs::put`]), decompressed,
    /// at most `max_bytes` long.
    pub fn get_module(&self, key: &str, max_bytes: usize) -> std::io::Result<Option<Vec<u8>>> {
        match self.get(key)? {
            Some(stored) if stored.starts_with(&ZSTD_MAGIC) => Ok(Some(zstd::bulk::decompress(&stored, max_bytes)?)),
            other => Ok(other),
        }
    }

    /// Compresses `bytes` with zstd and stores them; returns the key of the
    /// compressed blob (the same bytes always give the same key).
    pub fn put_zstd(&self, bytes: &[u8]) -> std::io::Result<String> {
        self.put(&compress(bytes)?)
    }

    /// Reads and decompresses a blob stored with [`Blobs::put_zstd`].
    pub fn get_zstd(&self, key: &str) -> std::io::Result<Option<Vec<u8>>> {
        match self.get(key)? {
            Some(compressed) => Ok(Some(zstd::decode_all(compressed.as_slice())?)),
            None => Ok(None),
        }
    }
}

impl Objects {
    /// The object named `dir/file` under the prefix.
    fn path(&self, dir: &str, file: &str) -> ObjectPath {
        ObjectPath::from(format!("{}{dir}/{file}", self.prefix))
    }

    /// Runs `request` on the store's runtime and waits for it, from any
    /// thread. A missing object is an error of kind `NotFound`.
    fn block_on<T: Send + 'static>(
        &self,
        request: impl Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> std::io::Result<T> {
        let Some(runtime) = &self.runtime.0 else {
            return Err(std::io::Error::other("the blob store is shut down"));
        };
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime.spawn(async move {
            let _ = tx.send(request.await);
        });
        match rx.recv() {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(object_store::Error::NotFound { .. })) => Err(std::io::ErrorKind::NotFound.into()),
            Ok(Err(e)) => Err(std::io::Error::other(e.to_string())),
            Err(_) => Err(std::io::Error::other("the blob request was dropped")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A retried match stores its replay under the same key: compressing
    /// with a reused context gives the bytes a fresh one gives, whatever
    /// was compressed before.
    #[test]
    fn compression_does_not_depend_on_what_came_before() {
        let replay: Vec<u8> = (0..40_000u32)
            .map(|i| b"{\"turns\":[1,2,3]}"[(i % 17) as usize])
            .collect();
        let other: Vec<u8> = (0..100_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        let fresh = zstd::bulk::compress(&replay, ZSTD_LEVEL).expect("zstd");
        assert_eq!(compress(&replay).expect("first"), fresh);
        compress(&other).expect("another");
        assert_eq!(compress(&replay).expect("again"), fresh);
        assert_eq!(zstd::decode_all(fresh.as_slice()).expect("decodes"), replay);
    }

    fn exercise(blobs: &Blobs) {
        // Modules: compressed, named by their own digest, read back whole;
        // one stored raw (before modules were compressed) reads the same.
        let wasm: Vec<u8> = b"\0asm\x01\0\0\0".iter().copied().cycle().take(100_000).collect();
        let key = blobs.put_module(&wasm).expect("put_module");
        assert_eq!(key, sha256_hex(&wasm));
        let stored = blobs.get(&key).expect("get").expect("stored");
        assert!(stored.len() < wasm.len() / 10, "compressed: {} bytes", stored.len());
        assert_eq!(
            blobs.get_module(&key, wasm.len()).expect("read").as_deref(),
            Some(&wasm[..])
        );
        assert!(blobs.get_module(&key, wasm.len() - 1).is_err(), "the size bound holds");
        let raw = blobs.put(b"\0asm\x01\0\0\0").expect("put");
        assert_eq!(
            blobs.get_module(&raw, 100).expect("read").as_deref(),
            Some(&b"\0asm\x01\0\0\0"[..])
        );

        let key = blobs.put(b"hello").expect("put");
        assert_eq!(key, sha256_hex(b"hello"));
        assert_eq!(blobs.put(b"hello").expect("again"), key);
        assert_eq!(blobs.get(&key).expect("get").as_deref(), Some(&b"hello"[..]));
        assert_eq!(blobs.get(&sha256_hex(b"never stored")).expect("missing"), None);
        assert_eq!(blobs.get("../../etc/passwd").expect("refused"), None);
        assert_eq!(blobs.get(&"A".repeat(64)).expect("refused"), None);
        let z = blobs.put_zstd(&[7u8; 10_000]).expect("zstd");
        assert_eq!(blobs.get_zstd(&z).expect("read").map(|b| b.len()), Some(10_000));
    }

    #[test]
    fn a_folder_stores_once_and_refuses_path_tricks() {
        let dir = tempfile::tempdir().expect("tempdir");
        exercise(&Blobs::open(dir.path()).expect("open"));
        let at = Blobs::at(&dir.path().join("via-at").display().to_string()).expect("a path");
        exercise(&at);
    }

    #[test]
    fn an_object_store_keeps_blobs_under_its_prefix() {
        let store = Arc::new(object_store::memory::InMemory::new());
        let blobs = Blobs::in_object_store(store.clone(), "/arbiter/blobs/").expect("open");
        exercise(&blobs);
        let key = sha256_hex(b"hello");
        let path = ObjectPath::from(format!("arbiter/blobs/{}/{}", &key[..2], &key[2..]));
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        let stored = runtime.block_on(async { store.get(&path).await.expect("there").bytes().await.expect("bytes") });
        assert_eq!(&stored[..], b"hello");
        // Dropping the store inside a runtime must not panic.
        runtime.block_on(async move { drop(blobs) });
    }

    #[test]
    fn locations_are_a_folder_or_s3() {
        assert!(matches!(Blobs::at("ftp://x/y"), Err(OpenError::Location(_))));
        assert!(matches!(
            Blobs::at("s3://"),
            Err(OpenError::Location(_) | OpenError::ObjectStore { .. })
        ));
        let s3 = Blobs::at("s3://arbiter-test/some/prefix").expect("configured without contacting it");
        assert!(s3.describe().contains("\"some/prefix/\""), "{}", s3.describe());
    }
}
