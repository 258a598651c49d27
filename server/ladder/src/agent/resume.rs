//! Saving the hall's matches at every change and resuming the ones no
//! hall holds ([`store`] keeps them).

use super::live::{LiveMatch, Status};
use super::{Hall, close_row, store};
use crate::db::now_ms;
use crate::handles::Handles;

impl Hall {
    /// Saves matches `ids` as they are now (those whose end is not written
    /// yet); one that cannot be saved stays marked changed.
    pub(super) async fn save(&self, core: &Handles, ids: &[i64]) {
        let until = now_ms() + store::LEASE_MS;
        let hall_ms = self.now();
        for &id in ids {
            let snapshot = {
                let mut state = self.lock();
                let done = state.done.contains(&id);
                state.dirty.remove(&id);
                match state.matches.get_mut(&id) {
                    Some(m) if !done => Some(m.snapshot()),
                    _ => None,
                }
            };
            let Some((saves, text)) = snapshot else { continue };
            if let Err(error) = store::save(&core.db, id, saves, &text, &self.inner.id, until, hall_ms).await {
                tracing::warn!(id, %error, "cannot save the remote match");
                self.lock().dirty.insert(id);
            }
        }
    }

    /// Saves every match changed since its last save.
    pub(super) async fn save_changed(&self, core: &Handles) {
        let dirty: Vec<i64> = self.lock().dirty.iter().copied().collect();
        if !dirty.is_empty() {
            self.save(core, &dirty).await;
        }
    }

    /// Renews this hall's hold on its matches.
    pub(super) async fn renew_hold(&self, core: &Handles) {
        if let Err(error) = store::renew(&core.db, &self.inner.id, now_ms() + store::LEASE_MS, self.now()).await {
            tracing::warn!(%error, "cannot renew the hold on this hall's remote matches");
        }
    }

    /// Claims the matches no hall holds and resumes them here: each one's
    /// deadlines move on by the time nobody held it, and its agents get
    /// the disconnect limit from now to come back. Remote match rows that
    /// cannot be resumed are aborted, unrated.
    pub async fn take_over(&self, core: &Handles) {
        match store::tidy(&core.db, now_ms()).await {
            Ok(0) => {}
            Ok(aborted) => tracing::info!(aborted, "remote matches left without a saved state were aborted"),
            Err(error) => tracing::warn!(%error, "cannot tidy the remote matches left from an earlier run"),
        }
        let claimed = match store::claim(&core.db, &self.inner.id, now_ms(), now_ms() + store::LEASE_MS).await {
            Ok(claimed) => claimed,
            Err(error) => {
                tracing::warn!(%error, "cannot claim the remote matches left from an earlier run");
                return;
            }
        };
        for store::Claimed { id, state, hall_ms } in claimed {
            let mut m = match LiveMatch::restore(&state) {
                Ok(m) => m,
                Err(error) => {
                    tracing::warn!(id, %error, "a saved remote match cannot be resumed");
                    let why = format!("the match could not be resumed after a restart ({error}); it was not rated");
                    if let Err(error) = close_row(core, id, "aborted", &why).await {
                        tracing::warn!(id, %error, "cannot close the remote match's row");
                    }
                    continue;
                }
            };
            let now = self.now();
            m.rebase(now - hall_ms);
            let ended = m.status == Status::Finished;
            {
                let mut state = self.lock();
                for participant in m.participants.iter().filter(|p| p.agent) {
                    let presence = state.presence.entry(participant.bot).or_default();
                    presence.last_seen_ms = presence.last_seen_ms.max(now);
                }
                if ended {
                    state.to_record.push(id);
                }
                state.matches.insert(id, m);
            }
            tracing::info!(id, "remote match resumed");
            self.notify(id);
        }
        self.inner.wake.notify_one();
    }
}
