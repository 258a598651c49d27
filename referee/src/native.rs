//! Native players: a bot run as an operating-system process that speaks the
//! JSON-lines protocol of `protocol.md` over real pipes (the CLI's
//! `cmd:'python3 bot.py'`).
//!
//! A [`NativeCommand`] is the [`Entrant`]; each game gets a fresh
//! [`NativeProcess`], the [`Player`].
//!
//! What this module guarantees, whatever the bot does:
//!
//! - no panic, and no turn that outlasts its budget by more than fixed
//!   graces: up to 1 s for a bot that closed its stdout to exit (its exit
//!   status tells a one-shot bot from a crash) and 200 ms to collect the
//!   last stderr of a bot that faulted;
//! - the bot runs in a process group of its own, which is killed with
//!   `SIGKILL` when the bot faults (see [`AfterTimeout`] for timeouts) or the
//!   player is dropped, and the bot's process is reaped: no zombies;
//! - a reply line is at most [`MAX_REPLY_LINE`] bytes, and at most
//!   [`MAX_STDERR`] bytes of stderr are kept per game (then a
//!   [`STDERR_TRUNCATED`] marker line); the rest of stderr is read and
//!   dropped, so a chatty bot never blocks on it;
//! - only transport faults are reported here (timeout, exit, an over-long or
//!   non-UTF-8 line); whether a line is a valid reply is the referee's call.
//!
//! What it does not do: a native bot runs on wall-clock time (so results are
//! not reproducible), is not paused between its turns, and a bot that waits
//! for more input before replying is seen as computing (a [`Fault::Timeout`],
//! not the `bad_reply` a sandboxed bot gets). A bot that leaves a descendant
//! outside its process group holding its pipes keeps one of our helper
//! threads parked until that descendant exits; the caller never waits for it.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread;
use std::time::{Duration, Instant};

use nix::errno::Errno;

/// The variable that gives a native bot, in hex, the first [`RANDOM_BYTES`]
/// bytes its `random_get` would return in the sandbox in the same game, so
/// a native build can seed its generator as its WebAssembly build does.
pub const RANDOM_VAR: &str = "ARBITER_RANDOM";
/// How many bytes [`RANDOM_VAR`] holds.
pub const RANDOM_BYTES: usize = 64;

/// [`RANDOM_VAR`]'s value for the bot of `setup`.
fn random_hex(setup: &GameSetup) -> String {
    let seed = crate::wasm::bot_seed(setup.seed, setup.game_index, setup.side);
    crate::wasm::first_random_bytes::<RANDOM_BYTES>(seed)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;

use crate::player::{Answer, Entrant, EntrantInfo, Fault, GameSetup, Player, SpawnError, Spent, TurnError};

/// Longest reply line accepted, in bytes, not counting the `\n`: a longer one
/// is a [`Fault::BadReply`]. Bounds the memory a bot can make the referee
/// hold per line (protocol.md, "reply line").
pub const MAX_REPLY_LINE: usize = 64 * 1024;

/// Most stderr bytes kept per game and side; the rest is read and dropped
/// after a [`STDERR_TRUNCATED`] line (protocol.md, "stderr kept").
pub const MAX_STDERR: usize = 64 * 1024;

/// The line that ends a truncated stderr log.
pub const STDERR_TRUNCATED: &str = "[stderr truncated]";

/// How long a bot whose stdout closed gets to exit before it is killed; its
/// exit status tells a clean one-shot exit from a crash.
const EXIT_GRACE: Duration = Duration::from_secs(1);

/// How long we wait, after the bot's process ended, for the last of its
/// stderr to be collected, so that a fault comes with the bot's last words.
const STDERR_GRACE: Duration = Duration::from_millis(200);

/// Why a bot command could not be understood. Host-side (a bad setting), not
/// a bot fault.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NativeError {
    /// The command has no words.
    #[error("empty bot command")]
    Empty,
    /// The command is not valid shell words (an unclosed quote, ...).
    #[error("cannot parse bot command `{command}`: {reason}")]
    Parse {
        /// The command as given.
        command: String,
        /// What is wrong with it.
        reason: String,
    },
}

/// What a [`NativeProcess`] does when its bot runs out of time.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AfterTimeout {
    /// Kill the bot's process group at once; the player is stopped, and every
    /// later turn is a [`Fault::Crash`]. Right for games where a timeout ends
    /// the bot's game. The default.
    #[default]
    Kill,
    /// Leave the bot running (tick-based games, where a late bot is skipped
    /// and continues): every line it writes is handed over, a late one
    /// first at its next turn, and the referee tells stale replies by their
    /// content and waits for the next line with [`Player::resume`].
    Continue,
}

