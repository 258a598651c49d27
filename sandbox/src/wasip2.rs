//! The WASI 0.2 host that command components get: the same line protocol,
//! clock, random stream and charges as the preview-1 host ([`crate::wasi`]),
//! seen through `wasi:io`, `wasi:cli`, `wasi:clocks` and `wasi:random`.
//!
//! - stdin is an input stream of the requests; reading it with nothing left
//!   to read is the bot's mistake ([`BadReplyReason::WaitedForInput`]), as
//!   for preview-1: a bot is paused in the write of its reply, and finds the
//!   next request there when it goes on.
//! - stdout and stderr are output streams; the line that answers a request
//!   pauses the bot inside that write.
//! - Clocks read virtual time; waiting on a clock pollable charges the time
//!   waited as fuel, so sleeping uses up a turn like computing does.
//! - `wasi:filesystem` has no preopened directory, so none of its functions
//!   can be reached; `wasi:sockets` links (Python's runtime imports all of
//!   it) but every call traps with a message that says sockets are not
//!   available. Anything else is refused when the component is checked
//!   ([`crate::component`]).

use rand_core::RngCore;
use wasmtime::component::{ComponentType, Lift, Linker, LinkerInstance, Lower, Resource, ResourceType};
use wasmtime::{Result, StoreContextMut};

use crate::error::{BadReplyReason, FaultKind};
use crate::io::lock;
use crate::wasi::{Abort, Exit, Host, charge, now_ns, write};

/// The version the host's interfaces are defined at; components importing
/// any other `0.2.x` find them by semver.
pub(crate) const WASI_VERSION: &str = "0.2.12";

/// Live resources a component may hold at once (streams and pollables).
pub(crate) const MAX_RESOURCES: usize = 10_000;

/// Largest `get-random-bytes` answer, in bytes.
const MAX_RANDOM_BYTES: u64 = 1 << 20;

/// `wasi:io/poll` pollable: what it waits for.
#[derive(Clone, Copy)]
pub(crate) enum Pollable {
    /// Input on stdin (or its end).
    Stdin,
    /// Always ready (output streams).
    Ready,
    /// The virtual clock reaching this many nanoseconds.
    Clock(u64),
}

/// `wasi:io/streams` input stream: stdin is the only one.
pub(crate) struct InputStream;

/// `wasi:io/streams` output stream: stdout or stderr.
#[derive(Clone, Copy)]
pub(crate) enum OutputStream {
    Stdout,
    Stderr,
}

/// `wasi:io/error` error: never made (no operation fails that way).
pub(crate) struct IoError;

/// `wasi:filesystem/types` descriptor: never made (no preopens).
pub(crate) struct Descriptor;

/// A resource of an interface whose functions all trap.
struct Unavailable;

/// `wasi:io/streams.stream-error`.
#[derive(ComponentType, Lift, Lower)]
#[component(variant)]
enum StreamError {
    #[component(name = "last-operation-failed")]
    LastOperationFailed(Resource<IoError>),
    #[component(name = "closed")]
    Closed,
}

/// `wasi:clocks/wall-clock.datetime`.
#[derive(ComponentType, Lift, Lower, Clone, Copy)]
#[component(record)]
struct Datetime {
    seconds: u64,
    nanoseconds: u32,
}

type Store<'a> = StoreContextMut<'a, Host>;

fn interface(name: &str) -> String {
    format!("{name}@{WASI_VERSION}")
}

/// Defines a resource whose handles live in the store's table. Dropping a
/// handle is a host call and is charged as one, like making it.
fn resource<T: Send + 'static>(inst: &mut LinkerInstance<'_, Host>, name: &str) -> Result<()> {
    inst.resource_async(name, ResourceType::host::<T>(), |mut store, rep| {
        Box::new(async move {
            store.data_mut().table.delete(Resource::<T>::new_own(rep))?;
            call(&mut store).await
        })
    })
}

/// Defines `name` as a function that traps with `why`.
fn unavailable(inst: &mut LinkerInstance<'_, Host>, interface: &str, name: &str, why: &'static str) -> Result<()> {
    let what = format!("{interface}#{name}");
    inst.func_new(name, move |_, _, _, _| Err(wasmtime::format_err!("{what}: {why}")))
}

fn push<T: Send + 'static>(s: &mut Store<'_>, value: T) -> Result<Resource<T>> {
    Ok(s.data_mut().table.push(value)?)
}

/// Charges one host call.
async fn call(s: &mut Store<'_>) -> Result<()> {
    let fuel = s.data().params.call_fuel;
    charge(s, fuel).await
}

