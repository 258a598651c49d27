//! Every limit the sandbox enforces, with its default and the reason for it,
//! and the wasmtime configuration derived from them.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Fuel per virtual millisecond, unless configured otherwise.
///
/// Measured on a current server core (`cargo bench -p arbiter --bench
/// fuel_rate`), the house search bots burn 9–13 million fuel per real
/// millisecond and request-parsing bots 4–8 million, so one virtual
/// millisecond is one to two real ones; the slowest code there is (an empty
/// loop, `table.copy`) burns 0.7–1.8 million, five to fifteen real ms per
/// virtual ms. It is part of a match record: replaying a match needs the
/// same value.
pub const DEFAULT_FUEL_PER_MS: u64 = 10_000_000;

const KIB: usize = 1024;
const MIB: usize = 1024 * KIB;
const GIB: u64 = 1024 * MIB as u64;

/// The environment variable [`SandboxConfig::from_env`] reads
/// [`SandboxConfig::compile_cache_bytes`] from.
pub const COMPILE_CACHE_BYTES_VAR: &str = "ARBITER_COMPILE_CACHE_BYTES";
/// The environment variable [`SandboxConfig::from_env`] reads
/// [`SandboxConfig::function_cache_bytes`] from.
pub const FUNCTION_CACHE_BYTES_VAR: &str = "ARBITER_FUNCTION_CACHE_BYTES";

