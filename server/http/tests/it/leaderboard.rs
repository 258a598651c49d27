//! The leaderboard's orders (by the fitted rating, the bold headline, by
//! default; by Glicko-2's conservative rating, rating − 2·RD, or rating on
//! request), in the API and on the site without JavaScript; one headline
//! everywhere; and what a bot page says about its ratings.

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

/// Glicko-2's orders on request: by conservative rating (rating − 2·RD),
/// with provisional versions in place and marked (a strong provisional
/// bot stands above the established bots it beats, one that has shown
/// little stands low), or by rating alone. The default is the fitted
/// rating (see `one_rating_everywhere`).
#[tokio::test(flavor = "multi_thread")]
async fn the_leaderboard_sorts_by_glicko_on_request() {
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
    assert_eq!(body["sort"], "fitted", "the default order: {body}");
    let (status, body) = client
        .get("/api/ladders/othello:std/leaderboard?sort=conservative")
        .await;
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
            .is_some_and(|e| e.contains("fitted, conservative or rating")),
        "{body}"
    );

    // The site, as a browser without JavaScript sees it.
    let html = client.page("/ladders/othello:std?sort=conservative").await;
    let strong = html.find("/bots/othello-ab-strong").expect("strong listed");
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let weak = html.find("/bots/othello-ab-weak").expect("weak listed");
    assert!(strong < medium && medium < weak, "conservative order on request");
    assert!(html.contains(r#"<strong aria-current="true">by Glicko-2 conservative rating</strong>"#));
    assert!(html.contains(r#"<a href="/ladders/othello:std">by rating</a>"#));
    assert!(html.contains(r#"<a href="/ladders/othello:std?sort=rating">by Glicko-2 rating</a>"#));
    assert!(
        html.contains("fragment=rows&amp;sort=conservative"),
        "the refresh keeps the order"
    );
    let html = client.page("/ladders/othello:std?sort=rating").await;
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let weak = html.find("/bots/othello-ab-weak").expect("weak listed");
    assert!(weak < medium, "rating order on request");
    let html = client.page("/ladders/othello:std").await;
    assert!(html.contains(r#"<strong aria-current="true">by rating</strong>"#));
    assert!(
        html.contains("fragment=rows&amp;sort=fitted"),
        "the refresh keeps the order"
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
    // Fisher information of 5 games at p = 0.7: 1.05, so the gap is
    // ±1.96/√1.05 nats; each rating, anchored on the mean of the two, is
    // half the gap from it: half that, times the square root of the log's
    // dispersion (Pearson χ² of the four results over 3 degrees of
    // freedom: strong scored 1, 1, 0, 1 at an expected 0.7).
    let chi2 = (3.0 * 0.3f64.powi(2) + 0.7f64.powi(2)) / 0.21;
    let interval = 1.959_964 * 400.0 / std::f64::consts::LN_10 / 1.05f64.sqrt() / 2.0 * (chi2 / 3.0).sqrt();
    assert!(
        (s["fitted_interval"].as_f64().expect("an interval") - interval).abs() < 0.1,
        "{s} vs ±{interval:.1}"
    );
    // The chance, from the covariance, that strong is above the next row
    // (random): Φ(gap / the gap's standard deviation), the gap's interval
    // being twice each rating's here.
    let above = s["above_next"].as_f64().expect("a chance");
    let z = gap / (2.0 * interval / 1.959_964);
    assert!(above > 0.5 && above < 1.0 && (z > 0.0), "{s}");
    assert!(
        r["above_next"].is_null(),
        "the last fitted row has no next fitted row: {r}"
    );
    let unplayed = entry(&body, "othello-greedy");
    assert!(
        unplayed["fitted"].is_null() && unplayed["fitted_interval"].is_null(),
        "{unplayed}"
    );

    let headline = format!("{:.0} <span class=\"muted\">± {interval:.0}</span>", 1500.0 + gap / 2.0);
    let html = client.page("/ladders/othello:std").await;
    assert!(html.contains(&headline), "{headline} in {html}");
    let shown = format!("{:.0}% above next", 100.0 * above);
    assert!(html.contains(&shown), "{shown} in {html}");
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

/// The id of house bot `bot`'s first version.
async fn house_version(db: &arbiter_ladder::db::Db, bot: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(
        "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id WHERE b.name = $1 ORDER BY v.id LIMIT 1",
    )
    .bind(bot)
    .fetch_one(&db.pool)
    .await
    .expect("a house version")
}

/// Records a rated match on `othello:std` as another process would (the
/// fit reads the rated log; Glicko-2 ratings are left as they are).
async fn add_rated(db: &arbiter_ladder::db::Db, seq: i64, a: i64, b: i64, winner: Option<i64>) {
    sqlx::query(
        "INSERT INTO matches (ladder, a_version, b_version, seed, kind, status, created_ms, winner, rated, rated_seq) \
         VALUES ('othello:std', $1, $2, 1, 'ranked', 'finished', 0, $3, 1, $4)",
    )
    .bind(a)
    .bind(b)
    .bind(winner)
    .bind(seq)
    .execute(&db.pool)
    .await
    .expect("a rated match");
}

/// Every `data-fitted="…"` value in `html`, in order.
fn fitted_values(html: &str) -> Vec<f64> {
    html.split(r#"data-fitted=""#)
        .skip(1)
        .map(|rest| {
            let value = &rest[..rest.find('"').expect("the value's end")];
            value.parse().unwrap_or_else(|_| panic!("a number: {value:?}"))
        })
        .collect()
}

/// The first `data-fitted` value after `bot`'s link in `html`.
fn fitted_of(html: &str, bot: &str) -> f64 {
    let at = html
        .find(&format!(r#"href="/bots/{bot}""#))
        .unwrap_or_else(|| panic!("{bot} listed in {html}"));
    fitted_values(&html[at..])[0]
}

/// One headline everywhere (issue 44): on a ladder with rated matches whose
/// Glicko-2 ratings disagree with the whole-log fit, the home page's card,
/// the ladder page, the bot page, the leaderboard API and the bot API give
/// the same fitted rating for a bot; the default order (page and API) is
/// that of the bold number, so bold numbers never run out of order; the
/// bot page explains the ratings once and lists no ladder the bot has not
/// played.
#[tokio::test(flavor = "multi_thread")]
async fn one_rating_everywhere() {
    let server = TestServer::start().await;
    let db = server.db().await;
    let strong = house_version(&db, "othello-ab-strong").await;
    let medium = house_version(&db, "othello-ab-medium").await;
    let random = house_version(&db, "othello-random").await;
    // strong > medium > random in the log...
    let log = [
        (strong, medium, Some(0)),
        (medium, strong, Some(1)),
        (strong, medium, None),
        (medium, random, Some(0)),
        (random, medium, Some(1)),
        (medium, random, None),
        (strong, random, Some(0)),
        (random, strong, Some(1)),
    ];
    for (seq, (a, b, winner)) in (1..).zip(log) {
        add_rated(&db, seq, a, b, winner).await;
    }
    // ... and the other way round in Glicko-2, by rating and by rating − 2·RD.
    set_ratings(
        &server,
        &[
            ("othello-ab-strong", 1400.0, 120.0),
            ("othello-ab-medium", 1500.0, 60.0),
            ("othello-random", 1900.0, 40.0),
        ],
    )
    .await;
    let client = server.client();

    // The API: the default order is by `fitted`, unfitted versions last.
    let (status, board) = client.get("/api/ladders/othello:std/leaderboard").await;
    assert_eq!(status.as_u16(), 200, "{board}");
    assert_eq!(board["sort"], "fitted");
    let entries = board["entries"].as_array().expect("entries");
    let bots: Vec<&str> = entries.iter().map(|e| e["bot"].as_str().expect("a name")).collect();
    assert_eq!(
        bots[..3],
        ["othello-ab-strong", "othello-ab-medium", "othello-random"],
        "{board}"
    );
    assert!(entries[3..].iter().all(|e| e["fitted"].is_null()), "{board}");
    let api = entries[0]["fitted"].as_f64().expect("strong's fit");
    let interval = entries[0]["fitted_interval"].as_f64().expect("an interval");
    assert_eq!(entries[0]["provisional"], true, "marked in place: {board}");
    let headline = format!("{api:.0}");
    let same = |what: &str, value: f64| {
        assert!((value - api).abs() < 1e-9, "{what} shows {value}, the API {api}");
    };

    // The ladder page: bold numbers in non-increasing order, strong first,
    // its headline with its interval, Glicko-2 named as such beside it.
    let html = client.page("/ladders/othello:std").await;
    let table = &html[html.find(r#"id="leaderboard""#).expect("the board")..];
    let bold = fitted_values(table);
    assert_eq!(bold.len(), 3, "three fitted rows: {table}");
    assert!(bold.windows(2).all(|w| w[0] >= w[1]), "bold numbers in order: {bold:?}");
    same("the ladder page", fitted_of(table, "othello-ab-strong"));
    assert!(
        table.contains(&format!(
            "{headline} <span class=\"muted\">± {interval:.0}</span></strong>"
        )),
        "{table}"
    );
    assert!(table.contains(">Glicko-2 1400 ± 240</span>"), "{table}");
    let rows = client.page("/ladders/othello:std?fragment=rows").await;
    assert_eq!(fitted_values(&rows), bold, "the refreshed rows too");

    // The home page's card of othello:std.
    let home = client.page("/").await;
    let card = &home[home.find(r#"<h3><a href="/ladders/othello:std">"#).expect("the card")..];
    let card = &card[..card.find("</ol>").expect("the card's list")];
    let on_card = fitted_values(card);
    assert_eq!(on_card, bold, "the card's top three are the board's: {card}");
    same("the home page", fitted_of(card, "othello-ab-strong"));
    assert!(
        card.contains(&format!(
            ">{headline}</strong> <span class=\"muted\">± {interval:.0}</span>"
        )),
        "{card}"
    );

    // The bot page and the bot API.
    let page = client.page("/bots/othello-ab-strong").await;
    let versions = &page[page.find(r#"id="versions-h""#).expect("versions")..];
    let versions = &versions[..versions.find(r#"id="history-h""#).expect("history")];
    let std_rating = &versions[versions
        .find(r#"<a href="/ladders/othello:std">"#)
        .expect("its std rating")..];
    same("the bot page", fitted_values(std_rating)[0]);
    assert!(
        std_rating.contains(&format!(">{headline} ± {interval:.0}</strong>")),
        "{std_rating}"
    );
    let (status, bot) = client.get("/api/bots/othello-ab-strong").await;
    assert_eq!(status.as_u16(), 200, "{bot}");
    let rating = bot["versions"][0]["ratings"]
        .as_array()
        .expect("ratings")
        .iter()
        .find(|r| r["ladder"] == "othello:std")
        .cloned()
        .expect("its std rating");
    same("the bot API", rating["fitted"].as_f64().expect("fitted"));
    assert_eq!(rating["fitted_interval"].as_f64(), Some(interval), "{rating}");
    assert_eq!(rating["rating"], 1400.0, "Glicko-2 kept for compatibility: {rating}");

    // Explained once; a ladder it has not played is not listed.
    let anti: i64 =
        sqlx::query_scalar("SELECT COUNT(*) FROM ratings WHERE version_id = $1 AND ladder = 'othello:anti'")
            .bind(strong)
            .fetch_one(&db.pool)
            .await
            .expect("a count");
    assert_eq!(anti, 1, "strong has an (unplayed) rating on othello:anti");
    assert_eq!(page.matches(r#"id="rating-explained""#).count(), 1, "explained once");
    assert!(!page.contains("95% sure"), "no per-ladder paragraph");
    assert!(
        !versions.contains("/ladders/othello:anti\""),
        "no row for an unplayed ladder: {versions}"
    );
    assert_eq!(
        versions.matches(r#"class="version-rating""#).count(),
        1,
        "one played ladder, one row: {versions}"
    );
    assert!(
        versions.contains("title=\"provisional: about ") && versions.contains(" more matches settle it\">P</abbr>"),
        "provisional marked, with what settles it: {versions}"
    );
    assert!(versions.contains(">Glicko-2 1400 ± 240</span>"), "{versions}");
}
