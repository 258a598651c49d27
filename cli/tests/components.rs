//! Python and JavaScript bots, built into WASI 0.2 components by the real
//! producers the kits pin (once per run, kept under the target folder),
//! play every Othello mode and tic-tac-toe against house bots without a
//! fault, and their replays are the same bytes on a second run and while
//! both cores are busy, and verify by re-running.

use std::path::PathBuf;
use std::sync::OnceLock;

use arbiter_games::Variant;
use arbiter_referee::verify::verify;
use arbiter_referee::{Entrant, MatchSettings, PlayedMatch, WasmBot, play_match};
use arbiter_sandbox::{CompilerCommand, ModuleKind, Sandbox, SandboxConfig};
use arbiter_wasm_build::component::{Language, Source, build};

#[path = "common/load.rs"]
mod load;
mod support;

/// Plays a random legal move (from the seeded random stream) in Othello,
/// and the first free square in tic-tac-toe.
const PY_PLAYER: &str = r#"
import json, random, sys
from wit_world import exports

class Run(exports.Run):
    def run(self) -> None:
        for line in sys.stdin:
            req = json.loads(line)
            if req.get("action") == "init":
                reply = {"name": "py"}
            elif req.get("action") == "play-turn":
                free = sorted(k for k, v in req["board"].items() if v == "")
                reply = {"name": "py", "play": free[0], "error": None}
            else:
                moves = req["legal_moves"]
                reply = {"move": random.choice(moves) if moves else -1}
            print(json.dumps(reply), flush=True)
"#;

/// The same in JavaScript (`Math.random` reads the seeded stream).
const JS_PLAYER: &str = r#"
import { getStdin } from 'wasi:cli/stdin@0.2.12';
import { getStdout } from 'wasi:cli/stdout@0.2.12';
const dec = new TextDecoder(), enc = new TextEncoder();
function answer(req) {
  if (req.action === 'init') return { name: 'js' };
  if (req.action === 'play-turn') {
    const free = Object.keys(req.board).filter((k) => req.board[k] === '').sort();
    return { name: 'js', play: free[0], error: null };
  }
  const moves = req.legal_moves;
  return { move: moves.length ? moves[Math.floor(Math.random() * moves.length)] : -1 };
}
export const run = {
  run() {
    const inp = getStdin(), out = getStdout();
    let buf = '';
    for (;;) {
      let chunk;
      try { chunk = inp.blockingRead(65536n); } catch (e) { return; }
      buf += dec.decode(chunk);
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const req = JSON.parse(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        out.blockingWriteAndFlush(enc.encode(JSON.stringify(answer(req)) + '\n'));
      }
    }
  }
};
"#;

fn component(language: Language, code: &str) -> Vec<u8> {
    let kits = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../kits");
    let target = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let source = Source {
        language,
        code,
        keep_http: false,
    };
    let path = build(&kits, &target, source).unwrap_or_else(|e| panic!("{e}"));
    std::fs::read(path).expect("the built component is readable")
}

fn sandbox() -> &'static Sandbox {
    static S: OnceLock<Sandbox> = OnceLock::new();
    S.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("components-compiled");
        let _ = std::fs::remove_dir_all(&dir);
        Sandbox::new(SandboxConfig {
            compiler: CompilerCommand::embedded_in(env!("CARGO_BIN_EXE_arbiter")),
            cache_dir: Some(dir),
            ..SandboxConfig::default()
        })
        .expect("sandbox")
    })
}

fn bots() -> &'static [(&'static str, Vec<u8>); 2] {
    static BOTS: OnceLock<[(&str, Vec<u8>); 2]> = OnceLock::new();
    BOTS.get_or_init(|| {
        [
            ("python", component(Language::Python, PY_PLAYER)),
            ("javascript", component(Language::JavaScript, JS_PLAYER)),
        ]
    })
}

