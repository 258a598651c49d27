// arbiter.ts: the protocol library of the AssemblyScript kit for Arbiter.
//
// A bot is a WASI command: `_start` reads one JSON request line from stdin per
// turn and writes one reply line to stdout. `run` does that loop; the bot
// gives it one function per game. Everything here uses only the WASI calls the
// sandbox provides (through @assemblyscript/wasi-shim): fd_read, fd_write,
// clock_time_get (virtual time: fuel), random_get (seeded by the match).
//
//   run(chooseOthello, chooseTicTacToe, "my-bot");
//
// Contents: the loop (`run`), the requests (`OthelloRequest`,
// `TicTacToeRequest`), the time helper (`Deadline`), a seeded random number
// generator (`Rng`), Othello rules (`Board`, square names), a small JSON
// reader (`JsonReader`) and `log` for stderr.

// ---------------------------------------------------------------- constants

/** What an Othello chooser returns to pass (only when legal_moves is []). */
export const PASS: i32 = -1;
export const EMPTY: i8 = 0;
export const BLACK: i8 = 1;
export const WHITE: i8 = 2;
/** A blocked square (octagon corners) in a `Board`; requests show them as 0. */
export const BLOCKED: i8 = 3;

// ---------------------------------------------------------------- requests

/** One entry of `history`: a move played in this leg after the opening. */
export class HistoryEntry {
  color: i32 = 0;
  participant: i32 = 0;
  /** The square, or PASS. */
  move: i32 = PASS;
  atMs: i64 = 0;
}

/** The FlipSight engine request (docs/spec/othello.md), field for field. */
export class OthelloRequest {
  /** size*size cells: 0 empty (or blocked), 1 black, 2 white. */
  board: Array<i32> = [];
  /** The colour to move, which is the bot's: 1 black, 2 white. */
  color: i32 = 0;
  /** Legal squares for `color`; empty means the bot must pass. */
  legalMoves: Array<i32> = [];
  /** "std", "anti", "grand", "octagon" or "reversi". */
  gameMode: string = "std";
  /** 8 or 10. */
  boardSize: i32 = 8;
  /** Octagon's blocked squares (unsorted), [] elsewhere. */
  blockedSquares: Array<i32> = [];
  /** Discs placed so far by black and by white (opening included). */
  placedBlack: i32 = 0;
  placedWhite: i32 = 0;
  /** The bot's clock left in this leg, and the most this move may take. */
  remainingMs: i64 = 0;
  budgetMs: i64 = 0;
  matchId: i64 = 0;
  leg: i32 = 0;
  revision: i32 = 0;
  history: Array<HistoryEntry> = [];

  /** The opponent's colour. */
  get opponent(): i32 { return 3 - this.color; }
  /** Whether the winner is the one with FEWER discs. */
  get isAnti(): bool { return this.gameMode == "anti"; }
  /** The position as a Board (blocked squares marked BLOCKED). */
  toBoard(): Board { return Board.fromRequest(this); }
}

/** The botsarena tic-tac-toe message (docs/spec/tictactoe.md). */
export class TicTacToeRequest {
  gameId: string = "";
  /** "init" or "play-turn". */
  action: string = "";
  /** Cells 0..8 (row*3 + column): 0 empty, 1 X, 2 O. */
  board: StaticArray<i32> = new StaticArray<i32>(9);
  /** The bot's mark: 1 for "X", 2 for "O". */
  you: i32 = 0;
  /** 0 for the side that moves first in this game. */
  playerIndex: i32 = 0;
}

// ---------------------------------------------------------------- the loop

/** Chooses an Othello move: one of `request.legalMoves`, or PASS if empty. */
export type OthelloChooser = (request: OthelloRequest, deadline: Deadline) => i32;
/** Chooses a tic-tac-toe cell 0..8 (row*3 + column) that is empty. */
export type TicTacToeChooser = (request: TicTacToeRequest, deadline: Deadline) => i32;

/**
 * Serves requests until stdin ends: reads a line, parses it, calls the
 * chooser of its game, writes the reply line. Othello replies are
 * `{"move":19}` or `{"move":"--"}` (pass); tic-tac-toe replies are
 * `{"name":"my-bot"}` to init and `{"name":"","play":"1-2","error":null}`.
 * `note(...)` adds a field to the next reply (kept in the replay).
 *
 * Memory: after each reply the garbage of the turn is collected, so keep what
 * must survive between turns in globals (module-level variables).
 */
