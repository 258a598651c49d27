//! Python and JavaScript bots (WASI 0.2 command components, built from the
//! kits' templates `kits/python/template` and `kits/javascript/template`
//! with their own `build.sh`) against the Rust house bot that plays the
//! same greedy Othello, `othello-greedy`, in the real sandbox. It prints:
//!
//! 1. fuel and real time per move over the same Othello std positions
//!    (requests recorded from in-process matches of `othello-greedy`
//!    against `othello-random`, both legs and sides, passes left out; each
//!    bot gets a fresh instance per recorded game side, whose start is not
//!    counted): median and p90, and the ratios Python/Rust and JS/Rust;
//! 2. compile time of `Sandbox::load`: each language's template from an
//!    empty cache directory (function cache included), then a second,
//!    slightly different bot of the same language (bot B: the template with
//!    its Othello method evaluating every legal move [`EXTRA_PASSES`] more
//!    times, so its digest differs) with the function cache warm from the
//!    first, with `BotModule::compilation()`; and loading the stored
//!    artifact in a new sandbox;
//! 3. what a game's start costs: `instantiate` plus the first turn on a
//!    trivial request (a component is instantiated in its first turn, on
//!    fuel) minus a later turn on the same request, median over
//!    [`INSTANCES`] instances;
//! 4. fuel per greedy evaluation (one flip simulation of one legal move):
//!    bot B's extra fuel over bot A's on the same positions, divided by the
//!    extra evaluations, and how many evaluations fit in the ladder's 1 s
//!    move ([`DEFAULT_FUEL_PER_MS`] fuel per virtual ms).
//!
//! Run with `cargo bench -p arbiter --bench components` (1 to 5 minutes
//! after the build, on 2 cores; the first run also builds the four
//! components, 10 to 20 s each, and may install the producers with the
//! kits' `setup.sh` from PyPI and npm). Components are built under
//! `target/tmp/bench-components/` and reused while the template, the edit
//! and the kit's `setup.sh` (and lock file) are unchanged; the producers
//! live in `target/tmp/kit-cache` (`ARBITER_KIT_CACHE`). Wall-clock figures
//! are only meaningful on an idle machine: the load average is printed
//! before and after. Nothing here asserts on time; the targets are
//! reported as met or not.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use arbiter_games::Variant;
use arbiter_games::othello::{Mode, Request, parse_reply};
use arbiter_referee::wasm::{CLOCK_ORIGIN_NS, bot_seed};
use arbiter_referee::{GameSetup, InProcess, MatchSettings, play_match};
use arbiter_sandbox::{
    BotEnv, BotInstance, BotModule, Compilation, CompilerCommand, DEFAULT_FUEL_PER_MS, Sandbox, SandboxConfig,
};
use arbiter_sdk::Rng;
use sha2::{Digest, Sha256};

/// The arbiter binary: the sandbox's compiler child.
const ARBITER: &str = env!("CARGO_BIN_EXE_arbiter");
/// `target/tmp`: built components, the kit cache, the compile caches.
const TARGET_TMP: &str = env!("CARGO_TARGET_TMPDIR");
/// The Rust counterpart of the templates' greedy Othello.
const RUST_BOT: &str = "othello-greedy";
/// Matches whose requests make the position set (each gives 4 game sides).
const MATCH_SEEDS: [u64; 2] = [2026, 2027];
/// Times every position is played by every bot; real time is the median.
const ROUNDS: usize = 3;
/// Instances measured per bot in section 3.
const INSTANCES: usize = 25;
/// Bot B evaluates every legal move this many more times than bot A.
const EXTRA_PASSES: u32 = 9;
/// Fuel budget of every turn: 10 virtual seconds, far beyond any of them
/// (a component's first turn runs its runtime's start functions).
const TURN_FUEL: u64 = 10_000 * DEFAULT_FUEL_PER_MS;
/// The ladder's Othello move (8×8): 1 000 virtual ms.
const MOVE_FUEL: u64 = 1_000 * DEFAULT_FUEL_PER_MS;

/// The issue's targets (2 cores).
const TARGET_FIRST_PYTHON_S: f64 = 30.0;
const TARGET_LATER_S: f64 = 15.0;
const TARGET_PYTHON_START_MS: f64 = 5.0;

