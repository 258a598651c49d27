//! What agents ask most: who they are (tokens believed for a moment), the
//! bot directory (read at most once a second, its objects serialised once
//! for everyone), polls and event streams.

use super::{
    AgentBot, BotObjects, DIRECTORY_TTL, DirectoryRead, Environment, Hall, Stream, TOKEN_TTL, TOKENS_KEPT, directory,
    online, tokens,
};
use crate::error::{Error, Result};
use crate::handles::Handles;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

impl Hall {
    /// The bot directory, read again when older than [`DIRECTORY_TTL`] or
    /// when it lacks `bot` (just registered, or back from retirement).
    pub(super) async fn directory_with(&self, core: &Handles, bot: i64) -> Result<Arc<Vec<directory::Entry>>> {
        let entries = self.directory(core).await?;
        if entries.iter().any(|entry| entry.id == bot) {
            return Ok(entries);
        }
        self.forget_directory();
        self.directory(core).await
    }

    /// The bot directory, read again when older than [`DIRECTORY_TTL`].
    pub(super) async fn directory(&self, core: &Handles) -> Result<Arc<Vec<directory::Entry>>> {
        let cached = |slot: &Mutex<Option<DirectoryRead>>| {
            slot.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .as_ref()
                .filter(|(read, _)| read.elapsed() < DIRECTORY_TTL)
                .map(|(_, entries)| entries.clone())
        };
        if let Some(entries) = cached(&self.inner.directory) {
            return Ok(entries);
        }
        let entries = Arc::new(directory::list(core).await?);
        *self
            .inner
            .directory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some((std::time::Instant::now(), entries.clone()));
        Ok(entries)
    }

    /// Forgets the directory read (ratings or bots changed).
    pub(super) fn forget_directory(&self) {
        *self
            .inner
            .directory
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
        *self
            .inner
            .bot_objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = None;
    }

    /// The directory's bot objects (with each bot's presence), serialised
    /// at most once per [`DIRECTORY_TTL`] for all polls, and again when
    /// `bot` is missing from them.
    pub(super) async fn bot_objects(&self, core: &Handles, bot: i64) -> Result<Arc<BotObjects>> {
        let fresh = |slot: &Mutex<Option<Arc<BotObjects>>>| {
            slot.lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .as_ref()
                .filter(|o| o.made.elapsed() < DIRECTORY_TTL && o.objects.iter().any(|(id, _)| *id == bot))
                .cloned()
        };
        if let Some(objects) = fresh(&self.inner.bot_objects) {
            return Ok(objects);
        }
        let entries = self.directory_with(core, bot).await?;
        let now = self.now();
        let objects = {
            let state = self.lock();
            entries
                .iter()
                .map(|entry| {
                    let object = entry.view(
                        core,
                        online(&state, &self.inner.rules, entry.id, now),
                        state.presence.get(&entry.id).map(|p| &p.environment),
                    );
                    (entry.id, object.to_string())
                })
                .collect()
        };
        let made = Arc::new(BotObjects {
            made: std::time::Instant::now(),
            objects,
        });
        *self
            .inner
            .bot_objects
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(made.clone());
        Ok(made)
    }

    /// Issues a new bot token for `user_id`'s agent bot `name` (see
    /// [`tokens::issue`]); the tokens this hall believed are forgotten, so
    /// the old one is refused here at once (elsewhere within
    /// [`TOKEN_TTL`]).
    pub async fn issue_token(&self, db: &crate::db::Db, user_id: i64, name: &str) -> Result<String> {
        let token = tokens::issue(db, user_id, name).await?;
        self.inner
            .tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
        Ok(token)
    }

    /// The bot a bot token belongs to, marked seen now. 401 `invalid bot
    /// credential` for a token that is not (or no longer) valid.
    pub async fn authenticate(&self, core: &Handles, token: &str) -> Result<AgentBot> {
        let hash = crate::auth::secret_hash(token);
        let known = {
            let tokens = self
                .inner
                .tokens
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            tokens
                .get(&hash)
                .filter(|(seen, _)| seen.elapsed() < TOKEN_TTL)
                .map(|(_, bot)| bot.clone())
        };
        let bot = match known {
            Some(bot) => bot,
            None => {
                let bot = tokens::bot_by_token(&core.db, token).await.inspect_err(|error| {
                    // An agent that cannot be heard cannot move: its clock
                    // stops at once, not at the database watch's next look.
                    if error.is_unavailable() {
                        self.pause("its database cannot be reached from agents' requests");
                    }
                })?;
                let mut tokens = self
                    .inner
                    .tokens
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if tokens.len() >= TOKENS_KEPT {
                    tokens.retain(|_, (seen, _)| seen.elapsed() < TOKEN_TTL);
                }
                tokens.insert(hash, (std::time::Instant::now(), bot.clone()));
                bot
            }
        };
        let now = self.now();
        self.lock().presence.entry(bot.id).or_default().last_seen_ms = now;
        Ok(bot)
    }

