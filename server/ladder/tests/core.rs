//! Core tests of `arbiter-ladder`, in process, on SQLite and on PostgreSQL:
//! no binary is started and no HTTP is spoken; each test drives the
//! ladder's public steps on a real [`Core`](arbiter_ladder::core::Core)
//! opened with `Core::open` on a fresh temporary data folder (and, on
//! PostgreSQL, a fresh database of its own, dropped afterwards), with the
//! house bots seeded. Matches are tic-tac-toe between the house's random
//! and perfect players (and those modules uploaded by test users), so a
//! match takes milliseconds.
//!
//! What is covered, each test on both backends:
//!
//! - `a_ranked_match_is_recorded_and_rated_once`: sign-up and sign-in
//!   (`accounts`), an upload (`uploads::upload`) stored and `checking`, the
//!   checker (`versions::check_one`) making it `active` with the starting
//!   rating or `rejected` with a reason and no rating; two ranked matches
//!   played by a worker (`worker::run`) are finished once each (one claim,
//!   four log rows, a replay blob that agrees with the row), stamped with
//!   distinct `rated_seq`s (1, 2 on SQLite), and their before/after columns
//!   and the stored ratings are exactly one Glicko-2 update per match;
//!   seeding the house again adds nothing.
//! - `challenges_are_refused_or_never_rated`: a challenge refuses someone
//!   else's bot, unknown bots, itself and bad ladders or time controls,
//!   queuing nothing; between bots of different owners it is queued at its
//!   priority, claimed before an older ranked match, played and never
//!   rated, while the ranked match between the same versions is.
//! - `a_host_failure_is_never_a_loss`: a version whose module is missing
//!   from the blob store makes its match `failed` after the configured
//!   attempts, unrated, with both ratings untouched.
//! - `a_tournament_is_created_all_or_nothing`: refusals write nothing; a
//!   failure injected (a database trigger) while the fourth of six matches
//!   is inserted leaves no tournament, entry or match behind; without it,
//!   the tournament, its entries and every pair twice with sides swapped
//!   are created, played and never rated; the tournament rate limit counts
//!   the failed attempt.
//! - `rate_limits_refuse_with_rate_limited`: uploads (per user, refused
//!   ones count, a refused upload stores nothing, other users unaffected),
//!   challenges, and failed sign-ins per name and address (the owner can
//!   still sign in from elsewhere) are refused with `Error::RateLimited`
//!   and a retry delay within the window.
//! - `retiring_a_bot`: a new checked version retires the previous one;
//!   `uploads::retire` refuses others' and unknown bots, retires the active
//!   version, keeps its rating and matches, takes it out of matchmaking
//!   (`scheduler::candidates`, `schedule_once`) and challenges; a later
//!   upload brings the bot back, and a module the bot already had is
//!   refused.
//! - `a_match_claimed_ahead_never_waits_behind_a_long_one`: a worker
//!   playing a long match (a bot that loops until its move's budget runs
//!   out) claims the next match ahead, gives it back once the hold is over
//!   (queued again, no attempt counted) and a second worker plays it while
//!   the long one goes on; a worker stopped while holding a match claimed
//!   ahead puts both it and the one it was playing back in the queue.
//! - account and bot management (`changing_a_password`,
//!   `deleting_an_account`, `retiring_and_unretiring`,
//!   `each_ladder_has_its_own_verdict`): see `management/mod.rs`.
//! - `recompute_equals_the_stored_ratings`: after ranked matches among
//!   three versions `ratings::recompute` finds no difference, and finds
//!   exactly the one rating tampered with afterwards.
//!
//! # The compiler child
//!
//! `Core::open` takes the command that starts the sandbox's compiler child
//! from its caller (`arbiter` passes itself with the hidden argument
//! `arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND`). Here it is *this test
//! executable* with that argument, so this test is `harness = false`: its
//! `main` answers the argument itself by calling
//! `arbiter_sandbox::compiler_child_main()` (before anything else runs, so
//! the child's resource limits apply to a bare process), and otherwise runs
//! the tests with the small runner in `support`. That keeps `Core::open`
//! itself under test and needs no other binary to be built first (the
//! sandbox's `arbiter-compile` is not built for `-p arbiter-ladder`).
//!
//! The tests run one at a time (they are CPU-bound on small machines).
//! PostgreSQL variants run when `TEST_PG_URL` is set (CI sets it), and are
//! listed as ignored with a note otherwise. Nothing here asserts on time.

mod management;
mod support;

use arbiter_ladder::blobs::sha256_hex;
use arbiter_ladder::challenges::{self, ChallengeRequest};
use arbiter_ladder::db::Backend;
use arbiter_ladder::error::Error;
use arbiter_ladder::model::{LadderId, MatchKind};
use arbiter_ladder::queue;
use arbiter_ladder::ratings::{Outcome, Rating, RatingBook, RatingSystem, recompute};
use arbiter_ladder::scheduler::{self, SchedulerConfig};
use arbiter_ladder::tournaments::{self, TournamentRequest};
use arbiter_ladder::worker::{self, WorkerConfig};
use arbiter_ladder::{accounts, uploads, versions};
use management::{changing_a_password, deleting_an_account, each_ladder_has_its_own_verdict, retiring_and_unretiring};
use std::collections::{BTreeMap, BTreeSet};
use std::process::ExitCode;
use std::time::Duration;
use support::{Ladder, MatchRow, PASSWORD, TTT, Test, credentials, house_wasm};
use tokio::sync::watch;

fn main() -> ExitCode {
    if std::env::args().nth(1).as_deref() == Some(arbiter_sandbox::EMBEDDED_COMPILER_SUBCOMMAND) {
        return arbiter_sandbox::compiler_child_main();
    }
    support::run_tests(TESTS)
}

