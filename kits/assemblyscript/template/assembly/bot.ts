// bot.ts: the template bot. Othello: greedy (the legal move that flips the
// most discs; in `anti` the fewest), ties broken at random. Tic-tac-toe:
// perfect play by minimax. Change `chooseOthello` to make it yours.
import {
  run, log, note, Board, Deadline, Rng, OthelloRequest, TicTacToeRequest, PASS,
} from "./arbiter";

const NAME = "my-bot";

// Globals survive between turns of a game (each game starts a fresh instance).
const rng = Rng.fromHost();

function chooseOthello(request: OthelloRequest, deadline: Deadline): i32 {
  const legal = request.legalMoves;
  if (legal.length == 0) return PASS;
  const board = request.toBoard(); // honours board_size and blocked_squares
  const anti = request.isAnti;
  let best = legal[0];
  let bestFlips = anti ? i32.MAX_VALUE : -1;
  let ties = 0;
  for (let i = 0; i < legal.length; i++) {
    const sq = legal[i];
    const flips = board.flips(sq, request.color);
    const better = anti ? flips < bestFlips : flips > bestFlips;
    if (better) {
      best = sq;
      bestFlips = flips;
      ties = 1;
    } else if (flips == bestFlips) {
      // Reservoir sampling: each tied move is kept with equal probability.
      ties++;
      if (rng.below(ties) == 0) best = sq;
    }
  }
  // A search would loop here while !deadline.passed(deadline.target(30, 500)).
  note("flips " + bestFlips.toString());
  return best;
}

// Tic-tac-toe: cells 0..8, 0 empty, 1 X, 2 O.
const LINES: StaticArray<i32> = [0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 3, 6, 1, 4, 7, 2, 5, 8, 0, 4, 8, 2, 4, 6];

function winner(cells: StaticArray<i32>): i32 {
  for (let i = 0; i < 24; i += 3) {
    const a = cells[LINES[i]];
    if (a != 0 && a == cells[LINES[i + 1]] && a == cells[LINES[i + 2]]) return a;
  }
  return 0;
}

/** The value of the position for `me` with `toMove` to play: +10-depth win, 0 draw, negative loss. */
function minimax(cells: StaticArray<i32>, toMove: i32, me: i32, depth: i32): i32 {
  const w = winner(cells);
  if (w != 0) return w == me ? 10 - depth : depth - 10;
  let best = toMove == me ? -100 : 100;
  let moved = false;
  for (let c = 0; c < 9; c++) {
    if (cells[c] != 0) continue;
    moved = true;
    cells[c] = toMove;
    const v = minimax(cells, 3 - toMove, me, depth + 1);
    cells[c] = 0;
    if (toMove == me ? v > best : v < best) best = v;
  }
  return moved ? best : 0;
}

function chooseTicTacToe(request: TicTacToeRequest, _deadline: Deadline): i32 {
  const cells = request.board;
  const me = request.you;
  let best = -1;
  let bestValue = -1000;
  for (let c = 0; c < 9; c++) {
    if (cells[c] != 0) continue;
    cells[c] = me;
    const v = minimax(cells, 3 - me, me, 1);
    cells[c] = 0;
    if (v > bestValue) {
      bestValue = v;
      best = c;
    }
  }
  if (best < 0) log("no empty cell");
  return best;
}

run(chooseOthello, chooseTicTacToe, NAME);
