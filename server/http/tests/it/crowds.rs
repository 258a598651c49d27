//! Crowds against the caps of games against people, in process: twenty
//! simultaneous starts from one address, from one IPv6 /64 and from twenty
//! addresses take exactly the places the limits allow (each cap is taken in
//! one atomic step), and while the people games hold their whole share of
//! the sandbox an upload check and a ladder match still run; long-polls of
//! game pages are bounded per client; guest names are checked.

use crate::support::TestServer;
use arbiter_games::Variant;
use arbiter_referee::{Entrant, MatchSettings, WasmBot, play_match};
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Method, Request, StatusCode, header};
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;
use tower::ServiceExt;

/// `POST /bots/{bot}/play` with `form` from `ip`: the status, the
/// `Retry-After` header if any, and the `Location` if any.
async fn start_from(
    server: &TestServer,
    ip: IpAddr,
    bot: &str,
    form: &str,
) -> (StatusCode, Option<String>, Option<String>) {
    let mut request = Request::builder()
        .method(Method::POST)
        .uri(format!("/bots/{bot}/play"))
        .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
        .body(Body::from(form.to_owned()))
        .expect("a request");
    request
        .extensions_mut()
        .insert(ConnectInfo(SocketAddr::new(ip, 40_000)));
    let response = server.router().oneshot(request).await.expect("an answer");
    let header = |name| {
        response
            .headers()
            .get(name)
            .and_then(|v: &header::HeaderValue| v.to_str().ok())
            .map(str::to_owned)
    };
    (response.status(), header(header::RETRY_AFTER), header(header::LOCATION))
}