/// Limits and settings of a [`Sandbox`](crate::Sandbox).
///
/// `SandboxConfig::default()` gives the limits of the bot contract
/// (`spec/protocol.md`); a game may lower or raise them.
#[derive(Clone, Debug)]
pub struct SandboxConfig {
    /// Fuel (about one WebAssembly instruction each) that makes one virtual
    /// millisecond of the bot's clock.
    ///
    /// Default [`DEFAULT_FUEL_PER_MS`]. Budgets are counted in fuel because
    /// wall-clock time on a shared machine is noisy and not reproducible.
    pub fuel_per_ms: u64,
    /// Largest amount of fuel a bot may run before the host looks at its
    /// budget again when it makes no host call.
    ///
    /// Default 1 000 000 (0.1 virtual ms). The wall-clock backstop is read
    /// this often. A bot whose timeouts pause it
    /// ([`OnTimeout::Pause`](crate::OnTimeout)) and that computes without
    /// calling the host is paused at the first chunk boundary after its
    /// budget ran out (the overshoot is charged to its next turn); one whose
    /// timeouts stop it is stopped at its budget exactly, whatever this is.
    /// Smaller is more precise and costs more task switches.
    pub timeout_granularity_fuel: u64,
    /// Linear memory per instance, in bytes.
    ///
    /// Default 256 MiB. Beyond it `memory.grow` fails (returns -1), so one bot
    /// cannot take the machine's memory from the others.
    pub max_memory_bytes: usize,
    /// Elements per table.
    ///
    /// Default 100 000. Beyond it `table.grow` fails; tables are host memory too.
    pub max_table_elements: usize,
    /// WebAssembly stack, in bytes.
    ///
    /// Default 1 MiB. Deeper recursion traps as a stack overflow (a crash)
    /// instead of exhausting the host thread's stack.
    pub max_wasm_stack: usize,
    /// Longest reply line, in bytes, without its newline.
    ///
    /// Default 64 KiB. A bot that writes more without a newline gets a
    /// `bad_reply`, so an output flood cannot fill the host's memory.
    pub max_reply_bytes: usize,
    /// stderr kept per [`BotInstance`](crate::BotInstance) (per game and
    /// side), in bytes.
    ///
    /// Default 64 KiB. The rest is dropped (but still charged) and a marker
    /// line says so; logs are for the bot author, not a storage channel.
    pub max_stderr_bytes: usize,
    /// Largest module accepted, in bytes.
    ///
    /// Default 16 MiB: real bots are well below it, and every byte is parsed,
    /// validated, compiled and stored.
    pub max_module_bytes: usize,
    /// Largest WASI 0.2 component accepted, in bytes.
    ///
    /// Default 40 MiB. A component embeds a whole language runtime (an
    /// 18 MB CPython for a Python bot, 12 MB for JavaScript), so it gets a
    /// bound of its own, above [`Self::max_module_bytes`].
    pub max_component_bytes: usize,
    /// Largest function body accepted, in bytes.
    ///
    /// Default 1 MiB. Optimising compilers can take time worse than linear in
    /// the size of one function; crafted huge bodies are refused before
    /// compiling (the compile time limit is the second line of defence).
    pub max_function_body_bytes: usize,
    /// Fuel charged for every host call, on top of the work it does.
    ///
    /// Default 4 000 (0.4 virtual µs), at least what a call costs the host
    /// at the rate plain code burns fuel, so no bot gets free work through
    /// the host and a loop of host calls is judged by the fuel clock, not
    /// the wall-clock backstop. The cheapest calls (`sched_yield`,
    /// `clock_time_get`, `random_get` or `fd_write` of nothing) take
    /// 0.6–2 µs each in a test build (an unoptimised host; up to twice
    /// that on a loaded machine), so a loop of them burns 2–6.5 fuel per
    /// nanosecond there, at least as fast as the slowest plain code
    /// (0.7–1.8) (`cargo bench -p arbiter-sandbox --bench host_costs`); at the
    /// former 1 000, an `fd_write` loop burned 0.5, a quarter of the way to
    /// the backstop.
    pub host_call_fuel: u64,
    /// Fuel charged per byte a host call moves in or out of the bot's memory.
    ///
    /// Default 1, for the same reason as [`Self::host_call_fuel`].
    pub host_byte_fuel: u64,
    /// The wall-clock backstop allows this many times a turn's budget
    /// (converted to real time with [`Self::fuel_per_ms`]), plus
    /// [`Self::backstop_grace`].
    ///
    /// Default 50. It stops a bot that stalls the host in a way fuel does not
    /// see; such a stop is a crash and makes a match irreproducible. The
    /// clock is read whenever the bot's fuel chunk
    /// ([`Self::timeout_granularity_fuel`]) is used up, so compiled code
    /// carries no extra check for it: every instruction costs fuel, and bulk
    /// memory and table instructions cost fuel by their length. It sits
    /// far above the fuel clock because fuel is not time: an empty loop
    /// burns about 1 million fuel per real millisecond here (the fuel check
    /// costs more than the loop), a counting loop about 6 million and
    /// `table.copy` about 0.7 million per element copied, up to 15 times
    /// below [`DEFAULT_FUEL_PER_MS`] (`cargo bench -p arbiter --bench
    /// fuel_rate`); a factor of 5 turned honest timeouts into backstop
    /// crashes.
    pub backstop_factor: u32,
    /// Extra real time the backstop allows every turn.
    ///
    /// Default 1 s, so small budgets are not hit by scheduling noise.
    pub backstop_grace: Duration,
    /// CPU-time limit for compiling one module in the child process (all
    /// its threads together, whole seconds, rounded up).
    ///
    /// Default 12 s. Crafted modules can make an optimising compiler run for
    /// minutes (one function of 250 kB over 20 000 locals takes 4 s, of
    /// 1 MB 9 s; sixteen of those fit in a module); the kernel stops the
    /// child at this limit (`RLIMIT_CPU`), so an upload check answers within
    /// 15 s of real time on an idle machine whatever the module (a bomb
    /// compiles on one core: 12 s, plus well under a second to start the
    /// child and read the module). The largest realistic bots, Go modules
    /// of 3.5 MB, need 5 s cold on a current core, and 6.5 s when the
    /// compiled functions are also written to the function cache (later Go
    /// bots then take a fraction); the Rust house bots (up to 300 kB) 0.3–1
    /// s. It is CPU time, not real time, so whether a module is accepted
    /// does not depend on how busy the machine is; a child that gets no CPU
    /// or hangs is stopped after three times this in real time. The CPU a
    /// compile used is in [`Compilation::cpu_seconds`](crate::Compilation)
    /// (and [`ModuleError::compile_cpu_seconds`](crate::ModuleError) for one
    /// stopped at the limit), for a server that bounds what an account may
    /// spend.
    pub compile_timeout: Duration,
    /// CPU-time limit for compiling one WASI 0.2 component, in the same
    /// way as [`Self::compile_timeout`].
    ///
    /// Default 120 s. A Python component is a whole CPython (18 MB of
    /// code): Cranelift needs about 25 s of CPU for it cold, spread over
    /// every core.
    pub component_compile_timeout: Duration,
    /// Address-space limit (`RLIMIT_AS`) of the compiler child, in bytes.
    ///
    /// Default 2 GiB. A crafted module can make the compiler allocate without
    /// bound; the child fails instead of the host.
    pub compile_memory_bytes: u64,
    /// Where compiled artifacts are kept, named by the module's SHA-256 and
    /// the engine's compatibility hash.
    ///
    /// Default `None`: a private temporary directory removed when the
    /// [`Sandbox`](crate::Sandbox) is dropped. Only the sandbox may write
    /// there: artifacts are loaded as trusted native code.
    pub cache_dir: Option<PathBuf>,
    /// Bytes of compiled modules and components kept in
    /// [`Self::cache_dir`] (each file counted in whole 4 KiB blocks).
    ///
    /// Default 4 GiB; `ARBITER_COMPILE_CACHE_BYTES` with
    /// [`Self::from_env`]. When a compile takes the folder past it, the
    /// least recently loaded artifacts are removed until it holds 90% of it
    /// (a removed module is compiled again when next loaded). A compiled
    /// Python or JavaScript bot takes about 40 MB, a Go bot a few MB, a
    /// Rust or C bot well under one: 4 GiB keeps about a hundred component
    /// bots, or thousands of module bots, which is more than a ladder plays
    /// in a day; recompiling one that fell out costs a few seconds, since
    /// its runtime's functions are in the function cache.
    pub compile_cache_bytes: u64,
    /// Bytes of compiled functions kept in [`Self::cache_dir`]'s
    /// `functions-*` folders (each file counted in whole 4 KiB blocks).
    ///
    /// Default 2 GiB; `ARBITER_FUNCTION_CACHE_BYTES` with
    /// [`Self::from_env`]. Trimmed in the same way as
    /// [`Self::compile_cache_bytes`]. A language runtime (CPython,
    /// StarlingMonkey, Go's) is about 80 MB of compiled functions, shared by
    /// every bot built with it, and every new build of a kit's producer
    /// brings another: 2 GiB keeps some twenty of them, so that the runtimes
    /// in use are never the least recently used. Losing one costs the next
    /// bot of that runtime a cold compile (about 25 s of CPU for CPython).
    pub function_cache_bytes: u64,
    /// Compiled modules kept in memory.
    ///
    /// Default 256. Beyond it the least recently used entry is forgotten
    /// (its artifact stays on disk).
    pub memory_cache_entries: usize,
    /// Instances that can exist at the same time (pooling allocator slots).
    ///
    /// Default 64. Each slot reserves (but does not commit) about 4 GiB of
    /// virtual address space for its linear memory plus its stack and table;
    /// a [`BotInstance`](crate::BotInstance) holds one slot while it lives.
    pub instance_slots: u32,
    /// How to start the compiler child process.
    ///
    /// Default [`CompilerCommand::sibling`]: the `arbiter-compile` executable
    /// next to the current one.
    pub compiler: CompilerCommand,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            fuel_per_ms: DEFAULT_FUEL_PER_MS,
            timeout_granularity_fuel: 1_000_000,
            max_memory_bytes: 256 * MIB,
            max_table_elements: 100_000,
            max_wasm_stack: MIB,
            max_reply_bytes: 64 * KIB,
            max_stderr_bytes: 64 * KIB,
            max_module_bytes: 16 * MIB,
            max_component_bytes: 40 * MIB,
            max_function_body_bytes: MIB,
            host_call_fuel: 4_000,
            host_byte_fuel: 1,
            backstop_factor: 50,
            backstop_grace: Duration::from_secs(1),
            compile_timeout: Duration::from_secs(12),
            component_compile_timeout: Duration::from_secs(120),
            compile_memory_bytes: 2 * GIB,
            cache_dir: None,
            compile_cache_bytes: 4 * GIB,
            function_cache_bytes: 2 * GIB,
            memory_cache_entries: 256,
            instance_slots: 64,
            compiler: CompilerCommand::sibling(),
        }
    }
}

