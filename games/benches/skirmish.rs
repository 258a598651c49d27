//! Skirmish ticks per second on the 48×48 map: two idle sides (the rules'
//! floor), and two in-process scripted bots (observations built, replies
//! written and parsed every tick, as the referee will do).

#[path = "../tests/skirmish_bots/mod.rs"]
mod skirmish_bots;

use arbiter_games::skirmish::{Map, Skirmish, TICK_LIMIT};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skirmish_bots::{Idle, Rusher, play};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let map = Map::builtin("duel48").expect("built-in map");
    let mut group = c.benchmark_group("skirmish/duel48");
    group.sample_size(10);
    group.throughput(Throughput::Elements(u64::from(TICK_LIMIT)));
    group.bench_function("idle_rules_only_3000_ticks", |b| {
        b.iter(|| {
            let mut game = Skirmish::new(map.clone(), 0);
            while game.step([None, None]).is_some() {}
            black_box(game.outcome())
        })
    });
    group.bench_function("idle_bots_3000_ticks", |b| {
        b.iter(|| {
            let mut game = Skirmish::new(map.clone(), 0);
            play(&mut game, [&mut Idle, &mut Idle], TICK_LIMIT, |_| {});
            black_box(game.outcome())
        })
    });
    // Two scripted bots: economy, construction, training, then a clash of
    // armies; about 3 000 ticks with paths, combat and full observations.
    let mut probe = Skirmish::new(map.clone(), 0);
    play(&mut probe, [&mut Rusher::new(), &mut Rusher::new()], TICK_LIMIT, |_| {});
    group.throughput(Throughput::Elements(u64::from(probe.tick())));
    group.bench_function("scripted_bots_full_game", |b| {
        b.iter(|| {
            let mut game = Skirmish::new(map.clone(), 0);
            play(&mut game, [&mut Rusher::new(), &mut Rusher::new()], TICK_LIMIT, |_| {});
            black_box(game.outcome())
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