export function run(othello: OthelloChooser, tictactoe: TicTacToeChooser, name: string): void {
  // Kept in globals so that __collect() below sees them as alive.
  botName = name;
  chooseOthello = othello;
  chooseTicTacToe = tictactoe;
  serve();
}

let botName: string = "";
let chooseOthello: OthelloChooser | null = null;
let chooseTicTacToe: TicTacToeChooser | null = null;

function serve(): void {
  const name = botName;
  const othello = chooseOthello!;
  const tictactoe = chooseTicTacToe!;
  while (true) {
    const line = readLine();
    if (line < 0) return; // stdin ended: the game is over
    const deadline = new Deadline(lineArrivedNs);
    const json = new JsonReader(inStart, inStart + <usize>line);
    const parsed = parseRequest(json);
    let reply: string;
    if (parsed.isTicTacToe) {
      const request = parsed.tictactoe;
      if (!json.ok) {
        log("cannot read request: " + currentLine());
        reply = '{"name":' + quote(name) + ',"play":null,"error":"unreadable request"}';
      } else if (request.action == "init") {
        reply = '{"name":' + quote(name) + "}";
      } else {
        // Tic-tac-toe requests carry no clock: 100 ms a turn and 1 s a game by
        // default, and the upload check plays with 400 ms a game.
        deadline.budgetMs = 50;
        deadline.remainingMs = 400;
        const cell = tictactoe(request, deadline);
        reply = '{"name":"","play":"' + cellName(cell) + '","error":null' + takeNote() + "}";
      }
    } else {
      const request = parsed.othello;
      if (!json.ok) log("cannot read request: " + currentLine());
      deadline.budgetMs = request.budgetMs;
      deadline.remainingMs = request.remainingMs;
      const legal = request.legalMoves;
      const move = json.ok ? othello(request, deadline) : legal.length > 0 ? legal[0] : PASS;
      const value = move < 0 ? '"--"' : move.toString();
      reply = '{"move":' + value + takeNote() + "}";
    }
    consumeLine();
    writeLine(reply);
    // Free this turn's garbage (runtime "minimal": collection only happens
    // here, between turns, where no object is held on the stack).
    __collect();
  }
}

let pendingNote: string = "";

/**
 * Adds `"note":"text"` to the next reply. The referee ignores extra reply
 * fields but keeps them in the replay, which makes them a handy debug channel
 * (search depth, evaluation...). Keep it short: a reply line is at most 64 KiB.
 */
export function note(text: string): void {
  pendingNote = text;
}

function takeNote(): string {
  if (pendingNote.length == 0) return "";
  const field = ',"note":' + quote(pendingNote);
  pendingNote = "";
  return field;
}

/** Writes one line to stderr (the bot's log, kept in the replay's record). */
export function log(message: string): void {
  process.stderr.write(message + "\n");
}

// ---------------------------------------------------------------- stdin/stdout

// One buffer for input; a line is read up to its '\n' and never beyond what
// the host made available (asking for input before replying ends the turn).
let inBuf = new ArrayBuffer(1 << 16);
let inStart: usize = 0; // where the current line starts
let inEnd: usize = 0; // where the data read so far ends
let lineArrivedNs: u64 = 0;

/** Reads until a full line is buffered; returns its length (without '\n'), or -1 at end of input. */
function readLine(): i32 {
  let base = changetype<usize>(inBuf);
  if (inStart == 0) {
    inStart = base;
    inEnd = base;
  }
  let scanned = inStart;
  while (true) {
    for (let p = scanned; p < inEnd; p++) {
      if (load<u8>(p) == 0x0a) {
        lineArrivedNs = process.hrtime();
        let len = <i32>(p - inStart);
        if (len > 0 && load<u8>(p - 1) == 0x0d) len--; // tolerate "\r\n"
        lineEnd = p + 1;
        return len;
      }
    }
    scanned = inEnd;
    // Make room: move the partial line to the front, grow if full.
    if (inStart > base) {
      memory.copy(base, inStart, inEnd - inStart);
      scanned -= inStart - base;
      inEnd -= inStart - base;
      inStart = base;
    }
    if (inEnd - base == <usize>inBuf.byteLength) {
      const bigger = new ArrayBuffer(inBuf.byteLength * 2);
      memory.copy(changetype<usize>(bigger), base, inEnd - base);
      const shift = changetype<usize>(bigger) - base;
      inBuf = bigger;
      base = changetype<usize>(bigger);
      inStart = base;
      inEnd += shift;
      scanned += shift;
    }
    const got = process.stdin.read(inBuf, <isize>(inEnd - base));
    if (got <= 0) {
      if (inEnd > inStart) {
        // A last line without '\n': serve it anyway.
        lineArrivedNs = process.hrtime();
        lineEnd = inEnd;
        return <i32>(inEnd - inStart);
      }
      return -1;
    }
    inEnd += <usize>got;
  }
}

