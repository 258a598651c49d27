//! Runs untrusted game bots — WebAssembly WASI preview-1 commands, and WASI
//! 0.2 command components (Python and JavaScript bots) — one turn at a
//! time, under limits, reproducibly.
//!
//! The referee wraps a [`BotInstance`] as a player: it hands the bot one
//! request line, the bot answers one line on stdout and is paused right
//! there until its next turn. The bot contract is `spec/protocol.md`.
//!
//! ```no_run
//! use arbiter_sandbox::{BotEnv, Sandbox, SandboxConfig};
//!
//! let sandbox = Sandbox::new(SandboxConfig::default())?;
//! let wasm = std::fs::read("bot.wasm")?;
//! let module = sandbox.load(&wasm)?; // checks, compiles in a child process, caches
//! let env = BotEnv {
//!     seed: 42,
//!     vars: vec![("ARBITER_GAME".into(), "othello".into())],
//!     ..BotEnv::default()
//! };
//! let mut bot = sandbox.instantiate(&module, env)?;
//! match bot.turn(br#"{"board":"..."}"#, 50 * arbiter_sandbox::DEFAULT_FUEL_PER_MS) {
//!     Ok(reply) => println!("{} ({} fuel)", String::from_utf8_lossy(&reply.line), reply.fuel_used),
//!     Err(fault) => println!("{fault}"),
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What it guarantees
//!
//! - A bot cannot harm the host or other bots: memory, tables, stack, reply
//!   length, stderr and module size are capped ([`SandboxConfig`] says each
//!   default and why), it has no files, sockets or threads, and compiling an
//!   untrusted module happens in a child process with a time and memory
//!   limit. Every way a bot can misbehave ends as a [`TurnFault`] or a
//!   [`ModuleError`], never as a host panic or hang.
//! - Determinism: the same module, [`BotEnv`] and sequence of requests and
//!   budgets give the same replies and the same `fuel_used`, run after run
//!   (fuel is counted, not timed; clocks are virtual; randomness is seeded;
//!   NaNs are canonical; relaxed SIMD and threads are off). The one
//!   exception is the wall-clock backstop, which only fires on bots that
//!   stall the host and is reported as such. The backstop reads the clock
//!   between fuel chunks, outside the bot's code: reading it never changes
//!   what the bot computes.
//! - A turn is synchronous for the caller, and the host adds well under a
//!   microsecond to it (a 1 KB request in, a reply out: `cargo bench -p
//!   arbiter-sandbox --bench turn`); the rest is the bot's own code. A bot
//!   never computes on another bot's time: it runs only inside its own
//!   `turn`.
//! - At the end of a game ([`BotInstance::close`], or dropping the
//!   instance) a bot waiting for its next request finds end of file on
//!   stdin, as a native bot would, and may exit by itself within a small
//!   fixed fuel allowance; one that does not is stopped. Nothing it does
//!   then counts towards a turn.
//!
//! - Components (told apart from modules by their binary header) get every
//!   guarantee above: the same fuel clock and fuel rate, exact at every
//!   yield; memory, table and instance limits summed over all the core
//!   instances of a component; the same reply and stderr limits and
//!   backstop. Their WASI 0.2 host is as deterministic as the preview-1
//!   one: wall and monotonic clocks read virtual time, `wasi:random` (and
//!   `insecure`, `insecure-seed`) reads the same seeded stream as
//!   `random_get`, stdin/stdout/stderr are the line protocol, there is no
//!   preopened directory, no environment beyond the [`BotEnv`]'s, no
//!   socket and no `wasi:http`. A component importing anything else is
//!   refused by [`Sandbox::inspect`], naming the import (and, for
//!   ComponentizeJS's `wasi:http`, the flag that leaves it out). Reading
//!   stdin with no request pending is the bot's fault, as for a module;
//!   waiting on a clock pollable charges the time waited, so a bot that
//!   sleeps past its budget times out at exactly its budget. A component's
//!   start functions (its runtime's initialisation) run in its first turn.
//! - Compiling shares work: compiled functions are kept in the cache
//!   directory by the digest of their code, so the runtime that every
//!   component of one producer embeds (CPython, StarlingMonkey), or every
//!   Go module, is compiled once ([`BotModule::compilation`] says how much
//!   was found compiled).
//! - The disk caches are bounded: compiled modules by
//!   [`SandboxConfig::compile_cache_bytes`], compiled functions by
//!   [`SandboxConfig::function_cache_bytes`]. A compile that takes one past
//!   its bound removes its least recently used entries (loaded, or found
//!   compiled) until it holds 90% of it ([`Sandbox::cache_sizes`] counts
//!   them). Several processes may share one cache directory: an entry
//!   removed while another process loads it is compiled again, and a
//!   module already loaded keeps running.
//!
//! # What it does not guarantee
//!
//! - With [`OnTimeout::Pause`], timeouts of a bot that makes no host calls
//!   are detected at a fuel chunk boundary after its budget, not at the
//!   exact instruction (the overshoot is charged to its next turn). With
//!   [`OnTimeout::Stop`] (the default) wasmtime stops the bot at its budget.
//! - The memory limits cover linear memory and tables, not every byte the
//!   host allocates for an instance (wasmtime's own bookkeeping).
//! - The compile cache directory must be writable by the sandbox alone:
//!   compiled artifacts are loaded as trusted native code.
//! - Whether a reply is UTF-8 or valid JSON is the referee's business.