/// A bot command line, split into words like a shell would (no expansion, no
/// pipes). An [`Entrant`] whose [`spawn`](Entrant::spawn) starts a fresh
/// [`NativeProcess`] for each game.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NativeCommand {
    argv: Vec<String>,
    name: String,
    after_timeout: AfterTimeout,
}

impl NativeCommand {
    /// Splits `cmd` into words (`python3 'my bot.py'` gives two). Fails on an
    /// empty command or unbalanced quotes; nothing is started here, so a
    /// missing program is found only when a game starts (as a bot fault).
    ///
    /// # Errors
    ///
    /// [`NativeError::Empty`] for no words, [`NativeError::Parse`] for
    /// unbalanced quotes or a trailing backslash.
    pub fn parse(cmd: &str) -> Result<Self, NativeError> {
        let argv = shell_words::split(cmd).map_err(|err| NativeError::Parse {
            command: cmd.to_owned(),
            reason: err.to_string(),
        })?;
        if argv.is_empty() {
            return Err(NativeError::Empty);
        }
        let name = shell_words::join(&argv);
        Ok(Self {
            argv,
            name,
            after_timeout: AfterTimeout::default(),
        })
    }

    /// Sets what happens when the bot runs out of time; by default
    /// [`AfterTimeout::Kill`].
    #[must_use]
    pub fn after_timeout(mut self, policy: AfterTimeout) -> Self {
        self.after_timeout = policy;
        self
    }

    /// The program and its arguments; never empty.
    #[must_use]
    pub fn argv(&self) -> &[String] {
        &self.argv
    }

    /// The command re-joined into one line, used as the entrant's name.
    #[must_use]
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Starts the bot for one game, like [`Entrant::spawn`] but returning the
    /// concrete player.
    ///
    /// # Errors
    ///
    /// As for [`Entrant::spawn`].
    pub fn start(&self, setup: &GameSetup) -> Result<NativeProcess, SpawnError> {
        NativeProcess::start(self, setup)
    }
}

impl Entrant for NativeCommand {
    /// Kind `native`, never reproducible (it runs on wall-clock time).
    fn info(&self) -> EntrantInfo {
        EntrantInfo {
            name: self.name.clone(),
            kind: "native".to_owned(),
            sha256: None,
            reproducible: false,
        }
    }

    /// Starts the process now. A program that cannot be started (not found,
    /// not executable) is [`SpawnError::Bot`] with a [`Fault::Crash`]; a
    /// host out of processes, files or memory is [`SpawnError::Host`].
    fn spawn(&self, setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        Ok(Box::new(self.start(setup)?))
    }
}

/// One native bot for one game: a [`Player`] over the stdin/stdout of an OS
/// process, started afresh when a bot that has replied exits cleanly (a
/// one-shot bot).
///
/// `Spent.us` is the wall-clock time from handing over the request to
/// receiving the reply line (including a restart of a one-shot bot).
/// After a fault the process is killed and the player is stopped: each later
/// turn is a [`Fault::Crash`] (except a timeout under
/// [`AfterTimeout::Continue`]). Dropping the player kills the process group
/// and reaps the process.
pub struct NativeProcess {
    program: Program,
    after_timeout: AfterTimeout,
    stderr: Arc<Mutex<StderrLog>>,
    state: State,
}

impl std::fmt::Debug for NativeProcess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeProcess")
            .field("command", &self.program.name)
            .field("pid", &self.pid())
            .finish_non_exhaustive()
    }
}

impl NativeProcess {
    /// Starts `command` for the game in `setup`, with `ARBITER_GAME` and
    /// `ARBITER_MODE` set, in a new process group, its three standard streams
    /// piped.
    ///
    /// # Errors
    ///
    /// As for [`Entrant::spawn`].
    pub fn start(command: &NativeCommand, setup: &GameSetup) -> Result<Self, SpawnError> {
        let program = Program {
            argv: command.argv.clone(),
            name: command.name.clone(),
            env: vec![
                ("ARBITER_GAME".to_owned(), setup.game.clone()),
                ("ARBITER_MODE".to_owned(), setup.mode.clone()),
                (RANDOM_VAR.to_owned(), random_hex(setup)),
            ],
        };
        let stderr = Arc::new(Mutex::new(StderrLog::default()));
        let proc = program.launch(&stderr)?;
        Ok(Self {
            program,
            // A timeout only skips a tick in tick-based games.
            after_timeout: if setup.tick_based {
                AfterTimeout::Continue
            } else {
                command.after_timeout
            },
            stderr,
            state: State::Running(Box::new(proc)),
        })
    }

