//! Games against people across a real stop and start of `arbiter serve`,
//! with a client written from `docs/spec/ladder.md` ("People playing
//! bots") alone: a guest's browser without JavaScript (the game's cookie,
//! the board's form, `/play/{id}/state`). A SIGTERM mid-game and a new
//! process on the same database leave the game where it was, the person's
//! clock stood still meanwhile; the person carries on with the same
//! cookie, and the finished game's replay verifies with `arbiter verify`
//! (the bot's side re-run from the person's moves, byte for byte, as an
//! uninterrupted game with those moves). Also with two front ends: the
//! game goes on when the leading one stops and the other takes over.

mod support;

use serde_json::Value;
use std::time::{Duration, Instant};
use support::{StatusCode, TestServer, backends};

/// A guest's game as their browser holds it: the game's page and cookie.
#[derive(Clone)]
struct Game {
    http: reqwest::Client,
    place: String,
    cookie: String,
}

impl Game {
    /// Starts a game against `bot` on the server at `base` with `form`.
    async fn start(base: &str, bot: &str, form: &str) -> Game {
        let http = support::plain_http();
        let answer = http
            .post(format!("{base}/bots/{bot}/play"))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form.to_owned())
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), StatusCode::SEE_OTHER, "{bot}");
        let place = answer.headers()["location"].to_str().expect("a location").to_owned();
        let cookie = answer.headers()["set-cookie"].to_str().expect("a cookie");
        let cookie = cookie.split(';').next().expect("name=value").to_owned();
        Game { http, place, cookie }
    }

    /// The game's id, from its page's address.
    fn id(&self) -> i64 {
        self.place
            .strip_prefix("/play/")
            .and_then(|id| id.parse().ok())
            .unwrap_or_else(|| panic!("a game page: {}", self.place))
    }

    /// The game's state at `base`, once it is the person's turn or over
    /// (at most 60 s; while a front end finds out who leads it may answer
    /// 502 or 503, which a browser's reload rides out).
    async fn settled(&self, base: &str) -> Value {
        let until = Instant::now() + Duration::from_secs(60);
        loop {
            let answer = self
                .http
                .get(format!("{base}{}/state", self.place))
                .header("cookie", &self.cookie)
                .send()
                .await;
            if let Ok(answer) = answer
                && answer.status() == StatusCode::OK
            {
                let state: Value = answer.json().await.expect("JSON");
                let my_turn = state["to_move"] == "person" && state["legal"].as_array().is_some_and(|l| !l.is_empty());
                if state["status"] != "running" || my_turn {
                    assert_eq!(state["mine"], true, "the cookie still makes the guest its person");
                    return state;
                }
            }
            assert!(Instant::now() < until, "the game never came to the person's turn");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Plays the middle legal square of `state` through the board's form.
    async fn play(&self, base: &str, state: &Value) {
        let legal = state["legal"].as_array().expect("legal squares");
        let square = legal[legal.len() / 2].as_str().expect("a name");
        let answer = self
            .http
            .post(format!("{base}{}", self.place))
            .header("content-type", "application/x-www-form-urlencoded")
            .header("cookie", &self.cookie)
            .body(format!("revision={}&square={square}", state["revision"]))
            .send()
            .await
            .expect("an answer");
        assert_eq!(answer.status(), StatusCode::SEE_OTHER, "{square} on {state}");
    }

    /// Makes `moves` moves, each on the person's turn.
    async fn moves(&self, base: &str, moves: usize) {
        for _ in 0..moves {
            let state = self.settled(base).await;
            assert_eq!(state["status"], "running", "{state}");
            self.play(base, &state).await;
        }
    }

    /// Plays on to the end; the final state.
    async fn play_out(&self, base: &str) -> Value {
        for _ in 0..80 {
            let state = self.settled(base).await;
            if state["status"] != "running" {
                return state;
            }
            self.play(base, &state).await;
        }
        panic!("the game did not end in 80 moves");
    }

    /// Downloads the finished game's replay and checks it with `arbiter
    /// verify REPLAY house:BOT`.
    async fn verify(&self, base: &str, bot: &str) {
        let replay = self
            .http
            .get(format!("{base}{}/replay.json", self.place))
            .send()
            .await
            .expect("an answer");
        assert_eq!(replay.status(), StatusCode::OK);
        let replay = replay.bytes().await.expect("the replay");
        let dir = tempfile::tempdir().expect("a folder");
        let file = dir.path().join("replay.json");
        std::fs::write(&file, &replay).expect("written");
        let verified = std::process::Command::new(env!("CARGO_BIN_EXE_arbiter"))
            .arg("verify")
            .arg(&file)
            .arg(format!("house:{bot}"))
            .output()
            .expect("arbiter verify runs");
        let said = String::from_utf8_lossy(&verified.stdout);
        assert!(
            verified.status.success(),
            "{said}{}",
            String::from_utf8_lossy(&verified.stderr)
        );
        assert!(said.contains("the re-run gives the same match"), "{said}");
    }
}

/// Game `id`'s row: its status, the process holding it, its saved moves.
async fn row(server: &TestServer, id: i64) -> (String, Option<String>, Vec<String>) {
    let (status, hall, moves): (String, Option<String>, Option<String>) =
        sqlx::query_as("SELECT status, hall, moves FROM people_games WHERE id = $1")
            .bind(id)
            .fetch_one(&server.db().await.pool)
            .await
            .expect("the row");
    let moves = serde_json::from_str(moves.as_deref().unwrap_or("null")).unwrap_or_default();
    (status, hall, moves)
}

/// A deploy mid-game: SIGTERM, 2 s without a server, and a new `arbiter
/// serve` on the same database and address. Both of the guest's games (a
/// timed Othello game and an untimed tic-tac-toe game) are where they
/// were, the Othello clock lost nothing to the stop, and each plays to its
/// end with the same cookie and verifies.
#[tokio::test(flavor = "multi_thread")]
async fn a_restart_resumes_every_people_game_where_it_was() {
    for backend in backends() {
        let mut server = TestServer::start_with(backend).await;
        let base = server.url("");
        let othello = Game::start(&base, "othello-greedy", "game=othello:std&side=first&clock=5m&name=Ann").await;
        let tictactoe = Game::start(
            &base,
            "tictactoe-perfect",
            "game=tictactoe&side=second&clock=untimed&name=Ann",
        )
        .await;
        othello.moves(&base, 3).await;
        tictactoe.moves(&base, 1).await;
        let othello_before = othello.settled(&base).await;
        let tictactoe_before = tictactoe.settled(&base).await;
        assert_eq!(othello_before["revision"], 6, "{backend:?}: {othello_before}");

        server.signal("TERM");
        assert_eq!(
            server.exit_code(Duration::from_secs(20)).await,
            Some(0),
            "{backend:?}: {}",
            server.output()
        );
        for (game, before) in [(&othello, &othello_before), (&tictactoe, &tictactoe_before)] {
            let (status, hall, moves) = row(&server, game.id()).await;
            assert_eq!((status.as_str(), hall), ("running", None), "{backend:?}: released");
            assert_eq!(
                serde_json::json!(moves),
                before["moves"],
                "{backend:?}: every move saved"
            );
        }
        tokio::time::sleep(Duration::from_secs(2)).await;
        server.restart().await;

        for (game, before) in [(&othello, &othello_before), (&tictactoe, &tictactoe_before)] {
            let after = game.settled(&base).await;
            for field in [
                "status",
                "rows",
                "moves",
                "revision",
                "legal",
                "to_move",
                "person_colour",
            ] {
                assert_eq!(after[field], before[field], "{backend:?}: {field}");
            }
        }
        // The person's clock stood still while no process held the game:
        // it lost only the time the two processes ran, not the 2 s between.
        let othello_after = othello.settled(&base).await;
        let lost = othello_before["clock_left_ms"].as_i64().expect("a clock")
            - othello_after["clock_left_ms"].as_i64().expect("a clock");
        assert!((0..1_500).contains(&lost), "{backend:?}: {lost} ms lost over a restart");

        for (game, bot) in [(&othello, "othello-greedy"), (&tictactoe, "tictactoe-perfect")] {
            let end = game.play_out(&base).await;
            assert_eq!(end["status"], "finished", "{backend:?}: {end}");
            game.verify(&base, bot).await;
            let (status, hall, _) = row(&server, game.id()).await;
            assert_eq!((status.as_str(), hall), ("finished", None), "{backend:?}");
        }
        let output = server.output();
        assert_eq!(
            output.matches("game against a person resumed").count(),
            2,
            "{backend:?}: {output}"
        );
        assert!(!output.contains("panicked"), "{backend:?}: {output}");
    }
}

/// Two `arbiter serve` on one database: a guest plays through the second
/// front end (which forwards to the leading first); the first stops, the
/// second takes the lead and resumes the game, and the guest finishes it
/// there with the same cookie.
#[tokio::test(flavor = "multi_thread")]
async fn a_people_game_goes_on_when_the_leading_front_end_stops() {
    for backend in backends() {
        let mut first = TestServer::start_with(backend).await;
        let second = first.beside().await;
        let base = second.url("");
        let game = Game::start(
            &base,
            "othello-greedy",
            "game=othello:std&side=second&clock=5m&name=Bea",
        )
        .await;
        game.moves(&base, 2).await;
        let before = game.settled(&base).await;
        assert!(
            row(&first, game.id()).await.1.is_some(),
            "{backend:?}: a front end holds it"
        );

        first.signal("TERM");
        assert_eq!(first.exit_code(Duration::from_secs(20)).await, Some(0), "{backend:?}");
        let after = game.settled(&base).await;
        for field in ["status", "rows", "moves", "revision", "legal"] {
            assert_eq!(after[field], before[field], "{backend:?}: {field}");
        }
        let end = game.play_out(&base).await;
        assert_eq!(end["status"], "finished", "{backend:?}: {end}");
        game.verify(&base, "othello-greedy").await;
        let output = second.output();
        assert!(
            output.contains("this front end leads the agent hall"),
            "{backend:?}: {output}"
        );
        assert!(
            output.contains("game against a person resumed"),
            "{backend:?}: {output}"
        );
        assert!(!output.contains("panicked"), "{backend:?}: {output}");
    }
}
