// The replay viewer's rules (web/static/othello.js) against the referee's:
// `arbiter play` writes real replays in every mode, and rebuilding each game
// from its opening and moves must land exactly on the recorded final board
// and disc counts, with every move legal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import vm from 'node:vm';
import { ARBITER, WEB, requireBuilt } from './support.mjs';

// The viewer with the games' catalogue the server renders into the page
// (the same JSON as `arbiter games --json`).
function loadGames() {
  const context = {};
  vm.createContext(context);
  vm.runInContext(fs.readFileSync(path.join(WEB, 'static', 'othello.js'), 'utf8'), context);
  if (fs.existsSync(ARBITER)) {
    context.ArbiterGames.setCatalogue(JSON.parse(execFileSync(ARBITER, ['games', '--json'], { encoding: 'utf8' })));
  }
  return context.ArbiterGames;
}

// Every mode of the board games, as the binary lists them, each against
// two house bots of its game.
function modes() {
  if (!fs.existsSync(ARBITER)) return [];
  const ladders = execFileSync(ARBITER, ['games', '--ladders', 'othello', 'tictactoe'], { encoding: 'utf8' }).trim().split('\n');
  return ladders.map((ladder) => (ladder.startsWith('tictactoe:')
    ? [ladder, 'builtin:tictactoe-perfect', 'builtin:tictactoe-random']
    : [ladder, 'builtin:othello-greedy', 'builtin:othello-random']));
}
const MODES = modes();

test('the board games of the catalogue are all rebuilt', () => {
  requireBuilt();
  assert.equal(MODES.length, 6);
  const G = loadGames();
  for (const [ladder] of MODES) {
    const [game, mode] = ladder.split(':');
    assert.equal(G.boardOf(game, mode) !== null, game === 'othello', ladder);
  }
});

test('tic-tac-toe squares are named in words', () => {
  const G = loadGames();
  assert.deepEqual(Array.from(G.TTT_KEYS, (key) => G.tttWords(key)), ['top left', 'top middle', 'top right', 'middle left', 'centre', 'middle right', 'bottom left', 'bottom middle', 'bottom right']);
  assert.equal(G.tttWords('3-3'), '3-3', 'anything else as it is');
});

test('square names read both ways', () => {
  const G = loadGames();
  assert.equal(G.parseSquare('d3', 8), 19);
  assert.equal(G.parseSquare('F5', 8), 37);
  assert.equal(G.parseSquare('d3', 10), 23);
  assert.equal(G.parseSquare('j10', 10), 99);
  assert.equal(G.parseSquare('J0', 10), 99);
  assert.equal(G.parseSquare('i9', 8), null);
  assert.equal(G.squareName(63, 8), 'h8');
  assert.equal(G.squareName(99, 10), 'j10');
});

for (const [mode, a, b] of MODES) {
  test(`replays of ${mode} rebuild to their recorded final boards`, () => {
    requireBuilt();
    const G = loadGames();
    const out = fs.mkdtempSync(path.join(os.tmpdir(), 'arbiter-games-'));
    try {
      execFileSync(ARBITER, ['play', mode, a, b, '--matches', '4', '--seed', '11', '--out', out, '--jobs', '2'], { stdio: 'ignore' });
      const files = fs.readdirSync(out).filter((f) => f.endsWith('.json'));
      assert.equal(files.length, 4);
      for (const file of files) {
        const replay = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
        for (const game of replay.games) {
          const built = G.replayGame(replay, game);
          assert.equal(built.illegal, 0, `${file} game ${game.index}: every move is legal`);
          assert.ok(built.agrees, `${file} game ${game.index}: the final position equals the record`);
          const last = built.frames[built.frames.length - 1].board;
          if (replay.game === 'othello') {
            assert.deepEqual([...G.counts(last)], game.record.discs);
            assert.equal(built.frames.length - 1, game.record.transcript.replace(/--/g, 'P').match(/P|[a-j](10|[0-9])/g).length);
          } else {
            assert.deepEqual([...built.frames.slice(1).map((f) => f.label)], game.record.moves);
          }
        }
      }
    } finally {
      fs.rmSync(out, { recursive: true, force: true });
    }
  });
}
