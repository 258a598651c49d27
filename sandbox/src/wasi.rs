//! The WASI preview-1 subset bots get: stdin/stdout/stderr, args, environment,
//! virtual clocks, a seeded random stream, sleeping through `poll_oneoff`,
//! `proc_exit`. Everything else exists with its WASI signature and fails with
//! an error code (no files, no sockets), so programs built by common
//! toolchains link.
//!
//! Every call is charged fuel and may pause the bot (after its reply, or
//! when its budget ran out); see [`crate::io`].

use std::sync::{Arc, Mutex};

use rand_core::RngCore;
use wasmtime::component::ResourceTable;
use wasmtime::{AsContext, AsContextMut, Caller, Linker, Memory, ResourceLimiter, Result};

use crate::check::WASI_MODULE;
use crate::error::{BadReplyReason, FaultKind};
use crate::io::{Event, Io, Params, lock, next_turn};

// WASI errno values.
const SUCCESS: i32 = 0;
const EBADF: i32 = 8;
const EFAULT: i32 = 21;
const EINVAL: i32 = 28;
const ENOTSUP: i32 = 58;
const ESPIPE: i32 = 70;

/// Ends the bot's run with a fault (the instance is discarded).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct Abort(pub(crate) FaultKind);

/// `proc_exit` was called.
#[derive(Debug, thiserror::Error)]
#[error("exited with code {0}")]
pub(crate) struct Exit(pub(crate) i32);

/// Memory and table limits over every memory and table of a store (a
/// component has several core instances); remembers whether a grow was
/// refused.
pub(crate) struct Limiter {
    pub(crate) max_memory: usize,
    pub(crate) max_table: usize,
    /// Core instances, memories and tables a store may hold: 1 for a
    /// preview-1 module.
    pub(crate) max_items: usize,
    /// Bytes of linear memory and elements of tables in the store now.
    pub(crate) memory_total: usize,
    pub(crate) table_total: usize,
    pub(crate) refused: bool,
    /// Where the most memory the bot has had is kept.
    io: Arc<Mutex<Io>>,
}

impl Limiter {
    pub(crate) fn new(max_memory: usize, max_table: usize, max_items: usize, io: Arc<Mutex<Io>>) -> Limiter {
        Limiter {
            max_memory,
            max_table,
            max_items,
            memory_total: 0,
            table_total: 0,
            refused: false,
            io,
        }
    }
}

/// `total` after a grow from `current` to `desired`, if it stays within `max`.
fn grown(total: usize, current: usize, desired: usize, max: usize) -> Option<usize> {
    let after = total.checked_add(desired.checked_sub(current)?)?;
    (after <= max).then_some(after)
}

impl ResourceLimiter for Limiter {
    fn memory_growing(&mut self, current: usize, desired: usize, _max: Option<usize>) -> Result<bool> {
        let after = grown(self.memory_total, current, desired, self.max_memory);
        self.refused |= after.is_none();
        if let Some(after) = after {
            self.memory_total = after;
            note_memory(&self.io, after);
        }
        Ok(after.is_some())
    }

    fn table_growing(&mut self, current: usize, desired: usize, _max: Option<usize>) -> Result<bool> {
        let after = grown(self.table_total, current, desired, self.max_table);
        self.refused |= after.is_none();
        if let Some(after) = after {
            self.table_total = after;
        }
        Ok(after.is_some())
    }

    fn instances(&self) -> usize {
        self.max_items
    }

    fn tables(&self) -> usize {
        self.max_items
    }

    fn memories(&self) -> usize {
        self.max_items
    }
}

/// The data of a bot's store.
pub(crate) struct Host {
    pub(crate) io: Arc<Mutex<Io>>,
    pub(crate) params: Arc<Params>,
    pub(crate) limiter: Limiter,
    pub(crate) memory: Option<Memory>,
    /// Reused by every `fd_write` for the bytes written.
    pub(crate) write_buffer: Vec<u8>,
    /// A component's resources (streams, pollables); empty for a module.
    pub(crate) table: ResourceTable,
}