/// The trivial request: the 8×8 start, black to move (docs/spec/othello.md).
const START_REQUEST: &str = r#"{"board":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,2,1,0,0,0,0,0,0,1,2,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0],"color":1,"legal_moves":[19,26,37,44],"game_mode":"std","board_size":8,"blocked_squares":[],"placed":{"1":2,"2":2},"remaining_ms":10000,"match_id":0,"leg":0,"revision":0,"history":[],"round_no":null,"room_created_at":null,"budget_ms":1000}"#;

/// A kit whose template is built, and the edit that makes its bot B.
struct Kit {
    /// The folder under `kits/`.
    dir: &'static str,
    /// The template's file with the Othello method.
    bot_file: &'static str,
    /// The line of that method after which bot B's extra passes go.
    anchor: &'static str,
    /// The extra passes; `{passes}` is [`EXTRA_PASSES`].
    extra: &'static str,
}

const PYTHON: Kit = Kit {
    dir: "python",
    bot_file: "bot.py",
    anchor: "        sign = -1 if req.is_anti else 1\n",
    extra: "        for _ in range({passes}):\n            max(req.legal_moves,\n                key=lambda m: sign * len(othello.flips(req.board, req.board_size, m, req.color)))\n",
};

const JAVASCRIPT: Kit = Kit {
    dir: "javascript",
    bot_file: "bot.js",
    anchor: "    const sign = req.isAnti ? -1 : 1;\n",
    extra: "    for (let pass = 0; pass < {passes}; pass++) {
      let extraBest = -Infinity;
      for (const m of req.legalMoves) {
        const score = sign * flips(req.board, req.boardSize, m, req.color).length;
        if (score > extraBest) extraBest = score;
      }
    }
",
};

/// Files of a template folder that are build output, not source.
const NOT_SOURCE: &[&str] = &[
    "bot.wasm",
    "bot.wasm.partial",
    "__pycache__",
    "build",
    "node_modules",
    "replays",
];

fn main() {
    let started = Instant::now();
    println!("components: the Python and JavaScript templates (greedy Othello) vs the Rust house bot {RUST_BOT}");
    println!("run with: cargo bench -p arbiter --bench components");
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    println!("nproc {cores}, load average {}", load_average());

    // The four components, built once and reused.
    let kits_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../kits");
    let mut built = Vec::new();
    for kit in [&PYTHON, &JAVASCRIPT] {
        for b in [false, true] {
            built.push(build_template(&kits_dir, kit, b));
        }
    }
    println!();
    println!("components (target/tmp/bench-components):");
    for bot in &built {
        println!(
            "  {:<14} {:>5.1} MB  {}  {}",
            bot.name,
            bot.wasm.len() as f64 / 1e6,
            bot.dir
                .file_name()
                .map_or(String::new(), |n| n.to_string_lossy().into_owned()),
            match bot.build_secs {
                Some(s) => format!("built now in {s:.1} s"),
                None => "reused".to_string(),
            }
        );
    }
    let [py_a, py_b, js_a, js_b] = <[Built; 4]>::try_from(built).unwrap_or_else(|_| unreachable!("four builds"));

    // Section 2 first: the compilations, each language from an empty cache.
    eprintln!("compiling (section 2)...");
    let py_cache = cache_dir("python");
    let js_cache = cache_dir("javascript");
    let py_sandbox = sandbox(py_cache.path());
    let js_sandbox = sandbox(js_cache.path());
    let mut compiles = Vec::new();
    let (py_a_module, row) = compile(&py_sandbox, &py_a, "cold: empty cache dir", Some(TARGET_FIRST_PYTHON_S));
    compiles.push(row);
    let (py_b_module, row) = compile(&py_sandbox, &py_b, "warm: functions of python-a", Some(TARGET_LATER_S));
    compiles.push(row);
    let (js_a_module, row) = compile(&js_sandbox, &js_a, "cold: empty cache dir", None);
    compiles.push(row);
    let (js_b_module, row) = compile(&js_sandbox, &js_b, "warm: functions of js-a", Some(TARGET_LATER_S));
    compiles.push(row);
    for (cache, bot) in [(&py_cache, &py_a), (&js_cache, &js_a)] {
        let fresh = sandbox(cache.path());
        compiles.push(compile(&fresh, bot, "artifact on disk, new sandbox", None).1);
    }
    let house = arbiter_house::find(RUST_BOT).expect("othello-greedy is a house bot");
    let (rust_module, row) = compile(&py_sandbox, &Built::house(house.wasm()), "cold: empty cache dir", None);
    compiles.push(row);

    // Section 1 (and 4): every bot over the same positions.
    eprintln!("recording positions...");
    let games = record_games();
    let positions: usize = games.iter().map(|g| g.positions.len()).sum();
    let bots = [
        ("rust othello-greedy", &py_sandbox, &rust_module),
        ("python-a template", &py_sandbox, &py_a_module),
        ("js-a template", &js_sandbox, &js_a_module),
        ("python-b 10 passes", &py_sandbox, &py_b_module),
        ("js-b 10 passes", &js_sandbox, &js_b_module),
    ];
    let mut moves = Vec::new();
    for (name, sandbox, module) in bots {
        eprintln!("playing the positions: {name}...");
        moves.push(measure_moves(name, sandbox, module, &games));
    }

    // Section 3.
    let mut starts = Vec::new();
    for (name, sandbox, module) in [
        ("rust othello-greedy", &py_sandbox, &rust_module),
        ("python-a template", &py_sandbox, &py_a_module),
        ("js-a template", &js_sandbox, &js_a_module),
    ] {
        eprintln!("instantiating: {name}...");
        starts.push(measure_starts(name, sandbox, module));
    }

    report_moves(&games, positions, &moves);
    report_compiles(&compiles);
    report_starts(&starts);
    report_evaluations(&games, &moves);
    report_targets(&compiles, &starts);
    println!();
    println!(
        "load average after: {} (nproc {cores}); whole run {:.0} s",
        load_average(),
        started.elapsed().as_secs_f64()
    );
}