fn waited_for_input() -> wasmtime::Error {
    wasmtime::Error::new(Abort(FaultKind::BadReply(BadReplyReason::WaitedForInput)))
}

/// Whether `p` is ready now.
fn ready(s: &Store<'_>, p: Pollable) -> bool {
    match p {
        Pollable::Stdin => {
            let g = lock(&s.data().io);
            g.stdin_pos < g.stdin.len() || g.closed
        }
        Pollable::Ready => true,
        Pollable::Clock(at) => now_ns(s) >= at,
    }
}

/// Waits until one of `polls` is ready: sleeps (charging the time) until
/// the earliest clock if none is; waiting for stdin alone is a fault.
async fn wait(s: &mut Store<'_>, polls: &[Pollable]) -> Result<()> {
    if polls.iter().any(|p| ready(s, *p)) {
        return Ok(());
    }
    let earliest = polls
        .iter()
        .filter_map(|p| match p {
            Pollable::Clock(at) => Some(*at),
            _ => None,
        })
        .min();
    let Some(at) = earliest else {
        return Err(waited_for_input());
    };
    let ns = at.saturating_sub(now_ns(s));
    let fuel = s.data().params.ns_to_fuel(ns);
    // Rounding: the sleep ends when the clock has reached `at`.
    let fuel = if s.data().params.fuel_to_ns(fuel) < ns {
        fuel + 1
    } else {
        fuel
    };
    charge(s, fuel).await
}

/// Reads up to `len` bytes of stdin; `blocking` makes an empty stdin a fault
/// rather than an empty answer.
async fn read(s: &mut Store<'_>, len: u64, blocking: bool, keep: bool) -> Result<Result<Vec<u8>, StreamError>> {
    call(s).await?;
    let byte_fuel = s.data().params.byte_fuel;
    let mut g = lock(&s.data().io);
    let avail = g.stdin.len() - g.stdin_pos;
    if avail == 0 {
        return if g.closed {
            Ok(Err(StreamError::Closed))
        } else if blocking {
            Err(waited_for_input())
        } else {
            Ok(Ok(Vec::new()))
        };
    }
    let take = usize::try_from(len).unwrap_or(usize::MAX).min(avail);
    let from = g.stdin_pos;
    let bytes = if keep {
        g.stdin[from..from + take].to_vec()
    } else {
        vec![0; take]
    };
    g.stdin_pos += take;
    g.charge(take as u64 * byte_fuel);
    Ok(Ok(bytes))
}

/// Writes `data` to `stream` (pausing after a reply line).
async fn write_to(s: &mut Store<'_>, stream: &Resource<OutputStream>, data: &[u8]) -> Result<Result<(), StreamError>> {
    let fd = match s.data().table.get(stream)? {
        OutputStream::Stdout => 1,
        OutputStream::Stderr => 2,
    };
    Ok(write(s, fd, data).await?.map(|_| ()).map_err(|_| StreamError::Closed))
}

/// Writes `len` zero bytes (at most one write's worth) to `stream`.
async fn write_zeroes(s: &mut Store<'_>, stream: &Resource<OutputStream>, len: u64) -> Result<Result<(), StreamError>> {
    let cap = s.data().params.write_cap();
    let zeroes = vec![0; usize::try_from(len).unwrap_or(usize::MAX).min(cap)];
    write_to(s, stream, &zeroes).await
}

macro_rules! def {
    ($inst:ident, $name:literal, |$s:ident $(, $arg:ident : $ty:ty)*| $body:expr) => {
        $inst.func_wrap_async($name, |mut $s: Store<'_>, ($($arg,)*): ($($ty,)*)| {
            Box::new(async move { $body })
        })?;
    };
}