#![deny(missing_docs)]

mod bound;
mod check;
mod compile;
mod component;
mod config;
mod error;
mod instance;
mod io;
mod layout;
mod wasi;
mod wasip2;

use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use rand_core::SeedableRng;
use wasmtime::{Engine, InstanceAllocationStrategy, InstancePre, Linker, PoolingAllocationConfig};

pub use check::{ModuleInfo, ModuleKind};
pub use compile::{Compilation, compiler_child_main};
pub use config::{
    COMPILE_CACHE_BYTES_VAR, CompilerCommand, DEFAULT_FUEL_PER_MS, EMBEDDED_COMPILER_SUBCOMMAND, FUEL_SCHEDULE,
    FUNCTION_CACHE_BYTES_VAR, SandboxConfig,
};
pub use error::{BadReplyReason, CrashReason, FaultKind, ModuleError, SandboxError, TrapKind, TurnFault};
pub use instance::{BotInstance, TurnReply};
pub use layout::{StackLayout, stack_layout};

use config::CodegenSettings;
use wasi::Host;

/// Checks, compiles, caches and instantiates bots. Cheap to clone and share
/// between threads (`Send + Sync`; an `Arc` inside).
#[derive(Clone)]
pub struct Sandbox {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Sandbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sandbox")
            .field("config", &self.shared.config)
            .field("cache_dir", &self.shared.cache_dir)
            .finish_non_exhaustive()
    }
}

pub(crate) struct Shared {
    pub(crate) config: SandboxConfig,
    /// Runs core modules, from the pooling allocator's slots.
    pub(crate) engine: Engine,
    linker: Linker<Host>,
    /// Runs components (many core instances each), allocating on demand;
    /// same code generation as `engine`.
    pub(crate) component_engine: Engine,
    component_linker: wasmtime::component::Linker<Host>,
    cache_dir: PathBuf,
    compat: String,
    modules: Mutex<ModuleCache>,
    loads: LoadCounters,
    /// The compiled modules on disk, bounded.
    disk_modules: Arc<bound::DiskCache>,
    /// The compiled functions on disk, bounded.
    disk_functions: Arc<bound::DiskCache>,
    _tmp: Option<tempfile::TempDir>,
}

/// Where loaded modules came from, counted.
#[derive(Default)]
struct LoadCounters {
    memory: AtomicU64,
    disk: AtomicU64,
    compiled: AtomicU64,
}

