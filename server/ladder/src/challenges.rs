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
pub async fn create(core: &Core, user_id: i64, body: &ChallengeRequest) -> Result<i64> {
    let variant = crate::ladders::parse(&body.ladder)?;
    let ladder = crate::ladders::name(variant);
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
        Some(text) => Some(longer_budget(variant, text)?),
    };
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
