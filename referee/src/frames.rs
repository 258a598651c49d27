//! A skirmish game as frames for viewers: the map, the state at the start,
//! then per tick only what changed, and the state at the end to check a
//! rebuilt state against. Built by re-simulating the game's record (every
//! digest checked), so a viewer needs no copy of the rules.
//!
//! Units are `[id, x, y, hp]` when they were seen before and
//! `[id, x, y, hp, side, kind]` when new (`side` 1 or 2, `kind` an index in
//! `kinds`); `res` is `[gold 1, lumber 1, gold 2, lumber 2]`.

use crate::skirmish::{ExportError, SkirmishRecord, tick_budget_ms};
use crate::{MatchSettings, Replay};
use arbiter_games::Variant;
use arbiter_games::skirmish::{Kind, Skirmish};
use serde::Serialize;
use std::collections::BTreeMap;

/// One kind of unit or building, as a viewer draws it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KindInfo {
    /// Its code, e.g. `hpea`.
    pub code: &'static str,
    /// Side of its square footprint, in tiles.
    pub size: u32,
    /// How far it sees (Chebyshev distance from its footprint).
    pub vision: u32,
    /// Its hit points when whole.
    pub hp: u32,
}

/// The whole state at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Snapshot {
    /// The tick about to be played.
    pub tick: u32,
    /// `[id, x, y, hp, side, kind]` of every unit and building.
    pub units: Vec<[i64; 6]>,
    /// `[gold 1, lumber 1, gold 2, lumber 2]`.
    pub res: [u32; 4],
    /// `[id, x, y, gold]` of every mine with gold left.
    pub mines: Vec<[i64; 4]>,
    /// `[x, y]` of every felled tree.
    pub felled: Vec<[i32; 2]>,
}

/// What changed in one tick.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Delta {
    /// Units new or changed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub u: Vec<Vec<i64>>,
    /// Ids of units gone (dead).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub d: Vec<u32>,
    /// The banks, when they changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub r: Option<[u32; 4]>,
    /// `[id, gold]` of mines whose gold changed (0: depleted).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub m: Vec<[i64; 2]>,
    /// `[x, y]` of trees felled this tick.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub f: Vec<[i32; 2]>,
}

/// A game's frames.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Frames {
    /// Map width.
    pub w: i32,
    /// Map height.
    pub h: i32,
    /// The terrain at the start, `rows[y][x]`: `.`, `T` or `#`.
    pub rows: Vec<String>,
    /// Every kind, in the order of the `kind` indexes.
    pub kinds: Vec<KindInfo>,
    /// The participant on each side, by name.
    pub names: [String; 2],
    /// The state before tick 0.
    pub start: Snapshot,
    /// What each tick changed, in order.
    pub ticks: Vec<Delta>,
    /// The state after the last tick.
    pub end: Snapshot,
}

fn kind_index(kind: Kind) -> i64 {
    Kind::ALL.iter().position(|k| *k == kind).unwrap_or(0) as i64
}

fn snapshot(game: &Skirmish) -> Snapshot {
    let state = game.spectate();
    Snapshot {
        tick: state.tick,
        units: state
            .units
            .iter()
            .map(|u| {
                [
                    i64::from(u.id),
                    i64::from(u.x),
                    i64::from(u.y),
                    i64::from(u.hp),
                    i64::from(u.owner),
                    kind_index(u.kind),
                ]
            })
            .collect(),
        res: [
            state.res[0].gold,
            state.res[0].lumber,
            state.res[1].gold,
            state.res[1].lumber,
        ],
        mines: state
            .mines
            .iter()
            .map(|m| [i64::from(m.id), i64::from(m.x), i64::from(m.y), i64::from(m.gold)])
            .collect(),
        felled: state.felled.iter().map(|t| [t.x, t.y]).collect(),
    }
}

