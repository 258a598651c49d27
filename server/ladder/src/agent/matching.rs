//! Automatic matching: idle agent bots paired with each other or with
//! house bots.

use super::{Hall, directory, online};
use crate::error::Result;
use crate::handles::Handles;
use arbiter_games::othello::Mode;
use std::collections::HashSet;

impl Hall {
    /// One round of automatic matching: every online, idle agent bot with
    /// automatic matching on (not practising, not out) is challenged as
    /// `bot_b` to a standard match against an online agent bot of similar
    /// rating, else a house bot.
    pub async fn auto_match(&self, core: &Handles) -> Result<()> {
        let now = self.now();
        // The directory is read only when some bot is there to be paired.
        let anyone = {
            let state = self.lock();
            state
                .presence
                .keys()
                .any(|&bot| online(&state, &self.inner.rules, bot, now))
        };
        if !anyone {
            return Ok(());
        }
        let bots = self.directory(core).await?;
        let waiting: Vec<&directory::Entry> = {
            let state = self.lock();
            bots.iter()
                .filter(|entry| {
                    let presence = state.presence.get(&entry.id);
                    entry.agent
                        && entry.auto_match
                        && entry.modes.contains(&Mode::Std)
                        && online(&state, &self.inner.rules, entry.id, now)
                        && presence.is_some_and(|p| !p.environment.practice && p.auto_out_until_ms <= now)
                        && !state
                            .matches
                            .values()
                            .any(|m| !m.status.is_over() && m.participant_of(entry.id).is_some())
                })
                .collect()
        };
        let mut taken: HashSet<i64> = HashSet::new();
        for &bot in &waiting {
            if taken.contains(&bot.id) {
                continue;
            }
            let nearest = |candidates: Vec<&'_ directory::Entry>| -> Option<i64> {
                candidates
                    .into_iter()
                    .filter(|other| {
                        other.id != bot.id && !taken.contains(&other.id) && other.modes.contains(&Mode::Std)
                    })
                    .min_by(|x, y| {
                        (x.rating.rating - bot.rating.rating)
                            .abs()
                            .total_cmp(&(y.rating.rating - bot.rating.rating).abs())
                    })
                    .map(|entry| entry.id)
            };
            let found = nearest(waiting.clone()).or_else(|| nearest(bots.iter().filter(|e| e.house).collect()));
            let opponent = found.and_then(|id| bots.iter().find(|e| e.id == id));
            let Some(opponent) = opponent else { continue };
            taken.insert(bot.id);
            if opponent.agent {
                taken.insert(opponent.id);
            }
            self.create(core, opponent, bot, Mode::Std, true, true).await?;
        }
        Ok(())
    }
}
