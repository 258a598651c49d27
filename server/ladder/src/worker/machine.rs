//! A worker's loop as a state machine: its state ([`Worker`]), the events
//! it waits for ([`Step`]) and what each one changes ([`Worker::apply`]).
//!
//! The state has three parts:
//!
//! - the queue side ([`Queue`]): ready to claim, a claim under way, or idle
//!   after finding the queue empty;
//! - the match thread as the worker sees it: the match it plays
//!   ([`Playing`], from its `Started` report to its `Played` one) and the
//!   match handed to it and not yet started ([`AwaitingStart`]);
//! - the played matches not yet recorded, and the recordings under way.
//!
//! Each turn of the loop first starts what the state calls for (a claim, the
//! recordings), then waits for one event and applies it.

use super::claim::{claim, give_back, renew};
use super::match_thread::{Ended, MatchThread, Report};
use super::record::finish;
use super::{Claimed, Played, RECORDINGS, WorkerConfig, WorkerError};
use crate::core::Core;
use crate::db::OwnConnection;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio::sync::futures::Notified;
use tokio::sync::{mpsc, watch};

/// A claim under way.
type ClaimFuture<'a> = Pin<Box<dyn Future<Output = Result<Option<Claimed>, sqlx::Error>> + Send + 'a>>;

/// A wake-up from [`crate::queue::wake_workers`], registered in advance.
type WakeUp = Pin<Box<Notified<'static>>>;

/// An idle worker's wait for a wake-up or its next poll.
type IdleWait = Pin<Box<tokio::time::Timeout<WakeUp>>>;

/// Where a worker is with the queue.
enum Queue<'a> {
    /// No claim under way: one starts when a match is wanted.
    Ready,
    /// A claim under way; it is finished, never dropped half-done (its match
    /// would wait for its lease to expire).
    Claiming {
        claim: ClaimFuture<'a>,
        /// When the match thread was idle: a wake-up registered before
        /// looking at the queue, so one between the look and the wait is
        /// not lost.
        woken: Option<WakeUp>,
    },
    /// The queue was empty: waiting for a wake-up or the next poll.
    Idle(IdleWait),
}

impl Queue<'_> {
    /// The end of the claim or of the idle wait; never for [`Queue::Ready`].
    async fn next(&mut self) -> Step {
        match self {
            Queue::Ready => std::future::pending().await,
            Queue::Claiming { claim, .. } => Step::Claimed(Box::new(claim.await)),
            Queue::Idle(wait) => {
                // Woken or timed out: either way, look again.
                let _ = wait.await;
                Step::IdleOver
            }
        }
    }

    /// After an empty (or failed) claim: wait for the wake-up registered
    /// with it, at most `poll` long; with none (a claim ahead), ready.
    fn idle(woken: Option<WakeUp>, poll: Duration) -> Self {
        match woken {
            Some(woken) => Queue::Idle(Box::pin(tokio::time::timeout(poll, woken))),
            None => Queue::Ready,
        }
    }
}

/// The match the match thread is playing, as the worker sees it.
struct Playing {
    id: i64,
    /// Ends the match at its next turn.
    cancel: Arc<AtomicBool>,
    /// Why the match is being abandoned, if it is.
    abandoned: Option<WorkerError>,
}

/// A match handed to the match thread and not yet started.
struct AwaitingStart {
    /// For a match claimed ahead: when it goes back to the queue if it has
    /// not started.
    hold: Option<Pin<Box<tokio::time::Sleep>>>,
}

/// What a worker waits for.
enum Step {
    /// A report of the match thread; `None`: the thread is gone.
    Report(Option<Report>),
    /// The claim under way ended.
    Claimed(Box<Result<Option<Claimed>, sqlx::Error>>),
    /// The idle wait ended.
    IdleOver,
    /// The match claimed ahead waited long enough.
    HoldOver,
    /// Time to renew the running match's lease.
    Heartbeat,
    /// The worker is to stop: abandon the running match.
    Stop,
    /// The worker is to drain: claim nothing more.
    Drain,
    /// A stop or drain signal that changed nothing, or a recording done.
    Nothing,
}

