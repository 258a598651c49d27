//! What the person does in a game: moves (saved before they are
//! acknowledged), resignations, and who the person is.

use super::live::{Live, LiveState};
use super::{Holder, People, Refused, store};
use crate::error::Result;
use crate::handles::Handles;
use std::sync::Arc;

impl People {
    /// Whether `holder` is the person of game `id` while it is played
    /// here: they hold its key, or it belongs to their account.
    pub fn is_person(&self, id: i64, holder: &Holder) -> bool {
        self.live(id).is_some_and(|live| live.is_person(holder))
    }

    /// Whether `holder` is game `id`'s person, live or ended: they hold
    /// its key, or it belongs to their account.
    pub async fn belongs(&self, core: &Handles, id: i64, holder: &Holder) -> Result<bool> {
        if let Some(live) = self.live(id) {
            return Ok(live.is_person(holder));
        }
        let stored: Option<(Option<String>, Option<i64>)> =
            sqlx::query_as("SELECT key_hash, user_id FROM people_games WHERE id = $1")
                .bind(id)
                .fetch_optional(&core.db.pool)
                .await?;
        let Some((hash, owner)) = stored else {
            return Ok(false);
        };
        let by_key = match (hash, holder.key.as_deref()) {
            (Some(hash), Some(key)) => crate::auth::same_secret(&hash, &crate::auth::secret_hash(key)),
            _ => false,
        };
        Ok(by_key || (owner.is_some() && owner == holder.user_id))
    }

    /// Gives the game `id` whose key `key` is to account `user_id`, if it
    /// belongs to no account yet (a guest who signed in); the game may be
    /// running or over. Returns whether it now belongs to `user_id`.
    pub async fn claim(&self, core: &Handles, id: i64, key: &str, user_id: i64) -> Result<bool> {
        if let Some(live) = self.live(id) {
            if !live.is_key(key) {
                return Ok(false);
            }
            let mut state = live.lock();
            match state.user_id {
                Some(owner) => return Ok(owner == user_id),
                None => state.user_id = Some(user_id),
            }
        }
        let hash = crate::auth::secret_hash(key);
        let stored: Option<(Option<String>, Option<i64>)> =
            sqlx::query_as("SELECT key_hash, user_id FROM people_games WHERE id = $1")
                .bind(id)
                .fetch_optional(&core.db.pool)
                .await?;
        let Some((Some(stored_hash), owner)) = stored else {
            return Ok(false);
        };
        if !crate::auth::same_secret(&stored_hash, &hash) {
            return Ok(false);
        }
        if let Some(owner) = owner {
            return Ok(owner == user_id);
        }
        let done = sqlx::query("UPDATE people_games SET user_id = $1 WHERE id = $2 AND user_id IS NULL")
            .bind(user_id)
            .bind(id)
            .execute(&core.db.pool)
            .await?;
        Ok(done.rows_affected() == 1)
    }

    /// Game `id`, if `holder` is its person (resumed here first if it is
    /// running and no process holds it).
    async fn person_game(&self, core: &Handles, id: i64, holder: &Holder) -> std::result::Result<Arc<Live>, Refused> {
        let live = self
            .live_or_resumed(core, id)
            .await
            .map_err(|e| Refused::Unavailable(format!("the game cannot be read now: {e}")))?;
        let Some(live) = live else {
            // A running game another process still holds (its hold runs
            // out, or it is being released): not gone, only not here yet.
            let running = store::is_running(&core.db, id)
                .await
                .map_err(|e| Refused::Unavailable(format!("the game cannot be read now: {e}")))?;
            return Err(if running { restarting() } else { Refused::NoGame(id) });
        };
        if !live.is_person(holder) {
            return Err(Refused::NotYourGame);
        }
        Ok(live)
    }

    /// Plays `square` for the person `holder`, on the position of
    /// `revision`. The move is saved (every move so far, the person's
    /// clock left) before this returns the new revision; a move that
    /// cannot be saved changes nothing ([`Refused::Unavailable`]).
    pub async fn play_move(
        &self,
        core: &Handles,
        id: i64,
        holder: &Holder,
        revision: u32,
        square: &str,
    ) -> std::result::Result<u32, Refused> {
        let live = self.person_game(core, id, holder).await?;
        let (line, name, moves, clock_left_ms) = {
            let mut state = live.lock();
            takes_moves(&state)?;
            // A move on this position is being saved: this one was made on
            // the position it replaces (a double click, two tabs), as it
            // would be once the save is done.
            if state.saving && revision == state.revision() {
                return Err(Refused::StaleRevision(state.revision().saturating_add(1)));
            }
            if revision != state.revision() {
                return Err(Refused::StaleRevision(state.revision()));
            }
            if !state.waiting || state.reply.is_some() || state.saving {
                return Err(Refused::NotYourTurn);
            }
            let line = state
                .board
                .reply_for(square)
                .ok_or_else(|| Refused::IllegalMove(square.chars().take(16).collect()))?;
            let name = square.trim().to_ascii_lowercase();
            let mut moves = state.moves.clone();
            moves.push(name.clone());
            let thought = state.thought_ms();
            let clock_left_ms = state.clock_left_ms.map(|left| left.saturating_sub(thought));
            // The turn stays open, without timing out, while the move is saved.
            state.saving = true;
            (line, name, moves, clock_left_ms)
        };
        let saved = store::save_moves(&core.db, id, &self.inner.id, &moves, clock_left_ms).await;
        let mut state = live.lock();
        state.saving = false;
        let refused = match saved {
            Ok(true) => None,
            Ok(false) => {
                // Another process took the game over (this one's hold ran
                // out): it is theirs now.
                state.stopping = true;
                Some(Refused::Unavailable(
                    "the game moved to another server process: reload the page".to_owned(),
                ))
            }
            Err(error) => {
                tracing::warn!(id, %error, "cannot save a move of a game against a person");
                Some(Refused::Unavailable(
                    "the move could not be saved, so nothing changed: try again".to_owned(),
                ))
            }
        };
        if let Some(refused) = refused {
            drop(state);
            live.wake.notify_all();
            return Err(refused);
        }
        state.board.apply(&name);
        state.moves = moves;
        state.clock_left_ms = clock_left_ms;
        state.turn_spent_ms = 0;
        state.turn_started = None;
        state.waiting = false;
        state.reply = Some(line);
        let revision = state.revision();
        drop(state);
        live.wake.notify_all();
        live.changed();
        Ok(revision)
    }

    /// Resigns game `id` for the person `holder` (on their turn or the
    /// bot's: the game ends at the person's next turn, at once when it is
    /// theirs).
    pub async fn resign(&self, core: &Handles, id: i64, holder: &Holder) -> std::result::Result<(), Refused> {
        let live = self.person_game(core, id, holder).await?;
        let mut state = live.lock();
        takes_moves(&state)?;
        state.resigned = true;
        drop(state);
        live.wake.notify_all();
        Ok(())
    }
}

/// The refusal of a move or a resignation while the game is between
/// processes.
fn restarting() -> Refused {
    Refused::Unavailable("the server is restarting: the game goes on in a moment".to_owned())
}

/// Whether the game takes a move or a resignation now: not over, and not
/// being released by a stopping process.
fn takes_moves(state: &LiveState) -> std::result::Result<(), Refused> {
    if state.ended.is_some() {
        return Err(Refused::Over);
    }
    if state.stopping {
        return Err(restarting());
    }
    Ok(())
}
