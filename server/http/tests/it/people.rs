//! People playing bots from the site, with forms only (no JavaScript): a
//! whole game of tic-tac-toe and of Othello against house bots, a double
//! submit refused, the replay re-running the bot's side byte for byte from
//! the person's recorded moves, the per-address limits (429 with
//! `Retry-After`), a restart mid-game (resumed where it was; aborted, with a notice, if its bot plays otherwise), and no
//! rating ever touched.

use crate::support::TestServer;
use arbiter_ladder::people::{People, PeopleRules};
use arbiter_referee::verify::{HUMAN_KIND, recorded, verify};
use arbiter_referee::{Entrant, Replay, WasmBot};
use axum::body::Body;
use axum::http::{Method, Request, StatusCode, header};
use serde_json::Value;
use std::time::{Duration, Instant};
use tower::ServiceExt;

/// An answer: status, headers, body.
struct Answer {
    status: StatusCode,
    headers: axum::http::HeaderMap,
    body: String,
}

async fn send(server: &TestServer, method: Method, path: &str, cookie: Option<&str>, form: Option<&str>) -> Answer {
    let mut request = Request::builder().method(method).uri(path);
    if let Some(cookie) = cookie {
        request = request.header(header::COOKIE, cookie);
    }
    let body = match form {
        Some(form) => {
            request = request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
            Body::from(form.to_owned())
        }
        None => Body::empty(),
    };
    let response = server
        .router()
        .oneshot(request.body(body).expect("a request"))
        .await
        .expect("an answer");
    let status = response.status();
    let headers = response.headers().clone();
    let bytes = axum::body::to_bytes(response.into_body(), 64 << 20)
        .await
        .expect("a body");
    Answer {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

/// Starts a game from the site's form; returns its id and the cookie
/// that makes its holder the person.
async fn start(server: &TestServer, bot: &str, form: &str) -> (i64, String) {
    let answer = send(server, Method::POST, &format!("/bots/{bot}/play"), None, Some(form)).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let location = answer.headers[header::LOCATION].to_str().expect("a location");
    let id: i64 = location
        .strip_prefix("/play/")
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("sent to {location}"));
    let cookie = answer.headers[header::SET_COOKIE].to_str().expect("a cookie");
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(cookie.contains(&format!("Path=/play/{id}")), "{cookie}");
    let pair = cookie.split(';').next().expect("name=value").to_owned();
    (id, pair)
}

/// The game's state as the page's script reads it, once it is the
/// person's turn or over (at most 30 s).
async fn settled(server: &TestServer, id: i64, cookie: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let answer = send(server, Method::GET, &format!("/play/{id}/state"), Some(cookie), None).await;
        assert_eq!(answer.status, StatusCode::OK, "{}", answer.body);
        let state: Value = serde_json::from_str(&answer.body).expect("JSON");
        let my_turn = state["to_move"] == "person" && state["legal"].as_array().is_some_and(|l| !l.is_empty());
        if state["status"] != "running" || my_turn {
            return state;
        }
        assert!(Instant::now() < until, "the bot never answered: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Posts the board's form `form` (revision and square) to game `id`.
async fn post_move(server: &TestServer, id: i64, cookie: &str, form: &str) -> Answer {
    send(server, Method::POST, &format!("/play/{id}"), Some(cookie), Some(form)).await
}

/// The game's state once it is over (at most 30 s).
async fn over(server: &TestServer, id: i64, cookie: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let state = settled(server, id, cookie).await;
        if state["status"] != "running" {
            return state;
        }
        assert!(Instant::now() < until, "the game never ended: {state}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The legal squares the page offers as buttons.
fn buttons(page: &str) -> Vec<String> {
    page.split("name=\"square\" value=\"")
        .skip(1)
        .filter_map(|rest| rest.split('"').next())
        .map(str::to_owned)
        .collect()
}

/// Plays game `id` to its end through the page's form, choosing with
/// `choose` among the legal squares the page shows; returns the final state.
async fn play_out(server: &TestServer, id: i64, cookie: &str, choose: impl Fn(&[String]) -> String) -> Value {
    for _ in 0..80 {
        let state = settled(server, id, cookie).await;
        if state["status"] != "running" {
            return state;
        }
        let page = send(server, Method::GET, &format!("/play/{id}"), Some(cookie), None).await;
        assert_eq!(page.status, StatusCode::OK);
        let legal = buttons(&page.body);
        assert!(!legal.is_empty(), "the person's turn shows legal squares: {state}");
        let mut shown = legal.clone();
        let mut offered: Vec<String> = state["legal"]
            .as_array()
            .expect("legal")
            .iter()
            .map(|v| v.as_str().unwrap_or_default().to_owned())
            .collect();
        shown.sort();
        offered.sort();
        assert_eq!(shown, offered, "the page's buttons are the legal squares");
        let square = choose(&legal);
        let form = format!("revision={}&square={square}", state["revision"]);
        let answer = send(server, Method::POST, &format!("/play/{id}"), Some(cookie), Some(&form)).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    }
    panic!("the game did not end in 80 moves");
}

/// Ends the server's live games when a test ends, passed or not (a game
/// waiting for its person would keep the runtime from shutting down).
struct EndGames(People);

impl Drop for EndGames {
    fn drop(&mut self) {
        self.0.stop_all();
    }
}

/// Re-runs the bot's side of a people replay from the person's recorded
/// moves.
fn rerun(server: &TestServer, replay: &Replay) -> Result<(), arbiter_referee::verify::VerifyError> {
    let core = server.core();
    let person = replay
        .participants
        .iter()
        .position(|p| p.kind == HUMAN_KIND)
        .expect("a person took part");
    let bot = &replay.participants[1 - person];
    let sha = bot.sha256.as_deref().expect("the bot's module");
    let module = core.load_module(sha).expect("the bot's module loads");
    let bot = WasmBot::new(core.sandbox.clone(), module, bot.name.clone());
    let scripted = recorded(replay, person);
    let entrants: [&dyn Entrant; 2] = if person == 0 {
        [&scripted, &bot]
    } else {
        [&bot, &scripted]
    };
    verify(replay, entrants)
}

async fn rating_rows(server: &TestServer) -> (i64, f64) {
    let db = server.db().await;
    let (rows, sum): (i64, Option<f64>) =
        sqlx::query_as("SELECT COUNT(*), SUM(rating + deviation + wins + draws + losses) FROM ratings")
            .fetch_one(&db.pool)
            .await
            .expect("ratings");
    (rows, sum.unwrap_or(0.0))
}

/// A guest plays tic-tac-toe against the perfect house bot to the end with
/// forms: never a win; a double submit of one move is refused with 409 and
/// changes nothing; the replay re-runs byte for byte from the guest's
/// moves and a forged move is caught; the bot's page counts the game; no
/// rating changes.
#[tokio::test(flavor = "multi_thread")]
async fn a_guest_plays_tictactoe_against_the_perfect_bot_with_forms() {
    let server = TestServer::start().await;
    let _end = EndGames(server.core().people.clone());
    let ratings = rating_rows(&server).await;
    let form_page = send(&server, Method::GET, "/bots/tictactoe-perfect/play", None, None).await;
    assert_eq!(form_page.status, StatusCode::OK);
    assert!(form_page.body.contains("name=\"name\""), "a guest is asked for a name");

    let (id, cookie) = start(
        &server,
        "tictactoe-perfect",
        "game=tictactoe&side=first&clock=untimed&name=Ann",
    )
    .await;
    let first = settled(&server, id, &cookie).await;
    assert_eq!(first["person"], "Ann (guest)");
    assert_eq!(first["person_colour"], "X");
    // The same move sent twice (a double click): the second is refused.
    let form = format!("revision={}&square=1-1", first["revision"]);
    let once = post_move(&server, id, &cookie, &form).await;
    assert_eq!(once.status, StatusCode::SEE_OTHER);
    let twice = post_move(&server, id, &cookie, &form).await;
    assert_eq!(twice.status, StatusCode::CONFLICT, "{}", twice.body);
    assert!(twice.body.contains("earlier position"), "{}", twice.body);
    // Without the cookie nobody moves.
    let stranger = send(
        &server,
        Method::POST,
        &format!("/play/{id}"),
        None,
        Some("revision=2&square=0-0"),
    )
    .await;
    assert_eq!(stranger.status, StatusCode::FORBIDDEN);
    let after = settled(&server, id, &cookie).await;
    assert_eq!(after["moves"][0], "1-1", "{after}");
    assert_eq!(
        after["moves"].as_array().map(Vec::len),
        Some(2),
        "one move each: {after}"
    );
    // The same move sent twice at once (a double click that slipped past
    // the script): one is played; the other, arriving while the first is
    // being saved, is refused as made on an earlier position too.
    let square = after["legal"][0].as_str().expect("a legal square").to_owned();
    let form = format!("revision={}&square={square}", after["revision"]);
    let path = format!("/play/{id}");
    let (one, other) = tokio::join!(
        send(&server, Method::POST, &path, Some(&cookie), Some(&form)),
        send(&server, Method::POST, &path, Some(&cookie), Some(&form)),
    );
    let mut statuses = [one.status, other.status];
    statuses.sort();
    assert_eq!(
        statuses,
        [StatusCode::SEE_OTHER, StatusCode::CONFLICT],
        "{} / {}",
        one.body,
        other.body
    );
    let refused = if one.status == StatusCode::CONFLICT {
        &one
    } else {
        &other
    };
    assert!(refused.body.contains("earlier position"), "{}", refused.body);

    let end = play_out(&server, id, &cookie, |legal| legal[0].clone()).await;
    assert_eq!(end["status"], "finished", "{end}");
    assert_ne!(end["result"], "person", "nobody beats the perfect bot: {end}");
    let page = send(&server, Method::GET, &format!("/play/{id}"), Some(&cookie), None).await;
    assert!(buttons(&page.body).is_empty());
    assert!(page.body.contains("Download the replay"), "{}", page.body);

    let replay = send(&server, Method::GET, &format!("/play/{id}/replay.json"), None, None).await;
    assert_eq!(replay.status, StatusCode::OK);
    let parsed = Replay::from_json(replay.body.as_bytes()).expect("a replay");
    assert_eq!(parsed.games.len(), 1, "one game, no side swap");
    assert_eq!(parsed.participants[0].kind, HUMAN_KIND);
    rerun(&server, &parsed).expect("the bot's side re-runs byte for byte");
    let mut forged = parsed.clone();
    let turn = forged.games[0]
        .turns
        .iter_mut()
        .find(|t| t.side.index() == 0 && t.reply.as_deref().is_some_and(|r| r.contains("play")))
        .expect("a move of the guest");
    turn.reply = Some(r#"{"play":"2-2"}"#.to_owned());
    assert!(rerun(&server, &forged).is_err(), "a forged move of the guest is caught");

    // The bot's stderr is its owner's only.
    let log = send(&server, Method::GET, &format!("/play/{id}/log"), Some(&cookie), None).await;
    assert_eq!(log.status, StatusCode::NOT_FOUND, "{}", log.body);
    let bot_page = send(&server, Method::GET, "/bots/tictactoe-perfect", None, None).await;
    assert!(bot_page.body.contains("Games against people"));
    assert!(
        bot_page.body.contains(&format!("href=\"/play/{id}\"")),
        "the game is listed"
    );
    assert!(bot_page.body.contains("href=\"/bots/tictactoe-perfect/play\""));
    assert_eq!(rating_rows(&server).await, ratings, "no rating moved");
    let db = server.db().await;
    let matches: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches")
        .fetch_one(&db.pool)
        .await
        .expect("matches");
    assert_eq!(matches, 0, "a game against a person is no ladder match");
}

/// A guest plays a whole Othello game against the random house bot, as
/// white, by choosing legal squares until the end; passes are the
/// server's; the replay re-runs byte for byte.
#[tokio::test(flavor = "multi_thread")]
async fn a_guest_plays_othello_to_the_end() {
    let server = TestServer::start().await;
    let _end = EndGames(server.core().people.clone());
    let (id, cookie) = start(&server, "othello-random", "game=othello:std&side=second&clock=5m").await;
    let first = settled(&server, id, &cookie).await;
    assert_eq!(first["person_colour"], "white");
    assert_eq!(
        first["moves"].as_array().map(Vec::len),
        Some(1),
        "black (the bot) moved first: {first}"
    );
    let end = play_out(&server, id, &cookie, |legal| legal[legal.len() / 2].clone()).await;
    assert_eq!(end["status"], "finished", "{end}");
    assert_eq!(end["reason"], "discs", "{end}");
    let replay = send(&server, Method::GET, &format!("/play/{id}/replay.json"), None, None).await;
    let parsed = Replay::from_json(replay.body.as_bytes()).expect("a replay");
    assert!(parsed.settings.standard_opening);
    rerun(&server, &parsed).expect("the bot's side re-runs byte for byte");
}

/// Beyond the per-address limits a new game is refused with 429 and
/// `Retry-After`: games at once, then games per hour.
#[tokio::test(flavor = "multi_thread")]
async fn per_address_limits_answer_429_with_retry_after() {
    let server = TestServer::start_with(|core| {
        core.people = People::new(PeopleRules {
            per_address: 1,
            per_address_hour: 2,
            ..PeopleRules::default()
        });
    })
    .await;
    let _end = EndGames(server.core().people.clone());
    let form = "game=tictactoe&side=first&clock=untimed";
    let (id, cookie) = start(&server, "tictactoe-random", form).await;
    let refused = send(&server, Method::POST, "/bots/tictactoe-random/play", None, Some(form)).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.body);
    assert!(refused.headers.contains_key(header::RETRY_AFTER));
    assert!(refused.body.contains("at once"), "{}", refused.body);
    // Resigning ends the first; a second game is allowed, a third this hour is not.
    let resign = send(
        &server,
        Method::POST,
        &format!("/play/{id}"),
        Some(&cookie),
        Some("resign=1"),
    )
    .await;
    assert_eq!(resign.status, StatusCode::SEE_OTHER, "{}", resign.body);
    let ended = over(&server, id, &cookie).await;
    assert_eq!(ended["reason"], "resigned", "{ended}");
    assert_eq!(ended["result"], "bot", "{ended}");
    let (second, cookie) = start(&server, "tictactoe-random", form).await;
    let resign = send(
        &server,
        Method::POST,
        &format!("/play/{second}"),
        Some(&cookie),
        Some("resign=1"),
    )
    .await;
    assert_eq!(resign.status, StatusCode::SEE_OTHER);
    over(&server, second, &cookie).await;
    let hourly = send(&server, Method::POST, "/bots/tictactoe-random/play", None, Some(form)).await;
    assert_eq!(hourly.status, StatusCode::TOO_MANY_REQUESTS, "{}", hourly.body);
    let retry: u64 = hourly.headers[header::RETRY_AFTER]
        .to_str()
        .ok()
        .and_then(|s| s.parse().ok())
        .expect("seconds");
    assert!(retry > 60, "the hourly limit lasts: {retry}");
}

/// A restart mid-game loses nothing: the stopping process releases the
/// game (its row keeps every move, the person's clock stands still), a
/// new one on the same database resumes it before answering (the referee
/// plays it again from its seed, the bot's moves checked against the
/// saved ones), the person carries on with the same cookie, and the
/// replay re-runs byte for byte as an uninterrupted game with those moves.
#[tokio::test(flavor = "multi_thread")]
async fn a_restart_mid_game_resumes_it_where_it_was() {
    let mut server = TestServer::start().await;
    let _end = EndGames(server.core().people.clone());
    let (id, cookie) = start(&server, "othello-greedy", "game=othello&side=first&clock=5m").await;
    for _ in 0..3 {
        let state = settled(&server, id, &cookie).await;
        let legal = state["legal"].as_array().expect("legal squares");
        let square = legal[legal.len() / 2].as_str().expect("a name").to_owned();
        let form = format!("revision={}&square={square}", state["revision"]);
        let answer = post_move(&server, id, &cookie, &form).await;
        assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    }
    let before = settled(&server, id, &cookie).await;
    assert_eq!(before["status"], "running");
    assert_eq!(before["revision"], 6, "three moves each: {before}");

    // The process stops: the game is released, not aborted.
    server.core().people.stop_all();
    assert_eq!(server.core().people.written(Duration::from_secs(10)).await, 0);
    let (status, hall, moves): (String, Option<String>, Option<String>) =
        sqlx::query_as("SELECT status, hall, moves FROM people_games WHERE id = $1")
            .bind(id)
            .fetch_one(&server.core().db.pool)
            .await
            .expect("the row");
    assert_eq!((status.as_str(), hall), ("running", None));
    let saved: Vec<String> = serde_json::from_str(&moves.expect("saved moves")).expect("a list");
    assert_eq!(serde_json::json!(saved), before["moves"]);
    // Meanwhile the stopping process shows the saved position and refuses
    // a move with 503 and Retry-After (nothing changed).
    let page = send(&server, Method::GET, &format!("/play/{id}"), Some(&cookie), None).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("The server is restarting"), "{}", page.body);
    let legal = before["legal"][0].as_str().expect("a square");
    let form = format!("revision={}&square={legal}", before["revision"]);
    let refused = post_move(&server, id, &cookie, &form).await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.body);
    assert_eq!(refused.headers[header::RETRY_AFTER], "1");
    tokio::time::sleep(Duration::from_millis(1500)).await;

    // A new process on the same database resumes it before answering.
    server.restart_people();
    let _end_fresh = EndGames(server.core().people.clone());
    assert_eq!(server.core().people.take_over(server.core()).await.expect("resumed"), 1);
    let after = settled(&server, id, &cookie).await;
    for field in ["rows", "moves", "revision", "legal", "person_colour", "to_move"] {
        assert_eq!(after[field], before[field], "{field}");
    }
    // The clock stood still while no process held the game.
    let (left_before, left_after) = (
        before["clock_left_ms"].as_i64().expect("a clock"),
        after["clock_left_ms"].as_i64().expect("a clock"),
    );
    assert!(
        (0..1_000).contains(&(left_before - left_after)),
        "{left_before} ms before, {left_after} after"
    );
    let end = play_out(&server, id, &cookie, |legal| legal[legal.len() / 2].clone()).await;
    assert_eq!(end["status"], "finished", "{end}");
    let replay = send(&server, Method::GET, &format!("/play/{id}/replay.json"), None, None).await;
    let parsed = Replay::from_json(replay.body.as_bytes()).expect("a replay");
    rerun(&server, &parsed).expect("the bot's side re-runs byte for byte");
    let held: Option<String> = sqlx::query_scalar("SELECT hall FROM people_games WHERE id = $1")
        .bind(id)
        .fetch_one(&server.core().db.pool)
        .await
        .expect("the row");
    assert_eq!(held, None, "an ended game is held by nobody");
}

/// A process that died (it never released its game) keeps the game while
/// its hold lasts; once the hold runs out the next process resumes it,
/// and the old one can no longer move in it or write it.
#[tokio::test(flavor = "multi_thread")]
async fn a_game_whose_holder_died_is_resumed_once_its_hold_runs_out() {
    let mut server = TestServer::start().await;
    let dead = server.core().people.clone();
    let _end = EndGames(dead.clone());
    let (id, cookie) = start(&server, "tictactoe-random", "game=tictactoe&side=first&clock=untimed").await;
    let state = settled(&server, id, &cookie).await;
    let form = format!("revision={}&square=1-1", state["revision"]);
    let answer = post_move(&server, id, &cookie, &form).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let before = settled(&server, id, &cookie).await;

    // A new process; the old one never released the game.
    server.restart_people();
    let _end_fresh = EndGames(server.core().people.clone());
    let people = &server.core().people;
    assert_eq!(people.take_over(server.core()).await.expect("looked"), 0, "still held");
    sqlx::query("UPDATE people_games SET held_until_ms = 1 WHERE id = $1")
        .bind(id)
        .execute(&server.core().db.pool)
        .await
        .expect("the hold runs out");
    assert_eq!(people.take_over(server.core()).await.expect("resumed"), 1);
    let after = settled(&server, id, &cookie).await;
    for field in ["rows", "moves", "revision", "legal"] {
        assert_eq!(after[field], before[field], "{field}");
    }
    // The old process's move is refused: the game is the new one's.
    let key = cookie.split_once('=').expect("name=value").1.to_owned();
    let holder = arbiter_ladder::people::Holder {
        key: Some(key),
        user_id: None,
    };
    let square = before["legal"][0].as_str().expect("a square");
    let revision = u32::try_from(before["revision"].as_u64().expect("a revision")).expect("small");
    let refused = dead.play_move(server.core(), id, &holder, revision, square).await;
    assert!(
        matches!(refused, Err(arbiter_ladder::people::Refused::Unavailable(_))),
        "{refused:?}"
    );
    let end = play_out(&server, id, &cookie, |legal| legal[0].clone()).await;
    assert_eq!(end["status"], "finished", "{end}");
    let replay = send(&server, Method::GET, &format!("/play/{id}/replay.json"), None, None).await;
    let parsed = Replay::from_json(replay.body.as_bytes()).expect("a replay");
    rerun(&server, &parsed).expect("the bot's side re-runs byte for byte");
}

/// A resumed game whose bot does not play as it did (here: a saved bot
/// move forged in the row) is aborted with that reason, and its page says
/// it could not be resumed.
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_game_whose_bot_plays_otherwise_is_aborted() {
    let mut server = TestServer::start().await;
    let _end = EndGames(server.core().people.clone());
    let (id, cookie) = start(&server, "tictactoe-perfect", "game=tictactoe&side=first&clock=untimed").await;
    let state = settled(&server, id, &cookie).await;
    let form = format!("revision={}&square=1-1", state["revision"]);
    let answer = post_move(&server, id, &cookie, &form).await;
    assert_eq!(answer.status, StatusCode::SEE_OTHER, "{}", answer.body);
    let state = settled(&server, id, &cookie).await;
    let moves: Vec<String> = serde_json::from_value(state["moves"].clone()).expect("moves");
    assert_eq!(moves.len(), 2, "{state}");
    server.core().people.stop_all();
    assert_eq!(server.core().people.written(Duration::from_secs(10)).await, 0);
    // The bot's reply, forged: another free square.
    let forged = ["0-0", "0-2", "2-0", "2-2"]
        .into_iter()
        .find(|square| *square != moves[1])
        .expect("a free corner");
    sqlx::query("UPDATE people_games SET moves = $1 WHERE id = $2")
        .bind(serde_json::json!([moves[0], forged]).to_string())
        .bind(id)
        .execute(&server.core().db.pool)
        .await
        .expect("forged");
    server.restart_people();
    let _end_fresh = EndGames(server.core().people.clone());
    server.core().people.take_over(server.core()).await.expect("resumed");
    let ended = over(&server, id, &cookie).await;
    assert_eq!(ended["status"], "aborted", "{ended}");
    assert_eq!(ended["reason"], "resume_mismatch", "{ended}");
    let notice = ended["notice"].as_str().expect("a notice");
    assert!(notice.contains("could not be resumed"), "{notice}");
    assert!(notice.contains(&format!("played {}", moves[1])), "{notice}");
    let bot_page = send(&server, Method::GET, "/bots/tictactoe-perfect", None, None).await;
    assert!(
        bot_page.body.contains("0 won, 0 drawn, 0 lost"),
        "an aborted game counts nowhere"
    );
}

/// A signed-in person's game belongs to the account: any holder of the
/// account (no key) is its person, anyone else is not; a guest's game is
/// claimed with its key by the account that signs in, and only once; the
/// account's games and the bot's are listed running first; the account is
/// a client of its own for the per-client limit.
#[tokio::test(flavor = "multi_thread")]
async fn games_belong_to_accounts_are_claimed_and_listed() {
    use arbiter_ladder::people::{Clock, Holder, NewGame, Whose, account_client, list};
    let server = TestServer::start_with(|core| {
        core.people = People::new(PeopleRules {
            per_address: 1,
            ..PeopleRules::default()
        });
    })
    .await;
    let core = server.core().clone();
    let _end = EndGames(core.people.clone());
    let mut users = Vec::new();
    for name in ["ann", "bea"] {
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO users (name, name_key, password_hash, is_house, created_ms) VALUES ($1, $1, 'x', 0, 0) \
             RETURNING id",
        )
        .bind(name)
        .fetch_one(&core.db.pool)
        .await
        .expect("a user");
        users.push(id);
    }
    let (ann, bea) = (users[0], users[1]);
    let new = |user_id: Option<i64>, address: String| NewGame {
        bot: "tictactoe-random".to_owned(),
        variant: "tictactoe:standard".parse().expect("a variant"),
        side: Some(arbiter_games::Side::First),
        clock: Clock::Untimed,
        person: "ann".to_owned(),
        user_id,
        address,
        random_opening: false,
    };
    // The guest's address holds its one place; Ann, from the same address,
    // is a client of her own.
    let guest = core
        .people
        .start(&core, new(None, "127.0.0.1".to_owned()))
        .await
        .expect("a guest's game");
    let refused = core.people.start(&core, new(None, "127.0.0.1".to_owned())).await;
    assert!(
        matches!(refused, Err(arbiter_ladder::error::Error::RateLimited { .. })),
        "{refused:?}"
    );
    let owned = core
        .people
        .start(&core, new(Some(ann), account_client(ann)))
        .await
        .expect("Ann's game, from the same address");

    let by_account = Holder {
        key: None,
        user_id: Some(ann),
    };
    let stranger = Holder {
        key: None,
        user_id: Some(bea),
    };
    assert!(
        core.people.is_person(owned.id, &by_account),
        "Ann's account is the person without the key"
    );
    assert!(!core.people.is_person(owned.id, &stranger));
    assert!(!core.people.is_person(owned.id, &Holder::default()));
    // Bea cannot resign Ann's game; Ann can, from any browser (no key).
    assert_eq!(
        core.people.resign(&core, owned.id, &stranger).await,
        Err(arbiter_ladder::people::Refused::NotYourGame)
    );

    // The guest's game: not Bea's until claimed with its key, then hers
    // only (Ann cannot take it with a wrong key, nor claim it after Bea).
    assert!(!core.people.is_person(guest.id, &stranger));
    assert!(
        !core
            .people
            .claim(&core, guest.id, "not-the-key", bea)
            .await
            .expect("a claim")
    );
    assert!(
        core.people
            .claim(&core, guest.id, &guest.key, bea)
            .await
            .expect("a claim")
    );
    assert!(core.people.is_person(guest.id, &stranger));
    assert!(
        !core
            .people
            .claim(&core, guest.id, &guest.key, ann)
            .await
            .expect("a claim")
    );
    assert!(!core.people.is_person(guest.id, &by_account));

    // Lists: running first, then ended, by account and by bot.
    core.people
        .resign(&core, owned.id, &by_account)
        .await
        .expect("Ann resigns");
    let until = Instant::now() + Duration::from_secs(30);
    while core
        .people
        .view(&core, owned.id)
        .await
        .expect("a view")
        .expect("a game")
        .status
        == "running"
    {
        assert!(Instant::now() < until, "the resignation never ended the game");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let second = core
        .people
        .start(&core, new(Some(ann), account_client(ann)))
        .await
        .expect("Ann's second game, her place given back");
    let anns = list(&core.db, Whose::Account(ann), 10).await.expect("Ann's games");
    let ids: Vec<(i64, &str)> = anns.iter().map(|g| (g.id, g.status.as_str())).collect();
    assert_eq!(ids, vec![(second.id, "running"), (owned.id, "finished")], "{anns:?}");
    assert_eq!(anns[1].winner.as_deref(), Some("bot"));
    assert_eq!(anns[1].bot, "tictactoe-random");
    let beas = list(&core.db, Whose::Account(bea), 10).await.expect("Bea's games");
    assert_eq!(
        beas.iter().map(|g| g.id).collect::<Vec<_>>(),
        vec![guest.id],
        "the claimed game is Bea's"
    );
    let bots = list(&core.db, Whose::Bot("TicTacToe-Random"), 10)
        .await
        .expect("the bot's games");
    assert_eq!(bots.len(), 3);
    assert!(
        bots[..2].iter().all(|g| g.status == "running") && bots[2].id == owned.id,
        "{bots:?}"
    );
    // An ended game still belongs to its account.
    assert!(
        core.people
            .belongs(&core, owned.id, &by_account)
            .await
            .expect("belongs")
    );
    assert!(!core.people.belongs(&core, owned.id, &stranger).await.expect("belongs"));
    for (id, holder) in [(second.id, &by_account), (guest.id, &stranger)] {
        core.people.resign(&core, id, holder).await.expect("resigned");
    }
}