type Ctx<'a> = Caller<'a, Host>;

/// Syncs fuel, charges `cost` and, when the turn's budget is gone, pauses
/// the bot (reporting a timeout) until a turn with budget left starts.
pub(crate) async fn charge<S: AsContextMut<Data = Host>>(store: &mut S, cost: u64) -> Result<()> {
    let mut cx = store.as_context_mut();
    let left = cx.get_fuel()?;
    // The usual case, budget left: one lock, and the tank is refilled.
    let timed_out = {
        let mut g = lock(&cx.data().io);
        g.sync(left);
        g.charge(cost);
        match g.time_out_if_over() {
            Some(seq) => seq,
            None => {
                let (tank, chunk) = g.refill(&cx.data().params);
                drop(g);
                return refill(&mut cx, tank, chunk);
            }
        }
    };
    let io = cx.data().io.clone();
    let mut seq = Some(timed_out);
    while let Some(s) = seq {
        next_turn(&io, s).await;
        seq = lock(&io).time_out_if_over();
    }
    arm(store, &io)
}

/// Refills the tank for the rest of the turn.
pub(crate) fn arm<S: AsContextMut<Data = Host>>(store: &mut S, io: &Mutex<Io>) -> Result<()> {
    let mut cx = store.as_context_mut();
    let (tank, chunk) = lock(io).refill(&cx.data().params);
    refill(&mut cx, tank, chunk)
}

/// Puts `tank` fuel in the store, to be handed out in chunks of `chunk`.
fn refill<S: AsContextMut<Data = Host>>(store: &mut S, tank: u64, chunk: u64) -> Result<()> {
    let mut cx = store.as_context_mut();
    cx.fuel_async_yield_interval(Some(chunk))?;
    cx.set_fuel(tank)
}

fn memory(caller: &Ctx<'_>) -> Option<Memory> {
    caller.data().memory
}

fn get<const N: usize>(mem: &[u8], ptr: u32) -> Result<[u8; N], i32> {
    let start = ptr as usize;
    mem.get(start..start.checked_add(N).ok_or(EFAULT)?)
        .and_then(|s| s.try_into().ok())
        .ok_or(EFAULT)
}

fn get_u32(mem: &[u8], ptr: u32) -> Result<u32, i32> {
    get::<4>(mem, ptr).map(u32::from_le_bytes)
}

fn put(mem: &mut [u8], ptr: u32, bytes: &[u8]) -> Result<(), i32> {
    let start = ptr as usize;
    mem.get_mut(start..start.checked_add(bytes.len()).ok_or(EFAULT)?)
        .ok_or(EFAULT)?
        .copy_from_slice(bytes);
    Ok(())
}

fn errno(r: Result<(), i32>) -> i32 {
    r.err().unwrap_or(SUCCESS)
}

/// An iovec array whose entries are all inside memory.
struct Iovecs {
    at: u32,
    len: u32,
}

impl Iovecs {
    /// Checks that the `len` entries at `at` are inside `mem` (and that
    /// there are not absurdly many), without reading them.
    fn new(mem: &[u8], at: u32, len: u32) -> Result<Iovecs, i32> {
        if len > 1024 {
            return Err(EINVAL);
        }
        let end = at.checked_add(len * 8).ok_or(EFAULT)?;
        if end as usize > mem.len() {
            return Err(EFAULT);
        }
        Ok(Iovecs { at, len })
    }

    /// Entry `i` as (pointer, length).
    fn get(&self, mem: &[u8], i: u32) -> Result<(u32, u32), i32> {
        let at = self.at + i * 8;
        Ok((get_u32(mem, at)?, get_u32(mem, at + 4)?))
    }
}

