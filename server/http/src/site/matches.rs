//! The match page: result, both games with their finish reasons, time and
//! fuel per move, the replay viewer, downloads, and the owner's logs. A
//! queued or running match follows the live events instead.

use super::view::{self, MatchRow, When};
use super::{Nav, SiteError, SiteResult, Viewer, match_rows, render};
use crate::server::AppState;
use arbiter_games::Variant;
use arbiter_ladder::matches;
use arbiter_ladder::model::{MatchId, UserId};
use arbiter_referee::Replay;
use askama::Template;
use axum::extract::{Path, State};
use serde_json::Value;

/// A participant as the match page shows it.
struct Participant {
    bot: String,
    version: i64,
    rating: String,
}

/// One turn of one game.
struct TurnView {
    number: usize,
    colour: &'static str,
    bot: String,
    action: String,
    ms: String,
    fuel: String,
    fault: String,
}

/// One game (leg) of the match.
struct GameView {
    index: u8,
    /// The bot on each side, side 0 first.
    sides: [String; 2],
    /// Black/White or X/O.
    colours: [&'static str; 2],
    scores: [u32; 2],
    reason: String,
    fault: String,
    opening: String,
    turns: Vec<TurnView>,
    fuel: [String; 2],
    /// A skirmish game's ticks, by side.
    ticks: Option<TickSummary>,
}

/// What a skirmish game's record says of each side's ticks.
struct TickSummary {
    /// Ticks played.
    played: usize,
    /// Ticks each side was skipped (no current reply in time).
    skipped: [u32; 2],
    /// Stale replies each side wrote.
    stale: [u32; 2],
    /// Virtual time each side used.
    time: [String; 2],
}

/// A bot's stderr in one game, for its owner.
struct LogView {
    bot: String,
    game: i64,
    stderr: String,
}

#[derive(Template)]
#[template(path = "match.html", config = "../../web/askama.toml")]
struct MatchPage {
    nav: Nav,
    title: String,
    row: MatchRow,
    participants: [Participant; 2],
    created: When,
    error: Option<String>,
    games: Vec<GameView>,
    has_replay: bool,
    othello: bool,
    skirmish: bool,
    /// A skirmish match's training data link: its format and, once the
    /// gzip file has been made, its size.
    training: String,
    live: bool,
    /// While live: the replay so far (no turns yet), which the page's
    /// script fills from the event stream to draw the boards.
    live_replay: String,
    /// The games' catalogue as JSON, for the replay viewer's boards.
    games_json: String,
    logs: Vec<LogView>,
    owner: bool,
}

/// The games' catalogue (`arbiter_games::catalogue`) as JSON to put in a
/// `<script type="application/json">`: the viewer reads each mode's board
/// from it rather than knowing the modes.
fn catalogue_json() -> String {
    serde_json::to_string(&arbiter_games::catalogue())
        .unwrap_or_else(|_| "[]".into())
        .replace("</", "<\\/")
}

/// The start of a match's replay as the live boards need it: the game, the
/// mode, the participants and each game's opening (the same seeded opening
/// in both Othello legs), with no turns yet.
fn live_replay(ladder: &str, seed: u64, names: &[String; 2]) -> String {
    let Ok(variant) = arbiter_ladder::ladders::parse(ladder) else {
        return String::new();
    };
    let record = match variant {
        arbiter_games::Variant::Othello(mode) => {
            let opening: Vec<_> = arbiter_games::othello::opening(mode, seed)
                .iter()
                .map(|mv| mv.code())
                .collect();
            serde_json::json!({ "opening_moves": opening })
        }
        _ => serde_json::json!({}),
    };
    let games: Vec<Value> = (0..2u8)
        .map(|index| {
            serde_json::json!({
                "index": index,
                "sides": if index == 0 { [0, 1] } else { [1, 0] },
                "turns": [],
                "record": record,
            })
        })
        .collect();
    serde_json::json!({
        "format": "arbiter-replay-live",
        "game": variant.game(),
        "mode": variant.mode(),
        "participants": [{ "name": names[0] }, { "name": names[1] }],
        "games": games,
    })
    .to_string()
}

/// `1 234 567`: a number with thin spaces between thousands.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push('\u{2009}');
        }
        out.push(c);
    }
    out
}

/// Virtual time of a turn: `20 µs`, `3.4 ms`.
fn virtual_time(us: u64) -> String {
    if us < 1000 {
        format!("{us} µs")
    } else {
        format!("{:.1} ms", us as f64 / 1000.0)
    }
}

