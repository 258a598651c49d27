//! Account and bot management (issue 42, item 5), on both backends:
//!
//! - `changing_a_password`: refusals (a wrong current password, a short or
//!   unchanged new one) change nothing; the change revokes every session
//!   and the API token, opens a new session, and only the new password
//!   signs in.
//! - `deleting_an_account`: refusals (the name not typed, a wrong password)
//!   change nothing; the deletion revokes the sessions and token, retires
//!   the bots (kept, owned by "deleted user", bio gone), anonymises people
//!   games, keeps the played match, its replay and the opponent's rating
//!   exactly as they were, frees the name, and cannot be done twice.
//! - `retiring_and_unretiring`: un-retiring brings back the last checked
//!   version with its rating, puts a version retired mid-check back to
//!   checking, and refuses others' bots, bots not retired and bots with
//!   nothing to bring back.
//! - `each_ladder_has_its_own_verdict`: a tic-tac-toe module ticked for
//!   tic-tac-toe and Othello is accepted on tic-tac-toe only, with Othello's
//!   refusal and reason recorded; one that passes no ladder is rejected.

use crate::support::{Ladder, PASSWORD, TTT, credentials};
use arbiter_ladder::accounts::{self, Deletion, PasswordChange};
use arbiter_ladder::auth;
use arbiter_ladder::bots;
use arbiter_ladder::error::Error;
use arbiter_ladder::model::VersionId;
use arbiter_ladder::uploads::{self, Upload};

pub async fn changing_a_password(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let other = accounts::sign_in(core, "elsewhere", &credentials("ann", PASSWORD), None)
        .await
        .expect("a second session");
    let token = auth::issue_api_token(&core.db, ann.user_id).await.expect("a token");
    let change = |current: &str, new: &str| PasswordChange {
        current_password: current.to_owned(),
        new_password: new.to_owned(),
    };
    let wrong = accounts::change_password(core, ann.user_id, &change("not it at all", "brand new secret"), true).await;
    assert!(matches!(wrong, Err(Error::Forbidden(_))), "{wrong:?}");
    let short = accounts::change_password(core, ann.user_id, &change(PASSWORD, "short"), true).await;
    assert!(matches!(short, Err(Error::Invalid(_))), "{short:?}");
    let same = accounts::change_password(core, ann.user_id, &change(PASSWORD, PASSWORD), true).await;
    assert!(matches!(same, Err(Error::Invalid(_))), "{same:?}");
    for secret in [&ann.secret, &other.secret] {
        assert!(
            auth::caller_by_session(&core.db, secret)
                .await
                .expect("a lookup")
                .is_some()
        );
    }
    assert!(
        auth::caller_by_token(&core.db, &token).await.is_ok(),
        "refusals change nothing"
    );

    let renewed = accounts::change_password(core, ann.user_id, &change(PASSWORD, "brand new secret"), true)
        .await
        .expect("changed")
        .expect("a new session for the session that changed it");
    for secret in [&ann.secret, &other.secret] {
        assert!(
            auth::caller_by_session(&core.db, secret)
                .await
                .expect("a lookup")
                .is_none(),
            "every old session is revoked"
        );
    }
    assert!(matches!(
        auth::caller_by_token(&core.db, &token).await,
        Err(Error::Unauthenticated(_))
    ));
    let caller = auth::caller_by_session(&core.db, &renewed.secret)
        .await
        .expect("a lookup")
        .expect("the new session works");
    assert_eq!(caller.user_id, ann.user_id);
    let old = accounts::sign_in(core, "x", &credentials("ann", PASSWORD), None).await;
    assert!(matches!(old, Err(Error::Unauthenticated(_))), "{old:?}");
    accounts::sign_in(core, "x", &credentials("ann", "brand new secret"), None)
        .await
        .expect("the new password signs in");
    // From an API token: no session comes back.
    let token = auth::issue_api_token(&core.db, ann.user_id).await.expect("a token");
    let none = accounts::change_password(core, ann.user_id, &change("brand new secret", "another secret"), false)
        .await
        .expect("changed");
    assert!(none.is_none());
    assert!(auth::caller_by_token(&core.db, &token).await.is_err());
}

