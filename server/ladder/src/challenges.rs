//! Challenges as a step of the ladder: a signed-in user asks for a match
//! between one of their bots and any other bot on a ladder both play; it
//! jumps the queue and is never rated. The JSON API and the site's form both
//! call [`create`].

use crate::core::Core;
use crate::error::{Error, Result};
use crate::model::{LadderId, MatchKind};
use crate::seed::random_seed;
use arbiter_games::{BadBudget, Budget, Variant};

/// Challenges per user per minute.
pub const CHALLENGES_PER_MINUTE: i64 = 5;
/// Queue priority of a challenge (ranked matches have 0).
pub const CHALLENGE_PRIORITY: i64 = 10;

/// One of `variant`'s longer time controls, written `MOVE_MS/BANK_MS`; 400
/// naming the ones there are otherwise.
pub fn longer_budget(variant: Variant, text: &str) -> Result<Budget> {
    let offered = variant.longer_budgets();
    let list = || offered.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
    let budget: Budget = text
        .parse()
        .map_err(|e: BadBudget| Error::Invalid(format!("{e}; {variant} offers ladder, {}", list())))?;
    if offered.contains(&budget) {
        Ok(budget)
    } else {
        Err(Error::Invalid(format!(
            "time control {budget} is not offered on {variant}: choose ladder or one of {}",
            list()
        )))
    }
}

/// The active version of bot `name` on `ladder`, with its owner.
pub async fn active_version(core: &Core, name: &str, ladder: &str) -> Result<(i64, i64)> {
    let row: Option<(i64, i64)> = sqlx::query_as(
        "SELECT v.id, b.owner_id FROM bots b JOIN versions v ON v.bot_id = b.id \
         JOIN version_ladders l ON l.version_id = v.id \
         WHERE b.name_key = $1 AND v.status = 'active' AND l.ladder = $2 ORDER BY v.number DESC LIMIT 1",
    )
    .bind(name.to_lowercase())
    .bind(ladder)
    .fetch_optional(&core.db.pool)
    .await?;
    match row {
        Some(found) => Ok(found),
        None => {
            let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM bots WHERE name_key = $1")
                .bind(name.to_lowercase())
                .fetch_optional(&core.db.pool)
                .await?;
            match exists {
                Some(_) => Err(Error::Conflict(format!("{name} has no active version on {ladder}"))),
                None => Err(Error::not_found(format!("bot {name:?}"))),
            }
        }
    }
}

/// What a challenge asks for.
#[derive(Debug, serde::Deserialize)]
pub struct ChallengeRequest {
    /// The caller's bot.
    pub bot: String,
    /// The bot challenged.
    pub opponent: String,
    /// The ladder, e.g. `othello:std`.
    pub ladder: String,
    /// `ladder` (the default) for the ladder's time control, or one of its
    /// longer ones as `MOVE_MS/BANK_MS`, e.g. `10000/60000`.
    #[serde(default)]
    pub time: Option<String>,
}

/// Queues the challenge of `user_id` and wakes the workers; returns the
/// match id. 404 for an unknown bot, 403 when `request.bot` is not the
/// caller's, 409 without an active version on the ladder, 400 for a bad
/// ladder or time control, 429 past [`CHALLENGES_PER_MINUTE`].
///
/// A remote ladder (`remote:othello:std`) is challenged too: between a
/// remote (URL) bot and a remote or house bot the match is queued for the
/// workers; a challenge by an agent bot goes to the agent hall, where a
/// house bot accepts at once and an agent bot's connector accepts or
/// rejects it. A remote ladder plays at its own time control only.
pub async fn create(core: &Core, user_id: i64, body: &ChallengeRequest) -> Result<i64> {
    let (variant, clock) = crate::ladders::parse_any(&body.ladder)?;
    let ladder = crate::ladders::canonical(&body.ladder)?;
    let owner: Option<i64> = sqlx::query_scalar("SELECT owner_id FROM bots WHERE name_key = $1")
        .bind(body.bot.to_lowercase())
        .fetch_optional(&core.db.pool)
        .await?;
    match owner {
        None => return Err(Error::not_found(format!("bot {:?}", body.bot))),
        Some(owner) if owner != user_id => {
            return Err(Error::Forbidden(format!("{} is not your bot", body.bot)));
        }
        Some(_) => {}
    }
    let (mine, _) = active_version(core, &body.bot, &ladder).await?;
    let (theirs, _) = active_version(core, &body.opponent, &ladder).await?;
    if body.bot.eq_ignore_ascii_case(&body.opponent) {
        return Err(Error::Invalid("a bot cannot challenge itself".into()));
    }
    // After the bots: who may challenge whom comes before the details.
    let budget = match body.time.as_deref().map(str::trim) {
        None | Some("") | Some("ladder") => None,
        Some(_) if clock == crate::ladders::Clock::Wall => {
            return Err(Error::Invalid(format!(
                "{ladder} is a remote ladder: its challenges play at its own time control (choose ladder)"
            )));
        }
        Some(text) => Some(longer_budget(variant, text)?),
    };
    if clock == crate::ladders::Clock::Wall {
        let [my_kind, their_kind] = [kind_of(core, mine).await?, kind_of(core, theirs).await?];
        if my_kind == Kind::Agent || their_kind == Kind::Agent {
            if my_kind == Kind::Remote || their_kind == Kind::Remote {
                return Err(Error::Conflict(format!(
                    "{} and {} cannot meet: an agent bot plays agent bots and house bots only (in the agent hall),                      a remote bot with a URL plays remote and house bots",
                    body.bot, body.opponent
                )));
            }
            if my_kind != Kind::Agent {
                return Err(Error::Conflict(format!(
                    "{} is an agent bot: challenge it from one of your agent bots (or its connector challenges)",
                    body.opponent
                )));
            }
            crate::auth::rate_limit(&core.db, &format!("challenge:{user_id}"), CHALLENGES_PER_MINUTE, 60_000).await?;
            return challenge_in_hall(core, mine, variant, &body.opponent).await;
        }
    }
    crate::auth::rate_limit(&core.db, &format!("challenge:{user_id}"), CHALLENGES_PER_MINUTE, 60_000).await?;
    let new = crate::queue::NewMatch {
        ladder: &LadderId::new(ladder.as_str()),
        a_version: mine,
        b_version: theirs,
        seed: random_seed()?,
        kind: MatchKind::Challenge,
        priority: CHALLENGE_PRIORITY,
        tournament_id: None,
        budget,
    };
    crate::queue::enqueue(&core.db, &new).await
}

