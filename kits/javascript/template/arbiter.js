// The Arbiter bot protocol for JavaScript (docs/spec/protocol.md): one JSON
// request line on stdin per turn, one JSON reply line on stdout.
//
//   import { Bot, run } from './arbiter.js';
//   class MyBot extends Bot {
//     othello(req, clock) { return req.legalMoves[0]; }
//   }
//   run(new MyBot());
//
// The same source runs natively (`node bot.js`: io.js, Node's stdin and
// stdout) and as a WASI 0.2 component (`sh build.sh`: io-wasi.js, the WASI
// streams, fuel as the clock).
//
// What run() guarantees:
// - stdin is read only once the previous request has been answered (asking
//   for input before replying ends the turn as a fault in the sandbox), and
//   never more than the host offers;
// - every reply is one line, written and flushed before anything else
//   happens; console.log and the rest of console write to stderr (the
//   bot's log) while it runs, so a stray log never becomes a reply;
// - an exception in the bot is logged and answered with a legal fallback
//   (Othello: the first legal move; tic-tac-toe: the first empty cell;
//   skirmish: no actions), so the game goes on;
// - skirmish: when several observations are waiting (the bot fell behind),
//   only the newest is answered.

import { readChunk, writeOut, writeErr, seedBytes, nowMs, start } from './io.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// The Othello pass (answered by run() when legalMoves is empty).
export const PASS = -1;

// Writes a line to stderr, the bot's log (stdout carries replies only; 64
// KiB per game and side are kept).
export function log(...parts) {
  const text = parts.map((p) => (typeof p === 'string' ? p : p instanceof Error ? errorText(p) : safeJson(p))).join(' ');
  writeErr(encoder.encode(text + '\n'));
}

// "Name: message" and the stack (V8's stack starts with the first,
// SpiderMonkey's does not).
function errorText(e) {
  const head = String(e);
  const stack = e.stack || '';
  return stack.startsWith(head) ? stack : `${head}\n${stack}`;
}

function safeJson(value) {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

// The time of one turn, started when its request line was read.
// performance.now() is the sandbox's virtual clock (fuel turned into
// milliseconds), so a search that stops on it stops at the same point on
// every machine; natively it is the wall clock. Reading it costs a host
// call: check it every few thousand nodes, not at every one.
export class Clock {
  constructor(budgetMs, targetMs = budgetMs, startMs = nowMs()) {
    this.start = startMs;
    // The most this turn may take.
    this.budgetMs = Math.max(0, budgetMs);
    // What the bot means to spend (at most the budget).
    this.targetMs = Math.max(0, Math.min(targetMs, this.budgetMs));
  }

  // A move's clock aiming at `fraction` of min(budget, remaining / movesLeft).
  static forMove(budgetMs, remainingMs, movesLeft = 20, fraction = 0.5, startMs = nowMs()) {
    let share = budgetMs;
    if (remainingMs > 0 && movesLeft > 0) share = Math.min(share, remainingMs / movesLeft);
    return new Clock(budgetMs, share * fraction, startMs);
  }

  elapsedMs() {
    return nowMs() - this.start;
  }

  leftMs() {
    return this.budgetMs - this.elapsedMs();
  }

  // True once the target is used up: stop searching, answer.
  timeUp() {
    return this.elapsedMs() >= this.targetMs;
  }
}

// A small generator (sfc32) seeded at run time: natively from ARBITER_RANDOM
// (set by `arbiter play` for cmd: bots), in the component from wasi:random,
// which the sandbox seeds from the match. Make it in a method, not at the top
// level: a component's top level runs at build time, and a generator made
// there would be the same in every game.
export function rng() {
  const s = new DataView(seedBytes(16).buffer);
  let a = s.getUint32(0, true), b = s.getUint32(4, true), c = s.getUint32(8, true), d = s.getUint32(12, true);
  const next = () => {
    const t = (((a + b) >>> 0) + d) >>> 0;
    d = (d + 1) >>> 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) >>> 0;
    c = ((c << 21) | (c >>> 11)) >>> 0;
    c = (c + t) >>> 0;
    return t;
  };
  for (let i = 0; i < 12; i++) next();
  return {
    // A 32-bit unsigned integer.
    u32: next,
    // A float in [0, 1).
    float: () => next() / 4294967296,
    // An integer in [0, n).
    below: (n) => Math.floor((next() / 4294967296) * n),
  };
}

// ---------------------------------------------------------------- Othello

