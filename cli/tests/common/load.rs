//! Load on purpose, for tests that show results do not depend on it.

use std::sync::atomic::{AtomicBool, Ordering};

/// Runs `f` while `threads` threads spin on the CPU.
pub fn while_cpu_saturated<T>(threads: usize, f: impl FnOnce() -> T) -> T {
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                let mut x = 1u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..10_000 {
                        x = std::hint::black_box(x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1));
                    }
                }
            });
        }
        let result = f();
        stop.store(true, Ordering::Relaxed);
        result
    })
}
