//! Scatter and gather: `fd_read` and `fd_write` with several iovecs, as
//! `readv`/`writev` define them.

use crate::support::{FUEL, assert_host_fine, bot, wat_bot};

/// `$scatter_read`: reads stdin into `count` contiguous 4-byte buffers from
/// 2048 (iovec array at 256; traps unless fd_read succeeds) and returns the
/// bytes read.
const SCATTER_READ: &str = r#"
  (func $scatter_read (param $count i32) (result i32)
    (local $i i32)
    (loop $fill
      (i32.store (i32.add (i32.const 256) (i32.mul (local.get $i) (i32.const 8)))
        (i32.add (i32.const 2048) (i32.mul (local.get $i) (i32.const 4))))
      (i32.store (i32.add (i32.const 260) (i32.mul (local.get $i) (i32.const 8))) (i32.const 4))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $fill (i32.lt_u (local.get $i) (local.get $count))))
    (if (call $fd_read (i32.const 0) (i32.const 256) (local.get $count) (i32.const 16))
      (then unreachable))
    (i32.load (i32.const 16)))
"#;

/// Reads a request into `count` 4-byte iovecs, then writes what it read
/// back with one write.
fn scatter_echo(count: u32) -> String {
    let start = format!(
        "(loop $turn (call $write (i32.const 1) (i32.const 2048) (call $scatter_read (i32.const {count}))) (br $turn))"
    );
    wat_bot(&start, SCATTER_READ)
}

#[test]
fn a_read_fills_its_iovecs_in_order() {
    // 5 iovecs (held on the stack) and 12 (on the heap): both fill in order.
    for count in [5, 12] {
        let mut b = bot(&scatter_echo(count));
        let request = &b"abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOP"[..(4 * count - 1) as usize];
        let r = b.turn(request, FUEL).expect("echoes");
        assert_eq!(r.line, request, "{count} iovecs");
        // A request longer than the buffers takes two reads; the second
        // goes on where the first stopped.
        let long = &b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"[..(4 * count + 3) as usize];
        let twice = format!(
            "(call $write (i32.const 1) (i32.const 2048) (call $scatter_read (i32.const {count})))
             (call $write (i32.const 1) (i32.const 2048) (call $scatter_read (i32.const {count})))
             (loop $l (br $l))"
        );
        let mut b = bot(&wat_bot(&twice, SCATTER_READ));
        let r = b.turn(long, FUEL).expect("replies");
        assert_eq!(r.line, long, "{count} iovecs, two reads");
    }
}

#[test]
fn iovec_entries_are_read_before_any_byte_is_copied() {
    // The first buffer lies on the second iovec entry: the request's first
    // 8 bytes overwrite it. The read must still use the entry as it was
    // (2048, 100), as `readv` does; the bot then echoes what landed there.
    let start = r#"
      (i32.store (i32.const 256) (i32.const 264))
      (i32.store (i32.const 260) (i32.const 8))
      (i32.store (i32.const 264) (i32.const 2048))
      (i32.store (i32.const 268) (i32.const 100))
      (if (call $fd_read (i32.const 0) (i32.const 256) (i32.const 2) (i32.const 16))
        (then unreachable))
      (call $write (i32.const 1) (i32.const 2048) (i32.sub (i32.load (i32.const 16)) (i32.const 8)))
      (loop $l (br $l))"#;
    let mut b = bot(&wat_bot(start, ""));
    let r = b.turn(b"AAAAAAAArest", FUEL).expect("replies");
    assert_eq!(r.line, b"rest");
    assert_host_fine();
}

#[test]
fn an_iovec_array_outside_memory_is_efault_and_consumes_nothing() {
    // Memory is 2 pages (131 072 bytes); an array at 131 068 has its one
    // entry's length outside. EFAULT is 21; then a normal read gets all.
    let start = r#"
      (if (i32.ne (call $fd_read (i32.const 0) (i32.const 131068) (i32.const 1) (i32.const 16)) (i32.const 21))
        (then unreachable))
      (if (i32.ne (call $fd_write (i32.const 1) (i32.const 131068) (i32.const 1) (i32.const 48)) (i32.const 21))
        (then unreachable))
      (loop $turn (call $echo) (br $turn))"#;
    let mut b = bot(&wat_bot(start, ""));
    let r = b.turn(b"whole request", FUEL).expect("echoes");
    assert_eq!(r.line, b"whole request");
    assert_host_fine();
}

#[test]
fn a_write_gathers_its_iovecs_in_order() {
    // Three iovecs: "he", "llo" and "\n" from separate places.
    let start = r#"
      (drop (call $read))
      (i32.store (i32.const 256) (i32.const 600))
      (i32.store (i32.const 260) (i32.const 2))
      (i32.store (i32.const 264) (i32.const 700))
      (i32.store (i32.const 268) (i32.const 3))
      (i32.store (i32.const 272) (i32.const 800))
      (i32.store (i32.const 276) (i32.const 1))
      (drop (call $fd_write (i32.const 1) (i32.const 256) (i32.const 3) (i32.const 48)))
      (loop $l (br $l))"#;
    let extra = r#"(data (i32.const 600) "he") (data (i32.const 700) "llo") (data (i32.const 800) "\n")"#;
    let mut b = bot(&wat_bot(start, extra));
    assert_eq!(b.turn(b"x", FUEL).expect("replies").line, b"hello");
}

#[test]
fn a_write_to_an_unknown_fd_is_ebadf_and_the_next_write_works() {
    // EBADF is 8. fd 0 is stdin (not writable); 3 and 7 were never opened.
    // Each refused write must leave the next one whole: "ok" then the echo.
    let start = r#"
      (drop (call $read))
      (i32.store (i32.const 256) (i32.const 600))
      (i32.store (i32.const 260) (i32.const 3))
      (if (i32.ne (call $fd_write (i32.const 0) (i32.const 256) (i32.const 1) (i32.const 48)) (i32.const 8))
        (then unreachable))
      (if (i32.ne (call $fd_write (i32.const 3) (i32.const 256) (i32.const 1) (i32.const 48)) (i32.const 8))
        (then unreachable))
      (if (i32.ne (call $fd_write (i32.const 7) (i32.const 256) (i32.const 1) (i32.const 48)) (i32.const 8))
        (then unreachable))
      (if (call $fd_write (i32.const 1) (i32.const 256) (i32.const 1) (i32.const 48))
        (then unreachable))
      (if (i32.ne (i32.load (i32.const 48)) (i32.const 3))
        (then unreachable))
      (loop $turn (call $echo) (br $turn))"#;
    let extra = r#"(data (i32.const 600) "ok\n")"#;
    let mut b = bot(&wat_bot(start, extra));
    assert_eq!(b.turn(b"first", FUEL).expect("replies").line, b"ok");
    assert_eq!(b.turn(b"second", FUEL).expect("echoes").line, b"second");
    assert_host_fine();
}