/// Appends at most `cap` bytes out of the iovecs (only those ranges) to
/// `out`, which starts empty.
fn gather(mem: &[u8], iovs: u32, len: u32, cap: usize, out: &mut Vec<u8>) -> Result<(), i32> {
    let vecs = Iovecs::new(mem, iovs, len)?;
    for i in 0..vecs.len {
        let (ptr, n) = vecs.get(mem, i)?;
        let take = (n as usize).min(cap - out.len());
        let start = ptr as usize;
        let src = mem.get(start..start + take).ok_or(EFAULT)?;
        out.extend_from_slice(src);
        if out.len() == cap {
            break;
        }
    }
    Ok(())
}

/// Keeps the most linear memory the bot has had (memory only grows, so its
/// size at a call is the most so far).
fn note_memory(io: &Mutex<Io>, bytes: usize) {
    let mut io = lock(io);
    io.peak_memory = io.peak_memory.max(bytes as u64);
}

async fn fd_write(c: &mut Ctx<'_>, fd: i32, iovs: i32, len: i32, nwritten: i32) -> Result<i32> {
    let (call_fuel, write_cap) = {
        let p = &c.data().params;
        (p.call_fuel, p.write_cap())
    };
    let Some(mem) = memory(c) else {
        charge(c, call_fuel).await?;
        return Ok(EFAULT);
    };
    // The bytes are copied once, into a buffer the store keeps for this.
    let (view, host) = mem.data_and_store_mut(&mut *c);
    note_memory(&host.io, view.len());
    let mut data = std::mem::take(&mut host.write_buffer);
    data.clear();
    let written = match gather(view, iovs as u32, len as u32, write_cap, &mut data) {
        Ok(()) => write(c, fd, &data).await,
        Err(e) => charge(c, call_fuel).await.map(|()| Err(e)),
    };
    // Put back on every path, errors included.
    c.data_mut().write_buffer = data;
    let n = match written? {
        Ok(n) => (n as u32).to_le_bytes(),
        Err(e) => return Ok(e),
    };
    Ok(errno(put(mem.data_mut(&mut *c), nwritten as u32, &n)))
}

/// Charges for `data` and writes it to `fd`; gives the count written or
/// the error for the bot.
pub(crate) async fn write<S: AsContextMut<Data = Host>>(c: &mut S, fd: i32, data: &[u8]) -> Result<Result<usize, i32>> {
    let (call_fuel, byte_fuel, max_stderr) = {
        let p = &c.as_context().data().params;
        (p.call_fuel, p.byte_fuel, p.max_stderr)
    };
    charge(c, call_fuel + data.len() as u64 * byte_fuel).await?;
    match fd {
        1 => write_stdout(c, data).await?,
        2 => lock(&c.as_context().data().io).write_stderr(data, max_stderr),
        _ => return Ok(Err(EBADF)),
    }
    Ok(Ok(data.len()))
}

/// Splits stdout into lines; the line that answers the current request is
/// the reply: the bot pauses here until the next turn.
async fn write_stdout<S: AsContextMut<Data = Host>>(c: &mut S, data: &[u8]) -> Result<()> {
    let (max_reply, match_requests, io) = {
        let host = c.as_context().data();
        // With `Pause`, every line is handed over: the referee of a
        // tick-based game tells stale replies by their content.
        let p = &host.params;
        (p.max_reply, p.on_timeout == crate::OnTimeout::Stop, host.io.clone())
    };
    let mut rest = data;
    while !rest.is_empty() {
        let newline = memchr::memchr(b'\n', rest);
        let (part, complete) = match newline {
            Some(i) => (&rest[..i], true),
            None => (rest, false),
        };
        rest = &rest[part.len() + usize::from(complete)..];
        let seq = {
            let mut g = lock(&io);
            g.stdout_line.extend_from_slice(part);
            if g.stdout_line.len() > max_reply {
                return Err(wasmtime::Error::new(Abort(FaultKind::BadReply(
                    BadReplyReason::LineTooLong { limit: max_reply },
                ))));
            }
            if !complete {
                break;
            }
            let line = std::mem::take(&mut g.stdout_line);
            g.lines += 1;
            g.instance_lines += 1;
            if match_requests && g.lines < g.requests {
                // The answer to a request whose turn already timed out.
                continue;
            }
            let used = g.turn_used;
            g.turn_used = 0;
            g.event = Some(Event::Reply(line, used));
            g.turn_seq
        };
        next_turn(&io, seq).await;
        arm(c, &io)?;
    }
    Ok(())
}