/// How often [`Sandbox::load`] (and [`Sandbox::cached`]) found a module in
/// each cache, since the sandbox was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Found in memory: no work at all.
    pub memory_hits: u64,
    /// Compiled before and loaded from the disk cache.
    pub disk_hits: u64,
    /// Compiled (in a child process) now.
    pub compiles: u64,
}

/// What the disk caches hold and how they are bounded
/// ([`SandboxConfig::compile_cache_bytes`],
/// [`SandboxConfig::function_cache_bytes`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSizes {
    /// Compiled modules and components.
    pub modules: CacheSize,
    /// Compiled functions shared between modules.
    pub functions: CacheSize,
}

/// One disk cache's size, as this process knows it: the folder as last
/// scanned (when the sandbox was made, then at every trim) plus what this
/// process wrote since, each file counted in whole 4 KiB blocks. Other
/// processes sharing the folder are seen at the next scan.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheSize {
    /// Bytes held (0 until the first scan, started with the sandbox, ends).
    pub bytes: u64,
    /// The bound: past it, the least recently used entries are removed.
    pub limit_bytes: u64,
    /// Entries this sandbox removed to keep within the bound.
    pub evictions: u64,
}

#[derive(Default)]
struct ModuleCache {
    map: HashMap<String, BotModule>,
    /// Digests, least recently used first.
    order: VecDeque<String>,
}

impl ModuleCache {
    /// The module with digest `sha256`, now the most recently used.
    fn get(&mut self, sha256: &str) -> Option<BotModule> {
        let module = self.map.get(sha256)?.clone();
        if let Some(at) = self.order.iter().position(|k| k == sha256)
            && let Some(key) = self.order.remove(at)
        {
            self.order.push_back(key);
        }
        Some(module)
    }

    /// Keeps `module`, forgetting the least recently used beyond `capacity`.
    fn insert(&mut self, module: &BotModule, capacity: usize) {
        if self.map.contains_key(module.sha256()) {
            return;
        }
        self.map.insert(module.sha256().to_string(), module.clone());
        self.order.push_back(module.sha256().to_string());
        while self.order.len() > capacity {
            if let Some(old) = self.order.pop_front() {
                self.map.remove(&old);
            }
        }
    }
}

/// A checked and compiled module, ready to instantiate. Cheap to clone.
#[derive(Clone)]
pub struct BotModule {
    pub(crate) inner: Arc<ModuleInner>,
}

pub(crate) struct ModuleInner {
    info: ModuleInfo,
    pub(crate) pre: Pre,
    compilation: Option<Compilation>,
}

/// A bot ready to instantiate.
pub(crate) enum Pre {
    /// A preview-1 module; runs `_start`.
    Module(InstancePre<Host>),
    /// A command component; runs the `run` function of `run`'s interface.
    Component {
        pre: wasmtime::component::InstancePre<Host>,
        run: wasmtime::component::ComponentExportIndex,
    },
}

impl std::fmt::Debug for BotModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BotModule")
            .field("info", &self.inner.info)
            .finish_non_exhaustive()
    }
}

impl BotModule {
    /// SHA-256 of the module's bytes, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.inner.info.sha256
    }

    /// What the checks learned about the module.
    pub fn info(&self) -> &ModuleInfo {
        &self.inner.info
    }

    /// How the module was compiled, when this sandbox compiled it (not
    /// when it was found compiled on disk).
    pub fn compilation(&self) -> Option<&Compilation> {
        self.inner.compilation.as_ref()
    }
}

