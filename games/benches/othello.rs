//! Move generation and full random games, 8×8 and 10×10.

use arbiter_games::othello::{Mode, Move, Position, squares};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use std::hint::black_box;

/// A small fast generator so the bench measures the rules, not the RNG.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Plays one game of uniformly random legal moves, returning the disc counts.
fn random_game(mode: Mode, rng: &mut XorShift) -> [u32; 2] {
    let mut position = Position::start(mode);
    loop {
        let legal = position.legal_bits();
        if legal == 0 {
            if position.is_over() {
                return position.counts();
            }
            position = position.pass_unchecked();
            continue;
        }
        let pick = (rng.next() % u64::from(legal.count_ones())) as usize;
        let square = squares(legal).nth(pick).unwrap_or(0);
        position = position.place_unchecked(square);
    }
}

fn bench(c: &mut Criterion) {
    for mode in [Mode::Std, Mode::Grand, Mode::Octagon] {
        let start = Position::start(mode);
        c.bench_function(&format!("{mode}/legal_moves"), |b| b.iter(|| black_box(black_box(&start).legal_bits())));
        c.bench_function(&format!("{mode}/perft4"), |b| b.iter(|| black_box(&start).perft(4)));
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        c.bench_function(&format!("{mode}/random_game"), |b| b.iter(|| random_game(mode, &mut rng)));
    }
    let start = Position::start(Mode::Std);
    c.bench_function("std/play_checked", |b| {
        b.iter_batched(|| start, |p| p.play(black_box(Move::Place(19))), BatchSize::SmallInput)
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
