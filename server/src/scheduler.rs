//! The scheduler: keeps every ladder playing fair, side-swapped matches.

use crate::server::Core;
use tokio::sync::watch;

/// Scheduler settings.
#[derive(Clone, Debug, Default)]
pub struct SchedulerConfig {}

/// Runs until `stop` turns true.
pub async fn run(_core: Core, _config: SchedulerConfig, mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}
