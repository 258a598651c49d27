//! Matches as callers read them: lists (by ladder, status, bot, tournament,
//! page), one match, a bot's recent matches, a finished match's replay, a
//! skirmish match's frames and training data (computed once, then kept),
//! and the logs its bots' owners may read.
//!
//! Every read of a match goes through [`MatchSummary`], so the JSON API and
//! the pages show the same thing. A status or kind the database holds that
//! is not one of [`MatchStatus`] or [`MatchKind`] is an [`Error::Internal`],
//! never a default.

use crate::core::Core;
use crate::db::Db;
use crate::error::{Error, Result};
use crate::model::{BotId, MatchId, MatchKind, MatchStatus, TournamentId, UserId, VersionId};
use arbiter_games::{FinishReason, Side};
use arbiter_referee::Replay;
use serde::{Deserialize, Serialize};
use sqlx::Row;
use sqlx::any::AnyRow;

/// The columns [`MatchSummary::from_row`] reads, with the joins they need;
/// callers add `WHERE …`.
pub(crate) const SELECT: &str = "SELECT m.id, m.ladder, m.kind, m.status, m.created_ms, m.started_ms, m.finished_ms, \
      m.winner, m.score_a, m.score_b, m.reasons, m.error, m.attempts, m.tournament_id, \
      m.a_version, ab.name AS a_bot, av.number AS a_number, m.a_before, m.a_after, \
      m.b_version, bb.name AS b_bot, bv.number AS b_number, m.b_before, m.b_after, m.replay_sha256 \
    FROM matches m \
    JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
    JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id ";

/// The ids of the newest `$2` matches of bot `$1` (either side), through the
/// per-side indexes: an `OR` over both sides scans every match.
pub(crate) const BOT_MATCH_IDS: &str = "SELECT id FROM ( \
      SELECT id FROM (SELECT id FROM matches WHERE a_version IN (SELECT id FROM versions WHERE bot_id = $1) \
                      ORDER BY id DESC LIMIT $2) AS a \
      UNION \
      SELECT id FROM (SELECT id FROM matches WHERE b_version IN (SELECT id FROM versions WHERE bot_id = $1) \
                      ORDER BY id DESC LIMIT $2) AS b \
    ) AS both_sides ORDER BY id DESC LIMIT $2";

/// The columns of one side in [`SELECT`]: version id, bot name, version
/// number, rating before, rating after.
const SIDE_COLUMNS: [[&str; 5]; 2] = [
    ["a_version", "a_bot", "a_number", "a_before", "a_after"],
    ["b_version", "b_bot", "b_number", "b_before", "b_after"],
];

/// One side of a match. Serialises as the API's
/// `{"version_id", "bot", "version", "rating_before", "rating_after"}`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Participant {
    /// The version that plays this side.
    pub version_id: VersionId,
    /// Its bot's name as registered.
    pub bot: String,
    /// Its version number within the bot (1, 2, …).
    pub version: i64,
    /// Its rating on the match's ladder before the match; `None` until the
    /// match is rated (and always for unrated matches).
    pub rating_before: Option<f64>,
    /// Its rating after the match; `None` until the match is rated.
    pub rating_after: Option<f64>,
}

/// A match as the API and the pages show it. Serialises to exactly the
/// object of `GET /api/matches/{id}` (`match`), `GET /api/matches`
/// (`matches[]`) and `GET /api/bots/{name}` (`matches[]`): the same keys,
/// value types and nulls.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatchSummary {
    /// Its id.
    pub id: MatchId,
    /// Its ladder, e.g. `othello:std`.
    pub ladder: String,
    /// Why it was played.
    pub kind: MatchKind,
    /// Where it is in its life.
    pub status: MatchStatus,
    /// Queued, Unix ms.
    pub created_ms: i64,
    /// Last claimed by a worker, Unix ms.
    pub started_ms: Option<i64>,
    /// Finished or failed, Unix ms.
    pub finished_ms: Option<i64>,
    /// Participant 0 (side 0 of game 1), then participant 1.
    pub participants: [Participant; 2],
    /// The winning participant, 0 or 1; `None` for a draw or a match not
    /// finished.
    pub winner: Option<i64>,
    /// Each participant's total score over both games, once finished.
    pub scores: [Option<i64>; 2],
    /// How each game ended, in game order; `null` before the end, or if
    /// the stored text cannot be read (logged).
    pub reasons: Option<Vec<GameFinish>>,
    /// Why the host failed the match, for a failed match.
    pub error: Option<String>,
    /// How many times a worker claimed it.
    pub attempts: i64,
    /// The tournament it is part of.
    pub tournament_id: Option<TournamentId>,
    /// The API path of its replay, `/api/matches/{id}/replay`, once a
    /// replay is stored; `None` before.
    pub replay: Option<String>,
}

