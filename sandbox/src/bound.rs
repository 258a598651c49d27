//! The size bounds of the two on-disk caches: compiled modules (the
//! `*.cwasm` files of the cache directory) and compiled functions (the files
//! under its `functions-*` folders), each trimmed by least-recent use.
//!
//! - "Use" is a write or a hit. A hit sets the entry's modification time
//!   ([`touch`]): access times are unreliable (`noatime`, `relatime`).
//! - Entries are counted in whole 4 KiB blocks, about what they take on a
//!   disk (a compiled function is often under 1 KiB).
//! - Each process keeps its own count of what a cache holds: a scan of the
//!   folder, when the sandbox is made and at each trim, plus what the
//!   process wrote since. When a write takes the count past the bound, the
//!   folder is scanned again (which also sees what other processes wrote
//!   and removed) and, if it really is past the bound, its least recently
//!   used entries are removed until it holds at most 90% of the bound, so
//!   that a full cache is not trimmed at every write. Several processes
//!   sharing one folder each count only their own writes between scans, so
//!   together they may pass the bound by up to a tenth of it per process
//!   before one of them trims.
//! - Removing an entry is safe whoever is using it. A loaded module maps
//!   its artifact: on Unix, removing the file leaves the mapping (and the
//!   file's data) in place until the module is dropped; where a mapped file
//!   cannot be removed, the removal fails and the entry stays. A process
//!   that finds an artifact gone, or reads a half-removed one, compiles the
//!   module again ([`Sandbox::load`](crate::Sandbox::load)); a compiler that
//!   finds a function gone compiles the function. Entries are written to a
//!   temporary file (named with a leading dot, never counted, and removed
//!   only when a killed process left it for an hour) and renamed into place.
//! - Only one process trims a folder at a time (a lock file beside the
//!   entries); another that wants to meanwhile leaves it to that one.

use std::fs;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

/// Entries are counted in blocks of this many bytes.
const BLOCK: u64 = 4096;
/// What a trim leaves, in percent of the bound.
const TRIM_TO_PERCENT: u128 = 90;
/// A temporary file (leading dot) older than this was left by a process
/// that died while writing it: a compile is stopped after at most six
/// minutes of real time (three times the 120 s CPU limit of a component).
const STALE_TEMPORARY: Duration = Duration::from_secs(3600);
/// The extension of compiled modules.
const ARTIFACT_EXTENSION: &str = "cwasm";
/// The prefix of folders of compiled functions (one per engine).
pub(crate) const FUNCTIONS_PREFIX: &str = "functions-";
/// The prefix of an artifact being written by the compiler child.
pub(crate) const COMPILING_PREFIX: &str = ".compiling-";
/// The prefix of a compiled function being written (`tempfile`'s own).
const WRITING_PREFIX: &str = ".tmp";

/// Bytes a file of `len` bytes is counted as: whole blocks.
pub(crate) fn disk_bytes(len: u64) -> u64 {
    len.div_ceil(BLOCK).saturating_mul(BLOCK)
}

/// Marks the entry at `path` as used now (its modification time). An entry
/// that is gone, or whose time cannot be set, is left as it is: this only
/// orders evictions.
pub(crate) fn touch(path: &Path) {
    if let Ok(file) = fs::File::open(path) {
        let _ = file.set_modified(SystemTime::now());
    }
}

/// Which of the two caches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Compiled modules and components, `*.cwasm` in the cache directory.
    Modules,
    /// Compiled functions, every file under `functions-*/`.
    Functions,
}

/// One cache folder with its bound.
#[derive(Debug)]
pub(crate) struct DiskCache {
    kind: Kind,
    root: PathBuf,
    limit: u64,
    /// Bytes held as this process knows them (its last scan, plus what it
    /// wrote since); `None` before the first scan. Held during a scan, so
    /// that a write is counted either by the scan or after it, never lost.
    held: Mutex<Option<u64>>,
    /// A copy of `held`, for readers that must not wait for a scan.
    shown: AtomicU64,
    /// Entries this process removed to stay within the bound.
    evictions: AtomicU64,
}

/// One entry found by a scan.
struct Entry {
    used: SystemTime,
    bytes: u64,
    path: PathBuf,
}

impl DiskCache {
    /// The cache of `kind` in the cache directory `root`, bounded to `limit`
    /// bytes; nothing is read until the first scan.
    pub(crate) fn new(kind: Kind, root: PathBuf, limit: u64) -> DiskCache {
        DiskCache {
            kind,
            root,
            limit,
            held: Mutex::new(None),
            shown: AtomicU64::new(0),
            evictions: AtomicU64::new(0),
        }
    }

    /// The bound, in bytes.
    pub(crate) fn limit(&self) -> u64 {
        self.limit
    }

    /// Bytes held, as this process knows them (0 before the first scan).
    pub(crate) fn bytes(&self) -> u64 {
        self.shown.load(Ordering::Relaxed)
    }

    /// Entries this process removed.
    pub(crate) fn evictions(&self) -> u64 {
        self.evictions.load(Ordering::Relaxed)
    }