pub async fn deleting_an_account(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;
    let mine = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let theirs = ladder
        .upload_active(bob.user_id, "bob-ttt", "tictactoe", "tictactoe-perfect")
        .await;
    let played = ladder.enqueue_ranked(TTT, mine, theirs, 7).await;
    ladder.play(&[played]).await;
    let before = ladder.match_row(played).await;
    assert_eq!(before.status, "finished");
    let bob_rating = ladder.rating(theirs, TTT).await.expect("bob is rated");
    let token = auth::issue_api_token(&core.db, ann.user_id).await.expect("a token");
    sqlx::query("UPDATE bots SET bio = 'ann writes bots' WHERE name_key = 'ann-ttt'")
        .execute(&core.db.pool)
        .await
        .expect("a bio");
    sqlx::query(
        "INSERT INTO people_games (version_id, variant, person, user_id, person_side, seed, status, created_ms) \
         VALUES ($1, 'tictactoe:standard', 'ann', $2, 0, 1, 'finished', 1)",
    )
    .bind(theirs)
    .bind(ann.user_id)
    .execute(&core.db.pool)
    .await
    .expect("a people game");

    let deletion = |password: &str, confirm: &str| Deletion {
        password: password.to_owned(),
        confirm: confirm.to_owned(),
    };
    let untyped = accounts::delete_account(core, ann.user_id, &deletion(PASSWORD, "bob")).await;
    assert!(matches!(untyped, Err(Error::Invalid(_))), "{untyped:?}");
    let wrong = accounts::delete_account(core, ann.user_id, &deletion("not the password", "ann")).await;
    assert!(matches!(wrong, Err(Error::Forbidden(_))), "{wrong:?}");
    assert!(
        auth::caller_by_token(&core.db, &token).await.is_ok(),
        "refusals change nothing"
    );
    assert_eq!(ladder.version_status(mine).await, "active");

    let deleted = accounts::delete_account(core, ann.user_id, &deletion(PASSWORD, "ANN"))
        .await
        .expect("deleted");
    assert_eq!(deleted.name, "ann");
    assert_eq!(deleted.bots_retired, 1);
    assert_eq!(deleted.people_games_anonymised, 1);

    // Signed out everywhere, and nobody can sign in as it.
    assert!(
        auth::caller_by_session(&core.db, &ann.secret)
            .await
            .expect("a lookup")
            .is_none()
    );
    assert!(auth::caller_by_token(&core.db, &token).await.is_err());
    let signin = accounts::sign_in(core, "x", &credentials("ann", PASSWORD), None).await;
    assert!(matches!(signin, Err(Error::Unauthenticated(_))), "{signin:?}");
    assert!(matches!(
        accounts::profile(&core.db, "ann").await,
        Err(Error::NotFound(_))
    ));

    // The bot is kept, retired and anonymised; the match, its replay and
    // the opponent's rating are as they were.
    let bot = bots::by_name(&core.db, "ann-ttt")
        .await
        .expect("a lookup")
        .expect("the bot stays");
    assert!(bot.retired);
    assert_eq!(bot.owner, accounts::DELETED_NAME);
    assert_eq!(bot.bio, "");
    assert_eq!(ladder.version_status(mine).await, "retired");
    let version = bots::version(&core.db, VersionId(mine), None).await.expect("a lookup");
    assert!(version.is_some(), "the version stays");
    let after = ladder.match_row(played).await;
    assert_eq!(after.status, "finished");
    assert_eq!(after.after, before.after, "the match's ratings are untouched");
    let key = after.replay_sha256.clone().expect("a replay");
    let replay = arbiter_ladder::replays::read(&core.db, &core.blobs, &key)
        .await
        .expect("the replay storage answers")
        .expect("the replay stays");
    let replay: serde_json::Value = serde_json::from_slice(&replay).expect("a JSON replay");
    assert_eq!(replay["match_id"], played, "the replay is this match's");
    let bob_after = ladder.rating(theirs, TTT).await.expect("bob is rated");
    assert_eq!(bob_after.1, bob_rating.1);
    assert!((bob_after.0.rating - bob_rating.0.rating).abs() < 1e-9);
    let (person, user): (String, Option<i64>) =
        sqlx::query_as("SELECT person, user_id FROM people_games WHERE version_id = $1")
            .bind(theirs)
            .fetch_one(&core.db.pool)
            .await
            .expect("the people game stays");
    assert_eq!((person.as_str(), user), (accounts::DELETED_NAME, None));

    // Not twice; the name is free again.
    let again = accounts::delete_account(core, ann.user_id, &deletion(PASSWORD, "ann")).await;
    assert!(matches!(again, Err(Error::NotFound(_))), "{again:?}");
    let new_ann = ladder.sign_up("ann").await;
    assert_ne!(new_ann.user_id, ann.user_id);
    let taken = uploads::upload(
        core,
        new_ann.user_id,
        Upload {
            name: Some("ann-ttt".into()),
            ladders: vec!["tictactoe".into()],
            module: Some(crate::support::house_wasm("tictactoe-perfect").to_vec()),
            url: None,
            agent: false,
        },
    )
    .await;
    assert!(
        matches!(taken, Err(Error::Forbidden(_))),
        "the bot's name stays its own: {taken:?}"
    );
}

