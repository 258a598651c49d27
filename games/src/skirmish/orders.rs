//! Orders: reading an `act` reply line, checking each action (ownership
//! first), and turning the accepted ones into units' jobs.

use super::state::{Job, Phase, Skirmish, Source};
use super::units::{ACTION_LIMIT, Kind, MINE_SIZE, QUEUE_LIMIT};
use crate::ReplyError;
use crate::reply::{object, short_json};
use serde::{Deserialize, Serialize};
use serde_json::{Map as JsonMap, Value};

/// Why one action of a reply was not applied. Each is reported in the side's
/// next observation as `{"index":i,"reason":"snake_case"}`; none is a fault.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reason {
    /// Not an object, no integer `unit`, no string `do`, or a field of the
    /// order missing or of the wrong type.
    BadAction,
    /// `unit` is not the id of one of the side's own living units or
    /// buildings (enemy, mine, dead or unknown ids alike).
    NotOwner,
    /// A later action of the same reply names the same unit.
    Superseded,
    /// `do` is not one of `move`, `attack`, `gather`, `build`, `train`, `stop`.
    UnknownOrder,
    /// `code` is not one of the six codes of the table.
    UnknownCode,
    /// This kind of unit cannot take this order (a building told to move, a
    /// footman told to gather, a peasant told to train…).
    WrongUnit,
    /// A known code this unit cannot build or train (a peasant building
    /// `hfoo`, a town hall training `hfoo`).
    CannotMake,
    /// The peasant is constructing a building and takes no order until done.
    Busy,
    /// A coordinate, or part of a footprint, is off the map.
    OutOfMap,
    /// The target (enemy, mine, tree tile, or any tile of a footprint) is not
    /// in the side's vision.
    OutOfVision,
    /// `attack` on an own unit or a mine; `gather` on something that is not a
    /// mine (or a depleted mine seen gone).
    BadTarget,
    /// `gather` on a visible tile that is not a tree (now).
    NotATree,
    /// A footprint tile is not ground or is covered by a building, a site or
    /// a mine.
    Blocked,
    /// `train` on a building still under construction.
    NotReady,
    /// `train` on a building whose queue already holds 5.
    QueueFull,
    /// Not enough banked gold or lumber now.
    NoResources,
}

impl Reason {
    /// The code as bots see it, e.g. `not_owner`.
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::BadAction => "bad_action",
            Reason::NotOwner => "not_owner",
            Reason::Superseded => "superseded",
            Reason::UnknownOrder => "unknown_order",
            Reason::UnknownCode => "unknown_code",
            Reason::WrongUnit => "wrong_unit",
            Reason::CannotMake => "cannot_make",
            Reason::Busy => "busy",
            Reason::OutOfMap => "out_of_map",
            Reason::OutOfVision => "out_of_vision",
            Reason::BadTarget => "bad_target",
            Reason::NotATree => "not_a_tree",
            Reason::Blocked => "blocked",
            Reason::NotReady => "not_ready",
            Reason::QueueFull => "queue_full",
            Reason::NoResources => "no_resources",
        }
    }
}

/// One rejected action: its 0-based index in the reply's `actions` as sent,
/// and why.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Rejection {
    /// Index into the reply's `actions`.
    pub index: u32,
    /// Why it was not applied.
    pub reason: Reason,
}

/// What `gather` names: a mine by id, or a tree by tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum GatherTarget {
    /// A gold mine's id.
    Mine(i64),
    /// A tree tile.
    Tree {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
    },
}

/// A well-formed order, before it is checked against the state. Numbers are
/// kept as sent (saturated to `i64`), so checking can say what is wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(tag = "do", rename_all = "snake_case")]
pub enum Order {
    /// Walk to a tile.
    Move {
        /// Column.
        x: i64,
        /// Row.
        y: i64,
    },
    /// Chase and hit an enemy unit or building.
    Attack {
        /// The enemy's id.
        target: i64,
    },
    /// Mine gold or fell a tree, carry loads home, repeat.
    Gather {
        /// The mine or the tree.
        target: GatherTarget,
    },
    /// Walk next to a footprint and build there.
    Build {
        /// What to build.
        code: Kind,
        /// Footprint's top-left column.
        x: i64,
        /// Footprint's top-left row.
        y: i64,
    },
    /// Queue a unit in a building.
    Train {
        /// What to train.
        code: Kind,
    },
    /// Drop the current order.
    Stop,
}

