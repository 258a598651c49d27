// The site's behaviour, in plain JavaScript (no build step):
//
// - forms with data-api are sent to the JSON API with the session's CSRF
//   token (from <meta name="csrf-token">) in the X-CSRF-Token header;
// - the upload form posts the module, then follows the check by polling
//   /api/versions/{id} and shows the verdict (each ladder's, and the reason
//   and stderr of any refusal);
// - the challenge form lists only the chosen bot's ladders;
// - a running match follows /api/events?match=ID (server-sent events);
// - a leaderboard refreshes its rows every few seconds;
// - a box that scrolls sideways (code, a wide table) becomes a named tab
//   stop, so it can be scrolled from the keyboard.
//
// Text from the server is only ever put into the page with textContent; the
// one exception, the leaderboard rows, is HTML the server rendered and
// escaped itself.
(function () {
  'use strict';

  function csrf() {
    var meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.getAttribute('content') : '';
  }

  function showError(form, message) {
    var box = form.querySelector('.form-error');
    if (!box) {
      window.alert(message);
      return;
    }
    box.textContent = message;
    box.hidden = false;
  }

  function clearError(form) {
    var box = form.querySelector('.form-error');
    if (box) {
      box.textContent = '';
      box.hidden = true;
    }
  }

  // Calls the API; resolves with the JSON answer, rejects with an Error
  // carrying the API's own message.
  function api(method, url, body) {
    var options = { method: method, credentials: 'same-origin', headers: { Accept: 'application/json' } };
    var token = csrf();
    if (token) options.headers['X-CSRF-Token'] = token;
    if (body instanceof FormData) {
      options.body = body;
    } else if (body !== undefined) {
      options.headers['Content-Type'] = 'application/json';
      options.body = JSON.stringify(body);
    }
    return fetch(url, options).then(function (response) {
      return response.text().then(function (text) {
        var json = null;
        try { json = text ? JSON.parse(text) : {}; } catch (e) { json = null; }
        if (!response.ok || (json && json.ok === false)) {
          var message = json && json.error ? json.error : 'the server answered ' + response.status + ' ' + response.statusText;
          var error = new Error(message);
          error.status = response.status;
          throw error;
        }
        return json || {};
      });
    });
  }

  // `/matches/{match.id}` with fields of the answer filled in.
  function fill(template, answer) {
    return template.replace(/\{([a-z_.]+)\}/g, function (_, path) {
      var value = path.split('.').reduce(function (v, k) { return v === null || v === undefined ? v : v[k]; }, answer);
      return encodeURIComponent(value === undefined || value === null ? '' : String(value));
    });
  }

  function formBody(form) {
    var body = {};
    var named = 0;
    Array.prototype.forEach.call(form.elements, function (field) {
      if (!field.name || field.disabled) return;
      if ((field.type === 'checkbox' || field.type === 'radio') && !field.checked) return;
      named += 1;
      var value = field.value;
      if ('list' in field.dataset) value = value.split(/[\s,]+/).filter(Boolean);
      else if ('number' in field.dataset) value = Number(value);
      body[field.name] = value;
    });
    return named ? body : undefined;
  }

  function busy(form, on) {
    Array.prototype.forEach.call(form.querySelectorAll('button[type="submit"], button:not([type])'), function (b) {
      b.disabled = on;
    });
    form.setAttribute('aria-busy', on ? 'true' : 'false');
  }

  function enhanceApiForm(form) {
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
      clearError(form);
      busy(form, true);
      var method = form.dataset.method || 'POST';
      api(method, form.dataset.api, formBody(form))
        .then(function (answer) {
          if (form.dataset.show) {
            busy(form, false);
            var output = document.querySelector('[data-output="' + form.dataset.show + '"]');
            if (output) {
              output.value = answer[form.dataset.show] || '';
              var box = output.closest('[hidden]');
              if (box) box.hidden = false;
              output.focus();
              output.select();
            }
            return;
          }
          window.location.assign(fill(form.dataset.then || '/', answer));
        })
        .catch(function (error) {
          busy(form, false);
          showError(form, error.message);
        });
    });
  }

  // --- Upload: post the module, then follow the check. ---------------------

  function show(id, on) {
    var node = document.getElementById(id);
    if (node) node.hidden = !on;
    return node;
  }

  function verdict(state, text) {
    var section = document.getElementById('verdict');
    section.dataset.state = state;
    var p = document.getElementById('verdict-text');
    p.textContent = text;
    p.className = 'verdict-text verdict-' + state;
  }

  function rejected(reason, stderr) {
    show('verdict-reason', true);
    document.getElementById('reason-text').textContent = reason || 'no reason given';
    if (stderr) {
      show('verdict-stderr', true);
      document.getElementById('stderr-text').textContent = stderr;
    }
  }

  function follow(versionId, started) {
    api('GET', '/api/versions/' + encodeURIComponent(versionId)).then(function (answer) {
      var v = answer.version || {};
      if (v.status === 'checking') {
        var waited = Math.round((Date.now() - started) / 1000);
        verdict('checking', 'Checking… (' + waited + ' s)');
        if (Date.now() - started > 10 * 60 * 1000) {
          verdict('checking', 'Still checking after 10 minutes: come back to the bot page later.');
          return;
        }
        window.setTimeout(function () { follow(versionId, started); }, 1000);
        return;
      }
      var step = document.getElementById('step-check');
      step.textContent = 'Checked.';
      var next = show('verdict-next', true);
      next.textContent = '';
      var link = document.createElement('a');
      link.href = '/bots/' + encodeURIComponent(v.bot);
      link.textContent = 'Open the page of ' + v.bot;
      ladderVerdicts(v.verdicts || []);
      if (v.status === 'active') {
        verdict('active', 'Accepted: version ' + v.number + ' of ' + v.bot + ' is active and joins ' + (v.ladders || []).join(', ') + '.');
        if (v.reason) rejected(v.reason, v.stderr);
        next.appendChild(link);
      } else if (v.status === 'rejected') {
        verdict('rejected', 'Rejected: version ' + v.number + ' of ' + v.bot + ' did not pass the check.');
        rejected(v.reason, v.stderr);
        next.appendChild(link);
      } else {
        verdict(v.status, 'Version ' + v.number + ' of ' + v.bot + ' is ' + v.status + '.');
        next.appendChild(link);
      }
    }).catch(function (error) {
      verdict('error', 'Cannot follow the check: ' + error.message + '. Retrying…');
      window.setTimeout(function () { follow(versionId, started); }, 3000);
    });
  }

  // Each ladder's verdict of the check, one line each (passed, or refused
  // with the reason).
  function ladderVerdicts(verdicts) {
    var list = document.getElementById('verdict-ladders');
    if (!list) return;
    list.textContent = '';
    verdicts.forEach(function (one) {
      var item = document.createElement('li');
      item.className = one.passed ? 'passed' : 'refused';
      item.textContent = one.ladder + ': ' + (one.passed ? 'passed' : 'refused: ' + (one.reason || 'no reason given'));
      list.appendChild(item);
    });
    list.hidden = verdicts.length === 0;
  }

  // The challenge form offers only the chosen bot's ladders (its option's
  // data-ladders); without this every ladder of every bot is listed and
  // the server names the bot and the ladder it does not play.
  function narrowChallengeLadders(form) {
    var bot = form.querySelector('#bot');
    var ladder = form.querySelector('#ladder');
    if (!bot || !ladder) return;
    function narrow() {
      var chosen = bot.options[bot.selectedIndex];
      var plays = ((chosen && chosen.dataset.ladders) || '').split(' ').filter(Boolean);
      var first = null;
      Array.prototype.forEach.call(ladder.options, function (option) {
        var on = plays.indexOf(option.value) >= 0;
        option.hidden = !on;
        option.disabled = !on;
        if (on && !first) first = option;
      });
      var current = ladder.options[ladder.selectedIndex];
      if ((!current || current.disabled) && first) first.selected = true;
    }
    bot.addEventListener('change', narrow);
    narrow();
  }

  // Typing the name of one's own bot ticks its ladders, unless the ladders
  // were already ticked by hand.
  function tickBotLadders(form) {
    var name = form.querySelector('#bot-name');
    var boxes = form.querySelectorAll('input[name="ladders"]');
    var byHand = false;
    Array.prototype.forEach.call(boxes, function (box) {
      box.addEventListener('change', function () { byHand = true; });
    });
    if (!name) return;
    name.addEventListener('input', function () {
      if (byHand) return;
      var typed = name.value.trim().toLowerCase();
      var bot = Array.prototype.find.call(form.querySelectorAll('#my-bots option'), function (o) {
        return o.value.toLowerCase() === typed;
      });
      if (!bot) return;
      var ladders = (bot.dataset.ladders || '').split(' ').filter(Boolean);
      Array.prototype.forEach.call(boxes, function (box) { box.checked = ladders.indexOf(box.value) >= 0; });
    });
  }

  function enhanceUpload(form) {
    tickBotLadders(form);
    form.addEventListener('submit', function (event) {
      event.preventDefault();
      clearError(form);
      var ticked = form.querySelectorAll('input[name="ladders"]:checked').length;
      if (!ticked) {
        showError(form, 'tick at least one ladder');
        return;
      }
      var data = new FormData(form);
      if (!data.has('csrf')) data.append('csrf', csrf());
      show('verdict', true);
      show('verdict-reason', false);
      show('verdict-ladders', false);
      show('verdict-stderr', false);
      show('verdict-next', false);
      show('step-check', false);
      document.getElementById('step-upload').textContent = 'Uploading…';
      verdict('uploading', 'Uploading…');
      busy(form, true);
      api('POST', '/api/bots', data)
        .then(function (answer) {
          busy(form, false);
          var v = answer.version;
          document.getElementById('step-upload').textContent =
            'Uploaded: version ' + v.number + ' of ' + answer.bot.name + ' (sha256 ' + String(v.sha256).slice(0, 12) + '…).';
          show('step-check', true);
          verdict('checking', 'Checking…');
          follow(v.id, Date.now());
        })
        .catch(function (error) {
          busy(form, false);
          document.getElementById('step-upload').textContent = 'The upload was refused.';
          verdict('rejected', 'Refused (HTTP ' + (error.status || '?') + ').');
          rejected(error.message, '');
        });
    });
  }

  // --- A running match: live moves over server-sent events. -----------------

  // The shortest time between two announcements of #live-status.
  var ANNOUNCE_MS = 5000;

  // The live boards, when the page carries the replay so far and the
  // replay viewer is loaded.
  function liveBoards() {
    var root = document.getElementById('live-board');
    if (!root || !root.dataset.replaySoFar || !window.ArbiterReplay || !window.ArbiterGames) return null;
    try {
      return new window.ArbiterReplay.LiveBoards(root, JSON.parse(root.dataset.replaySoFar));
    } catch (e) {
      return null;
    }
  }

  function followMatch(section) {
    // replay.js may run after this script: the boards are made on first use.
    var boards;
    function board() {
      if (boards === undefined) boards = liveBoards();
      return boards;
    }
    if (document.readyState === 'complete') board();
    else window.addEventListener('load', board);
    var list = document.getElementById('live-moves');
    var status = document.getElementById('live-status');
    // #live-status (role=status) is read out by screen readers: it says
    // when the match starts, when a game ends and when the match ends,
    // never more than once every ANNOUNCE_MS. The running count of turns or
    // ticks goes to #live-progress, which is shown but not announced.
    var progress = document.getElementById('live-progress');
    var announced = 0;
    var pendingAnnouncement = null;
    var announceTimer = null;
    function announce(text, now) {
      var wait = ANNOUNCE_MS - (Date.now() - announced);
      if (now || wait <= 0) {
        if (announceTimer) window.clearTimeout(announceTimer);
        announceTimer = null;
        pendingAnnouncement = null;
        announced = Date.now();
        if (status.textContent !== text) status.textContent = text;
        section.dataset.announcements = String(Number(section.dataset.announcements || '0') + 1);
        return;
      }
      pendingAnnouncement = text;
      if (!announceTimer) {
        announceTimer = window.setTimeout(function () {
          announceTimer = null;
          if (pendingAnnouncement !== null) announce(pendingAnnouncement, true);
        }, wait);
      }
    }
    function showProgress(text) {
      if (progress) progress.textContent = text;
    }
    var currentGame = 0;
    // A turn or tick of game `game` (0 or 1): says once that game 1 ended.
    function inGame(game) {
      if (game > currentGame) {
        currentGame = game;
        announce('Game ' + game + ' is over; game ' + (game + 1) + ' is being played.');
      }
    }
    var statusUrl = section.dataset.statusUrl;
    var done = false;
    var source = null;
    var count = 0;

    function finish() {
      if (done) return;
      done = true;
      if (source) source.close();
      announce('Finished: loading the result…', true);
      window.setTimeout(function () { window.location.reload(); }, 600);
    }

    // The header's status badge follows the match once it starts.
    function running() {
      if (count === 0) announce('Being played…');
      var badge = document.querySelector('#match-score .status');
      if (badge && badge.textContent !== 'running') {
        badge.textContent = 'running';
        badge.className = 'status status-running';
      }
    }

    function check() {
      if (done) return;
      api('GET', statusUrl).then(function (answer) {
        var s = answer.match && answer.match.status;
        if (s === 'finished' || s === 'failed') finish();
        else if (s === 'running') running();
      }).catch(function () { /* the next check retries */ });
    }

    if (window.EventSource) {
      source = new EventSource(section.dataset.events);
      // The match may have finished before the stream opened: check once.
      source.addEventListener('open', check);
      source.addEventListener('match_started', running);
      source.addEventListener('turn', function (event) {
        var turn;
        try { turn = JSON.parse(event.data); } catch (e) { return; }
        count += 1;
        if (count === 1) running();
        if (board()) board().add(turn);
        var li = document.createElement('li');
        // Participant 0 takes side 0 in game 0 and side 1 in game 1.
        var game = Number(turn.game);
        var side = Number(turn.side);
        var bot = (game === 0) === (side === 0) ? section.dataset.a : section.dataset.b;
        var colour = (section.dataset.colours || 'first,second').split(',')[side] || '';
        var text = 'Game ' + (game + 1) + ' · ' + colour + ' (' + bot + '): ' + (turn.action || '—');
        if (turn.fault) text += ' (' + turn.fault + ')';
        li.textContent = text;
        list.appendChild(li);
        while (list.children.length > 400) list.removeChild(list.firstChild);
        inGame(game);
        showProgress(count + ' turn' + (count === 1 ? '' : 's') + ' so far (game ' + (game + 1) + ').');
        section.dataset.turns = String(count);
      });
      // Skirmish: the tick, and every few ticks the map (skirmish.js).
      source.addEventListener('tick', function (event) {
        var tick;
        try { tick = JSON.parse(event.data); } catch (e) { return; }
        count += 1;
        if (count === 1) running();
        inGame(Number(tick.game));
        showProgress('Game ' + (Number(tick.game) + 1) + ', tick ' + tick.tick + '.');
        section.dataset.tick = String(tick.tick);
        if (tick.state && window.ArbiterSkirmishLive) window.ArbiterSkirmishLive(section, tick.state);
      });
      source.addEventListener('match_finished', finish);
      window.addEventListener('pagehide', function () { source.close(); });
    }
    // Also poll, in case events cannot get through.
    window.setInterval(check, 5000);
  }

  // --- A leaderboard refreshing its rows. ----------------------------------

  function refreshTable(table) {
    var url = table.dataset.refresh;
    var every = Number(table.dataset.refreshMs) || 10000;
    var body = table.tBodies[0];
    var refreshes = 0;
    window.setInterval(function () {
      if (document.hidden) return;
      fetch(url, { credentials: 'same-origin' })
        .then(function (response) {
          if (!response.ok) throw new Error('HTTP ' + response.status);
          return response.text();
        })
        .then(function (html) {
          body.innerHTML = html; // rendered and escaped by the server
          scrollBoxes();
          refreshes += 1;
          table.dataset.refreshes = String(refreshes);
        })
        .catch(function () { /* keep the rows shown */ });
    }, every);
  }

  // --- The home page's live matches, following the event stream. ---------

  // The list is the server's own rendering (`/?fragment=live`), fetched
  // again when a match starts or ends (a burst of events makes one fetch),
  // and every 20 s besides: matches played by workers in other processes
  // send their events there, not here. The page without JavaScript shows
  // the list as it was when loaded, with its time.
  function liveList(box) {
    var url = box.dataset.liveRows;
    var pending = null;
    var updates = 0;
    var asOf = document.getElementById('live-as-of');
    function refresh() {
      pending = null;
      if (document.hidden) return;
      fetch(url, { credentials: 'same-origin', cache: 'no-store' })
        .then(function (response) {
          if (!response.ok) throw new Error('HTTP ' + response.status);
          return response.text();
        })
        .then(function (html) {
          box.innerHTML = html; // rendered and escaped by the server
          updates += 1;
          box.dataset.updates = String(updates);
          if (asOf) {
            var now = new Date();
            asOf.dateTime = now.toISOString();
            asOf.textContent = now.toISOString().slice(0, 16).replace('T', ' ') + ' UTC';
          }
          scrollBoxes();
        })
        .catch(function () { /* keep the list shown; the next event or tick retries */ });
    }
    function soon() {
      if (pending === null) pending = window.setTimeout(refresh, 300);
    }
    if (window.EventSource && box.dataset.events) {
      var source = new EventSource(box.dataset.events);
      source.addEventListener('match_started', soon);
      source.addEventListener('match_finished', soon);
      source.addEventListener('lagged', soon);
      source.addEventListener('open', function () { box.dataset.following = 'true'; });
      window.addEventListener('pagehide', function () { source.close(); });
    }
    window.setInterval(soon, 20000);
    document.addEventListener('visibilitychange', function () { if (!document.hidden) soon(); });
  }

  function copyButton(button) {
    button.addEventListener('click', function () {
      var input = document.getElementById(button.dataset.copy);
      if (!input) return;
      input.select();
      var done = function () { button.textContent = 'Copied'; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(input.value).then(done, function () { document.execCommand('copy'); done(); });
      } else {
        document.execCommand('copy');
        done();
      }
    });
  }

  // --- Boxes that scroll sideways (code, wide tables). ---------------------

  // A box whose content is wider than it is can be scrolled from the
  // keyboard: it is a tab stop with a name (the region's label, a table's
  // caption, or "Code"). When it fits, it is no tab stop at all.
  function scrollBoxes() {
    var boxes = document.querySelectorAll('pre, .table-wrap, .scroll-box');
    Array.prototype.forEach.call(boxes, function (box) {
      if (box.hasAttribute('data-never-focus')) return;
      var scrolls = box.scrollWidth > box.clientWidth + 1 || box.scrollHeight > box.clientHeight + 1;
      if (scrolls) {
        box.setAttribute('tabindex', '0');
        if (!box.getAttribute('role')) box.setAttribute('role', 'region');
        if (!box.getAttribute('aria-label') && !box.getAttribute('aria-labelledby')) {
          var caption = box.querySelector('caption');
          box.setAttribute('aria-label', caption ? caption.textContent.trim() : 'Code');
        }
        box.dataset.scrolls = 'true';
      } else if (box.dataset.scrolls === 'true' || box.getAttribute('tabindex') === '0') {
        box.removeAttribute('tabindex');
        box.dataset.scrolls = 'false';
      }
    });
  }

  function watchScrollBoxes() {
    scrollBoxes();
    var pending = false;
    window.addEventListener('resize', function () {
      if (pending) return;
      pending = true;
      window.setTimeout(function () { pending = false; scrollBoxes(); }, 200);
    });
    // <details> open and close; tables refresh: check again.
    document.addEventListener('toggle', scrollBoxes, true);
  }

  function init() {
    Array.prototype.forEach.call(document.querySelectorAll('form[data-api]'), enhanceApiForm);
    var challengeForm = document.getElementById('challenge-form');
    if (challengeForm) narrowChallengeLadders(challengeForm);
    var upload = document.getElementById('upload-form');
    if (upload) enhanceUpload(upload);
    var live = document.getElementById('live');
    if (live && live.dataset.events) followMatch(live);
    Array.prototype.forEach.call(document.querySelectorAll('table[data-refresh]'), refreshTable);
    var liveRows = document.querySelector('[data-live-rows]');
    if (liveRows) liveList(liveRows);
    Array.prototype.forEach.call(document.querySelectorAll('button[data-copy]'), copyButton);
    watchScrollBoxes();
  }

  window.Arbiter = { api: api, csrf: csrf, scrollBoxes: scrollBoxes };
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', init);
  else init();
})();