let lineEnd: usize = 0;

function consumeLine(): void {
  inStart = lineEnd;
  if (inStart == inEnd) {
    inStart = changetype<usize>(inBuf);
    inEnd = inStart;
  }
}

/** The current request line as a string (for error messages). */
function currentLine(): string {
  return String.UTF8.decodeUnsafe(inStart, lineEnd - inStart);
}

/** Writes `text` and '\n' to stdout in one call. */
function writeLine(text: string): void {
  process.stdout.write(text + "\n");
}

// ---------------------------------------------------------------- time

/**
 * The time of one move, started when the request line arrived. In the
 * sandbox the clock is virtual (fuel turned into milliseconds), so decisions
 * taken from it are the same on every machine. There are no threads and no
 * exceptions: a search asks `deadline.passed(target)` every few thousand
 * nodes and unwinds by returning when it says yes.
 */
export class Deadline {
  /** The most this move may take, in milliseconds. */
  budgetMs: i64 = 0;
  /** The bot's clock left in this game, in milliseconds. */
  remainingMs: i64 = 0;
  constructor(public startNs: u64) {}

  /** Milliseconds spent on this move so far. */
  elapsedMs(): f64 {
    return <f64>(process.hrtime() - this.startNs) / 1e6;
  }

  /**
   * A target for this move: the bank shared over `movesLeft` moves, never
   * more than half the move's budget nor more than `capMs`.
   */
  target(movesLeft: i32, capMs: f64): f64 {
    const share = <f64>this.remainingMs / <f64>max(movesLeft, 1);
    return min(min(share, <f64>this.budgetMs / 2), capMs);
  }

  /** Whether `targetMs` milliseconds have been spent on this move. */
  passed(targetMs: f64): bool {
    return this.elapsedMs() >= targetMs;
  }
}

// ---------------------------------------------------------------- random

/**
 * A small random number generator (xorshift64*). `Rng.fromHost()` seeds it
 * from the host's random_get: in the sandbox a stream seeded by the match,
 * so a game replays move for move.
 */
export class Rng {
  constructor(private state: u64) {
    if (this.state == 0) this.state = 0x9e3779b97f4a7c15;
  }

  static fromHost(): Rng {
    const seed = new Uint8Array(8);
    crypto.getRandomValues(seed);
    return new Rng(load<u64>(seed.dataStart));
  }

  nextU64(): u64 {
    let x = this.state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    this.state = x;
    return x * 0x2545f4914f6cdd1d;
  }

  /** A number in 0..bound-1 (0 when bound <= 0). */
  below(bound: i32): i32 {
    if (bound <= 0) return 0;
    return <i32>((this.nextU64() >> 33) % <u64>bound);
  }

  /** A number in [0, 1). */
  float(): f64 {
    return <f64>(this.nextU64() >> 11) / 9007199254740992.0;
  }
}

// ---------------------------------------------------------------- Othello rules

const DR: StaticArray<i32> = [-1, -1, -1, 0, 0, 1, 1, 1];
const DC: StaticArray<i32> = [-1, 0, 1, -1, 1, -1, 0, 1];

/**
 * An Othello position for search: `cells[row*size + col]` is EMPTY, BLACK,
 * WHITE or BLOCKED. The rules are those of docs/spec/othello.md, all modes.
 */
export class Board {
  cells: StaticArray<i8>;
  placedBlack: i32 = 0;
  placedWhite: i32 = 0;
  constructor(public size: i32, public reversi: bool = false) {
    this.cells = new StaticArray<i8>(size * size);
  }

