//! Accounts as steps of the ladder: signing up and signing in, with the
//! rules for names and passwords and the limits on guessing. The JSON API
//! (`POST /api/users`, `POST /api/sessions`) and the site's forms
//! (`POST /signup`, `POST /signin`) both call these, so the rules exist
//! once. So do changing a password ([`change_password`]) and deleting an
//! account ([`delete_account`]).
//!
//! # Deleting an account
//!
//! The account's sessions, API token and its bots' bot tokens are deleted;
//! its bots are retired (out of matchmaking, challenges and the agent
//! hall), their bios and photos removed, and the user row is kept
//! anonymised: named [`DELETED_NAME`], with no password (nobody can sign in
//! as it) and a name key no name can take, so the name is free again. The
//! bots keep their names, versions, matches, replays and ratings, so every
//! played match, its replay and the ratings of the bots that met them stay
//! intact and verifiable; pages show their owner as "deleted user". The
//! games people played are kept with the person's name replaced by
//! [`DELETED_NAME`].

use crate::auth::{
    self, create_session, end_session, hash_password, rate_limit, rate_limit_event, sweep_sessions, verify_password,
};
use crate::core::Core;
use crate::db::{Db, now_ms};
use crate::error::{Error, Result};
use crate::model::UserId;
use serde::Deserialize;
use sqlx::Row;
use std::sync::OnceLock;

/// Shortest user name.
pub const NAME_MIN: usize = 3;
/// Longest user name.
pub const NAME_MAX: usize = 32;
/// Shortest password, in characters.
pub const PASSWORD_MIN: usize = 8;
/// Longest password, in characters (Argon2 time grows with it).
pub const PASSWORD_MAX: usize = 256;
/// Sign-ups from one address per hour.
pub const SIGNUPS_PER_IP_PER_HOUR: i64 = 30;
/// Failed sign-ins for one name from one address per minute (a right one
/// is not counted): a guesser is slowed down where it guesses, and the
/// owner, signing in from elsewhere, is not locked out by it.
pub const SIGNINS_PER_NAME_AND_IP_PER_MINUTE: i64 = 10;
/// Failed sign-ins for one name from all addresses per minute: high enough
/// that no single address (see [`SIGNINS_PER_IP_PER_MINUTE`]) can reach it.
pub const SIGNINS_PER_NAME_PER_MINUTE: i64 = 100;
/// Failed sign-ins from one address per minute (a right one is not counted).
pub const SIGNINS_PER_IP_PER_MINUTE: i64 = 30;

/// Attempts at an account's current password (to change it or to delete
/// the account) per minute; a right one is not counted.
pub const PASSWORD_CHECKS_PER_USER_PER_MINUTE: i64 = 10;
/// The name a deleted account's row, and people games, show instead of it.
pub const DELETED_NAME: &str = "deleted user";

const MINUTE_MS: i64 = 60 * 1000;
const HOUR_MS: i64 = 60 * MINUTE_MS;
const BAD_CREDENTIALS: &str = "wrong name or password";

/// A new session: give `secret` to the browser as its cookie; `csrf` is
/// the token its state-changing requests must echo.
#[derive(Debug)]
pub struct SignedIn {
    /// The user's id.
    pub user_id: i64,
    /// The user's name, as they spelled it at sign-up.
    pub name: String,
    /// The session cookie's value.
    pub secret: String,
    /// The session's CSRF token.
    pub csrf: String,
}

/// Creates an account and a session for it (ending `old_session`, the
/// caller's previous session if any). 400 for a bad name or password, 409
/// for a taken name, 429 past [`SIGNUPS_PER_IP_PER_HOUR`] from `ip`.
pub async fn sign_up(
    core: &Core,
    ip: &str,
    credentials: &Credentials,
    old_session: Option<String>,
) -> Result<SignedIn> {
    validate_name(&credentials.name)?;
    validate_password(&credentials.password)?;
    let key = name_key(&credentials.name);
    let taken = |name: &str| Error::Conflict(format!("the name {name} is taken"));
    let exists: Option<i64> = sqlx::query_scalar("SELECT id FROM users WHERE name_key = $1")
        .bind(&key)
        .fetch_optional(&core.db.pool)
        .await?;
    if exists.is_some() {
        return Err(taken(&credentials.name));
    }
    rate_limit(&core.db, &format!("signup:{ip}"), SIGNUPS_PER_IP_PER_HOUR, HOUR_MS).await?;
    let password = credentials.password.clone();
    let hash = blocking(move || hash_password(&password)).await??;
    let inserted = sqlx::query(
        "INSERT INTO users (name, name_key, password_hash, is_house, created_ms) VALUES ($1, $2, $3, 0, $4) RETURNING id",
    )
    .bind(&credentials.name)
    .bind(&key)
    .bind(hash)
    .bind(now_ms())
    .fetch_one(&core.db.pool)
    .await;
    let id: i64 = match inserted {
        Ok(row) => row.try_get(0)?,
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => return Err(taken(&credentials.name)),
        Err(e) => return Err(e.into()),
    };
    if let Some(old) = old_session {
        end_session(&core.db, &old).await?;
    }
    let (secret, csrf) = create_session(&core.db, id).await?;
    Ok(SignedIn {
        user_id: id,
        name: credentials.name.clone(),
        secret,
        csrf,
    })
}