fn io(linker: &mut Linker<Host>) -> Result<()> {
    let mut inst = linker.instance(&interface("wasi:io/error"))?;
    resource::<IoError>(&mut inst, "error")?;
    def!(inst, "[method]error.to-debug-string", |s, _e: Resource<IoError>| {
        call(&mut s).await?;
        Ok((String::from("error"),))
    });

    let mut inst = linker.instance(&interface("wasi:io/poll"))?;
    resource::<Pollable>(&mut inst, "pollable")?;
    def!(inst, "[method]pollable.ready", |s, p: Resource<Pollable>| {
        call(&mut s).await?;
        let p = *s.data().table.get(&p)?;
        Ok((ready(&s, p),))
    });
    def!(inst, "[method]pollable.block", |s, p: Resource<Pollable>| {
        call(&mut s).await?;
        let p = *s.data().table.get(&p)?;
        wait(&mut s, &[p]).await
    });
    def!(inst, "poll", |s, list: Vec<Resource<Pollable>>| {
        let cost = {
            let p = &s.data().params;
            p.call_fuel + list.len() as u64 * 8 * p.byte_fuel
        };
        charge(&mut s, cost).await?;
        if list.is_empty() {
            return Err(wasmtime::format_err!(
                "wasi:io/poll#poll: an empty list never becomes ready"
            ));
        }
        let polls = list
            .iter()
            .map(|p| s.data().table.get(p).copied())
            .collect::<Result<Vec<_>, _>>()?;
        wait(&mut s, &polls).await?;
        let ready: Vec<u32> = (0..)
            .zip(&polls)
            .filter(|(_, p)| ready(&s, **p))
            .map(|(i, _)| i)
            .collect();
        Ok((ready,))
    });

    let mut inst = linker.instance(&interface("wasi:io/streams"))?;
    resource::<InputStream>(&mut inst, "input-stream")?;
    resource::<OutputStream>(&mut inst, "output-stream")?;
    def!(
        inst,
        "[method]input-stream.read",
        |s, _i: Resource<InputStream>, len: u64| Ok((read(&mut s, len, false, true).await?,))
    );
    def!(
        inst,
        "[method]input-stream.blocking-read",
        |s, _i: Resource<InputStream>, len: u64| Ok((read(&mut s, len, true, true).await?,))
    );
    def!(
        inst,
        "[method]input-stream.skip",
        |s, _i: Resource<InputStream>, len: u64| {
            Ok((read(&mut s, len, false, false).await?.map(|b| b.len() as u64),))
        }
    );
    def!(
        inst,
        "[method]input-stream.blocking-skip",
        |s, _i: Resource<InputStream>, len: u64| {
            Ok((read(&mut s, len, true, false).await?.map(|b| b.len() as u64),))
        }
    );
    def!(
        inst,
        "[method]input-stream.subscribe",
        |s, _i: Resource<InputStream>| {
            call(&mut s).await?;
            Ok((push(&mut s, Pollable::Stdin)?,))
        }
    );
    def!(inst, "[method]output-stream.check-write", |s,
                                                     _o: Resource<
        OutputStream,
    >| {
        call(&mut s).await?;
        let cap = s.data().params.write_cap() as u64;
        Ok((Ok::<u64, StreamError>(cap),))
    });
    def!(
        inst,
        "[method]output-stream.write",
        |s, o: Resource<OutputStream>, data: Vec<u8>| Ok((write_to(&mut s, &o, &data).await?,))
    );
    def!(inst, "[method]output-stream.blocking-write-and-flush", |s,
                                                                  o: Resource<
        OutputStream,
    >,
                                                                  data: Vec<
        u8,
    >| {
        Ok((write_to(&mut s, &o, &data).await?,))
    });
    def!(inst, "[method]output-stream.flush", |s, _o: Resource<OutputStream>| {
        call(&mut s).await?;
        Ok((Ok::<(), StreamError>(()),))
    });
    def!(inst, "[method]output-stream.blocking-flush", |s,
                                                        _o: Resource<
        OutputStream,
    >| {
        call(&mut s).await?;
        Ok((Ok::<(), StreamError>(()),))
    });
    def!(
        inst,
        "[method]output-stream.subscribe",
        |s, _o: Resource<OutputStream>| {
            call(&mut s).await?;
            Ok((push(&mut s, Pollable::Ready)?,))
        }
    );
    def!(
        inst,
        "[method]output-stream.write-zeroes",
        |s, o: Resource<OutputStream>, len: u64| Ok((write_zeroes(&mut s, &o, len).await?,))
    );
    def!(
        inst,
        "[method]output-stream.blocking-write-zeroes-and-flush",
        |s, o: Resource<OutputStream>, len: u64| Ok((write_zeroes(&mut s, &o, len).await?,))
    );
    for name in ["[method]output-stream.splice", "[method]output-stream.blocking-splice"] {
        unavailable(
            &mut inst,
            "wasi:io/streams",
            name,
            "splicing streams is not available to bots",
        )?;
    }
    Ok(())
}

