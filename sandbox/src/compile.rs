//! Compiling untrusted modules in a child process with time and memory
//! limits, and the on-disk artifact cache.
//!
//! Child protocol: the module arrives on stdin; the environment carries
//! [`ENV_OUTPUT`] (where to write the artifact), [`ENV_SETTINGS`] (codegen
//! settings, so the child builds the parent's engine) and [`ENV_MEMORY`] (the
//! address-space limit the child sets on itself before reading anything) and
//! [`ENV_CPU`] (a CPU-time limit, in case the parent dies before killing it)
//! and [`ENV_INCREMENTAL`] (the folder of compiled functions, optional).
//! Exit code 0 means the artifact is written; [`EXIT_REJECTED`] means the
//! compiler refused the module (the reason is on stderr).

use std::hash::Hasher;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::config::{CodegenSettings, CompilerCommand, engine_config};
use crate::error::ModuleError;

const ENV_OUTPUT: &str = "ARBITER_COMPILE_OUTPUT";
const ENV_SETTINGS: &str = "ARBITER_COMPILE_SETTINGS";
const ENV_MEMORY: &str = "ARBITER_COMPILE_MEMORY";
const ENV_CPU: &str = "ARBITER_COMPILE_CPU_SECS";
const ENV_INCREMENTAL: &str = "ARBITER_COMPILE_INCREMENTAL_DIR";
const EXIT_REJECTED: u8 = 2;
/// Keys of the child's one line on stdout: functions found in the function
/// cache, functions compiled, and bytes of compiled functions it stored
/// (counted as [`crate::bound::disk_bytes`]).
const REUSED: &str = "functions_reused";
const COMPILED: &str = "functions_compiled";
const STORED: &str = "function_bytes_stored";
/// Key of the child's CPU time (all its threads, milliseconds) on the same line.
const CPU_MS: &str = "cpu_ms";
const EXIT_HOST: u8 = 3;
const EXIT_OOM_MARKER: &str = "memory allocation of";
/// Largest input the child accepts (the parent checks the configured limit).
const CHILD_MAX_INPUT: u64 = 256 * 1024 * 1024;
/// Bytes kept of each of the child's stdout and stderr.
const CHILD_OUTPUT_KEEP: u64 = 16 * 1024;

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    let digest = Sha256::digest(bytes);
    let mut s = String::with_capacity(64);
    for b in digest.iter() {
        s.push_str(&format!("{b:02x}"));
    }
    s
}

/// A [`Hasher`] feeding SHA-256, for a stable digest of wasmtime's
/// `precompile_compatibility_hash` (std's `DefaultHasher` may change between
/// Rust releases).
struct ShaHasher(Sha256);