/// What a bot sees of the world, and the rules of its clock.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BotEnv {
    /// Seeds the bot's `random_get` stream (e.g. from match seed, leg, side).
    pub seed: u64,
    /// The bot's whole environment, e.g. `ARBITER_GAME` and `ARBITER_MODE`.
    pub vars: Vec<(String, String)>,
    /// Origin of the virtual clocks, in nanoseconds since the Unix epoch.
    pub start_time_ns: u64,
    /// What running out of a turn's budget does to the bot.
    pub on_timeout: OnTimeout,
    /// Fuel per virtual millisecond of this bot's clocks and sleeps; `None`
    /// for [`SandboxConfig::fuel_per_ms`]. A match record keeps it: the
    /// same budgets mean the same fuel only at the same rate.
    pub fuel_per_ms: Option<u64>,
}

/// What running out of a turn's fuel budget does to a bot.
///
/// Either way the turn ends as [`FaultKind::Timeout`] charged exactly its
/// budget, deterministically.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnTimeout {
    /// The bot is stopped at the first fuel check past its budget: the
    /// budget is wasmtime's own fuel limit, so no instruction, bulk memory
    /// and table instructions included, runs on fuel beyond it. For
    /// turn-based games, where a timeout ends the bot's game. The default.
    #[default]
    Stop,
    /// The bot is paused where it is and continues in its next turn's
    /// budget, which is charged the fuel it used beyond this one. For
    /// tick-based games. A bot that makes no host calls is paused at the
    /// first fuel chunk ([`SandboxConfig::timeout_granularity_fuel`]) known
    /// to lie past its budget: one bulk instruction counts as one chunk
    /// until its real cost is read at the next host call, so a bot looping
    /// on huge bulk instructions is detected late (the backstop bounds it).
    Pause,
}

/// Bytes of each linear memory and table whose touched pages are kept
/// resident (and zeroed in place) when an instance ends, so the next bot in
/// that slot does not fault them in again: about 5% of a short turn. Only
/// used where the kernel reports which pages were touched (`PAGEMAP_SCAN`,
/// Linux 6.7 and later); elsewhere wasmtime would zero this many bytes from
/// the bottom of memory whether touched or not. Costs up to this much
/// resident memory per used slot.
const KEEP_RESIDENT_BYTES: usize = 2 << 20;

/// The engine's configuration: codegen settings shared with the compiler
/// child, plus the pooling allocator.
fn engine_config(config: &SandboxConfig, keep_resident: bool) -> wasmtime::Config {
    let mut wcfg = config::engine_config(codegen(config));
    let slots = config.instance_slots;
    let mut pool = PoolingAllocationConfig::new();
    pool.total_core_instances(slots)
        .total_memories(slots)
        .total_tables(slots)
        .total_stacks(slots)
        .max_memories_per_module(1)
        .max_tables_per_module(1)
        .max_memory_size(config.max_memory_bytes)
        .table_elements(config.max_table_elements);
    if keep_resident {
        pool.pagemap_scan(wasmtime::Enabled::Yes)
            .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
            .table_keep_resident(KEEP_RESIDENT_BYTES);
    }
    wcfg.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    wcfg
}

/// The stream `random_get` hands a bot whose [`BotEnv::seed`] is `seed`.
fn random_stream(seed: u64) -> rand_chacha::ChaCha20Rng {
    rand_chacha::ChaCha20Rng::seed_from_u64(seed)
}

/// The first bytes `random_get` hands a bot whose [`BotEnv::seed`] is
/// `seed` (what a native build of the bot needs to draw the same numbers).
pub fn first_random_bytes(seed: u64, out: &mut [u8]) {
    use rand_core::RngCore;
    random_stream(seed).fill_bytes(out);
}

/// A wasmtime engine with the settings a [`Sandbox`] built from `config`
/// uses (code generation, fuel metering, limits, the pooling allocator),
/// after `adjust` has changed what it needs to. For benchmarks and tools
/// that run modules as the sandbox compiles them; the sandbox itself passes
/// no adjustment.
pub fn engine(config: &SandboxConfig, adjust: impl Fn(&mut wasmtime::Config)) -> Result<Engine, SandboxError> {
    let build = |keep_resident: bool| {
        let mut wcfg = engine_config(config, keep_resident);
        adjust(&mut wcfg);
        Engine::new(&wcfg)
    };
    // Keeping touched pages resident needs the kernel to say which they
    // are; without that, the engine is built without it.
    build(true)
        .or_else(|_| build(false))
        .map_err(|e| SandboxError::Wasmtime(format!("{e:#}")))
}

