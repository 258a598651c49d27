//! Hostile loops: tiny bots that never answer, each burning fuel in its own
//! way. Each must end as a `timeout` charged exactly its move's budget,
//! quickly, and never by the wall-clock backstop.

/// A bot that reads its first request and then runs `body` in a loop.
fn looping_bot(setup: &str, body: &str, extra: &str) -> String {
    format!(
        r#"(module
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  {extra}
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 1024))
    (i32.store (i32.const 4) (i32.const 4096))
    {setup}
    (loop $l {body} (br $l))))"#
    )
}

/// Reads the request before looping.
const READ: &str = "(drop (call $fd_read (i32.const 0) (i32.const 0) (i32.const 1) (i32.const 16)))";
/// Grows memory to the 256 MiB limit.
const GROW: &str = "(drop (memory.grow (i32.const 4095)))";

/// `(name, WAT)` of every hostile loop.
pub fn corpus() -> Vec<(&'static str, String)> {
    vec![
        ("plain_loop", looping_bot("", "", "")),
        ("loop_after_reading", looping_bot(READ, "", "")),
        (
            "fill_loop",
            looping_bot(
                &format!("{READ} {GROW}"),
                "(memory.fill (i32.const 0) (i32.const 7) (i32.const 268435456))",
                "",
            ),
        ),
        (
            "copy_loop",
            looping_bot(
                &format!("{READ} {GROW}"),
                "(memory.copy (i32.const 0) (i32.const 134217728) (i32.const 134217728))",
                "",
            ),
        ),
        (
            "table_loop",
            looping_bot(
                READ,
                "(table.fill $t (i32.const 0) (ref.null func) (i32.const 100000)) \
                 (table.copy $t $t (i32.const 0) (i32.const 50000) (i32.const 50000))",
                "(table $t 100000 funcref)",
            ),
        ),
    ]
}
