//! The bots an agent can meet: agent bots and house bots on a remote
//! Othello ladder, as the agent API's bot objects show them.

use super::Environment;
use super::live::Participant;
use crate::error::Result;
use crate::handles::Handles;
use crate::ratings::{Rating, matches_to_establish};
use arbiter_games::othello::Mode;
use arbiter_referee::EntrantInfo;
use serde_json::{Value, json};
use sqlx::Row;
use std::collections::HashMap;

/// An authenticated agent bot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AgentBot {
    /// The bot's id (the agent API's bot id).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Its owner's name.
    pub owner: String,
    /// Its active agent version.
    pub version: i64,
}

/// One bot of the directory.
#[derive(Clone, Debug)]
pub(super) struct Entry {
    pub id: i64,
    pub name: String,
    pub owner: String,
    pub house: bool,
    pub agent: bool,
    pub version: i64,
    pub sha256: String,
    pub modes: Vec<Mode>,
    pub bio: String,
    pub photo: Option<String>,
    pub auto_match: bool,
    pub concurrent: i64,
    pub created_ms: i64,
    pub rating: Rating,
    pub wdl: [i64; 3],
}

/// The remote Othello ladder's prefix.
const PREFIX: &str = "remote:othello:";

/// Every agent bot and house bot whose active version is on a remote
/// Othello ladder (HTTP bots are played by workers, not here).
pub(super) async fn list(core: &Handles) -> Result<Vec<Entry>> {
    let rows = sqlx::query(
        "SELECT b.id, b.name, u.name, u.is_house, v.agent, v.id, v.sha256, b.bio, b.photo_sha256, b.auto_match, \
           b.concurrent_matches, b.created_ms, vl.ladder, r.rating, r.deviation, r.volatility, r.wins, r.draws, r.losses \
         FROM bots b JOIN users u ON u.id = b.owner_id \
         JOIN versions v ON v.bot_id = b.id AND v.status = 'active' AND v.remote_url IS NULL \
         JOIN version_ladders vl ON vl.version_id = v.id AND vl.ladder LIKE 'remote:othello:%' \
         LEFT JOIN ratings r ON r.version_id = v.id AND r.ladder = 'remote:othello:std' \
         WHERE b.retired = 0 AND (v.agent = 1 OR u.is_house = 1) ORDER BY b.id, vl.ladder",
    )
    .fetch_all(&core.db.pool)
    .await?;
    let mut entries: Vec<Entry> = Vec::new();
    let mut index: HashMap<i64, usize> = HashMap::new();
    for row in rows {
        let id: i64 = row.try_get(0)?;
        let ladder: String = row.try_get(12)?;
        let mode = ladder.strip_prefix(PREFIX).and_then(|m| m.parse::<Mode>().ok());
        if let Some(&at) = index.get(&id) {
            if let Some(mode) = mode {
                entries[at].modes.push(mode);
            }
            continue;
        }
        let name: String = row.try_get(1)?;
        let rating = match row.try_get::<Option<f64>, _>(13)? {
            Some(value) => Rating {
                rating: value,
                deviation: row.try_get(14)?,
                volatility: row.try_get(15)?,
            },
            None => Rating::default(),
        };
        let photo: Option<String> = row.try_get(8)?;
        index.insert(id, entries.len());
        entries.push(Entry {
            id,
            photo: photo.map(|sha| crate::bots::photo_path(&name, &sha)),
            name,
            owner: row.try_get(2)?,
            house: row.try_get::<i64, _>(3)? != 0,
            agent: row.try_get::<i64, _>(4)? != 0,
            version: row.try_get(5)?,
            sha256: row.try_get(6)?,
            modes: mode.into_iter().collect(),
            bio: row.try_get(7)?,
            auto_match: row.try_get::<i64, _>(9)? != 0,
            concurrent: row.try_get(10)?,
            created_ms: row.try_get(11)?,
            rating,
            wdl: [
                row.try_get::<Option<i64>, _>(16)?.unwrap_or(0),
                row.try_get::<Option<i64>, _>(17)?.unwrap_or(0),
                row.try_get::<Option<i64>, _>(18)?.unwrap_or(0),
            ],
        });
    }
    Ok(entries)
}

impl Entry {
    /// The match's view of this bot.
    pub fn participant(&self) -> Participant {
        Participant {
            bot: self.id,
            version: self.version,
            info: EntrantInfo {
                name: self.name.clone(),
                kind: if self.agent { "agent" } else { "wasm" }.to_owned(),
                sha256: (!self.agent).then(|| self.sha256.clone()),
                reproducible: !self.agent,
            },
            agent: self.agent,
        }
    }

    /// The bot object of the agent API, field for field as the seed shows
    /// it (owner fields Arbiter has no use for are empty).
    pub fn view(&self, core: &Handles, online: bool, environment: Option<&Environment>) -> Value {
        let [wins, draws, losses] = self.wdl;
        let required = matches_to_establish(core.rating, self.rating);
        let played = wins + draws + losses;
        let official = !self.rating.provisional();
        let environment = environment.cloned().unwrap_or_default();
        json!({
            "id": self.id,
            "name": self.name,
            "owner_id": self.owner,
            "owner_name": self.owner,
            "owner": {
                "player_id": self.owner,
                "name": self.owner,
                "photo": "",
                "country_code": "",
                "country_name": "",
                "country_flag_url": "",
                "donor": false,
                "verified_player_id": "",
            },
            "engine_level": null,
            "rating": {
                "rating": self.rating.rating.round(),
                "rd": self.rating.deviation.round(),
                "official": official,
                "official_progress": {
                    "kind": if official { "official" } else { "provisional" },
                    "current": played,
                    "required": played + i64::from(required),
                },
                "color": "",
                "high_rating": self.rating.rating.round(),
                "wins": wins,
                "losses": losses,
                "draws": draws,
                "streak": 0,
                "best_streak": 0,
            },
            "supported_games": self.modes.iter().map(|m| m.as_str()).collect::<Vec<_>>(),
            "auto_match": self.auto_match,
            "bio": self.bio,
            "registered_at": super::datetime(self.created_ms),
            "registered_at_ts": self.created_ms.div_euclid(1000),
            "environment": {
                "cpu": environment.cpu.unwrap_or_default(),
                "engine": environment.engine.unwrap_or_default(),
                "os": environment.os.unwrap_or_default(),
                "practice": environment.practice,
            },
            "is_builtin": self.house,
            "online": online || self.house,
            "disabled": false,
            "deleted": false,
            "photo": self.photo,
        })
    }
}
