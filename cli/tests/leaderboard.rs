//! The leaderboard's orders (by rating, or by conservative rating, rating −
//! 2·RD), in the API and on the site without JavaScript, and what a bot
//! page says about its rating's uncertainty.

mod support;

use support::{Method, TestServer};

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

#[tokio::test(flavor = "multi_thread")]
async fn the_leaderboard_sorts_by_rating_or_by_conservative_rating() {
    let server = TestServer::start().await;
    // Bold: high, fairly uncertain. Steady: a little lower, well known.
    set_ratings(
        &server,
        &[
            ("othello-ab-strong", 1700.0, 100.0),
            ("othello-ab-medium", 1650.0, 30.0),
            ("othello-greedy", 1900.0, 300.0),
        ],
    )
    .await;
    let client = server.client();
    let names = |body: &serde_json::Value| -> Vec<String> {
        body["entries"]
            .as_array()
            .expect("entries")
            .iter()
            .take(3)
            .map(|e| e["bot"].as_str().expect("bot").to_owned())
            .collect()
    };
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard").await;
    assert_eq!(status.as_u16(), 200, "{body}");
    assert_eq!(body["sort"], "rating");
    assert_eq!(
        names(&body),
        ["othello-ab-strong", "othello-ab-medium", "othello-greedy"].map(String::from)[..],
        "established by rating, the provisional greedy (1900 ± 600) after: {body}"
    );
    let (status, body) = client
        .get("/api/ladders/othello:std/leaderboard?sort=conservative")
        .await;
    assert_eq!(status.as_u16(), 200, "{body}");
    assert_eq!(
        names(&body)[..2],
        ["othello-ab-medium", "othello-ab-strong"].map(String::from)[..],
        "1650 − 60 before 1700 − 200: {body}"
    );
    assert_eq!(body["entries"][0]["conservative"], 1590.0);
    let (status, body) = client.get("/api/ladders/othello:std/leaderboard?sort=luck").await;
    assert_eq!(status.as_u16(), 400, "{body}");
    assert!(
        body["error"]
            .as_str()
            .is_some_and(|e| e.contains("rating or conservative")),
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
    let html = page("/ladders/othello:std?sort=conservative").await;
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let strong = html.find("/bots/othello-ab-strong").expect("strong listed");
    assert!(medium < strong, "conservative order on the page");
    assert!(html.contains(r#"<strong aria-current="true">by conservative rating</strong>"#));
    assert!(html.contains(r#"<a href="/ladders/othello:std">by rating</a>"#));
    assert!(
        html.contains("fragment=rows&amp;sort=conservative"),
        "the refresh keeps the order"
    );
    let html = page("/ladders/othello:std").await;
    let medium = html.find("/bots/othello-ab-medium").expect("medium listed");
    let strong = html.find("/bots/othello-ab-strong").expect("strong listed");
    assert!(strong < medium, "rating order by default");

    // A bot page says what its rating's ± means, and what provisional means
    // in matches.
    let html = page("/bots/othello-greedy").await;
    assert!(html.contains("95% sure its rating is between 1300 and 2500"), "{html}");
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
