//! A ladder's core as `arbiter serve` opens it, and matches a worker plays
//! on it: for the tests and benches that need recorded matches.

use std::path::Path;
use std::time::{Duration, Instant};

use arbiter_ladder::core::Core;
use arbiter_ladder::model::{LadderId, MatchId, MatchKind};
use arbiter_ladder::queue::{self, NewMatch};
use arbiter_ladder::ratings::RatingSystem;
use arbiter_ladder::worker::{self, WorkerConfig};
use arbiter_sandbox::CompilerCommand;
use tokio::sync::watch;

/// The core `arbiter serve` opens on `dir`, compiling with the `arbiter`
/// binary, with the house bots seeded.
pub async fn open_core(dir: &Path) -> Core {
    let core = Core::open(
        dir,
        None,
        None,
        RatingSystem::Glicko2,
        CompilerCommand::embedded_in(env!("CARGO_BIN_EXE_arbiter")),
    )
    .await
    .expect("the core opens");
    arbiter_ladder::house::seed(&core)
        .await
        .expect("the house bots are seeded");
    core
}

/// The active versions of the house bots `bots` on `ladder`.
pub async fn active_versions(core: &Core, ladder: &str, bots: [&str; 2]) -> [i64; 2] {
    let mut ids = [0; 2];
    for (id, name) in ids.iter_mut().zip(bots) {
        *id = sqlx::query_scalar(
            "SELECT v.id FROM versions v JOIN bots b ON b.id = v.bot_id \
             JOIN version_ladders vl ON vl.version_id = v.id \
             WHERE b.name = $1 AND vl.ladder = $2 AND v.status = 'active'",
        )
        .bind(name)
        .bind(ladder)
        .fetch_one(&core.db.pool)
        .await
        .expect("an active version");
    }
    ids
}

/// Queues one ranked match of `bots` on `ladder` with `seed` and runs a
/// worker named `worker` until it is recorded (a failed match, or none
/// within 5 minutes, panics).
pub async fn play_one(core: &Core, ladder: &str, bots: [&str; 2], seed: i64, worker: &str) -> MatchId {
    let versions = active_versions(core, ladder, bots).await;
    let new = NewMatch {
        ladder: &LadderId::from(ladder),
        a_version: versions[0],
        b_version: versions[1],
        seed,
        kind: MatchKind::Ranked,
        priority: 0,
        tournament_id: None,
        budget: None,
    };
    let id = queue::enqueue(&core.db, &new).await.expect("the match is queued");
    let (stop_tx, stop_rx) = watch::channel(false);
    let task = tokio::spawn(worker::run(core.clone(), WorkerConfig::new(worker.into()), stop_rx));
    let started = Instant::now();
    loop {
        let status: String = sqlx::query_scalar("SELECT status FROM matches WHERE id = $1")
            .bind(id)
            .fetch_one(&core.db.pool)
            .await
            .expect("the status");
        assert_ne!(status, "failed", "the match failed");
        if status == "finished" {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the match is not recorded"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = stop_tx.send(true);
    let _ = task.await;
    MatchId(id)
}
