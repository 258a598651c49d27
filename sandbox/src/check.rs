//! Module checks that need no compilation: size, format, validation, imports,
//! exports and the size of the largest function body.

use wasmtime::wasmparser::{CompositeInnerType, ExternalKind, Parser, Payload, TypeRef, ValType};

use crate::config::SandboxConfig;
use crate::error::ModuleError;

/// Every `wasi_snapshot_preview1` function the host provides, with its core
/// signature: parameter letters (`i` = i32, `I` = i64) and result letters.
pub(crate) const WASI_FUNCTIONS: &[(&str, &str, &str)] = &[
    ("args_get", "ii", "i"),
    ("args_sizes_get", "ii", "i"),
    ("environ_get", "ii", "i"),
    ("environ_sizes_get", "ii", "i"),
    ("clock_res_get", "ii", "i"),
    ("clock_time_get", "iIi", "i"),
    ("fd_advise", "iIIi", "i"),
    ("fd_allocate", "iII", "i"),
    ("fd_close", "i", "i"),
    ("fd_datasync", "i", "i"),
    ("fd_fdstat_get", "ii", "i"),
    ("fd_fdstat_set_flags", "ii", "i"),
    ("fd_fdstat_set_rights", "iII", "i"),
    ("fd_filestat_get", "ii", "i"),
    ("fd_filestat_set_size", "iI", "i"),
    ("fd_filestat_set_times", "iIIi", "i"),
    ("fd_pread", "iiiIi", "i"),
    ("fd_prestat_get", "ii", "i"),
    ("fd_prestat_dir_name", "iii", "i"),
    ("fd_pwrite", "iiiIi", "i"),
    ("fd_read", "iiii", "i"),
    ("fd_readdir", "iiiIi", "i"),
    ("fd_renumber", "ii", "i"),
    ("fd_seek", "iIii", "i"),
    ("fd_sync", "i", "i"),
    ("fd_tell", "ii", "i"),
    ("fd_write", "iiii", "i"),
    ("path_create_directory", "iii", "i"),
    ("path_filestat_get", "iiiii", "i"),
    ("path_filestat_set_times", "iiiiIIi", "i"),
    ("path_link", "iiiiiii", "i"),
    ("path_open", "iiiiiIIii", "i"),
    ("path_readlink", "iiiiii", "i"),
    ("path_remove_directory", "iii", "i"),
    ("path_rename", "iiiiii", "i"),
    ("path_symlink", "iiiii", "i"),
    ("path_unlink_file", "iii", "i"),
    ("poll_oneoff", "iiii", "i"),
    ("proc_exit", "i", ""),
    ("proc_raise", "i", "i"),
    ("random_get", "ii", "i"),
    ("sched_yield", "", "i"),
    ("sock_accept", "iii", "i"),
    ("sock_recv", "iiiiii", "i"),
    ("sock_send", "iiiii", "i"),
    ("sock_shutdown", "ii", "i"),
];

/// The module namespace of every import a bot may have.
pub(crate) const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// What kind of binary a bot is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ModuleKind {
    /// A core module, a WASI preview-1 command (`_start`).
    Core,
    /// A WASI 0.2 command component (`wasi:cli/run`).
    Component,
}

/// What [`Sandbox::inspect`](crate::Sandbox::inspect) learned about a module.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ModuleInfo {
    /// Core module or component.
    pub kind: ModuleKind,
    /// Size of the module in bytes.
    pub size_bytes: usize,
    /// SHA-256 of the module, lowercase hex.
    pub sha256: String,
    /// Names of the `wasi_snapshot_preview1` functions a module imports,
    /// or the interfaces a component imports (`wasi:io/streams@0.2.3`).
    pub imports: Vec<String>,
    /// Number of functions it defines (in all its core modules).
    pub functions: usize,
    /// Size in bytes of its largest function body.
    pub largest_function_body: usize,
    /// Minimum size of its memory (all its memories) in bytes.
    pub memory_min_bytes: u64,
    /// Languages and tools that made it, as its `producers` sections name
    /// them (e.g. `componentize-py 0.25.1`); empty when it has none.
    pub producers: Vec<String>,
}

