//! Finding things (issue 42, item 3): `GET /api/matches` filtered and
//! paged by cursor, with a 400 and a JSON error for every filter that
//! cannot be read; the site's `/matches` with the same filters as a GET
//! form and "Older"/"Newer" links; user pages; a bot page paging through
//! its matches; the owner-only logs page; and the home page's live list as
//! a fragment. Matches are written straight into the database between
//! the house bots, so nothing waits for a worker.

use crate::support::{Method, TestServer};
use serde_json::Value;

/// The version id of house bot `bot`.
async fn version_of(server: &TestServer, bot: &str) -> i64 {
    let db = server.db().await;
    sqlx::query_scalar("SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = $1")
        .bind(bot)
        .fetch_one(&db.pool)
        .await
        .expect("a house version")
}

/// 40 finished `othello:std` matches between othello-greedy (participant
/// 0) and othello-random: the ones divisible by 5 end on a timeout of
/// random's, greedy wins those and the even ones; then one running match. Returns the
/// ids, oldest first (the running one last).
async fn matches(server: &TestServer) -> Vec<i64> {
    let db = server.db().await;
    let (greedy, random) = (
        version_of(server, "othello-greedy").await,
        version_of(server, "othello-random").await,
    );
    let mut ids = Vec::new();
    for n in 1..=41i64 {
        let running = n == 41;
        let winner = if n % 2 == 0 || n % 5 == 0 { 0 } else { 1 };
        let reason = if n % 5 == 0 {
            r#"[{"faulted_participant":1,"faulted_side":1,"game":0,"reason":"timeout"}]"#
        } else {
            r#"[{"faulted_participant":null,"faulted_side":null,"game":0,"reason":"discs"}]"#
        };
        let id: i64 = sqlx::query_scalar(
            "INSERT INTO matches (ladder, a_version, b_version, seed, kind, status, created_ms, attempts, started_ms, \
             finished_ms, winner, score_a, score_b, reasons) \
             VALUES ('othello:std', $1, $2, 1, 'ranked', $3, $4, 1, $4, $5, $6, $7, $8, $9) RETURNING id",
        )
        .bind(greedy)
        .bind(random)
        .bind(if running { "running" } else { "finished" })
        .bind(1_700_000_000_000 + n * 60_000)
        .bind((!running).then_some(1_700_000_000_000 + n * 60_000 + 1_000))
        .bind((!running).then_some(winner))
        .bind((!running).then_some(40 + winner))
        .bind((!running).then_some(24))
        .bind((!running).then_some(reason))
        .fetch_one(&db.pool)
        .await
        .expect("a match");
        ids.push(id);
    }
    ids
}

