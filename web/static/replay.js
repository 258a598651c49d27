// The replay viewer of the match page. It needs only the replay JSON (the
// file a user downloads): it fetches it from the element's data-replay URL,
// rebuilds every position with othello.js and draws the boards in SVG.
//
// Controls: start, back, play/pause, forward, end, speed, a slider to jump
// to any move, and the move lists (click a move; each list is one tab stop,
// with arrow keys, Home and End inside it). Keys: ← → step, Home/End,
// Space plays or pauses (when the viewer has focus, not on a control). Both games (legs) are
// shown side by side and step together, move number by move number.
(function () {
  'use strict';

  var SVG = 'http://www.w3.org/2000/svg';
  var SPEEDS = [['0.5×', 1600], ['1×', 800], ['2×', 400], ['4×', 200], ['8×', 100]];

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function svg(tag, attrs) {
    var node = document.createElementNS(SVG, tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

  // Virtual time: `20 µs`, `3.4 ms`.
  function ms(us) {
    return us < 1000 ? us + ' µs' : (us / 1000).toFixed(1) + ' ms';
  }

  function fuel(n) {
    return n === undefined || n === null ? '' : n.toLocaleString('en') + ' fuel';
  }

  // One game's panel: caption, board, disc counts, move list. A live leg
  // (of a match still being played) has no result yet.
  function Leg(viewer, replay, game, index, live) {
    this.viewer = viewer;
    this.replay = replay;
    this.game = game;
    this.othello = replay.game === 'othello';
    this.built = window.ArbiterGames.replayGame(replay, game);
    this.frames = this.built.frames;
    var names = replay.participants.map(function (p) { return p.name; });
    this.names = [names[game.sides[0]], names[game.sides[1]]];
    this.colours = this.othello ? ['Black', 'White'] : ['X', 'O'];
    this.live = Boolean(live);

    var root = el('section', { class: 'leg', 'data-leg': String(index), 'aria-label': 'Game ' + (index + 1) });
    var head = el('h3', { class: 'leg-title' });
    head.appendChild(el('span', {}, 'Game ' + (index + 1) + ': '));
    head.appendChild(el('span', { class: 'who who-first' }, this.colours[0] + ' ' + this.names[0]));
    head.appendChild(el('span', { class: 'vs' }, ' vs '));
    head.appendChild(el('span', { class: 'who who-second' }, this.colours[1] + ' ' + this.names[1]));
    root.appendChild(head);

    this.board = this.othello ? this.drawOthello() : this.drawTicTacToe();
    root.appendChild(this.board.svg);

    this.status = el('p', { class: 'leg-status', 'aria-live': 'off' });
    this.discs = el('p', { class: 'discs' });
    root.appendChild(this.discs);
    root.appendChild(this.status);

    var finish = el('p', { class: 'leg-finish muted' });
    if (live) {
      finish.textContent = game.turns.length ? 'Being played…' : 'Not started yet.';
    } else {
      var reason = game.reason + (game.detail ? ' — ' + game.detail : '');
      finish.textContent = 'Final: ' + game.scores[0] + '–' + game.scores[1] + ' (' + reason + ')';
    }
    root.appendChild(finish);
    if (!this.built.agrees || this.built.illegal) {
      var warn = el('p', { class: 'error-box replay-mismatch' },
        'This viewer could not rebuild the final position the replay records; the board shown may be wrong.');
      root.appendChild(warn);
    }

    this.list = el('ol', { class: 'movelist', 'aria-label': 'Moves of game ' + (index + 1) });
    var self = this;
    this.items = this.frames.map(function (frame, f) {
      if (f === 0) return null;
      var li = el('li', { class: frame.opening ? 'opening' : '' });
      var button = el('button', { type: 'button', 'data-frame': String(f), class: 'mv mv-' + frame.mover, tabindex: '-1' });
      var turn = frame.turn >= 0 ? game.turns[frame.turn] : null;
      var label = self.othello ? frame.label : window.ArbiterGames.tttWords(frame.label);
      button.textContent = label;
      var title = (frame.opening ? 'opening move ' : 'move ') + f + ': ' + self.colours[frame.mover - 1] + ' ' + label;
      if (turn && turn.spent) title += ' · ' + ms(turn.spent.us) + (turn.spent.fuel !== undefined ? ' · ' + fuel(turn.spent.fuel) : '');
      button.title = title;
      button.setAttribute('aria-label', title);
      button.addEventListener('click', function () { viewer.go(f); });
      li.appendChild(button);
      self.list.appendChild(li);
      return button;
    });
    // The list is one tab stop (the current move); arrow keys, Home and
    // End move inside it and show the move they reach.
    this.list.addEventListener('keydown', function (e) {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      var i = self.items.indexOf(e.target);
      var last = self.items.length - 1;
      if (i < 1) return;
      var next;
      if (e.key === 'ArrowRight' || e.key === 'ArrowDown') next = Math.min(last, i + 1);
      else if (e.key === 'ArrowLeft' || e.key === 'ArrowUp') next = Math.max(1, i - 1);
      else if (e.key === 'Home') next = 1;
      else if (e.key === 'End') next = last;
      else return;
      e.preventDefault();
      e.stopPropagation();
      if (viewer.stop) viewer.stop();
      viewer.go(next);
      self.focusMove(next);
    });
    root.appendChild(this.list);
    this.root = root;
  }

  // Makes move `f` the list's tab stop and focuses it.
  Leg.prototype.focusMove = function (f) {
    var button = this.items[Math.max(1, Math.min(f, this.items.length - 1))];
    if (!button) return;
    this.items.forEach(function (b) { if (b) b.tabIndex = b === button ? 0 : -1; });
    button.focus();
  };

  Leg.prototype.drawOthello = function () {
    var size = this.built.size;
    var cell = 40;
    var margin = 22;
    var full = size * cell + margin;
    var root = svg('svg', { viewBox: '0 0 ' + full + ' ' + full, class: 'board othello-board', role: 'img' });
    root.appendChild(svg('rect', { x: margin, y: margin, width: size * cell, height: size * cell, class: 'felt' }));
    var cells = [];
    var discs = [];
    var marks = [];
    for (var s = 0; s < size * size; s++) {
      var x = margin + (s % size) * cell;
      var y = margin + Math.floor(s / size) * cell;
      if (this.built.blocked.has(s)) {
        root.appendChild(svg('rect', { x: x, y: y, width: cell, height: cell, class: 'blocked' }));
        root.appendChild(svg('path', { d: 'M' + (x + 8) + ' ' + (y + 8) + 'L' + (x + cell - 8) + ' ' + (y + cell - 8) + 'M' + (x + cell - 8) + ' ' + (y + 8) + 'L' + (x + 8) + ' ' + (y + cell - 8), class: 'blocked-x' }));
      }
      cells.push([x, y]);
      var disc = svg('circle', { cx: x + cell / 2, cy: y + cell / 2, r: cell * 0.4, class: 'disc' });
      disc.style.display = 'none';
      discs.push(disc);
      var mark = svg('circle', { cx: x + cell / 2, cy: y + cell / 2, r: cell * 0.1, class: 'last-mark' });
      mark.style.display = 'none';
      marks.push(mark);
    }
    for (var i = 0; i <= size; i++) {
      root.appendChild(svg('line', { x1: margin, x2: margin + size * cell, y1: margin + i * cell, y2: margin + i * cell, class: 'gridline' }));
      root.appendChild(svg('line', { y1: margin, y2: margin + size * cell, x1: margin + i * cell, x2: margin + i * cell, class: 'gridline' }));
    }
    for (var c = 0; c < size; c++) {
      var label = svg('text', { x: margin + c * cell + cell / 2, y: 15, class: 'coord', 'text-anchor': 'middle' });
      label.textContent = String.fromCharCode(97 + c);
      root.appendChild(label);
      var rowLabel = svg('text', { x: 11, y: margin + c * cell + cell / 2 + 4, class: 'coord', 'text-anchor': 'middle' });
      rowLabel.textContent = String(c + 1);
      root.appendChild(rowLabel);
    }
    discs.forEach(function (d) { root.appendChild(d); });
    marks.forEach(function (m) { root.appendChild(m); });
    return { svg: root, discs: discs, marks: marks };
  };

  Leg.prototype.drawTicTacToe = function () {
    var cell = 80;
    var root = svg('svg', { viewBox: '0 0 ' + 3 * cell + ' ' + 3 * cell, class: 'board ttt-board', role: 'img' });
    root.appendChild(svg('rect', { x: 0, y: 0, width: 3 * cell, height: 3 * cell, class: 'paper' }));
    for (var i = 1; i < 3; i++) {
      root.appendChild(svg('line', { x1: 8, x2: 3 * cell - 8, y1: i * cell, y2: i * cell, class: 'ttt-line' }));
      root.appendChild(svg('line', { y1: 8, y2: 3 * cell - 8, x1: i * cell, x2: i * cell, class: 'ttt-line' }));
    }
    var marks = [];
    var lasts = [];
    for (var s = 0; s < 9; s++) {
      var x = (s % 3) * cell;
      var y = Math.floor(s / 3) * cell;
      var last = svg('rect', { x: x + 6, y: y + 6, width: cell - 12, height: cell - 12, rx: 8, class: 'ttt-last' });
      last.style.display = 'none';
      lasts.push(last);
      root.appendChild(last);
      var cross = svg('path', { d: 'M' + (x + 20) + ' ' + (y + 20) + 'L' + (x + 60) + ' ' + (y + 60) + 'M' + (x + 60) + ' ' + (y + 20) + 'L' + (x + 20) + ' ' + (y + 60), class: 'ttt-x' });
      var ring = svg('circle', { cx: x + 40, cy: y + 40, r: 21, class: 'ttt-o' });
      cross.style.display = 'none';
      ring.style.display = 'none';
      root.appendChild(cross);
      root.appendChild(ring);
      marks.push([cross, ring]);
    }
    return { svg: root, marks: marks, lasts: lasts };
  };

  // Shows frame `f` (clamped to this leg's length).
  Leg.prototype.show = function (f) {
    var index = Math.min(f, this.frames.length - 1);
    var frame = this.frames[index];
    var board = frame.board;
    var self = this;
    if (this.othello) {
      var flipped = new Set(frame.flipped || []);
      board.forEach(function (v, s) {
        var disc = self.board.discs[s];
        disc.style.display = v ? '' : 'none';
        disc.setAttribute('class', 'disc ' + (v === 1 ? 'black' : 'white') + (flipped.has(s) ? ' flipped' : ''));
        self.board.marks[s].style.display = frame.last === s ? '' : 'none';
        self.board.marks[s].setAttribute('class', 'last-mark ' + (v === 1 ? 'on-black' : 'on-white'));
      });
      var c = window.ArbiterGames.counts(board);
      this.discs.textContent = '';
      var black = el('span', { class: 'count count-black' });
      black.appendChild(el('span', { class: 'swatch black', 'aria-hidden': 'true' }));
      black.appendChild(document.createTextNode(' Black ' + c[0]));
      var white = el('span', { class: 'count count-white' });
      white.appendChild(el('span', { class: 'swatch white', 'aria-hidden': 'true' }));
      white.appendChild(document.createTextNode(' White ' + c[1]));
      this.discs.appendChild(black);
      this.discs.appendChild(document.createTextNode(' · '));
      this.discs.appendChild(white);
      this.root.dataset.black = String(c[0]);
      this.root.dataset.white = String(c[1]);
    } else {
      board.forEach(function (v, s) {
        self.board.marks[s][0].style.display = v === 'X' ? '' : 'none';
        self.board.marks[s][1].style.display = v === 'O' ? '' : 'none';
        self.board.lasts[s].style.display = frame.last === s ? '' : 'none';
      });
      this.discs.textContent = 'X ' + this.names[0] + ' · O ' + this.names[1];
      this.root.dataset.board = board.map(function (v) { return v || '.'; }).join('');
    }
    var moveText;
    if (index === 0) moveText = 'Start position';
    else moveText = (frame.opening ? 'Opening move ' : 'Move ') + index + ': ' + this.colours[frame.mover - 1] + ' ' +
      (this.othello ? frame.label : window.ArbiterGames.tttWords(frame.label));
    var turn = frame.turn >= 0 ? this.game.turns[frame.turn] : null;
    if (turn && turn.spent) {
      moveText += ' (' + ms(turn.spent.us) + (turn.spent.fuel !== undefined ? ', ' + fuel(turn.spent.fuel) : '') + ')';
    }
    if (index === this.frames.length - 1 && !this.live) moveText += ' — end of the game';
    this.status.textContent = moveText;
    this.root.dataset.frame = String(index);
    this.root.dataset.atEnd = String(index === this.frames.length - 1);
    this.board.svg.setAttribute('aria-label', 'Game ' + (Number(this.root.dataset.leg) + 1) + ', ' + moveText + '. ' + this.discs.textContent);
    var stop = Math.max(1, index);
    this.items.forEach(function (button, i) {
      if (!button) return;
      button.tabIndex = i === stop ? 0 : -1;
      if (i === index) {
        button.setAttribute('aria-current', 'step');
        // Keep the current move visible inside the list without moving the page.
        var list = self.list;
        var top = button.parentNode.offsetTop - list.offsetTop;
        if (top < list.scrollTop || top > list.scrollTop + list.clientHeight - 30) list.scrollTop = Math.max(0, top - list.clientHeight / 2);
      } else {
        button.removeAttribute('aria-current');
      }
    });
  };

  function Viewer(root, replay) {
    this.root = root;
    this.replay = replay;
    this.timer = null;
    this.delay = 800;
    root.textContent = '';
    var self = this;
    this.legs = replay.games.map(function (game, i) { return new Leg(self, replay, game, i); });
    this.max = Math.max.apply(null, this.legs.map(function (l) { return l.frames.length - 1; }));
    var start = Math.min.apply(null, this.legs.map(function (l) { return l.built.openingLength; }));

    var bar = el('div', { class: 'controls', role: 'toolbar', 'aria-label': 'Replay controls', 'aria-controls': 'replay-legs' });
    function button(label, text, action, cls) {
      var b = el('button', { type: 'button', 'aria-label': label, title: label, class: 'ctl ' + (cls || '') }, text);
      b.addEventListener('click', action);
      bar.appendChild(b);
      return b;
    }
    button('First position', '|◀ First', function () { self.stop(); self.go(0); }, 'ctl-start');
    button('Back one move (←)', '◀ Back', function () { self.stop(); self.go(self.pos - 1); }, 'ctl-back');
    this.playButton = button('Play', '▶ Play', function () { self.toggle(); }, 'ctl-play');
    button('Next move (→)', 'Next ▶', function () { self.stop(); self.go(self.pos + 1); }, 'ctl-forward');
    button('Last position', 'Last ▶|', function () { self.stop(); self.go(self.max); }, 'ctl-end');

    var speedLabel = el('label', { class: 'speed' });
    speedLabel.appendChild(document.createTextNode('Speed '));
    this.speed = el('select', { 'aria-label': 'Playback speed' });
    SPEEDS.forEach(function (s) {
      var option = el('option', { value: String(s[1]) }, s[0]);
      if (s[1] === self.delay) option.selected = true;
      self.speed.appendChild(option);
    });
    this.speed.addEventListener('change', function () {
      self.delay = Number(self.speed.value);
      if (self.timer) { self.stop(); self.play(); }
    });
    speedLabel.appendChild(this.speed);
    bar.appendChild(speedLabel);

    var jump = el('label', { class: 'jump' });
    jump.appendChild(document.createTextNode('Move '));
    this.slider = el('input', { type: 'range', min: '0', max: String(this.max), value: String(start), step: '1', 'aria-label': 'Jump to move' });
    this.slider.addEventListener('input', function () { self.stop(); self.go(Number(self.slider.value)); });
    jump.appendChild(this.slider);
    bar.appendChild(jump);
    this.position = el('span', { class: 'position', 'aria-live': 'polite' });
    bar.appendChild(this.position);

    root.appendChild(bar);
    var legs = el('div', { class: 'legs legs-' + this.legs.length, id: 'replay-legs' });
    this.legs.forEach(function (l) { legs.appendChild(l.root); });
    root.appendChild(legs);
    root.setAttribute('tabindex', '-1');
    root.addEventListener('keydown', function (e) { self.key(e, true); });
    document.addEventListener('keydown', function (e) { if (!root.contains(e.target)) self.key(e, false); });
    root.dataset.verified = this.legs.every(function (l) { return l.built.agrees && !l.built.illegal; }) ? 'ok' : 'mismatch';
    root.dataset.ready = 'true';
    this.go(start);
  }

  Viewer.prototype.go = function (f) {
    this.pos = Math.max(0, Math.min(this.max, f));
    this.slider.value = String(this.pos);
    this.slider.setAttribute('aria-valuetext', 'move ' + this.pos + ' of ' + this.max);
    this.position.textContent = this.pos + ' / ' + this.max;
    var pos = this.pos;
    this.legs.forEach(function (l) { l.show(pos); });
    this.root.dataset.pos = String(pos);
    this.root.dataset.atEnd = String(pos === this.max);
    if (pos === this.max) this.stop();
  };

  Viewer.prototype.play = function () {
    var self = this;
    if (this.pos >= this.max) this.go(0);
    this.playButton.textContent = '⏸ Pause';
    this.playButton.setAttribute('aria-label', 'Pause');
    this.playButton.title = 'Pause';
    // While it plays, the position is not read out at every move.
    this.position.setAttribute('aria-live', 'off');
    this.timer = window.setInterval(function () { self.go(self.pos + 1); }, this.delay);
  };

  Viewer.prototype.stop = function () {
    if (this.timer) window.clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = '▶ Play';
    this.playButton.setAttribute('aria-label', 'Play');
    this.playButton.title = 'Play';
    this.position.setAttribute('aria-live', 'polite');
  };

  Viewer.prototype.toggle = function () {
    if (this.timer) this.stop();
    else this.play();
  };

  // Keys: arrows anywhere outside form fields; Home, End and Space only
  // while the viewer has focus (elsewhere they scroll the page).
  Viewer.prototype.key = function (e, inside) {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    var tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') return;
    var handled = true;
    if (e.key === 'ArrowRight') { this.stop(); this.go(this.pos + 1); }
    else if (e.key === 'ArrowLeft') { this.stop(); this.go(this.pos - 1); }
    else if (inside && e.key === 'Home') { this.stop(); this.go(0); }
    else if (inside && e.key === 'End') { this.stop(); this.go(this.max); }
    else if (inside && e.key === ' ' && tag !== 'BUTTON') this.toggle();
    else handled = false;
    if (handled) e.preventDefault();
  };

  // The boards of a match being played: the replay so far (from the page),
  // redrawn at its newest position as turns arrive from the event stream.
  function LiveBoards(root, replay) {
    this.root = root;
    this.replay = replay;
    this.turns = 0;
    this.pending = false;
    this.draw();
  }

  LiveBoards.prototype.draw = function () {
    var self = this;
    var stub = { go: function () {} };
    var legs = el('div', { class: 'legs legs-' + this.replay.games.length });
    this.legs = this.replay.games.map(function (game, i) {
      var leg = new Leg(stub, self.replay, game, i, true);
      legs.appendChild(leg.root);
      leg.show(leg.frames.length - 1);
      return leg;
    });
    this.root.textContent = '';
    this.root.appendChild(legs);
    this.root.dataset.turns = String(this.turns);
    this.root.dataset.ready = 'true';
  };

  // Adds a `turn` event ({game, side, action, fault}); redraws at most
  // every 150 ms.
  LiveBoards.prototype.add = function (turn) {
    var game = this.replay.games[Number(turn.game)];
    if (!game) return;
    game.turns.push({ side: Number(turn.side), action: turn.action, fault: turn.fault });
    this.turns += 1;
    if (this.pending) return;
    this.pending = true;
    var self = this;
    window.setTimeout(function () { self.pending = false; self.draw(); }, 150);
  };

  // Viewer: replay_open.js shows a replay file read in the browser with it.
  window.ArbiterReplay = { LiveBoards: LiveBoards, Viewer: Viewer };

  function start() {
    var root = document.getElementById('replay');
    if (!root || !window.ArbiterGames) return;
    // Said only while scripts run: without them the page says what to do.
    root.appendChild(el('p', { class: 'muted', id: 'replay-loading' }, 'Loading the replay…'));
    fetch(root.dataset.replay, { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (response) {
        if (!response.ok) throw new Error('the replay could not be loaded (HTTP ' + response.status + ')');
        return response.json();
      })
      .then(function (replay) {
        if (replay.format !== 'arbiter-replay') throw new Error('this is not an Arbiter replay');
        root.viewer = new Viewer(root, replay);
      })
      .catch(function (error) {
        root.textContent = '';
        root.appendChild(el('p', { class: 'error-box' }, 'Cannot show the replay: ' + error.message));
        root.dataset.ready = 'error';
      });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