    /// The OS process id of the bot's current process (its process group id
    /// too), or `None` once the player is stopped. It changes when a one-shot
    /// bot is started again.
    #[must_use]
    pub fn pid(&self) -> Option<u32> {
        match &self.state {
            State::Running(proc) => Some(proc.child.id()),
            State::Stopped(_) => None,
        }
    }

    /// Kills the current process, keeps its last stderr, and stops the player
    /// with `fault`, which it returns.
    fn stop(&mut self, fault: Fault) -> Fault {
        if let State::Running(proc) = &mut self.state {
            proc.kill();
            proc.collect_stderr();
        }
        self.state = State::Stopped(fault.clone());
        fault
    }

    /// A timeout: stops the player unless it is kept running
    /// ([`AfterTimeout::Continue`]).
    fn timed_out(&mut self) -> Fault {
        match (&mut self.state, self.after_timeout) {
            (State::Running(_), AfterTimeout::Continue) => Fault::Timeout,
            _ => self.stop(Fault::Timeout),
        }
    }

    /// Runs one turn, handing the bot `request` (none when resuming);
    /// `Err` holds the fault (the player has been updated).
    fn play(&mut self, request: Option<&str>, deadline: Option<Instant>) -> Result<Vec<u8>, Fault> {
        let payload = request.map(|request| {
            let mut payload = Vec::with_capacity(request.len() + 1);
            payload.extend_from_slice(request.as_bytes());
            payload.push(b'\n');
            payload
        });
        let mut restarted = false;
        loop {
            let proc = match &mut self.state {
                State::Running(proc) => proc,
                State::Stopped(fault) => {
                    return Err(Fault::Crash(format!(
                        "not running: stopped after an earlier fault ({fault})"
                    )));
                }
            };
            match proc.exchange(payload.as_deref(), deadline) {
                Exchange::Line(line) => return Ok(line),
                Exchange::TimedOut => return Err(self.timed_out()),
                Exchange::Fault(fault) => return Err(self.stop(fault)),
                Exchange::Gone => {
                    let grace = Instant::now() + EXIT_GRACE;
                    let (until, out_of_time) = match deadline {
                        Some(deadline) if deadline < grace => (deadline, true),
                        _ => (grace, false),
                    };
                    let Some(status) = proc.wait_exit(until) else {
                        // It can no longer reply: stopped whatever the policy.
                        let fault = if out_of_time {
                            Fault::Timeout
                        } else {
                            Fault::Crash("closed its stdout but did not exit".to_owned())
                        };
                        return Err(self.stop(fault));
                    };
                    if status.success() && proc.replied && !restarted && payload.is_some() {
                        // A one-shot bot (or one that exited after replying):
                        // start it afresh and hand it the request again.
                        restarted = true;
                        match self.program.launch(&self.stderr) {
                            Ok(fresh) => self.state = State::Running(Box::new(fresh)),
                            Err(SpawnError::Bot(fault)) => return Err(self.stop(fault)),
                            Err(SpawnError::Host(why)) => {
                                return Err(self.stop(Fault::Crash(why)));
                            }
                        }
                        continue;
                    }
                    let mut why = format!("exited before replying ({})", describe_status(status));
                    if proc.unterminated {
                        why.push_str("; its last output had no newline");
                    }
                    return Err(self.stop(Fault::Crash(why)));
                }
            }
        }
    }
}

impl Player for NativeProcess {
    /// Writes `request` and a newline to the bot's stdin and waits at most
    /// `budget_us` wall-clock microseconds for a line on its stdout. The line
    /// comes back as written (a trailing `\r` removed), garbage included.
    ///
    /// Faults: [`Fault::Timeout`] when no line came in time (or it came
    /// later than the budget); [`Fault::Crash`] when the process exited or
    /// closed its stdout without replying, or the player was stopped by an
    /// earlier fault; [`Fault::BadReply`] for a line longer than
    /// [`MAX_REPLY_LINE`] or not UTF-8.
    fn turn(&mut self, request: &str, budget_us: u64) -> Result<Answer, TurnError> {
        self.answer(Some(request), budget_us)
    }

