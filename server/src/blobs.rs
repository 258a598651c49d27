//! Content-addressed blob storage: modules, compiled artifacts' sources and
//! zstd-compressed replays, each stored under the SHA-256 of its bytes.
//!
//! Writing the same bytes twice stores them once; a blob is written to a
//! temporary file and renamed into place, so readers never see half a blob.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// A folder of blobs named by their SHA-256 (`ab/cdef…`).
#[derive(Clone, Debug)]
pub struct Blobs {
    root: PathBuf,
}

/// Lowercase hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

impl Blobs {
    /// A store rooted at `root` (created when missing).
    pub fn open(root: &Path) -> std::io::Result<Blobs> {
        std::fs::create_dir_all(root)?;
        Ok(Blobs {
            root: root.to_path_buf(),
        })
    }

    fn path(&self, key: &str) -> Option<PathBuf> {
        if key.len() != 64 || !key.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()) {
            return None;
        }
        Some(self.root.join(&key[..2]).join(&key[2..]))
    }

    /// Stores `bytes` and returns their key (SHA-256 hex).
    pub fn put(&self, bytes: &[u8]) -> std::io::Result<String> {
        let key = sha256_hex(bytes);
        let Some(path) = self.path(&key) else {
            return Err(std::io::Error::other("bad blob key"));
        };
        if path.exists() {
            return Ok(key);
        }
        let dir = path.parent().unwrap_or(&self.root);
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        std::io::Write::write_all(&mut temp, bytes)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(key)
    }

    /// The blob stored under `key`; `None` if there is none or the key is
    /// not a SHA-256.
    pub fn get(&self, key: &str) -> std::io::Result<Option<Vec<u8>>> {
        let Some(path) = self.path(key) else { return Ok(None) };
        match std::fs::read(path) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Compresses `bytes` with zstd and stores them; returns the key of the
    /// compressed blob.
    pub fn put_zstd(&self, bytes: &[u8]) -> std::io::Result<String> {
        self.put(&zstd::encode_all(bytes, 9)?)
    }

    /// Reads and decompresses a blob stored with [`Blobs::put_zstd`].
    pub fn get_zstd(&self, key: &str) -> std::io::Result<Option<Vec<u8>>> {
        match self.get(key)? {
            Some(compressed) => Ok(Some(zstd::decode_all(compressed.as_slice())?)),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stores_once_and_refuses_path_tricks() {
        let dir = tempfile::tempdir().expect("tempdir");
        let blobs = Blobs::open(dir.path()).expect("open");
        let key = blobs.put(b"hello").expect("put");
        assert_eq!(blobs.put(b"hello").expect("again"), key);
        assert_eq!(blobs.get(&key).expect("get").as_deref(), Some(&b"hello"[..]));
        assert_eq!(blobs.get("../../etc/passwd").expect("refused"), None);
        assert_eq!(blobs.get(&"A".repeat(64)).expect("refused"), None);
        let z = blobs.put_zstd(&[7u8; 10_000]).expect("zstd");
        assert_eq!(blobs.get_zstd(&z).expect("read").map(|b| b.len()), Some(10_000));
    }
}