macro_rules! tests {
    ($($name:ident),+ $(,)?) => {
        const TESTS: &[Test] = &[$(Test { name: stringify!($name), body: |ladder| Box::pin($name(ladder)) }),+];
    };
}

tests![
    a_ranked_match_is_recorded_and_rated_once,
    challenges_are_refused_or_never_rated,
    a_host_failure_is_never_a_loss,
    a_tournament_is_created_all_or_nothing,
    rate_limits_refuse_with_rate_limited,
    a_crowd_on_one_rate_limit_passes_exactly_its_limit,
    compile_time_is_reserved_then_settled_per_account,
    retiring_a_bot,
    recompute_equals_the_stored_ratings,
    a_match_claimed_ahead_never_waits_behind_a_long_one,
    changing_a_password,
    deleting_an_account,
    retiring_and_unretiring,
    each_ladder_has_its_own_verdict,
];

/// Equal up to floating-point noise of the databases' REAL types.
fn close(x: f64, y: f64) -> bool {
    (x - y).abs() <= 1e-9 * x.abs().max(1.0)
}

fn same_rating(x: Rating, y: Rating) -> bool {
    close(x.rating, y.rating) && close(x.deviation, y.deviation) && close(x.volatility, y.volatility)
}

/// Checks that every match in `ids` is finished exactly once as the
/// worker's doc says, and returns the rows.
async fn assert_finished_once(ladder: &Ladder, ids: &[i64]) -> Vec<MatchRow> {
    let mut rows = Vec::new();
    for &id in ids {
        let row = ladder.match_row(id).await;
        assert_eq!(row.status, "finished", "{row:?}");
        assert_eq!(row.attempts, 1, "one claim played it: {row:?}");
        assert_eq!(row.error, None, "{row:?}");
        let logs = ladder
            .count("SELECT COUNT(*) FROM match_logs WHERE match_id = $1", id)
            .await;
        assert_eq!(logs, 4, "one stderr row per participant and game, written once");
        let key = row.replay_sha256.clone().expect("a finished match has a replay");
        let replay = arbiter_ladder::replays::read(&ladder.core.db, &ladder.core.blobs, &key)
            .await
            .expect("the replay storage answers")
            .expect("the replay is stored");
        let replay: serde_json::Value = serde_json::from_slice(&replay).expect("a JSON replay");
        assert_eq!(replay["match_id"], id, "the replay is this match's");
        assert_eq!(
            replay["result"]["winner"].as_i64(),
            row.winner,
            "winner agrees with the replay"
        );
        let totals = [0usize, 1].map(|i| replay["result"]["totals"][i].as_i64());
        assert_eq!(totals, row.score, "scores agree with the replay");
        rows.push(row);
    }
    rows
}

/// Replays `rated` (in `rated_seq` order) with Glicko-2 from the starting
/// ratings and checks each match's before/after columns; returns the book.
fn replay_rated(ladder: &str, rated: &[MatchRow]) -> RatingBook<(i64, String)> {
    let mut book = RatingBook::new(RatingSystem::Glicko2);
    let mut in_order = rated.to_vec();
    in_order.sort_by_key(|m| m.rated_seq);
    for m in &in_order {
        assert!(m.rated, "{m:?}");
        let keys = m.versions.map(|v| (v, ladder.to_owned()));
        let before = [book.get(&keys[0]), book.get(&keys[1])];
        let (a, b) = book.apply(&keys[0], &keys[1], Outcome::from_winner(m.winner));
        for (side, (was, now)) in before.iter().zip([a, b]).enumerate() {
            let stored_before = m.before[side].expect("a rated match has its ratings before");
            let stored_after = m.after[side].expect("and after");
            let stored_rd = m.rd_after[side].expect("and the deviation after");
            assert!(
                close(stored_before, was.rating),
                "match {} side {side}: before {stored_before} vs {}",
                m.id,
                was.rating
            );
            assert!(
                close(stored_after, now.rating),
                "match {} side {side}: after {stored_after} vs {}",
                m.id,
                now.rating
            );
            assert!(close(stored_rd, now.deviation), "match {} side {side}: deviation", m.id);
        }
    }
    book
}

/// Checks that `ratings::recompute` finds the stored ratings equal to the
/// match log's.
async fn assert_consistent(ladder: &Ladder) {
    let differences = recompute(&ladder.core.db, RatingSystem::Glicko2)
        .await
        .expect("recompute");
    assert!(
        differences.is_empty(),
        "stored ratings differ from the log's: {differences:?}"
    );
}

/// Wins, draws and losses of `version` over `rated`.
fn record_of(version: i64, rated: &[MatchRow]) -> [i64; 3] {
    let mut wdl = [0; 3];
    for m in rated.iter().filter(|m| m.versions.contains(&version)) {
        let me = if m.versions[0] == version { 0 } else { 1 };
        match m.winner {
            None => wdl[1] += 1,
            Some(w) if w == me => wdl[0] += 1,
            Some(_) => wdl[2] += 1,
        }
    }
    wdl
}

fn rate_limited(result: &Result<impl std::fmt::Debug, Error>, what: &str) {
    match result {
        Err(Error::RateLimited { retry_after_s, message }) => {
            assert!(
                (1..=60).contains(retry_after_s),
                "{what}: a retry within the minute's window, not {retry_after_s} s ({message})"
            );
        }
        other => panic!("{what}: expected RateLimited, got {other:?}"),
    }
}

