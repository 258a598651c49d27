//! What the pages read of games against people from the database: an
//! ended (or released) game's view, lists by account or bot, a bot's
//! tally, the bots people may play, replays and the bot's stderr.

use super::board::Board;
use super::live::Head;
use super::{ABORTED_NOTICE, Clock, GameView, Tally};
use crate::error::Result;
use crate::handles::Handles;
use arbiter_games::{Side, Variant};
use serde::Serialize;

/// A `people_games` row as a page reads it.
#[derive(sqlx::FromRow)]
struct StoredGame {
    bot: String,
    variant: String,
    person: String,
    person_side: i64,
    clock_ms: Option<i64>,
    seed: i64,
    random_opening: i64,
    status: String,
    winner: Option<String>,
    reason: Option<String>,
    replay_sha256: Option<String>,
    moves: Option<String>,
}

/// Game `id` from its row (and replay, for the board), once it has left
/// memory.
pub(super) async fn stored_view(core: &Handles, id: i64, move_limit_ms: u64) -> Result<Option<GameView>> {
    let row: Option<StoredGame> = sqlx::query_as(
        "SELECT b.name AS bot, p.variant, p.person, p.person_side, p.clock_ms, p.seed, p.random_opening, p.status, \
           p.winner, p.reason, p.replay_sha256, p.moves \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE p.id = $1",
    )
    .bind(id)
    .fetch_optional(&core.db.pool)
    .await?;
    let Some(StoredGame {
        bot,
        variant,
        person,
        person_side: side,
        clock_ms,
        seed,
        random_opening,
        status,
        winner,
        reason,
        replay_sha256: replay,
        moves: saved,
    }) = row
    else {
        return Ok(None);
    };
    let Ok(parsed) = variant.parse::<Variant>() else {
        return Ok(None);
    };
    let Some(mut board) = Board::start(parsed, seed as u64, random_opening != 0) else {
        return Ok(None);
    };
    let mut moves = Vec::new();
    if let Some(key) = replay
        && let Some(json) = crate::replays::read(&core.db, &core.blobs, &key).await?
        && let Ok(replay) = arbiter_referee::Replay::from_json(&json)
        && let Some(game) = replay.games.first()
    {
        for turn in &game.turns {
            board.play_turn(turn, &mut moves);
        }
    } else if let Some(saved) = saved.and_then(|text| serde_json::from_str::<Vec<String>>(&text).ok()) {
        // A running game no process plays now: its saved moves.
        for mv in saved {
            if !board.apply(&mv) {
                break;
            }
            moves.push(mv);
        }
    }
    let head = Head {
        id,
        bot,
        variant: parsed,
        person,
        person_side: if side == 0 { Side::First } else { Side::Second },
        clock: Clock::ALL
            .into_iter()
            .find(|c| c.ms().map(|ms| ms as i64) == clock_ms)
            .unwrap_or(Clock::Untimed),
    };
    let status = match status.as_str() {
        "finished" => "finished",
        "running" => "running",
        _ => "aborted",
    };
    let mut view = head.view(&board, moves, status, move_limit_ms);
    view.result = match (status, winner.as_deref()) {
        ("finished", Some("person")) => Some("person"),
        ("finished", Some("bot")) => Some("bot"),
        ("finished", _) => Some("draw"),
        _ => None,
    };
    view.notice = (status == "aborted").then(|| match reason.as_deref() {
        Some("server_restart") | None => ABORTED_NOTICE.to_owned(),
        Some("resume_mismatch") => {
            "The game could not be resumed after a restart (its bot did not play as before), so it was aborted. \
             It is not counted anywhere."
                .to_owned()
        }
        Some(other) => format!("The game was aborted ({other})."),
    });
    view.reason = reason;
    if status == "running" {
        // No process plays it this moment (one stopped, the next resumes
        // it): the position as saved, and why it waits.
        view.to_move = board
            .to_move()
            .map(|side| if side == head.person_side { "person" } else { "bot" });
        view.notice = Some(RESUMING_NOTICE.to_owned());
    }
    Ok(Some(view))
}