/// What plays a version on a remote ladder.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// An agent bot (played in the agent hall).
    Agent,
    /// A bot with a URL (played by workers).
    Remote,
    /// A sandboxed module (a house bot, on remote ladders).
    Module,
}

async fn kind_of(core: &Core, version: i64) -> Result<Kind> {
    let (agent, url): (i64, Option<String>) = sqlx::query_as("SELECT agent, remote_url FROM versions WHERE id = $1")
        .bind(version)
        .fetch_one(&core.db.pool)
        .await?;
    Ok(match (agent != 0, url) {
        (true, _) => Kind::Agent,
        (false, Some(_)) => Kind::Remote,
        (false, None) => Kind::Module,
    })
}

/// The challenge of the agent bot whose active version is `mine` to
/// `opponent` on `variant` (an Othello mode), made in the agent hall.
async fn challenge_in_hall(core: &Core, mine: i64, variant: Variant, opponent: &str) -> Result<i64> {
    let Variant::Othello(mode) = variant else {
        return Err(Error::Invalid("an agent bot plays Othello only".into()));
    };
    let (id, name, owner): (i64, String, String) = sqlx::query_as(
        "SELECT b.id, b.name, u.name FROM versions v JOIN bots b ON b.id = v.bot_id JOIN users u ON u.id = b.owner_id \
         WHERE v.id = $1",
    )
    .bind(mine)
    .fetch_one(&core.db.pool)
    .await?;
    let bot = crate::agent::AgentBot {
        id,
        name,
        owner,
        version: mine,
    };
    core.agents
        .challenge(core, &bot, crate::agent::Target::Name(opponent.to_owned()), mode)
        .await
}

/// A bot of the caller's that can be challenged with, and the ladders its
/// active version plays (remote ladders included).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Challenger {
    /// The bot's name.
    pub name: String,
    /// The ladders it plays, by canonical name.
    pub ladders: Vec<String>,
}

/// `user_id`'s bots that are not retired and have an active version, each
/// with the ladders that version plays, by name.
pub async fn challengers(core: &Core, user_id: i64) -> Result<Vec<Challenger>> {
    let rows: Vec<(String, String)> = sqlx::query_as(
        "SELECT b.name, l.ladder FROM bots b JOIN versions v ON v.bot_id = b.id AND v.status = 'active' \
         JOIN version_ladders l ON l.version_id = v.id \
         WHERE b.owner_id = $1 AND b.retired = 0 ORDER BY b.name_key, l.ladder",
    )
    .bind(user_id)
    .fetch_all(&core.db.pool)
    .await?;
    let mut out: Vec<Challenger> = Vec::new();
    for (name, ladder) in rows {
        match out.last_mut() {
            Some(last) if last.name == name => {
                if !last.ladders.contains(&ladder) {
                    last.ladders.push(ladder);
                }
            }
            _ => out.push(Challenger {
                name,
                ladders: vec![ladder],
            }),
        }
    }
    Ok(out)
}