  static fromRequest(request: OthelloRequest): Board {
    const size = request.boardSize;
    const board = new Board(size, request.gameMode == "reversi");
    const n = min(size * size, request.board.length);
    for (let i = 0; i < n; i++) board.cells[i] = <i8>request.board[i];
    for (let i = 0; i < request.blockedSquares.length; i++) {
      const sq = request.blockedSquares[i];
      if (sq >= 0 && sq < size * size) board.cells[sq] = BLOCKED;
    }
    board.placedBlack = request.placedBlack;
    board.placedWhite = request.placedWhite;
    return board;
  }

  clone(): Board {
    const copy = new Board(this.size, this.reversi);
    memory.copy(changetype<usize>(copy.cells), changetype<usize>(this.cells), <usize>(this.size * this.size));
    copy.placedBlack = this.placedBlack;
    copy.placedWhite = this.placedWhite;
    return copy;
  }

  /** How many discs `color` has. */
  count(color: i32): i32 {
    let n = 0;
    for (let i = 0; i < this.cells.length; i++) if (this.cells[i] == color) n++;
    return n;
  }

  /** In reversi, while a centre square is empty only centre squares are playable. */
  private centrePhase(): bool {
    if (!this.reversi) return false;
    const s = this.size, h = s / 2;
    return this.cells[(h - 1) * s + h - 1] == EMPTY || this.cells[(h - 1) * s + h] == EMPTY ||
      this.cells[h * s + h - 1] == EMPTY || this.cells[h * s + h] == EMPTY;
  }

  /** The discs a move by `color` on `sq` would flip (0: not a flipping move). */
  flips(sq: i32, color: i32): i32 {
    if (this.cells[sq] != EMPTY) return 0;
    const s = this.size, r0 = sq / s, c0 = sq % s, other = <i8>(3 - color);
    let total = 0;
    for (let d = 0; d < 8; d++) {
      const dr = DR[d], dc = DC[d];
      let r = r0 + dr, c = c0 + dc, run = 0;
      // A line stops at the edge, an empty square or a blocked one.
      while (r >= 0 && r < s && c >= 0 && c < s && this.cells[r * s + c] == other) {
        r += dr; c += dc; run++;
      }
      if (run > 0 && r >= 0 && r < s && c >= 0 && c < s && this.cells[r * s + c] == <i8>color) total += run;
    }
    return total;
  }

  /** The legal moves of `color`, in square order ([] means pass). */
  legalMoves(color: i32): Array<i32> {
    const moves = new Array<i32>();
    if (this.reversi && (color == BLACK ? this.placedBlack : this.placedWhite) >= 32) return moves;
    const centre = this.centrePhase();
    const s = this.size, h = s / 2;
    for (let sq = 0; sq < s * s; sq++) {
      if (this.cells[sq] != EMPTY) continue;
      if (centre) {
        const r = sq / s, c = sq % s;
        if ((r == h - 1 || r == h) && (c == h - 1 || c == h)) moves.push(sq);
      } else if (this.flips(sq, color) > 0) {
        moves.push(sq);
      }
    }
    return moves;
  }

  /** Plays `sq` (or PASS) for `color`, flipping what it brackets; returns the flips. */
  play(sq: i32, color: i32): i32 {
    if (sq < 0) return 0;
    const s = this.size, r0 = sq / s, c0 = sq % s, own = <i8>color, other = <i8>(3 - color);
    let total = 0;
    const centre = this.centrePhase();
    this.cells[sq] = own;
    if (color == BLACK) this.placedBlack++; else this.placedWhite++;
    if (centre) return 0;
    for (let d = 0; d < 8; d++) {
      const dr = DR[d], dc = DC[d];
      let r = r0 + dr, c = c0 + dc, run = 0;
      while (r >= 0 && r < s && c >= 0 && c < s && this.cells[r * s + c] == other) {
        r += dr; c += dc; run++;
      }
      if (run > 0 && r >= 0 && r < s && c >= 0 && c < s && this.cells[r * s + c] == own) {
        total += run;
        for (let k = 1; k <= run; k++) this.cells[(r0 + k * dr) * s + c0 + k * dc] = own;
      }
    }
    return total;
  }
}

