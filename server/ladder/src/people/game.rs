//! The referee's side of a game against a person: the game played on a
//! blocking thread ([`play`]), and what is written when it ends, is
//! released at a stop, or cannot be resumed ([`People::finish`]).

use super::live::{Ended, Live, LiveState};
use super::person::{Cpus, Gated, Person};
use super::{People, store};
use crate::db::now_ms;
use crate::error::{Error, Result};
use crate::handles::Handles;
use crate::ladders::TimeControl;
use crate::quota::Held;
use arbiter_games::{FinishReason, Side, Variant};
use arbiter_referee::{Entrant, MatchSettings, Progress, WasmBot, play_game_observed};
use std::sync::Arc;
use std::time::Instant;

/// The notice of a resumed game whose bot did not play as it had.
fn mismatch_notice(why: &str) -> String {
    format!("The game could not be resumed after a restart ({why}), so it was aborted. It is not counted anywhere.")
}

/// The referee's settings of game `id`: the same at its start and at every
/// resumption, so the bot plays the same moves again.
pub(super) fn settings(id: i64, variant: Variant, seed: u64, time: TimeControl, random_opening: bool) -> MatchSettings {
    let mut settings = MatchSettings::new(variant, seed);
    settings.match_id = u64::try_from(id).unwrap_or_default();
    settings.budget = time.budget();
    settings.fuel_per_ms = Some(time.fuel_per_ms);
    settings.standard_opening = !random_opening;
    settings
}

impl People {
    /// Plays game `live` from here (its place held until its end or its
    /// release is written), on a blocking thread; the end is written from
    /// the runtime, which a stopping server waits for ([`People::written`]).
    pub(super) fn launch(&self, core: &Handles, live: Arc<Live>, settings: MatchSettings, sha256: String, place: Held) {
        self.games().insert(live.head.id, live.clone());
        let (people, core) = (self.clone(), core.clone());
        tokio::spawn(async move {
            let playing = {
                let (core, cores, live) = (core.clone(), people.inner.cores.clone(), live.clone());
                tokio::task::spawn_blocking(move || play(&core, &cores, &live, &settings, &sha256))
            };
            let outcome = playing
                .await
                .unwrap_or_else(|e| Err(format!("the game's thread failed: {e}")));
            people.finish(&core, &live, outcome).await;
            drop(place);
        });
    }

    /// Records how game `live` ended, or releases it (the server stops, or
    /// another front end leads), or aborts it (its bot failed, or a resumed
    /// game went another way than its saved moves).
    async fn finish(&self, core: &Handles, live: &Live, outcome: std::result::Result<Finished, String>) {
        let id = live.head.id;
        let hall = self.inner.id.as_str();
        let (stopping, mismatch) = {
            let state = live.lock();
            // Over before all its saved moves were played again.
            let unfinished = state.replay.as_ref().filter(|_| outcome.is_ok()).map(|replay| {
                format!(
                    "the game ended after {} of its {} saved moves",
                    replay.at,
                    state.moves.len()
                )
            });
            (state.stopping, state.diverged.clone().or(unfinished))
        };
        let ended = match (outcome, mismatch) {
            (_, Some(why)) => {
                tracing::warn!(id, %why, "a game against a person could not be resumed: aborted");
                aborted(core, id, hall, "resume_mismatch", mismatch_notice(&why)).await
            }
            (Ok(finished), None) => {
                let result = match finished.winner {
                    Some(side) if side == live.head.person_side => Some("person"),
                    Some(_) => Some("bot"),
                    None => None,
                };
                if let Err(error) = record(core, id, hall, result, &finished).await {
                    tracing::warn!(id, %error, "cannot record the game against a person");
                }
                Ended {
                    status: "finished",
                    result: Some(result.unwrap_or("draw")),
                    reason: finished.reason.as_str().to_owned(),
                    notice: None,
                    at: Instant::now(),
                }
            }
            (Err(_), None) if stopping => {
                // Released: the next process that leads resumes it.
                let (moves, clock_left_ms, spent) = {
                    let state = live.lock();
                    (state.moves.clone(), state.clock_left_ms, state.turn_spent_ms)
                };
                match store::release(&core.db, id, hall, &moves, clock_left_ms, spent).await {
                    Ok(_) => tracing::info!(id, "game against a person saved for the next process"),
                    Err(error) => tracing::warn!(
                        id,
                        %error,
                        "cannot release the game against a person; the next process takes it when the hold runs out"
                    ),
                }
                self.games().remove(&id);
                live.changed();
                return;
            }
            (Err(why), None) => {
                tracing::warn!(id, %why, "a game against a person was aborted");
                let notice = format!("The server could not run the bot, so the game was aborted: {why}");
                aborted(core, id, hall, "host_failure", notice).await
            }
        };
        live.lock().ended = Some(ended);
        live.changed();
        self.sweep();
    }
}

