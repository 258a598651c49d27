//! The hall's time: clocks, first moves, disconnections and expiries
//! settled several times a second, house bots' moves computed on their own
//! fuel clock, ended matches recorded.

use super::live::{Change, Participant, Status};
use super::{Hall, HallState, Presence, close_row, store};
use crate::handles::Handles;
use std::collections::{HashMap, HashSet};

/// One house move to compute.
pub(super) struct HouseTurn {
    id: i64,
    leg: usize,
    request: String,
    revision: u32,
    /// The house bot's module (a blob key).
    module: String,
    budget_ms: u64,
}

impl Hall {
    /// Settles every match's time, first moves and disconnections now,
    /// starts house moves that are due and expires challenges. Cheap; the
    /// hall's loop calls it several times a second, API calls too.
    pub fn tick_matches(&self, core: &Handles) {
        let now = self.now();
        let rules = self.inner.rules;
        let mut changed = Vec::new();
        let mut due = Vec::new();
        let mut closed = Vec::new();
        {
            let mut guard = self.lock();
            let state = &mut *guard;
            let connected = |presence: &HashMap<i64, Presence>, p: &Participant| {
                !p.agent
                    || presence
                        .get(&p.bot)
                        .is_some_and(|x| x.streams > 0 || now - x.last_seen_ms <= rules.disconnect_ms)
            };
            for m in state.matches.values_mut() {
                let mut change = Change::default();
                match m.status {
                    Status::Pending if m.expires_ms <= now => {
                        m.close(Status::Expired, now);
                        if m.auto {
                            let out = now + rules.auto_out_ms;
                            state
                                .presence
                                .entry(m.participants[1].bot)
                                .or_default()
                                .auto_out_until_ms = out;
                        }
                        closed.push((m.id, "expired"));
                        change.changed = true;
                    }
                    Status::Running => {
                        let before = m.revision;
                        let advanced = m.advance(now);
                        change = advanced;
                        let first = m.check_first_moves(now, rules.first_move_ms);
                        change.changed |= first.changed;
                        change.ended |= first.ended;
                        if m.status == Status::Aborted {
                            closed.push((m.id, "aborted"));
                            change.ended = false;
                        }
                        if m.status == Status::Running {
                            let here = [0, 1].map(|i| connected(&state.presence, &m.participants[i]));
                            for participant in 0..2u8 {
                                if !here[usize::from(participant)] && here[usize::from(1 - participant)] {
                                    let why = format!(
                                        "disconnected: no event stream and no poll for more than {} s",
                                        rules.disconnect_ms / 1000
                                    );
                                    let lost = m.disconnect(participant, now, &why);
                                    change.changed |= lost.changed;
                                    change.ended |= lost.ended;
                                    break;
                                }
                            }
                        }
                        if m.status == Status::Running {
                            for (index, leg) in m.legs().iter().enumerate() {
                                let mover = &m.participants[usize::from(leg.mover())];
                                if leg.is_active() && !mover.agent && !state.thinking.contains(&(m.id, index)) {
                                    due.push((m.id, index));
                                }
                            }
                        }
                        change.changed |= m.revision != before;
                    }
                    _ => {}
                }
                if change.ended {
                    state.to_record.push(m.id);
                }
                if change.changed {
                    changed.push(m.id);
                }
            }
            for &(id, leg) in &due {
                state.thinking.insert((id, leg));
            }
            for &(id, _) in &closed {
                state.done.insert(id);
            }
            // Ended matches leave polls after a while.
            let keep = rules.keep_ended_ms;
            let recording: HashSet<i64> = state.to_record.iter().copied().collect();
            state.matches.retain(|id, m| {
                !m.status.is_over() || recording.contains(id) || m.finished_ms.is_none_or(|end| now - end < keep)
            });
            let HallState {
                matches, dirty, done, ..
            } = state;
            dirty.retain(|id| matches.contains_key(id));
            done.retain(|id| matches.contains_key(id));
        }
        for id in changed {
            self.notify(id);
        }
        for (id, leg) in due {
            self.move_house(core, id, leg);
        }
        for (id, status) in closed {
            let core = core.clone();
            tokio::spawn(async move {
                let why = match status {
                    "expired" => "bot_b did not accept in time",
                    _ => "no first move in time: aborted, not rated",
                };
                if let Err(error) = close_row(&core, id, status, why).await {
                    tracing::warn!(id, %error, "cannot close the remote match's row");
                }
            });
        }
        let to_record = std::mem::take(&mut self.lock().to_record);
        for id in to_record {
            let hall = self.clone();
            let core = core.clone();
            tokio::spawn(async move { hall.record(&core, id).await });
        }
    }