fn cli(linker: &mut Linker<Host>) -> Result<()> {
    let mut inst = linker.instance(&interface("wasi:cli/environment"))?;
    def!(inst, "get-environment", |s| {
        let vars = s.data().params.vars.clone();
        let bytes: usize = vars.iter().map(|(k, v)| k.len() + v.len()).sum();
        let cost = {
            let p = &s.data().params;
            p.call_fuel + bytes as u64 * p.byte_fuel
        };
        charge(&mut s, cost).await?;
        Ok((vars,))
    });
    def!(inst, "get-arguments", |s| {
        call(&mut s).await?;
        Ok((vec![String::from("bot")],))
    });
    def!(inst, "initial-cwd", |s| {
        call(&mut s).await?;
        Ok((None::<String>,))
    });

    let mut inst = linker.instance(&interface("wasi:cli/exit"))?;
    inst.func_wrap("exit", |_s: Store<'_>, (status,): (Result<(), ()>,)| {
        Err::<(), _>(wasmtime::Error::new(Exit(if status.is_ok() { 0 } else { 1 })))
    })?;
    inst.func_wrap("exit-with-code", |_s: Store<'_>, (code,): (u8,)| {
        Err::<(), _>(wasmtime::Error::new(Exit(i32::from(code))))
    })?;

    let mut inst = linker.instance(&interface("wasi:cli/stdin"))?;
    def!(inst, "get-stdin", |s| {
        call(&mut s).await?;
        Ok((push(&mut s, InputStream)?,))
    });
    let mut inst = linker.instance(&interface("wasi:cli/stdout"))?;
    def!(inst, "get-stdout", |s| {
        call(&mut s).await?;
        Ok((push(&mut s, OutputStream::Stdout)?,))
    });
    let mut inst = linker.instance(&interface("wasi:cli/stderr"))?;
    def!(inst, "get-stderr", |s| {
        call(&mut s).await?;
        Ok((push(&mut s, OutputStream::Stderr)?,))
    });

    // Not a terminal: the terminal functions answer `none`.
    let mut inst = linker.instance(&interface("wasi:cli/terminal-input"))?;
    resource::<TerminalInput>(&mut inst, "terminal-input")?;
    let mut inst = linker.instance(&interface("wasi:cli/terminal-output"))?;
    resource::<TerminalOutput>(&mut inst, "terminal-output")?;
    let mut inst = linker.instance(&interface("wasi:cli/terminal-stdin"))?;
    def!(inst, "get-terminal-stdin", |s| {
        call(&mut s).await?;
        Ok((None::<Resource<TerminalInput>>,))
    });
    for (name, func) in [
        ("wasi:cli/terminal-stdout", "get-terminal-stdout"),
        ("wasi:cli/terminal-stderr", "get-terminal-stderr"),
    ] {
        let mut inst = linker.instance(&interface(name))?;
        inst.func_wrap_async(func, |mut s: Store<'_>, (): ()| {
            Box::new(async move {
                call(&mut s).await?;
                Ok((None::<Resource<TerminalOutput>>,))
            })
        })?;
    }
    Ok(())
}

/// `wasi:cli/terminal-input` terminal: never made.
struct TerminalInput;
/// `wasi:cli/terminal-output` terminal: never made.
struct TerminalOutput;

fn clocks(linker: &mut Linker<Host>) -> Result<()> {
    let mut inst = linker.instance(&interface("wasi:clocks/monotonic-clock"))?;
    def!(inst, "now", |s| {
        call(&mut s).await?;
        Ok((now_ns(&s),))
    });
    def!(inst, "resolution", |s| {
        call(&mut s).await?;
        Ok((1u64,))
    });
    def!(inst, "subscribe-instant", |s, at: u64| {
        call(&mut s).await?;
        Ok((push(&mut s, Pollable::Clock(at))?,))
    });
    def!(inst, "subscribe-duration", |s, ns: u64| {
        call(&mut s).await?;
        let at = now_ns(&s).saturating_add(ns);
        Ok((push(&mut s, Pollable::Clock(at))?,))
    });

    let mut inst = linker.instance(&interface("wasi:clocks/wall-clock"))?;
    def!(inst, "now", |s| {
        call(&mut s).await?;
        let ns = now_ns(&s);
        Ok((Datetime {
            seconds: ns / 1_000_000_000,
            nanoseconds: (ns % 1_000_000_000) as u32,
        },))
    });
    def!(inst, "resolution", |s| {
        call(&mut s).await?;
        Ok((Datetime {
            seconds: 0,
            nanoseconds: 1,
        },))
    });
    Ok(())
}

