//! The house account and its bots, registered on first start.

use crate::server::Core;

/// Registers the house bots (idempotent).
pub async fn seed(_core: &Core) -> Result<(), sqlx::Error> {
    Ok(())
}