async fn a_ranked_match_is_recorded_and_rated_once(ladder: Ladder) {
    let core = &ladder.core;
    // Accounts: sign up, sign in (case-insensitively), wrong password,
    // taken name.
    let ann = ladder.sign_up("ann").await;
    let again = accounts::sign_in(core, "203.0.113.7", &credentials("ANN", PASSWORD), None)
        .await
        .expect("ann signs in");
    assert_eq!((again.user_id, again.name.as_str()), (ann.user_id, "ann"));
    assert_ne!(again.secret, ann.secret, "a new session");
    let wrong = accounts::sign_in(core, "203.0.113.7", &credentials("ann", "not the password"), None).await;
    assert!(matches!(wrong, Err(Error::Unauthenticated(_))), "{wrong:?}");
    let taken = accounts::sign_up(core, "203.0.113.8", &credentials("Ann", PASSWORD), None).await;
    assert!(matches!(taken, Err(Error::Conflict(_))), "{taken:?}");

    // An upload is stored and waits for its check.
    let wasm = house_wasm("tictactoe-random");
    let uploaded = ladder
        .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await
        .expect("the upload is accepted");
    assert_eq!(uploaded.number, 1);
    assert_eq!(uploaded.ladders, [TTT], "the alias is stored as the ladder's name");
    assert_eq!(uploaded.sha256, sha256_hex(wasm));
    assert_eq!(
        core.blobs
            .get_module(&uploaded.sha256, wasm.len())
            .expect("blobs")
            .as_deref(),
        Some(wasm),
        "the module is in the blob store"
    );
    let mine = uploaded.version_id;
    assert_eq!(ladder.version_status(mine).await, "checking");
    assert!(ladder.rating(mine, TTT).await.is_none(), "no rating before the check");

    // The checker accepts it: active, with the starting rating.
    assert_eq!(ladder.check(mine).await, "active");
    let (start, wdl) = ladder.rating(mine, TTT).await.expect("a rating once active");
    assert!(same_rating(start, Rating::default()), "{start:?}");
    assert_eq!(wdl, [0, 0, 0]);
    // Checking again is harmless (the checker may see a version twice).
    assert_eq!(ladder.check(mine).await, "active");

    // An Othello bot on the tic-tac-toe ladder fails its smoke match.
    let bad = ladder
        .upload(ann.user_id, "ann-bad", "tictactoe", "othello-random")
        .await
        .expect("a valid module is accepted for checking");
    assert_eq!(ladder.check(bad.version_id).await, "rejected");
    let reason: Option<String> = sqlx::query_scalar("SELECT reason FROM versions WHERE id = $1")
        .bind(bad.version_id)
        .fetch_one(&core.db.pool)
        .await
        .expect("the version");
    assert!(
        reason.as_deref().is_some_and(|r| r.starts_with(TTT)),
        "the reason names the ladder: {reason:?}"
    );
    assert!(
        ladder.rating(bad.version_id, TTT).await.is_none(),
        "a rejected version is never rated"
    );

    // Two ranked matches, sides swapped, played by one worker.
    let house = ladder.active("tictactoe-perfect", TTT).await;
    let ids = [
        ladder.enqueue_ranked(TTT, mine, house, 11).await,
        ladder.enqueue_ranked(TTT, house, mine, 12).await,
    ];
    ladder.play(&ids).await;
    let rows = assert_finished_once(&ladder, &ids).await;
    for row in &rows {
        assert_eq!(row.kind, "ranked");
        assert!(row.rated, "a ranked match between two versions is rated: {row:?}");
    }
    let seqs: BTreeSet<i64> = rows.iter().map(|r| r.rated_seq.expect("a rated_seq")).collect();
    assert_eq!(seqs.len(), 2, "each rated match has its own rated_seq");
    if ladder.backend == Backend::Sqlite {
        assert_eq!(
            seqs.into_iter().collect::<Vec<_>>(),
            [1, 2],
            "SQLite numbers them without gaps"
        );
    }

    // The ratings moved exactly once per match.
    let book = replay_rated(TTT, &rows);
    for version in [mine, house] {
        let (stored, wdl) = ladder.rating(version, TTT).await.expect("a rating");
        let expected = book.get(&(version, TTT.to_owned()));
        assert!(
            same_rating(stored, expected),
            "version {version}: stored {stored:?}, one update per match gives {expected:?}"
        );
        assert!(
            stored.deviation < Rating::default().deviation,
            "two matches made it surer"
        );
        assert_eq!(
            wdl,
            record_of(version, &rows),
            "version {version}'s wins, draws and losses"
        );
        assert_eq!(wdl.iter().sum::<i64>(), 2);
    }
    assert_consistent(&ladder).await;

    // Seeding the house again (every start does) adds nothing.
    let before = ladder.count("SELECT COUNT(*) FROM versions", 0).await;
    arbiter_ladder::house::seed(core).await.expect("seeded again");
    assert_eq!(ladder.count("SELECT COUNT(*) FROM versions", 0).await, before);
    assert_eq!(ladder.active("tictactoe-perfect", TTT).await, house);
}