/// `len` bytes of the bot's random stream (the one preview-1's
/// `random_get` reads), charged like a read of that many bytes.
async fn random_bytes(s: &mut Store<'_>, len: u64) -> Result<Vec<u8>> {
    if len > MAX_RANDOM_BYTES {
        return Err(wasmtime::format_err!(
            "wasi:random: asked for {len} random bytes at once; at most {MAX_RANDOM_BYTES} are given"
        ));
    }
    let cost = {
        let p = &s.data().params;
        p.call_fuel + len * p.byte_fuel
    };
    charge(s, cost).await?;
    let mut bytes = vec![0; len as usize];
    lock(&s.data().io).rng.fill_bytes(&mut bytes);
    Ok(bytes)
}

async fn random_u64(s: &mut Store<'_>) -> Result<u64> {
    let bytes = random_bytes(s, 8).await?;
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes);
    Ok(u64::from_le_bytes(word))
}

fn random(linker: &mut Linker<Host>) -> Result<()> {
    let mut inst = linker.instance(&interface("wasi:random/random"))?;
    def!(inst, "get-random-bytes", |s, len: u64| Ok((
        random_bytes(&mut s, len).await?,
    )));
    def!(inst, "get-random-u64", |s| Ok((random_u64(&mut s).await?,)));
    let mut inst = linker.instance(&interface("wasi:random/insecure"))?;
    def!(inst, "get-insecure-random-bytes", |s, len: u64| Ok((random_bytes(
        &mut s, len
    )
    .await?,)));
    def!(inst, "get-insecure-random-u64", |s| Ok((random_u64(&mut s).await?,)));
    let mut inst = linker.instance(&interface("wasi:random/insecure-seed"))?;
    def!(inst, "insecure-seed", |s| {
        let a = random_u64(&mut s).await?;
        let b = random_u64(&mut s).await?;
        Ok(((a, b),))
    });
    Ok(())
}

/// `wasi:filesystem/types` functions and resources other than `descriptor`
/// (unreachable without a descriptor, or only useful with one).
const FILESYSTEM_TYPES: &[&str] = &[
    "[method]descriptor.read-via-stream",
    "[method]descriptor.write-via-stream",
    "[method]descriptor.append-via-stream",
    "[method]descriptor.advise",
    "[method]descriptor.sync-data",
    "[method]descriptor.get-flags",
    "[method]descriptor.get-type",
    "[method]descriptor.set-size",
    "[method]descriptor.set-times",
    "[method]descriptor.read",
    "[method]descriptor.write",
    "[method]descriptor.read-directory",
    "[method]descriptor.sync",
    "[method]descriptor.create-directory-at",
    "[method]descriptor.stat",
    "[method]descriptor.stat-at",
    "[method]descriptor.set-times-at",
    "[method]descriptor.link-at",
    "[method]descriptor.open-at",
    "[method]descriptor.readlink-at",
    "[method]descriptor.remove-directory-at",
    "[method]descriptor.rename-at",
    "[method]descriptor.symlink-at",
    "[method]descriptor.unlink-file-at",
    "[method]descriptor.is-same-object",
    "[method]descriptor.metadata-hash",
    "[method]descriptor.metadata-hash-at",
    "[method]directory-entry-stream.read-directory-entry",
    "filesystem-error-code",
];