impl Hasher for ShaHasher {
    fn finish(&self) -> u64 {
        0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

/// First 16 hex digits of a stable digest of the engine's compatibility hash.
pub(crate) fn engine_compat_hex(engine: &wasmtime::Engine) -> String {
    let mut h = ShaHasher(Sha256::new());
    std::hash::Hash::hash(&engine.precompile_compatibility_hash(), &mut h);
    let digest = h.0.finalize();
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Entry point of the compiler child process.
///
/// Call it from `main` of a dedicated binary (`arbiter-compile`) or of a
/// hidden subcommand, named by [`SandboxConfig::compiler`]. It sets its own
/// address-space limit, reads a module on stdin, compiles it with the
/// sandbox's engine settings and writes the artifact to the path the parent
/// gave. It is not meant to be run by hand.
///
/// [`SandboxConfig::compiler`]: crate::SandboxConfig::compiler
pub fn compiler_child_main() -> ExitCode {
    match child() {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, msg)) => {
            eprintln!("{msg}");
            ExitCode::from(code)
        }
    }
}

fn child() -> Result<(), (u8, String)> {
    let host = |m: String| (EXIT_HOST, m);
    let var = |name: &str| std::env::var(name).map_err(|_| host(format!("{name} is not set")));
    let output = PathBuf::from(var(ENV_OUTPUT)?);
    let settings =
        CodegenSettings::from_env(&var(ENV_SETTINGS)?).ok_or_else(|| host(format!("{ENV_SETTINGS} is malformed")))?;
    let memory: u64 = var(ENV_MEMORY)?
        .parse()
        .map_err(|_| host(format!("{ENV_MEMORY} is malformed")))?;
    let cpu: u64 = var(ENV_CPU)?
        .parse()
        .map_err(|_| host(format!("{ENV_CPU} is malformed")))?;
    rlimit::setrlimit(rlimit::Resource::AS, memory, memory)
        .map_err(|e| host(format!("cannot set the memory limit: {e}")))?;
    // SIGXCPU at the limit, SIGKILL a second later if it is ignored.
    rlimit::setrlimit(rlimit::Resource::CPU, cpu, cpu + 1)
        .map_err(|e| host(format!("cannot set the CPU limit: {e}")))?;

    let mut wasm = Vec::new();
    std::io::stdin()
        .take(CHILD_MAX_INPUT)
        .read_to_end(&mut wasm)
        .map_err(|e| host(format!("cannot read the module: {e}")))?;
    let mut config = engine_config(settings);
    let cache = std::env::var_os(ENV_INCREMENTAL).map(|dir| {
        Arc::new(FunctionCache {
            dir: dir.into(),
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            stored: AtomicU64::new(0),
        })
    });
    if let Some(cache) = &cache {
        config
            .enable_incremental_compilation(cache.clone())
            .map_err(|e| host(format!("cannot use the function cache: {e:#}")))?;
    }
    let engine = wasmtime::Engine::new(&config).map_err(|e| host(format!("cannot build the engine: {e:#}")))?;
    let artifact = if wasmtime::wasmparser::Parser::is_component(&wasm) {
        engine.precompile_component(&wasm)
    } else {
        engine.precompile_module(&wasm)
    }
    .map_err(|e| (EXIT_REJECTED, format!("{e:#}")))?;
    std::fs::write(&output, artifact).map_err(|e| host(format!("cannot write {}: {e}", output.display())))?;
    let mut line = String::new();
    if let Some(cache) = cache {
        line = format!(
            "{REUSED}={} {COMPILED}={} {STORED}={} ",
            cache.hits.load(Ordering::Relaxed),
            cache.misses.load(Ordering::Relaxed),
            cache.stored.load(Ordering::Relaxed)
        );
    }
    if let Some(ms) = own_cpu_ms() {
        line.push_str(&format!("{CPU_MS}={ms}"));
    }
    println!("{}", line.trim_end());
    Ok(())
}

/// CPU time this process has used, all threads, user and system, in
/// milliseconds: `/proc/self/stat`'s `utime` and `stime` (clock ticks of
/// 10 ms, Linux's `USER_HZ`). `None` where there is no such file.
fn own_cpu_ms() -> Option<u64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) may hold spaces; fields after it are
    // numbered from 3 (`state`): utime is field 14, stime 15.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let utime: u64 = fields.next()?.parse().ok()?;
    let stime: u64 = fields.next()?.parse().ok()?;
    Some((utime + stime) * 10)
}

/// Cranelift's incremental compilation cache in a folder: compiled
/// functions by the digest of their code and settings, so the runtime that
/// every component of one producer embeds (CPython, StarlingMonkey), and
/// the runtime of every Go bot, is compiled once. Entries are written to a
/// temporary file and renamed, so a reader never sees half of one; a hit
/// marks its entry used (its modification time), for the cache's bound
/// (`crate::bound`). An entry removed by a trim is a miss: the function is
/// compiled again.
#[derive(Debug)]
struct FunctionCache {
    dir: PathBuf,
    hits: AtomicU64,
    misses: AtomicU64,
    /// Bytes of the entries stored, in whole blocks.
    stored: AtomicU64,
}

impl FunctionCache {
    fn path(&self, key: &[u8]) -> PathBuf {
        let name = sha256_hex(key);
        self.dir.join(&name[..2]).join(&name[2..])
    }
}

impl wasmtime::CacheStore for FunctionCache {
    fn get(&self, key: &[u8]) -> Option<std::borrow::Cow<'_, [u8]>> {
        let found = std::fs::File::open(self.path(key))
            .and_then(|mut file| {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                // Used now; a time that cannot be set only orders evictions.
                let _ = file.set_modified(std::time::SystemTime::now());
                Ok(bytes)
            })
            .ok();
        let counter = if found.is_some() { &self.hits } else { &self.misses };
        counter.fetch_add(1, Ordering::Relaxed);
        found.map(std::borrow::Cow::Owned)
    }

    fn insert(&self, key: &[u8], value: Vec<u8>) -> bool {
        let path = self.path(key);
        let Some(dir) = path.parent() else {
            return false;
        };
        if std::fs::create_dir_all(dir).is_err() {
            return false;
        }
        let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else {
            return false;
        };
        let stored = tmp.write_all(&value).is_ok() && tmp.persist(&path).is_ok();
        if stored {
            let bytes = crate::bound::disk_bytes(value.len() as u64);
            self.stored.fetch_add(bytes, Ordering::Relaxed);
        }
        stored
    }
}