/// One action of a reply as read: the unit it names (an integer, saturated
/// to `i64`) and the order, or why it is not a well-formed order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RawAction {
    /// `unit`, if it is an integer.
    pub unit: Option<i64>,
    /// The order, or `BadAction` / `UnknownOrder` / `UnknownCode`.
    pub order: Result<Order, Reason>,
}

/// A parsed `act` reply: its tick and its first 32 actions (the rest are
/// dropped unread).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActReply {
    /// The tick the bot answers (a reply for another tick is ignored).
    pub tick: i64,
    /// At most [`ACTION_LIMIT`] actions, in the order sent.
    pub actions: Vec<RawAction>,
}

/// An accepted action, as the record keeps it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accepted {
    /// Its index in the reply's `actions`.
    pub index: u32,
    /// The unit or building ordered.
    pub unit: u32,
    /// The order.
    #[serde(flatten)]
    pub order: Order,
}

/// An integer JSON number, saturated to `i64`; `None` for anything else
/// (fractions, strings…).
fn int(value: &Value) -> Option<i64> {
    match value {
        Value::Number(n) => n.as_i64().or_else(|| n.as_u64().map(|_| i64::MAX)),
        _ => None,
    }
}

fn field(object: &JsonMap<String, Value>, name: &str) -> Result<i64, Reason> {
    object.get(name).and_then(int).ok_or(Reason::BadAction)
}

fn code(object: &JsonMap<String, Value>) -> Result<Kind, Reason> {
    let code = object.get("code").and_then(Value::as_str).ok_or(Reason::BadAction)?;
    Kind::from_code(code).ok_or(Reason::UnknownCode)
}

/// Reads one element of `actions`. Never fails: a bad element is a
/// [`RawAction`] carrying its reason.
pub fn parse_action(value: &Value) -> RawAction {
    let Some(object) = value.as_object() else {
        return RawAction {
            unit: None,
            order: Err(Reason::BadAction),
        };
    };
    let unit = object.get("unit").and_then(int);
    let order = match object.get("do").and_then(Value::as_str) {
        None => Err(Reason::BadAction),
        Some("move") => field(object, "x").and_then(|x| {
            Ok(Order::Move {
                x,
                y: field(object, "y")?,
            })
        }),
        Some("attack") => field(object, "target").map(|target| Order::Attack { target }),
        Some("gather") => match object.get("target") {
            Some(Value::Object(tile)) => field(tile, "x").and_then(|x| {
                Ok(Order::Gather {
                    target: GatherTarget::Tree {
                        x,
                        y: field(tile, "y")?,
                    },
                })
            }),
            Some(other) => int(other)
                .map(|id| Order::Gather {
                    target: GatherTarget::Mine(id),
                })
                .ok_or(Reason::BadAction),
            None => Err(Reason::BadAction),
        },
        Some("build") => field(object, "x").and_then(|x| {
            let y = field(object, "y")?;
            Ok(Order::Build {
                code: code(object)?,
                x,
                y,
            })
        }),
        Some("train") => code(object).map(|code| Order::Train { code }),
        Some("stop") => Ok(Order::Stop),
        Some(_) => Err(Reason::UnknownOrder),
    };
    RawAction { unit, order }
}

/// Parses an `act` reply line. Errors (a bad reply, which loses the game)
/// only for a line that is not a JSON object, a `t` other than `"act"`, or a
/// missing or mistyped `tick` or `actions`; bad individual actions are kept
/// for checking. Never panics.
pub fn parse_reply(line: &str) -> Result<ActReply, ReplyError> {
    let reply = object(line)?;
    if let Some(t) = reply.get("t")
        && t.as_str() != Some("act")
    {
        return Err(ReplyError::WrongType {
            field: "t",
            expected: "\"act\"",
            found: short_json(t),
        });
    }
    let tick = match reply.get("tick") {
        None => return Err(ReplyError::MissingField("tick")),
        Some(value) => int(value).ok_or_else(|| ReplyError::WrongType {
            field: "tick",
            expected: "an integer",
            found: short_json(value),
        })?,
    };
    let actions = match reply.get("actions") {
        None => return Err(ReplyError::MissingField("actions")),
        Some(Value::Array(actions)) => actions.iter().take(ACTION_LIMIT).map(parse_action).collect(),
        Some(other) => {
            return Err(ReplyError::WrongType {
                field: "actions",
                expected: "an array",
                found: short_json(other),
            });
        }
    };
    Ok(ActReply { tick, actions })
}