/// How one game of a finished match ended: the `reasons` of a match, one
/// per game. Stored in the `reasons` column and served by the API as the
/// same JSON object, its keys in name order (the order they were always
/// written in).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(deny_unknown_fields)]
pub struct GameFinish {
    /// The participant (0 or 1) whose fault ended the game, if one did.
    pub faulted_participant: Option<u8>,
    /// The side (0 moves first) whose fault ended the game, if one did.
    pub faulted_side: Option<u8>,
    /// The game, 0 or 1.
    pub game: u8,
    /// Why it ended, e.g. `discs`, `timeout`, `illegal_move`.
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "discs"))]
    pub reason: FinishReason,
}

impl GameFinish {
    /// How each game of `replay` ended, in game order.
    pub fn of_replay(replay: &Replay) -> Vec<GameFinish> {
        replay
            .games
            .iter()
            .map(|game| {
                let faulted_side = game.faulted.map(Side::index);
                GameFinish {
                    faulted_participant: faulted_side.and_then(|side| game.sides.get(side).copied()),
                    faulted_side: faulted_side.and_then(|side| u8::try_from(side).ok()),
                    game: game.index,
                    reason: game.reason,
                }
            })
            .collect()
    }

    /// The text of the `reasons` column for `finishes`: a JSON array.
    pub fn column(finishes: &[GameFinish]) -> String {
        // Integers, options and a unit enum always serialise.
        serde_json::to_string(finishes).unwrap_or_default()
    }

    /// Reads the text of a `reasons` column.
    pub fn read_column(text: &str) -> std::result::Result<Vec<GameFinish>, serde_json::Error> {
        serde_json::from_str(text)
    }
}

impl MatchSummary {
    /// Reads a row of [`SELECT`]. An unknown status or kind is an
    /// [`Error::Internal`].
    pub(crate) fn from_row(row: &AnyRow) -> Result<MatchSummary> {
        let id = MatchId(row.try_get("id")?);
        let participant = |[version_id, bot, number, before, after]: [&str; 5]| -> Result<Participant> {
            Ok(Participant {
                version_id: VersionId(row.try_get(version_id)?),
                bot: row.try_get(bot)?,
                version: row.try_get(number)?,
                rating_before: row.try_get(before)?,
                rating_after: row.try_get(after)?,
            })
        };
        let reasons =
            row.try_get::<Option<String>, _>("reasons")?
                .and_then(|text| match GameFinish::read_column(&text) {
                    Ok(reasons) => Some(reasons),
                    Err(error) => {
                        tracing::warn!(match_id = id.0, %error, "the reasons of a match cannot be read");
                        None
                    }
                });
        let has_replay = row.try_get::<Option<String>, _>("replay_sha256")?.is_some();
        Ok(MatchSummary {
            id,
            ladder: row.try_get("ladder")?,
            kind: row.try_get::<String, _>("kind")?.parse()?,
            status: row.try_get::<String, _>("status")?.parse()?,
            created_ms: row.try_get("created_ms")?,
            started_ms: row.try_get("started_ms")?,
            finished_ms: row.try_get("finished_ms")?,
            participants: [participant(SIDE_COLUMNS[0])?, participant(SIDE_COLUMNS[1])?],
            winner: row.try_get("winner")?,
            scores: [row.try_get("score_a")?, row.try_get("score_b")?],
            reasons,
            error: row.try_get("error")?,
            attempts: row.try_get("attempts")?,
            tournament_id: row.try_get::<Option<i64>, _>("tournament_id")?.map(TournamentId),
            replay: has_replay.then(|| format!("/api/matches/{id}/replay")),
        })
    }

    /// Whether it is waiting for a worker or being played (its result may
    /// still change).
    pub fn is_live(&self) -> bool {
        matches!(self.status, MatchStatus::Queued | MatchStatus::Running)
    }
}

/// Which matches [`list`] returns. Each filter given narrows the list;
/// `None` means any.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchFilter {
    /// Only matches of this ladder (its canonical name, e.g. `othello:std`).
    pub ladder: Option<String>,
    /// Only matches with this status.
    pub status: Option<MatchStatus>,
    /// Only matches any version of this bot plays in (either side).
    pub bot: Option<BotId>,
    /// Only matches of this tournament.
    pub tournament: Option<TournamentId>,
    /// Only matches with a smaller id (the next page after it).
    pub before: Option<MatchId>,
    /// At most this many matches.
    pub limit: i64,
}

impl MatchFilter {
    /// The newest `limit` matches, with no other filter.
    pub fn newest(limit: i64) -> MatchFilter {
        MatchFilter {
            ladder: None,
            status: None,
            bot: None,
            tournament: None,
            before: None,
            limit,
        }
    }
}

