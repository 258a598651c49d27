//! Every game and mode comes from `arbiter_games` alone: each listing a
//! visitor reads (the home page's ladders, `GET /api/ladders`, the guide's
//! modes and examples) shows exactly the modes of [`Variant::ALL`], so a
//! mode added there is listed everywhere without other edits.

use crate::support::TestServer;
use arbiter_games::{Scoring, Variant};

#[tokio::test]
async fn every_mode_is_listed_on_the_home_page_the_api_and_the_guide() {
    let server = TestServer::start().await;
    let home = server.client().page("/").await;
    let (status, ladders) = server.client().get("/api/ladders").await;
    assert!(status.is_success(), "{ladders}");
    let listed = ladders.to_string();
    for variant in Variant::ALL {
        assert!(
            home.contains(&format!("/ladders/{variant}")),
            "the home page links {variant}"
        );
        assert!(
            listed.contains(&format!("\"{variant}\"")),
            "/api/ladders lists {variant}: {listed}"
        );
    }

    let guide = server.client().page("/guide").await;
    let othello: Vec<Variant> = Variant::ALL
        .into_iter()
        .filter(|v| matches!(v, Variant::Othello(_)))
        .collect();
    let modes: Vec<String> = othello.iter().map(|v| format!("<code>{}</code>", v.mode())).collect();
    assert!(
        guide.contains(&format!("<h3>Othello (modes {})</h3>", modes.join(", "))),
        "the guide lists every Othello mode in order"
    );
    for variant in othello.iter().filter(|v| v.scoring() == Scoring::LowerWins) {
        assert!(
            guide.contains(&format!("in <code>{}</code>", variant.mode())),
            "the guide says fewer discs win in {variant}"
        );
    }
    for example in othello.iter().rev().take(2) {
        assert!(
            guide.contains(&example.to_string()),
            "the guide's examples name {example}"
        );
    }
}
