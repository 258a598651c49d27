// "Open a replay file" (/replays/open): reads the replay JSON the person
// chooses (FileReader; nothing is sent to the server), checks that it is an
// Arbiter replay of a game this viewer draws, and shows it with the match
// pages' viewer (replay.js, window.ArbiterReplay.Viewer). A file that is not
// one gets a message saying why, in #replay-open-error.
(function () {
  'use strict';

  // Larger than any board game's replay; a bigger file is not read.
  var MAX_BYTES = 20 * 1024 * 1024;

  function start() {
    var form = document.getElementById('replay-open');
    var input = document.getElementById('replay-file');
    var error = document.getElementById('replay-open-error');
    var shown = document.getElementById('replay-open-shown');
    var about = document.getElementById('replay-open-about');
    var viewerRoot = document.getElementById('replay-file-viewer');
    if (!form || !input || !viewerRoot || !window.ArbiterReplay || !window.ArbiterGames) return;
    form.hidden = false;
    form.addEventListener('submit', function (e) { e.preventDefault(); });
    var current = null;

    function fail(message) {
      if (current && current.stop) current.stop();
      current = null;
      shown.hidden = true;
      error.textContent = message;
      error.hidden = false;
      form.dataset.state = 'error';
    }

    // Why `replay` (parsed JSON) cannot be shown, or null if it can.
    function problem(replay) {
      if (!replay || typeof replay !== 'object' || Array.isArray(replay) || replay.format !== 'arbiter-replay') {
        return 'This file is JSON but not an Arbiter replay (it has no "format": "arbiter-replay").';
      }
      if (replay.game === 'skirmish') {
        return 'This is a skirmish replay: its map viewer needs the server to re-simulate the game, so it is shown on its match page only. ' +
          'Check the file with arbiter verify FILE.';
      }
      if (replay.game !== 'tictactoe' && replay.game !== 'othello') {
        return 'This replay is of a game this viewer does not know (' + JSON.stringify(replay.game) + '); it shows tic-tac-toe and Othello.';
      }
      if (replay.game === 'othello' && !window.ArbiterGames.boardOf('othello', replay.mode)) {
        return 'This Othello replay is of a mode this server does not know (' + JSON.stringify(replay.mode) + ').';
      }
      var participants = replay.participants;
      if (!Array.isArray(participants) || participants.length !== 2 || !participants.every(function (p) { return p && typeof p.name === 'string'; })) {
        return 'This replay does not name its two participants.';
      }
      if (!Array.isArray(replay.games) || replay.games.length === 0) return 'This replay has no games.';
      var bad = replay.games.findIndex(function (g) {
        return !g || !Array.isArray(g.turns) || !Array.isArray(g.sides) || g.sides.length !== 2 ||
          !g.sides.every(function (s) { return s === 0 || s === 1; }) || !Array.isArray(g.scores);
      });
      if (bad >= 0) return 'Game ' + (bad + 1) + ' of this replay is incomplete (its sides, turns or scores are missing).';
      return null;
    }

    function show(name, text) {
      var replay;
      try {
        replay = JSON.parse(text);
      } catch (e) {
        fail(name + ' is not a replay: it is not valid JSON (' + e.message + ').');
        return;
      }
      var why = problem(replay);
      if (why) {
        fail(name + ': ' + why);
        return;
      }
      if (current && current.stop) current.stop();
      // A fresh element, so the keys of an earlier viewer are not bound to it.
      var root = viewerRoot.cloneNode(false);
      viewerRoot.parentNode.replaceChild(root, viewerRoot);
      viewerRoot = root;
      error.hidden = true;
      error.textContent = '';
      shown.hidden = false;
      var names = replay.participants.map(function (p) { return p.name; });
      about.textContent = name + ': ' + (replay.game === 'othello' ? 'Othello' : 'tic-tac-toe') +
        (replay.mode ? ' (' + replay.mode + ')' : '') + ', ' + names[0] + ' against ' + names[1] + ', ' +
        replay.games.length + (replay.games.length === 1 ? ' game.' : ' games.');
      try {
        current = new window.ArbiterReplay.Viewer(root, replay);
      } catch (e) {
        fail(name + ' looks like a replay, but the viewer cannot draw it (' + e.message + ').');
        return;
      }
      form.dataset.state = 'shown';
    }

    input.addEventListener('change', function () {
      var file = input.files && input.files[0];
      if (!file) return;
      if (file.size > MAX_BYTES) {
        fail(file.name + ' is ' + Math.round(file.size / 1048576) + ' MiB: too large for a replay of a board game (at most 20 MiB).');
        return;
      }
      form.dataset.state = 'reading';
      var reader = new FileReader();
      reader.onload = function () { show(file.name, String(reader.result)); };
      reader.onerror = function () { fail(file.name + ' could not be read: ' + (reader.error ? reader.error.message : 'unknown error') + '.'); };
      reader.readAsText(file);
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start);
  else start();
})();