impl Sandbox {
    /// Builds the engine (with a pooling allocator of
    /// [`SandboxConfig::instance_slots`]), the WASI host and the caches.
    pub fn new(config: SandboxConfig) -> Result<Sandbox, SandboxError> {
        if config.fuel_per_ms == 0 || config.timeout_granularity_fuel == 0 {
            return Err(SandboxError::Config(
                "fuel_per_ms and timeout_granularity_fuel must be positive".into(),
            ));
        }
        if config.instance_slots == 0 {
            return Err(SandboxError::Config("instance_slots must be positive".into()));
        }
        let wt = |e: wasmtime::Error| SandboxError::Wasmtime(format!("{e:#}"));
        let engine = engine(&config, |_| {})?;

        let mut linker = Linker::new(&engine);
        wasi::add_to_linker(&mut linker).map_err(wt)?;
        let component_engine = Engine::new(&config::engine_config(codegen(&config))).map_err(wt)?;
        let mut component_linker = wasmtime::component::Linker::new(&component_engine);
        wasip2::add_to_linker(&mut component_linker).map_err(wt)?;

        let (cache_dir, tmp) = match &config.cache_dir {
            Some(dir) => {
                std::fs::create_dir_all(dir).map_err(|source| SandboxError::Io {
                    context: format!("cannot create the cache directory {}", dir.display()),
                    source,
                })?;
                (dir.clone(), None)
            }
            None => {
                let tmp = tempfile::Builder::new()
                    .prefix("arbiter-sandbox-")
                    .tempdir()
                    .map_err(|source| SandboxError::Io {
                        context: "cannot create a temporary cache directory".into(),
                        source,
                    })?;
                (tmp.path().to_path_buf(), Some(tmp))
            }
        };

        let compat = compile::engine_compat_hex(&engine);
        let disk_modules = Arc::new(bound::DiskCache::new(
            bound::Kind::Modules,
            cache_dir.clone(),
            config.compile_cache_bytes,
        ));
        let disk_functions = Arc::new(bound::DiskCache::new(
            bound::Kind::Functions,
            cache_dir.clone(),
            config.function_cache_bytes,
        ));
        // Learn what the caches hold (and trim them, if a lowered bound
        // asks for it) without holding up the caller; a write before the
        // scan ends waits for it.
        let scans = [disk_modules.clone(), disk_functions.clone()];
        let _ = std::thread::Builder::new()
            .name("arbiter-cache-scan".into())
            .spawn(move || scans.iter().for_each(|cache| cache.first_scan()));
        Ok(Sandbox {
            shared: Arc::new(Shared {
                config,
                engine,
                linker,
                component_engine,
                component_linker,
                cache_dir,
                compat,
                modules: Mutex::new(ModuleCache::default()),
                loads: LoadCounters::default(),
                disk_modules,
                disk_functions,
                _tmp: tmp,
            }),
        })
    }

    /// The configuration this sandbox runs with.
    pub fn config(&self) -> &SandboxConfig {
        &self.shared.config
    }

    /// Inspects a module without compiling it: size, format, validation,
    /// imports (only `wasi_snapshot_preview1` functions the host provides,
    /// with their signatures), exports (`_start` and `memory`), no start
    /// section, no shared memory, at most one memory and table within the
    /// limits, and the largest function body.
    pub fn inspect(&self, wasm: &[u8]) -> Result<ModuleInfo, ModuleError> {
        check::check(&self.shared.engine, &self.shared.config, wasm)
    }

