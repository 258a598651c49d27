//! The skirmish house bots make the same moves as the recorded ones: a
//! fixed set of fixed-seed games is played in-process (as the referee plays
//! them: the observation's line in, the reply line out) and every reply of
//! both sides is folded into a digest, kept at intervals, compared with
//! `tests/golden/skirmish_replies.txt`.
//!
//! A change that is meant to change the bots' play records a new file with
//! `ARBITER_BLESS=1 cargo test -p arbiter-bots --test skirmish_same_moves`;
//! any other change must leave the file as it is.

use arbiter_bots::skirmish::{Defence, Economy, Rush};
use arbiter_sdk::games::Side;
use arbiter_sdk::games::skirmish::{Map, Skirmish, deadline_ms};
use arbiter_sdk::skirmish::{Action, Bot, Observation, answer};
use arbiter_sdk::{Clock, Rng};
use std::fmt::Write as _;
use std::path::PathBuf;

/// Ticks between two recorded digests.
const EVERY: u32 = 250;

/// The games: map and the two sides, each a house bot (without its
/// `skirmish-` prefix) and its seed.
/// A house bot (its name without `skirmish-`) and its seed.
type Seat = (&'static str, u64);

const GAMES: [(&str, Seat, Seat); 8] = [
    ("duel32", ("economy", 2), ("rush", 3)),
    ("duel32", ("defence", 4), ("economy", 5)),
    ("duel32", ("rush", 6), ("defence", 7)),
    ("duel32", ("defence", 8), ("defence", 9)),
    ("duel48", ("economy", 10), ("rush", 11)),
    ("duel48", ("defence", 12), ("economy", 13)),
    ("duel48", ("rush", 14), ("defence", 15)),
    ("duel48", ("economy", 16), ("economy", 17)),
];

/// A house bot by name.
struct Named(Box<dyn Bot>);

impl Bot for Named {
    fn act(&mut self, observation: &Observation, clock: &Clock) -> Vec<Action> {
        self.0.act(observation, clock)
    }
}

fn bot(name: &str, seed: u64) -> Named {
    let rng = Rng::seeded(seed);
    Named(match name {
        "rush" => Box::new(Rush::new(rng)),
        "economy" => Box::new(Economy::new(rng)),
        "defence" => Box::new(Defence::new(rng)),
        _ => panic!("no skirmish house bot called {name}"),
    })
}

/// 64-bit FNV-1a: a digest that stays the same across Rust releases.
#[derive(Clone, Copy)]
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }

    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so that lines cannot run into one another.
        self.0 ^= 0xff;
        self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// Plays one game and writes its record: a line per `EVERY` ticks with the
/// digests of each side's replies so far, and a last line with the end.
fn record(map: &str, first: Seat, second: Seat, out: &mut String) {
    let mut game = Skirmish::new(Map::builtin(map).expect("a built-in map"), first.1);
    let mut bots = [bot(first.0, first.1), bot(second.0, second.1)];
    let mut digests = [Fnv::new(); 2];
    let mut actions = [0usize; 2];
    writeln!(out, "game {map} {}:{} {}:{}", first.0, first.1, second.0, second.1).unwrap();
    while !game.is_over() {
        let deadline = deadline_ms(game.tick());
        let replies = Side::BOTH.map(|side| {
            let line = game.observe(side, deadline).to_line();
            answer(&mut bots[side.index()], &line)
        });
        let parsed = Side::BOTH.map(|side| {
            let reply = &replies[side.index()];
            digests[side.index()].add(reply.as_bytes());
            let parsed = game
                .parse_reply(side, reply)
                .unwrap_or_else(|error| panic!("{side:?} replied {reply}: {error}"));
            actions[side.index()] += parsed.actions.len();
            Some(parsed)
        });
        game.step(parsed).expect("the game goes on");
        if game.tick().is_multiple_of(EVERY) {
            writeln!(
                out,
                "  tick {} actions {:?} digests {:016x} {:016x}",
                game.tick(),
                actions,
                digests[0].0,
                digests[1].0
            )
            .unwrap();
        }
    }
    let outcome = game.outcome().expect("the game is over");
    writeln!(
        out,
        "  end tick {} scores {:?} by {:?} points {:?} actions {:?} digests {:016x} {:016x}",
        game.tick(),
        outcome.scores,
        outcome.reason,
        game.scores(),
        actions,
        digests[0].0,
        digests[1].0
    )
    .unwrap();
}

#[test]
fn the_house_bots_reply_as_recorded() {
    let mut played = String::new();
    for (map, first, second) in GAMES {
        record(map, first, second, &mut played);
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/golden/skirmish_replies.txt");
    if std::env::var_os("ARBITER_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a folder")).expect("the golden folder");
        std::fs::write(&path, &played).expect("the golden file written");
        return;
    }
    let recorded =
        std::fs::read_to_string(&path).expect("tests/golden/skirmish_replies.txt (record it with ARBITER_BLESS=1)");
    if played != recorded {
        let first_difference = played
            .lines()
            .zip(recorded.lines())
            .find(|(now, then)| now != then)
            .map(|(now, then)| format!("now:    {now}\nbefore: {then}"))
            .unwrap_or_else(|| "one record is longer".to_string());
        panic!("the skirmish bots' replies changed; first difference:\n{first_difference}");
    }
}