/// The matches `filter` selects, newest (highest id) first, at most
/// `filter.limit` of them. Each filter given becomes a plain condition the
/// planner can use an index for; the values are always bound.
pub async fn list(db: &Db, filter: &MatchFilter) -> Result<Vec<MatchSummary>> {
    let conditions = [
        // With a status too, the (ladder, status, id) index gives the
        // newest first. A ladder alone is read in id order, newest first,
        // until `limit` match: as a plain condition SQLite would take that
        // index and sort the whole ladder (a second on a million matches).
        match (&filter.ladder, filter.status) {
            (Some(_), Some(_)) => "m.ladder = $1",
            (Some(_), None) => "($1 = '' OR m.ladder = $1)",
            (None, _) => "$1 = ''",
        },
        if filter.status.is_some() {
            "m.status = $2"
        } else {
            "$2 = ''"
        },
        if filter.bot.is_some() {
            "m.id IN (SELECT id FROM matches WHERE a_version IN (SELECT id FROM versions WHERE bot_id = $3) \
             UNION SELECT id FROM matches WHERE b_version IN (SELECT id FROM versions WHERE bot_id = $3))"
        } else {
            "$3 = 0"
        },
        if filter.tournament.is_some() {
            "m.tournament_id = $4"
        } else {
            "$4 = 0"
        },
        if filter.before.is_some() { "m.id < $5" } else { "$5 = 0" },
    ];
    let sql = format!(
        "{SELECT} WHERE {} ORDER BY m.id DESC LIMIT $6",
        conditions.join(" AND ")
    );
    let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
        .bind(filter.ladder.clone().unwrap_or_default())
        .bind(filter.status.map_or("", MatchStatus::as_str))
        .bind(filter.bot.map_or(0, |bot| bot.0))
        .bind(filter.tournament.map_or(0, |tournament| tournament.0))
        .bind(filter.before.map_or(0, |before| before.0))
        .bind(filter.limit)
        .fetch_all(&db.pool)
        .await?;
    rows.iter().map(MatchSummary::from_row).collect()
}

/// Match `id`, or `None` if there is no such match.
pub async fn find(db: &Db, id: MatchId) -> Result<Option<MatchSummary>> {
    let row = sqlx::query(sqlx::AssertSqlSafe(format!("{SELECT} WHERE m.id = $1")))
        .bind(id.0)
        .fetch_optional(&db.pool)
        .await?;
    row.as_ref().map(MatchSummary::from_row).transpose()
}

/// Whether match `id` exists (whatever its status).
pub async fn exists(db: &Db, id: MatchId) -> Result<bool> {
    let found: Option<i64> = sqlx::query_scalar("SELECT id FROM matches WHERE id = $1")
        .bind(id.0)
        .fetch_optional(&db.pool)
        .await?;
    Ok(found.is_some())
}

/// The newest `limit` matches of bot `bot` (any of its versions, either
/// side), newest first.
pub async fn recent_for_bot(db: &Db, bot: BotId, limit: i64) -> Result<Vec<MatchSummary>> {
    let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
        "{SELECT} WHERE m.id IN ({BOT_MATCH_IDS}) ORDER BY m.id DESC LIMIT $2"
    )))
    .bind(bot.0)
    .bind(limit)
    .fetch_all(&db.pool)
    .await?;
    rows.iter().map(MatchSummary::from_row).collect()
}

/// The id of the bot called `name` (case-insensitive), for filtering
/// matches by bot. [`Error::NotFound`] if there is none.
pub async fn bot_named(db: &Db, name: &str) -> Result<BotId> {
    crate::bots::by_name(db, name)
        .await?
        .map(|bot| bot.id)
        .ok_or_else(|| Error::not_found(format!("bot {name:?}")))
}

/// The seed match `id` is played with (both games), which decides its
/// openings. [`Error::NotFound`] if there is no such match.
pub async fn seed(db: &Db, id: MatchId) -> Result<i64> {
    let seed: Option<i64> = sqlx::query_scalar("SELECT seed FROM matches WHERE id = $1")
        .bind(id.0)
        .fetch_optional(&db.pool)
        .await?;
    seed.ok_or_else(|| Error::not_found(format!("match {id}")))
}

/// The replay of match `id` (JSON, decompressed) from the blob store.
/// [`Error::NotFound`] if there is no such match or it has no replay yet;
/// [`Error::Unavailable`] if the database or the blob store cannot answer,
/// or the blob store has lost the replay the match refers to.
pub async fn replay_bytes(core: &Core, id: MatchId) -> Result<Vec<u8>> {
    let key = replay_key(&core.db, id).await?;
    read_replay(core, id, &key).await
}

/// The key of match `id`'s stored replay (`matches.replay_sha256`).
/// [`Error::NotFound`] if there is no such match or it has no replay yet.
pub async fn replay_key(db: &Db, id: MatchId) -> Result<String> {
    let key: Option<Option<String>> = sqlx::query_scalar("SELECT replay_sha256 FROM matches WHERE id = $1")
        .bind(id.0)
        .fetch_optional(&db.pool)
        .await?;
    key.ok_or_else(|| Error::not_found(format!("match {id}")))?
        .ok_or_else(|| Error::NotFound(format!("match {id} has no replay yet")))
}

/// The replay stored under `key` (match `id`'s), decompressed.
async fn read_replay(core: &Core, id: MatchId, key: &str) -> Result<Vec<u8>> {
    crate::replays::read(&core.db, &core.blobs, key)
        .await?
        .ok_or_else(|| Error::Unavailable(format!("the replay of match {id} is missing from storage")))
}