/** "d3" for 19 on 8×8; on 10×10 the tenth row is "10" (j10 = 99). */
export function squareName(sq: i32, size: i32): string {
  if (sq < 0) return "--";
  return String.fromCharCode(0x61 + sq % size) + (sq / size + 1).toString();
}

/** The square of a name ("d3", "J0", "j10"), PASS for a pass, -2 if unreadable. */
export function parseSquare(name: string, size: i32): i32 {
  const lower = name.toLowerCase();
  if (lower == "--" || lower == "pass" || lower == "pa" || lower == "ps" || lower == "-1") return PASS;
  if (lower.length < 2) return -2;
  const col = lower.charCodeAt(0) - 0x61;
  const row = I32.parseInt(lower.substring(1));
  const r = row == 0 && size == 10 ? 10 : row;
  if (col < 0 || col >= size || r < 1 || r > size) return -2;
  return (r - 1) * size + col;
}

/** "R-C" for a tic-tac-toe cell 0..8. */
export function cellName(cell: i32): string {
  return (cell / 3).toString() + "-" + (cell % 3).toString();
}

// ---------------------------------------------------------------- JSON

/**
 * A small pull reader over UTF-8 JSON in linear memory. It never throws:
 * on malformed input it sets `ok = false` and its loops end.
 *
 *   if (json.beginObject()) {
 *     while (json.nextKey()) {
 *       if (json.key("color")) color = <i32>json.readInt();
 *       else json.skipValue();
 *     }
 *   }
 */
export class JsonReader {
  ok: bool = true;
  private first: bool = false;
  constructor(public pos: usize, public end: usize) {}

  static ofString(text: string): JsonReader {
    const bytes = String.UTF8.encode(text);
    keep = bytes; // keeps the bytes alive while the reader is used
    const p = changetype<usize>(bytes);
    return new JsonReader(p, p + <usize>bytes.byteLength);
  }

  private skipWs(): void {
    while (this.pos < this.end) {
      const c = load<u8>(this.pos);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
      this.pos++;
    }
  }

  /** The next significant byte (0 at the end). */
  peek(): u8 {
    this.skipWs();
    return this.pos < this.end ? load<u8>(this.pos) : 0;
  }

  private fail(): void {
    this.ok = false;
    this.pos = this.end;
  }

  private expect(c: u8): bool {
    if (this.peek() == c) { this.pos++; return true; }
    this.fail();
    return false;
  }

  /** Enters an object; then call nextKey() until it returns false. */
  beginObject(): bool {
    if (!this.expect(0x7b)) return false;
    this.first = true;
    return true;
  }

  /**
   * Moves to the next key of the current object (its value comes next);
   * false at '}'. Compare the key with `key("name")` (no allocation) or read
   * it with `keyString()`.
   */
  nextKey(): bool {
    let c = this.peek();
    if (c == 0x7d) { this.pos++; this.first = false; return false; }
    if (!this.first) {
      if (c != 0x2c) { this.fail(); return false; }
      this.pos++;
    }
    this.first = false;
    if (this.peek() != 0x22) { this.fail(); return false; }
    const start = ++this.pos;
    while (this.pos < this.end && load<u8>(this.pos) != 0x22) {
      if (load<u8>(this.pos) == 0x5c) this.pos++;
      this.pos++;
    }
    if (this.pos >= this.end) { this.fail(); return false; }
    this.keyStart = start;
    this.keyLen = <i32>(this.pos - start);
    this.pos++;
    return this.expect(0x3a);
  }

  private keyStart: usize = 0;
  private keyLen: i32 = 0;

  /** Whether the current key is `name` (ASCII). */
  key(name: string): bool {
    if (name.length != this.keyLen) return false;
    for (let i = 0; i < this.keyLen; i++) {
      if (<u32>load<u8>(this.keyStart + <usize>i) != <u32>name.charCodeAt(i)) return false;
    }
    return true;
  }

  /** The current key as a string (escapes not decoded). */
  keyString(): string {
    return String.UTF8.decodeUnsafe(this.keyStart, <usize>this.keyLen);
  }

  /** Enters an array; then call nextItem() before each element. */
  beginArray(): bool {
    if (!this.expect(0x5b)) return false;
    this.first = true;
    return true;
  }