/// The wall-clock backstop of a compilation, in multiples of its CPU-time
/// limit: a child that is starved of CPU on a busy machine still gets its
/// whole CPU allowance; one that hangs without computing is stopped.
pub(crate) const WALL_FACTOR: u32 = 3;

/// Limits of one compilation.
pub(crate) struct CompileLimits {
    pub(crate) timeout: Duration,
    pub(crate) memory_bytes: u64,
    pub(crate) settings: CodegenSettings,
    /// The folder of compiled functions shared by every compilation.
    pub(crate) function_cache: PathBuf,
}

/// How a module was compiled.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Compilation {
    /// Real time the compiler child took, in seconds.
    pub seconds: f64,
    /// CPU time the compiler child used, all its threads together, in
    /// seconds (to 10 ms): what counts against
    /// [`SandboxConfig::compile_timeout`](crate::SandboxConfig::compile_timeout),
    /// and what a server accounts to the uploader. `None` where the child
    /// cannot read it (no `/proc`).
    pub cpu_seconds: Option<f64>,
    /// Functions found already compiled in the function cache (the
    /// runtime a language's bots share).
    pub functions_reused: u64,
    /// Functions compiled now.
    pub functions_compiled: u64,
}

impl Compilation {
    /// Share of the functions found in the function cache, 0 to 1.
    pub fn reused_share(&self) -> f64 {
        let total = self.functions_reused + self.functions_compiled;
        if total == 0 {
            0.0
        } else {
            self.functions_reused as f64 / total as f64
        }
    }
}

/// What a compiler child produced.
pub(crate) struct ChildOutput {
    /// How it went.
    pub(crate) compilation: Compilation,
    /// The artifact, in a temporary file of the destination's folder: the
    /// caller loads it and then renames it into place, so that no other
    /// process can remove it in between.
    pub(crate) artifact: tempfile::NamedTempFile,
    /// Bytes of compiled functions the child added to the function cache.
    pub(crate) function_bytes: u64,
}

