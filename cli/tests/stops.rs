//! A stop with games against people in flight: SIGTERM releases every
//! game before the process exits (its row keeps its moves, held by no
//! process, for the next start to resume), with no panic, on every backend.

mod support;

use std::time::Duration;
use support::{StatusCode, TestServer, backends};

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_with_people_games_in_flight_releases_them_without_a_panic() {
    for backend in backends() {
        let mut server = TestServer::start_with(backend).await;
        let http = support::plain_http();
        // Two games waiting for their person (the address's limit): the
        // person plays first and never moves.
        for (bot, game) in [("tictactoe-random", "tictactoe"), ("othello-random", "othello:std")] {
            let answer = http
                .post(server.url(&format!("/bots/{bot}/play")))
                .header("content-type", "application/x-www-form-urlencoded")
                .body(format!("game={game}&side=first&clock=5m"))
                .send()
                .await
                .expect("an answer");
            assert_eq!(answer.status(), StatusCode::SEE_OTHER, "{backend:?} {bot}");
        }
        let db = server.db().await;
        let running: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM people_games WHERE status = 'running'")
            .fetch_one(&db.pool)
            .await
            .expect("a count");
        assert_eq!(running, 2, "{backend:?}");
        server.signal("TERM");
        let code = server.exit_code(Duration::from_secs(20)).await;
        assert_eq!(code, Some(0), "{backend:?}: {}", server.output());
        let output = server.output();
        assert!(
            !output.contains("panicked"),
            "{backend:?}: a panic at the stop:\n{output}"
        );
        assert!(
            !output.contains("cannot release"),
            "{backend:?}: a game not written:\n{output}"
        );
        let rows: Vec<(String, Option<String>, Option<String>)> =
            sqlx::query_as("SELECT status, hall, moves FROM people_games ORDER BY id")
                .fetch_all(&db.pool)
                .await
                .expect("the rows");
        assert_eq!(
            rows,
            vec![("running".to_owned(), None, Some("[]".to_owned())); 2],
            "{backend:?}: released before the exit, for the next start"
        );
    }
}
