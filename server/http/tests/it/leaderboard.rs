//! The leaderboard's orders (by conservative rating, rating − 2·RD, the
//! default, or by rating), in the API and on the site without JavaScript,
//! and what a bot page says about its rating's uncertainty.

use crate::support::TestServer;

/// Gives the house versions of `bots` these ratings on `othello:std`.
async fn set_ratings(server: &TestServer, ratings: &[(&str, f64, f64)]) {
    let db = server.db().await;
    for &(bot, rating, deviation) in ratings {
        let changed = sqlx::query(
            "UPDATE ratings SET rating = $1, deviation = $2 WHERE ladder = 'othello:std' AND version_id IN \
             (SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = $3)",
        )
        .bind(rating)
        .bind(deviation)
        .bind(bot)
        .execute(&db.pool)
        .await
        .expect("update");
        assert_eq!(changed.rows_affected(), 1, "{bot} has a rating on othello:std");
    }
}

/// The default order is the conservative rating (rating − 2·RD), with
/// provisional versions in place and marked: a strong provisional bot
/// stands above the established bots it beats (it used to be sent below
/// all of them), and one that has shown little stands low. `?sort=rating`
/// orders by rating alone.
#[tokio::test(flavor = "multi_thread")]
async fn the_leaderboard_sorts_by_conservative_rating_or_by_rating() {
    let server = TestServer::start().await;
    set_ratings(
        &server,
        &[
            // Strong and still provisional (RD ≥ 110): 1981 − 240 = 1741.
            ("othello-ab-strong", 1981.0, 120.0),
            // Established, weaker: 1590, 1104, 1070.
            ("othello-ab-medium", 1650.0, 30.0),
            ("othello-greedy", 1184.0, 40.0),
            ("othello-random", 1150.0, 40.0),
            // High but hardly shown: 1900 − 700 = 1200.
            ("othello-ab-weak", 1900.0, 350.0),
        ],
    )
    .await;
    let client = server.client();
    let column = |body: &serde_json::Value, key: &str| -> Vec<String> {
        body["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .map(|e| e[key].to_string().trim_matches('"').to_owned())
            .collect()
    };
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard").await;
    assert_eq!(status.as_u16(), 200, "{body}");
    assert_eq!(body["sort"], "conservative");
    assert_eq!(
        column(&body, "bot"),
        [
            "othello-ab-strong",
            "othello-ab-medium",
            "othello-ab-weak",
            "othello-greedy",
            "othello-random"
        ]
        .map(String::from)[..],
        "by rating − 2·RD, the provisional strong bot first: {body}"
    );
    assert_eq!(
        column(&body, "provisional"),
        ["true", "false", "true", "false", "false"].map(String::from)[..],
        "provisional versions are marked in place: {body}"
    );
    assert_eq!(column(&body, "rank")[..2], ["1", "2"].map(String::from)[..]);
    assert_eq!(body["entries"][0]["conservative"], 1741.0);
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard?sort=rating").await;
    assert_eq!(status.as_u16(), 200, "{body}");
    assert_eq!(body["sort"], "rating");
    assert_eq!(
        column(&body, "bot"),
        [
            "othello-ab-strong",
            "othello-ab-weak",
            "othello-ab-medium",
            "othello-greedy",
            "othello-random"
        ]
        .map(String::from)[..],
        "by rating alone: {body}"
    );
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard?sort=luck").await;
    assert_eq!(status.as_u16(), 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("conservative or rating")),
        "{body}"
    );

    // The site, as a browser without JavaScript sees it.
    let html = client.page("/ladders/othello:std").await;
    let strong = html.find("/bots/othello-ab-strong").expect("strong listed");
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let weak = html.find("/bots/othello-ab-weak").expect("weak listed");
    assert!(
        strong < medium && medium < weak,
        "conservative order on the page by default"
    );
    assert!(html.contains(r#"<strong aria-current="true">by conservative rating</strong>"#));
    assert!(html.contains(r#"<a href="/ladders/othello:std?sort=rating">by rating</a>"#));
    assert!(
        html.contains("fragment=rows&amp;sort=conservative"),
        "the refresh keeps the order"
    );
    let html = client.page("/ladders/othello:std?sort=rating").await;
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let weak = html.find("/bots/othello-ab-weak").expect("weak listed");
    assert!(weak < medium, "rating order on request");
    assert!(html.contains(r#"<a href="/ladders/othello:std">by conservative rating</a>"#));

    // A bot page says what its rating's ± means, and what provisional means
    // in matches.
    let html = client.page("/bots/othello-ab-weak").await;
    assert!(html.contains("95% sure its rating is between 1200 and 2600"), "{html}");
    assert!(html.contains("more matches settle it"), "provisional explained");
    let html = client.page("/bots/othello-ab-medium").await;
    let start = html.find(r#"<a href="/ladders/othello:std">"#).expect("its std rating");
    let line = &html[start..start + html[start..].find("</div></div>").expect("the line's end")];
    assert!(line.contains("95% sure its rating is between 1590 and 1710"), "{line}");
    assert!(
        !line.contains("more matches settle it"),
        "established: no such note: {line}"
    );
}

/// The leaderboard's headline is the rating fitted to the ladder's whole
/// rated log (Bradley–Terry, draws as half points, one virtual draw per
/// version spread over its opponents, mean 1500), with its interval, in
/// the API and on the ladder and bot pages; it follows the log when a
/// match is added by another process, within `RECHECK`; versions without
/// a rated match have none.
#[tokio::test(flavor = "multi_thread")]
async fn the_leaderboard_shows_the_whole_log_fit() {
    let server = TestServer::start().await;
    let db = server.db().await;
    let version = |bot: &'static str| {
        let pool = db.pool.clone();
        async move {
            sqlx::query_scalar::<_, i64>(
                "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = $1 ORDER BY v.id LIMIT 1",
            )
            .bind(bot)
            .fetch_one(&pool)
            .await
            .expect("a house version")
        }
    };
    let (strong, random) = (version("othello-ab-strong").await, version("othello-random").await);
    let before: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM matches WHERE rated = 1")
        .fetch_one(&db.pool)
        .await
        .expect("a count");
    assert_eq!(before, 0, "a fresh ladder: the test's matches are the whole log");
    let add = |seq: i64, a: i64, b: i64, winner: Option<i64>| {
        let pool = db.pool.clone();
        async move {
            sqlx::query(
                "INSERT INTO matches (ladder, a_version, b_version, seed, kind, status, created_ms, winner, rated, rated_seq) \
                 VALUES ('othello:std', $1, $2, 1, 'ranked', 'finished', 0, $3, 1, $4)",
            )
            .bind(a)
            .bind(b)
            .bind(winner)
            .bind(seq)
            .execute(&pool)
            .await
            .expect("a rated match");
        }
    };
    // strong 3, random 1 (sides mixed): with one virtual draw (each has only
    // the other as opponent), 3.5 of 5: 400·log10(3.5 / 1.5) ≈ 147.2 apart,
    // around 1500.
    add(1, strong, random, Some(0)).await;
    add(2, random, strong, Some(1)).await;
    add(3, strong, random, Some(1)).await;
    add(4, random, strong, Some(1)).await;
    let gap = 400.0 * (3.5f64 / 1.5).log10();
    let client = server.client();
    let entry = |body: &serde_json::Value, bot: &str| -> serde_json::Value {
        body["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .find(|e| e["bot"] == bot)
            .cloned()
            .unwrap_or_else(|| panic!("{bot} listed: {body}"))
    };
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard").await;
    assert_eq!(status.as_u16(), 200, "{body}");
    let fitted = |e: &serde_json::Value| e["fitted"].as_f64().unwrap_or_else(|| panic!("fitted: {e}"));
    let (s, r) = (entry(&body, "othello-ab-strong"), entry(&body, "othello-random"));
    assert!((fitted(&s) - (1500.0 + gap / 2.0)).abs() < 0.01, "{s}");
    assert!((fitted(&r) - (1500.0 - gap / 2.0)).abs() < 0.01, "{r}");
    // Fisher information of 5 games at p = 0.7: 1.05; ±1.96/√1.05 nats.
    let interval = 1.959_964 * 400.0 / std::f64::consts::LN_10 / 1.05f64.sqrt();
    assert!(
        (s["fitted_interval"].as_f64().expect("an interval") - interval).abs() < 0.1,
        "{s} vs ±{interval:.1}"
    );
    let unplayed = entry(&body, "othello-greedy");
    assert!(
        unplayed["fitted"].is_null() && unplayed["fitted_interval"].is_null(),
        "{unplayed}"
    );

    let headline = format!("{:.0} <span class=\"muted\">± {interval:.0}</span>", 1500.0 + gap / 2.0);
    let html = client.page("/ladders/othello:std").await;
    assert!(html.contains(&headline), "{headline} in {html}");
    let html = client.page("/bots/othello-ab-strong").await;
    assert!(
        html.contains(&format!(">{:.0} ± {interval:.0}</strong>", 1500.0 + gap / 2.0)),
        "{html}"
    );

    // One more result, written as another process would (not by this
    // process's worker): the fit follows within RECHECK (2 wins of 5 for
    // random now, 2.5 of 6).
    add(5, random, strong, Some(0)).await;
    let gap = 400.0 * (3.5f64 / 2.5).log10();
    let deadline = std::time::Instant::now() + 5 * arbiter_ladder::ratings::fitted::RECHECK;
    loop {
        let (_, body) = client.get("/api/ladders/othello:std/leaderboard").await;
        let s = entry(&body, "othello-ab-strong");
        if (fitted(&s) - (1500.0 + gap / 2.0)).abs() < 0.01 {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the fit did not follow the log: {s}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