// Skirmish frames and training data.
//
// Both are re-simulations of the replay's records (every state digest
// checked), which cost far more than serving them: a house match's frames
// hundreds of milliseconds of a core per game, its training data seconds
// (`cargo bench -p arbiter --bench frames`). So each is computed once,
// when first asked for, and kept: in the `replays` table under a key
// derived from the replay's ([`crate::replays::derived_key`]), and frames
// also in a bounded in-memory cache. Computing them when a match is
// recorded would charge every skirmish match, most never viewed, a
// re-simulation of both games on the workers' cores (and store megabytes
// of training data per match); computing them when asked serves matches
// recorded before they were kept the same way. One computation of
// each kind runs at a time in a process, so a crowd asking for many
// matches at once queues instead of taking every core, and a crowd asking
// for one match computes it once.

/// The most bytes of frames JSON the in-memory cache keeps (about a hundred
/// games of a house match, 280 KB each); the oldest go first.
const FRAMES_CACHE_BYTES: usize = 32 << 20;

/// A game's frames as kept: the JSON, and a slot for the same bytes
/// gzipped, which the web layer fills the first time a client accepts gzip
/// (the ladder has no gzip encoder), so that no answer is compressed twice.
#[derive(Clone, Debug)]
pub struct KeptFrames {
    /// The frames JSON, as [`frames_json_recomputed`] gives it.
    pub json: std::sync::Arc<Vec<u8>>,
    /// The JSON gzipped, once someone has made it.
    pub gzip: std::sync::Arc<tokio::sync::OnceCell<std::sync::Arc<Vec<u8>>>>,
}

impl KeptFrames {
    fn new(json: Vec<u8>) -> KeptFrames {
        KeptFrames {
            json: std::sync::Arc::new(json),
            gzip: std::sync::Arc::default(),
        }
    }
}

/// Frames by replay key and game, oldest first.
#[derive(Default)]
struct FramesCache {
    entries: std::collections::HashMap<(String, usize), KeptFrames>,
    order: std::collections::VecDeque<(String, usize)>,
    bytes: usize,
}

impl FramesCache {
    fn get(&self, key: &(String, usize)) -> Option<KeptFrames> {
        self.entries.get(key).cloned()
    }

    /// Keeps `frames` (counting their JSON: the gzip form is a fraction of
    /// it) unless they are there already; gives back what is kept.
    fn insert(&mut self, key: (String, usize), frames: KeptFrames) -> KeptFrames {
        if let Some(kept) = self.entries.get(&key) {
            return kept.clone();
        }
        let size = frames.json.len();
        if size > FRAMES_CACHE_BYTES {
            return frames;
        }
        while self.bytes + size > FRAMES_CACHE_BYTES {
            let Some(oldest) = self.order.pop_front() else { break };
            if let Some(gone) = self.entries.remove(&oldest) {
                self.bytes -= gone.json.len();
            }
        }
        self.bytes += size;
        self.order.push_back(key.clone());
        self.entries.insert(key, frames.clone());
        frames
    }
}

/// This process's frames, by replay key: a replay's key names its content,
/// so one cache serves every core of the process.
static FRAMES_CACHE: std::sync::LazyLock<std::sync::Mutex<FramesCache>> = std::sync::LazyLock::new(Default::default);

/// One frames computation at a time in this process.
static FRAMES_COMPUTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

/// One training-data computation at a time in this process.
static TRAINING_COMPUTING: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);

fn cached_frames(key: &(String, usize)) -> Option<KeptFrames> {
    FRAMES_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .get(key)
}

fn cache_frames(key: (String, usize), frames: KeptFrames) -> KeptFrames {
    FRAMES_CACHE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .insert(key, frames)
}

/// The name of game `game`'s frames among a replay's derived artifacts.
fn frames_name(game: usize) -> String {
    format!("frames-{}.json", game + 1)
}

/// The name of the gzipped training data among a replay's derived
/// artifacts.
const TRAINING_GZIP: &str = "training.jsonl.gz";

/// Runs a re-simulation on a blocking thread.
async fn blocking<T: Send + 'static>(work: impl FnOnce() -> Result<T> + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| Error::Internal(format!("a re-simulation stopped: {e}")))?
}

/// The skirmish replay in `json` (match `id`'s), or why it has no frames
/// or training data: [`Error::NotFound`] for another game's replay.
fn skirmish_replay(id: MatchId, json: &[u8]) -> Result<Replay> {
    let replay = Replay::from_json(json).map_err(|e| Error::Internal(format!("the replay of match {id}: {e}")))?;
    // Another game's match has none: the resource does not exist.
    if replay.variant() != Some(arbiter_games::Variant::Skirmish) {
        return Err(Error::NotFound(format!(
            "frames and training data exist for skirmish matches only; match {id} is {}",
            replay.game
        )));
    }
    Ok(replay)
}