impl Skirmish {
    /// Checks `reply` for `side` action by action and applies the accepted
    /// orders (a `train` pays at once). Returns what was accepted and the
    /// rejections, by index.
    pub(super) fn apply_reply(&mut self, side: crate::Side, reply: &ActReply) -> (Vec<Accepted>, Vec<Rejection>) {
        let owned = |game: &Skirmish, unit: Option<i64>| {
            unit.and_then(|id| u32::try_from(id).ok())
                .filter(|&id| game.entity(id).is_some_and(|e| e.side == side))
        };
        let mut last: Vec<(u32, usize)> = Vec::new();
        for (index, action) in reply.actions.iter().enumerate().take(ACTION_LIMIT) {
            if let Some(id) = owned(self, action.unit) {
                match last.iter_mut().find(|(unit, _)| *unit == id) {
                    Some(entry) => entry.1 = index,
                    None => last.push((id, index)),
                }
            }
        }
        let mut accepted = Vec::new();
        let mut rejected = Vec::new();
        for (index, action) in reply.actions.iter().enumerate().take(ACTION_LIMIT) {
            let result = match (action.unit, owned(self, action.unit)) {
                (None, _) => Err(Reason::BadAction),
                (Some(_), None) => Err(Reason::NotOwner),
                (Some(_), Some(id)) if !last.contains(&(id, index)) => Err(Reason::Superseded),
                (Some(_), Some(id)) => action
                    .order
                    .and_then(|order| self.check(side, id, &order).map(|()| (id, order))),
            };
            match result {
                Ok((unit, order)) => {
                    self.give(unit, &order);
                    accepted.push(Accepted {
                        index: index as u32,
                        unit,
                        order,
                    });
                }
                Err(reason) => rejected.push(Rejection {
                    index: index as u32,
                    reason,
                }),
            }
        }
        (accepted, rejected)
    }

