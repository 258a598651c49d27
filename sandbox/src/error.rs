//! Where each error type belongs:
//!
//! - [`ModuleError`]: checking or loading a module. Most variants are the
//!   bot author's to fix (shown to them as they are); [`ModuleError::Host`]
//!   is the host's failure (log it, show a generic message).
//! - [`SandboxError`]: the host could not build a sandbox or an instance.
//!   Never the bot's fault.
//! - [`TurnFault`] / [`FaultKind`]: what a bot did wrong during a turn. Always
//!   the bot's fault and never harmful to the host.

use std::fmt;

/// Why a module was refused, or why loading it failed on the host's side.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModuleError {
    /// The module is larger than `max_module_bytes`.
    #[error("module is {size} bytes; the limit is {limit} bytes")]
    TooLarge {
        /// Size of the module.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The bytes are not a WebAssembly binary.
    #[error("not a WebAssembly module (a .wasm file starts with the bytes \\0asm)")]
    NotWasm,
    /// The binary is a component of another layer than WASI 0.2 (e.g. a
    /// component-model draft).
    #[error(
        "unsupported component binary (layer {layer}); bots are WASI preview 1 modules or WASI 0.2 command components"
    )]
    ComponentLayer {
        /// The binary's layer and version fields.
        layer: u32,
    },
    /// A component imports an interface the host does not provide.
    #[error("component imports `{name}`, which bots cannot use{}", hint.map(|h| format!("; {h}")).unwrap_or_default())]
    ForbiddenInterface {
        /// The import's full name, e.g. `wasi:http/types@0.2.3`.
        name: String,
        /// How to build without it, when known.
        hint: Option<&'static str>,
    },
    /// A component does not export `wasi:cli/run@0.2.x`.
    #[error(
        "component exports no `wasi:cli/run@0.2.x`: bots must be WASI 0.2 command components (world `wasi:cli/command`)"
    )]
    MissingRun,
    /// The module does not validate.
    #[error("module is not valid WebAssembly: {0}")]
    Invalid(String),
    /// An import the host does not provide.
    #[error("import `{module}.{name}` is not provided: bots may import only wasi_snapshot_preview1 functions")]
    ForbiddenImport {
        /// Module name of the import.
        module: String,
        /// Field name of the import.
        name: String,
    },
    /// A WASI import with the wrong signature.
    #[error("import `wasi_snapshot_preview1.{name}` has type {found}; the host provides {expected}")]
    ImportSignature {
        /// The function's name.
        name: String,
        /// The signature the host provides.
        expected: String,
        /// The signature the module asks for.
        found: String,
    },
    /// No `_start` function export.
    #[error("module exports no `_start` function: bots must be WASI commands (a program with `main`)")]
    MissingStart,
    /// `_start` has parameters or results.
    #[error("export `_start` must take no parameters and return nothing")]
    StartSignature,
    /// No `memory` export.
    #[error("module exports no memory named `memory`")]
    MissingMemory,
    /// The module has a start section, which would run code while the host
    /// instantiates it.
    #[error("module has a start section; bots must do their work from `_start`")]
    StartSection,
    /// The module declares a shared memory (threads are not available).
    #[error("module declares a shared memory; threads are not available to bots")]
    SharedMemory,
    /// The module declares more than one memory or table.
    #[error("module declares {count} {what}; at most one is allowed")]
    TooMany {
        /// "memories" or "tables".
        what: &'static str,
        /// How many the module declares.
        count: usize,
    },
    /// A component is larger than `max_component_bytes`.
    #[error("component is {size} bytes; the limit is {limit} bytes")]
    ComponentTooLarge {
        /// Size of the component.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// A function body is larger than `max_function_body_bytes`.
    #[error("function {index} has a body of {size} bytes; the limit is {limit} bytes")]
    FunctionTooLarge {
        /// Function index (imports included).
        index: u32,
        /// Body size in bytes.
        size: usize,
        /// The configured limit.
        limit: usize,
    },
    /// The memory's declared minimum is above `max_memory_bytes`.
    #[error("memory needs at least {bytes} bytes; the limit is {limit} bytes")]
    MemoryTooLarge {
        /// Declared minimum in bytes.
        bytes: u64,
        /// The configured limit.
        limit: usize,
    },
    /// A table's declared minimum is above `max_table_elements`.
    #[error("table needs at least {elements} elements; the limit is {limit}")]
    TableTooLarge {
        /// Declared minimum.
        elements: u64,
        /// The configured limit.
        limit: usize,
    },
    /// Compilation used more than `compile_timeout` of CPU time.
    #[error("compilation took longer than {secs} s of CPU time; make the module (or its largest functions) smaller")]
    CompileTimeout {
        /// The limit in seconds.
        secs: u64,
    },
    /// Compilation needed more memory than `compile_memory_bytes`.
    #[error("compilation needed more than {mib} MiB of memory; make the module smaller")]
    CompileOutOfMemory {
        /// The limit in MiB.
        mib: u64,
    },
    /// The compiler refused the module.
    #[error("module failed to compile: {0}")]
    CompileFailed(String),
    /// The host failed (I/O, missing compiler executable, ...); not the
    /// module's fault. The text is for the host's log.
    #[error("internal error while loading the module: {0}")]
    Host(String),
}

impl ModuleError {
    /// True when the failure is the host's, not the module's: report it
    /// to the operator, not to the bot author.
    pub fn is_host_failure(&self) -> bool {
        matches!(self, ModuleError::Host(_))
    }

