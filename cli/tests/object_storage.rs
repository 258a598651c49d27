//! Scale-out: a front end and a worker that share nothing but PostgreSQL and
//! an S3-compatible bucket. The front end (`arbiter serve --workers 0`)
//! takes an upload and checks it; a worker with a data folder of its own
//! plays a challenge from the bucket's modules and stores the replay there;
//! the front end serves that replay. Runs when `TEST_S3_URL` and
//! `TEST_PG_URL` are set (CI starts both servers).

mod support;

use arbiter_referee::Replay;
use std::process::{Child, Command, Stdio};
use support::{Backend, Method, Options, S3Bucket, StatusCode, challenge_and_wait, house, upload_and_check};

/// An `arbiter worker` process, killed when dropped.
struct Worker(Child);

impl Drop for Worker {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_on_another_machine_plays_from_the_shared_bucket() {
    if std::env::var(support::TEST_PG_URL).is_err() {
        eprintln!("TEST_PG_URL is not set: skipped (CI sets it)");
        return;
    }
    let Some(bucket) = S3Bucket::create().await else {
        eprintln!("{} is not set: skipped (CI sets it)", support::TEST_S3_URL);
        return;
    };
    let blobs = format!("{}/arbiter", bucket.url);
    let mut options = Options::on(Backend::Postgres)
        .workers(0)
        .schedule(false)
        .arg("--blobs")
        .arg(&blobs);
    for (key, value) in &bucket.env {
        options = options.env(key, value);
    }
    let server = options.start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);

    // The upload goes to the bucket; the front end's checker reads it back.
    let version = upload_and_check(&api, "ann-greedy", "othello:std", house("othello-greedy")).await;
    assert_eq!(version["version"]["status"], "active", "{version}");
    let module_sha256 = version["version"]["sha256"].as_str().expect("sha").to_owned();
    let keys = bucket.keys().await;
    let module_key = format!("arbiter/{}/{}", &module_sha256[..2], &module_sha256[2..]);
    assert!(keys.contains(&module_key), "{module_key} not in {keys:?}");

    // A worker elsewhere: its own empty data folder, the same database and
    // bucket. Only it can play the challenge.
    let elsewhere = tempfile::tempdir().expect("a temporary directory");
    let mut command = Command::new(env!("CARGO_BIN_EXE_arbiter"));
    command
        .args(["worker", "--data"])
        .arg(elsewhere.path())
        .args(["--blobs", &blobs])
        .env("DATABASE_URL", server.database_url.as_deref().expect("PostgreSQL"))
        .envs(bucket.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    let _worker = Worker(command.spawn().expect("arbiter worker starts"));

    let match_id = challenge_and_wait(&api, "ann-greedy", "othello-random", "othello:std").await;

    // The front end serves the replay the worker stored in the bucket.
    let response = api
        .raw(Method::GET, &format!("/api/matches/{match_id}/replay"))
        .send()
        .await
        .expect("replay");
    assert_eq!(response.status(), StatusCode::OK);
    let replay = Replay::from_json(&response.bytes().await.expect("bytes")).expect("a replay");
    let digests: Vec<_> = replay.participants.iter().filter_map(|p| p.sha256.clone()).collect();
    assert!(digests.contains(&module_sha256), "{digests:?}");
    assert!(bucket.keys().await.len() > keys.len(), "the replay is a new object");
    // Nothing went to either machine's own folder.
    assert!(
        !server.data_dir.join("blobs").exists(),
        "the front end kept blobs locally"
    );
    assert!(
        !elsewhere.path().join("blobs").exists(),
        "the worker kept blobs locally"
    );
}