async fn fd_read(c: &mut Ctx<'_>, fd: i32, iovs: i32, len: i32, nread: i32) -> Result<i32> {
    let (call_fuel, byte_fuel) = {
        let p = &c.data().params;
        (p.call_fuel, p.byte_fuel)
    };
    charge(c, call_fuel).await?;
    if fd != 0 {
        return Ok(EBADF);
    }
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    let (mem, host) = mem.data_and_store_mut(&mut *c);
    let mut g = lock(&host.io);
    g.peak_memory = g.peak_memory.max(mem.len() as u64);
    if g.stdin_pos >= g.stdin.len() {
        if g.closed {
            // The game is over: end of file.
            return Ok(errno(put(mem, nread as u32, &0u32.to_le_bytes())));
        }
        return Err(wasmtime::Error::new(Abort(FaultKind::BadReply(
            BadReplyReason::WaitedForInput,
        ))));
    }
    // Every entry is read before any byte is copied, since the copies may
    // land on the iovec array itself. Up to 8 entries need no allocation.
    let vecs = match Iovecs::new(mem, iovs as u32, len as u32) {
        Ok(v) => v,
        Err(e) => return Ok(e),
    };
    let mut few = [(0u32, 0u32); 8];
    let mut many = Vec::new();
    let entries: &mut [(u32, u32)] = if vecs.len as usize <= few.len() {
        &mut few[..vecs.len as usize]
    } else {
        many.resize(vecs.len as usize, (0, 0));
        &mut many
    };
    for (i, entry) in (0..).zip(entries.iter_mut()) {
        *entry = match vecs.get(mem, i) {
            Ok(entry) => entry,
            Err(e) => return Ok(e),
        };
    }
    let mut total = 0usize;
    for &(ptr, n) in entries.iter() {
        let avail = g.stdin.len() - g.stdin_pos;
        let take = (n as usize).min(avail);
        if take == 0 {
            break;
        }
        let from = g.stdin_pos;
        if let Err(e) = put(mem, ptr, &g.stdin[from..from + take]) {
            return Ok(e);
        }
        g.stdin_pos += take;
        total += take;
    }
    g.charge(total as u64 * byte_fuel);
    Ok(errno(put(mem, nread as u32, &(total as u32).to_le_bytes())))
}

async fn clock_time_get(c: &mut Ctx<'_>, id: i32, out: i32) -> Result<i32> {
    let call_fuel = c.data().params.call_fuel;
    charge(c, call_fuel).await?;
    if !(0..=3).contains(&id) {
        return Ok(EINVAL);
    }
    // 0 realtime, 1 monotonic: the virtual clock; 2 process and 3 thread
    // CPU time: the virtual time the bot has used, from 0.
    let now = if id >= 2 { cpu_ns(c) } else { now_ns(c) };
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    Ok(errno(put(mem.data_mut(&mut *c), out as u32, &now.to_le_bytes())))
}

/// The virtual clock: start time plus the fuel used so far.
pub(crate) fn now_ns(c: &impl AsContext<Data = Host>) -> u64 {
    let host = c.as_context().data();
    let used = lock(&host.io).total_used;
    host.params.start_time_ns.saturating_add(host.params.fuel_to_ns(used))
}

/// The bot's CPU time: the fuel it has used so far, as virtual time from 0
/// (the process and thread CPU-time clocks; a bot has one thread).
fn cpu_ns(c: &impl AsContext<Data = Host>) -> u64 {
    let host = c.as_context().data();
    let used = lock(&host.io).total_used;
    host.params.fuel_to_ns(used)
}