    /// Whole seconds of compiler CPU time the module is known to have
    /// used when it failed this way: the CPU limit for
    /// [`ModuleError::CompileTimeout`] (the child was stopped there, or
    /// after three times that in real time); `None` for a module refused
    /// before compiling, and for compiler failures whose cost is not
    /// measured (a caller accounting compile time may charge the real
    /// time the load took for those). A successful compile reports its CPU
    /// time in [`Compilation::cpu_seconds`](crate::Compilation::cpu_seconds).
    pub fn compile_cpu_seconds(&self) -> Option<u64> {
        match self {
            ModuleError::CompileTimeout { secs } => Some(*secs),
            _ => None,
        }
    }
}

/// The host could not build a sandbox or an instance. Never the bot's fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SandboxError {
    /// The configuration is not usable.
    #[error("invalid sandbox configuration: {0}")]
    Config(String),
    /// wasmtime refused to build the engine or an instance.
    #[error("wasmtime: {0}")]
    Wasmtime(String),
    /// All instance slots are in use (`instance_slots`).
    #[error("all {0} instance slots are in use")]
    NoInstanceSlot(u32),
    /// File-system failure (cache directory).
    #[error("{context}: {source}")]
    Io {
        /// What the host was doing.
        context: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
}

/// A turn that ended without a reply, and what it cost.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct TurnFault {
    /// What went wrong.
    pub kind: FaultKind,
    /// Fuel charged to this turn (at most the turn's budget).
    pub fuel_used: u64,
}

/// What a bot did wrong during a turn.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FaultKind {
    /// The bot used its whole fuel budget (computing or sleeping) without
    /// replying. It stays paused where it is; see
    /// [`BotInstance::turn`](crate::BotInstance::turn).
    #[error("ran out of time")]
    Timeout,
    /// The bot trapped, exited before replying, hit a limit or was stopped
    /// by the wall-clock backstop. Its instance is gone.
    #[error("crashed: {0}")]
    Crash(CrashReason),
    /// The bot broke the reply protocol. Its instance is gone.
    #[error("bad reply: {0}")]
    BadReply(BadReplyReason),
}

/// Why a bot crashed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CrashReason {
    /// A WebAssembly trap.
    #[error("trap: {0}")]
    Trap(TrapKind),
    /// The WebAssembly stack limit was exceeded (deep recursion).
    #[error("stack overflow (the stack limit is {limit} bytes)")]
    StackOverflow {
        /// The configured stack limit.
        limit: usize,
    },
    /// The bot trapped after a `memory.grow` or `table.grow` was refused for
    /// exceeding its limit (typically an allocation failure).
    #[error("out of memory: a memory or table grow beyond the limit was refused, then it trapped ({0})")]
    MemoryLimit(TrapKind),
    /// The bot exited (returned from `_start` or called `proc_exit`) before
    /// writing its reply.
    #[error("exited with code {code} before replying")]
    ExitBeforeReply {
        /// The exit code.
        code: i32,
    },
    /// The wall-clock backstop stopped it: it held the host far longer than
    /// its fuel budget allows. The match is not reproducible.
    #[error("stopped by the wall-clock backstop after {ms} ms")]
    Backstop {
        /// Real milliseconds allowed.
        ms: u64,
    },
    /// Restarting a bot that exited after replying failed for lack of host
    /// resources (an instance slot). Not the bot's fault.
    #[error("could not restart the bot: {0}")]
    RestartFailed(String),
}

/// Why a reply was not acceptable to the sandbox.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum BadReplyReason {
    /// More than `max_reply_bytes` on stdout without a newline.
    #[error("reply line longer than {limit} bytes")]
    LineTooLong {
        /// The configured limit.
        limit: usize,
    },
    /// The bot asked for more input after reading the whole request,
    /// without having replied.
    #[error("waited for input without replying")]
    WaitedForInput,
}

/// The kind of a WebAssembly trap.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum TrapKind {
    /// `unreachable` executed (Rust panics and aborts end here).
    Unreachable,
    /// Out-of-bounds memory access.
    MemoryOutOfBounds,
    /// Out-of-bounds table access.
    TableOutOfBounds,
    /// Indirect call to a null table entry.
    IndirectCallToNull,
    /// Indirect call with the wrong signature.
    BadSignature,
    /// Integer overflow (e.g. `i32.div_s` of `MIN` by -1).
    IntegerOverflow,
    /// Integer division by zero.
    IntegerDivisionByZero,
    /// Float to integer conversion out of range.
    BadConversionToInteger,
    /// Any other trap, described.
    Other(String),
}

impl fmt::Display for TrapKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrapKind::Unreachable => "`unreachable` executed (a panic or abort)",
            TrapKind::MemoryOutOfBounds => "out-of-bounds memory access",
            TrapKind::TableOutOfBounds => "out-of-bounds table access",
            TrapKind::IndirectCallToNull => "indirect call to a null function",
            TrapKind::BadSignature => "indirect call with the wrong signature",
            TrapKind::IntegerOverflow => "integer overflow",
            TrapKind::IntegerDivisionByZero => "integer division by zero",
            TrapKind::BadConversionToInteger => "invalid conversion to integer",
            TrapKind::Other(s) => s,
        })
    }
}

impl From<wasmtime::Trap> for TrapKind {
    fn from(t: wasmtime::Trap) -> Self {
        use wasmtime::Trap as T;
        match t {
            T::UnreachableCodeReached => TrapKind::Unreachable,
            T::MemoryOutOfBounds => TrapKind::MemoryOutOfBounds,
            T::TableOutOfBounds => TrapKind::TableOutOfBounds,
            T::IndirectCallToNull => TrapKind::IndirectCallToNull,
            T::BadSignature => TrapKind::BadSignature,
            T::IntegerOverflow => TrapKind::IntegerOverflow,
            T::IntegerDivisionByZero => TrapKind::IntegerDivisionByZero,
            T::BadConversionToInteger => TrapKind::BadConversionToInteger,
            other => TrapKind::Other(other.to_string()),
        }
    }
}
