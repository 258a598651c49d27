//! The sandbox's instances, divided by purpose.
//!
//! Every sandboxed bot that exists holds one instance of the sandbox's pool
//! ([`SandboxConfig::instance_slots`](arbiter_sandbox::SandboxConfig::instance_slots)).
//! The pool is sized as the sum of the [`Budgets`], and each purpose is held
//! to its own share: upload checks and ladder matches are bounded by how
//! many run at once (one checker, in-process workers), people games by
//! their [`Quota`](crate::quota::Quota) and the agent hall's house bots by
//! a semaphore. A public purpose that fills its share therefore waits or
//! is refused on its own, and never makes an upload check or a ladder
//! match fail for want of an instance.

/// How many sandbox instances each purpose may hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// The upload checker: a smoke game holds the new bot and its house
    /// opponent (the checker checks one version at a time).
    pub checks: u32,
    /// Ladder, challenge and tournament matches played by this process's
    /// workers: two bots per worker.
    pub matches: u32,
    /// Games against people from the site: one bot per game; also the most
    /// such games at once.
    pub people: u32,
    /// The agent hall's house bots: one per leg a house bot is playing
    /// (its moves wait for a place, on its fuel clock, when all are held).
    pub house: u32,
}

/// Instances one upload check holds.
const CHECK_INSTANCES: u32 = 2;
/// Instances one worker's match holds (one per side).
const MATCH_INSTANCES: u32 = 2;

impl Budgets {
    /// The budgets of a process with `workers` in-process workers that
    /// also checks uploads, plays people and runs the agent hall: 2
    /// instances for checks, 2 per worker, 16 for people games and 16 for
    /// house bots in the agent hall.
    pub fn with_workers(workers: usize) -> Budgets {
        Budgets {
            checks: CHECK_INSTANCES,
            matches: MATCH_INSTANCES.saturating_mul(u32::try_from(workers).unwrap_or(u32::MAX)),
            people: 16,
            house: 16,
        }
    }

    /// The budgets of a process that only plays matches (`arbiter
    /// worker`): 2 instances per worker slot, nothing for anything else.
    pub fn worker_only(slots: usize) -> Budgets {
        Budgets {
            checks: 0,
            people: 0,
            house: 0,
            ..Budgets::with_workers(slots)
        }
    }

    /// The sandbox's pool: every budget's instances, at least one.
    pub fn instance_slots(&self) -> u32 {
        self.checks
            .saturating_add(self.matches)
            .saturating_add(self.people)
            .saturating_add(self.house)
            .max(1)
    }

    /// Each purpose with its budget, in the order `/metrics` lists them.
    pub fn by_purpose(&self) -> [(&'static str, u32); 4] {
        [
            ("checks", self.checks),
            ("matches", self.matches),
            ("people", self.people),
            ("house", self.house),
        ]
    }
}

/// The budgets and what the public purposes hold now, in Prometheus's text
/// format: `arbiter_sandbox_instance_budget{purpose}` for every purpose and
/// `arbiter_sandbox_instances_held{purpose}` for people games and the agent
/// hall's house bots (checks and matches hold at most what their number of
/// runners allows).
pub fn render_metrics(core: &crate::core::Core) -> String {
    use std::fmt::Write;
    let mut text = String::from(
        "# HELP arbiter_sandbox_instance_budget Sandbox instances each purpose may hold at once; the pool is their sum\n\
         # TYPE arbiter_sandbox_instance_budget gauge\n",
    );
    for (purpose, budget) in core.budgets.by_purpose() {
        let _ = writeln!(
            text,
            "arbiter_sandbox_instance_budget{{purpose=\"{purpose}\"}} {budget}"
        );
    }
    text.push_str(
        "# HELP arbiter_sandbox_instances_held Sandbox instances held now by games against people and by the agent hall's house bots\n\
         # TYPE arbiter_sandbox_instances_held gauge\n",
    );
    let (people, _) = core.people.playing();
    let (house, _) = core.agents.house_instances();
    let _ = writeln!(text, "arbiter_sandbox_instances_held{{purpose=\"people\"}} {people}");
    let _ = writeln!(text, "arbiter_sandbox_instances_held{{purpose=\"house\"}} {house}");
    text
}

impl Default for Budgets {
    /// [`Budgets::with_workers`] with one worker per core, as `arbiter
    /// serve` starts by default.
    fn default() -> Budgets {
        Budgets::with_workers(std::thread::available_parallelism().map_or(1, usize::from))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_the_sum_of_the_budgets() {
        let budgets = Budgets::with_workers(3);
        assert_eq!(budgets.matches, 6);
        assert_eq!(budgets.instance_slots(), 2 + 6 + 16 + 16);
        let worker = Budgets::worker_only(4);
        assert_eq!((worker.checks, worker.people, worker.house), (0, 0, 0));
        assert_eq!(worker.instance_slots(), 8);
        assert_eq!(Budgets::worker_only(0).instance_slots(), 1);
    }
}