/// The frames of game `game` (0 or 1) of the replay `json` (match `id`'s)
/// as JSON ([`arbiter_referee::frames::frames`]), re-simulated now
/// (blocking: hundreds of milliseconds for a house match's game).
/// [`Error::NotFound`] for another game's replay; [`Error::Internal`] for
/// a replay that does not re-simulate or has no such game.
pub fn frames_from_replay(id: MatchId, json: &[u8], game: usize) -> Result<Vec<u8>> {
    let replay = skirmish_replay(id, json)?;
    let frames = arbiter_referee::frames::frames(&replay, game)
        .map_err(|e| Error::Internal(format!("the replay of match {id} does not re-simulate: {e}")))?;
    serde_json::to_vec(&frames).map_err(|e| Error::Internal(e.to_string()))
}

/// Game `game` (0 or 1) of skirmish match `id` as frames JSON, computed
/// from its replay on every call: what the server did before frames were
/// kept, and the baseline they are measured against. Errors as
/// [`frames_json`]'s.
pub async fn frames_json_recomputed(core: &Core, id: MatchId, game: usize) -> Result<Vec<u8>> {
    let json = replay_bytes(core, id).await?;
    blocking(move || frames_from_replay(id, &json, game)).await
}

/// Game `game` (0 or 1) of skirmish match `id` as frames: the JSON
/// [`frames_json_recomputed`] gives, from the in-memory cache, else from
/// the database, else computed now from the replay (then kept in both).
/// [`Error::NotFound`] if there is no such match, it has no replay yet or
/// is not skirmish; [`Error::Unavailable`] if storage cannot answer;
/// [`Error::Internal`] if its replay does not re-simulate.
pub async fn frames_json(core: &Core, id: MatchId, game: usize) -> Result<KeptFrames> {
    let key = replay_key(&core.db, id).await?;
    let cache_key = (key.clone(), game);
    if let Some(kept) = cached_frames(&cache_key) {
        return Ok(kept);
    }
    let derived = crate::replays::derived_key(&key, &frames_name(game));
    if let Some(json) = crate::replays::read_derived(&core.db, &derived).await? {
        return Ok(cache_frames(cache_key, KeptFrames::new(json)));
    }
    let _computing = FRAMES_COMPUTING
        .acquire()
        .await
        .map_err(|e| Error::Internal(e.to_string()))?;
    // Whoever held the permit before may have computed these.
    if let Some(kept) = cached_frames(&cache_key) {
        return Ok(kept);
    }
    let replay = read_replay(core, id, &key).await?;
    let json = blocking(move || frames_from_replay(id, &replay, game)).await?;
    crate::replays::store_derived(&core.db, &derived, json.clone()).await?;
    Ok(cache_frames(cache_key, KeptFrames::new(json)))
}

/// The replay `json` (match `id`'s) as training data
/// ([`arbiter_referee::skirmish::training_lines`]): one JSON line per game,
/// tick and side, each ending in a newline, re-simulated now (blocking).
/// Errors as [`frames_from_replay`]'s.
pub fn training_from_replay(id: MatchId, json: &[u8]) -> Result<Vec<u8>> {
    let replay = skirmish_replay(id, json)?;
    let lines = arbiter_referee::skirmish::training_lines(&replay)
        .map_err(|e| Error::Internal(format!("the replay of match {id} does not re-simulate: {e}")))?;
    let mut out = Vec::with_capacity(lines.iter().map(|line| line.len() + 1).sum());
    for line in lines {
        out.extend_from_slice(line.as_bytes());
        out.push(b'\n');
    }
    Ok(out)
}

/// Skirmish match `id` as training data (JSONL, uncompressed), computed
/// from its replay on every call (tens of megabytes for a house match).
/// Errors as [`frames_json`]'s.
pub async fn training_jsonl(core: &Core, id: MatchId) -> Result<Vec<u8>> {
    let json = replay_bytes(core, id).await?;
    blocking(move || training_from_replay(id, &json)).await
}

/// Skirmish match `id` as gzipped training data: [`training_jsonl`]'s
/// bytes through `gzip`, computed once and then read from the database.
/// `gzip` is called only when they are computed. Errors as
/// [`frames_json`]'s; a `gzip` that fails is [`Error::Internal`].
pub async fn training_gzip<F, Fut>(core: &Core, id: MatchId, gzip: F) -> Result<Vec<u8>>
where
    F: FnOnce(Vec<u8>) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<u8>>>,
{
    let key = replay_key(&core.db, id).await?;
    let derived = crate::replays::derived_key(&key, TRAINING_GZIP);
    if let Some(bytes) = crate::replays::read_derived(&core.db, &derived).await? {
        return Ok(bytes);
    }
    let _computing = TRAINING_COMPUTING
        .acquire()
        .await
        .map_err(|e| Error::Internal(e.to_string()))?;
    // Whoever held the permit before may have computed it.
    if let Some(bytes) = crate::replays::read_derived(&core.db, &derived).await? {
        return Ok(bytes);
    }
    let replay = read_replay(core, id, &key).await?;
    let jsonl = blocking(move || training_from_replay(id, &replay)).await?;
    let gzipped = gzip(jsonl)
        .await
        .map_err(|e| Error::Internal(format!("cannot gzip the training data of match {id}: {e}")))?;
    crate::replays::store_derived(&core.db, &derived, gzipped.clone()).await?;
    Ok(gzipped)
}

