//! WASI 0.2 command components made by the real producers (componentize-py,
//! componentize-js, at the versions the kits pin), built once per run and
//! kept under the target folder: they answer, keep their state, replay
//! byte for byte, and every hostile one ends as the fault it deserves.

use std::path::PathBuf;
use std::sync::OnceLock;

use arbiter_sandbox::{BadReplyReason, BotEnv, BotModule, CrashReason, FaultKind, ModuleError, ModuleKind, OnTimeout};
use arbiter_wasm_build::component::{Language, Source, build};

use crate::support::{FUEL, env, sandbox};

/// A Python bot: answers each request line with what it read, a count,
/// a random number, the clock and an environment variable.
const PY_BOT: &str = r#"
import json, os, random, sys, time
from wit_world import exports

class Run(exports.Run):
    def run(self) -> None:
        count = 0
        for line in sys.stdin:
            count += 1
            req = json.loads(line)
            reply = {
                "echo": req,
                "count": count,
                "random": random.getrandbits(32),
                "clock_ns": time.monotonic_ns(),
                "game": os.environ.get("ARBITER_GAME"),
            }
            print(json.dumps(reply), flush=True)
"#;

/// A Python bot that misbehaves as each request tells it.
const PY_HOSTILE: &str = r#"
import json, sys, time
from wit_world import exports

class Run(exports.Run):
    def run(self) -> None:
        for line in sys.stdin:
            do = json.loads(line)["do"]
            if do == "loop":
                while True:
                    pass
            elif do == "hoard":
                hoard = []
                while True:
                    hoard.append(bytearray(1 << 20))
            elif do == "sleep":
                time.sleep(3600)
            elif do == "long":
                print("x" * (1 << 20), flush=True)
            elif do == "exit":
                sys.exit(0)
            elif do == "nap":
                time.sleep(0.002)
                print(json.dumps({"woke_ns": time.monotonic_ns()}), flush=True)
            else:
                print(json.dumps({"ok": do}), flush=True)
"#;

/// A JavaScript bot: answers each request with what it read and a count.
const JS_BOT: &str = r#"
import { getStdin } from 'wasi:cli/stdin@0.2.12';
import { getStdout } from 'wasi:cli/stdout@0.2.12';
const dec = new TextDecoder(), enc = new TextEncoder();
export const run = {
  run() {
    const inp = getStdin(), out = getStdout();
    let buf = '', count = 0;
    for (;;) {
      let chunk;
      try { chunk = inp.blockingRead(65536n); } catch (e) { return; }
      buf += dec.decode(chunk);
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        count += 1;
        const reply = { echo: req, count, random: Math.floor(Math.random() * 1e9), now: Date.now() };
        out.blockingWriteAndFlush(enc.encode(JSON.stringify(reply) + '\n'));
      }
    }
  }
};
"#;

fn built(source: Source<'_>) -> Vec<u8> {
    let kits = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kits");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let path = build(&kits, &target, source).unwrap_or_else(|e| panic!("{e}"));
    std::fs::read(path).expect("the built component is readable")
}

fn py(code: &'static str) -> &'static [u8] {
    static BOT: OnceLock<Vec<u8>> = OnceLock::new();
    static HOSTILE: OnceLock<Vec<u8>> = OnceLock::new();
    let cell = if std::ptr::eq(code, PY_BOT) { &BOT } else { &HOSTILE };
    cell.get_or_init(|| {
        built(Source {
            language: Language::Python,
            code,
            keep_http: false,
        })
    })
}

fn js_bot() -> &'static [u8] {
    static BOT: OnceLock<Vec<u8>> = OnceLock::new();
    BOT.get_or_init(|| {
        built(Source {
            language: Language::JavaScript,
            code: JS_BOT,
            keep_http: false,
        })
    })
}

fn load(wasm: &[u8]) -> BotModule {
    sandbox()
        .load(wasm)
        .unwrap_or_else(|e| panic!("the component loads: {e}"))
}

fn stop_env(seed: u64) -> BotEnv {
    BotEnv {
        on_timeout: OnTimeout::Stop,
        ..env(seed)
    }
}

fn json(line: &[u8]) -> serde_json::Value {
    serde_json::from_slice(line).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(line)))
}

