//! Checks of WASI 0.2 command components that need no compilation: size,
//! imports (only interfaces the host provides, [`crate::wasip2::allowed`]),
//! the `wasi:cli/run` export, the core modules' memories and function
//! bodies, and who produced it.

use wasmtime::wasmparser::{KnownCustom, Parser, Payload};

use crate::check::{ModuleInfo, ModuleKind};
use crate::config::SandboxConfig;
use crate::error::ModuleError;

/// The export a command component runs.
pub(crate) const RUN_INTERFACE: &str = "wasi:cli/run";

/// How to build without an import the host refuses, for the producers
/// that add it by default.
fn hint(interface: &str) -> Option<&'static str> {
    if interface.starts_with("wasi:http/") {
        return Some(
            "ComponentJS adds wasi:http unless its HTTP features are disabled: build with `componentize-js -d http fetch-event`",
        );
    }
    if interface.starts_with("wasi:sockets/") {
        return Some("bots have no network; only the line protocol on stdin and stdout");
    }
    None
}

/// `name` split into its interface and version (`wasi:io/poll@0.2.3` gives
/// `wasi:io/poll` and `0.2.3`).
fn split_version(name: &str) -> (&str, Option<&str>) {
    match name.split_once('@') {
        Some((interface, version)) => (interface, Some(version)),
        None => (name, None),
    }
}

/// Whether `version` is a WASI 0.2 release (`0.2.x`, no pre-release).
fn is_wasi_0_2(version: Option<&str>) -> bool {
    version
        .and_then(|v| v.strip_prefix("0.2."))
        .is_some_and(|patch| !patch.is_empty() && patch.bytes().all(|b| b.is_ascii_digit()))
}

fn invalid(e: impl std::fmt::Display) -> ModuleError {
    ModuleError::Invalid(e.to_string())
}

/// Runs every check of a component that needs no compilation.
pub(crate) fn check(config: &SandboxConfig, wasm: &[u8]) -> Result<ModuleInfo, ModuleError> {
    if wasm.len() > config.max_component_bytes {
        return Err(ModuleError::ComponentTooLarge {
            size: wasm.len(),
            limit: config.max_component_bytes,
        });
    }
    let mut imports = Vec::new();
    let mut has_run = false;
    let mut producer = Vec::new();
    let mut functions = 0usize;
    let mut largest = 0usize;
    let mut memory_min_bytes = 0u64;
    // Nesting: 1 inside the component itself, more inside its modules and
    // nested components (whose imports are satisfied inside it).
    let mut depth = 0usize;

    for payload in Parser::new(0).parse_all(wasm) {
        match payload.map_err(invalid)? {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth = depth.saturating_sub(1),
            Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    let name = import.map_err(invalid)?.name.name.to_string();
                    let (interface, version) = split_version(&name);
                    if !crate::wasip2::allowed(interface) || !is_wasi_0_2(version) {
                        return Err(ModuleError::ForbiddenInterface {
                            hint: hint(interface),
                            name,
                        });
                    }
                    if !imports.contains(&name) {
                        imports.push(name);
                    }
                }
            }
            Payload::ComponentExportSection(reader) if depth == 1 => {
                for export in reader {
                    let name = export.map_err(invalid)?.name.name;
                    let (interface, version) = split_version(name);
                    has_run |= interface == RUN_INTERFACE && is_wasi_0_2(version);
                }
            }
            Payload::MemorySection(reader) => {
                for memory in reader {
                    let m = memory.map_err(invalid)?;
                    if m.shared {
                        return Err(ModuleError::SharedMemory);
                    }
                    let page = m.page_size_log2.map_or(65536u64, |l| 1u64 << l.min(16));
                    memory_min_bytes = memory_min_bytes.saturating_add(m.initial.saturating_mul(page));
                }
            }
            Payload::TableSection(reader) => {
                for table in reader {
                    let table = table.map_err(invalid)?;
                    if table.ty.initial > config.max_table_elements as u64 {
                        return Err(ModuleError::TableTooLarge {
                            elements: table.ty.initial,
                            limit: config.max_table_elements,
                        });
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                let size = body.range().len();
                if size > config.max_function_body_bytes {
                    return Err(ModuleError::FunctionTooLarge {
                        index: functions as u32,
                        size,
                        limit: config.max_function_body_bytes,
                    });
                }
                largest = largest.max(size);
                functions += 1;
            }
            Payload::CustomSection(section) => {
                if let KnownCustom::Producers(fields) = section.as_known() {
                    for field in fields.into_iter().flatten() {
                        if field.name == "processed-by" || field.name == "language" {
                            for value in field.values.into_iter().flatten() {
                                let entry = if value.version.is_empty() {
                                    value.name.to_string()
                                } else {
                                    format!("{} {}", value.name, value.version)
                                };
                                if !producer.contains(&entry) {
                                    producer.push(entry);
                                }
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if memory_min_bytes > config.max_memory_bytes as u64 {
        return Err(ModuleError::MemoryTooLarge {
            bytes: memory_min_bytes,
            limit: config.max_memory_bytes,
        });
    }
    if !has_run {
        return Err(ModuleError::MissingRun);
    }
    // componentize-py names itself nowhere in producers sections (its kit's
    // build adds one); its generated code does.
    let python = producer.iter().all(|p| !p.starts_with("componentize-py"))
        && memchr::memmem::find(wasm, b"automatically generated by componentize-py").is_some();
    if python {
        producer.push("componentize-py".to_string());
    }
    Ok(ModuleInfo {
        kind: ModuleKind::Component,
        size_bytes: wasm.len(),
        sha256: crate::compile::sha256_hex(wasm),
        imports,
        functions,
        largest_function_body: largest,
        memory_min_bytes,
        producers: producer,
    })
}