/// Marks game `id` aborted for `reason` in the database (if `hall` still
/// holds it) and gives its end as the page shows it, with `notice`.
async fn aborted(core: &Handles, id: i64, hall: &str, reason: &str, notice: String) -> Ended {
    if let Err(error) = store::abort(&core.db, id, hall, reason).await {
        tracing::warn!(id, %error, "cannot mark the game against a person aborted");
    }
    Ended {
        status: "aborted",
        result: None,
        reason: reason.to_owned(),
        notice: Some(notice),
        at: Instant::now(),
    }
}

/// A played game, ready to record.
pub(super) struct Finished {
    winner: Option<Side>,
    reason: FinishReason,
    replay: Vec<u8>,
    stderr: String,
}

/// Plays game `live` through the referee (blocking). A resumed game is
/// played again from its start: the bot's moves are checked against the
/// saved ones as they come ([`LiveState::replay`]).
fn play(
    core: &Handles,
    cores: &Arc<Cpus>,
    live: &Arc<Live>,
    settings: &MatchSettings,
    sha256: &str,
) -> std::result::Result<Finished, String> {
    let module = core.load_module(sha256)?;
    let bot = Gated {
        bot: Box::new(WasmBot::new(core.sandbox.clone(), module, live.head.bot.clone())),
        cores: cores.clone(),
    };
    let person = Person { live: live.clone() };
    let entrants: [&dyn Entrant; 2] = [&person, &bot];
    // Participant 0 is the person.
    let sides = if live.head.person_side == Side::First {
        [0, 1]
    } else {
        [1, 0]
    };
    let bot_side = live.head.person_side.other();
    let mut observe = |_game: u8, progress: Progress<'_>| {
        if let Progress::Turn(turn) = progress
            && turn.side == bot_side
        {
            let mut state = live.lock();
            let LiveState {
                board,
                moves,
                replay,
                diverged,
                ..
            } = &mut *state;
            let Some(replaying) = replay.as_mut() else {
                if board.play_turn(turn, moves) {
                    drop(state);
                    live.changed();
                }
                return;
            };
            // A resumed game played again: the bot must play what it did.
            let mut played = Vec::new();
            if !replaying.board.play_turn(turn, &mut played) {
                return;
            }
            let at = replaying.at;
            match (moves.get(at), played.first()) {
                (Some(saved), Some(now)) if saved == now => {
                    replaying.at += 1;
                    if replaying.at >= moves.len() {
                        *replay = None;
                    }
                }
                (saved, now) => {
                    diverged.get_or_insert_with(|| {
                        format!(
                            "its bot played {} as move {} where it had played {}",
                            now.map_or("nothing", String::as_str),
                            at + 1,
                            saved.map_or("nothing", String::as_str)
                        )
                    });
                }
            }
        }
    };
    let played = play_game_observed(settings, entrants, sides, &mut observe).map_err(|e| e.to_string())?;
    let game = played
        .replay
        .games
        .first()
        .ok_or_else(|| "the referee played no game".to_owned())?;
    let winner = played.replay.result.winner.map(|participant| {
        // Participant 0 (the person) plays `live.head.person_side`.
        if participant == 0 {
            live.head.person_side
        } else {
            bot_side
        }
    });
    let stderr = String::from_utf8_lossy(&played.logs[1][0]).into_owned();
    Ok(Finished {
        winner,
        reason: game.reason,
        replay: played.replay.to_json(),
        stderr,
    })
}

/// Writes an ended game's result, replay and the bot's stderr, if `hall`
/// still holds it.
async fn record(core: &Handles, id: i64, hall: &str, winner: Option<&str>, finished: &Finished) -> Result<()> {
    let json = finished.replay.clone();
    let stored = core
        .blobs
        .run(move |blobs| crate::replays::prepare(blobs, &json))
        .await
        .map_err(|e| Error::Host(format!("cannot store the replay: {e}")))?;
    let mut tx = core.db.begin_write().await?;
    crate::replays::insert(&mut *tx, &stored).await?;
    sqlx::query(
        "UPDATE people_games SET status = 'finished', winner = $1, reason = $2, replay_sha256 = $3, stderr = $4, \
           finished_ms = $5, hall = NULL \
         WHERE id = $6 AND status = 'running' AND hall = $7",
    )
    .bind(winner)
    .bind(finished.reason.as_str())
    .bind(&stored.sha256)
    .bind(&finished.stderr)
    .bind(now_ms())
    .bind(id)
    .bind(hall)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(())
}
