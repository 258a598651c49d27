//! The plans that make the three bots, and the bots themselves.

use super::Brain;
use arbiter_sdk::skirmish::{Action, Bot, Observation};
use arbiter_sdk::{Clock, Rng};
/// A strategy: the numbers that make the three bots different.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Peasants wanted (the five of the start included).
    pub peasants: usize,
    /// Peasants felling trees.
    pub woodcutters: usize,
    /// Barracks wanted.
    pub barracks: usize,
    /// Barracks built while gold piles up (500 or more left after
    /// everything else).
    pub max_barracks: usize,
    /// Peasants needed before the first barracks is started.
    pub barracks_after: usize,
    /// One rifleman for every this many footmen (0: footmen only).
    pub riflemen_every: usize,
    /// Starting peasants sent at the enemy's peasants at tick 0.
    pub harassers: usize,
    /// Soldiers the army needs before it attacks (1: each goes at once).
    pub wave: usize,
    /// The attacking army goes home when it is down to fewer soldiers.
    pub retreat_below: usize,
    /// Whether the army holds near home until `counter_tick` or
    /// `counter_army`, taking on only enemies that come near.
    pub hold: bool,
    /// A holding army counter-attacks from this tick on.
    pub counter_tick: u32,
    /// A holding army counter-attacks once it has this many soldiers.
    pub counter_army: usize,
    /// Whether to build a second town hall by another mine.
    pub expand: bool,
}

/// `skirmish-rush`: a worker rush. At tick 0 two peasants walk to the
/// enemy's mine and hit its peasants while another builds a barracks; the
/// town hall trains up to seven peasants, a second barracks comes when gold
/// piles up, and every footman goes for the enemy as soon as it is trained
/// (soldiers first, then peasants, construction sites, buildings).
pub struct Rush(Brain);

impl Rush {
    /// The plan of the rush.
    pub const PLAN: Plan = Plan {
        peasants: 7,
        woodcutters: 1,
        barracks: 1,
        max_barracks: 2,
        barracks_after: 0,
        riflemen_every: 0,
        harassers: 2,
        wave: 1,
        retreat_below: 0,
        hold: false,
        counter_tick: 0,
        counter_army: 0,
        expand: false,
    };

    /// A rush bot (its play does not depend on `rng`).
    pub fn new(rng: Rng) -> Rush {
        Rush(Brain::new(Rush::PLAN, rng))
    }
}

impl Bot for Rush {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}

/// `skirmish-economy`: economy, then an army. Twelve peasants on gold and
/// lumber, farms ahead of the food cap, two barracks (up to four when gold
/// piles up), footmen only; the army waits in front of the town hall until
/// it has eight to ten footmen, then attacks the enemy's start and hunts
/// its buildings, and goes home to regroup when it is down to two.
pub struct Economy(Brain);

impl Economy {
    /// The plan of the economy bot.
    pub const PLAN: Plan = Plan {
        peasants: 12,
        woodcutters: 2,
        barracks: 2,
        max_barracks: 4,
        barracks_after: 8,
        riflemen_every: 0,
        harassers: 0,
        wave: 8,
        retreat_below: 3,
        hold: false,
        counter_tick: 0,
        counter_army: 0,
        expand: false,
    };

    /// An economy bot; `rng` sets the size of its attack waves.
    pub fn new(rng: Rng) -> Economy {
        Economy(Brain::new(Economy::PLAN, rng))
    }
}

impl Bot for Economy {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}

/// `skirmish-defence`: a defensive bot. Fifteen peasants, a second town
/// hall by another mine when the first runs low, two barracks (up to four
/// when gold piles up) training footmen and riflemen one for one. The army
/// holds in front of the town hall and takes on whatever comes within
/// reach of the base (peasants help when it is outnumbered); it
/// counter-attacks late (from tick 1 800 to 2 000 with ten to twelve
/// soldiers, or as soon as it has 24) and hunts the enemy's buildings,
/// going home again when it is down to three.
pub struct Defence(Brain);

impl Defence {
    /// The plan of the defensive bot.
    pub const PLAN: Plan = Plan {
        peasants: 15,
        woodcutters: 3,
        barracks: 2,
        max_barracks: 4,
        barracks_after: 8,
        riflemen_every: 1,
        harassers: 0,
        wave: 10,
        retreat_below: 4,
        hold: true,
        counter_tick: 1_800,
        counter_army: 24,
        expand: true,
    };

    /// A defensive bot; `rng` sets the tick of its counter-attack.
    pub fn new(rng: Rng) -> Defence {
        Defence(Brain::new(Defence::PLAN, rng))
    }
}

impl Bot for Defence {
    fn act(&mut self, observation: &Observation, _clock: &Clock) -> Vec<Action> {
        self.0.act(observation)
    }
}
