//! Where a module keeps its C stack, for advice to bot authors.
//!
//! Toolchains built on `wasm-ld` (C and C++ with clang, Zig, Rust) keep a
//! stack in linear memory, separate from WebAssembly's own call stack, and
//! point a mutable `i32` global (`__stack_pointer`, the first global the
//! module defines) at its top. The stack grows down: placed first (below the
//! data, `--stack-first`), an overflow runs below address 0 and traps;
//! placed after the data (wasm-ld's default, with 64 KiB), an overflow
//! silently overwrites the data. Nothing here is a rule the sandbox
//! enforces.

use wasmtime::wasmparser::{DataKind, Operator, Parser, Payload, ValType};

/// The C stack of a module, as its initial stack pointer and data segments
/// tell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StackLayout {
    /// The stack's size in bytes: exact when it is placed first; when it is
    /// after the data, at most this (static data without initial bytes
    /// may sit below it too).
    pub bytes: u64,
    /// Whether the stack is below the data, so an overflow traps.
    pub first: bool,
}

/// The C stack layout of `wasm`, or `None` when it has no stack pointer
/// global or no data to place it against (or does not parse).
pub fn stack_layout(wasm: &[u8]) -> Option<StackLayout> {
    let mut stack_pointer = None;
    let mut data: Option<(u64, u64)> = None;
    for payload in Parser::new(0).parse_all(wasm) {
        match payload.ok()? {
            Payload::GlobalSection(reader) => {
                for global in reader {
                    let global = global.ok()?;
                    if global.ty.mutable && global.ty.content_type == ValType::I32 {
                        stack_pointer = i32_const(&global.init_expr);
                        break;
                    }
                }
            }
            Payload::DataSection(reader) => {
                for segment in reader {
                    let segment = segment.ok()?;
                    if let DataKind::Active { offset_expr, .. } = segment.kind {
                        let start = i32_const(&offset_expr)?;
                        let end = start + segment.data.len() as u64;
                        data = Some(data.map_or((start, end), |(low, high)| (low.min(start), high.max(end))));
                    }
                }
            }
            _ => {}
        }
    }
    let stack_pointer = stack_pointer?;
    let (low, high) = data?;
    // Only what wasm-ld makes counts: a stack of at least a page below the
    // data, or a 16-byte-aligned pointer at least 1 KiB above it. Other
    // toolchains' first mutable global is something else (AssemblyScript's
    // heap pointer inside the data, Go's register global at 0).
    if (MIN_STACK..=low).contains(&stack_pointer) {
        Some(StackLayout {
            bytes: stack_pointer,
            first: true,
        })
    } else if stack_pointer.is_multiple_of(16) && stack_pointer >= high + 1024 {
        Some(StackLayout {
            bytes: stack_pointer - high,
            first: false,
        })
    } else {
        None
    }
}

/// The smallest stack placed first that is taken for one (a page).
const MIN_STACK: u64 = 4096;

/// The value of a constant expression that is a single `i32.const`.
fn i32_const(expr: &wasmtime::wasmparser::ConstExpr<'_>) -> Option<u64> {
    let mut reader = expr.get_operators_reader();
    match reader.read().ok()? {
        Operator::I32Const { value } => Some(u64::from(value as u32)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn module(stack_pointer: u32, data_at: u32) -> Vec<u8> {
        wat::parse_str(format!(
            r#"(module (memory (export "memory") 2)
                 (global $sp (mut i32) (i32.const {stack_pointer}))
                 (data (i32.const {data_at}) "some data")
                 (func (export "_start")))"#
        ))
        .expect("valid text")
    }

    #[test]
    fn a_stack_placed_first_is_below_the_data() {
        let layout = stack_layout(&module(1 << 20, 1 << 20));
        assert_eq!(
            layout,
            Some(StackLayout {
                bytes: 1 << 20,
                first: true
            })
        );
    }

    #[test]
    fn wasm_ld_default_puts_64_kib_after_the_data() {
        // 9 bytes of data at 1024, then 64 KiB of stack from the next
        // 16-byte boundary: the pointer starts at 1040 + 65536.
        let layout = stack_layout(&module(1040 + 65536, 1024)).expect("a layout");
        assert_eq!(
            layout,
            StackLayout {
                bytes: 1040 + 65536 - 1033,
                first: false
            }
        );
    }

    #[test]
    fn other_toolchains_first_global_is_not_a_stack() {
        // AssemblyScript: a heap pointer inside its data.
        assert_eq!(stack_layout(&module(1056, 1036)), None);
        // Go: a register global starting at 0, below its data.
        assert_eq!(stack_layout(&module(0, 36003)), None);
    }

    #[test]
    fn no_stack_pointer_no_layout() {
        let wasm = wat::parse_str(
            r#"(module (memory (export "memory") 1) (data (i32.const 0) "x") (func (export "_start")))"#,
        )
        .expect("valid text");
        assert_eq!(stack_layout(&wasm), None);
        assert_eq!(stack_layout(b"not wasm"), None);
    }
}