/// The notice of a running game no process plays this moment.
pub const RESUMING_NOTICE: &str = "The server is restarting: the game goes on where it was in a moment.";

/// A bot's finished games against people, counted from the bot's side.
pub async fn tally_of_bot(db: &crate::db::Db, bot: &str) -> Result<Tally> {
    let (wins, draws, losses): (Option<i64>, Option<i64>, Option<i64>) = sqlx::query_as(
        "SELECT SUM(CASE WHEN p.winner = 'bot' THEN 1 ELSE 0 END), \
                SUM(CASE WHEN p.winner IS NULL THEN 1 ELSE 0 END), \
                SUM(CASE WHEN p.winner = 'person' THEN 1 ELSE 0 END) \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE b.name_key = $1 AND p.status = 'finished'",
    )
    .bind(bot.to_lowercase())
    .fetch_one(&db.pool)
    .await?;
    Ok(Tally {
        wins: wins.unwrap_or(0),
        draws: draws.unwrap_or(0),
        losses: losses.unwrap_or(0),
    })
}

/// Whose games [`list`] lists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Whose<'a> {
    /// The games that belong to account `0` (started signed in, or claimed).
    Account(i64),
    /// The games against the bot of this name (any of its versions).
    Bot(&'a str),
}

/// One game in a list of people games ([`list`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, sqlx::FromRow)]
pub struct GameRow {
    /// The game's id (its page is `/play/{id}`).
    pub id: i64,
    /// The bot's name.
    pub bot: String,
    /// Its variant (`tictactoe:standard`, `othello:std`, …).
    pub variant: String,
    /// The person's name as the game shows it.
    pub person: String,
    /// The account it belongs to (its user page's name), if any and not
    /// deleted.
    pub account: Option<String>,
    /// `running`, `finished` or `aborted`.
    pub status: String,
    /// `person`, `bot`, or `None` (a draw, unfinished or aborted).
    pub winner: Option<String>,
    /// Why it ended.
    pub reason: Option<String>,
    /// When it started (Unix ms).
    pub created_ms: i64,
    /// When it ended (Unix ms), if it has.
    pub finished_ms: Option<i64>,
}

/// The latest `limit` people games of `whose`: the running ones first,
/// then the ended ones, newest first within each. Retired bots' games are
/// listed too (they happened).
pub async fn list(db: &crate::db::Db, whose: Whose<'_>, limit: i64) -> Result<Vec<GameRow>> {
    const SELECT: &str = "SELECT p.id, b.name AS bot, p.variant, p.person, u.name AS account, p.status, p.winner, \
           p.reason, p.created_ms, p.finished_ms \
         FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         LEFT JOIN users u ON u.id = p.user_id";
    const ORDER: &str = "ORDER BY CASE WHEN p.status = 'running' THEN 0 ELSE 1 END, p.id DESC LIMIT $2";
    let query = match whose {
        Whose::Account(user_id) => {
            sqlx::query_as::<_, GameRow>(sqlx::AssertSqlSafe(format!("{SELECT} WHERE p.user_id = $1 {ORDER}")))
                .bind(user_id)
        }
        Whose::Bot(name) => {
            sqlx::query_as::<_, GameRow>(sqlx::AssertSqlSafe(format!("{SELECT} WHERE b.name_key = $1 {ORDER}")))
                .bind(name.to_lowercase())
        }
    };
    let mut games = query.bind(limit).fetch_all(&db.pool).await?;
    for game in &mut games {
        // A deleted account has no page.
        game.account = game.account.take().filter(|name| name != crate::accounts::DELETED_NAME);
    }
    Ok(games)
}

/// A bot people may play now: its name, and the ladders (variants) it
/// plays that a person can play.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PlayableBot {
    /// The bot's name (its choice page is `/bots/{name}/play`).
    pub bot: String,
    /// Tic-tac-toe and the Othello modes it plays, sorted.
    pub variants: Vec<String>,
}