async fn challenges_are_refused_or_never_rated(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;
    let ann_v = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let bob_v = ladder
        .upload_active(bob.user_id, "bob-ttt", "tictactoe", "tictactoe-perfect")
        .await;
    let ask = |bot: &str, opponent: &str, ladder: &str, time: Option<&str>| ChallengeRequest {
        bot: bot.into(),
        opponent: opponent.into(),
        ladder: ladder.into(),
        time: time.map(Into::into),
    };

    // Refusals queue nothing.
    let refusals = [
        (ask("bob-ttt", "ann-ttt", "tictactoe", None), "Forbidden"),
        (ask("nobody", "bob-ttt", "tictactoe", None), "NotFound"),
        (ask("ann-ttt", "nobody", "tictactoe", None), "NotFound"),
        (ask("ann-ttt", "ANN-TTT", "tictactoe", None), "Invalid"),
        (ask("ann-ttt", "bob-ttt", "chess", None), "Invalid"),
        (ask("ann-ttt", "bob-ttt", "tictactoe", Some("7/7")), "Invalid"),
        (ask("ann-ttt", "othello-random", "tictactoe", None), "Conflict"),
    ];
    for (request, kind) in &refusals {
        let refused = challenges::create(core, ann.user_id, request).await;
        let got = match &refused {
            Err(Error::Forbidden(_)) => "Forbidden",
            Err(Error::NotFound(_)) => "NotFound",
            Err(Error::Invalid(_)) => "Invalid",
            Err(Error::Conflict(_)) => "Conflict",
            _ => "something else",
        };
        assert_eq!(got, *kind, "{request:?}: {refused:?}");
    }
    assert_eq!(ladder.count("SELECT COUNT(*) FROM matches", 0).await, 0);

    // A ranked match first, then ann's challenge of bob's bot: the
    // challenge jumps the queue, and only the ranked match is rated.
    let ranked = ladder.enqueue_ranked(TTT, ann_v, bob_v, 21).await;
    let challenge = challenges::create(
        core,
        ann.user_id,
        &ask("ann-ttt", "bob-ttt", "tictactoe", Some("ladder")),
    )
    .await
    .expect("a challenge between different owners is queued");
    let queued = ladder.match_row(challenge).await;
    assert_eq!(
        (
            queued.status.as_str(),
            queued.kind.as_str(),
            queued.priority,
            queued.versions
        ),
        ("queued", "challenge", challenges::CHALLENGE_PRIORITY, [ann_v, bob_v])
    );
    ladder.play(&[ranked, challenge]).await;
    let rows = assert_finished_once(&ladder, &[ranked, challenge]).await;
    let (ranked_row, challenge_row) = (&rows[0], &rows[1]);
    assert!(
        challenge_row.started_ms <= ranked_row.started_ms,
        "the higher priority is claimed first: {challenge_row:?} {ranked_row:?}"
    );
    assert!(ranked_row.rated);
    assert!(!challenge_row.rated, "a challenge is never rated: {challenge_row:?}");
    assert_eq!(challenge_row.rated_seq, None);
    assert_eq!((challenge_row.before, challenge_row.after), ([None; 2], [None; 2]));

    let book = replay_rated(TTT, std::slice::from_ref(ranked_row));
    for version in [ann_v, bob_v] {
        let (stored, wdl) = ladder.rating(version, TTT).await.expect("a rating");
        assert!(
            same_rating(stored, book.get(&(version, TTT.to_owned()))),
            "only the ranked match moved {version}"
        );
        assert_eq!(wdl, record_of(version, std::slice::from_ref(ranked_row)));
        assert_eq!(wdl.iter().sum::<i64>(), 1, "the challenge is not in the record");
    }
    assert_consistent(&ladder).await;
}

async fn a_host_failure_is_never_a_loss(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let good = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let bot_id: i64 = sqlx::query_scalar("SELECT bot_id FROM versions WHERE id = $1")
        .bind(good)
        .fetch_one(&core.db.pool)
        .await
        .expect("the bot");
    // A version whose module the blob store does not have (as after a lost
    // blob): playing it is a failure of the host.
    let mut tx = core.db.begin_write().await.expect("a transaction");
    let lost = versions::insert_version(&mut tx, bot_id, &"0".repeat(64), 8, &[TTT.to_owned()], "checking")
        .await
        .expect("a version")
        .id;
    versions::activate(&mut tx, lost).await.expect("activated");
    tx.commit().await.expect("committed");
    assert_eq!(
        ladder.version_status(good).await,
        "retired",
        "activation retires the previous version"
    );

    let house = ladder.active("tictactoe-perfect", TTT).await;
    let id = ladder.enqueue_ranked(TTT, lost, house, 31).await;
    let config = WorkerConfig {
        max_attempts: 2,
        retry_delay: Duration::from_millis(10),
        ..WorkerConfig::new("core-test-failing".into())
    };
    ladder.play_with(config, &[id]).await;
    let row = ladder.match_row(id).await;
    assert_eq!(row.status, "failed", "{row:?}");
    assert_eq!(row.attempts, 2, "retried up to max_attempts: {row:?}");
    assert!(
        row.error
            .as_deref()
            .is_some_and(|e| e.contains("missing from the blob store")),
        "{row:?}"
    );
    assert!(!row.rated && row.rated_seq.is_none() && row.winner.is_none(), "{row:?}");
    assert_eq!(row.replay_sha256, None);
    for version in [lost, house] {
        let (stored, wdl) = ladder.rating(version, TTT).await.expect("a rating");
        assert!(same_rating(stored, Rating::default()), "no rating moved: {stored:?}");
        assert_eq!(wdl, [0, 0, 0], "not a loss, not anything");
    }
    assert_consistent(&ladder).await;
}

/// Counts of tournaments, entries and tournament matches.
async fn tournament_rows(ladder: &Ladder) -> [i64; 3] {
    [
        ladder.count("SELECT COUNT(*) FROM tournaments", 0).await,
        ladder.count("SELECT COUNT(*) FROM tournament_entries", 0).await,
        ladder
            .count("SELECT COUNT(*) FROM matches WHERE tournament_id IS NOT NULL", 0)
            .await,
    ]
}