impl SandboxConfig {
    /// The largest binary [`Sandbox::load`](crate::Sandbox::load) can
    /// accept: a component's limit or a module's, whichever is larger.
    /// What an upload or a blob read may be bounded by before the binary's
    /// kind is known.
    pub fn max_binary_bytes(&self) -> usize {
        self.max_module_bytes.max(self.max_component_bytes)
    }

    /// The default configuration, with what an operator sets in the
    /// environment: the bounds of the disk caches,
    /// [`COMPILE_CACHE_BYTES_VAR`] (`ARBITER_COMPILE_CACHE_BYTES`) and
    /// [`FUNCTION_CACHE_BYTES_VAR`] (`ARBITER_FUNCTION_CACHE_BYTES`), each a
    /// number of bytes with an optional binary unit (`4G`, `512MiB`,
    /// `1073741824`). An unset or empty variable leaves the default; a
    /// malformed one is [`SandboxError::Config`](crate::SandboxError),
    /// naming it.
    pub fn from_env() -> Result<SandboxConfig, crate::SandboxError> {
        let mut config = SandboxConfig::default();
        let read = |name: &str| -> Result<Option<u64>, crate::SandboxError> {
            match std::env::var(name) {
                Ok(value) if value.trim().is_empty() => Ok(None),
                Ok(value) => parse_bytes(&value).map(Some).ok_or_else(|| {
                    crate::SandboxError::Config(format!(
                        "{name}={value:?} is not a number of bytes (e.g. 4G, 512MiB or 1073741824)"
                    ))
                }),
                Err(std::env::VarError::NotPresent) => Ok(None),
                Err(std::env::VarError::NotUnicode(_)) => Err(crate::SandboxError::Config(format!(
                    "{name} is not a number of bytes (not UTF-8)"
                ))),
            }
        };
        if let Some(bytes) = read(COMPILE_CACHE_BYTES_VAR)? {
            config.compile_cache_bytes = bytes;
        }
        if let Some(bytes) = read(FUNCTION_CACHE_BYTES_VAR)? {
            config.function_cache_bytes = bytes;
        }
        Ok(config)
    }
}