impl ModuleInfo {
    /// What the binary is, in words for its author: `WASI preview-1 module`,
    /// or `WASI 0.2 component, Python (componentize-py 0.25.1)` when its
    /// producers name a known tool.
    pub fn describe(&self) -> String {
        match self.kind {
            ModuleKind::Core => "WASI preview-1 module".to_string(),
            ModuleKind::Component => {
                const TOOLS: &[(&str, &str)] = &[
                    ("componentize-py", "Python"),
                    ("componentize-js", "JavaScript"),
                    ("componentizejs", "JavaScript"),
                ];
                let known = self.producers.iter().find_map(|p| {
                    TOOLS
                        .iter()
                        .find(|(tool, _)| p.to_ascii_lowercase().starts_with(tool))
                        .map(|(_, language)| format!(", {language} ({p})"))
                });
                format!("WASI 0.2 component{}", known.unwrap_or_default())
            }
        }
    }
}

fn sig(params: &[ValType], results: &[ValType]) -> String {
    let name = |v: &ValType| match v {
        ValType::I32 => "i32".to_string(),
        ValType::I64 => "i64".to_string(),
        ValType::F32 => "f32".to_string(),
        ValType::F64 => "f64".to_string(),
        ValType::V128 => "v128".to_string(),
        ValType::Ref(r) => format!("{r}"),
    };
    let p: Vec<String> = params.iter().map(name).collect();
    let r: Vec<String> = results.iter().map(name).collect();
    format!("({}) -> ({})", p.join(", "), r.join(", "))
}

fn letters(s: &str) -> Vec<ValType> {
    s.chars()
        .map(|c| if c == 'I' { ValType::I64 } else { ValType::I32 })
        .collect()
}

fn invalid(e: impl std::fmt::Display) -> ModuleError {
    ModuleError::Invalid(e.to_string())
}

