//! Workers: claim queued matches, play them, record them exactly once.

use crate::server::Core;
use std::time::Duration;
use tokio::sync::watch;

/// A worker's settings.
#[derive(Clone, Debug)]
pub struct WorkerConfig {
    /// Unique id of this worker (process and slot).
    pub id: String,
    /// How long a claim lasts without a heartbeat.
    pub lease: Duration,
}

impl WorkerConfig {
    /// Defaults for a worker called `id`.
    pub fn new(id: String) -> WorkerConfig {
        WorkerConfig {
            id,
            lease: Duration::from_secs(30),
        }
    }
}

/// Runs until `stop` turns true.
pub async fn run(_core: Core, _config: WorkerConfig, mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}
