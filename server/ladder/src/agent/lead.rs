//! Which front end's hall runs the live games when several `arbiter serve`
//! share a database: one leads under a lease ([`store::lead`]), the others
//! forward live requests to it.

use super::{Hall, store};
use crate::db::now_ms;
use crate::handles::Handles;
use std::sync::MutexGuard;
use std::time::Duration;

/// A hall's place among the front ends sharing a database: one leads (runs
/// the live matches), the others forward live requests to it.
#[derive(Default)]
pub(super) struct Lead {
    /// This hall as the others would reach it ([`Hall::announce`]); `None`:
    /// it leads without asking (one process, or a test's core).
    me: Option<store::Leader>,
    /// The leader, as last read.
    leader: Option<store::Leader>,
    /// When [`Hall::reconsider_lead`] last looked.
    looked: Option<std::time::Instant>,
}

impl Hall {
    /// Makes this hall one of several front ends sharing the database:
    /// reachable by the others at `url`. From then on it runs live matches
    /// only while it leads ([`Hall::begin`]).
    pub fn announce(&self, url: &str) {
        let mut secret = [0u8; 24];
        let _ = getrandom::fill(&mut secret);
        self.lead_state().me = Some(store::Leader {
            hall: self.inner.id.clone(),
            url: url.trim_end_matches('/').to_owned(),
            secret: secret.iter().map(|b| format!("{b:02x}")).collect(),
        });
    }

    /// Where live requests (the agent API, games against people) must go
    /// when another front end's hall leads: `None` when this one answers
    /// them.
    pub fn leader_elsewhere(&self) -> Option<store::Leader> {
        let lead = self.lead_state();
        match (&lead.me, &lead.leader) {
            (Some(me), Some(leader)) if leader.hall != me.hall => Some(leader.clone()),
            _ => None,
        }
    }

    /// Whether this hall runs the live matches now.
    pub fn is_leading(&self) -> bool {
        self.leader_elsewhere().is_none()
    }

    /// Whether `secret` is this hall's: a request carrying it was
    /// forwarded by another front end of the deployment.
    pub fn trusts(&self, secret: &[u8]) -> bool {
        let lead = self.lead_state();
        let Some(me) = &lead.me else { return false };
        // Compared in constant time: nothing learnt from how long a
        // wrong guess takes.
        bool::from(subtle::ConstantTimeEq::ct_eq(me.secret.as_bytes(), secret))
    }

    /// Takes the lead if it is free (or renews it), and acts on the
    /// outcome: a hall that just became leader resumes the matches nobody
    /// holds; one that lost the lead saves and releases its matches for
    /// the leader.
    pub(super) async fn follow_lead(&self, core: &Handles) {
        let Some(me) = self.lead_state().me.clone() else { return };
        let now = now_ms();
        let leader = match store::lead(&core.db, &me, now, now + store::LEASE_MS).await {
            Ok(leader) => leader,
            Err(error) => {
                tracing::warn!(%error, "cannot read which front end leads the agent hall");
                return;
            }
        };
        let was_leading = self.is_leading();
        let leading = leader.hall == me.hall;
        if leading != was_leading || self.lead_state().leader.is_none() {
            if leading {
                tracing::info!("this front end leads the agent hall (agent matches, games against people)");
            } else {
                tracing::info!(leader = %leader.url, "another front end leads the agent hall: live requests go there");
            }
        }
        self.lead_state().leader = Some(leader);
        if was_leading && !leading {
            self.hand_over(core).await;
        }
        // Games against people the leader before left are resumed by this
        // process's people games (`People::run`), not here.
    }

    /// Saves and releases every match this hall holds and forgets them
    /// (the leader claims them).
    pub(super) async fn hand_over(&self, core: &Handles) {
        let all: Vec<i64> = self.lock().matches.keys().copied().collect();
        self.save(core, &all).await;
        if let Err(error) = store::release(&core.db, &self.inner.id, self.now()).await {
            tracing::warn!(%error, "cannot release this hall's remote matches for the leader");
        }
        let mut state = self.lock();
        for id in all {
            state.matches.remove(&id);
            self.inner.house.forget(id);
        }
    }

    /// Starts the hall in a serving process, before it answers anything:
    /// takes the lead when it is free and then resumes the matches an
    /// earlier process saved.
    pub async fn begin(&self, core: &Handles) {
        self.follow_lead(core).await;
        if self.is_leading() {
            self.take_over(core).await;
        }
    }

    /// Looks again at once which hall leads (a forwarded request found
    /// the leader gone), taking the lead and the matches if they are free;
    /// at most once per 250 ms, however many requests ask.
    pub async fn reconsider_lead(&self, core: &Handles) {
        {
            let mut lead = self.lead_state();
            if lead.looked.is_some_and(|at| at.elapsed() < Duration::from_millis(250)) {
                return;
            }
            lead.looked = Some(std::time::Instant::now());
        }
        let was_leading = self.is_leading();
        self.follow_lead(core).await;
        if self.is_leading() && !was_leading {
            self.take_over(core).await;
        }
    }

    pub(super) fn lead_state(&self) -> MutexGuard<'_, Lead> {
        self.inner
            .lead
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}