/// Every bot people may play now (its owner allows it, and its active
/// version runs sandboxed on a board game's ladder), by name.
pub async fn playable_bots(core: &Handles) -> Result<Vec<PlayableBot>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT DISTINCT b.name, vl.ladder FROM bots b \
         JOIN versions v ON v.bot_id = b.id AND v.status = 'active' AND v.remote_url IS NULL AND v.agent = 0 \
         JOIN version_ladders vl ON vl.version_id = v.id \
         WHERE b.retired = 0 AND b.people_play <> 0 \
         ORDER BY b.name, vl.ladder",
    )
    .fetch_all(&core.db.pool)
    .await?;
    let mut bots: Vec<PlayableBot> = Vec::new();
    for (bot, ladder) in rows {
        let Ok(variant) = ladder.parse::<Variant>() else {
            continue;
        };
        if variant.is_tick_based() {
            continue;
        }
        match bots.last_mut() {
            Some(last) if last.bot == bot => last.variants.push(ladder),
            _ => bots.push(PlayableBot {
                bot,
                variants: vec![ladder],
            }),
        }
    }
    Ok(bots)
}

/// The replay JSON of ended game `id`, if it has one.
pub async fn replay(core: &Handles, id: i64) -> Result<Option<Vec<u8>>> {
    let key: Option<Option<String>> = sqlx::query_scalar("SELECT replay_sha256 FROM people_games WHERE id = $1")
        .bind(id)
        .fetch_optional(&core.db.pool)
        .await?;
    match key.flatten() {
        Some(key) => crate::replays::read(&core.db, &core.blobs, &key).await,
        None => Ok(None),
    }
}

/// The bot's stderr in game `id`, for the bot's owner `user_id` only.
pub async fn stderr_for_owner(core: &Handles, id: i64, user_id: i64) -> Result<Option<String>> {
    let row: Option<Option<String>> = sqlx::query_scalar(
        "SELECT p.stderr FROM people_games p JOIN versions v ON v.id = p.version_id JOIN bots b ON b.id = v.bot_id \
         WHERE p.id = $1 AND b.owner_id = $2",
    )
    .bind(id)
    .bind(user_id)
    .fetch_optional(&core.db.pool)
    .await?;
    Ok(row.map(Option::unwrap_or_default))
}

/// What a person may play against a bot: its name as registered, the
/// variants its active sandboxed version plays (skirmish left out), and
/// whether its owner allows games against people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Playable {
    /// The bot's name.
    pub bot: String,
    /// Tic-tac-toe and the Othello modes it plays.
    pub variants: Vec<Variant>,
    /// The owner's consent.
    pub allowed: bool,
}

/// What a person may play against `bot`; `None` if there is no such bot.
pub async fn playable(core: &Handles, bot: &str) -> Result<Option<Playable>> {
    let rows: Vec<(String, i64, Option<String>)> = sqlx::query_as(
        "SELECT b.name, b.people_play, vl.ladder FROM bots b \
         LEFT JOIN versions v ON v.bot_id = b.id AND v.status = 'active' AND v.remote_url IS NULL AND v.agent = 0 \
         LEFT JOIN version_ladders vl ON vl.version_id = v.id \
         WHERE b.name_key = $1 AND b.retired = 0",
    )
    .bind(bot.to_lowercase())
    .fetch_all(&core.db.pool)
    .await?;
    let Some((name, allowed, _)) = rows.first().cloned() else {
        return Ok(None);
    };
    let mut variants: Vec<Variant> = rows
        .iter()
        .filter_map(|(_, _, ladder)| ladder.as_deref()?.parse::<Variant>().ok())
        .filter(|variant| !variant.is_tick_based())
        .collect();
    variants.sort_by_key(|variant| variant.to_string());
    variants.dedup();
    Ok(Some(Playable {
        bot: name,
        variants,
        allowed: allowed != 0,
    }))
}