async fn a_tournament_is_created_all_or_nothing(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let mine = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let request = |bots: &[&str], matches_per_pair: i64| TournamentRequest {
        name: "Spring cup".into(),
        ladder: "tictactoe".into(),
        bots: bots.iter().map(|b| (*b).to_owned()).collect(),
        matches_per_pair,
    };
    let three = ["ann-ttt", "tictactoe-random", "tictactoe-perfect"];

    // Refusals (before the rate limit) write nothing.
    for (bad, what) in [
        (request(&["ann-ttt", "ANN-TTT"], 1), "one bot twice"),
        (request(&three, 0), "no matches per pair"),
        (request(&["ann-ttt", "nobody"], 1), "an unknown bot"),
    ] {
        let refused = tournaments::create(core, ann.user_id, &bad).await;
        assert!(
            matches!(refused, Err(Error::Invalid(_) | Error::NotFound(_))),
            "{what}: {refused:?}"
        );
    }
    assert_eq!(tournament_rows(&ladder).await, [0, 0, 0]);

    // A failure while the fourth match is inserted: nothing is left.
    let trigger = match ladder.backend {
        Backend::Sqlite => {
            "CREATE TRIGGER fail_fourth BEFORE INSERT ON matches \
             WHEN NEW.tournament_id IS NOT NULL \
               AND (SELECT COUNT(*) FROM matches WHERE tournament_id = NEW.tournament_id) >= 3 \
             BEGIN SELECT RAISE(ABORT, 'injected failure'); END"
        }
        Backend::Postgres => {
            "CREATE FUNCTION fail_fourth() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
               IF NEW.tournament_id IS NOT NULL \
                  AND (SELECT COUNT(*) FROM matches WHERE tournament_id = NEW.tournament_id) >= 3 THEN \
                 RAISE EXCEPTION 'injected failure'; \
               END IF; RETURN NEW; END $$; \
             CREATE TRIGGER fail_fourth BEFORE INSERT ON matches FOR EACH ROW EXECUTE FUNCTION fail_fourth()"
        }
    };
    ladder.execute(trigger).await;
    let failed = tournaments::create(core, ann.user_id, &request(&three, 2)).await;
    assert!(matches!(failed, Err(Error::Internal(_))), "{failed:?}");
    assert_eq!(tournament_rows(&ladder).await, [0, 0, 0], "all or nothing");
    ladder
        .execute(match ladder.backend {
            Backend::Sqlite => "DROP TRIGGER fail_fourth",
            Backend::Postgres => "DROP TRIGGER fail_fourth ON matches",
        })
        .await;

    // Without it: the tournament, three entries, six matches.
    let created = tournaments::create(core, ann.user_id, &request(&three, 2))
        .await
        .expect("the tournament is created");
    assert_eq!(created.matches, 6);
    assert_eq!(tournament_rows(&ladder).await, [1, 3, 6]);
    let ids: Vec<i64> = sqlx::query_scalar("SELECT id FROM matches WHERE tournament_id = $1 ORDER BY id")
        .bind(created.id)
        .fetch_all(&core.db.pool)
        .await
        .expect("its matches");
    let entrants = [
        mine,
        ladder.active("tictactoe-random", TTT).await,
        ladder.active("tictactoe-perfect", TTT).await,
    ];
    let mut pairs = BTreeSet::new();
    for &id in &ids {
        let row = ladder.match_row(id).await;
        assert_eq!(
            (row.status.as_str(), row.kind.as_str(), row.priority, row.tournament_id),
            (
                "queued",
                "tournament",
                tournaments::TOURNAMENT_PRIORITY,
                Some(created.id)
            )
        );
        assert!(pairs.insert(row.versions), "each ordered pair once: {row:?}");
    }
    let expected: BTreeSet<[i64; 2]> = entrants
        .iter()
        .flat_map(|&a| entrants.iter().filter(move |&&b| b != a).map(move |&b| [a, b]))
        .collect();
    assert_eq!(pairs, expected, "every pair twice, sides swapped");

    // The limit (2 a minute) counted the failed attempt too.
    let third = tournaments::create(core, ann.user_id, &request(&three, 1)).await;
    rate_limited(&third, "a third tournament within the minute");
    assert_eq!(tournament_rows(&ladder).await, [1, 3, 6]);

    // Played, never rated.
    ladder.play(&ids).await;
    let rows = assert_finished_once(&ladder, &ids).await;
    assert!(rows.iter().all(|r| !r.rated && r.rated_seq.is_none()), "{rows:?}");
    for version in entrants {
        let (stored, wdl) = ladder.rating(version, TTT).await.expect("a rating");
        assert!(same_rating(stored, Rating::default()), "{version}: {stored:?}");
        assert_eq!(wdl, [0, 0, 0]);
    }
    let table = arbiter_ladder::crosstable::crosstable(&core.db.pool, created.id)
        .await
        .expect("the crosstable");
    assert_eq!((table.matches, table.finished), (6, 6));
    let points: f64 = table.totals.values().map(|(points, _)| points).sum();
    assert!(close(points, 6.0), "one point per match: {table:?}");
}