export const EMPTY = 0;
export const BLACK = 1;
export const WHITE = 2;
export const DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]];

// One Othello move request (docs/spec/othello.md), every field typed.
export class OthelloRequest {
  constructor(raw) {
    this.raw = raw;
    this.boardSize = raw.board_size || 8;
    // size² ints: 0 empty (blocked octagon squares too), 1 black, 2 white.
    this.board = raw.board || [];
    // 1 or 2: the colour to move (the bot's).
    this.color = raw.color || BLACK;
    // Legal squares for `color`; empty means a pass (answered by run()).
    this.legalMoves = raw.legal_moves || [];
    // std, anti, grand, octagon or reversi.
    this.gameMode = raw.game_mode || 'std';
    this.blockedSquares = raw.blocked_squares || [];
    const placed = raw.placed || {};
    // Discs placed so far per colour, opening included.
    this.placed = { 1: placed['1'] || 0, 2: placed['2'] || 0 };
    // The bot's clock left in this leg, and the most this move may take (ms).
    this.remainingMs = raw.remaining_ms || 0;
    this.budgetMs = raw.budget_ms || 0;
    this.matchId = raw.match_id;
    this.leg = raw.leg || 0;
    this.revision = raw.revision || 0;
    // Moves of this leg after the opening: {color, participant, move, at_ms}.
    this.history = raw.history || [];
  }

  get opponent() {
    return 3 - this.color;
  }

  // In anti, the fewest discs win.
  get isAnti() {
    return this.gameMode === 'anti';
  }
}

// The squares that placing `color` on `square` would flip. Blocked octagon
// squares are 0 on the board, so a line stops there as at an empty square.
export function flips(board, size, square, color) {
  const opp = 3 - color;
  const row = Math.floor(square / size), col = square % size;
  const out = [];
  for (const [dr, dc] of DIRECTIONS) {
    let r = row + dr, c = col + dc;
    const line = [];
    while (r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] === opp) {
      line.push(r * size + c);
      r += dr;
      c += dc;
    }
    if (line.length && r >= 0 && r < size && c >= 0 && c < size && board[r * size + c] === color) out.push(...line);
  }
  return out;
}

// The board after `color` plays `square` (a new array; standard rules).
export function playMove(board, size, square, color) {
  const after = board.slice();
  after[square] = color;
  for (const s of flips(board, size, square, color)) after[s] = color;
  return after;
}

// Legal squares for `color` under the standard rules (not reversi's centre
// phase or 32-disc limit: the request's legalMoves has those).
export function legalMoves(board, size, color, blocked = []) {
  const out = [];
  for (let s = 0; s < size * size; s++) {
    if (board[s] === EMPTY && !blocked.includes(s) && flips(board, size, s, color).length) out.push(s);
  }
  return out;
}

export function countDiscs(board, color) {
  let n = 0;
  for (const v of board) if (v === color) n++;
  return n;
}

// "d3" for 19 on 8×8; the tenth row of 10×10 is written 0 ("j0" = 99).
export function squareName(square, size = 8) {
  const row = Math.floor(square / size), col = square % size;
  return String.fromCharCode(97 + col) + (size === 10 ? (row + 1) % 10 : row + 1);
}

// The square of a name ("d3", "J0", "j10"), case-insensitive; -1 if none.
export function parseSquare(name, size = 8) {
  const m = /^([a-z])(\d+)$/.exec(name.trim().toLowerCase());
  if (!m) return -1;
  const col = m[1].charCodeAt(0) - 97;
  let row = Number(m[2]);
  if (size === 10 && row === 0) row = 10;
  return col < size && row >= 1 && row <= size ? (row - 1) * size + col : -1;
}

// ------------------------------------------------------------ Tic-tac-toe

export const LINES = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

// "R-C" for a cell 0..8 (row * 3 + column).
export function cellName(cell) {
  return `${Math.floor(cell / 3)}-${cell % 3}`;
}

// One tic-tac-toe message (docs/spec/tictactoe.md).
export class TicTacToeRequest {
  constructor(raw) {
    this.raw = raw;
    // "init" or "play-turn".
    this.action = raw.action || '';
    this.gameId = String(raw['game-id'] ?? '');
    // The bot's mark, "X" or "O".
    this.you = raw.you || 'X';
    // 0 for the player who moves first in this game.
    this.playerIndex = raw['player-index'] || 0;
    const board = raw.board && typeof raw.board === 'object' ? raw.board : {};
    // 9 cells, each "", "X" or "O".
    this.cells = Array.from({ length: 9 }, (_, i) => board[cellName(i)] || '');
  }

