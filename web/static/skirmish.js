// The skirmish viewer of the match page: a canvas that plays a game back
// from its frames (/api/matches/ID/frames?game=N: the map, the start, what
// changed in every tick, the end). It rebuilds every tick's state from the
// changes, checks the rebuilt end against the frames' own end
// (data-verified="ok"), and draws both sides, or one side's view with the
// fog of war, with a timeline scrubber and graphs of resources and army.
//
// Keys, as in the board games' viewer: ← → step (outside form fields);
// Home/End and Space (plays or pauses) while focus is in the viewer (a
// click on the map or the graphs gives it the focus) but not on a
// control: there Space and Enter press the focused button, and the view
// list keeps its keys. A legend names the tiles and pieces; the graphs
// have axes; the map's and the graphs' text alternatives say what they
// show at the current tick.
// While the match is being played, site.js follows it and hands every
// map it receives to ArbiterSkirmishLive.
(function () {
  'use strict';

  var COLOURS = ['#2563eb', '#dc2626'];
  var TERRAIN = { '.': '#e9e4d4', 'T': '#4d7c3a', '#': '#6b6b6b' };
  var ARMY = { hfoo: true, hrif: true };
  var KEY_EVERY = 100;
  var MINE = '#d4a017';

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { node.setAttribute(k, attrs[k]); });
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A state: units by id ([id, x, y, hp, side, kind]), banks, mines by id
  // ([id, x, y, gold]) and felled tiles ("x,y").
  function fromSnapshot(snap) {
    var units = {};
    snap.units.forEach(function (u) { units[u[0]] = u.slice(); });
    var mines = {};
    snap.mines.forEach(function (m) { mines[m[0]] = m.slice(); });
    var felled = {};
    snap.felled.forEach(function (t) { felled[t[0] + ',' + t[1]] = true; });
    return { tick: snap.tick, units: units, res: snap.res.slice(), mines: mines, felled: felled };
  }

  function copy(state) {
    var units = {};
    Object.keys(state.units).forEach(function (id) { units[id] = state.units[id].slice(); });
    var mines = {};
    Object.keys(state.mines).forEach(function (id) { mines[id] = state.mines[id].slice(); });
    var felled = {};
    Object.keys(state.felled).forEach(function (k) { felled[k] = true; });
    return { tick: state.tick, units: units, res: state.res.slice(), mines: mines, felled: felled };
  }

  // Applies one tick's changes in place.
  function apply(state, delta) {
    (delta.u || []).forEach(function (u) {
      var old = state.units[u[0]];
      state.units[u[0]] = u.length === 6 ? u.slice() : [u[0], u[1], u[2], u[3], old ? old[4] : 0, old ? old[5] : 0];
    });
    (delta.d || []).forEach(function (id) { delete state.units[id]; });
    if (delta.r) state.res = delta.r.slice();
    (delta.m || []).forEach(function (m) {
      if (m[1] === 0) delete state.mines[m[0]];
      else if (state.mines[m[0]]) state.mines[m[0]][3] = m[1];
    });
    (delta.f || []).forEach(function (t) { state.felled[t[0] + ',' + t[1]] = true; });
    state.tick += 1;
  }

  // A state in the frames' snapshot form, for comparing.
  function toSnapshot(state) {
    var ids = Object.keys(state.units).map(Number).sort(function (a, b) { return a - b; });
    var mineIds = Object.keys(state.mines).map(Number).sort(function (a, b) { return a - b; });
    return {
      tick: state.tick,
      units: ids.map(function (id) { return state.units[id]; }),
      res: state.res,
      mines: mineIds.map(function (id) { return state.mines[id]; })
    };
  }

  function sameSnapshot(state, snap) {
    var a = toSnapshot(state);
    var b = { tick: snap.tick, units: snap.units, res: snap.res, mines: snap.mines };
    return JSON.stringify(a) === JSON.stringify(b);
  }

  // One game: its frames, keyframes every KEY_EVERY ticks, graph series.
  function Game(frames) {
    this.frames = frames;
    this.keys = [];
    this.series = { res: [[], []], army: [[], []] };
    var state = fromSnapshot(frames.start);
    this.record(state);
    for (var i = 0; i < frames.ticks.length; i++) {
      if (i % KEY_EVERY === 0) this.keys.push(copy(state));
      apply(state, frames.ticks[i]);
      this.record(state);
    }
    this.keys.push(copy(state));
    this.last = frames.ticks.length;
    this.verified = sameSnapshot(state, frames.end);
    this.end = state;
  }

  Game.prototype.record = function (state) {
    var kinds = this.frames.kinds;
    var army = [0, 0];
    Object.keys(state.units).forEach(function (id) {
      var u = state.units[id];
      if (ARMY[kinds[u[5]].code]) army[u[4] - 1] += 1;
    });
    for (var s = 0; s < 2; s++) {
      this.series.res[s].push(state.res[2 * s] + state.res[2 * s + 1]);
      this.series.army[s].push(army[s]);
    }
  };

  // The state after `tick` ticks.
  Game.prototype.at = function (tick) {
    tick = Math.max(0, Math.min(this.last, tick));
    var k = Math.min(Math.floor(tick / KEY_EVERY), this.keys.length - 1);
    var state = copy(this.keys[k]);
    for (var i = k * KEY_EVERY; i < tick; i++) apply(state, this.frames.ticks[i]);
    return state;
  };

  // Which tiles `side` (1 or 2) sees: squares around its footprints.
  Game.prototype.vision = function (state, side) {
    var f = this.frames;
    var seen = new Uint8Array(f.w * f.h);
    Object.keys(state.units).forEach(function (id) {
      var u = state.units[id];
      if (u[4] !== side) return;
      var kind = f.kinds[u[5]];
      for (var y = Math.max(0, u[2] - kind.vision); y <= Math.min(f.h - 1, u[2] + kind.size - 1 + kind.vision); y++) {
        for (var x = Math.max(0, u[1] - kind.vision); x <= Math.min(f.w - 1, u[1] + kind.size - 1 + kind.vision); x++) {
          seen[y * f.w + x] = 1;
        }
      }
    });
    return seen;
  };

  function Viewer(root) {
    this.root = root;
    this.url = root.dataset.frames;
    this.games = [];
    this.index = 0;
    this.tick = 0;
    this.fog = 0;
    this.timer = null;
    var self = this;

    root.textContent = '';
    var bar = el('div', { class: 'controls', role: 'group', 'aria-label': 'Replay controls' });
    function button(text, label, action, cls) {
      var b = el('button', { type: 'button', 'aria-label': label, class: cls }, text);
      b.addEventListener('click', action);
      bar.appendChild(b);
      return b;
    }
    this.gameButtons = [0, 1].map(function (i) {
      return button('Game ' + (i + 1), 'Show game ' + (i + 1), function () { self.show(i); }, 'ctl-game ctl-game-' + (i + 1));
    });
    button('|◀', 'First tick', function () { self.stop(); self.go(0); }, 'ctl-start');
    button('◀', 'Previous tick', function () { self.stop(); self.go(self.tick - 1); }, 'ctl-back');
    this.playButton = button('▶ Play', 'Play', function () { self.toggle(); }, 'ctl-play');
    button('▶', 'Next tick', function () { self.stop(); self.go(self.tick + 1); }, 'ctl-forward');
    button('▶|', 'Last tick', function () { self.stop(); self.go(Infinity); }, 'ctl-end');
    var fogLabel = el('label', { class: 'fog' }, 'View ');
    this.fogSelect = el('select', { 'aria-label': 'Whose view', class: 'ctl-fog' });
    [['0', 'Both sides'], ['1', 'Side 1, fog of war'], ['2', 'Side 2, fog of war']].forEach(function (o) {
      self.fogSelect.appendChild(el('option', { value: o[0] }, o[1]));
    });
    this.fogSelect.addEventListener('change', function () { self.fog = Number(self.fogSelect.value); self.draw(); });
    fogLabel.appendChild(this.fogSelect);
    bar.appendChild(fogLabel);
    root.appendChild(bar);

    this.slider = el('input', { type: 'range', min: '0', max: '0', value: '0', 'aria-label': 'Tick', class: 'timeline' });
    this.slider.addEventListener('input', function () { self.stop(); self.go(Number(self.slider.value)); });
    root.appendChild(this.slider);
    this.caption = el('p', { class: 'tick-caption', 'aria-live': 'polite' });
    root.appendChild(this.caption);
    this.canvas = el('canvas', { class: 'skirmish-map', role: 'img', 'aria-label': 'The map', 'aria-describedby': 'skirmish-legend-h' });
    root.appendChild(this.canvas);
    root.appendChild(legend());
    this.graph = el('canvas', { class: 'skirmish-graph', role: 'img', 'aria-label': 'Resources and army of each side over time', width: '640', height: '300' });
    root.appendChild(this.graph);
    // The viewer takes the focus on a click outside its controls, so its
    // keys (Home, End, Space) work after clicking the map or the graphs.
    root.setAttribute('tabindex', '-1');
    root.addEventListener('mousedown', function (e) {
      if (!e.target.closest('button, input, select, a, ol, [tabindex="0"]')) root.focus({ preventScroll: true });
    });
    // Keys act on the focused control first (Space or Enter presses a
    // button, the view list and the timeline keep their own keys); the
    // viewer's own keys work from anywhere else in it, and the arrows from
    // anywhere on the page outside form fields. The viewer itself is no
    // tab stop: its controls are.
    root.addEventListener('keydown', function (e) { self.key(e, true); });
    document.addEventListener('keydown', function (e) { if (!root.contains(e.target)) self.key(e, false); });
  }

  // The legend: what each colour and shape on the map is.
  function legend() {
    var box = el('div', { class: 'skirmish-legend' });
    box.appendChild(el('h3', { class: 'small', id: 'skirmish-legend-h' }, 'Legend: open ground, forest, rock, gold mines, blue and red buildings (squares), soldiers (large dots) and workers (small dots); shaded tiles are out of sight'));
    var list = el('ul', { class: 'legend', 'aria-labelledby': 'skirmish-legend-h' });
    [
      ['tile', TERRAIN['.'], 'Open ground'],
      ['tile', TERRAIN.T, 'Forest (lumber)'],
      ['tile', TERRAIN['#'], 'Rock'],
      ['tile', MINE, 'Gold mine'],
      ['tile', COLOURS[0], 'Blue building'],
      ['big', COLOURS[0], 'Blue soldier'],
      ['small', COLOURS[0], 'Blue worker'],
      ['tile', COLOURS[1], 'Red building'],
      ['big', COLOURS[1], 'Red soldier'],
      ['small', COLOURS[1], 'Red worker'],
      ['tile', 'rgba(0, 0, 0, 0.55)', 'Out of sight (fog of war)'],
    ].forEach(function (item) {
      var li = el('li');
      var swatch = el('span', { class: 'key key-' + item[0], 'aria-hidden': 'true' });
      swatch.style.background = item[1];
      li.appendChild(swatch);
      li.appendChild(document.createTextNode(' ' + item[2]));
      list.appendChild(li);
    });
    box.appendChild(list);
    return box;
  }

  Viewer.prototype.key = function (e, inside) {
    if (e.altKey || e.ctrlKey || e.metaKey || e.defaultPrevented) return;
    var tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT' || tag === 'TEXTAREA') return;
    if (tag === 'BUTTON' && (e.key === ' ' || e.key === 'Enter')) return;
    if (e.key === 'ArrowRight') { this.stop(); this.go(this.tick + 1); }
    else if (e.key === 'ArrowLeft') { this.stop(); this.go(this.tick - 1); }
    else if (inside && e.key === 'Home') { this.stop(); this.go(0); }
    else if (inside && e.key === 'End') { this.stop(); this.go(Infinity); }
    else if (inside && e.key === ' ') this.toggle();
    else return;
    e.preventDefault();
  };

  Viewer.prototype.load = function () {
    var self = this;
    var count = Number(this.root.dataset.games || '2');
    this.caption.textContent = 'Loading the game…';
    var loads = [];
    for (var i = 0; i < count; i++) {
      loads.push(fetch(this.url + '?game=' + (i + 1)).then(function (r) {
        if (!r.ok) throw new Error('the frames could not be loaded (' + r.status + ')');
        return r.json();
      }));
    }
    return Promise.all(loads).then(function (all) {
      self.games = all.map(function (frames) { return new Game(frames); });
      self.root.dataset.verified = self.games.every(function (g) { return g.verified; }) ? 'ok' : 'mismatch';
      self.show(0);
    }).catch(function (e) {
      self.root.dataset.verified = 'error';
      self.caption.textContent = String(e.message || e);
    });
  };

  Viewer.prototype.show = function (index) {
    this.index = index;
    var game = this.games[index];
    this.gameButtons.forEach(function (b, i) { b.setAttribute('aria-pressed', String(i === index)); });
    this.slider.max = String(game.last);
    this.root.dataset.game = String(index + 1);
    this.go(Math.min(this.tick, game.last));
    this.drawGraph();
  };

  Viewer.prototype.go = function (tick) {
    var game = this.games[this.index];
    if (!game) return;
    this.tick = Math.max(0, Math.min(game.last, tick));
    this.state = game.at(this.tick);
    this.slider.value = String(this.tick);
    this.root.dataset.tick = String(this.tick);
    this.draw();
  };

  Viewer.prototype.toggle = function () {
    if (this.timer) { this.stop(); return; }
    var self = this;
    var game = this.games[this.index];
    if (this.tick >= game.last) this.go(0);
    this.playButton.textContent = '❚❚ Pause';
    this.playButton.setAttribute('aria-label', 'Pause');
    // While it plays, the caption is not read out at every tick.
    this.caption.setAttribute('aria-live', 'off');
    this.timer = setInterval(function () {
      if (self.tick >= game.last) { self.stop(); return; }
      self.go(self.tick + 5);
    }, 50);
  };

  Viewer.prototype.stop = function () {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.playButton.textContent = '▶ Play';
    this.playButton.setAttribute('aria-label', 'Play');
    this.caption.setAttribute('aria-live', 'polite');
  };

  // The state as the page shows it now: what the chosen side sees, or all.
  Viewer.prototype.visible = function () {
    var game = this.games[this.index];
    var f = game.frames;
    var state = this.state;
    var fog = this.fog;
    var seen = fog ? game.vision(state, fog) : null;
    function inSight(x, y, size) {
      if (!seen) return true;
      for (var dy = 0; dy < size; dy++) for (var dx = 0; dx < size; dx++) {
        var tx = x + dx, ty = y + dy;
        if (tx >= 0 && ty >= 0 && tx < f.w && ty < f.h && seen[ty * f.w + tx]) return true;
      }
      return false;
    }
    var units = Object.keys(state.units).map(function (id) { return state.units[id]; }).filter(function (u) {
      return !fog || u[4] === fog || inSight(u[1], u[2], f.kinds[u[5]].size);
    });
    var mines = Object.keys(state.mines).map(function (id) { return state.mines[id]; }).filter(function (m) {
      return inSight(m[1], m[2], 2);
    });
    return { seen: seen, units: units, mines: mines };
  };

  // Draws `state` of the map `map` ({w, h, rows, kinds}) on `canvas`:
  // the terrain, the mines and units in `shown`, and the fog outside
  // `shown.seen` (when there is fog).
  function paint(canvas, map, state, shown, width) {
    var cell = Math.max(4, Math.floor(Math.min(width || 560, 560) / map.w));
    canvas.width = map.w * cell;
    canvas.height = map.h * cell;
    var ctx = canvas.getContext('2d');
    for (var y = 0; y < map.h; y++) {
      for (var x = 0; x < map.w; x++) {
        var t = map.rows[y][x];
        if (t === 'T' && state.felled[x + ',' + y]) t = '.';
        ctx.fillStyle = TERRAIN[t] || TERRAIN['.'];
        ctx.fillRect(x * cell, y * cell, cell, cell);
      }
    }
    shown.mines.forEach(function (m) {
      ctx.fillStyle = MINE;
      ctx.fillRect(m[1] * cell, m[2] * cell, 2 * cell, 2 * cell);
    });
    shown.units.forEach(function (u) {
      var kind = map.kinds[u[5]];
      ctx.fillStyle = COLOURS[u[4] - 1];
      if (kind.size > 1) {
        ctx.fillRect(u[1] * cell + 1, u[2] * cell + 1, kind.size * cell - 2, kind.size * cell - 2);
      } else {
        ctx.beginPath();
        ctx.arc((u[1] + 0.5) * cell, (u[2] + 0.5) * cell, cell * (ARMY[kind.code] ? 0.45 : 0.32), 0, 2 * Math.PI);
        ctx.fill();
      }
      if (u[3] < kind.hp) {
        ctx.fillStyle = '#111';
        ctx.fillRect(u[1] * cell, u[2] * cell, kind.size * cell * u[3] / kind.hp, Math.max(1, cell / 6));
      }
    });
    if (shown.seen) {
      ctx.fillStyle = 'rgba(0, 0, 0, 0.55)';
      for (var fy = 0; fy < map.h; fy++) {
        for (var fx = 0; fx < map.w; fx++) {
          if (!shown.seen[fy * map.w + fx]) ctx.fillRect(fx * cell, fy * cell, cell, cell);
        }
      }
    }
  }

  function everything(state) {
    return {
      seen: null,
      units: Object.keys(state.units).map(function (id) { return state.units[id]; }),
      mines: Object.keys(state.mines).map(function (id) { return state.mines[id]; })
    };
  }

  Viewer.prototype.draw = function () {
    var game = this.games[this.index];
    if (!game) return;
    var f = game.frames;
    var state = this.state;
    var shown = this.visible();
    paint(this.canvas, f, state, shown, this.root.clientWidth);
    var counts = [0, 0];
    shown.units.forEach(function (u) { counts[u[4] - 1] += 1; });
    this.root.dataset.shownUnits = counts.join(',');
    this.root.dataset.fog = String(this.fog);
    this.caption.textContent = 'Game ' + (this.index + 1) + ', tick ' + this.tick + ' of ' + game.last +
      ' — ' + f.names[0] + ' (blue): ' + state.res[0] + ' gold, ' + state.res[1] + ' lumber; ' +
      f.names[1] + ' (red): ' + state.res[2] + ' gold, ' + state.res[3] + ' lumber';
    // The map in words: what a screen reader says instead of the picture.
    var army = [0, 0];
    var buildings = [0, 0];
    shown.units.forEach(function (u) {
      var kind = f.kinds[u[5]];
      if (ARMY[kind.code]) army[u[4] - 1] += 1;
      else if (kind.size > 1) buildings[u[4] - 1] += 1;
    });
    var view = this.fog ? ', as side ' + this.fog + ' sees it' : '';
    this.canvas.setAttribute('aria-label', 'Map of game ' + (this.index + 1) + ' (' + f.w + '×' + f.h + ' tiles) at tick ' +
      this.tick + ' of ' + game.last + view + ': ' + f.names[0] + ' (blue) ' + counts[0] + ' units (' + buildings[0] +
      ' buildings, ' + army[0] + ' soldiers); ' + f.names[1] + ' (red) ' + counts[1] + ' units (' + buildings[1] +
      ' buildings, ' + army[1] + ' soldiers); ' + shown.mines.length + ' gold mines in sight.');
    this.drawMarker();
  };

  // The graphs: each side's gold + lumber (top) and soldiers (bottom)
  // against the tick, each with labelled axes.
  var PLOT = { left: 52, right: 12, top: 22, bottom: 24 };

  Viewer.prototype.drawGraph = function () {
    var game = this.games[this.index];
    var ctx = this.graph.getContext('2d');
    var w = this.graph.width, h = this.graph.height, half = h / 2;
    var names = game.frames.names;
    var x0 = PLOT.left, x1 = w - PLOT.right;
    var last = Math.max(1, game.last);
    ctx.clearRect(0, 0, w, h);
    ctx.font = '12px sans-serif';
    var said = [];
    [['res', 0, 'Gold + lumber'], ['army', half, 'Soldiers (footmen + riflemen)']].forEach(function (g) {
      var series = game.series[g[0]];
      var max = Math.max(1, Math.max.apply(null, series[0].concat(series[1])));
      var top = g[1] + PLOT.top, bottom = g[1] + half - PLOT.bottom;
      ctx.fillStyle = '#1b1f23';
      ctx.textAlign = 'left';
      ctx.fillText(g[2] + ' — blue: ' + names[0] + ', red: ' + names[1], x0, g[1] + 14);
      // Axes: the value on the left, the tick below.
      ctx.strokeStyle = '#57606a';
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(x0, top);
      ctx.lineTo(x0, bottom);
      ctx.lineTo(x1, bottom);
      ctx.stroke();
      ctx.fillStyle = '#57606a';
      ctx.textAlign = 'right';
      [0, Math.round(max / 2), max].forEach(function (v) {
        var y = bottom - v * (bottom - top) / max;
        ctx.fillText(String(v), x0 - 6, y + 4);
        ctx.beginPath();
        ctx.moveTo(x0 - 3, y);
        ctx.lineTo(x0, y);
        ctx.stroke();
      });
      ctx.textAlign = 'center';
      [0, Math.round(last / 2), last].forEach(function (t, i) {
        var x = x0 + t * (x1 - x0) / last;
        ctx.fillText(i === 2 ? 'tick ' + t : String(t), Math.min(x, x1 - 24), bottom + 15);
        ctx.beginPath();
        ctx.moveTo(x, bottom);
        ctx.lineTo(x, bottom + 3);
        ctx.stroke();
      });
      series.forEach(function (values, s) {
        ctx.strokeStyle = COLOURS[s];
        ctx.lineWidth = 2;
        ctx.beginPath();
        values.forEach(function (v, i) {
          var x = x0 + (values.length > 1 ? i * (x1 - x0) / (values.length - 1) : 0);
          var y = bottom - v * (bottom - top) / max;
          if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
        });
        ctx.stroke();
      });
      ctx.lineWidth = 1;
      var peak = series.map(function (v) { return Math.max.apply(null, v); });
      var end = series.map(function (v) { return v[v.length - 1]; });
      said.push(g[2] + ': ' + names[0] + ' (blue) peaked at ' + peak[0] + ' and ended at ' + end[0] + ', ' +
        names[1] + ' (red) peaked at ' + peak[1] + ' and ended at ' + end[1]);
    });
    ctx.textAlign = 'left';
    this.graph.setAttribute('aria-label', 'Graphs of game ' + (this.index + 1) + ' over its ' + game.last + ' ticks. ' + said.join('. ') + '.');
    this.graphImage = ctx.getImageData(0, 0, w, h);
  };

  // The current tick as a line across the graphs.
  Viewer.prototype.drawMarker = function () {
    var game = this.games[this.index];
    if (!this.graphImage || !game) return;
    var ctx = this.graph.getContext('2d');
    ctx.putImageData(this.graphImage, 0, 0);
    var x0 = PLOT.left, x1 = this.graph.width - PLOT.right;
    var x = x0 + (game.last ? this.tick * (x1 - x0) / game.last : 0);
    ctx.strokeStyle = '#111';
    ctx.beginPath();
    ctx.moveTo(x, 0);
    ctx.lineTo(x, this.graph.height);
    ctx.stroke();
  };

  // Draws a live map (site.js follows the match and hands over every
  // `tick` event's state): both sides, no fog.
  function drawLive(section, frame) {
    var canvas = section.querySelector('canvas.skirmish-map');
    if (!canvas) {
      canvas = el('canvas', { class: 'skirmish-map', role: 'img', 'aria-label': 'The map as the match is played' });
      var status = section.querySelector('#live-status');
      section.insertBefore(canvas, status ? status.nextSibling : null);
    }
    var state = fromSnapshot(frame.state);
    paint(canvas, frame, state, everything(state), section.clientWidth);
    section.dataset.drawnTick = String(frame.state.tick);
  }

  document.addEventListener('DOMContentLoaded', function () {
    var root = document.getElementById('skirmish');
    if (root) {
      var viewer = new Viewer(root);
      window.ArbiterSkirmish = viewer;
      viewer.load();
    }
  });
  window.ArbiterSkirmishLive = drawLive;

  window.ArbiterSkirmishFrames = { fromSnapshot: fromSnapshot, apply: apply, toSnapshot: toSnapshot };
})();
