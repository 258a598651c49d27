//! One-shot bot: answers one request and exits; restarted every turn.

fn main() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
    println!("once:{}", line.trim_end());
}