    /// Checks one well-formed order for the side's own `unit` against the
    /// current state (as the side's observation showed it).
    pub(super) fn check(&self, side: crate::Side, unit: u32, order: &Order) -> Result<(), Reason> {
        let e = self.entity(unit).filter(|e| e.side == side).ok_or(Reason::NotOwner)?;
        let building = e.kind.is_building();
        let mobile = || if building { Err(Reason::WrongUnit) } else { Ok(()) };
        let peasant = || {
            if e.kind == Kind::Peasant {
                Ok(())
            } else {
                Err(Reason::WrongUnit)
            }
        };
        let free = || if e.busy() { Err(Reason::Busy) } else { Ok(()) };
        let on_map = |x: i64, y: i64| {
            if self.map.contains(x, y) {
                Ok(())
            } else {
                Err(Reason::OutOfMap)
            }
        };
        let bank = self.bank[side.index()];
        let afford = |kind: Kind| {
            let stats = kind.stats();
            if bank.gold >= stats.gold && bank.lumber >= stats.lumber {
                Ok(())
            } else {
                Err(Reason::NoResources)
            }
        };
        match *order {
            Order::Move { x, y } => {
                mobile()?;
                free()?;
                on_map(x, y)
            }
            Order::Stop => {
                mobile()?;
                free()
            }
            Order::Attack { target } => {
                mobile()?;
                free()?;
                let target = u32::try_from(target).ok();
                if target.is_some_and(|id| self.all_mines.iter().any(|m| m.0 == id)) {
                    return Err(Reason::BadTarget);
                }
                match target.and_then(|id| self.entity(id)) {
                    Some(t) if t.side == side => Err(Reason::BadTarget),
                    Some(t) if self.sees(side, t.at, t.size()) => Ok(()),
                    _ => Err(Reason::OutOfVision),
                }
            }
            Order::Gather { target } => {
                peasant()?;
                free()?;
                match target {
                    GatherTarget::Mine(id) => {
                        let id = u32::try_from(id).map_err(|_| Reason::BadTarget)?;
                        let (_, at) = *self.all_mines.iter().find(|m| m.0 == id).ok_or(Reason::BadTarget)?;
                        if !self.sees(side, at, MINE_SIZE as i32) {
                            Err(Reason::OutOfVision)
                        } else if self.mine(id).is_none() {
                            Err(Reason::BadTarget)
                        } else {
                            Ok(())
                        }
                    }
                    GatherTarget::Tree { x, y } => {
                        on_map(x, y)?;
                        let (x, y) = (x as i32, y as i32);
                        if !self.sees_tile(side, x, y) {
                            Err(Reason::OutOfVision)
                        } else if self.index(x, y).map(|i| self.terrain[i]) != Some(super::map::Terrain::Tree) {
                            Err(Reason::NotATree)
                        } else {
                            Ok(())
                        }
                    }
                }
            }
            Order::Build { code, x, y } => {
                peasant()?;
                free()?;
                if !code.is_building() {
                    return Err(Reason::CannotMake);
                }
                let size = i64::from(code.stats().size);
                on_map(x, y)?;
                on_map(x.saturating_add(size - 1), y.saturating_add(size - 1))?;
                let (x, y, size) = (x as i32, y as i32, size as i32);
                if !self.sees_all(side, (x, y), size) {
                    return Err(Reason::OutOfVision);
                }
                let clear = (y..y + size).all(|ty| (x..x + size).all(|tx| self.walkable(tx, ty)));
                if !clear {
                    return Err(Reason::Blocked);
                }
                afford(code)
            }
            Order::Train { code } => {
                if e.kind.trains().is_empty() {
                    return Err(Reason::WrongUnit);
                }
                if !e.kind.trains().contains(&code) {
                    return Err(Reason::CannotMake);
                }
                if !e.built {
                    return Err(Reason::NotReady);
                }
                if e.queue.len() >= QUEUE_LIMIT {
                    return Err(Reason::QueueFull);
                }
                afford(code)
            }
        }
    }