async fn rate_limits_refuse_with_rate_limited(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;

    // Uploads: per user; refused ones count; a refused upload stores
    // nothing.
    let first = ladder
        .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await
        .expect("the first upload");
    for _ in 1..uploads::UPLOADS_PER_MINUTE {
        let again = ladder
            .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
            .await;
        assert!(
            matches!(again, Err(Error::Conflict(_))),
            "the same module twice: {again:?}"
        );
    }
    let over = ladder
        .upload(ann.user_id, "ann-two", "tictactoe", "tictactoe-perfect")
        .await;
    rate_limited(&over, "an upload past the limit");
    assert_eq!(
        ladder
            .count("SELECT COUNT(*) FROM bots WHERE name_key = 'ann-two'", 0)
            .await,
        0,
        "the refused upload made no bot"
    );
    assert_eq!(
        ladder
            .count("SELECT COUNT(*) FROM versions WHERE bot_id = $1", first.bot_id)
            .await,
        1
    );
    ladder
        .upload(bob.user_id, "bob-ttt", "tictactoe", "tictactoe-perfect")
        .await
        .expect("another user's uploads are not limited by ann's");

    // Challenges.
    assert_eq!(ladder.check(first.version_id).await, "active");
    let request = ChallengeRequest {
        bot: "ann-ttt".into(),
        opponent: "tictactoe-perfect".into(),
        ladder: TTT.into(),
        time: None,
    };
    for _ in 0..challenges::CHALLENGES_PER_MINUTE {
        challenges::create(core, ann.user_id, &request)
            .await
            .expect("a challenge within the limit");
    }
    rate_limited(
        &challenges::create(core, ann.user_id, &request).await,
        "a challenge past the limit",
    );
    assert_eq!(
        ladder.count("SELECT COUNT(*) FROM matches", 0).await,
        challenges::CHALLENGES_PER_MINUTE,
        "the refused challenge queued nothing"
    );

    // Failed sign-ins per (name, address): the guesser is stopped, even
    // with the right password; the owner elsewhere is not.
    let guesser = "192.0.2.66";
    for n in 0..accounts::SIGNINS_PER_NAME_AND_IP_PER_MINUTE {
        let wrong = accounts::sign_in(core, guesser, &credentials("ann", &format!("guess number {n}")), None).await;
        assert!(matches!(wrong, Err(Error::Unauthenticated(_))), "{wrong:?}");
    }
    rate_limited(
        &accounts::sign_in(core, guesser, &credentials("ann", PASSWORD), None).await,
        "a sign-in past the limit",
    );
    let owner = accounts::sign_in(core, "192.0.2.1", &credentials("ann", PASSWORD), None)
        .await
        .expect("the owner signs in from elsewhere");
    assert_eq!(owner.user_id, ann.user_id);
}