/// The size in bytes of skirmish match `id`'s gzipped training data if it
/// has been computed ([`training_gzip`]), else `None` (also for a match
/// without a replay). [`Error::Unavailable`] if storage cannot answer.
pub async fn training_gzip_size(db: &Db, id: MatchId) -> Result<Option<u64>> {
    let key = match replay_key(db, id).await {
        Ok(key) => key,
        Err(Error::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    crate::replays::derived_size(db, &crate::replays::derived_key(&key, TRAINING_GZIP)).await
}

/// Which participants of match `id` (0, 1, or both, ascending) are bots
/// owned by `user`; empty if none. [`Error::NotFound`] if there is no such
/// match.
async fn sides_owned_by(db: &Db, id: MatchId, user: UserId) -> Result<Vec<i64>> {
    let owners = sqlx::query(
        "SELECT ab.owner_id, bb.owner_id FROM matches m \
         JOIN versions av ON av.id = m.a_version JOIN bots ab ON ab.id = av.bot_id \
         JOIN versions bv ON bv.id = m.b_version JOIN bots bb ON bb.id = bv.bot_id WHERE m.id = $1",
    )
    .bind(id.0)
    .fetch_optional(&db.pool)
    .await?
    .ok_or_else(|| Error::not_found(format!("match {id}")))?;
    let mut sides = Vec::new();
    for side in 0..2usize {
        if UserId(owners.try_get::<i64, _>(side)?) == user {
            sides.push(side as i64);
        }
    }
    Ok(sides)
}

/// What one participant's bot wrote to stderr in one game. Serialises as
/// the API's `{"participant", "game", "stderr"}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct MatchLog {
    /// The participant, 0 or 1.
    pub participant: i64,
    /// The game (leg) of the match.
    pub game: i64,
    /// What the bot wrote, as stored (the tail if it wrote a lot).
    pub stderr: String,
}

/// Why a viewer may not read the logs of a match.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogsRefused {
    /// Nobody is signed in.
    SignedOut,
    /// The viewer owns neither bot of the match.
    NotAnOwner,
}

impl LogsRefused {
    /// The refusal in words, for the person refused.
    pub fn message(self) -> &'static str {
        match self {
            LogsRefused::SignedOut => "sign in to read the logs of your bots",
            LogsRefused::NotAnOwner => "logs are shown only to the owners of the bots in the match",
        }
    }
}

impl std::fmt::Display for LogsRefused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.message())
    }
}

impl From<LogsRefused> for Error {
    /// [`Error::Unauthenticated`] for nobody signed in, else
    /// [`Error::Forbidden`].
    fn from(refused: LogsRefused) -> Error {
        match refused {
            LogsRefused::SignedOut => Error::Unauthenticated(refused.message().into()),
            LogsRefused::NotAnOwner => Error::Forbidden(refused.message().into()),
        }
    }
}

/// The rule of who reads a match's logs, for the API and the pages alike:
/// the owner of a participating bot reads what that bot wrote to stderr in
/// match `id` (both sides' if they own both), by participant then game;
/// anyone else gets a [`LogsRefused`]. `viewer` is the signed-in user, if
/// any. [`Error::NotFound`] if a signed-in viewer asks about no such match.
pub async fn logs_for(
    db: &Db,
    id: MatchId,
    viewer: Option<UserId>,
) -> Result<std::result::Result<Vec<MatchLog>, LogsRefused>> {
    let Some(user) = viewer else {
        return Ok(Err(LogsRefused::SignedOut));
    };
    let sides = sides_owned_by(db, id, user).await?;
    if sides.is_empty() {
        return Ok(Err(LogsRefused::NotAnOwner));
    }
    Ok(Ok(stored_logs(db, id, &sides).await?))
}

