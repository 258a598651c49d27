//! The disk caches' bounds: least recently used entries go, what went is
//! compiled again, and processes sharing a folder survive each other's
//! trims.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use arbiter_sandbox::{Sandbox, SandboxConfig};

use crate::support::{FUEL, config, env, wasm, wat_bot};

/// The echo bot with a function of its own, so that each `n` is a
/// different module (and brings a compiled function of its own).
fn variant(n: u32) -> Vec<u8> {
    wasm(&wat_bot(
        "(loop $l (call $echo) (br $l))",
        &format!("(func $variant (result i32) (i32.const {n}))"),
    ))
}

/// Bytes a file is counted as: whole 4 KiB blocks.
fn blocks(len: u64) -> u64 {
    len.div_ceil(4096) * 4096
}

/// The digests of the artifacts in `dir`.
fn artifacts(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .expect("the cache folder")
        .flatten()
        .filter_map(|f| {
            let name = f.file_name().into_string().ok()?;
            let stem = name.strip_suffix(".cwasm")?;
            Some(stem.split('-').next()?.to_string())
        })
        .collect()
}

/// Bytes of the artifacts in `dir`, counted as the bound counts them.
fn artifact_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .expect("the cache folder")
        .flatten()
        .filter(|f| f.path().extension().is_some_and(|e| e == "cwasm"))
        .map(|f| blocks(f.metadata().expect("metadata").len()))
        .sum()
}

/// Bytes of the compiled functions in `dir`, counted as the bound counts
/// them (temporary files aside).
fn function_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for top in std::fs::read_dir(dir).expect("the cache folder").flatten() {
        if !top.file_name().to_string_lossy().starts_with("functions-") {
            continue;
        }
        for sub in std::fs::read_dir(top.path()).expect("functions").flatten() {
            for file in std::fs::read_dir(sub.path()).expect("a subfolder").flatten() {
                if !file.file_name().to_string_lossy().starts_with('.') {
                    total += blocks(file.metadata().expect("metadata").len());
                }
            }
        }
    }
    total
}

/// What one artifact of [`variant`] takes, and the compiled functions of
/// the first one compiled: compiled once in a folder of their own.
fn one_variant_bytes() -> (u64, u64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        instance_slots: 1,
        ..config()
    })
    .expect("sandbox");
    sb.load(&variant(1000)).expect("compiles");
    (artifact_bytes(dir.path()), function_bytes(dir.path()))
}

/// Lets file times tell apart what happens next, even on a file system
/// whose times are coarse.
fn tick() {
    std::thread::sleep(Duration::from_millis(20));
}

/// The bot replies: it runs, whether or not its artifact is still on disk.
fn runs(sb: &Sandbox, module: &arbiter_sandbox::BotModule) {
    let mut bot = sb.instantiate(module, env(1)).expect("instantiates");
    assert_eq!(bot.turn(b"still here", FUEL).expect("replies").line, b"still here");
}

/// With room for three artifacts, a fourth removes the least recently
/// used; loading a module again (from memory) counts as a use; a module
/// whose artifact was removed keeps running, and loads again, compiled
/// anew, in a sandbox that never had it.
#[test]
fn a_full_module_cache_forgets_the_least_recently_used() {
    let (one, _) = one_variant_bytes();
    assert!(one > 0);
    let limit = 3 * one + one / 2;
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        compile_cache_bytes: limit,
        instance_slots: 4,
        ..config()
    };
    let sb = Sandbox::new(cfg.clone()).expect("sandbox");
    let [a, b, c, d, e] = [1, 2, 3, 4, 5].map(variant);
    let [sha_a, sha_b, sha_c, sha_d, sha_e] = [&a, &b, &c, &d, &e].map(|m| sb.inspect(m).expect("valid").sha256);
    let set = |shas: &[&String]| shas.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();

    let mut modules = Vec::new();
    for bytes in [&a, &b, &c] {
        modules.push(sb.load(bytes).expect("compiles"));
        tick();
        assert!(artifact_bytes(dir.path()) <= limit);
    }
    assert_eq!(artifacts(dir.path()), set(&[&sha_a, &sha_b, &sha_c]), "room for three");
    assert_eq!(sb.cache_sizes().modules.evictions, 0);

    // A is used again (from memory): B is now the least recently used.
    sb.load(&a).expect("from memory");
    tick();
    sb.load(&d).expect("compiles");
    tick();
    assert_eq!(
        artifacts(dir.path()),
        set(&[&sha_a, &sha_c, &sha_d]),
        "B, the least recently used, went"
    );
    let sizes = sb.cache_sizes().modules;
    assert_eq!(sizes.evictions, 1);
    assert_eq!(sizes.limit_bytes, limit);
    assert_eq!(sizes.bytes, artifact_bytes(dir.path()), "the count is the folder's");
    assert!(sizes.bytes <= limit * 9 / 10, "trimmed to 90%: {sizes:?}");

    // A found on disk by another sandbox counts as a use too: C goes next.
    let other = Sandbox::new(cfg.clone()).expect("sandbox");
    other.load(&a).expect("from disk");
    assert_eq!(other.cache_stats().disk_hits, 1);
    tick();
    sb.load(&e).expect("compiles");
    assert_eq!(artifacts(dir.path()), set(&[&sha_a, &sha_d, &sha_e]), "C went");
    assert!(artifact_bytes(dir.path()) <= limit);

    // B's artifact is gone, but the module loaded from it still runs.
    runs(&sb, &modules[1]);
    // A sandbox that never had B compiles it again, without an error.
    let fresh = Sandbox::new(cfg).expect("sandbox");
    let again = fresh.load(&b).expect("compiled again");
    assert_eq!(fresh.cache_stats().compiles, 1);
    runs(&fresh, &again);
    assert!(artifacts(dir.path()).contains(&sha_b), "and kept again");
    assert!(artifact_bytes(dir.path()) <= limit);
}