/// Twenty simultaneous requests on one bucket: exactly the limit passes,
/// on both backends (counting and adding are one step per bucket).
async fn a_crowd_on_one_rate_limit_passes_exactly_its_limit(ladder: Ladder) {
    let db = ladder.core.db.clone();
    let crowd: Vec<_> = (0..20)
        .map(|_| {
            let db = db.clone();
            tokio::spawn(async move { arbiter_ladder::auth::rate_limit(&db, "crowd:203.0.113.7", 5, 60_000).await })
        })
        .collect();
    let mut passed = 0;
    for request in crowd {
        match request.await.expect("the request ran") {
            Ok(()) => passed += 1,
            Err(Error::RateLimited { .. }) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(passed, 5, "exactly the limit passes");
    assert_eq!(
        ladder
            .count("SELECT COUNT(*) FROM rate_events WHERE bucket = 'crowd:203.0.113.7'", 0)
            .await,
        5
    );
}

/// An upload reserves the most its compile may take against its account's
/// hour; the check settles it to what the compile took; an upload that
/// the hour's allowance cannot hold is refused before anything compiles,
/// and another account is not touched.
async fn compile_time_is_reserved_then_settled_per_account(ladder: Ladder) {
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;
    let first = ladder
        .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await
        .expect("the first upload");
    let spent = |version: i64| {
        let ladder = &ladder;
        async move {
            ladder
                .count("SELECT cpu_ms FROM compile_spend WHERE version_id = $1", version)
                .await
        }
    };
    let limit = ladder.core.sandbox.config().compile_timeout;
    assert_eq!(
        spent(first.version_id).await,
        limit.as_millis() as i64,
        "the worst case, reserved"
    );
    assert_eq!(ladder.check(first.version_id).await, "active");
    let settled = spent(first.version_id).await;
    assert!(
        settled < limit.as_millis() as i64,
        "settled to the compile's own time: {settled}"
    );
    // Most of the hour spent: the next module cannot fit.
    let almost = uploads::COMPILE_MS_PER_HOUR - 5_000;
    ladder
        .execute(&format!(
            "UPDATE compile_spend SET cpu_ms = {almost} WHERE version_id = {}",
            first.version_id
        ))
        .await;
    let over = ladder
        .upload(ann.user_id, "ann-two", "tictactoe", "tictactoe-perfect")
        .await;
    match over {
        Err(Error::RateLimited { message, retry_after_s }) => {
            assert!(message.contains("compile time"), "{message}");
            assert!((1..=3600).contains(&retry_after_s), "within the hour: {retry_after_s}");
        }
        other => panic!("an upload past the hour's compile time: {other:?}"),
    }
    assert_eq!(
        ladder
            .count("SELECT COUNT(*) FROM bots WHERE name_key = 'ann-two'", 0)
            .await,
        0,
        "the refused upload made no bot"
    );
    ladder
        .upload(bob.user_id, "bob-ttt", "tictactoe", "tictactoe-perfect")
        .await
        .expect("another account's allowance is its own");
}

async fn retiring_a_bot(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let bob = ladder.sign_up("bob").await;
    let v1 = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let house = ladder.active("tictactoe-perfect", TTT).await;
    let played = ladder.enqueue_ranked(TTT, v1, house, 41).await;
    ladder.play(&[played]).await;

    // A newer version that passes its check retires the previous one;
    // the old rating and match stay.
    let v2 = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-perfect")
        .await;
    assert_eq!(ladder.version_status(v1).await, "retired");
    assert_eq!(ladder.active("ann-ttt", TTT).await, v2);

    // Refusals change nothing.
    let theirs = uploads::retire(core, bob.user_id, "ann-ttt").await;
    assert!(matches!(theirs, Err(Error::Forbidden(_))), "{theirs:?}");
    let unknown = uploads::retire(core, ann.user_id, "nobody").await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
    assert_eq!(ladder.version_status(v2).await, "active");

    // Retired: the active version only, once; the rating and match stay.
    assert_eq!(uploads::retire(core, ann.user_id, "ANN-TTT").await.expect("retired"), 1);
    assert_eq!(uploads::retire(core, ann.user_id, "ann-ttt").await.expect("again"), 0);
    assert_eq!(ladder.version_status(v2).await, "retired");
    let bot_retired = ladder
        .count("SELECT retired FROM bots WHERE name_key = 'ann-ttt'", 0)
        .await;
    assert_eq!(bot_retired, 1);
    let (_, wdl) = ladder.rating(v1, TTT).await.expect("the old rating stays");
    assert_eq!(wdl.iter().sum::<i64>(), 1);
    assert_eq!(ladder.match_row(played).await.status, "finished");

    // Out of matchmaking and challenges.
    let mut connection = core.db.pool.acquire().await.expect("a connection");
    let candidates: BTreeSet<i64> = scheduler::candidates(&mut connection, TTT)
        .await
        .expect("candidates")
        .iter()
        .map(|c| c.version_id)
        .collect();
    drop(connection);
    let houses: BTreeSet<i64> = [ladder.active("tictactoe-random", TTT).await, house].into();
    assert_eq!(candidates, houses, "only the house bots can be scheduled");
    let config = SchedulerConfig {
        ladders: vec![TTT.to_owned()],
        ..SchedulerConfig::default()
    };
    let queued = scheduler::schedule_once(&core.db, &config).await.expect("a pass");
    assert_eq!(queued, 1, "one pair is left");
    let scheduled: Vec<(i64, i64)> = sqlx::query_as("SELECT a_version, b_version FROM matches WHERE status = 'queued'")
        .fetch_all(&core.db.pool)
        .await
        .expect("the queue");
    assert!(
        scheduled
            .iter()
            .all(|&(a, b)| ![v1, v2].contains(&a) && ![v1, v2].contains(&b)),
        "{scheduled:?}"
    );
    ladder
        .upload_active(bob.user_id, "bob-ttt", "tictactoe", "tictactoe-random")
        .await;
    let challenged = challenges::create(
        core,
        bob.user_id,
        &ChallengeRequest {
            bot: "bob-ttt".into(),
            opponent: "ann-ttt".into(),
            ladder: TTT.into(),
            time: None,
        },
    )
    .await;
    assert!(
        matches!(challenged, Err(Error::Conflict(_))),
        "a retired opponent: {challenged:?}"
    );
    let challenged = challenges::create(
        core,
        ann.user_id,
        &ChallengeRequest {
            bot: "ann-ttt".into(),
            opponent: "tictactoe-perfect".into(),
            ladder: TTT.into(),
            time: None,
        },
    )
    .await;
    assert!(
        matches!(challenged, Err(Error::Conflict(_))),
        "no active version: {challenged:?}"
    );

    // A module the bot had is refused; a new one brings the bot back.
    let old = ladder
        .upload(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    assert!(matches!(old, Err(Error::Conflict(_))), "{old:?}");
    let v3 = ladder
        .upload(ann.user_id, "ann-ttt", "othello", "othello-random")
        .await
        .expect("a new module");
    assert_eq!(v3.number, 3);
    assert_eq!(
        ladder
            .count("SELECT retired FROM bots WHERE name_key = 'ann-ttt'", 0)
            .await,
        0,
        "back"
    );
    assert_eq!(ladder.check(v3.version_id).await, "active");
    assert_eq!(
        ladder.version_status(v2).await,
        "retired",
        "a retired version stays retired"
    );
    assert_eq!(ladder.active("ann-ttt", "othello:std").await, v3.version_id);
}

async fn recompute_equals_the_stored_ratings(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let mine = ladder
        .upload_active(ann.user_id, "ann-ttt", "tictactoe", "tictactoe-random")
        .await;
    let random = ladder.active("tictactoe-random", TTT).await;
    let perfect = ladder.active("tictactoe-perfect", TTT).await;
    let mut ids = Vec::new();
    for (seed, (a, b)) in [(mine, random), (random, perfect), (perfect, mine)]
        .into_iter()
        .enumerate()
    {
        ids.push(ladder.enqueue_ranked(TTT, a, b, 50 + seed as i64).await);
    }
    ladder.play(&ids).await;
    let rows = assert_finished_once(&ladder, &ids).await;
    assert!(rows.iter().all(|r| r.rated));
    replay_rated(TTT, &rows);

    // Not vacuous: the stored ratings moved.
    let stored: BTreeMap<i64, Rating> = {
        let mut stored = BTreeMap::new();
        for version in [mine, random, perfect] {
            let (rating, _) = ladder.rating(version, TTT).await.expect("a rating");
            assert!(!same_rating(rating, Rating::default()), "{version} played");
            stored.insert(version, rating);
        }
        stored
    };
    assert_consistent(&ladder).await;

    // A stored rating that the log does not give is found, and only it.
    sqlx::query("UPDATE ratings SET rating = rating + 1 WHERE version_id = $1 AND ladder = $2")
        .bind(random)
        .bind(TTT)
        .execute(&core.db.pool)
        .await
        .expect("tampered");
    let differences = recompute(&core.db, RatingSystem::Glicko2).await.expect("recompute");
    assert_eq!(differences.len(), 1, "{differences:?}");
    let difference = &differences[0];
    assert_eq!((difference.version_id, difference.ladder.as_str()), (random, TTT));
    assert!(close(difference.stored.rating, stored[&random].rating + 1.0));
    assert!(same_rating(difference.recomputed, stored[&random]));
}

/// A bot that reads its request and then loops until its move's budget
/// runs out: a match with it lasts (in real time) as long as that budget's
/// fuel takes to burn.
const LOOPING_BOT: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 4096))
    (drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))
    (loop $l (br $l))))"#;

/// The worker id, status, attempts and start of match `id`.
async fn claim_of(ladder: &Ladder, id: i64) -> (Option<String>, String, i64, Option<i64>) {
    let row = ladder.match_row(id).await;
    (row.claimed_by, row.status, row.attempts, row.started_ms)
}

