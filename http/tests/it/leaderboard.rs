//! The leaderboard's orders (by conservative rating, rating − 2·RD, the
//! default, or by rating), in the API and on the site without JavaScript,
//! and what a bot page says about its rating's uncertainty.

use crate::support::{Method, TestServer};

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
    let page = |path: &'static str| {
        let client = client.clone();
        async move {
            let response = client.raw(Method::GET, path).send().await.expect("a page");
            assert_eq!(response.status().as_u16(), 200, "{path}");
            response.text().await.expect("HTML")
        }
    };
    let html = page("/ladders/othello:std").await;
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
    let html = page("/ladders/othello:std?sort=rating").await;
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let weak = html.find("/bots/othello-ab-weak").expect("weak listed");
    assert!(weak < medium, "rating order on request");
    assert!(html.contains(r#"<a href="/ladders/othello:std">by conservative rating</a>"#));

    // A bot page says what its rating's ± means, and what provisional means
    // in matches.
    let html = page("/bots/othello-ab-weak").await;
    assert!(html.contains("95% sure its rating is between 1200 and 2600"), "{html}");
    assert!(html.contains("more matches settle it"), "provisional explained");
    let html = page("/bots/othello-ab-medium").await;
    let start = html.find(r#"<a href="/ladders/othello:std">"#).expect("its std rating");
    let line = &html[start..start + html[start..].find("</div></div>").expect("the line's end")];
    assert!(line.contains("95% sure its rating is between 1590 and 1710"), "{line}");
    assert!(
        !line.contains("more matches settle it"),
        "established: no such note: {line}"
    );
}