fn ids(body: &Value) -> Vec<i64> {
    body["matches"]
        .as_array()
        .expect("matches")
        .iter()
        .map(|m| m["id"].as_i64().expect("an id"))
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_match_list_api_filters_and_pages_by_cursor() {
    let server = TestServer::start().await;
    let all = matches(&server).await;
    let client = server.client();
    let newest: Vec<i64> = all.iter().rev().copied().collect();

    // Paged by cursor, 15 at a time: every match once, in order.
    let mut seen = Vec::new();
    let mut path = "/api/matches?bot=othello-greedy&limit=15".to_owned();
    let mut pages = Vec::new();
    loop {
        let (status, body) = client.get(&path).await;
        assert_eq!(status.as_u16(), 200, "{body}");
        seen.extend(ids(&body));
        pages.push(body.clone());
        match body["older"].as_str() {
            Some(cursor) => path = format!("/api/matches?bot=othello-greedy&limit=15&after={cursor}"),
            None => break,
        }
    }
    assert_eq!(seen, newest);
    assert_eq!(pages.len(), 3);
    assert_eq!(pages[0]["newer"], Value::Null, "the newest page has no newer page");
    // Back from the last page: the middle page again.
    let newer = pages[2]["newer"].as_str().expect("a newer cursor");
    let (_, back) = client
        .get(&format!("/api/matches?bot=othello-greedy&limit=15&after={newer}"))
        .await;
    assert_eq!(ids(&back), ids(&pages[1]));

    // Filters: greedy's wins on timeouts (even and divisible by 5: the 10s).
    let (status, body) = client
        .get("/api/matches?bot=othello-greedy&result=win&reason=timeout")
        .await;
    assert_eq!(status.as_u16(), 200, "{body}");
    let fives: Vec<i64> = [40, 35, 30, 25, 20, 15, 10, 5].iter().map(|n| all[n - 1]).collect();
    assert_eq!(ids(&body), fives);
    let (_, body) = client
        .get("/api/matches?bot=othello-greedy&result=loss&reason=fault")
        .await;
    assert!(ids(&body).is_empty(), "{body}");
    let (_, body) = client.get("/api/matches?user=house&result=loss&reason=fault").await;
    // Every timeout is random's, and random is the house's too: its losses.
    assert_eq!(ids(&body).len(), 8, "{body}");
    let (_, body) = client
        .get("/api/matches?bot=othello-random&result=loss&reason=fault")
        .await;
    assert_eq!(ids(&body), fives);
    // Days: all of them fall on 2023-11-14 and -15 (UTC).
    let (_, body) = client.get("/api/matches?from=2023-11-15&to=2023-11-15").await;
    let later = ids(&body);
    let (_, body) = client.get("/api/matches?to=2023-11-14").await;
    let earlier = ids(&body);
    assert_eq!(later.len() + earlier.len(), all.len(), "each match on one day");
    assert!(later.iter().all(|id| earlier.iter().all(|e| e < id)));
    let (_, body) = client.get("/api/matches?ladder=othello:std&status=running").await;
    assert_eq!(ids(&body), [*all.last().expect("the running one")]);
    let (_, body) = client.get("/api/matches?ladder=tictactoe:standard&result=draw").await;
    assert!(ids(&body).is_empty());
    // What no match can meet is an empty list, not an error; a win
    // without a bot or a user is a decided match; `before` filters beside
    // the cursor.
    let (status, body) = client.get("/api/matches?from=2023-11-15&to=2023-11-14").await;
    assert_eq!((status.as_u16(), ids(&body).len()), (200, 0));
    let (_, wins) = client.get("/api/matches?result=win&limit=200").await;
    let (_, decided) = client.get("/api/matches?result=decisive&limit=200").await;
    assert_eq!(ids(&wins), ids(&decided));
    assert_eq!(ids(&wins).len(), 40);
    let (_, body) = client
        .get(&format!(
            "/api/matches?before={}&after=o{}&limit=3",
            all[10],
            to_base36(all[20])
        ))
        .await;
    assert_eq!(ids(&body), [all[9], all[8], all[7]]);

    // Everything that cannot be read is a 400 with a JSON error (the
    // client checks the envelope), an unknown bot or user a 404.
    for bad in [
        "after=x1",
        "after=o",
        "result=won",
        "reason=bored",
        "reason=%25",
        "result=win%25",
        "after=o1%00",
        "after=o1%0A",
        "to=",
        "result=",
        "from=%202023-11-14",
        "from=2023-02-29",
        "from=yesterday",
        "to=2023-11-14T00:00",
        "status=done",
        "ladder=chess:blitz",
        "limit=0",
        "colour=black",
    ] {
        let (status, body) = client.get(&format!("/api/matches?{bad}")).await;
        assert_eq!(status.as_u16(), 400, "{bad}: {body}");
    }
    for unknown in ["bot=nobody-here", "user=nobody-here"] {
        let (status, body) = client.get(&format!("/api/matches?{unknown}")).await;
        assert_eq!(status.as_u16(), 404, "{unknown}: {body}");
    }
}

/// The site's list, bot and user pages: the same filters and cursors as
/// plain links and a GET form (no script needed to follow them).
#[tokio::test(flavor = "multi_thread")]
async fn the_site_lists_pages_and_finds_matches_without_script() {
    let server = TestServer::start().await;
    let all = matches(&server).await;
    let client = server.client();
    let row = |id: i64| format!("href=\"/matches/{id}\"");

    let page = client.page("/matches?bot=othello-greedy&reason=discs").await;
    // 33 matches end on discs: two pages.
    assert!(page.contains(&row(all[38])), "the newest played out is listed");
    assert!(!page.contains(&row(all[39])), "one ended by a timeout is not");
    assert!(page.contains("value=\"othello-greedy\""), "the form keeps its filters");
    let older = page
        .split("rel=\"next\" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("an Older link")
        .replace("&#38;", "&");
    assert!(
        older.starts_with("/matches?bot=othello-greedy&reason=discs&after=o"),
        "{older}"
    );
    let second = client.page(&older).await;
    assert!(second.contains(&row(all[0])), "the oldest is on the second page");
    assert!(second.contains("rel=\"prev\""), "with a Newer link back");

    for (bad, status) in [
        ("/matches?result=won", 400),
        ("/matches?reason=fault&after=bad", 400),
        ("/matches?from=2023-02-30&bot=othello-greedy", 400),
        ("/matches?user=nobody-here", 404),
    ] {
        let response = client.raw(Method::GET, bad).send().await.expect("an answer");
        assert_eq!(response.status().as_u16(), status, "{bad}");
        let html = response.text().await.expect("HTML");
        assert!(
            html.contains("id=\"filters-error\""),
            "{bad}: the reason is on the form"
        );
        assert!(html.contains("id=\"match-filters\""), "{bad}: the form is shown again");
    }
    let kept = client
        .raw(Method::GET, "/matches?from=2023-02-30&bot=othello-greedy")
        .send()
        .await
        .expect("an answer")
        .text()
        .await
        .expect("HTML");
    assert!(kept.contains("value=\"2023-02-30\"") && kept.contains("value=\"othello-greedy\""));

    // The bot page pages through all its matches.
    let bot = client.page("/bots/othello-random").await;
    assert!(bot.contains(&row(all[40])) && !bot.contains(&row(all[0])));
    assert!(bot.contains("href=\"/users/house\""), "the owner links to their page");
    assert!(!bot.contains("bot-logs-link"), "logs are linked for the owner only");
    let older = bot
        .split("rel=\"next\" href=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("an Older link");
    assert!(
        older.starts_with("/bots/othello-random?after=o") && older.ends_with("#matches"),
        "{older}"
    );
    let path = older.trim_end_matches("#matches");
    let bot_older = client.page(path).await;
    assert!(
        bot_older.contains(&row(all[0])),
        "the oldest match is on the second page"
    );
    let bad = client
        .raw(Method::GET, "/bots/othello-random?after=zz")
        .send()
        .await
        .expect("an answer");
    assert_eq!(bad.status().as_u16(), 400);
    let logs = client
        .raw(Method::GET, "/bots/othello-random/logs")
        .send()
        .await
        .expect("an answer");
    assert_eq!(logs.status().as_u16(), 401, "signed out: no logs");

    // The user page: their bots with the ladders' headline and order,
    // their bots' matches.
    let user = client.page("/users/house").await;
    assert!(user.contains("href=\"/bots/othello-greedy\""));
    assert!(user.contains("data-ladder=\"othello:std\""), "a board per rated ladder");
    assert!(user.contains(&row(all[40])));
    // A person's game against a bot: on their page, and their name on the
    // bot's page links there.
    let db = server.db().await;
    sqlx::query("INSERT INTO users (name, name_key, password_hash, created_ms) VALUES ('Ann', 'ann', '', 0)")
        .execute(&db.pool)
        .await
        .expect("a user");
    let game: i64 = sqlx::query_scalar(
        "INSERT INTO people_games (version_id, variant, person, user_id, person_side, seed, status, winner, reason, \
         created_ms) SELECT $1, 'othello:std', 'Ann', id, 0, 1, 'finished', 'person', 'discs', 5 FROM users \
         WHERE name_key = 'ann' RETURNING id",
    )
    .bind(version_of(&server, "othello-greedy").await)
    .fetch_one(&db.pool)
    .await
    .expect("a game");
    let ann = client.page("/users/ann").await;
    assert!(
        ann.contains(&format!("href=\"/play/{game}\"")),
        "Ann's game is on her page"
    );
    assert!(ann.contains(">won (discs)<"), "from her side: {ann}");
    let greedy = client.page("/bots/othello-greedy").await;
    assert!(
        greedy.contains("<a href=\"/users/Ann\">Ann</a>"),
        "the person links to her page"
    );
    // A deleted account has no page to link to.
    sqlx::query("UPDATE users SET name = 'deleted user', name_key = 'deleted:ann' WHERE name_key = 'ann'")
        .execute(&db.pool)
        .await
        .expect("Ann deleted");
    let greedy = client.page("/bots/othello-greedy").await;
    assert!(!greedy.contains("/users/deleted"), "no link to a deleted account");
    let missing = client
        .raw(Method::GET, "/users/nobody-here")
        .send()
        .await
        .expect("an answer");
    assert_eq!(missing.status().as_u16(), 404);
    let ladder = client.page("/ladders/othello:std").await;
    assert!(ladder.contains("href=\"/users/house\""), "owners link to their pages");

    // The home page's live list, and the fragment its script reads.
    let home = client.page("/").await;
    assert!(home.contains("data-live-rows=\"/?fragment=live\""));
    let live = client.page("/?fragment=live").await;
    assert!(live.contains(&row(all[40])) && !live.contains(&row(all[39])), "{live}");
    assert!(!live.contains("<html"), "a fragment, not a page");
}

/// `n` in base 36, as cursors write ids.
fn to_base36(mut n: i64) -> String {
    let mut digits = Vec::new();
    loop {
        digits.push(std::char::from_digit((n % 36) as u32, 36).expect("a digit"));
        n /= 36;
        if n == 0 {
            break;
        }
    }
    digits.iter().rev().collect()
}