    /// Opens an event stream for `bot`: 429 `too many streams` past the
    /// rules' limit.
    pub fn subscribe(&self, bot: &AgentBot) -> Result<Stream> {
        let now = self.now();
        let mut state = self.lock();
        let presence = state.presence.entry(bot.id).or_default();
        if presence.streams >= self.inner.rules.max_streams {
            return Err(Error::RateLimited {
                message: "too many streams".into(),
                retry_after_s: 10,
            });
        }
        presence.streams += 1;
        presence.last_seen_ms = now;
        let sender = state.channels.entry(bot.id).or_insert_with(|| broadcast::channel(64).0);
        let changes = sender.subscribe();
        Ok(Stream {
            hall: self.clone(),
            bot: bot.id,
            changes,
        })
    }

    /// The match object of `id` for one of its bots, if the hall holds it,
    /// as JSON text: built once per change of the match for every stream
    /// and poll that shows it.
    pub fn match_view_text(&self, bot: i64, id: i64) -> Option<String> {
        let now = self.now();
        let state = self.lock();
        state
            .matches
            .get(&id)
            .filter(|m| m.participant_of(bot).is_some())
            .map(|m| m.view_text(now))
    }

    /// Whether `bot` is online now: a stream open or seen within the
    /// rules' online time.
    pub fn online(&self, bot: i64) -> bool {
        let now = self.now();
        let state = self.lock();
        online(&state, &self.inner.rules, bot, now)
    }

    /// `agent_poll`: records the environment, then answers the other bots,
    /// this bot's matches, its owner and itself, as JSON bytes. The bot
    /// objects are copied from the directory serialised once a second for
    /// every poll (a bot's rating, profile and presence are at most that
    /// old), not built and serialised again for each.
    pub async fn poll_answer(
        &self,
        core: &Handles,
        bot: &AgentBot,
        environment: Option<Environment>,
    ) -> Result<Vec<u8>> {
        use std::fmt::Write;
        self.seen(bot, environment)?;
        self.tick_matches(core);
        let objects = self.bot_objects(core, bot.id).await.inspect_err(|error| {
            // A poll that cannot show the board cannot lead to a move.
            if error.is_unavailable() {
                self.pause("its database cannot be reached from agents' polls");
            }
        })?;
        let now = self.now();
        let matches: Vec<String> = {
            let state = self.lock();
            state
                .matches
                .values()
                .filter(|m| m.participant_of(bot.id).is_some())
                .map(|m| m.view_text(now))
                .collect()
        };
        let size = objects.objects.iter().map(|(_, o)| o.len() + 1).sum::<usize>() + 1024;
        let mut out = String::with_capacity(size);
        let mine = objects.objects.iter().find(|(id, _)| *id == bot.id);
        // The keys in the order a serialised `Value` has them.
        out.push_str("{\"bot\":");
        out.push_str(mine.map_or("null", |(_, object)| object.as_str()));
        out.push_str(",\"bots\":[");
        let mut first = true;
        for (_, object) in objects.objects.iter().filter(|(id, _)| *id != bot.id) {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(object);
        }
        out.push_str("],\"matches\":[");
        out.push_str(&matches.join(","));
        out.push(']');
        out.push_str(",\"me\":");
        out.push_str(&Value::from(bot.owner.as_str()).to_string());
        let _ = write!(out, ",\"ok\":true,\"record_bots\":[],\"server_now_ms\":{now}}}");
        Ok(out.into_bytes())
    }

    /// Marks `bot` seen now, with the environment it reports.
    fn seen(&self, bot: &AgentBot, environment: Option<Environment>) -> Result<()> {
        if let Some(environment) = &environment {
            environment.check()?;
        }
        let now = self.now();
        let mut state = self.lock();
        let presence = state.presence.entry(bot.id).or_default();
        presence.last_seen_ms = now;
        if let Some(environment) = environment {
            presence.environment = environment;
        }
        Ok(())
    }
}