/// A bound of nothing: every compile's own trim removes its artifact at
/// once, as another process's trim could the moment it is in place, and
/// the module loads and runs all the same (it is loaded before it is put
/// in place); its compiled functions go too.
#[test]
fn a_module_trimmed_as_soon_as_it_is_stored_still_loads() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        compile_cache_bytes: 0,
        function_cache_bytes: 0,
        memory_cache_entries: 1,
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    for n in [30, 31, 30] {
        let module = sb.load(&variant(n)).expect("compiles");
        runs(&sb, &module);
        assert!(artifacts(dir.path()).is_empty());
        assert_eq!(function_bytes(dir.path()), 0);
    }
    let stats = sb.cache_stats();
    assert_eq!((stats.compiles, stats.disk_hits), (3, 0), "{stats:?}");
    assert_eq!(sb.cache_sizes().modules.evictions, 3);
}

/// The compiled functions shared between modules are bounded too: each
/// new module's functions take the folder past a bound just above the
/// first module's, and every compile leaves it within the bound, with the
/// sandbox's count equal to the folder's.
#[test]
fn the_function_cache_keeps_to_its_bound() {
    let (_, first) = one_variant_bytes();
    assert!(first > 0, "compiling stores functions");
    let limit = first + 4096;
    let dir = tempfile::tempdir().expect("tempdir");
    let sb = Sandbox::new(SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        function_cache_bytes: limit,
        instance_slots: 2,
        ..config()
    })
    .expect("sandbox");
    for n in 1..=5 {
        let module = sb.load(&variant(n)).expect("compiles");
        let held = function_bytes(dir.path());
        assert!(held <= limit, "{held} > {limit} after module {n}");
        assert_eq!(sb.cache_sizes().functions.bytes, held, "after module {n}");
        runs(&sb, &module);
        tick();
    }
    let sizes = sb.cache_sizes().functions;
    assert!(sizes.evictions > 0, "{sizes:?}");
    assert_eq!(sizes.limit_bytes, limit);
}

/// Two sandboxes on one folder (two worker processes on one machine), each
/// keeping one module in memory, so that loads go to the folder: one
/// removes what the other loaded, which then compiles it again; and both
/// loading and compiling at once, with room for two artifacts, never fail.
#[test]
fn sandboxes_sharing_a_folder_survive_each_others_trims() {
    let (one, _) = one_variant_bytes();
    let dir = tempfile::tempdir().expect("tempdir");
    let cfg = SandboxConfig {
        cache_dir: Some(dir.path().to_path_buf()),
        compile_cache_bytes: 2 * one + one / 2,
        memory_cache_entries: 1,
        instance_slots: 2,
        ..config()
    };
    let first = Sandbox::new(cfg.clone()).expect("sandbox");
    let second = Sandbox::new(cfg).expect("sandbox");

    let x = variant(10);
    let sha_x = first.inspect(&x).expect("valid").sha256;
    first.load(&x).expect("compiles");
    tick();
    for n in 11..14 {
        second.load(&variant(n)).expect("compiles");
        tick();
    }
    assert!(!artifacts(dir.path()).contains(&sha_x), "the second sandbox removed X");
    first.load(&variant(14)).expect("compiles");
    let before = first.cache_stats().compiles;
    let module = first.load(&x).expect("compiled again");
    assert_eq!(first.cache_stats().compiles, before + 1);
    runs(&first, &module);

    // Both at once: every load either finds the artifact or compiles it.
    std::thread::scope(|s| {
        for (sb, order) in [(&first, [20, 21, 22, 23, 20, 22]), (&second, [23, 22, 21, 20, 21, 23])] {
            s.spawn(move || {
                for n in order {
                    let module = sb.load(&variant(n)).unwrap_or_else(|e| panic!("module {n} loads: {e}"));
                    runs(sb, &module);
                }
            });
        }
    });
    assert!(first.cache_sizes().modules.evictions + second.cache_sizes().modules.evictions > 0);
}