async fn random_get(c: &mut Ctx<'_>, buf: i32, len: i32) -> Result<i32> {
    let p = c.data().params.clone();
    charge(c, p.call_fuel + u64::from(len as u32) * p.byte_fuel).await?;
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    let io = c.data().io.clone();
    let mem = mem.data_mut(&mut *c);
    let start = buf as u32 as usize;
    let Some(dest) = start
        .checked_add(len as u32 as usize)
        .and_then(|end| mem.get_mut(start..end))
    else {
        return Ok(EFAULT);
    };
    lock(&io).rng.fill_bytes(dest);
    Ok(SUCCESS)
}

/// Writes a list of NUL-terminated strings and their pointers.
fn put_strings(mem: &mut [u8], list: &[&[u8]], ptrs: u32, buf: u32) -> Result<(), i32> {
    let mut at = buf;
    for (i, s) in list.iter().enumerate() {
        put(mem, ptrs + 4 * i as u32, &at.to_le_bytes())?;
        put(mem, at, s)?;
        at = at.checked_add(s.len() as u32).ok_or(EFAULT)?;
    }
    Ok(())
}

async fn strings(c: &mut Ctx<'_>, args: bool, sizes: bool, a: i32, b: i32) -> Result<i32> {
    let p = c.data().params.clone();
    let list: Vec<&[u8]> = if args {
        vec![b"bot\0"]
    } else {
        p.environ.iter().map(Vec::as_slice).collect()
    };
    let bytes: usize = list.iter().map(|s| s.len()).sum();
    charge(c, p.call_fuel + bytes as u64 * p.byte_fuel).await?;
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    let mem = mem.data_mut(&mut *c);
    Ok(errno(if sizes {
        put(mem, a as u32, &(list.len() as u32).to_le_bytes())
            .and_then(|()| put(mem, b as u32, &(bytes as u32).to_le_bytes()))
    } else {
        put_strings(mem, &list, a as u32, b as u32)
    }))
}

async fn fd_fdstat_get(c: &mut Ctx<'_>, fd: i32, out: i32) -> Result<i32> {
    let p = c.data().params.clone();
    charge(c, p.call_fuel).await?;
    const FD_READ: u64 = 1 << 1;
    const FD_WRITE: u64 = 1 << 6;
    const POLL: u64 = 1 << 27;
    let rights = match fd {
        0 => FD_READ | POLL,
        1 | 2 => FD_WRITE | POLL,
        _ => return Ok(EBADF),
    };
    let mut stat = [0u8; 24];
    stat[0] = 2; // character device
    stat[8..16].copy_from_slice(&rights.to_le_bytes());
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    Ok(errno(put(mem.data_mut(&mut *c), out as u32, &stat)))
}

async fn fd_filestat_get(c: &mut Ctx<'_>, fd: i32, out: i32) -> Result<i32> {
    let p = c.data().params.clone();
    charge(c, p.call_fuel).await?;
    if !(0..=2).contains(&fd) {
        return Ok(EBADF);
    }
    let mut stat = [0u8; 64];
    stat[16] = 2; // character device
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    Ok(errno(put(mem.data_mut(&mut *c), out as u32, &stat)))
}

async fn clock_res_get(c: &mut Ctx<'_>, id: i32, out: i32) -> Result<i32> {
    let p = c.data().params.clone();
    charge(c, p.call_fuel).await?;
    if !(0..=3).contains(&id) {
        return Ok(EINVAL);
    }
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    Ok(errno(put(mem.data_mut(&mut *c), out as u32, &1u64.to_le_bytes())))
}