  /** Whether another element follows (consumes the ','), false at ']'. */
  nextItem(): bool {
    const c = this.peek();
    if (c == 0x5d) { this.pos++; this.first = false; return false; }
    if (!this.first) {
      if (c != 0x2c) { this.fail(); return false; }
      this.pos++;
    }
    this.first = false;
    if (this.pos >= this.end) { this.fail(); return false; }
    return true;
  }

  /** Reads `null` if it comes next. */
  readNull(): bool {
    if (this.peek() == 0x6e && this.end - this.pos >= 4 && load<u32>(this.pos) == 0x6c6c756e) {
      this.pos += 4;
      return true;
    }
    return false;
  }

  /** An integer (a fraction or exponent is read and dropped); 0 and ok=false if none. */
  readInt(): i64 {
    this.skipWs();
    let neg = false;
    if (this.pos < this.end && load<u8>(this.pos) == 0x2d) { neg = true; this.pos++; }
    const start = this.pos;
    let n: i64 = 0;
    while (this.pos < this.end) {
      const d = <i32>load<u8>(this.pos) - 0x30;
      if (d < 0 || d > 9) break;
      n = n * 10 + d;
      this.pos++;
    }
    if (this.pos == start) { this.fail(); return 0; }
    while (this.pos < this.end) { // fraction, exponent
      const c = load<u8>(this.pos);
      if (c == 0x2e || c == 0x65 || c == 0x45 || c == 0x2b || c == 0x2d || (c >= 0x30 && c <= 0x39)) this.pos++;
      else break;
    }
    return neg ? -n : n;
  }

  /** A string value (escapes decoded). */
  readString(): string {
    if (!this.expect(0x22)) return "";
    const start = this.pos;
    let plain = true;
    while (this.pos < this.end) {
      const c = load<u8>(this.pos);
      if (c == 0x22) break;
      if (c == 0x5c) { plain = false; this.pos++; }
      this.pos++;
    }
    if (this.pos >= this.end) { this.fail(); return ""; }
    const stop = this.pos;
    this.pos++; // closing quote
    if (plain) return String.UTF8.decodeUnsafe(start, stop - start);
    let out = "";
    let run = start;
    let p = start;
    while (p < stop) {
      if (load<u8>(p) != 0x5c) { p++; continue; }
      out += String.UTF8.decodeUnsafe(run, p - run);
      const e = load<u8>(p + 1);
      p += 2;
      if (e == 0x6e) out += "\n";
      else if (e == 0x74) out += "\t";
      else if (e == 0x72) out += "\r";
      else if (e == 0x62) out += "\b";
      else if (e == 0x66) out += "\f";
      else if (e == 0x75 && p + 4 <= stop) {
        out += String.fromCharCode(<i32>I32.parseInt(String.UTF8.decodeUnsafe(p, 4), 16));
        p += 4;
      } else out += String.fromCharCode(e);
      run = p;
    }
    return out + String.UTF8.decodeUnsafe(run, stop - run);
  }

  /** An array of integers. */
  readIntArray(): Array<i32> {
    const out = new Array<i32>();
    if (!this.beginArray()) return out;
    while (this.nextItem()) out.push(<i32>this.readInt());
    return out;
  }

  /** Skips a string value without decoding it. */
  private skipString(): void {
    this.pos++; // opening quote
    while (this.pos < this.end) {
      const c = load<u8>(this.pos);
      if (c == 0x22) { this.pos++; return; }
      if (c == 0x5c) this.pos++;
      this.pos++;
    }
    this.fail();
  }

  /** Skips any value. */
  skipValue(): void {
    const c = this.peek();
    if (c == 0x22) { this.skipString(); return; }
    if (c == 0x7b || c == 0x5b) {
      let depth = 0;
      while (this.pos < this.end) {
        const b = load<u8>(this.pos);
        if (b == 0x22) { this.skipString(); continue; }
        this.pos++;
        if (b == 0x7b || b == 0x5b) depth++;
        else if (b == 0x7d || b == 0x5d) { if (--depth == 0) return; }
      }
      this.fail();
      return;
    }
    // number, true, false, null
    const start = this.pos;
    while (this.pos < this.end) {
      const b = load<u8>(this.pos);
      if (b == 0x2c || b == 0x7d || b == 0x5d || b == 0x20) break;
      this.pos++;
    }
    if (this.pos == start) this.fail();
  }
}