    /// Counts `bytes` this process just wrote into the cache, and trims it
    /// when that takes it past its bound.
    pub(crate) fn wrote(&self, bytes: u64) {
        let mut held = lock(&self.held);
        match held.as_mut() {
            Some(total) => {
                *total = total.saturating_add(bytes);
                self.shown.store(*total, Ordering::Relaxed);
                if *total > self.limit {
                    self.scan_and_trim(&mut held);
                }
            }
            // The first scan sees what was just written.
            None => self.scan_and_trim(&mut held),
        }
    }

    /// Scans the folder unless it was scanned before (trimming it if it is
    /// past its bound, e.g. after the bound was lowered).
    pub(crate) fn first_scan(&self) {
        let mut held = lock(&self.held);
        if held.is_none() {
            self.scan_and_trim(&mut held);
        }
    }

    /// Reads what the folder holds and, past the bound, removes the least
    /// recently used entries until it holds at most [`TRIM_TO_PERCENT`] of
    /// it.
    fn scan_and_trim(&self, held: &mut Option<u64>) {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.bytes).sum();
        if total > self.limit
            && let Some(_lock) = self.trim_lock()
        {
            let target = u64::try_from(u128::from(self.limit) * TRIM_TO_PERCENT / 100).unwrap_or(u64::MAX);
            entries.sort_by(|a, b| a.used.cmp(&b.used).then_with(|| a.path.cmp(&b.path)));
            for entry in entries {
                if total <= target {
                    break;
                }
                match fs::remove_file(&entry.path) {
                    Ok(()) => {
                        total -= entry.bytes;
                        self.evictions.fetch_add(1, Ordering::Relaxed);
                    }
                    // Another process removed it (or replaced it by a
                    // temporary file's rename, and the count is a little
                    // low until the next scan).
                    Err(e) if e.kind() == ErrorKind::NotFound => total -= entry.bytes,
                    // In use where that forbids removal: it stays.
                    Err(_) => {}
                }
            }
        }
        *held = Some(total);
        self.shown.store(total, Ordering::Relaxed);
    }

    /// The lock that lets one process at a time trim this folder, if no
    /// other process holds it now (and it could be made).
    fn trim_lock(&self) -> Option<fs::File> {
        let name = match self.kind {
            Kind::Modules => ".trim-modules.lock",
            Kind::Functions => ".trim-functions.lock",
        };
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.root.join(name))
            .ok()?;
        file.try_lock().ok()?;
        Some(file)
    }

    /// Every entry of the cache, removing temporary files left by dead
    /// processes on the way. Unreadable folders and files are skipped.
    fn entries(&self) -> Vec<Entry> {
        let mut found = Vec::new();
        let Ok(top) = fs::read_dir(&self.root) else {
            return found;
        };
        for item in top.flatten() {
            let name = item.file_name();
            let name = name.to_string_lossy();
            let Ok(kind) = item.file_type() else {
                continue;
            };
            match self.kind {
                Kind::Modules if kind.is_file() => {
                    if name.starts_with(COMPILING_PREFIX) {
                        remove_if_stale(&item.path());
                    } else if Path::new(name.as_ref())
                        .extension()
                        .is_some_and(|e| e == ARTIFACT_EXTENSION)
                    {
                        found.extend(entry(&item.path()));
                    }
                }
                Kind::Functions if kind.is_dir() && name.starts_with(FUNCTIONS_PREFIX) => {
                    functions_in(&item.path(), &mut found);
                }
                _ => {}
            }
        }
        found
    }
}

/// The compiled functions of one `functions-*` folder: files in its
/// subfolders (named by the first two hex digits of their digest).
fn functions_in(dir: &Path, found: &mut Vec<Entry>) {
    let Ok(subdirs) = fs::read_dir(dir) else {
        return;
    };
    for subdir in subdirs.flatten() {
        if !subdir.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let Ok(files) = fs::read_dir(subdir.path()) else {
            continue;
        };
        for file in files.flatten() {
            if !file.file_type().is_ok_and(|t| t.is_file()) {
                continue;
            }
            let name = file.file_name();
            let name = name.to_string_lossy();
            if name.starts_with(WRITING_PREFIX) {
                remove_if_stale(&file.path());
            } else if name.starts_with('.') {
                continue;
            } else {
                found.extend(entry(&file.path()));
            }
        }
    }
}

/// The entry at `path`, unless it is gone.
fn entry(path: &Path) -> Option<Entry> {
    let meta = fs::metadata(path).ok()?;
    Some(Entry {
        used: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
        bytes: disk_bytes(meta.len()),
        path: path.to_path_buf(),
    })
}

/// Removes the temporary file at `path` if no process has written it for
/// [`STALE_TEMPORARY`].
fn remove_if_stale(path: &Path) {
    let stale = fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.elapsed().ok())
        .is_some_and(|age| age > STALE_TEMPORARY);
    if stale {
        let _ = fs::remove_file(path);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