    /// Waits at most `budget_us` for the bot's next line without writing
    /// anything (see [`AfterTimeout::Continue`]); faults as for `turn`.
    fn resume(&mut self, budget_us: u64) -> Result<Answer, TurnError> {
        self.answer(None, budget_us)
    }

    /// A copy of the stderr kept so far, across restarts of a one-shot bot;
    /// at most [`MAX_STDERR`] bytes plus the [`STDERR_TRUNCATED`] line.
    fn stderr(&self) -> Vec<u8> {
        lock(&self.stderr).bytes.clone()
    }
}

impl NativeProcess {
    /// One turn (`request`) or one resumed wait (`None`) of at most
    /// `budget_us`.
    fn answer(&mut self, request: Option<&str>, budget_us: u64) -> Result<Answer, TurnError> {
        let start = Instant::now();
        let deadline = start.checked_add(Duration::from_micros(budget_us));
        let outcome = self.play(request, deadline);
        let spent = Spent {
            us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            fuel: None,
        };
        let fail = |fault| TurnError { fault, spent };
        let mut line = outcome.map_err(fail)?;
        if spent.us > budget_us {
            return Err(fail(self.timed_out()));
        }
        if line.last() == Some(&b'\r') {
            line.pop();
        }
        match String::from_utf8(line) {
            Ok(line) => Ok(Answer { line, spent }),
            Err(err) => {
                let at = err.utf8_error().valid_up_to();
                let why = format!("reply is not valid UTF-8 (bad byte at offset {at})");
                Err(fail(self.stop(Fault::BadReply(why))))
            }
        }
    }
}

/// How to start the bot.
struct Program {
    argv: Vec<String>,
    name: String,
    env: Vec<(String, String)>,
}

impl Program {
    /// Starts one process and its helper threads.
    fn launch(&self, stderr_log: &Arc<Mutex<StderrLog>>) -> Result<Proc, SpawnError> {
        let (program, args) = self
            .argv
            .split_first()
            .ok_or_else(|| SpawnError::Host("empty bot command".to_owned()))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let mut child = command.spawn().map_err(|err| spawn_error(program, &err))?;
        let pgid = i32::try_from(child.id()).ok().map(Pid::from_raw);
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        let stderr = child.stderr.take();
        let (event_tx, events) = mpsc::channel();
        let (stderr_tx, stderr_done) = mpsc::channel();
        // From here on, dropping `proc` kills and reaps the child.
        let mut proc = Proc {
            child,
            pgid,
            requests: None,
            events,
            stderr_done,
            replied: false,
            unterminated: false,
            reaped: None,
        };
        let (Some(stdin), Some(stdout), Some(stderr)) = (stdin, stdout, stderr) else {
            return Err(host(&self.name, "its standard streams were not piped"));
        };
        let (request_tx, request_rx) = mpsc::channel();
        let writer_events = event_tx.clone();
        helper("arbiter-bot-stdin", move || {
            write_requests(stdin, request_rx, writer_events);
        })
        .map_err(|err| host(&self.name, &err.to_string()))?;
        proc.requests = Some(request_tx);
        helper("arbiter-bot-stdout", move || read_lines(stdout, event_tx))
            .map_err(|err| host(&self.name, &err.to_string()))?;
        let log = Arc::clone(stderr_log);
        helper("arbiter-bot-stderr", move || {
            collect(stderr, &log);
            drop(stderr_tx);
        })
        .map_err(|err| host(&self.name, &err.to_string()))?;
        Ok(proc)
    }
}

/// Where a [`NativeProcess`] is.
enum State {
    Running(Box<Proc>),
    Stopped(Fault),
}

/// One running OS process of the bot.
struct Proc {
    child: Child,
    /// The process group (the child's pid); `None` only if the pid does not
    /// fit a `pid_t`, where we fall back to killing the child alone.
    pgid: Option<Pid>,
    /// Requests to the stdin writer thread.
    requests: Option<Sender<Vec<u8>>>,
    /// Lines and ends from the stdout reader and the stdin writer.
    events: Receiver<Event>,
    /// Disconnects when the stderr thread is done.
    stderr_done: Receiver<()>,
    /// Whether this process has written at least one line.
    replied: bool,
    /// Whether stdout ended in the middle of a line.
    unterminated: bool,
    /// The exit status, once reaped.
    reaped: Option<ExitStatus>,
}