let keep: ArrayBuffer | null = null;

/** A JSON string literal for `text`. */
export function quote(text: string): string {
  let out = '"';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c == 0x22) out += '\\"';
    else if (c == 0x5c) out += "\\\\";
    else if (c == 0x0a) out += "\\n";
    else if (c < 0x20) out += "\\u00" + (c < 0x10 ? "0" : "") + c.toString(16);
    else out += String.fromCharCode(c);
  }
  return out + '"';
}

// ---------------------------------------------------------------- request parsing

/** A parsed request line: `isTicTacToe` tells which of the two it is. */
class Parsed {
  isTicTacToe: bool = false;
  othello: OthelloRequest = new OthelloRequest();
  tictactoe: TicTacToeRequest = new TicTacToeRequest();
}

/** Reads either game's request in one pass (their keys differ; "board" by its type). */
function parseRequest(json: JsonReader): Parsed {
  const parsed = new Parsed();
  const r = parsed.othello;
  const t = parsed.tictactoe;
  if (!json.beginObject()) return parsed;
  while (json.nextKey()) {
    if (json.key("board")) {
      const c = json.peek();
      if (c == 0x5b) r.board = json.readIntArray();
      else if (c == 0x7b) parseTicTacToeBoard(json, t);
      else json.skipValue(); // "" at tic-tac-toe's init
    }
    else if (json.key("color")) r.color = <i32>json.readInt();
    else if (json.key("legal_moves")) r.legalMoves = json.readIntArray();
    else if (json.key("game_mode")) r.gameMode = json.readString();
    else if (json.key("board_size")) r.boardSize = <i32>json.readInt();
    else if (json.key("blocked_squares")) r.blockedSquares = json.readIntArray();
    else if (json.key("remaining_ms")) r.remainingMs = json.readInt();
    else if (json.key("budget_ms")) r.budgetMs = json.readInt();
    else if (json.key("match_id")) { if (!json.readNull()) r.matchId = json.readInt(); }
    else if (json.key("leg")) r.leg = <i32>json.readInt();
    else if (json.key("revision")) r.revision = <i32>json.readInt();
    else if (json.key("placed")) {
      if (json.beginObject()) {
        while (json.nextKey()) {
          if (json.key("1")) r.placedBlack = <i32>json.readInt();
          else if (json.key("2")) r.placedWhite = <i32>json.readInt();
          else json.skipValue();
        }
      }
    } else if (json.key("history")) {
      if (json.beginArray()) {
        while (json.nextItem()) r.history.push(parseHistoryEntry(json, r.boardSize));
      }
    }
    else if (json.key("action")) { parsed.isTicTacToe = true; t.action = json.readString(); }
    else if (json.key("game-id")) {
      if (json.peek() == 0x22) t.gameId = json.readString();
      else json.skipValue();
    }
    else if (json.key("you")) t.you = json.readString() == "O" ? 2 : 1;
    else if (json.key("player-index")) t.playerIndex = <i32>json.readInt();
    else json.skipValue();
  }
  return parsed;
}

function parseHistoryEntry(json: JsonReader, size: i32): HistoryEntry {
  const h = new HistoryEntry();
  if (!json.beginObject()) return h;
  while (json.nextKey()) {
    if (json.key("color")) h.color = <i32>json.readInt();
    else if (json.key("participant")) h.participant = <i32>json.readInt();
    else if (json.key("at_ms")) h.atMs = json.readInt();
    else if (json.key("move")) {
      if (json.peek() == 0x22) h.move = parseSquare(json.readString(), size);
      else if (json.readNull()) h.move = PASS;
      else h.move = <i32>json.readInt();
      if (h.move < 0) h.move = PASS;
    } else json.skipValue();
  }
  return h;
}

function parseTicTacToeBoard(json: JsonReader, t: TicTacToeRequest): void {
  json.beginObject();
  while (json.nextKey()) {
    const k = json.keyString();
    const v = json.readString();
    if (k.length == 3) {
      const row = k.charCodeAt(0) - 0x30, col = k.charCodeAt(2) - 0x30;
      if (row >= 0 && row < 3 && col >= 0 && col < 3) {
        t.board[row * 3 + col] = v == "X" ? 1 : v == "O" ? 2 : 0;
      }
    }
  }
}