/// The games of a replay as the page shows them.
fn games(replay: &Replay, names: &[String; 2]) -> Vec<GameView> {
    let colours = format!("{}:{}", replay.game, replay.mode)
        .parse::<Variant>()
        .map_or(["First", "Second"], Variant::side_names);
    replay
        .games
        .iter()
        .map(|game| {
            let sides = [
                names[usize::from(game.sides[0])].clone(),
                names[usize::from(game.sides[1])].clone(),
            ];
            let mut fuel = [0u64; 2];
            let mut number = 0;
            let turns = game
                .turns
                .iter()
                .map(|turn| {
                    let side = turn.side.index();
                    fuel[side] += turn.spent.fuel.unwrap_or(0);
                    number += 1;
                    TurnView {
                        number,
                        colour: colours[side],
                        bot: sides[side].clone(),
                        action: turn.action.clone().unwrap_or_else(|| "—".into()),
                        ms: virtual_time(turn.spent.us),
                        fuel: turn.spent.fuel.map(grouped).unwrap_or_default(),
                        fault: turn.fault.map(|f| f.to_string()).unwrap_or_default(),
                    }
                })
                .collect();
            let fault = match (game.faulted, &game.detail) {
                (Some(side), Some(detail)) => format!("{} ({}): {detail}", sides[side.index()], colours[side.index()]),
                (Some(side), None) => format!("{} ({})", sides[side.index()], colours[side.index()]),
                (None, _) => String::new(),
            };
            GameView {
                index: game.index,
                colours,
                scores: game.scores,
                reason: game.reason.to_string(),
                fault,
                opening: game
                    .record
                    .othello()
                    .map(|record| record.opening.clone())
                    .unwrap_or_default(),
                turns,
                ticks: game.record.skirmish().map(|record| {
                    fuel = record.spent.map(|spent| spent.fuel.unwrap_or(0));
                    TickSummary {
                        played: record.game.ticks.len(),
                        skipped: record.skipped,
                        stale: record.stale,
                        time: record.spent.map(|spent| virtual_time(spent.us)),
                    }
                }),
                fuel: [grouped(fuel[0]), grouped(fuel[1])],
                sides,
            }
        })
        .collect()
}

/// The training data link's words: `training data (JSONL, gzip, 1.2 MB)`,
/// without the size while the gzip file has not been made (it is made when
/// first downloaded).
fn training_label(gzip_bytes: Option<u64>) -> String {
    match gzip_bytes {
        Some(bytes) => format!("training data (JSONL, gzip, {})", size(bytes)),
        None => "training data (JSONL, gzip)".to_string(),
    }
}

/// A size in bytes as people read it: `850 B`, `12 KB`, `1.2 MB` (powers
/// of 1000).
fn size(bytes: u64) -> String {
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..999_500 => format!("{:.0} KB", bytes as f64 / 1e3),
        _ => format!("{:.1} MB", bytes as f64 / 1e6),
    }
}

/// `GET /matches/{id}`.
pub async fn page(State(state): State<AppState>, Path(id): Path<String>, viewer: Viewer) -> SiteResult {
    let id: i64 = id
        .parse()
        .ok()
        .filter(|id| *id > 0)
        .ok_or_else(|| SiteError::not_found(format!("match {id:?}")))?;
    let id = MatchId(id);
    let m = matches::find(&state.core.db, id)
        .await?
        .ok_or_else(|| SiteError::not_found(format!("match {id}")))?;
    let row = match_rows::match_row(&m);
    let participant = |p: &arbiter_ladder::matches::Participant| -> Participant {
        Participant {
            bot: p.bot.clone(),
            version: p.version,
            rating: match (p.rating_before, p.rating_after) {
                (Some(b), Some(a)) => format!("{:.0} → {:.0} ({})", b, a, view::signed(a - b)),
                (Some(b), None) => format!("{b:.0}"),
                _ => String::new(),
            },
        }
    };
    let participants = [participant(&m.participants[0]), participant(&m.participants[1])];
    let names = [
        format!("{} v{}", participants[0].bot, participants[0].version),
        format!("{} v{}", participants[1].bot, participants[1].version),
    ];
    let has_replay = m.replay.is_some();
    let games = if has_replay {
        match matches::replay_bytes(&state.core, id).await {
            Ok(bytes) => match Replay::from_json(&bytes) {
                Ok(replay) => games(&replay, &names),
                Err(error) => {
                    tracing::warn!(match_id = id.0, %error, "cannot read a replay");
                    Vec::new()
                }
            },
            Err(error) => {
                tracing::warn!(match_id = id.0, %error, "cannot load a replay");
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };

    // Whoever may read logs (the ladder decides) sees them; others see none.
    let (owner, logs) = match matches::logs_for(&state.core.db, id, viewer.user_id().map(UserId)).await? {
        Ok(logs) => {
            let logs = logs
                .into_iter()
                .map(|log| LogView {
                    bot: names[usize::from(log.participant == 1)].clone(),
                    game: log.game,
                    stderr: log.stderr,
                })
                .collect();
            (true, logs)
        }
        Err(_refused) => (false, Vec::new()),
    };

    let live = m.is_live();
    let live_replay = if live {
        let seed = matches::seed(&state.core.db, id).await?;
        live_replay(&row.ladder, u64::try_from(seed).unwrap_or_default(), &names)
    } else {
        String::new()
    };
    let variant = row.ladder.parse::<Variant>();
    let skirmish = matches!(variant, Ok(Variant::Skirmish));
    let training = if skirmish && has_replay {
        training_label(matches::training_gzip_size(&state.core.db, id).await?)
    } else {
        String::new()
    };
    Ok(render(&MatchPage {
        nav: viewer.nav("matches"),
        title: format!("Match {id}: {} vs {}", participants[0].bot, participants[1].bot),
        othello: matches!(variant, Ok(Variant::Othello(_))),
        skirmish,
        training,
        created: When::at(m.created_ms),
        error: m.error,
        row,
        participants,
        games,
        has_replay,
        live,
        live_replay,
        games_json: catalogue_json(),
        logs,
        owner,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_read_them() {
        assert_eq!(size(850), "850 B");
        assert_eq!(size(12_345), "12 KB");
        assert_eq!(size(999_499), "999 KB");
        assert_eq!(size(999_500), "1.0 MB");
        assert_eq!(size(1_234_567), "1.2 MB");
        assert_eq!(training_label(None), "training data (JSONL, gzip)");
        assert_eq!(training_label(Some(1_234_567)), "training data (JSONL, gzip, 1.2 MB)");
    }
}