/// Polls every 5 ms until `done` holds for match `id`'s claim, for at
/// most [`support::PLAY_LIMIT`]; returns that claim.
async fn wait_for_claim(
    ladder: &Ladder,
    id: i64,
    what: &str,
    done: impl Fn(&(Option<String>, String, i64, Option<i64>)) -> bool,
) -> (Option<String>, String, i64, Option<i64>) {
    let started = std::time::Instant::now();
    loop {
        let claim = claim_of(ladder, id).await;
        if done(&claim) {
            return claim;
        }
        assert!(
            started.elapsed() < support::PLAY_LIMIT,
            "match {id}: {what} never happened (last seen {claim:?})"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn a_match_claimed_ahead_never_waits_behind_a_long_one(ladder: Ladder) {
    let core = &ladder.core;
    let ann = ladder.sign_up("ann").await;
    let looping = uploads::upload(
        core,
        ann.user_id,
        uploads::Upload {
            name: Some("ann-loops".to_owned()),
            ladders: vec![TTT.to_owned()],
            module: Some(wat::parse_str(LOOPING_BOT).expect("valid WAT")),
            url: None,
            agent: false,
        },
    )
    .await
    .expect("a valid module is stored (its check would reject it; matches need none)")
    .version_id;
    let random = ladder.active("tictactoe-random", TTT).await;
    let perfect = ladder.active("tictactoe-perfect", TTT).await;
    // Unrated: the looping version was never checked.
    let ttt = LadderId::from(TTT);
    let challenge = |a: i64, b: i64, seed: i64| {
        let new = queue::NewMatch {
            ladder: &ttt,
            a_version: a,
            b_version: b,
            seed,
            kind: MatchKind::Challenge,
            priority: 0,
            tournament_id: None,
            budget: None,
        };
        async move { queue::enqueue(&core.db, &new).await.expect("queued") }
    };
    let start = |config: WorkerConfig| {
        let (stop, stop_rx) = watch::channel(false);
        (stop, tokio::spawn(worker::run(core.clone(), config, stop_rx)))
    };
    // Always claims ahead, whatever the last match took, and holds a match
    // claimed ahead for 100 ms (the long match lasts 2 × 10⁹ fuel, far
    // longer on any machine).
    let eager = |id: &str| WorkerConfig {
        claim_ahead_below: Duration::from_secs(3600),
        hold_ahead_for: Duration::from_millis(100),
        ..WorkerConfig::new(id.into())
    };

    // 1. A short match (a worker's first match is never played with a
    // claim ahead), the long match, then a short one, one worker: the
    // second short one is claimed ahead, then given back when the hold is
    // over.
    let first_short = challenge(random, perfect, 40).await;
    let long = challenge(looping, random, 41).await;
    let short = challenge(random, perfect, 42).await;
    let (stop_first, first) = start(eager("ahead-1"));
    wait_for_claim(&ladder, long, "the long match started", |(by, status, ..)| {
        by.as_deref() == Some("ahead-1") && status == "running"
    })
    .await;
    let held = wait_for_claim(&ladder, short, "the claim ahead", |(by, ..)| by.is_some()).await;
    assert_eq!(
        (held.0.as_deref(), held.1.as_str(), held.2),
        (Some("ahead-1"), "running", 1),
        "the same worker claimed the next match while the long one plays"
    );
    let given_back = wait_for_claim(&ladder, short, "the give-back", |(by, ..)| by.is_none()).await;
    assert_eq!(
        given_back,
        (None, "queued".to_owned(), 0, None),
        "given back as if never claimed: no attempt, no start"
    );
    assert_eq!(claim_of(&ladder, long).await.1, "running", "the long match still plays");

    // A second worker plays it while the long one goes on.
    let (stop_second, second) = start(WorkerConfig::new("ahead-2".into()));
    let played = wait_for_claim(&ladder, short, "the short match finished", |(_, status, ..)| {
        status == "finished"
    })
    .await;
    assert_eq!(played.0.as_deref(), Some("ahead-2"));
    wait_for_claim(&ladder, long, "the long match finished", |(_, status, ..)| {
        status == "finished"
    })
    .await;
    let _ = stop_first.send(true);
    let _ = stop_second.send(true);
    first.await.expect("the first worker stops");
    second.await.expect("the second worker stops");
    for (id, by) in [(long, "ahead-1"), (short, "ahead-2")] {
        let (claimed_by, ..) = claim_of(&ladder, id).await;
        assert_eq!(claimed_by.as_deref(), Some(by), "match {id}");
    }
    let rows = assert_finished_once(&ladder, &[first_short, long, short]).await;
    assert_eq!(rows[1].winner, Some(1), "the looping bot loses on time: {:?}", rows[1]);

    // 2. A worker stopped while it holds a match claimed ahead (no give-back
    // within the test's time) puts both matches back untouched.
    let first_short = challenge(random, perfect, 45).await;
    let long = challenge(looping, random, 43).await;
    let short = challenge(random, perfect, 44).await;
    let (stop_holder, holder) = start(WorkerConfig {
        hold_ahead_for: Duration::from_secs(3600),
        ..eager("ahead-3")
    });
    wait_for_claim(&ladder, first_short, "the first match finished", |(_, status, ..)| {
        status == "finished"
    })
    .await;
    wait_for_claim(&ladder, short, "the claim ahead", |(by, ..)| {
        by.as_deref() == Some("ahead-3")
    })
    .await;
    let _ = stop_holder.send(true);
    holder.await.expect("the worker stops");
    for id in [long, short] {
        assert_eq!(
            claim_of(&ladder, id).await,
            (None, "queued".to_owned(), 0, None),
            "match {id} is back in the queue as if never claimed"
        );
    }
}