    /// [`Self::inspect`]s a module and compiles it in a child process (time and
    /// memory limited), or takes it from the caches: in memory, then on disk
    /// (keyed by the module's SHA-256 and the engine's compatibility hash).
    ///
    /// The disk cache is bounded ([`SandboxConfig::compile_cache_bytes`],
    /// [`SandboxConfig::function_cache_bytes`]): a compile that takes it past
    /// its bound removes the least recently loaded entries. A module whose
    /// artifact was removed, by this process or another sharing the folder,
    /// even while this call was reading it, is compiled again; one already
    /// loaded keeps working.
    pub fn load(&self, wasm: &[u8]) -> Result<BotModule, ModuleError> {
        let s = &self.shared;
        if wasm.len() <= s.config.max_binary_bytes() {
            // The same bytes were checked with this configuration before.
            let sha = compile::sha256_hex(wasm);
            let found = lock_cache(&s.modules).get(&sha);
            if let Some(m) = found {
                s.loads.memory.fetch_add(1, Ordering::Relaxed);
                // Used: the last to go from the disk cache.
                bound::touch(&self.artifact_path(&sha));
                return Ok(m);
            }
        }
        let info = self.inspect(wasm)?;
        let (engine, timeout) = match info.kind {
            ModuleKind::Core => (&s.engine, s.config.compile_timeout),
            ModuleKind::Component => (&s.component_engine, s.config.component_compile_timeout),
        };
        let path = self.artifact_path(&info.sha256);
        let cached = if path.is_file() {
            match compile::load_artifact(engine, &path, info.kind) {
                Ok(m) => {
                    bound::touch(&path);
                    Some(m)
                }
                Err(_) => {
                    // Stale or damaged, or just removed by a trim: compile
                    // again.
                    let _ = std::fs::remove_file(&path);
                    None
                }
            }
        } else {
            None
        };
        let mut compilation = None;
        let compiled = match cached {
            Some(m) => {
                s.loads.disk.fetch_add(1, Ordering::Relaxed);
                m
            }
            None => {
                s.loads.compiled.fetch_add(1, Ordering::Relaxed);
                let limits = compile::CompileLimits {
                    timeout,
                    memory_bytes: s.config.compile_memory_bytes,
                    settings: codegen(&s.config),
                    function_cache: s.cache_dir.join(format!("{}{}", bound::FUNCTIONS_PREFIX, s.compat)),
                };
                let output = compile::compile_in_child(&s.config.compiler, &limits, wasm, &s.cache_dir)?;
                compilation = Some(output.compilation);
                // Loaded before it is renamed into place: once it is there,
                // another process may trim it away at any moment.
                let loaded = compile::load_artifact(engine, output.artifact.path(), info.kind)
                    .map_err(|e| ModuleError::Host(format!("cannot load the compiled module: {e:#}")))?;
                let bytes = output.artifact.as_file().metadata().map_or(0, |m| m.len());
                output
                    .artifact
                    .persist(&path)
                    .map_err(|e| ModuleError::Host(format!("cannot store {}: {e}", path.display())))?;
                s.disk_modules.wrote(bound::disk_bytes(bytes));
                if output.function_bytes > 0 {
                    s.disk_functions.wrote(output.function_bytes);
                }
                loaded
            }
        };
        let link = |e: wasmtime::Error| ModuleError::Host(format!("cannot link the module: {e:#}"));
        let pre = match compiled {
            compile::Compiled::Module(module) => Pre::Module(s.linker.instantiate_pre(&module).map_err(link)?),
            compile::Compiled::Component(component) => {
                let run = run_export(&s.component_engine, &component).ok_or(ModuleError::MissingRun)?;
                Pre::Component {
                    pre: s.component_linker.instantiate_pre(&component).map_err(link)?,
                    run,
                }
            }
        };
        let bot = BotModule {
            inner: Arc::new(ModuleInner { info, pre, compilation }),
        };
        lock_cache(&s.modules).insert(&bot, s.config.memory_cache_entries);
        Ok(bot)
    }