  get opponent() {
    return this.you === 'X' ? 'O' : 'X';
  }

  emptyCells() {
    const out = [];
    this.cells.forEach((v, i) => v === '' && out.push(i));
    return out;
  }
}

// "X" or "O" when that mark has three in a row, else "".
export function winner(cells) {
  for (const [a, b, c] of LINES) if (cells[a] && cells[a] === cells[b] && cells[b] === cells[c]) return cells[a];
  return '';
}

// --------------------------------------------------------------- Skirmish

// Gold and lumber each code costs.
export const COST = { hpea: [75, 0], hfoo: [135, 0], hrif: [205, 30], htow: [385, 205], hhou: [80, 20], hbar: [160, 60] };
// Food each unit uses.
export const FOOD = { hpea: 1, hfoo: 2, hrif: 3 };
// Side of each building's square footprint (units take one tile).
export const SIZE = { htow: 3, hhou: 2, hbar: 3 };
// What each building trains.
export const TRAINS = { htow: ['hpea'], hbar: ['hfoo', 'hrif'] };
export const MINE_SIZE = 2;
// At most this many actions of a reply are read.
export const ACTION_LIMIT = 32;

// One of the side's units or buildings, or a visible enemy one.
export class Unit {
  constructor(raw) {
    this.raw = raw;
    this.id = raw.id;
    // Its code: hpea, hfoo, hrif, htow, hhou, hbar.
    this.type = raw.type;
    this.owner = raw.owner;
    // Its tile (a building's top-left tile).
    this.x = raw.x;
    this.y = raw.y;
    this.hp = raw.hp;
    this.hpMax = raw.hpMax;
    // null (idle), "move", "attack", "gather", "return", "build", "train".
    this.order = raw.order ?? null;
    // The order's target: an id, or a tile {x, y}.
    this.target = raw.target;
    // The building being built (order "build").
    this.code = raw.code;
    // A peasant's load: {gold, lumber}.
    this.carry = raw.carry || { gold: 0, lumber: 0 };
    // Buildings: false while a construction site.
    this.built = raw.built ?? true;
    // Buildings: codes queued, the one in training first.
    this.queue = raw.queue || [];
    this.progress = raw.progress || 0;
    this.size = SIZE[this.type] || 1;
  }

  get isBuilding() {
    return this.type in SIZE;
  }

  // No order (a building: an empty queue).
  get idle() {
    return this.order === null;
  }
}

// A gold mine: a neutral 2×2 structure.
export class Mine {
  constructor(raw) {
    this.id = raw.id;
    this.x = raw.x;
    this.y = raw.y;
    this.gold = raw.gold || 0;
    this.size = MINE_SIZE;
  }
}

// A tile (a tree to fell, a place to go), or a square of `size` tiles.
export class Tile {
  constructor(x, y, size = 1) {
    this.x = x;
    this.y = y;
    this.size = size;
  }
}

// Chebyshev distance between the closest tiles of two things (anything with
// x, y and size: units, buildings, mines, tiles).
export function distance(a, b) {
  const sa = a.size || 1, sb = b.size || 1;
  const dx = Math.max(0, a.x - (b.x + sb - 1), b.x - (a.x + sa - 1));
  const dy = Math.max(0, a.y - (b.y + sb - 1), b.y - (a.y + sa - 1));
  return Math.max(dx, dy);
}

const idOf = (thing) => (typeof thing === 'number' ? thing : thing.id);

// One skirmish game as the side sees it: the same object at every tick of a
// game. The map (sent at tick 0 only), felled trees and the mines' places
// are kept from tick to tick; units, enemies, mines in sight, resources and
// `rejected` are this tick's. Orders are collected and sent as the tick's
// reply when onTick returns: the last order per unit counts (an earlier one
// is replaced, never sent), at most 32 per tick (more are dropped, logged).
export class Game {
  constructor() {
    this.tick = -1;
    this.gameMs = 0;
    this.me = 0;
    // Banked gold and lumber, less what this tick's train orders cost.
    this.gold = 0;
    this.lumber = 0;
    this.foodUsed = 0;
    this.foodCap = 0;
    this.deadlineMs = 0;
    // This tick's clock (budget deadlineMs, aiming at half of it).
    this.clock = new Clock(0);
    this.units = [];
    this.enemies = [];
    this.mines = [];
    // Rejections of the previous tick's reply: {index, reason}.
    this.rejected = [];
    this.width = 0;
    this.height = 0;
    this.rows = [];
    // Every tile seen felled so far, as "x,y".
    this.felled = new Set();
    // The places of every mine listed at tick 0, by id.
    this.minePlaces = new Map();
    this.raw = {};
    this.actions = new Map();
    this.dropped = false;
  }