/// Compiles `wasm` in a child process, into a temporary file in `dir`.
pub(crate) fn compile_in_child(
    command: &CompilerCommand,
    limits: &CompileLimits,
    wasm: &[u8],
    dir: &Path,
) -> Result<ChildOutput, ModuleError> {
    let tmp = tempfile::Builder::new()
        .prefix(crate::bound::COMPILING_PREFIX)
        .tempfile_in(dir)
        .map_err(|e| ModuleError::Host(format!("cannot create a file in {}: {e}", dir.display())))?;
    let tmp_path = tmp.path().to_path_buf();

    let mut child = Command::new(&command.program)
        .args(&command.args)
        .env(ENV_OUTPUT, &tmp_path)
        .env(ENV_SETTINGS, limits.settings.to_env())
        .env(ENV_MEMORY, limits.memory_bytes.to_string())
        .env(ENV_CPU, cpu_seconds(limits.timeout).to_string())
        .env(ENV_INCREMENTAL, &limits.function_cache)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| ModuleError::Host(format!("cannot start the compiler {}: {e}", command.program.display())))?;

    let stdin = child.stdin.take();
    let stderr = child.stderr.take();
    let stdout = child.stdout.take();
    let started = Instant::now();
    let outcome = std::thread::scope(|s| {
        s.spawn(move || {
            if let Some(mut stdin) = stdin {
                // A child that dies early closes the pipe; its exit status
                // tells why.
                let _ = stdin.write_all(wasm);
            }
        });
        let out_reader = s.spawn(move || read_capped(stdout));
        let err_reader = s.spawn(move || read_capped(stderr));
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Ok(status),
                Ok(None) if started.elapsed() >= limits.timeout * WALL_FACTOR => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(ModuleError::CompileTimeout {
                        secs: cpu_seconds(limits.timeout),
                    });
                }
                Ok(None) => std::thread::sleep(Duration::from_millis(2)),
                Err(e) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break Err(ModuleError::Host(format!("cannot wait for the compiler: {e}")));
                }
            }
        };
        let err = err_reader.join().unwrap_or_default();
        let out = String::from_utf8_lossy(&out_reader.join().unwrap_or_default()).into_owned();
        status.map(|st| (st, String::from_utf8_lossy(&err).trim().to_string(), out))
    });
    let (status, err, out) = outcome?;

    if status.success() {
        let count = |key: &str| {
            out.split_whitespace()
                .find_map(|word| word.strip_prefix(key)?.strip_prefix('=')?.parse().ok())
                .unwrap_or(0)
        };
        return Ok(ChildOutput {
            compilation: Compilation {
                seconds: started.elapsed().as_secs_f64(),
                cpu_seconds: out
                    .split_whitespace()
                    .find_map(|word| word.strip_prefix(CPU_MS)?.strip_prefix('=')?.parse::<u64>().ok())
                    .map(|ms| ms as f64 / 1000.0),
                functions_reused: count(REUSED),
                functions_compiled: count(COMPILED),
            },
            artifact: tmp,
            function_bytes: count(STORED),
        });
    }
    // Under RLIMIT_AS an allocation failure aborts (with a message) and a
    // failed stack or guard mapping shows up as SIGSEGV or SIGBUS; RLIMIT_CPU
    // ends the child with SIGXCPU (or SIGKILL).
    #[cfg(unix)]
    let (oom_signal, cpu_signal) = {
        use std::os::unix::process::ExitStatusExt;
        (
            matches!(status.signal(), Some(6 | 7 | 11)),
            matches!(status.signal(), Some(9 | 24)),
        )
    };
    #[cfg(not(unix))]
    let (oom_signal, cpu_signal) = (false, false);
    if cpu_signal {
        return Err(ModuleError::CompileTimeout {
            secs: cpu_seconds(limits.timeout),
        });
    }
    if err.contains(EXIT_OOM_MARKER) || oom_signal {
        return Err(ModuleError::CompileOutOfMemory {
            mib: limits.memory_bytes / (1024 * 1024),
        });
    }
    match status.code() {
        Some(c) if c == i32::from(EXIT_REJECTED) => Err(ModuleError::CompileFailed(err)),
        _ => Err(ModuleError::Host(format!(
            "the compiler {} failed ({status}): {err}",
            command.program.display()
        ))),
    }
}

/// The first [`CHILD_OUTPUT_KEEP`] bytes from a pipe of the child; the
/// rest is drained, so the child never blocks on a full pipe.
fn read_capped(pipe: Option<impl Read>) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Some(pipe) = pipe {
        let mut limited = pipe.take(CHILD_OUTPUT_KEEP);
        let _ = limited.read_to_end(&mut buf);
        let _ = std::io::copy(&mut limited.into_inner(), &mut std::io::sink());
    }
    buf
}

/// The CPU-time limit of a compilation in whole seconds (at least 1).
fn cpu_seconds(timeout: Duration) -> u64 {
    (timeout.as_secs_f64().ceil() as u64).max(1)
}

/// A compiled module or component, as loaded from the artifact cache.
pub(crate) enum Compiled {
    Module(wasmtime::Module),
    Component(wasmtime::component::Component),
}

/// Loads an artifact this sandbox wrote, of a module or a component.
#[allow(
    unsafe_code,
    reason = "loading our own compiled artifacts needs Module::deserialize_file and Component::deserialize_file"
)]
pub(crate) fn load_artifact(
    engine: &wasmtime::Engine,
    path: &Path,
    kind: crate::ModuleKind,
) -> wasmtime::Result<Compiled> {
    // SAFETY: `deserialize_file` trusts its input to be an artifact produced
    // by wasmtime with compatible settings. Files in the cache directory are
    // written only by `compile_in_child` (our own compiler, run with the
    // settings of this engine; its temporary file is loaded, and renamed
    // into place, only after it succeeded), are named after the engine's
    // compatibility hash, and the directory is documented as writable by
    // the sandbox alone. wasmtime additionally checks the artifact's header,
    // its kind (module or component) and engine compatibility. The file is
    // mapped, not read: it is never written in place (only removed, which
    // leaves a mapping intact, or replaced by a rename).
    match kind {
        crate::ModuleKind::Core => unsafe { wasmtime::Module::deserialize_file(engine, path) }.map(Compiled::Module),
        crate::ModuleKind::Component => {
            unsafe { wasmtime::component::Component::deserialize_file(engine, path) }.map(Compiled::Component)
        }
    }
}