/// A number of bytes with an optional binary unit: `K`, `M`, `G`, `T`, each
/// optionally followed by `iB` or `B` (all powers of 1024), case-insensitive
/// and optionally after a space. `None` when malformed or past `u64`.
pub(crate) fn parse_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let digits = text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len());
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let unit = unit.trim_start().to_ascii_lowercase();
    let unit = unit
        .strip_suffix("ib")
        .or_else(|| unit.strip_suffix('b'))
        .unwrap_or(&unit);
    let shift = match unit {
        "" => 0,
        "k" => 10,
        "m" => 20,
        "g" => 30,
        "t" => 40,
        _ => return None,
    };
    number.checked_mul(1u64 << shift)
}

/// The hidden subcommand under which a bigger binary (the `arbiter` command
/// line) runs [`compiler_child_main`](crate::compiler_child_main) as its
/// first argument; see [`CompilerCommand::embedded_in`].
pub const EMBEDDED_COMPILER_SUBCOMMAND: &str = "__compile-module";

/// The command that runs [`compiler_child_main`](crate::compiler_child_main)
/// in a child process.
///
/// The child reads the module on stdin; its settings and output path come in
/// environment variables, so `args` can hold e.g. a hidden subcommand of a
/// bigger binary that then calls `compiler_child_main`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompilerCommand {
    /// Executable to run.
    pub program: PathBuf,
    /// Arguments passed to it.
    pub args: Vec<OsString>,
}

impl CompilerCommand {
    /// The `arbiter-compile` executable in the directory of the current
    /// executable, or in its parent directory (where Cargo puts binaries when
    /// the current executable is a test in `deps/`).
    pub fn sibling() -> Self {
        let name = format!("arbiter-compile{}", std::env::consts::EXE_SUFFIX);
        let exe = std::env::current_exe().ok();
        let dir = exe.as_deref().and_then(|e| e.parent());
        let program = dir
            .into_iter()
            .flat_map(|d| [Some(d), d.parent()])
            .flatten()
            .map(|d| d.join(&name))
            .find(|p| p.is_file())
            .unwrap_or_else(|| PathBuf::from(&name));
        CompilerCommand {
            program,
            args: Vec::new(),
        }
    }

    /// `program` run with [`EMBEDDED_COMPILER_SUBCOMMAND`]: a binary that
    /// answers that first argument with
    /// [`compiler_child_main`](crate::compiler_child_main).
    pub fn embedded_in(program: impl Into<PathBuf>) -> Self {
        CompilerCommand::new(program, [EMBEDDED_COMPILER_SUBCOMMAND])
    }

    /// A command running `program` with `args`.
    pub fn new(program: impl Into<PathBuf>, args: impl IntoIterator<Item = impl Into<OsString>>) -> Self {
        CompilerCommand {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
        }
    }
}

/// Settings that change generated code: the parent and the compiler child
/// must build identical engines from them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CodegenSettings {
    pub(crate) max_wasm_stack: usize,
}

impl CodegenSettings {
    pub(crate) fn to_env(self) -> String {
        format!("max_wasm_stack={}", self.max_wasm_stack)
    }

    pub(crate) fn from_env(s: &str) -> Option<Self> {
        let mut max_wasm_stack = None;
        for part in s.split(',') {
            let (k, v) = part.split_once('=')?;
            match k {
                "max_wasm_stack" => max_wasm_stack = v.parse().ok(),
                _ => return None,
            }
        }
        Some(CodegenSettings {
            max_wasm_stack: max_wasm_stack?,
        })
    }
}