/// Every `wasi:sockets` interface: its resources and functions.
const SOCKETS: &[(&str, &[&str], &[&str])] = &[
    ("network", &["network"], &["network-error-code"]),
    ("instance-network", &[], &["instance-network"]),
    (
        "ip-name-lookup",
        &["resolve-address-stream"],
        &[
            "[method]resolve-address-stream.resolve-next-address",
            "[method]resolve-address-stream.subscribe",
            "resolve-addresses",
        ],
    ),
    (
        "tcp",
        &["tcp-socket"],
        &[
            "[method]tcp-socket.start-bind",
            "[method]tcp-socket.finish-bind",
            "[method]tcp-socket.start-connect",
            "[method]tcp-socket.finish-connect",
            "[method]tcp-socket.start-listen",
            "[method]tcp-socket.finish-listen",
            "[method]tcp-socket.accept",
            "[method]tcp-socket.local-address",
            "[method]tcp-socket.remote-address",
            "[method]tcp-socket.is-listening",
            "[method]tcp-socket.address-family",
            "[method]tcp-socket.set-listen-backlog-size",
            "[method]tcp-socket.keep-alive-enabled",
            "[method]tcp-socket.set-keep-alive-enabled",
            "[method]tcp-socket.keep-alive-idle-time",
            "[method]tcp-socket.set-keep-alive-idle-time",
            "[method]tcp-socket.keep-alive-interval",
            "[method]tcp-socket.set-keep-alive-interval",
            "[method]tcp-socket.keep-alive-count",
            "[method]tcp-socket.set-keep-alive-count",
            "[method]tcp-socket.hop-limit",
            "[method]tcp-socket.set-hop-limit",
            "[method]tcp-socket.receive-buffer-size",
            "[method]tcp-socket.set-receive-buffer-size",
            "[method]tcp-socket.send-buffer-size",
            "[method]tcp-socket.set-send-buffer-size",
            "[method]tcp-socket.subscribe",
            "[method]tcp-socket.shutdown",
        ],
    ),
    ("tcp-create-socket", &[], &["create-tcp-socket"]),
    (
        "udp",
        &["udp-socket", "incoming-datagram-stream", "outgoing-datagram-stream"],
        &[
            "[method]udp-socket.start-bind",
            "[method]udp-socket.finish-bind",
            "[method]udp-socket.stream",
            "[method]udp-socket.local-address",
            "[method]udp-socket.remote-address",
            "[method]udp-socket.address-family",
            "[method]udp-socket.unicast-hop-limit",
            "[method]udp-socket.set-unicast-hop-limit",
            "[method]udp-socket.receive-buffer-size",
            "[method]udp-socket.set-receive-buffer-size",
            "[method]udp-socket.send-buffer-size",
            "[method]udp-socket.set-send-buffer-size",
            "[method]udp-socket.subscribe",
            "[method]incoming-datagram-stream.receive",
            "[method]incoming-datagram-stream.subscribe",
            "[method]outgoing-datagram-stream.check-send",
            "[method]outgoing-datagram-stream.send",
            "[method]outgoing-datagram-stream.subscribe",
        ],
    ),
    ("udp-create-socket", &[], &["create-udp-socket"]),
];

fn filesystem(linker: &mut Linker<Host>) -> Result<()> {
    let mut inst = linker.instance(&interface("wasi:filesystem/types"))?;
    resource::<Descriptor>(&mut inst, "descriptor")?;
    resource::<Unavailable>(&mut inst, "directory-entry-stream")?;
    for name in FILESYSTEM_TYPES {
        unavailable(&mut inst, "wasi:filesystem/types", name, "bots have no files")?;
    }
    let mut inst = linker.instance(&interface("wasi:filesystem/preopens"))?;
    def!(inst, "get-directories", |s| {
        call(&mut s).await?;
        Ok((Vec::<(Resource<Descriptor>, String)>::new(),))
    });
    Ok(())
}

fn sockets(linker: &mut Linker<Host>) -> Result<()> {
    for (name, resources, funcs) in SOCKETS {
        let full = format!("wasi:sockets/{name}");
        let mut inst = linker.instance(&interface(&full))?;
        for r in *resources {
            inst.resource(r, ResourceType::host::<Unavailable>(), |_, _| Ok(()))?;
        }
        for f in *funcs {
            unavailable(&mut inst, &full, f, "bots have no sockets")?;
        }
    }
    Ok(())
}

/// The interfaces (name without version) a component may import.
pub(crate) fn allowed(interface: &str) -> bool {
    const ALLOWED: &[&str] = &[
        "wasi:io/error",
        "wasi:io/poll",
        "wasi:io/streams",
        "wasi:cli/environment",
        "wasi:cli/exit",
        "wasi:cli/stdin",
        "wasi:cli/stdout",
        "wasi:cli/stderr",
        "wasi:cli/terminal-input",
        "wasi:cli/terminal-output",
        "wasi:cli/terminal-stdin",
        "wasi:cli/terminal-stdout",
        "wasi:cli/terminal-stderr",
        "wasi:clocks/monotonic-clock",
        "wasi:clocks/wall-clock",
        "wasi:random/random",
        "wasi:random/insecure",
        "wasi:random/insecure-seed",
        "wasi:filesystem/types",
        "wasi:filesystem/preopens",
    ];
    ALLOWED.contains(&interface)
        || interface
            .strip_prefix("wasi:sockets/")
            .is_some_and(|n| SOCKETS.iter().any(|(s, _, _)| *s == n))
}

/// Defines every interface [`allowed`] names.
pub(crate) fn add_to_linker(linker: &mut Linker<Host>) -> Result<()> {
    io(linker)?;
    cli(linker)?;
    clocks(linker)?;
    random(linker)?;
    filesystem(linker)?;
    sockets(linker)?;
    Ok(())
}