  // Takes a tick's observation (run() calls it).
  update(obs, startMs = nowMs()) {
    this.raw = obs;
    this.tick = obs.tick ?? 0;
    this.gameMs = obs.gameMs ?? 0;
    this.me = obs.me ?? 0;
    const res = obs.res || {};
    this.gold = res.gold ?? 0;
    this.lumber = res.lumber ?? 0;
    [this.foodUsed, this.foodCap] = res.food || [0, 0];
    this.deadlineMs = obs.deadlineMs ?? 0;
    this.clock = new Clock(this.deadlineMs, this.deadlineMs / 2, startMs);
    this.units = (obs.units || []).map((u) => new Unit(u));
    this.enemies = (obs.visibleEnemies || []).map((u) => new Unit(u));
    this.mines = (obs.mines || []).map((m) => new Mine(m));
    for (const m of this.mines) if (!this.minePlaces.has(m.id)) this.minePlaces.set(m.id, m);
    this.rejected = obs.rejected || [];
    for (const t of obs.cleared || []) this.felled.add(`${t.x},${t.y}`);
    if (obs.map) {
      this.width = obs.map.w;
      this.height = obs.map.h;
      this.rows = obs.map.rows;
    }
    this.actions = new Map();
    this.dropped = false;
  }

  // Own units and buildings of these codes (all when none given).
  my(...types) {
    return this.units.filter((u) => !types.length || types.includes(u.type));
  }

  workers() {
    return this.my('hpea');
  }

  // Peasants without an order, not counting those ordered this tick.
  idleWorkers() {
    return this.workers().filter((u) => u.idle && !this.actions.has(u.id));
  }

  // Own town halls (only finished ones unless `built` is false).
  townHalls(built = true) {
    return this.my('htow').filter((u) => u.built || !built);
  }

  army() {
    return this.my('hfoo', 'hrif');
  }

  // Mines in vision with gold left (those `gather` may name).
  goldMines() {
    return this.mines.slice();
  }

  enemyBuildings() {
    return this.enemies.filter((e) => e.isBuilding);
  }

  // Own units of `code`, plus those queued and, for buildings, those a
  // peasant is on its way to build.
  count(code) {
    let n = this.my(code).length;
    for (const b of this.units) if (b.isBuilding) n += b.queue.filter((q) => q === code).length;
    for (const u of this.workers()) {
      if (u.order === 'build' && u.code === code && !this.siteAt(u.target)) n++;
    }
    return n;
  }

  siteAt(target) {
    return !!target && typeof target === 'object' && this.units.some((b) => b.isBuilding && b.x === target.x && b.y === target.y);
  }

  // The thing nearest to `to` (Chebyshev, closest tiles), the first one
  // listed on a tie; null when there is none.
  nearest(things, to) {
    let best = null, bestD = Infinity;
    for (const t of things) {
      const d = distance(t, to);
      if (d < bestD) {
        best = t;
        bestD = d;
      }
    }
    return best;
  }

  distance(a, b) {
    return distance(a, b);
  }

  // The enemy's start town hall's top-left tile: the map is symmetric under
  // the half-turn, so it is the mirror of the own first hall.
  enemyStart() {
    const halls = this.townHalls(false);
    if (!halls.length || !this.width) return null;
    const h = halls[0];
    return new Tile(this.width - h.x - h.size, this.height - h.y - h.size);
  }

  // "." ground, "T" tree, "#" rock or water ("" off the map), as far as the
  // side knows: a tree seen felled is ground.
  tile(x, y) {
    if (y < 0 || y >= this.height || x < 0 || x >= this.width) return '';
    const c = this.rows[y][x];
    return c === 'T' && this.felled.has(`${x},${y}`) ? '.' : c;
  }

  // Everything known to stand on the map: own buildings and sites, enemy
  // buildings in vision, every mine listed at tick 0.
  structures() {
    return [...this.units.filter((u) => u.isBuilding), ...this.enemyBuildings(), ...this.minePlaces.values()];
  }