/// The wasmtime configuration shared by the parent (which adds the pooling
/// allocator) and the compiler child.
pub(crate) fn engine_config(s: CodegenSettings) -> wasmtime::Config {
    let mut c = wasmtime::Config::new();
    c.consume_fuel(true)
        .wasm_component_model(true)
        .cranelift_nan_canonicalization(true)
        .wasm_relaxed_simd(false)
        .relaxed_simd_deterministic(true)
        .wasm_multi_memory(false)
        .wasm_memory64(false)
        .wasm_custom_page_sizes(false)
        .max_wasm_stack(s.max_wasm_stack)
        // Host calls run on the same fiber stack as the wasm code; give them
        // room beyond the wasm stack limit.
        .async_stack_size(s.max_wasm_stack + MIB)
        .cranelift_opt_level(wasmtime::OptLevel::Speed);
    c.operator_cost(operator_cost());
    c
}

/// Which schedule of fuel charges the sandbox applies: raised whenever what
/// a bot is charged for anything changes (an operator, a host call, a grow),
/// since the same bot then spends other fuel and a match may end otherwise.
/// Replays name it in their engine, so a replay is only re-run by a program
/// that charges as the one that recorded it.
///
/// Schedule 2: grows at [`GROW_FUEL`], host calls at 4 000, WASI 0.2
/// resource drops charged as calls. Schedule 1 (unnamed in replays, which
/// said only `arbiter VERSION`): grows at 1, host calls at 1 000.
pub const FUEL_SCHEDULE: u32 = 2;

/// Fuel of every `memory.grow` and `table.grow`, successful or not, on top
/// of what they cost per page or element: the most an operator may cost
/// (wasmtime keeps operator costs in a byte).
///
/// A grow is a call into the host (wasmtime's libcall and the store's
/// [`ResourceLimiter`](wasmtime::ResourceLimiter)) even when it fails at the
/// limit, so a loop of failing grows did host work for next to no fuel:
/// 45–120 ns of host work per grow (a test build) for 3 fuel, 0.03–0.07
/// fuel per nanosecond, and the wall-clock backstop stopped it instead of
/// the fuel clock. At this cost such a loop burns 2.1–5.7 fuel per
/// nanosecond, faster than the slowest plain code (0.7–1.8)
/// (`cargo bench -p arbiter-sandbox --bench host_costs`). A successful grow
/// costs the host more (about 1.4 µs) but is bounded by the memory limit:
/// at most 4 096 per instance.
pub(crate) const GROW_FUEL: u8 = u8::MAX;

/// Fuel per WebAssembly operator: wasmtime's flat costs (one per operator,
/// none for `nop`, `drop` and structured control flow), plus one per byte or
/// element for the bulk memory and table instructions, so that no
/// instruction does work in proportion to an operand without burning fuel in
/// proportion too. This is what lets the backstop read the clock only
/// between fuel chunks (`sandbox/tests/all/hostile.rs` has a bot for each).
/// `memory.grow` and `table.grow` cost [`GROW_FUEL`] each, whether they
/// succeed or not, and `table.grow` one more per element; successful
/// memory growth is bounded by the memory limit, so its pages cost nothing
/// more.
fn operator_cost() -> wasmtime::OperatorCost {
    let mut cost = wasmtime::OperatorCost::new();
    cost.MemoryGrow = GROW_FUEL;
    cost.TableGrow = GROW_FUEL;
    let v = &mut cost.variable;
    v.memory_copy_per_byte = 1;
    v.memory_fill_per_byte = 1;
    v.memory_init_per_byte = 1;
    v.memory_grow_per_page = 0;
    v.table_copy_per_element = 1;
    v.table_fill_per_element = 1;
    v.table_init_per_element = 1;
    v.table_grow_per_element = 1;
    cost
}

#[cfg(test)]
mod tests {
    use super::parse_bytes;

    #[test]
    fn sizes_read_with_binary_units() {
        assert_eq!(parse_bytes("1073741824"), Some(1 << 30));
        assert_eq!(parse_bytes("4G"), Some(4 << 30));
        assert_eq!(parse_bytes(" 512 MiB "), Some(512 << 20));
        assert_eq!(parse_bytes("64kb"), Some(64 << 10));
        assert_eq!(parse_bytes("0"), Some(0));
        for bad in ["", "G", "-1", "1.5G", "4 gigs", "99999999999T"] {
            assert_eq!(parse_bytes(bad), None, "{bad}");
        }
    }
}
