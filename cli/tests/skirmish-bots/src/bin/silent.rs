//! Reads its first observation and computes forever: it never answers.
fn main() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    let mut x = 1u64;
    loop {
        x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
    }
}