#[test]
fn a_python_component_answers_keeps_its_state_and_replays_byte_for_byte() {
    let module = load(py(PY_BOT));
    assert_eq!(module.info().kind, ModuleKind::Component);
    let play = |seed: u64| {
        let mut bot = sandbox().instantiate(&module, stop_env(seed)).expect("instantiates");
        let mut turns = Vec::new();
        for n in 0..5 {
            let reply = bot
                .turn(format!(r#"{{"n":{n}}}"#).as_bytes(), 100 * FUEL)
                .unwrap_or_else(|f| panic!("turn {n}: {f:?}\n{}", String::from_utf8_lossy(bot.stderr())));
            turns.push((reply.line, reply.fuel_used));
        }
        turns
    };
    let first = play(7);
    for (n, (line, fuel)) in first.iter().enumerate() {
        let v = json(line);
        assert_eq!(v["echo"]["n"], n);
        assert_eq!(v["count"], n + 1, "the instance keeps its state between turns");
        assert_eq!(v["game"], "test");
        assert!(*fuel > 0);
    }
    // Virtual time: the clock advances with the fuel used, nothing else.
    let clocks: Vec<u64> = first
        .iter()
        .map(|(l, _)| json(l)["clock_ns"].as_u64().unwrap_or(0))
        .collect();
    assert!(clocks.windows(2).all(|w| w[0] < w[1]), "{clocks:?}");
    assert_eq!(play(7), first, "same seed, same bytes and fuel");
    let other = play(8);
    assert_ne!(
        other.iter().map(|(l, _)| json(l)["random"].clone()).collect::<Vec<_>>(),
        first.iter().map(|(l, _)| json(l)["random"].clone()).collect::<Vec<_>>(),
        "random numbers come from the seeded stream"
    );
}

#[test]
fn a_javascript_component_answers_and_replays_byte_for_byte() {
    let module = load(js_bot());
    let play = |seed: u64| {
        let mut bot = sandbox().instantiate(&module, stop_env(seed)).expect("instantiates");
        (0..4)
            .map(|n| {
                let reply = bot
                    .turn(format!(r#"{{"n":{n}}}"#).as_bytes(), 100 * FUEL)
                    .unwrap_or_else(|f| panic!("turn {n}: {f:?}\n{}", String::from_utf8_lossy(bot.stderr())));
                (reply.line, reply.fuel_used)
            })
            .collect::<Vec<_>>()
    };
    let first = play(3);
    for (n, (line, _)) in first.iter().enumerate() {
        let v = json(line);
        assert_eq!(v["echo"]["n"], n);
        assert_eq!(v["count"], n + 1);
    }
    assert_eq!(play(3), first);
    let random = |turns: &[(Vec<u8>, u64)]| turns.iter().map(|(l, _)| json(l)["random"].clone()).collect::<Vec<_>>();
    assert_ne!(
        random(&play(4)),
        random(&first),
        "Math.random draws from the seeded stream"
    );
}

/// One turn of the hostile Python bot.
fn hostile_turn(what: &str, budget: u64) -> Result<Vec<u8>, arbiter_sandbox::TurnFault> {
    let module = load(py(PY_HOSTILE));
    let mut bot = sandbox().instantiate(&module, stop_env(1)).expect("instantiates");
    // A first, well-behaved turn: the runtime has started.
    let ok = bot.turn(br#"{"do":"hello"}"#, 100 * FUEL).expect("answers");
    assert_eq!(json(&ok.line)["ok"], "hello");
    bot.turn(format!(r#"{{"do":"{what}"}}"#).as_bytes(), budget)
        .map(|r| r.line)
}

#[test]
fn a_python_busy_loop_times_out_at_exactly_its_budget() {
    let fault = hostile_turn("loop", 20 * FUEL).expect_err("loops");
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert_eq!(fault.fuel_used, 20 * FUEL);
}

#[test]
fn a_python_sleep_past_the_budget_times_out_at_exactly_its_budget() {
    let fault = hostile_turn("sleep", 20 * FUEL).expect_err("sleeps an hour");
    assert_eq!(fault.kind, FaultKind::Timeout);
    assert_eq!(fault.fuel_used, 20 * FUEL);
}

#[test]
fn a_python_sleep_advances_the_virtual_clock_and_is_charged() {
    let module = load(py(PY_HOSTILE));
    let mut bot = sandbox().instantiate(&module, stop_env(1)).expect("instantiates");
    bot.turn(br#"{"do":"hello"}"#, 100 * FUEL).expect("answers");
    let before = bot.clock_ns();
    let nap = bot.turn(br#"{"do":"nap"}"#, 100 * FUEL).expect("naps and answers");
    // 2 ms of sleep is 2 ms of fuel, on top of the work.
    let per_ms = arbiter_sandbox::DEFAULT_FUEL_PER_MS;
    assert!(nap.fuel_used >= 2 * per_ms, "{}", nap.fuel_used);
    assert!(json(&nap.line)["woke_ns"].as_u64().unwrap_or(0) >= before + 2_000_000);
}

#[test]
fn a_python_memory_hoarder_crashes_with_the_memory_limit() {
    let fault = hostile_turn("hoard", 1000 * FUEL).expect_err("hoards");
    assert!(
        matches!(fault.kind, FaultKind::Crash(CrashReason::MemoryLimit(_))),
        "{:?}",
        fault.kind
    );
}

#[test]
fn a_python_line_of_a_megabyte_is_a_bad_reply() {
    let fault = hostile_turn("long", 100 * FUEL).expect_err("writes 1 MB");
    assert!(
        matches!(fault.kind, FaultKind::BadReply(BadReplyReason::LineTooLong { .. })),
        "{:?}",
        fault.kind
    );
}

#[test]
fn a_python_exit_before_answering_is_a_crash() {
    let fault = hostile_turn("exit", 100 * FUEL).expect_err("exits");
    assert_eq!(fault.kind, FaultKind::Crash(CrashReason::ExitBeforeReply { code: 0 }));
}

#[test]
fn a_javascript_component_importing_wasi_http_is_refused_naming_the_import() {
    let wasm = built(Source {
        language: Language::JavaScript,
        code: JS_BOT,
        keep_http: true,
    });
    match sandbox().inspect(&wasm) {
        Err(ModuleError::ForbiddenInterface { name, hint }) => {
            assert!(name.starts_with("wasi:http/"), "{name}");
            let message = ModuleError::ForbiddenInterface { name, hint }.to_string();
            assert!(message.contains("-d http fetch-event"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_component_without_wasi_cli_run_is_refused() {
    let wasm = wat::parse_str(
        r#"(component
  (core module $m (func (export "f")))
  (core instance $i (instantiate $m))
  (func $f (canon lift (core func $i "f")))
  (export "wasi:cli/not-run@0.2.0" (func $f)))"#,
    )
    .expect("WAT component");
    assert_eq!(sandbox().inspect(&wasm), Err(ModuleError::MissingRun));
}

#[test]
fn a_component_importing_an_unknown_interface_is_refused() {
    let wasm = wat::parse_str(
        r#"(component
  (import "acme:evil/backdoor@1.0.0" (instance))
)"#,
    )
    .expect("WAT component");
    match sandbox().inspect(&wasm) {
        Err(ModuleError::ForbiddenInterface { name, .. }) => assert_eq!(name, "acme:evil/backdoor@1.0.0"),
        other => panic!("{other:?}"),
    }
}

/// The smallest command component: `run` returns at once.
fn tiny_command(padding: usize) -> Vec<u8> {
    let mut wasm = wat::parse_str(
        r#"(component
  (core module $m (func (export "run") (result i32) i32.const 0))
  (core instance $i (instantiate $m))
  (func $run (result (result)) (canon lift (core func $i "run")))
  (instance $cli (export "run" (func $run)))
  (export "wasi:cli/run@0.2.3" (instance $cli)))"#,
    )
    .expect("WAT component");
    // A custom section (id 0) named "pad" of `padding` bytes in all.
    if padding > 0 {
        let name = b"\x03pad";
        let body = padding.saturating_sub(name.len());
        let mut len = name.len() + body;
        wasm.push(0);
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            wasm.push(byte | if len > 0 { 0x80 } else { 0 });
            if len == 0 {
                break;
            }
        }
        wasm.extend_from_slice(name);
        wasm.resize(wasm.len() + body, 0);
    }
    wasm
}

#[test]
fn components_up_to_40_mib_are_accepted_and_larger_ones_refused() {
    let limit = sandbox().config().max_component_bytes;
    assert_eq!(limit, 40 * 1024 * 1024);
    let big = tiny_command(30 * 1024 * 1024);
    assert!(
        big.len() > sandbox().config().max_module_bytes,
        "above a module's limit"
    );
    let info = sandbox().inspect(&big).expect("a 30 MiB component is accepted");
    assert_eq!(info.kind, ModuleKind::Component);
    assert_eq!(info.imports, Vec::<String>::new());
    let too_big = tiny_command(limit + 1);
    assert!(matches!(
        sandbox().inspect(&too_big),
        Err(ModuleError::ComponentTooLarge { .. })
    ));
}

#[test]
fn a_component_that_returns_before_answering_is_a_crash() {
    let module = load(&tiny_command(0));
    let mut bot = sandbox().instantiate(&module, stop_env(1)).expect("instantiates");
    let fault = bot.turn(b"{}", FUEL).expect_err("returns without a reply");
    assert_eq!(fault.kind, FaultKind::Crash(CrashReason::ExitBeforeReply { code: 0 }));
}