/// A hash to verify against when the name is unknown, so a wrong name takes
/// as long as a wrong password.
async fn decoy_hash() -> Result<&'static str> {
    static DECOY: OnceLock<String> = OnceLock::new();
    if let Some(hash) = DECOY.get() {
        return Ok(hash);
    }
    let secret = auth::new_secret()?;
    let hash = blocking(move || hash_password(&secret)).await??;
    Ok(DECOY.get_or_init(|| hash))
}

/// Checks a name and password and opens a session (ending `old_session`).
/// 401 "wrong name or password" whatever was wrong; 429 past the limits on
/// failed attempts per (name, address), per name and per address. A right
/// password forgives the attempt.
pub async fn sign_in(
    core: &Core,
    ip: &str,
    credentials: &Credentials,
    old_session: Option<String>,
) -> Result<SignedIn> {
    let ip_event = rate_limit_event(
        &core.db,
        &format!("signin-ip:{ip}"),
        SIGNINS_PER_IP_PER_MINUTE,
        MINUTE_MS,
    )
    .await?;
    if validate_name(&credentials.name).is_err() || credentials.password.chars().count() > PASSWORD_MAX {
        return Err(Error::Unauthenticated(BAD_CREDENTIALS.into()));
    }
    let key = name_key(&credentials.name);
    let here_event = rate_limit_event(
        &core.db,
        &format!("signin-name-ip:{key}:{ip}"),
        SIGNINS_PER_NAME_AND_IP_PER_MINUTE,
        MINUTE_MS,
    )
    .await?;
    let name_event = rate_limit_event(
        &core.db,
        &format!("signin-name:{key}"),
        SIGNINS_PER_NAME_PER_MINUTE,
        MINUTE_MS,
    )
    .await?;
    let row = sqlx::query("SELECT id, name, password_hash FROM users WHERE name_key = $1")
        .bind(&key)
        .fetch_optional(&core.db.pool)
        .await?;
    let user = match row {
        Some(row) => Some((
            row.try_get::<i64, _>(0)?,
            row.try_get::<String, _>(1)?,
            row.try_get::<String, _>(2)?,
        )),
        None => None,
    };
    let hash = match &user {
        Some((_, _, hash)) if !hash.is_empty() => hash.clone(),
        _ => decoy_hash().await?.to_owned(),
    };
    let password = credentials.password.clone();
    let right = blocking(move || verify_password(&password, &hash)).await?;
    let (id, name) = match user {
        Some((id, name, hash)) if right && !hash.is_empty() => (id, name),
        _ => return Err(Error::Unauthenticated(BAD_CREDENTIALS.into())),
    };
    ip_event.forgive(&core.db).await?;
    here_event.forgive(&core.db).await?;
    name_event.forgive(&core.db).await?;
    if let Some(old) = old_session {
        end_session(&core.db, &old).await?;
    }
    sweep_sessions(&core.db, id).await?;
    let (secret, csrf) = create_session(&core.db, id).await?;
    Ok(SignedIn {
        user_id: id,
        name,
        secret,
        csrf,
    })
}

/// What changing a password takes: the current one and the new one.
#[derive(Deserialize)]
pub struct PasswordChange {
    /// The password now, in clear.
    pub current_password: String,
    /// The new password: 8 to 256 characters.
    pub new_password: String,
}

