//! Fuzzing the skirmish reply parser and action checks: arbitrary strings,
//! arbitrary JSON and near-valid replies never panic; a well-formed line is
//! parsed, and each of its first 32 actions is either accepted or rejected
//! with a reason, exactly once.

use arbiter_games::Side;
use arbiter_games::skirmish::{ACTION_LIMIT, Map, Skirmish, parse_reply};
use proptest::prelude::*;
use serde_json::{Map as JsonMap, Value, json};
use std::sync::OnceLock;

/// A game a few ticks in, shared by all cases (each case clones it).
fn start() -> &'static Skirmish {
    static GAME: OnceLock<Skirmish> = OnceLock::new();
    GAME.get_or_init(|| Skirmish::new(Map::builtin("duel32").expect("built-in map"), 0))
}

/// Parses `line`; when it is a reply, plays it for both sides and checks
/// every action is accounted for exactly once.
fn check(line: &str) -> Result<(), TestCaseError> {
    let Ok(reply) = parse_reply(line) else {
        return Ok(());
    };
    prop_assert!(reply.actions.len() <= ACTION_LIMIT);
    let mut game = start().clone();
    let mut current = reply.clone();
    current.tick = 0;
    let record = game.step([Some(current.clone()), Some(current)]).cloned();
    let record = record.ok_or_else(|| TestCaseError::fail("the game ended at once"))?;
    for side in Side::BOTH {
        let entry = &record.sides[side.index()];
        let mut indices: Vec<u32> = entry
            .accepted
            .iter()
            .map(|a| a.index)
            .chain(entry.rejected.iter().map(|r| r.index))
            .collect();
        indices.sort_unstable();
        prop_assert_eq!(indices, (0..reply.actions.len() as u32).collect::<Vec<_>>());
    }
    // Whatever was accepted, the game goes on and observations serialize.
    for _ in 0..3 {
        game.step([None, None]);
    }
    for side in Side::BOTH {
        let line = game.observation(side, 20).to_line();
        prop_assert!(line.starts_with(r#"{"t":"obs""#), "observation line {}", line);
    }
    Ok(())
}

const KEYS: [&str; 10] = ["t", "tick", "actions", "do", "unit", "x", "y", "target", "code", "z"];
const WORDS: [&str; 14] = [
    "act", "move", "attack", "gather", "build", "train", "stop", "hpea", "hfoo", "hrif", "htow", "hhou", "hbar", "",
];

fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        (0i64..40).prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        prop::sample::select(WORDS.to_vec()).prop_map(Value::from),
        ".{0,8}".prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 48, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Value::Array),
            prop::collection::vec((prop::sample::select(KEYS.to_vec()), inner), 0..8).prop_map(|pairs| Value::Object(
                pairs
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v))
                    .collect::<JsonMap<_, _>>()
            )),
        ]
    })
}

/// An action that is nearly valid: a real verb and unit-like numbers, with
/// fields of any type.
fn near_action() -> impl Strategy<Value = Value> {
    (
        prop::sample::select(WORDS.to_vec()),
        prop_oneof![(0i64..40).prop_map(Value::from), any_json()],
        prop_oneof![(-3i64..40).prop_map(Value::from), any_json()],
        prop_oneof![(-3i64..40).prop_map(Value::from), any_json()],
        prop_oneof![(0i64..40).prop_map(Value::from), (0i64..40, 0i64..40).prop_map(|(x, y)| json!({"x": x, "y": y})), any_json()],
        prop_oneof![prop::sample::select(WORDS.to_vec()).prop_map(Value::from), any_json()],
    )
        .prop_map(|(verb, unit, x, y, target, code)| json!({"do": verb, "unit": unit, "x": x, "y": y, "target": target, "code": code}))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_strings_never_panic(line in any::<String>()) {
        check(&line)?;
    }

    #[test]
    fn json_like_strings_never_panic(line in r#"\{"t":"act","tick":-?[0-9]{0,20}(\.[0-9])?,"actions":\[[\[\]{}",:a-z0-9 -]{0,60}\]\}"#) {
        check(&line)?;
    }

    #[test]
    fn arbitrary_json_never_panics(value in any_json()) {
        check(&value.to_string())?;
    }

}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn near_valid_replies_are_accounted_for(actions in prop::collection::vec(prop_oneof![near_action(), any_json()], 0..40)) {
        check(&json!({"t": "act", "tick": 0, "actions": actions}).to_string())?;
    }
}

#[test]
fn huge_and_deep_lines_are_errors_not_panics() {
    assert!(parse_reply(&"[".repeat(100_000)).is_err());
    assert!(parse_reply(r#"{"tick":0,"actions":[{}]}"#).is_ok());
    let many = vec![r#"{"do":"move","unit":1e400,"x":1,"y":1}"#; 5_000].join(",");
    assert!(
        parse_reply(&format!(r#"{{"tick":0,"actions":[{many}]}}"#)).is_err(),
        "1e400 is not a number serde_json reads"
    );
    let many = vec![r#"{"do":"move","unit":18446744073709551616,"x":1,"y":1}"#; 5_000].join(",");
    let reply = parse_reply(&format!(r#"{{"tick":0,"actions":[{many}]}}"#)).expect("well-formed");
    assert_eq!(reply.actions.len(), ACTION_LIMIT);
    assert!(check(&format!(r#"{{"tick":0,"actions":[{many}]}}"#)).is_ok());
}