/// Runs every check that needs no compilation.
pub(crate) fn check(engine: &wasmtime::Engine, config: &SandboxConfig, wasm: &[u8]) -> Result<ModuleInfo, ModuleError> {
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        return Err(ModuleError::NotWasm);
    }
    if wasm[6..8] != [0, 0] {
        // A component: its version field is the layer and an encoding.
        if wasm[6..8] == [1, 0] {
            return crate::component::check(config, wasm);
        }
        return Err(ModuleError::ComponentLayer {
            layer: u32::from_le_bytes([wasm[4], wasm[5], wasm[6], wasm[7]]),
        });
    }
    if wasm.len() > config.max_module_bytes {
        return Err(ModuleError::TooLarge {
            size: wasm.len(),
            limit: config.max_module_bytes,
        });
    }
    if wasm[4..8] != [1, 0, 0, 0] {
        return Err(ModuleError::Invalid(format!(
            "unknown binary version {:?}",
            &wasm[4..8]
        )));
    }

    let mut types: Vec<Option<(Vec<ValType>, Vec<ValType>)>> = Vec::new();
    // Type index of every function, imports first.
    let mut funcs: Vec<u32> = Vec::new();
    let mut imported_funcs = 0u32;
    let mut imports = Vec::new();
    let mut memories: Vec<wasmtime::wasmparser::MemoryType> = Vec::new();
    let mut tables = 0usize;
    let mut start_export = None;
    let mut has_memory_export = false;
    let mut largest = 0usize;
    let mut body_index = 0u32;

    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(invalid)? {
            Payload::TypeSection(reader) => {
                for group in reader {
                    for sub in group.map_err(invalid)?.into_types() {
                        types.push(match &sub.composite_type.inner {
                            CompositeInnerType::Func(f) => Some((f.params().to_vec(), f.results().to_vec())),
                            _ => None,
                        });
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import.map_err(invalid)?;
                    let forbidden = || ModuleError::ForbiddenImport {
                        module: import.module.to_string(),
                        name: import.name.to_string(),
                    };
                    if import.module != WASI_MODULE {
                        return Err(forbidden());
                    }
                    let TypeRef::Func(ty) = import.ty else {
                        return Err(forbidden());
                    };
                    let Some((_, params, results)) = WASI_FUNCTIONS.iter().find(|(n, _, _)| *n == import.name) else {
                        return Err(forbidden());
                    };
                    let (want_p, want_r) = (letters(params), letters(results));
                    let found = types
                        .get(ty as usize)
                        .and_then(|t| t.as_ref())
                        .ok_or_else(|| invalid("import refers to an undefined function type"))?;
                    if found.0 != want_p || found.1 != want_r {
                        return Err(ModuleError::ImportSignature {
                            name: import.name.to_string(),
                            expected: sig(&want_p, &want_r),
                            found: sig(&found.0, &found.1),
                        });
                    }
                    funcs.push(ty);
                    imported_funcs += 1;
                    imports.push(import.name.to_string());
                }
            }
            Payload::FunctionSection(reader) => {
                for ty in reader {
                    funcs.push(ty.map_err(invalid)?);
                }
            }
            Payload::TableSection(reader) => {
                for table in reader {
                    let table = table.map_err(invalid)?;
                    tables += 1;
                    if table.ty.initial > config.max_table_elements as u64 {
                        return Err(ModuleError::TableTooLarge {
                            elements: table.ty.initial,
                            limit: config.max_table_elements,
                        });
                    }
                }
            }
            Payload::MemorySection(reader) => {
                for memory in reader {
                    memories.push(memory.map_err(invalid)?);
                }
            }
            Payload::StartSection { .. } => return Err(ModuleError::StartSection),
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export.map_err(invalid)?;
                    match (export.name, export.kind) {
                        ("_start", ExternalKind::Func) => start_export = Some(export.index),
                        ("memory", ExternalKind::Memory) => has_memory_export = true,
                        _ => {}
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len();
                if size > config.max_function_body_bytes {
                    return Err(ModuleError::FunctionTooLarge {
                        index: imported_funcs + body_index,
                        size,
                        limit: config.max_function_body_bytes,
                    });
                }
                largest = largest.max(size);
                body_index += 1;
            }
            _ => {}
        }
    }

    if memories.iter().any(|m| m.shared) {
        return Err(ModuleError::SharedMemory);
    }
    if memories.len() > 1 {
        return Err(ModuleError::TooMany {
            what: "memories",
            count: memories.len(),
        });
    }
    if tables > 1 {
        return Err(ModuleError::TooMany {
            what: "tables",
            count: tables,
        });
    }
    let memory_min_bytes = memories.first().map_or(0, |m| {
        let page = m.page_size_log2.map_or(65536u64, |l| 1u64 << l.min(16));
        m.initial.saturating_mul(page)
    });
    if memory_min_bytes > config.max_memory_bytes as u64 {
        return Err(ModuleError::MemoryTooLarge {
            bytes: memory_min_bytes,
            limit: config.max_memory_bytes,
        });
    }

    wasmtime::Module::validate(engine, wasm).map_err(|e| ModuleError::Invalid(format!("{e:#}")))?;

    let start = start_export.ok_or(ModuleError::MissingStart)?;
    let start_ty = funcs
        .get(start as usize)
        .and_then(|t| types.get(*t as usize))
        .and_then(|t| t.as_ref());
    match start_ty {
        Some((p, r)) if p.is_empty() && r.is_empty() => {}
        _ => return Err(ModuleError::StartSignature),
    }
    if !has_memory_export {
        return Err(ModuleError::MissingMemory);
    }

    Ok(ModuleInfo {
        kind: ModuleKind::Core,
        size_bytes: wasm.len(),
        sha256: crate::compile::sha256_hex(wasm),
        imports,
        functions: body_index as usize,
        largest_function_body: largest,
        memory_min_bytes,
        producers: Vec::new(),
    })
}
