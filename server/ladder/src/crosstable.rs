//! A tournament's results: points per pair and per bot, from its finished
//! matches. Shared by the API and the site, so both always agree.

use sqlx::Row;
use std::collections::BTreeMap;

/// The results of one tournament.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Crosstable {
    /// Points of the first bot against the second (1 a win, ½ a draw).
    pub cross: BTreeMap<(String, String), f64>,
    /// Every entrant's points and finished matches, entrants without a
    /// finished match included.
    pub totals: BTreeMap<String, (f64, i64)>,
    /// Matches of the tournament, all statuses.
    pub matches: usize,
    /// Finished matches.
    pub finished: usize,
}

impl Crosstable {
    /// Entrants by points, then by name (case-insensitively).
    pub fn standings(&self) -> Vec<(String, f64, i64)> {
        let mut standings: Vec<(String, f64, i64)> = self
            .totals
            .iter()
            .map(|(bot, (points, played))| (bot.clone(), *points, *played))
            .collect();
        standings.sort_by(|x, y| {
            y.1.total_cmp(&x.1)
                .then_with(|| x.0.to_lowercase().cmp(&y.0.to_lowercase()))
        });
        standings
    }
}

/// Reads tournament `id`'s entrants and matches and adds up the points.
pub async fn crosstable(pool: &sqlx::AnyPool, id: i64) -> crate::error::Result<Crosstable> {
    let entries = sqlx::query(
        "SELECT e.version_id, b.name FROM tournament_entries e JOIN versions v ON v.id = e.version_id \
         JOIN bots b ON b.id = v.bot_id WHERE e.tournament_id = $1 ORDER BY b.name_key",
    )
    .bind(id)
    .fetch_all(pool)
    .await?;
    let mut names: BTreeMap<i64, String> = BTreeMap::new();
    for row in &entries {
        names.insert(row.try_get(0)?, row.try_get(1)?);
    }
    let played = sqlx::query("SELECT a_version, b_version, status, winner FROM matches WHERE tournament_id = $1")
        .bind(id)
        .fetch_all(pool)
        .await?;
    let mut table = Crosstable {
        totals: names.values().map(|n| (n.clone(), (0.0, 0))).collect(),
        matches: played.len(),
        ..Crosstable::default()
    };
    for row in &played {
        if row.try_get::<String, _>(2)? != "finished" {
            continue;
        }
        table.finished += 1;
        let a = names.get(&row.try_get::<i64, _>(0)?).cloned().unwrap_or_default();
        let b = names.get(&row.try_get::<i64, _>(1)?).cloned().unwrap_or_default();
        let (pa, pb) = match row.try_get::<Option<i64>, _>(3)? {
            Some(0) => (1.0, 0.0),
            Some(_) => (0.0, 1.0),
            None => (0.5, 0.5),
        };
        *table.cross.entry((a.clone(), b.clone())).or_default() += pa;
        *table.cross.entry((b.clone(), a.clone())).or_default() += pb;
        for (bot, points) in [(a, pa), (b, pb)] {
            let total = table.totals.entry(bot).or_default();
            total.0 += points;
            total.1 += 1;
        }
    }
    Ok(table)
}