/// `poll_oneoff`: stdin is ready when unread input is left, stdout and
/// stderr always; otherwise the earliest clock subscription is slept
/// through, charged as if the bot computed that long.
async fn poll_oneoff(c: &mut Ctx<'_>, subs: i32, events: i32, n: i32, nevents: i32) -> Result<i32> {
    let p = c.data().params.clone();
    let n = n as u32;
    charge(c, p.call_fuel + u64::from(n).saturating_mul(48 * p.byte_fuel)).await?;
    if n == 0 || n > 1024 {
        return Ok(EINVAL);
    }
    let Some(mem) = memory(c) else {
        return Ok(EFAULT);
    };
    let now = now_ns(c);
    let (avail, closed) = {
        let g = lock(&c.data().io);
        (g.stdin.len() - g.stdin_pos, g.closed)
    };
    // (userdata, errno, type, nbytes)
    let mut out: Vec<(u64, u16, u8, u64)> = Vec::new();
    let mut sleep: Option<u64> = None;
    let mut clocks: Vec<(u64, u64)> = Vec::new();
    let mut waits_for_stdin = false;
    {
        let m = mem.data(&*c);
        for i in 0..n {
            let at = (subs as u32).wrapping_add(i * 48);
            let sub = match get::<48>(m, at) {
                Ok(s) => s,
                Err(e) => return Ok(e),
            };
            let userdata = u64::from_le_bytes(sub[0..8].try_into().unwrap_or_default());
            let word = |o: usize| u64::from_le_bytes(sub[o..o + 8].try_into().unwrap_or_default());
            let fd = u32::from_le_bytes(sub[16..20].try_into().unwrap_or_default());
            match sub[8] {
                0 => {
                    let id = fd;
                    if id > 3 {
                        out.push((userdata, EINVAL as u16, 0, 0));
                        continue;
                    }
                    let timeout = word(24);
                    let absolute = sub[40] & 1 == 1;
                    let rel = if absolute { timeout.saturating_sub(now) } else { timeout };
                    sleep = Some(sleep.map_or(rel, |s: u64| s.min(rel)));
                    clocks.push((userdata, rel));
                }
                1 => match fd {
                    0 if avail > 0 || closed => out.push((userdata, 0, 1, avail as u64)),
                    0 => waits_for_stdin = true,
                    _ => out.push((userdata, EBADF as u16, 1, 0)),
                },
                2 => match fd {
                    1 | 2 => out.push((userdata, 0, 2, p.write_cap() as u64)),
                    _ => out.push((userdata, EBADF as u16, 2, 0)),
                },
                _ => return Ok(EINVAL),
            }
        }
    }
    if out.is_empty() {
        match sleep {
            Some(ns) => {
                charge(c, p.ns_to_fuel(ns)).await?;
                out.extend(clocks.iter().filter(|(_, rel)| *rel <= ns).map(|(u, _)| (*u, 0, 0, 0)));
            }
            None if waits_for_stdin => {
                return Err(wasmtime::Error::new(Abort(FaultKind::BadReply(
                    BadReplyReason::WaitedForInput,
                ))));
            }
            None => return Ok(EINVAL),
        }
    }
    let m = mem.data_mut(&mut *c);
    for (i, (userdata, err, kind, nbytes)) in out.iter().enumerate() {
        let mut ev = [0u8; 32];
        ev[0..8].copy_from_slice(&userdata.to_le_bytes());
        ev[8..10].copy_from_slice(&err.to_le_bytes());
        ev[10] = *kind;
        ev[16..24].copy_from_slice(&nbytes.to_le_bytes());
        if let Err(e) = put(m, (events as u32).wrapping_add(32 * i as u32), &ev) {
            return Ok(e);
        }
    }
    Ok(errno(put(m, nevents as u32, &(out.len() as u32).to_le_bytes())))
}

/// A call that only answers an error code (after being charged).
async fn answer(c: &mut Ctx<'_>, code: i32) -> Result<i32> {
    let fuel = c.data().params.call_fuel;
    charge(c, fuel).await?;
    Ok(code)
}

/// `code_for_stdio` for fds 0–2, `EBADF` for every other fd.
fn on_fd(fd: i32, code_for_stdio: i32) -> i32 {
    if (0..=2).contains(&fd) { code_for_stdio } else { EBADF }
}

macro_rules! def {
    ($linker:ident, $name:literal, |$c:ident $(, $arg:ident : $ty:ty)*| $body:expr) => {
        $linker.func_wrap_async(
            WASI_MODULE,
            $name,
            |mut $c: Caller<'_, Host>, ($($arg,)*): ($($ty,)*)| {
                Box::new(async move { $body.await })
            },
        )?;
    };
}