// ---------------------------------------------------------------- building

/// A bot's bytes and where they came from.
struct Built {
    name: String,
    wasm: Vec<u8>,
    dir: PathBuf,
    /// Seconds `build.sh` took, when it ran in this run.
    build_secs: Option<f64>,
}

impl Built {
    fn house(wasm: &[u8]) -> Built {
        Built {
            name: "rust othello-greedy".to_string(),
            wasm: wasm.to_vec(),
            dir: PathBuf::new(),
            build_secs: None,
        }
    }
}

/// The kit's template (with bot B's edit when `b`), built with its
/// `build.sh` under `target/tmp/bench-components/`, or found built there.
fn build_template(kits_dir: &Path, kit: &Kit, b: bool) -> Built {
    let kit_dir = kits_dir.join(kit.dir);
    let template = kit_dir.join("template");
    let mut files = BTreeMap::new();
    read_sources(&template, Path::new(""), &mut files);
    if b {
        let path = PathBuf::from(kit.bot_file);
        let source = String::from_utf8(files.get(&path).cloned().unwrap_or_default()).expect("the bot is UTF-8");
        assert_eq!(
            source.matches(kit.anchor).count(),
            1,
            "{}/{} no longer has the line {:?} once: update bot B's edit in benches/components.rs",
            template.display(),
            kit.bot_file,
            kit.anchor
        );
        let extra = kit.extra.replace("{passes}", &EXTRA_PASSES.to_string());
        let edited = source.replacen(kit.anchor, &format!("{}{extra}", kit.anchor), 1);
        files.insert(path, edited.into_bytes());
    }
    let mut hasher = Sha256::new();
    for (path, bytes) in &files {
        hasher.update(path.as_os_str().as_encoded_bytes());
        hasher.update((bytes.len() as u64).to_le_bytes());
        hasher.update(bytes);
    }
    for extra in ["setup.sh", "package-lock.json"] {
        if let Ok(bytes) = std::fs::read(kit_dir.join(extra)) {
            hasher.update(extra.as_bytes());
            hasher.update(bytes);
        }
    }
    let digest: String = hasher.finalize()[..10].iter().map(|b| format!("{b:02x}")).collect();
    let name = format!(
        "{}-{}",
        if kit.dir == "python" { "python" } else { "js" },
        if b { "b" } else { "a" }
    );
    let dir = Path::new(TARGET_TMP)
        .join("bench-components")
        .join(format!("{name}-{digest}"));
    let out = dir.join("bot.wasm");
    if let Ok(wasm) = std::fs::read(&out) {
        return Built {
            name,
            wasm,
            dir,
            build_secs: None,
        };
    }

    eprintln!("building {name} with kits/{}/template/build.sh...", kit.dir);
    let kit_cache = Path::new(TARGET_TMP).join("kit-cache");
    run(
        Command::new("bash")
            .arg(kit_dir.join("setup.sh"))
            .env("ARBITER_KIT_CACHE", &kit_cache),
        &format!("kits/{}/setup.sh", kit.dir),
    );
    let _ = std::fs::remove_dir_all(&dir);
    for (path, bytes) in &files {
        let to = dir.join(path);
        std::fs::create_dir_all(to.parent().expect("a file has a folder")).expect("the build folder is writable");
        std::fs::write(&to, bytes).expect("the build folder is writable");
    }
    let start = Instant::now();
    run(
        Command::new("sh")
            .arg(dir.join("build.sh"))
            .env("ARBITER_KIT_CACHE", &kit_cache),
        &format!("{name}: build.sh"),
    );
    let build_secs = Some(start.elapsed().as_secs_f64());
    let wasm = std::fs::read(&out).expect("build.sh made bot.wasm");
    Built {
        name,
        wasm,
        dir,
        build_secs,
    }
}