/// Checks `password` against the stored hash of (live) account `user_id`,
/// counting a wrong one against [`PASSWORD_CHECKS_PER_USER_PER_MINUTE`]:
/// 403 "the password is wrong", 429 past the limit, 404 for an account
/// that is gone.
async fn check_own_password(core: &Core, user_id: i64, password: &str, what: &str) -> Result<String> {
    let event = rate_limit_event(
        &core.db,
        &format!("password-check:{user_id}"),
        PASSWORD_CHECKS_PER_USER_PER_MINUTE,
        MINUTE_MS,
    )
    .await?;
    let row: Option<(String, String)> =
        sqlx::query_as("SELECT name, password_hash FROM users WHERE id = $1 AND deleted_ms IS NULL")
            .bind(user_id)
            .fetch_optional(&core.db.pool)
            .await?;
    let (name, hash) = row.ok_or_else(|| Error::not_found("user"))?;
    let sent = password.to_owned();
    let right = password.chars().count() <= PASSWORD_MAX
        && !hash.is_empty()
        && blocking(move || verify_password(&sent, &hash)).await?;
    if !right {
        return Err(Error::Forbidden(format!("{what} is wrong")));
    }
    event.forgive(&core.db).await?;
    Ok(name)
}

/// Changes `user_id`'s password. The current password must be right (403
/// otherwise, 429 past [`PASSWORD_CHECKS_PER_USER_PER_MINUTE`] wrong ones),
/// the new one valid (400) and different from it (400). Every session of
/// the account and its API token are revoked with the change; when
/// `reissue` (the change came from a session), a new session is opened and
/// returned, so the browser that changed it stays signed in.
pub async fn change_password(
    core: &Core,
    user_id: i64,
    change: &PasswordChange,
    reissue: bool,
) -> Result<Option<SignedIn>> {
    validate_password(&change.new_password)?;
    let name = check_own_password(core, user_id, &change.current_password, "the current password").await?;
    if change.new_password == change.current_password {
        return Err(Error::Invalid("the new password is the same as the current one".into()));
    }
    let password = change.new_password.clone();
    let hash = blocking(move || hash_password(&password)).await??;
    let mut tx = core.db.begin_write().await?;
    sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
        .bind(user_id)
        .bind(hash)
        .execute(&mut *tx)
        .await?;
    revoke_credentials(&mut tx, user_id).await?;
    tx.commit().await?;
    if !reissue {
        return Ok(None);
    }
    let (secret, csrf) = create_session(&core.db, user_id).await?;
    Ok(Some(SignedIn {
        user_id,
        name,
        secret,
        csrf,
    }))
}

/// Deletes every session and the API token of `user_id`.
async fn revoke_credentials(tx: &mut sqlx::AnyConnection, user_id: i64) -> Result<()> {
    sqlx::query("DELETE FROM sessions WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    sqlx::query("DELETE FROM api_tokens WHERE user_id = $1")
        .bind(user_id)
        .execute(&mut *tx)
        .await?;
    Ok(())
}

/// What deleting an account takes: its password, and its name typed again.
#[derive(Deserialize)]
pub struct Deletion {
    /// The account's password, in clear.
    pub password: String,
    /// The account's user name, typed to confirm (any letter case).
    pub confirm: String,
}

/// What deleting an account did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deleted {
    /// The name the account had.
    pub name: String,
    /// Its bots, all retired now (their matches and replays are kept).
    pub bots_retired: u64,
    /// People games whose person's name was replaced by [`DELETED_NAME`].
    pub people_games_anonymised: u64,
}