/// Defines every function of [`crate::check::WASI_FUNCTIONS`].
pub(crate) fn add_to_linker(linker: &mut Linker<Host>) -> Result<()> {
    def!(linker, "args_get", |c, a: i32, b: i32| strings(
        &mut c, true, false, a, b
    ));
    def!(linker, "args_sizes_get", |c, a: i32, b: i32| strings(
        &mut c, true, true, a, b
    ));
    def!(linker, "environ_get", |c, a: i32, b: i32| strings(
        &mut c, false, false, a, b
    ));
    def!(linker, "environ_sizes_get", |c, a: i32, b: i32| strings(
        &mut c, false, true, a, b
    ));
    def!(linker, "clock_res_get", |c, id: i32, out: i32| clock_res_get(
        &mut c, id, out
    ));
    def!(
        linker,
        "clock_time_get",
        |c, id: i32, _p: i64, out: i32| clock_time_get(&mut c, id, out)
    );
    def!(linker, "fd_advise", |c, fd: i32, _o: i64, _l: i64, _a: i32| answer(
        &mut c,
        on_fd(fd, ESPIPE)
    ));
    def!(linker, "fd_allocate", |c, fd: i32, _o: i64, _l: i64| answer(
        &mut c,
        on_fd(fd, ENOTSUP)
    ));
    def!(linker, "fd_close", |c, fd: i32| answer(&mut c, on_fd(fd, SUCCESS)));
    def!(linker, "fd_datasync", |c, fd: i32| answer(&mut c, on_fd(fd, EINVAL)));
    def!(linker, "fd_fdstat_get", |c, fd: i32, out: i32| fd_fdstat_get(
        &mut c, fd, out
    ));
    def!(linker, "fd_fdstat_set_flags", |c, fd: i32, _f: i32| answer(
        &mut c,
        on_fd(fd, ENOTSUP)
    ));
    def!(linker, "fd_fdstat_set_rights", |c, fd: i32, _b: i64, _i: i64| answer(
        &mut c,
        on_fd(fd, ENOTSUP)
    ));
    def!(linker, "fd_filestat_get", |c, fd: i32, out: i32| fd_filestat_get(
        &mut c, fd, out
    ));
    def!(linker, "fd_filestat_set_size", |c, fd: i32, _s: i64| answer(
        &mut c,
        on_fd(fd, EINVAL)
    ));
    def!(
        linker,
        "fd_filestat_set_times",
        |c, fd: i32, _a: i64, _m: i64, _f: i32| answer(&mut c, on_fd(fd, ENOTSUP))
    );
    def!(linker, "fd_pread", |c, fd: i32, _i: i32, _n: i32, _o: i64, _r: i32| {
        answer(&mut c, on_fd(fd, ESPIPE))
    });
    def!(linker, "fd_prestat_get", |c, _fd: i32, _out: i32| answer(&mut c, EBADF));
    def!(linker, "fd_prestat_dir_name", |c, _fd: i32, _p: i32, _l: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "fd_pwrite", |c, fd: i32, _i: i32, _n: i32, _o: i64, _r: i32| {
        answer(&mut c, on_fd(fd, ESPIPE))
    });
    def!(linker, "fd_read", |c, fd: i32, iovs: i32, len: i32, out: i32| fd_read(
        &mut c, fd, iovs, len, out
    ));
    def!(linker, "fd_readdir", |c,
                                fd: i32,
                                _b: i32,
                                _l: i32,
                                _k: i64,
                                _r: i32| answer(
        &mut c,
        on_fd(fd, ENOTSUP)
    ));
    def!(linker, "fd_renumber", |c, fd: i32, _to: i32| answer(
        &mut c,
        on_fd(fd, ENOTSUP)
    ));
    def!(linker, "fd_seek", |c, fd: i32, _o: i64, _w: i32, _r: i32| answer(
        &mut c,
        on_fd(fd, ESPIPE)
    ));
    def!(linker, "fd_sync", |c, fd: i32| answer(&mut c, on_fd(fd, EINVAL)));
    def!(linker, "fd_tell", |c, fd: i32, _r: i32| answer(
        &mut c,
        on_fd(fd, ESPIPE)
    ));
    def!(
        linker,
        "fd_write",
        |c, fd: i32, iovs: i32, len: i32, out: i32| fd_write(&mut c, fd, iovs, len, out)
    );
    def!(linker, "path_create_directory", |c, _f: i32, _p: i32, _l: i32| answer(
        &mut c, EBADF
    ));
    def!(
        linker,
        "path_filestat_get",
        |c, _f: i32, _fl: i32, _p: i32, _l: i32, _o: i32| answer(&mut c, EBADF)
    );
    def!(
        linker,
        "path_filestat_set_times",
        |c, _f: i32, _fl: i32, _p: i32, _l: i32, _a: i64, _m: i64, _x: i32| answer(&mut c, EBADF)
    );
    def!(linker, "path_link", |c,
                               _a: i32,
                               _b: i32,
                               _p: i32,
                               _l: i32,
                               _d: i32,
                               _q: i32,
                               _m: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "path_open", |c,
                               _f: i32,
                               _d: i32,
                               _p: i32,
                               _l: i32,
                               _o: i32,
                               _rb: i64,
                               _ri: i64,
                               _fl: i32,
                               _r: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "path_readlink", |c,
                                   _f: i32,
                                   _p: i32,
                                   _l: i32,
                                   _b: i32,
                                   _bl: i32,
                                   _r: i32| {
        answer(&mut c, EBADF)
    });
    def!(linker, "path_remove_directory", |c, _f: i32, _p: i32, _l: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "path_rename", |c,
                                 _f: i32,
                                 _p: i32,
                                 _l: i32,
                                 _t: i32,
                                 _q: i32,
                                 _m: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "path_symlink", |c,
                                  _p: i32,
                                  _l: i32,
                                  _f: i32,
                                  _q: i32,
                                  _m: i32| {
        answer(&mut c, EBADF)
    });
    def!(linker, "path_unlink_file", |c, _f: i32, _p: i32, _l: i32| answer(
        &mut c, EBADF
    ));
    def!(linker, "poll_oneoff", |c, s: i32, e: i32, n: i32, r: i32| poll_oneoff(
        &mut c, s, e, n, r
    ));
    linker.func_wrap_async(WASI_MODULE, "proc_exit", |_c: Caller<'_, Host>, (code,): (i32,)| {
        Box::new(async move { Err::<(), _>(wasmtime::Error::new(Exit(code))) })
    })?;
    def!(linker, "proc_raise", |c, _s: i32| answer(&mut c, ENOTSUP));
    def!(linker, "random_get", |c, buf: i32, len: i32| random_get(
        &mut c, buf, len
    ));
    def!(linker, "sched_yield", |c| answer(&mut c, SUCCESS));
    def!(linker, "sock_accept", |c, _f: i32, _fl: i32, _r: i32| answer(
        &mut c, ENOTSUP
    ));
    def!(linker, "sock_recv", |c,
                               _f: i32,
                               _d: i32,
                               _l: i32,
                               _fl: i32,
                               _r: i32,
                               _o: i32| answer(
        &mut c, ENOTSUP
    ));
    def!(linker, "sock_send", |c,
                               _f: i32,
                               _d: i32,
                               _l: i32,
                               _fl: i32,
                               _r: i32| answer(
        &mut c, ENOTSUP
    ));
    def!(linker, "sock_shutdown", |c, _f: i32, _h: i32| answer(&mut c, ENOTSUP));
    Ok(())
}

/// Reads the store's fuel left; for the driver when a run has ended.
pub(crate) fn tank_left(store: &impl AsContext) -> u64 {
    store.as_context().get_fuel().unwrap_or(0)
}