/// The stored stderr of `participants` (0 and/or 1) in match `id`, by
/// participant then game, whoever asks ([`logs_for`] decides who may).
async fn stored_logs(db: &Db, id: MatchId, participants: &[i64]) -> Result<Vec<MatchLog>> {
    let rows =
        sqlx::query("SELECT participant, game, stderr FROM match_logs WHERE match_id = $1 ORDER BY participant, game")
            .bind(id.0)
            .fetch_all(&db.pool)
            .await?;
    let mut logs = Vec::new();
    for row in rows {
        let participant: i64 = row.try_get(0)?;
        if participants.contains(&participant) {
            logs.push(MatchLog {
                participant,
                game: row.try_get(1)?,
                stderr: row.try_get(2)?,
            });
        }
    }
    Ok(logs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A database with two users' bots (`alpha` of user 1, `beta` of user
    /// 2), one version each, and match 1 between them on `othello:std`.
    async fn database(dir: &std::path::Path) -> Db {
        let db = Db::open_sqlite(&dir.join("arbiter.db")).await.expect("database");
        for sql in [
            "INSERT INTO users (id, name, name_key, password_hash, created_ms) VALUES (1, 'u1', 'u1', '', 0), (2, 'u2', 'u2', '', 0)",
            "INSERT INTO bots (id, owner_id, name, name_key, created_ms) VALUES (1, 1, 'Alpha', 'alpha', 0), (2, 2, 'beta', 'beta', 0)",
            "INSERT INTO versions (id, bot_id, number, sha256, size, status, ladders, created_ms) VALUES \
             (10, 1, 1, 'x', 1, 'active', '[]', 0), (20, 2, 3, 'y', 1, 'active', '[]', 0)",
            "INSERT INTO matches (id, ladder, a_version, b_version, seed, kind, status, created_ms, attempts, started_ms, \
               finished_ms, winner, score_a, score_b, reasons, a_before, a_after, b_before, b_after) VALUES \
             (1, 'othello:std', 10, 20, 7, 'ranked', 'finished', 100, 1, 110, 120, 1, 28, 36, \
              '[{\"faulted_participant\":null,\"faulted_side\":null,\"game\":0,\"reason\":\"discs\"},\
                {\"faulted_participant\":0,\"faulted_side\":1,\"game\":1,\"reason\":\"timeout\"}]', \
              1500.0, 1490.5, 1500.0, 1509.5), \
             (2, 'othello:anti', 20, 10, 8, 'challenge', 'queued', 200, 0, NULL, NULL, NULL, NULL, NULL, NULL, \
              NULL, NULL, NULL, NULL)",
            "INSERT INTO match_logs (match_id, participant, game, stderr) VALUES (1, 0, 0, 'a0'), (1, 1, 0, 'b0'), (1, 0, 1, 'a1')",
        ] {
            sqlx::query(sql).execute(&db.pool).await.expect(sql);
        }
        db
    }

    #[tokio::test]
    async fn a_match_serialises_as_the_api_shows_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = database(dir.path()).await;
        let found = find(&db, MatchId(1)).await.expect("read").expect("match 1");
        let expected = json!({
            "id": 1, "ladder": "othello:std", "kind": "ranked", "status": "finished",
            "created_ms": 100, "started_ms": 110, "finished_ms": 120,
            "participants": [
                {"version_id": 10, "bot": "Alpha", "version": 1, "rating_before": 1500.0, "rating_after": 1490.5},
                {"version_id": 20, "bot": "beta", "version": 3, "rating_before": 1500.0, "rating_after": 1509.5},
            ],
            "winner": 1, "scores": [28, 36],
            "reasons": [
                {"faulted_participant": null, "faulted_side": null, "game": 0, "reason": "discs"},
                {"faulted_participant": 0, "faulted_side": 1, "game": 1, "reason": "timeout"},
            ],
            "error": null, "attempts": 1,
            "tournament_id": null, "replay": null,
        });
        assert_eq!(serde_json::to_value(&found).expect("json"), expected);
        let queued = find(&db, MatchId(2)).await.expect("read").expect("match 2");
        let queued = serde_json::to_value(&queued).expect("json");
        assert_eq!(queued["scores"], json!([null, null]));
        assert_eq!(queued["reasons"], json!(null));
        assert_eq!(queued["participants"][0]["rating_before"], json!(null));
        assert!(find(&db, MatchId(3)).await.expect("read").is_none());
        assert!(exists(&db, MatchId(2)).await.expect("read"));
        assert!(!exists(&db, MatchId(3)).await.expect("read"));
    }

    #[tokio::test]
    async fn lists_filter_by_ladder_status_bot_and_page() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = database(dir.path()).await;
        let ids = |matches: Vec<MatchSummary>| matches.iter().map(|m| m.id.0).collect::<Vec<_>>();
        let all = MatchFilter::newest(50);
        assert_eq!(ids(list(&db, &all).await.expect("list")), [2, 1]);
        let ladder = MatchFilter {
            ladder: Some("othello:anti".into()),
            ..all.clone()
        };
        assert_eq!(ids(list(&db, &ladder).await.expect("list")), [2]);
        let finished = MatchFilter {
            status: Some(MatchStatus::Finished),
            ..all.clone()
        };
        assert_eq!(ids(list(&db, &finished).await.expect("list")), [1]);
        let bot = bot_named(&db, "ALPHA").await.expect("alpha");
        let of_bot = MatchFilter {
            bot: Some(bot),
            before: Some(MatchId(2)),
            ..all.clone()
        };
        assert_eq!(ids(list(&db, &of_bot).await.expect("list")), [1]);
        let tournament = MatchFilter {
            tournament: Some(TournamentId(1)),
            ..all.clone()
        };
        assert!(list(&db, &tournament).await.expect("list").is_empty());
        assert_eq!(ids(list(&db, &MatchFilter::newest(1)).await.expect("list")), [2]);
        assert_eq!(ids(recent_for_bot(&db, BotId(2), 20).await.expect("recent")), [2, 1]);
        assert!(matches!(bot_named(&db, "gamma").await, Err(Error::NotFound(_))));
    }

    #[tokio::test]
    async fn unknown_statuses_and_kinds_are_errors_not_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = database(dir.path()).await;
        sqlx::query("UPDATE matches SET status = 'done' WHERE id = 1")
            .execute(&db.pool)
            .await
            .expect("update");
        assert!(matches!(find(&db, MatchId(1)).await, Err(Error::Internal(_))));
        assert!(matches!(
            list(&db, &MatchFilter::newest(5)).await,
            Err(Error::Internal(_))
        ));
        sqlx::query("UPDATE matches SET status = 'queued', kind = 'friendly' WHERE id = 1")
            .execute(&db.pool)
            .await
            .expect("update");
        assert!(matches!(find(&db, MatchId(1)).await, Err(Error::Internal(_))));
    }

    #[tokio::test]
    async fn logs_go_to_the_owners_of_their_side() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = database(dir.path()).await;
        assert_eq!(sides_owned_by(&db, MatchId(1), UserId(1)).await.expect("owners"), [0]);
        assert!(
            sides_owned_by(&db, MatchId(1), UserId(3))
                .await
                .expect("owners")
                .is_empty()
        );
        assert!(matches!(
            sides_owned_by(&db, MatchId(9), UserId(1)).await,
            Err(Error::NotFound(_))
        ));
        let logs = stored_logs(&db, MatchId(1), &[0]).await.expect("logs");
        let stderr: Vec<&str> = logs.iter().map(|log| log.stderr.as_str()).collect();
        assert_eq!(stderr, ["a0", "a1"]);
        assert_eq!(
            serde_json::to_value(&logs[0]).expect("json"),
            json!({"participant": 0, "game": 0, "stderr": "a0"})
        );
        assert_eq!(seed(&db, MatchId(2)).await.expect("seed"), 8);
    }

    /// The one rule the API and the pages both call: each owner reads their
    /// own side, a stranger and a signed-out viewer are refused.
    #[tokio::test]
    async fn logs_for_shows_owners_their_side_and_refuses_everyone_else() {
        let dir = tempfile::tempdir().expect("tempdir");
        let db = database(dir.path()).await;
        let stderr = |logs: Vec<MatchLog>| -> Vec<(i64, String)> {
            logs.into_iter().map(|log| (log.participant, log.stderr)).collect()
        };
        let alpha_owner = logs_for(&db, MatchId(1), Some(UserId(1))).await.expect("read");
        assert_eq!(
            stderr(alpha_owner.expect("the owner of side 0 reads it")),
            [(0, "a0".to_owned()), (0, "a1".to_owned())]
        );
        let beta_owner = logs_for(&db, MatchId(1), Some(UserId(2))).await.expect("read");
        assert_eq!(
            stderr(beta_owner.expect("the owner of side 1 reads it")),
            [(1, "b0".to_owned())]
        );
        assert_eq!(
            logs_for(&db, MatchId(1), Some(UserId(3))).await.expect("read"),
            Err(LogsRefused::NotAnOwner)
        );
        assert_eq!(
            logs_for(&db, MatchId(1), None).await.expect("read"),
            Err(LogsRefused::SignedOut)
        );
        assert!(matches!(
            logs_for(&db, MatchId(9), Some(UserId(1))).await,
            Err(Error::NotFound(_))
        ));
        assert!(matches!(Error::from(LogsRefused::NotAnOwner), Error::Forbidden(_)));
        assert!(matches!(Error::from(LogsRefused::SignedOut), Error::Unauthenticated(_)));
    }

    /// The reasons column is written and read as one type, in the bytes the
    /// worker has always written (`json!` objects: keys in name order).
    #[test]
    fn game_finishes_are_the_stored_reasons_column() {
        let replay = Replay::from_json(include_bytes!("../../../referee/tests/replays/skirmish.json")).expect("replay");
        let finishes = GameFinish::of_replay(&replay);
        // The short rush bot (participant 1) stops making sense in both games:
        // on side 1 in game 0, on side 0 in game 1.
        assert_eq!(
            finishes,
            [
                GameFinish {
                    faulted_participant: Some(1),
                    faulted_side: Some(1),
                    game: 0,
                    reason: FinishReason::BadReply
                },
                GameFinish {
                    faulted_participant: Some(1),
                    faulted_side: Some(0),
                    game: 1,
                    reason: FinishReason::BadReply
                },
            ]
        );
        let as_written_before: Vec<serde_json::Value> = finishes
            .iter()
            .map(|finish| {
                json!({
                    "game": finish.game,
                    "reason": finish.reason.as_str(),
                    "faulted_side": finish.faulted_side,
                    "faulted_participant": finish.faulted_participant,
                })
            })
            .collect();
        let column = GameFinish::column(&finishes);
        assert_eq!(column, serde_json::Value::Array(as_written_before).to_string());
        assert_eq!(GameFinish::read_column(&column).expect("reads back"), finishes);
        assert!(
            GameFinish::read_column(r#"[{"game": 0}]"#).is_err(),
            "a partial record is not read"
        );
    }
}