  // Tiles within `margin` of a known structure, as "x,y".
  nearStructures(margin) {
    const near = new Set();
    for (const st of this.structures()) {
      const size = st.size || 1;
      for (let ty = st.y - margin; ty < st.y + size + margin; ty++) {
        for (let tx = st.x - margin; tx < st.x + size + margin; tx++) near.add(`${tx},${ty}`);
      }
    }
    return near;
  }

  // Every tile of the size×size square at (x, y) is ground, and no known
  // structure stands within `margin` tiles of it.
  footprintFree(x, y, size, margin = 0, near = this.nearStructures(margin)) {
    for (let ty = y; ty < y + size; ty++) {
      for (let tx = x; tx < x + size; tx++) if (this.tile(tx, ty) !== '.' || near.has(`${tx},${ty}`)) return false;
    }
    return true;
  }

  // A place for building `code` near `near`: its footprint free, with
  // `margin` tiles kept free around it so paths stay open; the nearest one
  // to `near`, by row then column on a tie; null if there is none.
  findSite(code, near, margin = 1, radius = 10) {
    const size = SIZE[code];
    const blocked = this.nearStructures(margin);
    let best = null, bestD = Infinity;
    for (let y = Math.max(0, near.y - radius); y <= Math.min(this.height - size, near.y + radius); y++) {
      for (let x = Math.max(0, near.x - radius); x <= Math.min(this.width - size, near.x + radius); x++) {
        const d = distance(new Tile(x, y, size), near);
        if (d < bestD && this.footprintFree(x, y, size, margin, blocked)) {
          best = new Tile(x, y);
          bestD = d;
        }
      }
    }
    return best;
  }

  canAfford(code) {
    const [gold, lumber] = COST[code];
    return this.gold >= gold && this.lumber >= lumber;
  }

  foodLeft() {
    return this.foodCap - this.foodUsed;
  }

  // Orders: each takes units, buildings and mines as objects or ids.
  order(unit, action) {
    const id = idOf(unit);
    this.actions.delete(id);
    if (this.actions.size >= ACTION_LIMIT) {
      if (!this.dropped) log(`skirmish: more than ${ACTION_LIMIT} orders at tick ${this.tick}; the rest are dropped`);
      this.dropped = true;
      return;
    }
    this.actions.set(id, { do: action.do, unit: id, ...action });
  }

  move(unit, x, y) {
    this.order(unit, { do: 'move', x, y });
  }

  attack(unit, target) {
    this.order(unit, { do: 'attack', target: idOf(target) });
  }

  // A peasant mines `source` (a mine or its id) or fells a tree (a Tile or
  // {x, y}).
  gather(unit, source) {
    if (source === null || source === undefined) return;
    const target = typeof source === 'number' || source instanceof Mine ? idOf(source) : { x: source.x, y: source.y };
    this.order(unit, { do: 'gather', target });
  }

  // A peasant builds `code` with its top-left tile at (x, y); the cost is
  // paid when building starts, not now.
  build(unit, code, x, y) {
    this.order(unit, { do: 'build', code, x, y });
  }

  // Queues `code`; its cost leaves gold/lumber at once, as on the referee's
  // side.
  train(building, code) {
    const earlier = this.actions.get(idOf(building));
    if (earlier && earlier.do === 'train') {
      // Only the last order per unit counts: that one will not be paid.
      const [g, l] = COST[earlier.code] || [0, 0];
      this.gold += g;
      this.lumber += l;
    }
    const [gold, lumber] = COST[code] || [0, 0];
    this.gold -= gold;
    this.lumber -= lumber;
    this.order(building, { do: 'train', code });
  }

  stop(unit) {
    this.order(unit, { do: 'stop' });
  }

  // This tick's orders so far.
  orders() {
    return [...this.actions.values()];
  }

  // The reply to this tick (run() sends it).
  reply() {
    return { t: 'act', tick: this.tick, actions: this.orders() };
  }
}

// -------------------------------------------------------------- The loop

// What a bot implements; override the games it plays.
// - othello(req, clock): a square of req.legalMoves, or an object
//   {move: square, ...} whose other fields go into the replay; called only
//   when there is a legal move (run() answers the pass itself);
// - tictactoe(req, clock): an empty cell, 0..8 (row * 3 + column);
// - onTick(g): skirmish; give orders with g.gather(...), g.train(...)…
export class Bot {
  constructor() {
    // Sent in answer to tic-tac-toe's init message.
    this.name = 'bot';
  }