pub async fn retiring_and_unretiring(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;
    let v1 = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let house = ladder.active("tictactoe-perfect", TTT).await;
    let played = ladder.enqueue_ranked(TTT, v1, house, 3).await;
    ladder.play(&[played]).await;
    let rated = ladder.rating(v1, TTT).await.expect("rated");

    let active = uploads::unretire(core, ann.user_id, "ann-ttt").await;
    assert!(matches!(active, Err(Error::Conflict(_))), "not retired: {active:?}");
    uploads::retire(core, ann.user_id, "ann-ttt").await.expect("retired");
    let theirs = uploads::unretire(core, bob.user_id, "ann-ttt").await;
    assert!(matches!(theirs, Err(Error::Forbidden(_))), "{theirs:?}");
    let unknown = uploads::unretire(core, ann.user_id, "nobody").await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");

    let back = uploads::unretire(core, ann.user_id, "ann-ttt").await.expect("back");
    assert_eq!(back.active, Some(v1));
    assert_eq!(back.checking, 0);
    assert_eq!(ladder.version_status(v1).await, "active");
    assert_eq!(ladder.active("ann-ttt", TTT).await, v1);
    let kept = ladder.rating(v1, TTT).await.expect("still rated");
    assert_eq!(kept.1, rated.1, "its record is kept");
    let bot = bots::by_name(&core.db, "ann-ttt")
        .await
        .expect("a lookup")
        .expect("the bot");
    assert!(!bot.retired);

    // Retired while a new version is being checked: that one is checked again.
    let v2 = ladder
        .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-perfect")
        .await
        .expect("uploaded")
        .version_id;
    assert_eq!(uploads::retire(core, ann.user_id, "ann-ttt").await.expect("retired"), 2);
    let back = uploads::unretire(core, ann.user_id, "ann-ttt").await.expect("back");
    assert_eq!((back.active, back.checking), (Some(v1), 1));
    assert_eq!(ladder.version_status(v2).await, "checking");
    assert_eq!(ladder.check(v2).await, "active");
    assert_eq!(
        ladder.version_status(v1).await,
        "retired",
        "the newer version took over"
    );

    // Nothing to bring back: a bot whose only version was rejected.
    let rejected = ladder
        .upload(ann.user_id, "ann-bad", "othello", "tictactoe-random")
        .await
        .expect("uploaded")
        .version_id;
    assert_eq!(ladder.check(rejected).await, "rejected");
    uploads::retire(core, ann.user_id, "ann-bad").await.expect("retired");
    let nothing = uploads::unretire(core, ann.user_id, "ann-bad").await;
    assert!(matches!(nothing, Err(Error::Conflict(_))), "{nothing:?}");
}

pub async fn each_ladder_has_its_own_verdict(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let uploaded = uploads::upload(
        core,
        ann.user_id,
        Upload {
            name: Some("ann-ttt".into()),
            ladders: vec!["tictactoe".into(), "othello:std".into()],
            module: Some(crate::support::house_wasm("tictactoe-random").to_vec()),
            url: None,
            agent: false,
        },
    )
    .await
    .expect("uploaded");
    assert_eq!(
        ladder.check(uploaded.version_id).await,
        "active",
        "accepted where it passed"
    );
    let version = bots::version(&core.db, VersionId(uploaded.version_id), None)
        .await
        .expect("a lookup")
        .expect("the version")
        .version;
    assert_eq!(version.ladders, vec![TTT.to_owned()]);
    assert_eq!(version.verdicts.len(), 2);
    assert_eq!(
        (version.verdicts[0].ladder.as_str(), version.verdicts[0].passed),
        (TTT, true)
    );
    assert_eq!(
        (version.verdicts[1].ladder.as_str(), version.verdicts[1].passed),
        ("othello:std", false)
    );
    assert!(version.verdicts[1].reason.is_some());
    let reason = version.reason.expect("the refusal is said");
    assert!(reason.contains("othello:std: "), "{reason}");
    assert!(reason.contains("accepted on tictactoe:standard"), "{reason}");
    let ladders = ladder
        .count(
            "SELECT COUNT(*) FROM version_ladders WHERE version_id = $1",
            uploaded.version_id,
        )
        .await;
    assert_eq!(ladders, 1, "it plays only where it passed");
    assert_eq!(ladder.active("ann-ttt", TTT).await, uploaded.version_id);

    // No ladder passed: rejected, each reason said.
    let refused = ladder
        .upload(ann.user_id, "ann-oth", "othello:std", "tictactoe-random")
        .await
        .expect("uploaded");
    assert_eq!(ladder.check(refused.version_id).await, "rejected");
    let version = bots::version(&core.db, VersionId(refused.version_id), None)
        .await
        .expect("a lookup")
        .expect("the version")
        .version;
    assert!(
        version
            .reason
            .as_deref()
            .is_some_and(|r| r.starts_with("othello:std: ")),
        "{version:?}"
    );
    assert_eq!(version.verdicts.len(), 1);
    assert!(!version.verdicts[0].passed);
}