    /// Applies a checked order to `unit`.
    pub(super) fn give(&mut self, unit: u32, order: &Order) {
        let Some(i) = self.find(unit) else { return };
        let side = self.entities[i].side;
        let carrying = self.entities[i].carry.is_some();
        let job = match *order {
            Order::Move { x, y } => Job::Move((x as i32, y as i32)),
            Order::Stop => Job::Idle,
            Order::Attack { target } => {
                let id = target as u32;
                let (seen, size) = self.entity(id).map_or(((0, 0), 1), |t| (t.at, t.size()));
                Job::Attack { target: id, seen, size }
            }
            Order::Gather { target } => {
                let source = match target {
                    GatherTarget::Mine(id) => Source::Mine(id as u32),
                    GatherTarget::Tree { x, y } => Source::Tree((x as i32, y as i32)),
                };
                let phase = if carrying { Phase::ToHall(None) } else { Phase::ToSource };
                Job::Gather { source, phase }
            }
            Order::Build { code, x, y } => Job::Build {
                kind: code,
                at: (x as i32, y as i32),
                site: None,
            },
            Order::Train { code } => {
                let stats = code.stats();
                let bank = &mut self.bank[side.index()];
                bank.gold = bank.gold.saturating_sub(stats.gold);
                bank.lumber = bank.lumber.saturating_sub(stats.lumber);
                self.entities[i].queue.push(code);
                return;
            }
        };
        let e = &mut self.entities[i];
        e.job = job;
        e.path.clear();
        e.path_goal = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_level_errors_are_reply_errors() {
        assert!(matches!(parse_reply("nope"), Err(ReplyError::NotJson { .. })));
        assert!(matches!(parse_reply("[1]"), Err(ReplyError::NotAnObject(_))));
        assert_eq!(parse_reply(r#"{"actions":[]}"#), Err(ReplyError::MissingField("tick")));
        assert_eq!(parse_reply(r#"{"tick":1}"#), Err(ReplyError::MissingField("actions")));
        assert!(matches!(
            parse_reply(r#"{"tick":"1","actions":[]}"#),
            Err(ReplyError::WrongType { field: "tick", .. })
        ));
        assert!(matches!(
            parse_reply(r#"{"tick":1.5,"actions":[]}"#),
            Err(ReplyError::WrongType { field: "tick", .. })
        ));
        assert!(matches!(
            parse_reply(r#"{"tick":1,"actions":{}}"#),
            Err(ReplyError::WrongType { field: "actions", .. })
        ));
        assert!(matches!(
            parse_reply(r#"{"t":"obs","tick":1,"actions":[]}"#),
            Err(ReplyError::WrongType { field: "t", .. })
        ));
        let deep = "[".repeat(10_000);
        assert!(parse_reply(&deep).is_err());
    }

    #[test]
    fn bad_actions_are_kept_with_their_reason() {
        let reply = parse_reply(
            r#"{"t":"act","tick":18446744073709551615,"actions":[
              1, {"unit":"5","do":"stop"}, {"unit":5}, {"unit":5,"do":"dance"},
              {"unit":5,"do":"move","x":1.5,"y":2}, {"unit":5,"do":"train","code":"hxxx"},
              {"unit":-3,"do":"move","x":-1,"y":18446744073709551615},
              {"unit":5,"do":"gather","target":{"x":1,"y":2}}, {"unit":5,"do":"gather","target":7},
              {"unit":5,"do":"gather","target":"7"}, {"unit":5,"do":"build","code":"hbar","x":3,"y":4},
              {"unit":5,"do":"move","x":1,"y":99999999999999999999}
            ]}"#,
        )
        .expect("well-formed line");
        assert_eq!(reply.tick, i64::MAX);
        let orders: Vec<_> = reply.actions.iter().map(|a| (a.unit, a.order)).collect();
        assert_eq!(orders[0], (None, Err(Reason::BadAction)));
        assert_eq!(orders[1], (None, Ok(Order::Stop)));
        assert_eq!(orders[2], (Some(5), Err(Reason::BadAction)));
        assert_eq!(orders[3], (Some(5), Err(Reason::UnknownOrder)));
        assert_eq!(orders[4], (Some(5), Err(Reason::BadAction)));
        assert_eq!(orders[5], (Some(5), Err(Reason::UnknownCode)));
        assert_eq!(orders[6], (Some(-3), Ok(Order::Move { x: -1, y: i64::MAX })));
        assert_eq!(
            orders[7].1,
            Ok(Order::Gather {
                target: GatherTarget::Tree { x: 1, y: 2 }
            })
        );
        assert_eq!(
            orders[8].1,
            Ok(Order::Gather {
                target: GatherTarget::Mine(7)
            })
        );
        assert_eq!(orders[9].1, Err(Reason::BadAction));
        assert_eq!(
            orders[10].1,
            Ok(Order::Build {
                code: Kind::Barracks,
                x: 3,
                y: 4
            })
        );
    }

    #[test]
    fn only_the_first_32_actions_are_read() {
        let actions = vec![r#"{"unit":1,"do":"stop"}"#; 100].join(",");
        let reply = parse_reply(&format!(r#"{{"tick":0,"actions":[{actions}]}}"#)).expect("valid");
        assert_eq!(reply.actions.len(), ACTION_LIMIT);
    }

    #[test]
    fn accepted_orders_serialize_like_actions() {
        let accepted = Accepted {
            index: 2,
            unit: 9,
            order: Order::Gather {
                target: GatherTarget::Tree { x: 3, y: 4 },
            },
        };
        let json = serde_json::to_string(&accepted).expect("serializable");
        assert_eq!(json, r#"{"index":2,"unit":9,"do":"gather","target":{"x":3,"y":4}}"#);
        assert_eq!(serde_json::from_str::<Accepted>(&json).ok(), Some(accepted));
        let reason = serde_json::to_string(&Reason::OutOfVision).expect("serializable");
        assert_eq!(reason, "\"out_of_vision\"");
        assert_eq!(Reason::NotATree.as_str(), "not_a_tree");
    }
}
