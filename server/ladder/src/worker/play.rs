//! Playing one claimed match: both versions' modules loaded into the
//! sandbox, the referee playing them with the match's settings, the live
//! events sent, and the replay prepared for recording.

use super::{Claimed, Played, WorkerError};
use crate::core::Core;
use crate::events::Event;
use crate::ladders::{self, Clock};
use arbiter_referee::{
    Cancellable, Entrant, EntrantInfo, Fault, GameSetup, MatchSettings, Player, Progress, SpawnError, WasmBot,
    play_match_observed,
};
use arbiter_remote::{RemoteBot, RemoteError, UrlError};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

/// Live skirmish watchers get the map every this many ticks.
const LIVE_MAP_EVERY: u32 = 10;

/// Plays a claimed match on the calling thread until its end, or until
/// `cancel` turns true: loads both modules (from the sandbox's cache or the
/// blob store) and prepares the replay.
pub(super) fn play(core: &Core, claimed: &Claimed, cancel: &Arc<AtomicBool>) -> Result<Played, WorkerError> {
    core.metrics
        .match_started(claimed.ladder.as_str(), claimed.attempts, claimed.took_over);
    core.events.send(Event::MatchStarted {
        id: claimed.id,
        ladder: claimed.ladder.to_string(),
    });
    let (variant, clock) = ladders::parse_any(claimed.ladder.as_str())
        .map_err(|e| WorkerError::Unplayable(format!("ladder {}: {}", claimed.ladder, e.detail())))?;
    let [Some(a), Some(b)] = &claimed.modules else {
        return Err(WorkerError::Unplayable(format!(
            "version {} or {} does not exist",
            claimed.a_version, claimed.b_version
        )));
    };
    let time = claimed
        .time
        .ok_or_else(|| WorkerError::Unplayable(format!("match {} has no time control", claimed.id)))?;
    let mut settings = MatchSettings::new(variant, u64::from_ne_bytes(claimed.seed.to_ne_bytes()));
    settings.match_id = u64::try_from(claimed.id).unwrap_or_default();
    settings.budget = time.budget();
    settings.fuel_per_ms = Some(time.fuel_per_ms);

    let (sandbox, blobs, events, match_id) = (&core.sandbox, &core.blobs, &core.events, claimed.id);
    let mut bots: Vec<Box<dyn Entrant>> = Vec::with_capacity(2);
    for version in [a, b] {
        if let Some(url) = &version.remote_url {
            if clock != Clock::Wall {
                return Err(WorkerError::Unplayable(format!(
                    "version {} is a remote bot and {} is a fuel-clock ladder",
                    version.id, claimed.ladder
                )));
            }
            // Resolved and checked again for every match: a name that now
            // points inside the network loses its games, nothing connects.
            // Resolving waits at most arbiter_remote's RESOLVE_TIMEOUT: a
            // name that does not answer in time loses the games, saying so.
            bots.push(match RemoteBot::new(&version.name, url, core.remote_urls) {
                Ok(bot) => Box::new(bot),
                Err(e) => {
                    let why = match &e {
                        RemoteError::Url(UrlError::ResolveTimeout { .. }) => e.to_string(),
                        RemoteError::Url(UrlError::NotPublic { .. }) => {
                            tracing::warn!(
                                match_id = claimed.id,
                                version = version.id,
                                "a bot URL was refused: {e} (a worker started with --allow-private-bot-urls accepts it)"
                            );
                            format!("the bot URL was refused: {e}")
                        }
                        _ => format!("the bot URL was refused: {e}"),
                    };
                    Box::new(Unreachable {
                        name: version.name.clone(),
                        why,
                    })
                }
            });
            continue;
        }
        // A module this worker has loaded before needs no blob read.
        if let Some(module) = sandbox.cached(&version.sha256) {
            bots.push(Box::new(WasmBot::new(sandbox.clone(), module, version.name.clone())));
            continue;
        }
        let wasm = blobs
            .get_module(&version.sha256, sandbox.config().max_binary_bytes())
            .map_err(|e| WorkerError::Host(format!("cannot read the module of version {}: {e}", version.id)))?
            .ok_or_else(|| {
                WorkerError::Host(format!(
                    "the module {} of version {} is missing from the blob store",
                    version.sha256, version.id
                ))
            })?;
        let module = sandbox.load(&wasm).map_err(|e| {
            let message = format!("cannot load the module of version {}: {e}", version.id);
            if e.is_host_failure() {
                WorkerError::Host(message)
            } else {
                WorkerError::Unplayable(message)
            }
        })?;
        bots.push(Box::new(WasmBot::new(sandbox.clone(), module, version.name.clone())));
    }
    let entrants: Vec<Cancellable<'_>> = bots
        .iter()
        .map(|bot| Cancellable::new(bot.as_ref(), cancel.clone()))
        .collect();
    let _playing = events.play(match_id);
    let mut observe = |game: u8, progress: Progress<'_>| match progress {
        Progress::Turn(turn) => {
            let fault = turn.fault.map(|f| f.as_str());
            events.turn(match_id, game, u8::from(turn.side), turn.action.as_deref(), fault);
        }
        Progress::Tick { record, state } => {
            // The map every few ticks (and at the end): enough to watch.
            let snapshot = (record.tick.is_multiple_of(LIVE_MAP_EVERY) || state.is_over())
                .then(|| serde_json::to_value(arbiter_referee::frames::live(state)).ok())
                .flatten();
            events.tick(match_id, game, record.tick, snapshot);
        }
    };
    let played = play_match_observed(&settings, [&entrants[0], &entrants[1]], &mut observe)
        .map_err(|e| WorkerError::Host(format!("the referee could not play the match: {e}")))?;
    let replay = crate::replays::prepare(blobs, &played.replay.to_json())
        .map_err(|e| WorkerError::Host(format!("cannot store the replay: {e}")))?;
    Ok(Played { played, replay })
}

/// A remote bot whose URL the policy refused at the start of the match: it
/// loses every game, and nothing is connected to.
struct Unreachable {
    name: String,
    why: String,
}

impl Entrant for Unreachable {
    fn info(&self) -> EntrantInfo {
        EntrantInfo {
            name: self.name.clone(),
            kind: "http".to_owned(),
            sha256: None,
            reproducible: false,
        }
    }

    fn spawn(&self, _setup: &GameSetup) -> Result<Box<dyn Player>, SpawnError> {
        Err(SpawnError::Bot(Fault::Crash(self.why.clone())))
    }
}