/// What changed from `before` to `after`.
fn delta(before: &Snapshot, after: &Snapshot) -> Delta {
    let old: BTreeMap<i64, &[i64; 6]> = before.units.iter().map(|u| (u[0], u)).collect();
    let new: BTreeMap<i64, &[i64; 6]> = after.units.iter().map(|u| (u[0], u)).collect();
    let mut out = Delta::default();
    for (id, unit) in &new {
        match old.get(id) {
            None => out.u.push(unit.to_vec()),
            Some(was) if was[1..4] != unit[1..4] => out.u.push(unit[..4].to_vec()),
            Some(_) => {}
        }
    }
    out.d = old
        .keys()
        .filter(|id| !new.contains_key(id))
        .map(|&id| id as u32)
        .collect();
    if before.res != after.res {
        out.r = Some(after.res);
    }
    let mines: BTreeMap<i64, i64> = after.mines.iter().map(|m| (m[0], m[3])).collect();
    for mine in &before.mines {
        let gold = mines.get(&mine[0]).copied().unwrap_or(0);
        if gold != mine[3] {
            out.m.push([mine[0], gold]);
        }
    }
    out.f = after.felled[before.felled.len().min(after.felled.len())..].to_vec();
    out
}

/// The state of a game being played, for live spectators: the terrain as
/// it is now (felled trees are ground), the kinds, and everything on the
/// map.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LiveFrame {
    /// Map width.
    pub w: i32,
    /// Map height.
    pub h: i32,
    /// The terrain now, `rows[y][x]`.
    pub rows: Vec<String>,
    /// Every kind, in the order of the `kind` indexes.
    pub kinds: Vec<KindInfo>,
    /// The state.
    pub state: Snapshot,
}

/// `game` as live spectators see it.
pub fn live(game: &Skirmish) -> LiveFrame {
    let state = snapshot(game);
    let mut rows: Vec<Vec<u8>> = game.map().rows().into_iter().map(String::into_bytes).collect();
    for [x, y] in &state.felled {
        if let Some(cell) = rows.get_mut(*y as usize).and_then(|row| row.get_mut(*x as usize)) {
            *cell = b'.';
        }
    }
    LiveFrame {
        w: game.map().width(),
        h: game.map().height(),
        rows: rows
            .into_iter()
            .map(|row| String::from_utf8_lossy(&row).into_owned())
            .collect(),
        kinds: kinds(),
        state,
    }
}

fn kinds() -> Vec<KindInfo> {
    Kind::ALL
        .iter()
        .map(|&kind| {
            let stats = kind.stats();
            KindInfo {
                code: kind.code(),
                size: stats.size,
                vision: stats.vision,
                hp: stats.hp,
            }
        })
        .collect()
}

/// The frames of game `index` (0 or 1) of a skirmish replay.
pub fn frames(replay: &Replay, index: usize) -> Result<Frames, ExportError> {
    let settings: MatchSettings = crate::verify::settings_of(replay)
        .ok()
        .filter(|s| s.variant == Variant::Skirmish)
        .ok_or_else(|| ExportError::NotSkirmish(format!("{}:{}", replay.game, replay.mode)))?;
    let game = replay.games.get(index).ok_or(ExportError::NoRecord(index))?;
    let record = SkirmishRecord::from_game(game).ok_or(ExportError::NoRecord(index))?;
    let mut snapshots: Vec<Snapshot> = Vec::with_capacity(record.game.ticks.len() + 1);
    let mut map = None;
    record
        .game
        .states(
            |tick| tick_budget_ms(&settings, tick),
            |state| {
                if map.is_none() {
                    map = Some(state.map().clone());
                }
                snapshots.push(snapshot(state));
            },
        )
        .map_err(|error| ExportError::Record { game: index, error })?;
    let map = map.ok_or(ExportError::NoRecord(index))?;
    let ticks = snapshots.windows(2).map(|pair| delta(&pair[0], &pair[1])).collect();
    let start = snapshots.first().cloned().ok_or(ExportError::NoRecord(index))?;
    let end = snapshots.last().cloned().ok_or(ExportError::NoRecord(index))?;
    let name = |side: usize| {
        let participant = usize::from(game.sides[side]);
        replay.participants[participant].name.clone()
    };
    Ok(Frames {
        w: map.width(),
        h: map.height(),
        rows: map.rows(),
        kinds: kinds(),
        names: [name(0), name(1)],
        start,
        ticks,
        end,
    })
}