/// What happened to one request.
enum Exchange {
    Line(Vec<u8>),
    TimedOut,
    /// stdout closed or stdin broke before a line came.
    Gone,
    Fault(Fault),
}

impl Proc {
    /// Hands `payload` (if any) to the bot and waits until `deadline` for
    /// its next line.
    fn exchange(&mut self, payload: Option<&[u8]>, deadline: Option<Instant>) -> Exchange {
        if let Some(payload) = payload {
            let sent = self
                .requests
                .as_ref()
                .is_some_and(|requests| requests.send(payload.to_vec()).is_ok());
            if !sent {
                return Exchange::Gone;
            }
        }
        let event = match deadline {
            Some(deadline) => self
                .events
                .recv_timeout(deadline.saturating_duration_since(Instant::now())),
            None => self.events.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match event {
            Ok(Event::Line(line)) => {
                self.replied = true;
                Exchange::Line(line)
            }
            Ok(Event::Eof { unterminated }) => {
                self.unterminated = unterminated;
                Exchange::Gone
            }
            Ok(Event::WriteFailed) | Err(RecvTimeoutError::Disconnected) => Exchange::Gone,
            Ok(Event::TooLong) => {
                let why = format!("reply line longer than {MAX_REPLY_LINE} bytes");
                Exchange::Fault(Fault::BadReply(why))
            }
            Ok(Event::ReadFailed(why)) => Exchange::Fault(Fault::Crash(format!("cannot read its stdout: {why}"))),
            Err(RecvTimeoutError::Timeout) => Exchange::TimedOut,
        }
    }

    /// Waits until `until` for the process to exit; if it does, kills what
    /// is left of its group and reaps it. `None` if it is still running.
    fn wait_exit(&mut self, until: Instant) -> Option<ExitStatus> {
        let mut pause = Duration::from_micros(200);
        loop {
            if let Some(status) = self.reaped {
                return Some(status);
            }
            if self.exited() {
                return self.kill();
            }
            let now = Instant::now();
            if now >= until {
                return None;
            }
            thread::sleep(pause.min(until - now));
            pause = (pause * 2).min(Duration::from_millis(10));
        }
    }

    /// Whether the process has exited, without reaping it (so its pid, the
    /// group id, stays ours until we have killed the group).
    #[cfg(any(target_os = "linux", target_os = "android", target_os = "freebsd"))]
    fn exited(&mut self) -> bool {
        use nix::sys::wait::{Id, WaitPidFlag, WaitStatus, waitid};
        let Ok(pid) = i32::try_from(self.child.id()) else {
            return self.child.try_wait().ok().flatten().is_some();
        };
        let flags = WaitPidFlag::WEXITED | WaitPidFlag::WNOHANG | WaitPidFlag::WNOWAIT;
        match waitid(Id::Pid(Pid::from_raw(pid)), flags) {
            Ok(WaitStatus::StillAlive) => false,
            // Exited, or (ECHILD) already reaped: nothing left to wait for.
            Ok(_) | Err(_) => true,
        }
    }

    /// Whether the process has exited. Without `waitid(WNOWAIT)` this reaps
    /// it, and then its group is not signalled (its id could be reused).
    #[cfg(not(any(target_os = "linux", target_os = "android", target_os = "freebsd")))]
    fn exited(&mut self) -> bool {
        match self.child.try_wait() {
            Ok(Some(status)) => {
                self.reaped = Some(status);
                true
            }
            Ok(None) => false,
            Err(_) => true,
        }
    }

    /// Kills the process group and the process, and reaps the process.
    /// Idempotent; returns the exit status if it could be read.
    fn kill(&mut self) -> Option<ExitStatus> {
        if self.reaped.is_none() {
            // The child is not reaped, so the group id is still ours.
            if let Some(pgid) = self.pgid {
                let _ = killpg(pgid, Signal::SIGKILL);
            }
            // In case the bot left its group.
            let _ = self.child.kill();
            self.reaped = self.child.wait().ok();
        }
        self.requests = None;
        self.reaped
    }

    /// After the process ended: waits briefly for its last stderr bytes.
    fn collect_stderr(&self) {
        let _ = self.stderr_done.recv_timeout(STDERR_GRACE);
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What the stdout reader and the stdin writer report.
enum Event {
    /// A complete line, without its `\n`.
    Line(Vec<u8>),
    /// stdout closed; `unterminated` if it ended inside a line.
    Eof { unterminated: bool },
    /// A line grew past [`MAX_REPLY_LINE`]; reading stopped.
    TooLong,
    /// Reading stdout failed; reading stopped.
    ReadFailed(String),
    /// Writing a request failed (the bot closed its stdin or exited).
    WriteFailed,
}

/// Writes each request to the bot's stdin until the bot stops reading or the
/// player lets go of the sender.
fn write_requests(mut stdin: ChildStdin, requests: Receiver<Vec<u8>>, events: Sender<Event>) {
    for request in requests {
        if stdin.write_all(&request).and_then(|()| stdin.flush()).is_err() {
            let _ = events.send(Event::WriteFailed);
            return;
        }
    }
}

/// Splits the bot's stdout into lines of at most [`MAX_REPLY_LINE`] bytes.
fn read_lines(stdout: ChildStdout, events: Sender<Event>) {
    let mut reader = BufReader::with_capacity(16 * 1024, stdout);
    let mut line = Vec::new();
    loop {
        let buf = match reader.fill_buf() {
            Ok(buf) => buf,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => {
                let _ = events.send(Event::ReadFailed(err.to_string()));
                return;
            }
        };
        if buf.is_empty() {
            let _ = events.send(Event::Eof {
                unterminated: !line.is_empty(),
            });
            return;
        }
        let (chunk, used, complete) = match buf.iter().position(|&b| b == b'\n') {
            Some(end) => (&buf[..end], end + 1, true),
            None => (buf, buf.len(), false),
        };
        if line.len() + chunk.len() > MAX_REPLY_LINE {
            let _ = events.send(Event::TooLong);
            return;
        }
        line.extend_from_slice(chunk);
        reader.consume(used);
        if complete && events.send(Event::Line(std::mem::take(&mut line))).is_err() {
            return;
        }
    }
}

/// Keeps the first [`MAX_STDERR`] bytes of the bot's stderr and drops the
/// rest, reading until the pipe closes.
fn collect(mut stderr: ChildStderr, log: &Mutex<StderrLog>) {
    let mut buf = [0_u8; 8 * 1024];
    loop {
        match stderr.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => lock(log).push(&buf[..n]),
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// A bounded stderr log.
#[derive(Default)]
struct StderrLog {
    bytes: Vec<u8>,
    truncated: bool,
}

impl StderrLog {
    fn push(&mut self, chunk: &[u8]) {
        if self.truncated {
            return;
        }
        let room = MAX_STDERR.saturating_sub(self.bytes.len());
        if chunk.len() <= room {
            self.bytes.extend_from_slice(chunk);
            return;
        }
        self.bytes.extend_from_slice(&chunk[..room]);
        if self.bytes.last().is_some_and(|&b| b != b'\n') {
            self.bytes.push(b'\n');
        }
        self.bytes.extend_from_slice(STDERR_TRUNCATED.as_bytes());
        self.bytes.push(b'\n');
        self.truncated = true;
    }
}

/// Locks the log; a poisoned lock still holds a usable log.
fn lock(log: &Mutex<StderrLog>) -> std::sync::MutexGuard<'_, StderrLog> {
    log.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Starts a named helper thread.
fn helper(name: &str, f: impl FnOnce() + Send + 'static) -> io::Result<()> {
    thread::Builder::new().name(name.to_owned()).spawn(f).map(drop)
}

/// A failure to start `program`: the bot's fault unless the host ran out of
/// something.
fn spawn_error(program: &str, err: &io::Error) -> SpawnError {
    let why = match err.raw_os_error() {
        Some(code) => Errno::from_raw(code).desc().to_owned(),
        None => err.to_string(),
    };
    let message = format!("cannot start `{program}`: {why}");
    match err.raw_os_error().map(Errno::from_raw) {
        Some(Errno::EAGAIN | Errno::ENOMEM | Errno::EMFILE | Errno::ENFILE) => SpawnError::Host(message),
        _ => SpawnError::Bot(Fault::Crash(message)),
    }
}

/// A host failure while starting `name`.
fn host(name: &str, why: &str) -> SpawnError {
    SpawnError::Host(format!("cannot start `{name}`: {why}"))
}

/// `exit status 1`, `killed by signal 9 (SIGKILL)`.
fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    match status.signal() {
        Some(signal) => match Signal::try_from(signal) {
            Ok(name) => format!("killed by signal {signal} ({name})"),
            Err(_) => format!("killed by signal {signal}"),
        },
        None => status.to_string(),
    }
}