/// Every source file under `dir` (build output left out), by path relative
/// to the template.
fn read_sources(dir: &Path, rel: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()));
    for entry in entries {
        let entry = entry.expect("a folder entry");
        let name = entry.file_name();
        if NOT_SOURCE.iter().any(|skip| name == *skip) {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            read_sources(&path, &rel.join(&name), files);
        } else {
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
            files.insert(rel.join(&name), bytes);
        }
    }
}

fn run(command: &mut Command, what: &str) {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: cannot start: {e}"));
    assert!(
        out.status.success(),
        "{what} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

// --------------------------------------------------------------- compiling

/// A fresh, empty compile cache under `target/tmp`, removed at the end.
fn cache_dir(language: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(&format!("components-bench-{language}-"))
        .tempdir_in(TARGET_TMP)
        .expect("target/tmp is writable")
}

fn sandbox(cache: &Path) -> Sandbox {
    Sandbox::new(SandboxConfig {
        cache_dir: Some(cache.to_path_buf()),
        compiler: CompilerCommand::embedded_in(ARBITER),
        instance_slots: 8,
        ..SandboxConfig::default()
    })
    .expect("the sandbox starts")
}

struct CompileRow {
    bot: String,
    cache: &'static str,
    mb: f64,
    /// The whole `Sandbox::load`.
    secs: f64,
    compilation: Option<Compilation>,
    target_s: Option<f64>,
}

fn compile(sandbox: &Sandbox, bot: &Built, cache: &'static str, target_s: Option<f64>) -> (BotModule, CompileRow) {
    let start = Instant::now();
    let module = sandbox
        .load(&bot.wasm)
        .unwrap_or_else(|e| panic!("{} does not load: {e}", bot.name));
    let secs = start.elapsed().as_secs_f64();
    let row = CompileRow {
        bot: bot.name.clone(),
        cache,
        mb: bot.wasm.len() as f64 / 1e6,
        secs,
        compilation: module.compilation().copied(),
        target_s,
    };
    (module, row)
}

// ---------------------------------------------------------------- positions

/// The requests one side of one recorded game got.
struct Game {
    /// The bot seed of that side (as the referee would give it).
    seed: u64,
    positions: Vec<Position>,
}

struct Position {
    request: String,
    legal: Vec<i32>,
}

/// Othello std matches of `othello-greedy` against `othello-random`, both
/// in-process: every request with a legal move, per game side.
fn record_games() -> Vec<Game> {
    type Log = Arc<Mutex<Vec<((u64, u8, u8), String)>>>;
    let log: Log = Arc::default();
    let recorder = |bot: &'static str| {
        let log = Arc::clone(&log);
        InProcess::new(bot, move |setup: &GameSetup| {
            let seed = bot_seed(setup.seed, setup.game_index, setup.side);
            let mut answer = arbiter_bots::answerer(bot, Rng::seeded(seed)).expect("a house bot has an answerer");
            let (log, key) = (Arc::clone(&log), (setup.seed, setup.game_index, setup.side));
            Box::new(move |request: &str| {
                log.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push((key, request.to_string()));
                answer(request)
            })
        })
    };
    let (greedy, random) = (recorder("othello-greedy"), recorder("othello-random"));
    let variant: Variant = "othello:std".parse().expect("othello:std is a variant");
    for seed in MATCH_SEEDS {
        play_match(&MatchSettings::new(variant, seed), [&greedy, &random]).expect("the recording plays");
    }
    let mut games: BTreeMap<(u64, u8, u8), Vec<Position>> = BTreeMap::new();
    for (key, request) in std::mem::take(&mut *log.lock().unwrap_or_else(PoisonError::into_inner)) {
        let parsed: Request = serde_json::from_str(&request).expect("a request parses");
        if !parsed.legal_moves.is_empty() {
            games.entry(key).or_default().push(Position {
                request,
                legal: parsed.legal_moves,
            });
        }
    }
    games
        .into_iter()
        .map(|((seed, leg, side), positions)| Game {
            seed: bot_seed(seed, leg, side),
            positions,
        })
        .collect()
}

fn env(seed: u64) -> BotEnv {
    BotEnv {
        seed,
        vars: vec![
            ("ARBITER_GAME".to_string(), "othello".to_string()),
            ("ARBITER_MODE".to_string(), "std".to_string()),
        ],
        start_time_ns: CLOCK_ORIGIN_NS,
        ..BotEnv::default()
    }
}

/// One turn that must succeed: its fuel, real time and reply.
fn turn(name: &str, bot: &mut BotInstance, request: &str) -> (u64, Duration, String) {
    let start = Instant::now();
    let reply = bot.turn(request.as_bytes(), TURN_FUEL);
    let elapsed = start.elapsed();
    match reply {
        Ok(reply) => (
            reply.fuel_used,
            elapsed,
            String::from_utf8_lossy(&reply.line).into_owned(),
        ),
        Err(fault) => panic!(
            "{name} faulted ({fault}, {} fuel); stderr:\n{}",
            fault.fuel_used,
            String::from_utf8_lossy(bot.stderr())
        ),
    }
}

// ----------------------------------------------------------- section 1 & 4

/// One bot over every position, in the order of `record_games`.
struct Moves {
    name: &'static str,
    /// Fuel per position (the first round's).
    fuel: Vec<u64>,
    /// Real µs per position, the median over the rounds.
    real_us: Vec<f64>,
    /// The move played per position (`None`: not a legal move).
    moves: Vec<Option<i32>>,
    /// Whether every round charged every position the same fuel.
    same_fuel: bool,
}

fn measure_moves(name: &'static str, sandbox: &Sandbox, module: &BotModule, games: &[Game]) -> Moves {
    let n: usize = games.iter().map(|g| g.positions.len()).sum();
    let mut fuel = vec![0u64; n];
    let mut times = vec![Vec::with_capacity(ROUNDS); n];
    let mut moves = vec![None; n];
    let mut same_fuel = true;
    for round in 0..ROUNDS {
        let mut i = 0;
        for game in games {
            let mut bot = sandbox
                .instantiate(module, env(game.seed))
                .expect("the bot instantiates");
            // The instance's start (a component's instantiation) is
            // section 3's business.
            turn(name, &mut bot, START_REQUEST);
            for position in &game.positions {
                let (used, real, line) = turn(name, &mut bot, &position.request);
                if round == 0 {
                    fuel[i] = used;
                    moves[i] = parse_reply(&line, Mode::Std)
                        .ok()
                        .map(|m| m.code())
                        .filter(|m| position.legal.contains(m));
                } else if fuel[i] != used {
                    same_fuel = false;
                }
                times[i].push(real.as_secs_f64() * 1e6);
                i += 1;
            }
            bot.close();
        }
    }
    Moves {
        name,
        fuel,
        real_us: times.into_iter().map(|t| median(&t)).collect(),
        moves,
        same_fuel,
    }
}

// --------------------------------------------------------------- section 3

/// Medians over [`INSTANCES`] games' starts.
struct Starts {
    name: &'static str,
    instantiate_us: f64,
    first_us: f64,
    later_us: f64,
    /// instantiate + first turn − later turn, per instance.
    extra_us: f64,
    /// First turn's fuel − later turn's.
    extra_fuel: f64,
    close_us: f64,
}

fn measure_starts(name: &'static str, sandbox: &Sandbox, module: &BotModule) -> Starts {
    let (mut inst, mut first, mut later, mut extra, mut extra_fuel, mut close) =
        (vec![], vec![], vec![], vec![], vec![], vec![]);
    for i in 0..INSTANCES {
        let start = Instant::now();
        let mut bot = sandbox
            .instantiate(module, env(i as u64))
            .expect("the bot instantiates");
        let t_inst = start.elapsed();
        let (f1, t1, _) = turn(name, &mut bot, START_REQUEST);
        // The later turn: the faster of two (the same request, the same work).
        let (f2, t2, _) = turn(name, &mut bot, START_REQUEST);
        let (_, t3, _) = turn(name, &mut bot, START_REQUEST);
        let t_later = t2.min(t3);
        let start = Instant::now();
        bot.close();
        drop(bot);
        close.push(start.elapsed().as_secs_f64() * 1e6);
        inst.push(t_inst.as_secs_f64() * 1e6);
        first.push(t1.as_secs_f64() * 1e6);
        later.push(t_later.as_secs_f64() * 1e6);
        extra.push((t_inst + t1).as_secs_f64() * 1e6 - t_later.as_secs_f64() * 1e6);
        extra_fuel.push(f1 as f64 - f2 as f64);
    }
    Starts {
        name,
        instantiate_us: median(&inst),
        first_us: median(&first),
        later_us: median(&later),
        extra_us: median(&extra),
        extra_fuel: median(&extra_fuel),
        close_us: median(&close),
    }
}

// ------------------------------------------------------------------ report

fn median(values: &[f64]) -> f64 {
    percentile(values, 0.5)
}

/// Nearest-rank percentile (`q` in 0..=1); 0 for no values.
fn percentile(values: &[f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

fn as_f64(values: &[u64]) -> Vec<f64> {
    values.iter().map(|&v| v as f64).collect()
}

/// `123 456 789`.
fn thousands(v: f64) -> String {
    let digits = format!("{:.0}", v.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(' ');
        }
        out.push(c);
    }
    if v < 0.0 { format!("-{out}") } else { out }
}

fn report_moves(games: &[Game], positions: usize, moves: &[Moves]) {
    let legal: Vec<f64> = games
        .iter()
        .flat_map(|g| g.positions.iter().map(|p| p.legal.len() as f64))
        .collect();
    println!();
    println!(
        "1. per move: {positions} Othello std positions ({} matches of othello-greedy vs othello-random, both legs and sides,",
        MATCH_SEEDS.len()
    );
    println!(
        "   passes left out; legal moves per position median {:.0}, max {:.0}); a fresh instance per game side, its",
        median(&legal),
        percentile(&legal, 1.0)
    );
    println!("   start not counted; fuel of round 1, real time the median of {ROUNDS} rounds per position");
    println!(
        "{:<22} {:>12} {:>12} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9}",
        "bot",
        "fuel med",
        "fuel p90",
        "vs Rust",
        "p90 vs R",
        "real µs md",
        "real µs 90",
        "vs Rust",
        "p90 vs R",
        "vms med"
    );
    let rust = &moves[0];
    let (rust_fuel, rust_real) = (as_f64(&rust.fuel), &rust.real_us);
    for m in moves {
        let fuel = as_f64(&m.fuel);
        println!(
            "{:<22} {:>12} {:>12} {:>8.1}× {:>8.1}× {:>10.1} {:>10.1} {:>8.1}× {:>8.1}× {:>9.2}",
            m.name,
            thousands(median(&fuel)),
            thousands(percentile(&fuel, 0.9)),
            median(&fuel) / median(&rust_fuel),
            percentile(&fuel, 0.9) / percentile(&rust_fuel, 0.9),
            median(&m.real_us),
            percentile(&m.real_us, 0.9),
            median(&m.real_us) / median(rust_real),
            percentile(&m.real_us, 0.9) / percentile(rust_real, 0.9),
            median(&fuel) / DEFAULT_FUEL_PER_MS as f64,
        );
    }
    println!(
        "   vms med: virtual ms of the median move ({DEFAULT_FUEL_PER_MS} fuel per virtual ms; the ladder's move is 1 000 vms)"
    );
    for m in moves {
        let illegal = m.moves.iter().filter(|mv| mv.is_none()).count();
        let rate: f64 = m.fuel.iter().sum::<u64>() as f64 / (m.real_us.iter().sum::<f64>() * 1e-3);
        println!(
            "   {:<20} {} illegal replies; fuel {} across rounds; {:.1} M fuel per real ms",
            m.name,
            illegal,
            if m.same_fuel { "identical" } else { "VARIED" },
            rate / 1e6
        );
    }
    let agree = |a: &Moves, b: &Moves| a.moves.iter().zip(&b.moves).filter(|(x, y)| x == y).count();
    println!(
        "   same moves: python-a = js-a on {}/{positions}, python-a = python-b on {}/{positions}, rust = python-a on {}/{positions} (rust breaks ties at random)",
        agree(&moves[1], &moves[2]),
        agree(&moves[1], &moves[3]),
        agree(&moves[0], &moves[1]),
    );
}

fn report_compiles(rows: &[CompileRow]) {
    println!();
    println!(
        "2. compile: Sandbox::load (check, compile in a child process, load) with the function cache in cache_dir"
    );
    println!(
        "{:<20} {:<30} {:>6} {:>8} {:>8} {:>9} {:>9} {:>7} {:>10}",
        "bot", "cache", "MB", "load s", "child s", "reused", "compiled", "share", "target"
    );
    for row in rows {
        let (child, reused, compiled, share) = match &row.compilation {
            Some(c) => (
                format!("{:.2}", c.seconds),
                c.functions_reused.to_string(),
                c.functions_compiled.to_string(),
                format!("{:.0}%", c.reused_share() * 100.0),
            ),
            None => ("-".into(), "-".into(), "-".into(), "-".into()),
        };
        let target = match row.target_s {
            Some(t) => format!("≤ {t:.0} s {}", if row.secs <= t { "ok" } else { "MISSED" }),
            None => "-".into(),
        };
        println!(
            "{:<20} {:<30} {:>6.1} {:>8.2} {:>8} {:>9} {:>9} {:>7} {:>10}",
            row.bot, row.cache, row.mb, row.secs, child, reused, compiled, share, target
        );
    }
    println!(
        "   load s: the whole Sandbox::load; child s: the compiler child (Compilation::seconds); reused/compiled:"
    );
    println!("   functions found in / added to the function cache; - : nothing compiled (artifact found on disk)");
}

fn report_starts(starts: &[Starts]) {
    println!();
    println!(
        "3. a game's start: instantiate() + first turn − a later turn, on the 8×8 start request; median of {INSTANCES} instances"
    );
    println!(
        "{:<22} {:>13} {:>12} {:>12} {:>14} {:>16} {:>10} {:>12}",
        "bot", "instantiate µs", "1st turn µs", "later µs", "start cost µs", "start fuel (vms)", "close µs", "target"
    );
    for (i, s) in starts.iter().enumerate() {
        let target = if i == 1 {
            let ok = s.extra_us <= TARGET_PYTHON_START_MS * 1000.0;
            format!("≤ {TARGET_PYTHON_START_MS:.0} ms {}", if ok { "ok" } else { "MISSED" })
        } else {
            "-".to_string()
        };
        println!(
            "{:<22} {:>13.1} {:>12.1} {:>12.1} {:>14.1} {:>16} {:>10.1} {:>12}",
            s.name,
            s.instantiate_us,
            s.first_us,
            s.later_us,
            s.extra_us,
            format!(
                "{} ({:.2})",
                thousands(s.extra_fuel),
                s.extra_fuel / DEFAULT_FUEL_PER_MS as f64
            ),
            s.close_us,
            target
        );
    }
    println!(
        "   start fuel: the first turn's fuel − a later turn's: what a component's instantiation charges its first move"
    );
}

fn report_evaluations(games: &[Game], moves: &[Moves]) {
    let legal: Vec<u64> = games
        .iter()
        .flat_map(|g| g.positions.iter().map(|p| p.legal.len() as u64))
        .collect();
    let total_legal: u64 = legal.iter().sum();
    println!();
    println!(
        "4. greedy evaluations (one flip simulation of one legal move) in the ladder's 1 s move = {} fuel",
        thousands(MOVE_FUEL as f64)
    );
    println!(
        "{:<22} {:>14} {:>12} {:>16} {:>22} {:>16}",
        "bot", "fuel per eval", "real µs/eval", "evals per 1 s", "fuel/move ÷ legal md", "bound per 1 s"
    );
    // Bot B − bot A: the evaluations alone, without the request's parsing.
    for (a, b) in [(1, 3), (2, 4)] {
        let (a, b) = (&moves[a], &moves[b]);
        let extra_fuel = b.fuel.iter().sum::<u64>() as f64 - a.fuel.iter().sum::<u64>() as f64;
        let extra_us = b.real_us.iter().sum::<f64>() - a.real_us.iter().sum::<f64>();
        let evals = f64::from(EXTRA_PASSES) * total_legal as f64;
        let per_eval = extra_fuel / evals;
        let naive = naive_per_eval(a, &legal);
        println!(
            "{:<22} {:>14} {:>12.2} {:>16} {:>22} {:>16}",
            a.name,
            thousands(per_eval),
            extra_us / evals,
            thousands(MOVE_FUEL as f64 / per_eval),
            thousands(naive),
            thousands(MOVE_FUEL as f64 / naive)
        );
    }
    let rust = &moves[0];
    let naive = naive_per_eval(rust, &legal);
    println!(
        "{:<22} {:>14} {:>12} {:>16} {:>22} {:>16}",
        rust.name,
        "-",
        "-",
        "-",
        thousands(naive),
        thousands(MOVE_FUEL as f64 / naive)
    );
    println!(
        "   fuel per eval: (bot B's fuel − bot A's) over the {} positions ÷ the {EXTRA_PASSES} extra passes' evaluations",
        legal.len()
    );
    println!(
        "   (bot B: the template evaluating every legal move {EXTRA_PASSES} more times); evals per 1 s: 1 s of fuel ÷ that;"
    );
    println!(
        "   fuel/move ÷ legal: the median over positions of a whole move's fuel (request parsing included) ÷ its legal"
    );
    println!("   moves, so 'bound per 1 s' is a lower bound of what fits (and all the Rust row can say)");
}

/// Median over positions of (a move's fuel ÷ its legal moves).
fn naive_per_eval(m: &Moves, legal: &[u64]) -> f64 {
    let per: Vec<f64> = m
        .fuel
        .iter()
        .zip(legal)
        .map(|(&f, &l)| f as f64 / l.max(1) as f64)
        .collect();
    median(&per)
}

fn report_targets(compiles: &[CompileRow], starts: &[Starts]) {
    println!();
    println!("targets (the issue's, 2 cores):");
    for row in compiles.iter().filter(|row| row.target_s.is_some()) {
        let target = row.target_s.unwrap_or(0.0);
        println!(
            "  {:<52} ≤ {:>4.0} s  measured {:>6.2} s  {}",
            format!("{} check ({})", row.bot, row.cache),
            target,
            row.secs,
            if row.secs <= target { "ok" } else { "MISSED" }
        );
    }
    if let Some(python) = starts.get(1) {
        let ms = python.extra_us / 1000.0;
        println!(
            "  {:<52} ≤ {:>4.0} ms measured {:>6.2} ms {}",
            "cached Python bot: instantiate + first-turn extra",
            TARGET_PYTHON_START_MS,
            ms,
            if ms <= TARGET_PYTHON_START_MS { "ok" } else { "MISSED" }
        );
    }
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg").map_or_else(|_| "unknown".into(), |s| s.trim().to_string())
}