    /// Computes a house bot's move in a blocking thread (when a slot is
    /// free), then plays it.
    pub(super) fn move_house(&self, core: &Handles, id: i64, leg: usize) {
        let turn = {
            let state = self.lock();
            let Some(m) = state.matches.get(&id) else { return };
            let Some(l) = m.legs().get(leg) else { return };
            let participant = &m.participants[usize::from(l.mover())];
            let now = self.now();
            let remaining = u64::try_from(l.remaining_ms(now)).unwrap_or(0);
            HouseTurn {
                id,
                leg,
                request: l.request(id, leg as u8, now, remaining).to_line(),
                revision: l.revision(),
                module: participant.info.sha256.clone().unwrap_or_default(),
                budget_ms: remaining,
            }
        };
        let hall = self.clone();
        let core = core.clone();
        let slots = self.inner.house_slots.clone();
        let instances = self.inner.house_instances.clone();
        let needs_instance = !self.inner.house.has(id, leg);
        tokio::spawn(async move {
            // A leg's first house move takes its instance for the leg (and
            // waits for one when all are held); later moves have it.
            let instance = if needs_instance {
                let Ok(instance) = instances.acquire_owned().await else {
                    return;
                };
                Some(instance)
            } else {
                None
            };
            let Ok(slot) = slots.acquire_owned().await else { return };
            let _ = tokio::task::spawn_blocking(move || {
                let _slot = slot;
                hall.house_move(&core, &turn, instance);
            })
            .await;
        });
    }

    /// Runs a house bot's move (blocking) and plays it.
    pub(super) fn house_move(
        &self,
        core: &Handles,
        turn: &HouseTurn,
        instance: Option<tokio::sync::OwnedSemaphorePermit>,
    ) {
        let HouseTurn { id, leg, .. } = *turn;
        let answer = self
            .inner
            .house
            .turn(core, id, leg, &turn.module, &turn.request, turn.budget_ms, instance);
        let now = self.now();
        let changed = {
            let mut state = self.lock();
            state.thinking.remove(&(id, leg));
            let change = state
                .matches
                .get_mut(&id)
                .and_then(|m| m.play_house(leg, turn.revision, answer, now));
            if change.is_some_and(|c| c.ended) {
                state.to_record.push(id);
            }
            change.is_some()
        };
        if changed {
            self.notify(id);
        }
        self.inner.wake.notify_one();
    }

    /// Writes an ended match: the result, replay and rating change, or
    /// the row's end status when it was never played.
    pub(super) async fn record(&self, core: &Handles, id: i64) {
        self.inner.house.forget(id);
        let (replay, versions, ranked, ladder) = {
            let state = self.lock();
            let Some(m) = state.matches.get(&id) else { return };
            let fuel = m
                .participants
                .iter()
                .any(|p| !p.agent)
                .then_some(arbiter_sandbox::DEFAULT_FUEL_PER_MS);
            (
                m.replay(&arbiter_referee::engine(), fuel),
                [m.participants[0].version, m.participants[1].version],
                m.ranked,
                m.ladder.clone(),
            )
        };
        let Some(replay) = replay else { return };
        let recorded =
            crate::worker::record_hall_match(core, &self.inner.id, id, &ladder, versions, ranked, replay).await;
        if recorded.is_ok() {
            self.lock().done.insert(id);
            if let Err(error) = store::forget(&core.db, id).await {
                tracing::warn!(id, %error, "cannot drop the recorded remote match's saved state");
            }
        }
        match recorded {
            Ok(Some(ratings)) => {
                self.forget_directory();
                if let Some(m) = self.lock().matches.get_mut(&id) {
                    m.ratings = ratings;
                    m.revision += 1;
                }
                self.notify(id);
            }
            Ok(None) => tracing::warn!(id, "the remote match's row was not ours to record"),
            Err(error) => tracing::warn!(id, %error, "cannot record the remote match"),
        }
    }
}
