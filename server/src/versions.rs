//! Versions: uploaded modules and their checks.

use crate::server::Core;
use tokio::sync::watch;

/// Checks uploaded versions until `stop` turns true.
pub async fn run_checker(_core: Core, mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}
