// Rebuilds the positions of a replay's games from the replay JSON alone:
// a small Othello implementation (flips, passes `--`, a centre phase on a
// board that starts empty, blocked squares) and tic-tac-toe.
//
// It names no mode: each Othello mode's board (size, blocked squares,
// whether it starts empty) comes from the games' catalogue, which the
// server renders into the page as JSON (`<script id="arbiter-games">`, the
// output of `arbiter games --json`) and which setCatalogue() also takes.
//
// Used by replay.js in the browser (as window.ArbiterGames) and by
// web/tests/games.test.mjs in Node, which checks it against the final boards
// of real replays in every mode.
(function (root) {
  'use strict';

  var DIRECTIONS = [[-1, -1], [-1, 0], [-1, 1], [0, -1], [0, 1], [1, -1], [1, 0], [1, 1]];

  // Each board game's boards by ladder (`GAME:MODE`), from the catalogue.
  var boards = {};

  // Takes in the games' catalogue (the JSON of `arbiter games --json`).
  function setCatalogue(games) {
    boards = {};
    (games || []).forEach(function (game) {
      (game.modes || []).forEach(function (mode) {
        if (mode.board) boards[game.name + ':' + mode.name] = mode.board;
      });
    });
  }

  // The board of `game` in `mode` ({size, blocked, starts_empty}), or null
  // when the catalogue has none (a game without a board).
  function boardOf(game, mode) {
    return boards[game + ':' + mode] || null;
  }

  // A square's name: column letter and row number from 1 (`a1`, `j10`).
  function squareName(square, size) {
    return String.fromCharCode(97 + (square % size)) + String(Math.floor(square / size) + 1);
  }

  // Reads `d3`, `D3`, `j10` or `J0` (tenth row on 10×10); null if not a square.
  function parseSquare(name, size) {
    var m = /^([a-jA-J])(\d{1,2})$/.exec(String(name).trim());
    if (!m) return null;
    var column = m[1].toLowerCase().charCodeAt(0) - 97;
    var row = parseInt(m[2], 10);
    if (row === 0 && size === 10 && m[2].length === 1) row = 10;
    if (column >= size || row < 1 || row > size) return null;
    return (row - 1) * size + column;
  }

  function isPass(action) {
    var a = String(action).toLowerCase();
    return a === '--' || a === 'pass' || a === 'pa' || a === 'ps' || a === '-1';
  }

  function startBoard(rules) {
    var size = rules.size;
    var board = new Array(size * size).fill(0);
    if (!rules.starts_empty) {
      var c = size / 2 - 1; // d4 on 8×8, e5 on 10×10
      board[c * size + c] = 2;
      board[c * size + c + 1] = 1;
      board[(c + 1) * size + c] = 1;
      board[(c + 1) * size + c + 1] = 2;
    }
    return board;
  }

  function centreSquares(size) {
    var c = size / 2 - 1;
    return [c * size + c, c * size + c + 1, (c + 1) * size + c, (c + 1) * size + c + 1];
  }

  // Plays `square` for `color` (1 black, 2 white) on a copy of `board`.
  // Returns {board, flipped, legal}; `legal` is false when the square is
  // taken or blocked, or (outside the centre phase of a board that starts
  // empty) flips nothing.
  function place(board, size, blocked, startsEmpty, color, square) {
    var next = board.slice();
    var flipped = [];
    if (square < 0 || square >= size * size || board[square] !== 0 || blocked.has(square)) {
      return { board: next, flipped: flipped, legal: false };
    }
    var centre = centreSquares(size);
    var centrePhase = startsEmpty && centre.some(function (s) { return board[s] === 0; });
    next[square] = color;
    if (centrePhase) {
      return { board: next, flipped: flipped, legal: centre.indexOf(square) >= 0 };
    }
    var opponent = 3 - color;
    var row = Math.floor(square / size);
    var column = square % size;
    DIRECTIONS.forEach(function (d) {
      var line = [];
      var r = row + d[0];
      var c = column + d[1];
      while (r >= 0 && r < size && c >= 0 && c < size) {
        var s = r * size + c;
        if (blocked.has(s) || board[s] !== opponent) break;
        line.push(s);
        r += d[0];
        c += d[1];
      }
      if (line.length && r >= 0 && r < size && c >= 0 && c < size) {
        var end = r * size + c;
        if (!blocked.has(end) && board[end] === color) {
          line.forEach(function (s) { next[s] = color; });
          flipped = flipped.concat(line);
        }
      }
    });
    return { board: next, flipped: flipped, legal: flipped.length > 0 };
  }

  function counts(board) {
    var black = 0;
    var white = 0;
    board.forEach(function (v) {
      if (v === 1) black += 1;
      else if (v === 2) white += 1;
    });
    return [black, white];
  }

  // Every position of one Othello leg: frame 0 is the start, then one frame
  // per opening move and per turn that was played (faulted turns change
  // nothing and are skipped).
  function othelloFrames(rules, game) {
    var size = rules.size;
    var blocked = new Set(rules.blocked || []);
    var record = game.record || {};
    var board = startBoard(rules);
    var color = 1;
    var frames = [{ board: board, last: null, flipped: [], color: color, label: 'start', opening: true, turn: -1, legal: true }];
    var opening = record.opening_moves || [];
    opening.forEach(function (square) {
      var played = place(board, size, blocked, rules.starts_empty, color, square);
      board = played.board;
      frames.push({
        board: board, last: square, flipped: played.flipped, mover: color, label: squareName(square, size),
        opening: true, turn: -1, legal: played.legal,
      });
      color = 3 - color;
    });
    (game.turns || []).forEach(function (turn, index) {
      if (turn.fault || turn.action === undefined || turn.action === null) return;
      var mover = Number(turn.side) + 1;
      if (isPass(turn.action)) {
        frames.push({ board: board, last: null, flipped: [], mover: mover, label: '--', opening: false, turn: index, legal: true, pass: true });
        color = 3 - mover;
        return;
      }
      var square = parseSquare(turn.action, size);
      if (square === null) return;
      var played = place(board, size, blocked, rules.starts_empty, mover, square);
      board = played.board;
      frames.push({
        board: board, last: square, flipped: played.flipped, mover: mover, label: squareName(square, size),
        opening: false, turn: index, legal: played.legal,
      });
      color = 3 - mover;
    });
    return { size: size, blocked: blocked, frames: frames, openingLength: opening.length };
  }

  var TTT_KEYS = ['0-0', '0-1', '0-2', '1-0', '1-1', '1-2', '2-0', '2-1', '2-2'];

  // A tic-tac-toe square (`row-column`, from 0) as people name it:
  // `0-1` is "top middle", `1-1` the "centre" (the play page says the same).
  function tttWords(key) {
    var m = /^([0-2])-([0-2])$/.exec(String(key));
    if (!m) return String(key);
    if (m[1] === '1' && m[2] === '1') return 'centre';
    return ['top', 'middle', 'bottom'][Number(m[1])] + ' ' + ['left', 'middle', 'right'][Number(m[2])];
  }

  // Every position of one tic-tac-toe game: frame 0 is the empty grid, then
  // one frame per move (the `init` turns and faulted turns are skipped).
  function tictactoeFrames(game) {
    var board = new Array(9).fill('');
    var frames = [{ board: board, last: null, label: 'start', opening: true, turn: -1, legal: true }];
    (game.turns || []).forEach(function (turn, index) {
      if (turn.fault || typeof turn.action !== 'string' || !/^[0-2]-[0-2]$/.test(turn.action)) return;
      var square = TTT_KEYS.indexOf(turn.action);
      var mark = Number(turn.side) === 0 ? 'X' : 'O';
      var legal = board[square] === '';
      board = board.slice();
      board[square] = mark;
      frames.push({ board: board, last: square, mover: Number(turn.side) + 1, label: turn.action, opening: false, turn: index, legal: legal });
    });
    return { size: 3, blocked: new Set(), frames: frames, openingLength: 0 };
  }

  // The frames of game `game` of `replay`, and whether the last one agrees
  // with what the replay recorded (`record.discs` and `record.final_board`
  // for Othello, `record.final_board` for tic-tac-toe).
  function replayGame(replay, game) {
    var rules = boardOf(replay.game, replay.mode);
    var built = rules ? othelloFrames(rules, game) : tictactoeFrames(game);
    var last = built.frames[built.frames.length - 1].board;
    var record = game.record || {};
    var agrees = true;
    if (rules) {
      var c = counts(last);
      if (record.discs) agrees = agrees && c[0] === record.discs[0] && c[1] === record.discs[1];
      if (record.final_board) agrees = agrees && record.final_board.every(function (v, i) { return v === last[i]; });
    } else if (record.final_board) {
      agrees = TTT_KEYS.every(function (key, i) { return (record.final_board[key] || '') === last[i]; });
    }
    built.agrees = agrees;
    built.illegal = built.frames.filter(function (f) { return !f.legal; }).length;
    return built;
  }

  // In a page, the catalogue the server rendered into it.
  if (typeof document !== 'undefined') {
    var catalogue = document.getElementById('arbiter-games');
    if (catalogue) {
      try {
        setCatalogue(JSON.parse(catalogue.textContent));
      } catch (error) {
        boards = {};
      }
    }
  }

  var api = {
    setCatalogue: setCatalogue,
    boardOf: boardOf,
    squareName: squareName,
    parseSquare: parseSquare,
    counts: counts,
    othelloFrames: othelloFrames,
    tictactoeFrames: tictactoeFrames,
    replayGame: replayGame,
    TTT_KEYS: TTT_KEYS,
    tttWords: tttWords,
  };
  root.ArbiterGames = api;
})(typeof window !== 'undefined' ? window : globalThis);