    /// The module whose bytes have SHA-256 `sha256` (lowercase hex), if this
    /// sandbox loaded it and still keeps it in memory: what [`Self::load`]
    /// of those bytes would give, without needing the bytes. A caller that
    /// knows a module's digest can skip fetching it.
    pub fn cached(&self, sha256: &str) -> Option<BotModule> {
        let found = lock_cache(&self.shared.modules).get(sha256);
        if found.is_some() {
            self.shared.loads.memory.fetch_add(1, Ordering::Relaxed);
            bound::touch(&self.artifact_path(sha256));
        }
        found
    }

    /// Where the artifact of the module with digest `sha256` is kept.
    fn artifact_path(&self, sha256: &str) -> PathBuf {
        let s = &self.shared;
        s.cache_dir.join(format!("{sha256}-{}.cwasm", s.compat))
    }

    /// What the disk caches hold, their bounds and how many entries this
    /// sandbox removed to keep within them. Cheap: counts kept in memory,
    /// no file-system access.
    pub fn cache_sizes(&self) -> CacheSizes {
        let size = |cache: &bound::DiskCache| CacheSize {
            bytes: cache.bytes(),
            limit_bytes: cache.limit(),
            evictions: cache.evictions(),
        };
        CacheSizes {
            modules: size(&self.shared.disk_modules),
            functions: size(&self.shared.disk_functions),
        }
    }

    /// How often modules were found in each cache so far.
    pub fn cache_stats(&self) -> CacheStats {
        let loads = &self.shared.loads;
        CacheStats {
            memory_hits: loads.memory.load(Ordering::Relaxed),
            disk_hits: loads.disk.load(Ordering::Relaxed),
            compiles: loads.compiled.load(Ordering::Relaxed),
        }
    }

    /// Makes a fresh bot: a new instance of `module` seeing `env`. Nothing
    /// runs until its first [`BotInstance::turn`].
    pub fn instantiate(&self, module: &BotModule, env: BotEnv) -> Result<BotInstance, SandboxError> {
        let c = &self.shared.config;
        let params = Arc::new(io::Params {
            fuel_per_ms: env.fuel_per_ms.unwrap_or(c.fuel_per_ms).max(1),
            on_timeout: env.on_timeout,
            granularity: c.timeout_granularity_fuel,
            call_fuel: c.host_call_fuel,
            byte_fuel: c.host_byte_fuel,
            max_reply: c.max_reply_bytes,
            max_stderr: c.max_stderr_bytes,
            max_stack: c.max_wasm_stack,
            max_memory: c.max_memory_bytes,
            max_table: c.max_table_elements,
            start_time_ns: env.start_time_ns,
            vars: env.vars.clone(),
            environ: env
                .vars
                .iter()
                .map(|(k, v)| format!("{k}={v}\0").into_bytes())
                .collect(),
        });
        let io = Arc::new(Mutex::new(io::Io::new(
            random_stream(env.seed),
            c.timeout_granularity_fuel,
        )));
        BotInstance::new(self.shared.clone(), module.clone(), params, io)
    }
}

/// The `run` function of a component's `wasi:cli/run@0.2.x` export.
fn run_export(
    engine: &Engine,
    component: &wasmtime::component::Component,
) -> Option<wasmtime::component::ComponentExportIndex> {
    let ty = component.component_type();
    let name = ty.exports(engine).map(|(name, _)| name).find(|name| {
        name.strip_prefix(component::RUN_INTERFACE)
            .and_then(|v| v.strip_prefix("@0.2."))
            .is_some()
    })?;
    let interface = component.get_export_index(None, name)?;
    component.get_export_index(Some(&interface), "run")
}

fn codegen(c: &SandboxConfig) -> CodegenSettings {
    CodegenSettings {
        max_wasm_stack: c.max_wasm_stack,
    }
}

fn lock_cache(m: &Mutex<ModuleCache>) -> std::sync::MutexGuard<'_, ModuleCache> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
