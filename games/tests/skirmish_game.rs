//! End to end: a scripted bot gathers, trains, builds a barracks and farms,
//! trains footmen and destroys an idle opponent before the tick limit — on
//! both built-in maps and from both start positions.

mod skirmish_bots;

use arbiter_games::skirmish::{Kind, Map, Skirmish, TICK_LIMIT};
use arbiter_games::{FinishReason, Side};
use skirmish_bots::{Bot, Idle, Rusher, play};

/// Plays the rusher against an idle bot; returns the game and the most
/// footmen the rusher had at once.
fn rush(map: &str, rusher_side: Side) -> (Skirmish, usize) {
    let mut game = Skirmish::new(Map::builtin(map).expect("built-in map"), 3);
    let mut rusher = Rusher::new();
    let mut idle = Idle;
    let mut most = 0;
    let bots: [&mut dyn Bot; 2] = match rusher_side {
        Side::First => [&mut rusher, &mut idle],
        Side::Second => [&mut idle, &mut rusher],
    };
    play(&mut game, bots, TICK_LIMIT, |g| {
        let footmen = g
            .spectate()
            .units
            .iter()
            .filter(|u| u.kind == Kind::Footman && u.owner == rusher_side.index() as u8 + 1)
            .count();
        most = most.max(footmen);
    });
    (game, most)
}

fn assert_rusher_wins(map: &str, side: Side) -> u32 {
    let (game, most) = rush(map, side);
    let outcome = game.outcome().expect("the game ended");
    assert_eq!(
        outcome.reason,
        FinishReason::Elimination,
        "{map}: {outcome:?} at tick {}",
        game.tick()
    );
    assert_eq!(outcome.scores[side.index()], 2, "{map}: the rusher wins");
    assert!(game.tick() < TICK_LIMIT, "{map}: before the tick limit");
    assert!(most >= 6, "{map}: an army was trained ({most} footmen)");
    let view = game.spectate();
    let farms = view
        .units
        .iter()
        .filter(|u| u.kind == Kind::Farm && u.built == Some(true))
        .count();
    assert!(farms >= 1, "{map}: farms were built");
    assert!(view.res[side.index()].food[1] > 12, "{map}: food cap grew");
    // The replay reproduces the game, every observation digest included.
    let replayed = game.record().replay().expect("the record replays");
    assert_eq!(replayed.spectate(), view);
    assert_eq!(replayed.outcome(), game.outcome());
    eprintln!(
        "{map}: side {side:?} wins at tick {} with {most} footmen at most",
        game.tick()
    );
    game.tick()
}

#[test]
fn the_scripted_bot_eliminates_an_idle_bot_on_duel32() {
    let first = assert_rusher_wins("duel32", Side::First);
    let second = assert_rusher_wins("duel32", Side::Second);
    assert_eq!(first, second, "the same game from either start position");
}

#[test]
fn the_scripted_bot_eliminates_an_idle_bot_on_duel48() {
    assert_rusher_wins("duel48", Side::First);
}

/// The training-data export: one line per tick and side, the observation
/// exactly as the side got it (its digest is the record's), the map in the
/// first, nothing of the enemy outside vision, and what became of the
/// side's orders; plus the size of a record.
#[test]
fn a_game_exports_as_one_training_line_per_tick_and_side() {
    let (game, _) = rush("duel32", Side::First);
    let record = game.record();
    let lines = record
        .training_lines(arbiter_games::skirmish::deadline_ms)
        .expect("the record replays");
    assert_eq!(lines.len(), 2 * record.ticks.len());
    let mut accepted = 0;
    for (i, line) in lines.iter().enumerate() {
        let value: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let (tick, side) = (i / 2, i % 2 + 1);
        assert_eq!(value["tick"], tick, "line {i}");
        assert_eq!(value["side"], side, "line {i}");
        assert_eq!(value["obs"]["me"], side, "line {i}: the side's own observation");
        assert_eq!(
            value["obs"].get("map").is_some(),
            tick == 0,
            "line {i}: the map comes once, at tick 0"
        );
        let obs: arbiter_games::skirmish::Observation =
            serde_json::from_value(value["obs"].clone()).expect("an observation");
        assert_eq!(
            Some(arbiter_games::skirmish::observation_digest(&obs)),
            record.ticks[tick].sides[side - 1].digest,
            "line {i}: the observation the record's digest names"
        );
        accepted += value["accepted"].as_array().map_or(0, Vec::len);
    }
    assert!(accepted > 20, "the rusher's orders are in the data ({accepted})");
    let json = serde_json::to_string(&record).expect("the record serializes");
    eprintln!(
        "duel32 rush, {} ticks: record {} bytes of JSON, training data {} bytes in {} lines",
        record.ticks.len(),
        json.len(),
        lines.iter().map(|l| l.len() + 1).sum::<usize>(),
        lines.len()
    );
}
