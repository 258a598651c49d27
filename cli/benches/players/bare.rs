//! A house module under a bare host, for section (e) of the players bench:
//! where a sandboxed turn's time goes.
//!
//! The host here is the least a WASI bot needs: synchronous calls, the
//! side's whole game as stdin from the start (so the bot never pauses
//! between turns), a clock stuck at zero, zeros for random bytes, no limits
//! and no fuel accounting. The engine is the sandbox's own
//! ([`arbiter_sandbox::engine`]: its code generation and pooling
//! allocator), so compiled code and starting and dropping instances cost
//! the same. With fuel metering off it measures the compiled code alone;
//! with it on (an endless tank) it adds what metering costs the code. The
//! sandbox's own share is what is left of a sandboxed turn.

use arbiter_sandbox::SandboxConfig;
use wasmtime::{Caller, Engine, InstancePre, Linker, Memory, Module, Store};

const WASI: &str = "wasi_snapshot_preview1";

/// A module ready to run games under the bare host.
pub struct BareHost {
    engine: Engine,
    pre: InstancePre<Bare>,
    fuel: bool,
}

/// A store's data: stdin, and the lines written to stdout.
struct Bare {
    stdin: Vec<u8>,
    read: usize,
    stdout: Vec<u8>,
    memory: Option<Memory>,
}

/// `proc_exit` was called.
#[derive(Debug)]
struct Exit(i32);

impl std::fmt::Display for Exit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "exit({})", self.0)
    }
}

impl std::error::Error for Exit {}

impl BareHost {
    /// Compiles `wasm` in this process with the default sandbox's engine,
    /// fuel metering on or off.
    pub fn new(wasm: &[u8], fuel: bool) -> wasmtime::Result<BareHost> {
        let engine = arbiter_sandbox::engine(&SandboxConfig::default(), |config| {
            config.consume_fuel(fuel);
        })?;
        let module = Module::new(&engine, wasm)?;
        let mut linker = Linker::new(&engine);
        linker.func_wrap(WASI, "fd_read", fd_read)?;
        linker.func_wrap(WASI, "fd_write", fd_write)?;
        linker.func_wrap(
            WASI,
            "clock_time_get",
            |mut c: Caller<'_, Bare>, _id: i32, _precision: i64, out: i32| {
                write_bytes(&mut c, out, &0u64.to_le_bytes())
            },
        )?;
        linker.func_wrap(WASI, "random_get", |mut c: Caller<'_, Bare>, buf: i32, len: i32| {
            write_bytes(&mut c, buf, &vec![0; len as u32 as usize])
        })?;
        linker.func_wrap(
            WASI,
            "environ_sizes_get",
            |mut c: Caller<'_, Bare>, count: i32, size: i32| {
                write_bytes(&mut c, count, &0u32.to_le_bytes())?;
                write_bytes(&mut c, size, &0u32.to_le_bytes())
            },
        )?;
        linker.func_wrap(WASI, "environ_get", |_: Caller<'_, Bare>, _: i32, _: i32| 0i32)?;
        linker.func_wrap(
            WASI,
            "proc_exit",
            |_: Caller<'_, Bare>, code: i32| -> wasmtime::Result<()> { Err(wasmtime::Error::new(Exit(code))) },
        )?;
        let pre = linker.instantiate_pre(&module)?;
        Ok(BareHost { engine, pre, fuel })
    }

    /// Instantiates the module, runs `_start` over `stdin` until the bot
    /// exits at its end, and returns what it wrote to stdout.
    pub fn run(&self, stdin: &[u8]) -> wasmtime::Result<Vec<u8>> {
        let bare = Bare {
            stdin: stdin.to_vec(),
            read: 0,
            stdout: Vec::new(),
            memory: None,
        };
        let mut store = Store::new(&self.engine, bare);
        if self.fuel {
            store.set_fuel(u64::MAX)?;
        }
        let instance = self.pre.instantiate(&mut store)?;
        store.data_mut().memory = instance.get_memory(&mut store, "memory");
        let start = instance.get_typed_func::<(), ()>(&mut store, "_start")?;
        match start.call(&mut store, ()) {
            Ok(()) => {}
            Err(e) if matches!(e.downcast_ref::<Exit>(), Some(Exit(0))) => {}
            Err(e) => return Err(e),
        }
        Ok(std::mem::take(&mut store.data_mut().stdout))
    }
}

fn memory(c: &Caller<'_, Bare>) -> wasmtime::Result<Memory> {
    c.data()
        .memory
        .ok_or_else(|| wasmtime::format_err!("the module exports no memory"))
}

fn out_of_bounds() -> wasmtime::Error {
    wasmtime::format_err!("a pointer out of bounds")
}

fn write_bytes(c: &mut Caller<'_, Bare>, at: i32, bytes: &[u8]) -> wasmtime::Result<i32> {
    let mem = memory(c)?;
    let at = at as u32 as usize;
    mem.data_mut(c)
        .get_mut(at..at + bytes.len())
        .ok_or_else(out_of_bounds)?
        .copy_from_slice(bytes);
    Ok(0)
}

/// The `(pointer, length)` pairs of an iovec array.
fn iovecs(mem: &[u8], at: i32, count: i32) -> wasmtime::Result<Vec<(usize, usize)>> {
    (0..count as u32 as usize)
        .map(|i| {
            let at = at as u32 as usize + 8 * i;
            let field = |offset: usize| -> wasmtime::Result<usize> {
                let bytes = mem.get(at + offset..at + offset + 4).ok_or_else(out_of_bounds)?;
                Ok(u32::from_le_bytes(bytes.try_into()?) as usize)
            };
            Ok((field(0)?, field(4)?))
        })
        .collect()
}

fn fd_read(mut c: Caller<'_, Bare>, _fd: i32, iovs: i32, count: i32, nread: i32) -> wasmtime::Result<i32> {
    let mem = memory(&c)?;
    let (mem, bare) = mem.data_and_store_mut(&mut c);
    let mut total = 0;
    for (ptr, len) in iovecs(mem, iovs, count)? {
        let take = len.min(bare.stdin.len() - bare.read);
        mem.get_mut(ptr..ptr + take)
            .ok_or_else(out_of_bounds)?
            .copy_from_slice(&bare.stdin[bare.read..bare.read + take]);
        bare.read += take;
        total += take;
    }
    write_bytes(&mut c, nread, &(total as u32).to_le_bytes())
}

fn fd_write(mut c: Caller<'_, Bare>, fd: i32, iovs: i32, count: i32, nwritten: i32) -> wasmtime::Result<i32> {
    let mem = memory(&c)?;
    let (mem, bare) = mem.data_and_store_mut(&mut c);
    let mut total = 0;
    for (ptr, len) in iovecs(mem, iovs, count)? {
        let bytes = mem.get(ptr..ptr + len).ok_or_else(out_of_bounds)?;
        if fd == 1 {
            bare.stdout.extend_from_slice(bytes);
        }
        total += len;
    }
    write_bytes(&mut c, nwritten, &(total as u32).to_le_bytes())
}
