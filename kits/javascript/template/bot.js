// my-bot: greedy Othello (every mode), perfect tic-tac-toe and a skirmish
// economy. Replace the three methods of MyBot with your own.
//
//   node bot.js     natively: arbiter play othello cmd:'node bot.js' house:othello-random
//   sh build.sh     the component: bot.wasm
//
// The same source runs both ways. Its moves depend on the request alone
// (ties go to the first candidate, no clock, no randomness), so the native
// run and the component play the same moves from the same seed.

import { Bot, run, flips, winner } from './arbiter.js';

class MyBot extends Bot {
  constructor() {
    super();
    this.name = 'my-bot';
  }

  // The legal move that flips the most discs (in anti: the fewest); the
  // first in legalMoves on a tie.
  othello(req, clock) {
    const sign = req.isAnti ? -1 : 1;
    let best = req.legalMoves[0], bestScore = -Infinity;
    for (const m of req.legalMoves) {
      const score = sign * flips(req.board, req.boardSize, m, req.color).length;
      if (score > bestScore) {
        best = m;
        bestScore = score;
      }
    }
    return best;
  }

  // Perfect play: the cell with the best minimax value (the first one on a
  // tie).
  tictactoe(req, clock) {
    let best = -1, bestValue = -2;
    for (const cell of req.emptyCells()) {
      const after = req.cells.slice();
      after[cell] = req.you;
      const value = -valueOf(after, req.opponent);
      if (value > bestValue) {
        best = cell;
        bestValue = value;
      }
    }
    return best;
  }

  // An economy: every idle peasant mines the nearest gold, the town hall
  // trains peasants up to 12, a farm goes up when food runs short, a
  // barracks once there are 8 peasants; footmen gather at home and, six
  // strong, attack what they see or march to the enemy's start.
  onTick(g) {
    const hall = g.townHalls()[0];
    if (!hall) return;
    for (const w of g.idleWorkers()) g.gather(w, g.nearest(g.goldMines(), w));
    const builders = g.workers().filter((w) => w.order === 'gather');
    if (g.foodLeft() <= 2 && g.count('hhou') === g.my('hhou').length && g.canAfford('hhou') && builders.length) {
      buildNear(g, hall, 'hhou', builders);
    } else if (g.count('hpea') >= 8 && g.count('hbar') === 0 && g.canAfford('hbar') && builders.length) {
      buildNear(g, hall, 'hbar', builders);
    }
    if (!hall.queue.length && g.count('hpea') < 12 && g.foodLeft() >= 1 && g.canAfford('hpea')) g.train(hall, 'hpea');
    for (const barracks of g.my('hbar')) {
      if (barracks.built && barracks.queue.length < 2 && g.foodLeft() >= 2 && g.canAfford('hfoo')) g.train(barracks, 'hfoo');
    }
    const army = g.army();
    if (army.length >= 6) {
      for (const f of army) {
        const target = g.nearest(g.enemies, f);
        if (target && f.order !== 'attack') {
          g.attack(f, target);
        } else if (!target && f.idle) {
          const goal = g.enemyStart();
          if (goal) g.move(f, goal.x, goal.y);
        }
      }
    }
  }
}

function buildNear(g, hall, code, builders) {
  const site = g.findSite(code, hall);
  if (site) g.build(g.nearest(builders, site), code, site.x, site.y);
}

// Minimax values of tic-tac-toe grids, by grid and player to move: 1 win,
// 0 draw, -1 loss for the player to move.
const values = new Map();

function valueOf(cells, toMove) {
  const key = cells.map((c) => c || '.').join('') + toMove;
  let v = values.get(key);
  if (v !== undefined) return v;
  if (winner(cells)) {
    v = -1; // the previous move won
  } else if (!cells.includes('')) {
    v = 0;
  } else {
    const other = toMove === 'X' ? 'O' : 'X';
    v = -1;
    for (let cell = 0; cell < 9 && v < 1; cell++) {
      if (cells[cell] !== '') continue;
      cells[cell] = toMove;
      v = Math.max(v, -valueOf(cells, other));
      cells[cell] = '';
    }
  }
  values.set(key, v);
  return v;
}

// Solve tic-tac-toe now: in a component this runs at build time (the
// snapshot keeps the table), natively at start-up (a few ms).
valueOf(Array(9).fill(''), 'X');

run(new MyBot());