/// A worker's state (see the module's documentation).
pub(super) struct Worker<'a> {
    core: &'a Core,
    config: &'a WorkerConfig,
    /// Every write of this worker goes through this connection.
    own: &'a OwnConnection,
    thread: MatchThread,
    reports: mpsc::UnboundedReceiver<Report>,
    queue: Queue<'a>,
    playing: Option<Playing>,
    handed: Option<AwaitingStart>,
    /// Whether to claim ahead during the current match (see
    /// [`WorkerConfig::claim_ahead_below`]), and whether that was tried.
    claim_ahead: bool,
    tried_ahead: bool,
    /// Played matches whose recording has not started.
    unrecorded: Vec<(Claimed, Result<Played, WorkerError>)>,
    /// Recordings overlap playing the next matches; while [`RECORDINGS`]
    /// are under way nothing more is claimed.
    recordings: tokio::task::JoinSet<()>,
    heartbeat: tokio::time::Interval,
    drain: watch::Receiver<bool>,
    stop: watch::Receiver<bool>,
    draining: bool,
    stopping: bool,
}

impl<'a> Worker<'a> {
    /// A worker with nothing claimed, whose matches `thread` plays.
    pub(super) fn new(
        core: &'a Core,
        config: &'a WorkerConfig,
        own: &'a OwnConnection,
        (thread, reports): (MatchThread, mpsc::UnboundedReceiver<Report>),
        drain: watch::Receiver<bool>,
        stop: watch::Receiver<bool>,
    ) -> Worker<'a> {
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + config.heartbeat, config.heartbeat);
        heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let (draining, stopping) = (*drain.borrow(), *stop.borrow());
        Worker {
            core,
            config,
            own,
            thread,
            reports,
            queue: Queue::Ready,
            playing: None,
            handed: None,
            claim_ahead: false,
            tried_ahead: false,
            unrecorded: Vec::new(),
            recordings: tokio::task::JoinSet::new(),
            heartbeat,
            drain,
            stop,
            draining,
            stopping,
        }
    }

    /// Runs the loop until the worker has ended (see [`super::run_draining`]),
    /// then records what was played.
    pub(super) async fn run(mut self) {
        loop {
            if self.ending()
                && self.playing.is_none()
                && self.handed.is_none()
                && !matches!(self.queue, Queue::Claiming { .. })
                && self.unrecorded.is_empty()
            {
                break;
            }
            self.claim_if_wanted();
            self.record_if_due();
            let step = self.next_step().await;
            if !self.apply(step).await {
                break;
            }
        }
        let Worker {
            core,
            config,
            own,
            thread,
            unrecorded,
            mut recordings,
            ..
        } = self;
        drop(thread);
        for (claimed, outcome) in unrecorded {
            finish(core, config, own, claimed, outcome).await;
        }
        while recordings.join_next().await.is_some() {}
    }

    /// Whether the worker is draining or stopping: it claims nothing more.
    fn ending(&self) -> bool {
        self.draining || self.stopping
    }

    /// Starts a claim if a match is wanted: the match thread is idle (and
    /// the worker not waiting out an empty queue), or it plays a short match
    /// and nothing was claimed ahead during it yet.
    fn claim_if_wanted(&mut self) {
        let thread_idle = self.playing.is_none() && self.handed.is_none();
        let wanted = thread_idle || (self.handed.is_none() && self.claim_ahead && !self.tried_ahead);
        if wanted && !self.ending() && matches!(self.queue, Queue::Ready) && self.recordings.len() < RECORDINGS {
            let woken = if thread_idle {
                Some(Box::pin(crate::queue::woken()))
            } else {
                self.tried_ahead = true;
                None
            };
            self.queue = Queue::Claiming {
                claim: Box::pin(claim(self.core, self.config, self.own)),
                woken,
            };
        }
    }

    /// Starts recording the played matches once the claim of the next one
    /// is under way (and then after it: the claim goes first on the worker's
    /// connection), unless it has to wait for a claim to start.
    fn record_if_due(&mut self) {
        let next_starting = self.playing.is_none() && self.handed.is_some();
        if !matches!(self.queue, Queue::Claiming { .. }) && (!next_starting || self.ending()) {
            for (claimed, outcome) in self.unrecorded.drain(..) {
                let (core, config, own) = (self.core.clone(), self.config.clone(), self.own.clone());
                self.recordings
                    .spawn(async move { finish(&core, &config, &own, claimed, outcome).await });
            }
        }
    }

    /// Waits for the next event.
    async fn next_step(&mut self) -> Step {
        let Worker {
            reports,
            queue,
            playing,
            handed,
            recordings,
            heartbeat,
            drain,
            stop,
            draining,
            stopping,
            ..
        } = self;
        let renewing = playing.as_ref().is_some_and(|p| p.abandoned.is_none());
        let hold = handed.as_mut().and_then(|h| h.hold.as_mut());
        tokio::select! {
            report = reports.recv() => Step::Report(report),
            step = queue.next() => step,
            () = pending_if_none(hold) => Step::HoldOver,
            _ = heartbeat.tick(), if renewing => Step::Heartbeat,
            changed = stop.changed(), if !*stopping => {
                if changed.is_err() || *stop.borrow() { Step::Stop } else { Step::Nothing }
            }
            changed = drain.changed(), if !*draining => {
                if changed.is_err() || *drain.borrow() { Step::Drain } else { Step::Nothing }
            }
            Some(_) = recordings.join_next() => Step::Nothing,
        }
    }

    /// Applies `step`; false when the worker cannot go on (its match thread
    /// is gone).
    async fn apply(&mut self, step: Step) -> bool {
        let config = self.config;
        match step {
            Step::Report(Some(Report::Started { id, cancel })) => {
                self.handed = None;
                self.tried_ahead = false;
                if self.stopping {
                    cancel.store(true, Ordering::Relaxed);
                }
                let abandoned = self.stopping.then_some(WorkerError::Stopped);
                self.playing = Some(Playing { id, cancel, abandoned });
                self.heartbeat.reset();
            }
            Step::Report(Some(Report::Played(ended))) => {
                let Ended { claimed, outcome, took } = *ended;
                let outcome = match (self.playing.take().and_then(|p| p.abandoned), outcome) {
                    (None, outcome) => outcome,
                    // Stopping, but the match was over before the next
                    // turn: it is still ours to record.
                    (Some(WorkerError::Stopped), Ok(played)) => Ok(played),
                    (Some(reason), _) => Err(reason),
                };
                self.claim_ahead = took < config.claim_ahead_below;
                self.unrecorded.push((claimed, outcome));
            }
            // The match thread is gone (it never ends on its own).
            Step::Report(None) => {
                tracing::error!(worker = %config.id, "the worker's match thread ended");
                return false;
            }
            Step::Claimed(next) => {
                let woken = match std::mem::replace(&mut self.queue, Queue::Ready) {
                    Queue::Claiming { woken, .. } => woken,
                    Queue::Ready | Queue::Idle(_) => None,
                };
                match *next {
                    Ok(Some(claimed)) if self.ending() => give_back(self.own, config, &claimed).await,
                    Ok(Some(claimed)) => {
                        // Never longer than half a lease: the match claimed
                        // ahead is not renewed until it starts.
                        let hold = self
                            .playing
                            .is_some()
                            .then(|| Box::pin(tokio::time::sleep(config.hold_ahead_for.min(config.lease / 2))));
                        self.handed = Some(AwaitingStart { hold });
                        self.thread.hand(claimed);
                    }
                    Ok(None) => self.queue = Queue::idle(woken, config.poll),
                    Err(error) => {
                        tracing::warn!(worker = %config.id, %error, "cannot claim a match");
                        self.own.forget_if_broken(&error);
                        self.queue = Queue::idle(woken, config.poll);
                    }
                }
            }
            Step::IdleOver => self.queue = Queue::Ready,
            Step::HoldOver => {
                if let Some(handed) = &mut self.handed {
                    handed.hold = None;
                }
                self.give_back_handed().await;
            }
            Step::Heartbeat => {
                let Some(current) = self.playing.as_mut() else {
                    return true;
                };
                match renew(self.own, config, current.id).await {
                    Ok(true) => {}
                    Ok(false) => {
                        current.cancel.store(true, Ordering::Relaxed);
                        current.abandoned = Some(WorkerError::LeaseLost);
                    }
                    Err(error) => {
                        tracing::warn!(worker = %config.id, id = current.id, %error, "cannot renew the lease");
                        self.own.forget_if_broken(&error);
                    }
                }
            }
            Step::Stop => {
                self.stopping = true;
                if let Some(current) = self.playing.as_mut().filter(|p| p.abandoned.is_none()) {
                    current.cancel.store(true, Ordering::Relaxed);
                    current.abandoned = Some(WorkerError::Stopped);
                }
                self.give_back_handed().await;
            }
            Step::Drain => {
                self.draining = true;
                self.give_back_handed().await;
            }
            Step::Nothing => {}
        }
        true
    }

    /// Gives back the match handed to the thread if the thread has not
    /// taken it yet.
    async fn give_back_handed(&mut self) {
        if let Some(held) = self.thread.take_back() {
            self.handed = None;
            give_back(self.own, self.config, &held).await;
        }
    }
}

/// The output of `future`, or never without one.
async fn pending_if_none<F: Future + Unpin>(future: Option<&mut F>) -> F::Output {
    match future {
        Some(future) => future.await,
        None => std::future::pending().await,
    }
}