/// Sends `count` starts at once, the `n`th from `ip(n)`; returns how many
/// games started, having checked every refusal is a 429 with `Retry-After`.
async fn crowd(server: &TestServer, count: usize, ip: impl Fn(usize) -> IpAddr) -> usize {
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(count));
    let starts: Vec<_> = (0..count)
        .map(|n| {
            let (router, barrier, ip) = (server.router(), barrier.clone(), ip(n));
            tokio::spawn(async move {
                barrier.wait().await;
                let mut request = Request::builder()
                    .method(Method::POST)
                    .uri("/bots/tictactoe-random/play")
                    .header(header::CONTENT_TYPE, "application/x-www-form-urlencoded")
                    .body(Body::from("game=tictactoe&side=first&clock=1m"))
                    .expect("a request");
                request
                    .extensions_mut()
                    .insert(ConnectInfo(SocketAddr::new(ip, 40_000)));
                let response = router.oneshot(request).await.expect("an answer");
                (response.status(), response.headers().contains_key(header::RETRY_AFTER))
            })
        })
        .collect();
    let mut started = 0;
    for start in starts {
        let (status, retry_after) = start.await.expect("the request ran");
        match status {
            StatusCode::SEE_OTHER => started += 1,
            StatusCode::TOO_MANY_REQUESTS => assert!(retry_after, "a 429 says when to come back"),
            other => panic!("a start answered {other}"),
        }
    }
    started
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn crowds_take_exactly_the_places_and_the_ladder_keeps_its_instances() {
    let server = TestServer::start().await;
    let core = server.core().clone();
    // Once to compile the module, then timed as the busy one will be.
    timed_check(&core).await;
    let idle = timed_check(&core).await;

    // One address: its two places, whatever the crowd.
    let one: IpAddr = "203.0.113.5".parse().expect("an address");
    assert_eq!(crowd(&server, 20, |_| one).await, 2, "one address");
    // One /64 is one client: twenty addresses in it get two places too.
    let in_64 = |n: usize| -> IpAddr { format!("2001:db8:1:2::{:x}", n + 1).parse().expect("an address") };
    assert_eq!(crowd(&server, 20, in_64).await, 2, "one /64");
    // Another /64 is another client.
    let other: IpAddr = "2001:db8:1:3::1".parse().expect("an address");
    assert_eq!(
        start_from(&server, other, "tictactoe-random", "game=tictactoe&clock=1m")
            .await
            .0,
        StatusCode::SEE_OTHER
    );

    // Many addresses: exactly the rest of the people games' budget.
    let (playing, budget) = core.people.playing();
    assert_eq!(playing, 5);
    assert_eq!(budget as u32, core.budgets.people);
    let many = |n: usize| -> IpAddr { format!("198.51.100.{}", n + 1).parse().expect("an address") };
    assert_eq!(crowd(&server, 40, many).await, budget - playing, "many addresses");
    assert_eq!(core.people.playing(), (budget, budget));
    let metrics = server.client().page("/metrics").await;
    assert!(
        metrics.contains(&format!(
            "arbiter_sandbox_instances_held{{purpose=\"people\"}} {budget}"
        )),
        "{metrics}"
    );
    assert!(
        metrics.contains("arbiter_sandbox_instance_budget{purpose=\"checks\"} 2"),
        "{metrics}"
    );

    // With every people place held, an upload check and a ladder match
    // still find their instances, and the check takes no longer than on
    // the idle server.
    let busy = timed_check(&core).await;
    eprintln!("an upload check: {idle:?} on the idle server, {busy:?} with every people place held");
    let sha = tictactoe_perfect(&core).await;
    let playing_core = core.clone();
    let played = tokio::task::spawn_blocking(move || {
        let module = playing_core.load_module(&sha).expect("the module loads");
        let a = WasmBot::new(playing_core.sandbox.clone(), module.clone(), "a");
        let b = WasmBot::new(playing_core.sandbox.clone(), module, "b");
        let entrants: [&dyn Entrant; 2] = [&a, &b];
        play_match(&MatchSettings::new(Variant::TicTacToe, 7), entrants)
    })
    .await
    .expect("the match ran")
    .expect("no host failure: the match found its instances");
    assert!(
        played.replay.games.iter().all(|g| g.reason.as_str() != "crash"),
        "{:?}",
        played.replay.result
    );

    // Places come back when games end.
    core.people.stop_all();
    let left = core.people.written(Duration::from_secs(10)).await;
    assert_eq!(left, 0, "every game was released");
    assert_eq!(core.people.playing().0, 0);
    let held: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM people_games WHERE hall IS NOT NULL")
        .fetch_one(&core.db.pool)
        .await
        .expect("a count");
    assert_eq!(held, 0, "released for the next process to resume");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn long_polls_of_a_game_page_are_bounded_per_client() {
    let server = TestServer::start().await;
    let ip: IpAddr = "203.0.113.9".parse().expect("an address");
    let (status, _, location) = start_from(&server, ip, "tictactoe-random", "game=tictactoe&side=first&clock=5m").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let page = location.expect("the game's page");
    // The person's turn: nothing changes until they move.
    let state_of = |after: Option<u64>| {
        let mut request = Request::get(match after {
            Some(seq) => format!("{page}/state?after={seq}"),
            None => format!("{page}/state"),
        })
        .body(Body::empty())
        .expect("a request");
        request
            .extensions_mut()
            .insert(ConnectInfo(SocketAddr::new(ip, 40_001)));
        server.router().oneshot(request)
    };
    // The counter as the person's turn stands open (its squares offered):
    // it stays there until they move.
    let open_turn_seq = || async {
        let mut tries = 0;
        loop {
            let answer = state_of(None).await.expect("an answer");
            let body = axum::body::to_bytes(answer.into_body(), 1 << 20).await.expect("a body");
            let state: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
            let open = state["to_move"] == "person" && state["legal"].as_array().is_some_and(|l| !l.is_empty());
            if open {
                return state["seq"].as_u64().expect("a seq");
            }
            tries += 1;
            assert!(tries < 500, "the person's turn never came: {state}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let waits = arbiter_ladder::people::WAITS_PER_CLIENT;
    // A state read may give the counter from just before the turn opened
    // (it is read before the board, by design): then the waits on it end
    // at once, and the holders are sent again on the counter read anew.
    let mut attempt = 0;
    let (seq, holding) = loop {
        let seq = open_turn_seq().await;
        let holding: Vec<_> = (0..waits).map(|_| tokio::spawn(state_of(Some(seq)))).collect();
        tokio::time::sleep(Duration::from_millis(300)).await;
        if holding.iter().all(|wait| !wait.is_finished()) {
            break (seq, holding);
        }
        for wait in holding {
            wait.abort();
        }
        attempt += 1;
        assert!(attempt < 10, "the waits never held");
    };

    // Once the client's places are all held, one more wait is refused at
    // once instead of being held too. (Until the holders have taken theirs,
    // a try may take a place itself and wait: it is given up after a
    // moment, which gives its place back.)
    let refused = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(answer) = tokio::time::timeout(Duration::from_millis(300), state_of(Some(seq))).await {
                let answer = answer.expect("an answer");
                if answer.status() == StatusCode::TOO_MANY_REQUESTS {
                    return answer;
                }
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    });
    let refused = refused.await.expect("a wait past the bound is refused at once");
    assert!(refused.headers().contains_key(header::RETRY_AFTER));
    for wait in holding {
        wait.abort();
    }
    server.core().people.stop_all();
}

#[tokio::test]
async fn guest_names_are_checked_on_the_name_alone() {
    let server = TestServer::start().await;
    let ip = |n: u8| -> IpAddr { IpAddr::from([192, 0, 2, n]) };
    let start = |n: u8, name: &str| {
        let form = format!("game=tictactoe&clock=1m&name={}", urlencode(name));
        let server = &server;
        async move { start_from(server, ip(n), "tictactoe-random", &form).await.0 }
    };
    assert_eq!(
        start(1, &"x".repeat(32)).await,
        StatusCode::SEE_OTHER,
        "32 characters and \" (guest)\""
    );
    assert_eq!(start(2, &"x".repeat(33)).await, StatusCode::BAD_REQUEST);
    assert_eq!(start(3, "evil\u{202E}gnp.exe").await, StatusCode::BAD_REQUEST);
    assert_eq!(start(4, "\u{200B}\u{200B}").await, StatusCode::BAD_REQUEST);
    let name: String = sqlx::query_scalar("SELECT person FROM people_games ORDER BY id LIMIT 1")
        .fetch_one(&server.core().db.pool)
        .await
        .expect("the game's row");
    assert_eq!(name, format!("{} (guest)", "x".repeat(32)));
    server.core().people.stop_all();
}

/// `text` as a form value.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// The module of the house bot `tictactoe-perfect`, by its blob key.
async fn tictactoe_perfect(core: &arbiter_ladder::core::Core) -> String {
    sqlx::query_scalar(
        "SELECT v.sha256 FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = 'tictactoe-perfect'",
    )
    .fetch_one(&core.db.pool)
    .await
    .expect("the house bot's module")
}

/// Runs the upload checks on `tictactoe-perfect` as the checker would;
/// panics unless it is accepted; returns how long they took.
async fn timed_check(core: &arbiter_ladder::core::Core) -> Duration {
    let sha = tictactoe_perfect(core).await;
    let wasm = core
        .blobs
        .get_module(&sha, core.max_module_bytes())
        .expect("the blob store answers")
        .expect("the module is stored");
    let ladder = arbiter_ladder::ladders::time_control(&core.db, Variant::TicTacToe)
        .await
        .expect("a time control");
    let checking = core.clone();
    let started = std::time::Instant::now();
    let checked = tokio::task::spawn_blocking(move || {
        arbiter_ladder::check::check(
            &checking.sandbox,
            &wasm,
            "crowd-check",
            Variant::TicTacToe,
            ladder.budget(),
        )
    })
    .await
    .expect("the check ran")
    .expect("no host failure");
    let took = started.elapsed();
    assert!(
        matches!(checked.verdict, arbiter_ladder::check::Verdict::Accepted { .. }),
        "{}",
        checked.report()
    );
    took
}
