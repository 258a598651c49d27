//! A worker's match thread: it plays the matches its worker hands it, one
//! at a time, off the async runtime, and reports each start and end.

use super::play::play;
use super::{Claimed, Played, WorkerError};
use crate::core::Core;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// What a worker's match thread tells its worker.
pub(super) enum Report {
    /// It took match `id` from the hand and began playing it; `cancel`
    /// ends it at its next turn.
    Started { id: i64, cancel: Arc<AtomicBool> },
    /// It finished (or abandoned) a match.
    Played(Box<Ended>),
}

/// A match the match thread is done with.
pub(super) struct Ended {
    pub(super) claimed: Claimed,
    pub(super) outcome: Result<Played, WorkerError>,
    /// How long it played.
    pub(super) took: Duration,
}

/// The hand-over between a worker and its match thread.
enum Handover {
    /// Nothing to play yet.
    Empty,
    /// The next match, taken when the current one ends: a match claimed
    /// ahead starts without waiting for the worker's task to be scheduled.
    Next(Box<Claimed>),
    /// The worker is gone: the thread ends.
    Quit,
}

/// A worker's match thread: it plays one match at a time, the one handed
/// to it, and reports each start and end. Dropping it ends the thread once
/// its match is over.
pub(super) struct MatchThread {
    hand: Arc<(std::sync::Mutex<Handover>, std::sync::Condvar)>,
}

impl MatchThread {
    /// Starts the thread of worker `worker`.
    pub(super) fn start(
        core: &Core,
        worker: &str,
    ) -> std::io::Result<(MatchThread, tokio::sync::mpsc::UnboundedReceiver<Report>)> {
        let hand = Arc::new((std::sync::Mutex::new(Handover::Empty), std::sync::Condvar::new()));
        let (reports, received) = tokio::sync::mpsc::unbounded_channel();
        let (core, thread_hand) = (core.clone(), hand.clone());
        std::thread::Builder::new()
            .name(format!("match-{worker}"))
            .spawn(move || {
                while let Some(claimed) = MatchThread::next(&thread_hand) {
                    let cancel = Arc::new(AtomicBool::new(false));
                    let id = claimed.id;
                    if reports
                        .send(Report::Started {
                            id,
                            cancel: cancel.clone(),
                        })
                        .is_err()
                    {
                        break;
                    }
                    let began = Instant::now();
                    let outcome =
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| play(&core, &claimed, &cancel)))
                            .unwrap_or_else(|_| {
                                Err(WorkerError::Host(format!("the thread playing match {id} panicked")))
                            });
                    let took = began.elapsed();
                    if reports
                        .send(Report::Played(Box::new(Ended { claimed, outcome, took })))
                        .is_err()
                    {
                        break;
                    }
                }
            })?;
        Ok((MatchThread { hand }, received))
    }

    /// Waits for the next match; `None` when the worker is gone.
    fn next(hand: &(std::sync::Mutex<Handover>, std::sync::Condvar)) -> Option<Claimed> {
        let (slot, ready) = hand;
        let mut slot = slot.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loop {
            match std::mem::replace(&mut *slot, Handover::Empty) {
                Handover::Next(claimed) => return Some(*claimed),
                Handover::Quit => {
                    *slot = Handover::Quit;
                    return None;
                }
                Handover::Empty => slot = ready.wait(slot).unwrap_or_else(std::sync::PoisonError::into_inner),
            }
        }
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Handover> {
        self.hand.0.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Hands the thread its next match (the worker hands one at a time).
    pub(super) fn hand(&self, claimed: Claimed) {
        *self.slot() = Handover::Next(Box::new(claimed));
        self.hand.1.notify_one();
    }

    /// Takes back the match handed over, unless the thread took it first.
    pub(super) fn take_back(&self) -> Option<Claimed> {
        let mut slot = self.slot();
        match std::mem::replace(&mut *slot, Handover::Empty) {
            Handover::Next(claimed) => Some(*claimed),
            other => {
                *slot = other;
                None
            }
        }
    }
}

impl Drop for MatchThread {
    fn drop(&mut self) {
        *self.slot() = Handover::Quit;
        self.hand.1.notify_one();
    }
}
