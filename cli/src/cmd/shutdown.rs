//! Stopping on SIGTERM (what systemd, docker and Kubernetes send) or SIGINT
//! (Ctrl-C) alike: the first one starts a graceful stop, a second one exits
//! at once.

use tokio::signal::unix::{SignalKind, signal};

/// Completes at the first SIGTERM or SIGINT. From then on, a second one
/// exits the process at once with code 1: its running matches stay
/// `running` until their lease expires and are then played again.
pub async fn first_signal() {
    if let Err(error) = one_signal().await {
        tracing::error!(%error, "cannot listen for signals; stopping");
        return;
    }
    tracing::info!("stopping: a second SIGTERM or Ctrl-C exits at once");
    tokio::spawn(async {
        if one_signal().await.is_ok() {
            eprintln!(
                "arbiter: second signal, exiting at once; its running matches are played again after their lease"
            );
            // At once means without waiting for matches on blocking threads,
            // which returning from main would do.
            std::process::exit(1);
        }
    });
}

/// Waits for one SIGTERM or SIGINT.
async fn one_signal() -> std::io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    tokio::select! {
        result = tokio::signal::ctrl_c() => result,
        _ = terminate.recv() => Ok(()),
    }
}

/// A `--grace` in seconds, checked.
pub fn grace(seconds: f64) -> anyhow::Result<std::time::Duration> {
    std::time::Duration::try_from_secs_f64(seconds)
        .map_err(|_| anyhow::anyhow!("--grace must be a number of seconds from 0 up, not {seconds}"))
}