  othello(req, clock) {
    return req.legalMoves[0];
  }

  tictactoe(req, clock) {
    return req.emptyCells()[0];
  }

  onTick(g) {}
}

// The reply line (without newline) to one request line; `game` carries a
// skirmish game's state from tick to tick. Handy in tests.
export function answer(bot, line, game = new Game(), startMs = nowMs()) {
  let req;
  try {
    req = JSON.parse(line);
  } catch (e) {
    log(`cannot read the request: ${e}`);
    return JSON.stringify({ move: PASS });
  }
  if (!req || typeof req !== 'object') {
    log('the request is not a JSON object');
    return JSON.stringify({ move: PASS });
  }
  if (req.t === 'obs') {
    game.update(req, startMs);
    try {
      bot.onTick(game);
    } catch (e) {
      log(e);
    }
    return JSON.stringify(game.reply());
  }
  if ('action' in req) {
    const ttt = new TicTacToeRequest(req);
    if (ttt.action !== 'play-turn') return JSON.stringify({ name: bot.name });
    // Tic-tac-toe requests carry no clock: 100 ms per turn by default.
    const clock = new Clock(100, 50, startMs);
    let cell;
    try {
      cell = bot.tictactoe(ttt, clock);
      if (!Number.isInteger(cell) || ttt.cells[cell] !== '') throw new Error(`cell ${cell} is not an empty cell`);
    } catch (e) {
      log(e);
      cell = ttt.emptyCells()[0] ?? 0;
    }
    return JSON.stringify({ name: '', play: cellName(cell), error: null });
  }
  const oth = new OthelloRequest(req);
  if (!oth.legalMoves.length) return JSON.stringify({ move: PASS });
  const clock = Clock.forMove(oth.budgetMs, oth.remainingMs, 20, 0.5, startMs);
  let move, extra = {};
  try {
    move = bot.othello(oth, clock);
    if (move !== null && typeof move === 'object') {
      // {move: 19, eval: 0.4}: extra fields go into the replay.
      ({ move, ...extra } = move);
    }
    if (!Number.isInteger(move) || !oth.legalMoves.includes(move)) {
      throw new Error(`move ${move} is not one of the legal moves ${oth.legalMoves}`);
    }
  } catch (e) {
    log(e);
    move = oth.legalMoves[0];
    extra = {};
  }
  return JSON.stringify({ move, ...extra });
}

// Request lines from stdin: a read happens only when no whole line is left.
class Lines {
  constructor() {
    this.buf = new Uint8Array(0);
    this.ended = false;
  }

  // The next line (without its newline), or null at the end of stdin.
  next() {
    for (;;) {
      const nl = this.buf.indexOf(10);
      if (nl >= 0) {
        const line = decoder.decode(this.buf.subarray(0, nl));
        this.buf = this.buf.subarray(nl + 1);
        return line;
      }
      if (this.ended) {
        const rest = decoder.decode(this.buf);
        this.buf = new Uint8Array(0);
        return rest.trim() ? rest : null;
      }
      const chunk = readChunk();
      if (chunk === null) {
        this.ended = true;
      } else {
        const joined = new Uint8Array(this.buf.length + chunk.length);
        joined.set(this.buf);
        joined.set(chunk, this.buf.length);
        this.buf = joined;
      }
    }
  }

  // True when another whole line has already been read.
  waiting() {
    return this.buf.indexOf(10) >= 0;
  }
}

// Answers request lines from stdin until it ends, one reply line each,
// flushed at once. Call it at the top level of bot.js: natively the loop
// starts there; in the component it starts when wasi:cli/run is called.
export function run(bot) {
  start(() => {
    const lines = new Lines();
    const game = new Game();
    const toLog = (...parts) => log(...parts);
    for (const name of ['log', 'info', 'debug', 'warn', 'error']) console[name] = toLog;
    for (;;) {
      const line = lines.next();
      if (line === null) return;
      const startMs = nowMs();
      if (line.includes('"t":"obs"') && lines.waiting()) {
        // Behind in skirmish: answer only the newest observation (the map
        // arrives once, at tick 0: keep it if it is here).
        if (line.includes('"map"')) {
          try {
            game.update(JSON.parse(line), startMs);
          } catch (e) {
            log(`cannot read the observation: ${e}`);
          }
        }
        continue;
      }
      writeOut(encoder.encode(answer(bot, line, game, startMs) + '\n'));
    }
  });
}