fn entrant(name: &str, wasm: &[u8]) -> WasmBot {
    let module = sandbox()
        .load(wasm)
        .unwrap_or_else(|e| panic!("{name} is accepted: {e}"));
    assert_eq!(module.info().kind, ModuleKind::Component);
    WasmBot::new(sandbox().clone(), module, name)
}

fn house(name: &str) -> WasmBot {
    let bot = arbiter_house::find(name).expect("a house bot");
    WasmBot::new(sandbox().clone(), sandbox().load(bot.wasm()).expect("loads"), name)
}

fn settings(variant: Variant, seed: u64) -> MatchSettings {
    let budget = variant.default_budget();
    MatchSettings {
        variant,
        seed,
        match_id: seed,
        budget,
        // The ladder's cap for each game's first move: a runtime's start.
        first_turn_ms: Some(1_000),
        fuel_per_ms: Some(sandbox().config().fuel_per_ms),
        standard_opening: false,
    }
}

fn play(variant: Variant, bot: &WasmBot, opponent: &WasmBot, seed: u64) -> PlayedMatch {
    play_match(&settings(variant, seed), [bot as &dyn Entrant, opponent]).expect("no host failure")
}

const VARIANTS: [&str; 6] = [
    "othello:std",
    "othello:anti",
    "othello:grand",
    "othello:octagon",
    "othello:reversi",
    "tictactoe",
];

#[test]
fn python_and_javascript_bots_play_every_mode_and_replay_byte_for_byte() {
    for (name, wasm) in bots() {
        let bot = entrant(name, wasm);
        for (i, variant) in VARIANTS.iter().enumerate() {
            let variant: Variant = variant.parse().expect("a variant");
            let opponent = house(if variant == Variant::TicTacToe {
                "tictactoe-random"
            } else {
                "othello-random"
            });
            let seed = 500 + i as u64;
            let played = play(variant, &bot, &opponent, seed);
            let replay = &played.replay;
            for game in &replay.games {
                assert!(
                    game.faulted.is_none(),
                    "{name} in {variant}: game {} ended in a fault: {} {:?}",
                    game.index,
                    game.reason,
                    game.detail
                );
            }
            assert!(replay.reproducible, "{name} in {variant}");
            verify(replay, [&bot as &dyn Entrant, &opponent])
                .unwrap_or_else(|e| panic!("{name} in {variant}: the replay verifies: {e}"));
            let again = load::while_cpu_saturated(2, || play(variant, &bot, &opponent, seed));
            assert!(
                again.replay.to_json() == replay.to_json(),
                "{name} in {variant}: the same replay with both cores busy"
            );
        }
    }
}

/// Uploaded to a real server, a Python component is checked, becomes
/// active, and its version says what it is, on the API and the bot's page.
#[tokio::test(flavor = "multi_thread")]
async fn an_uploaded_python_component_is_accepted_and_described() {
    let wasm = bots()[0].1.clone();
    let server = support::TestServer::start().await;
    let ann = server.signup("ann").await;
    let api = server.token_client(&server.token(&ann).await);
    let (status, body) = api
        .post_multipart("/api/bots", support::module_form("pybot", "othello:std", &wasm))
        .await;
    assert_eq!(status, support::StatusCode::ACCEPTED, "{body}");
    let id = body["version"]["id"].as_i64().expect("a version id");
    let version = support::wait_for(
        &api,
        &format!("/api/versions/{id}"),
        std::time::Duration::from_secs(300),
        |v| v["version"]["status"] != "checking",
    )
    .await;
    let version = &version["version"];
    assert_eq!(version["status"], "active", "{version}");
    let module = version["module"].as_str().unwrap_or_default().to_owned();
    assert!(
        module.starts_with("WASI 0.2 component, Python (componentize-py"),
        "{module}"
    );
    assert!(module.contains("compiled in"), "{module}");
    let page = server
        .client()
        .raw(support::Method::GET, "/bots/pybot")
        .send()
        .await
        .expect("the bot's page")
        .text()
        .await
        .expect("a page");
    assert!(page.contains("WASI 0.2 component, Python"), "{page}");
}
