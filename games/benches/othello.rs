//! Move generation and full random games, 8×8 and 10×10, with the simple
//! mailbox reference of the tests (`reference/...`) as a baseline on 8×8.

#[path = "../tests/support/reference.rs"]
mod reference;

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

/// The same random game on the reference implementation: same generator,
/// same pick among the ascending legal squares.
fn reference_random_game(rng: &mut XorShift) -> [u32; 2] {
    let mut board = reference::Board::start(reference::Kind::Std);
    loop {
        let legal = board.legal_moves();
        if legal.is_empty() {
            if board.is_over() {
                return board.counts();
            }
            board = board.pass().unwrap_or_else(|| unreachable!("a needed pass is legal"));
            continue;
        }
        let pick = (rng.next() % legal.len() as u64) as usize;
        board = board
            .play(legal[pick])
            .unwrap_or_else(|| unreachable!("a legal square is playable"));
    }
}

/// The bitboard rules against the mailbox reference on 8×8, at the start
/// and after a 20-ply seeded game, so one run gives both figures.
fn bench_against_reference(c: &mut Criterion) {
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    let mut midgame = Position::start(Mode::Std);
    for _ in 0..20 {
        let legal = midgame.legal_bits();
        let pick = (rng.next() % u64::from(legal.count_ones().max(1))) as usize;
        midgame = match squares(legal).nth(pick) {
            Some(square) => midgame.place_unchecked(square),
            None => midgame.pass_unchecked(),
        };
    }
    let color = midgame.to_move().code();
    let placed = midgame.placed().map(u32::from);
    let mid_reference = reference::Board::from_cells(reference::Kind::Std, &midgame.board(), color, placed)
        .unwrap_or_else(|| unreachable!("a position's board fits its mode"));
    let start_reference = reference::Board::start(reference::Kind::Std);
    assert_eq!(
        midgame.legal_squares().into_iter().map(usize::from).collect::<Vec<_>>(),
        mid_reference.legal_moves(),
        "both implementations agree before they are timed"
    );

    c.bench_function("std/legal_moves_midgame", |b| {
        b.iter(|| black_box(squares(black_box(&midgame).legal_bits()).count()))
    });
    c.bench_function("reference/std/legal_moves", |b| {
        b.iter(|| black_box(black_box(&start_reference).legal_moves()))
    });
    c.bench_function("reference/std/legal_moves_midgame", |b| {
        b.iter(|| black_box(black_box(&mid_reference).legal_moves()))
    });
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    c.bench_function("reference/std/random_game", |b| {
        b.iter(|| reference_random_game(&mut rng))
    });
}

fn bench(c: &mut Criterion) {
    for mode in [Mode::Std, Mode::Grand, Mode::Octagon] {
        let start = Position::start(mode);
        c.bench_function(&format!("{mode}/legal_moves"), |b| {
            b.iter(|| black_box(black_box(&start).legal_bits()))
        });
        c.bench_function(&format!("{mode}/perft4"), |b| b.iter(|| black_box(&start).perft(4)));
        let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
        c.bench_function(&format!("{mode}/random_game"), |b| {
            b.iter(|| random_game(mode, &mut rng))
        });
    }
    let start = Position::start(Mode::Std);
    c.bench_function("std/play_checked", |b| {
        b.iter_batched(|| start, |p| p.play(black_box(Move::Place(19))), BatchSize::SmallInput)
    });
}

criterion_group!(benches, bench, bench_against_reference);
criterion_main!(benches);
