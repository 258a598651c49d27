//! Rebuild when the SQL migrations change (they are embedded by
//! `sqlx::migrate!`), and link the executable (and this crate's test
//! programs) with compressed debug sections on ELF targets: the line tables
//! that give backtraces their file:line stay in the file at about a fifth of
//! their size (the standard library's symboliser reads zlib-compressed
//! sections).

fn main() {
    println!("cargo:rerun-if-changed=../migrations");
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    if matches!(
        os.as_str(),
        "linux" | "android" | "freebsd" | "netbsd" | "openbsd" | "dragonfly"
    ) {
        println!("cargo:rustc-link-arg=-Wl,--compress-debug-sections=zlib");
    }
}