/// Deletes `user_id`'s account as the module's doc says, in one
/// transaction. 403 for a wrong password (429 past
/// [`PASSWORD_CHECKS_PER_USER_PER_MINUTE`]), then 400 unless
/// `deletion.confirm` is the account's name,
/// 404 for an account already deleted. Nothing is changed on a refusal.
pub async fn delete_account(core: &Core, user_id: i64, deletion: &Deletion) -> Result<Deleted> {
    let name: Option<String> = sqlx::query_scalar("SELECT name FROM users WHERE id = $1 AND deleted_ms IS NULL")
        .bind(user_id)
        .fetch_optional(&core.db.pool)
        .await?;
    let name = name.ok_or_else(|| Error::not_found("user"))?;
    // The password first: only its holder learns what else is wrong.
    check_own_password(core, user_id, &deletion.password, "the password").await?;
    if !deletion.confirm.trim().eq_ignore_ascii_case(&name) {
        return Err(Error::Invalid(format!(
            "to confirm, type your user name ({name}) in the confirmation field"
        )));
    }
    let mut tx = core.db.begin_write().await?;
    let owned = "(SELECT id FROM bots WHERE owner_id = $1)";
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "UPDATE versions SET status = 'retired' WHERE bot_id IN {owned} AND status IN ('active', 'checking', 'paused')"
    )))
    .bind(user_id)
    .execute(&mut *tx)
    .await?;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "DELETE FROM bot_tokens WHERE bot_id IN {owned}"
    )))
    .bind(user_id)
    .execute(&mut *tx)
    .await?;
    let bots_retired =
        sqlx::query("UPDATE bots SET retired = 1, bio = '', photo_sha256 = NULL, auto_match = 0 WHERE owner_id = $1")
            .bind(user_id)
            .execute(&mut *tx)
            .await?
            .rows_affected();
    let people_games_anonymised = sqlx::query("UPDATE people_games SET user_id = NULL, person = $2 WHERE user_id = $1")
        .bind(user_id)
        .bind(DELETED_NAME)
        .execute(&mut *tx)
        .await?
        .rows_affected();
    revoke_credentials(&mut tx, user_id).await?;
    sqlx::query("UPDATE users SET name = $2, name_key = $3, password_hash = '', deleted_ms = $4 WHERE id = $1")
        .bind(user_id)
        .bind(DELETED_NAME)
        // A `:` is in no user name, so no sign-up can take this key.
        .bind(format!("deleted:{user_id}"))
        .bind(now_ms())
        .execute(&mut *tx)
        .await?;
    tx.commit().await?;
    Ok(Deleted {
        name,
        bots_retired,
        people_games_anonymised,
    })
}

/// Checks a user name: 3–32 ASCII letters, digits, `_` or `-`.
pub fn validate_name(name: &str) -> Result<()> {
    let well_formed = (NAME_MIN..=NAME_MAX).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if well_formed {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a user name is {NAME_MIN} to {NAME_MAX} characters, each a letter (A-Z, a-z), a digit, `_` or `-`"
        )))
    }
}

/// Checks a new password: 8–256 characters.
pub fn validate_password(password: &str) -> Result<()> {
    let length = password.chars().count();
    if (PASSWORD_MIN..=PASSWORD_MAX).contains(&length) {
        Ok(())
    } else {
        Err(Error::Invalid(format!(
            "a password is {PASSWORD_MIN} to {PASSWORD_MAX} characters long"
        )))
    }
}

/// The key that makes names unique regardless of case.
pub fn name_key(name: &str) -> String {
    name.to_ascii_lowercase()
}

/// A name and a password, to sign up or sign in.
#[derive(Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Credentials {
    /// The user name.
    pub name: String,
    /// The password, in clear.
    pub password: String,
}

/// Runs `f` on the blocking pool (for Argon2).
async fn blocking<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("a blocking task failed: {e}")))
}

/// A user as anyone may see them.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Profile {
    /// Their id.
    pub id: UserId,
    /// Their name as they chose it.
    pub name: String,
    /// When they signed up (ms since the epoch).
    pub created_ms: i64,
    /// Whether this is the house account (owner of the house bots).
    pub house: bool,
}

/// The public profile of the user called `name` (any case); 404 if none
/// (a deleted account has none).
pub async fn profile(db: &Db, name: &str) -> Result<Profile> {
    let row: Option<(i64, String, i64, i64)> =
        sqlx::query_as("SELECT id, name, created_ms, is_house FROM users WHERE name_key = $1 AND deleted_ms IS NULL")
            .bind(name_key(name))
            .fetch_optional(&db.pool)
            .await?;
    let (id, name, created_ms, house) = row.ok_or_else(|| Error::not_found("user"))?;
    Ok(Profile {
        id: UserId(id),
        name,
        created_ms,
        house: house != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule() {
        for good in ["ann", "Ann_Lee-2", &"x".repeat(32)] {
            assert!(validate_name(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "ab",
            &"x".repeat(33),
            "a b",
            "<script>",
            "x'; DROP TABLE users;--",
            "émile",
            "ann\n",
            "ann.",
        ] {
            assert!(matches!(validate_name(bad), Err(Error::Invalid(_))), "{bad:?}");
        }
    }

    #[test]
    fn passwords_count_characters() {
        assert!(validate_password("12345678").is_ok());
        assert!(validate_password("1234567").is_err());
        assert!(validate_password(&"é".repeat(256)).is_ok(), "256 characters, 512 bytes");
        assert!(validate_password(&"x".repeat(257)).is_err());
    }
}
