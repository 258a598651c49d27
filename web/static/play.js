// A game against a bot, live: moves go to the same form the page posts
// without JavaScript, the board is redrawn from /play/{id}/state (waiting
// for the bot's answer), and the arrow keys move between legal squares.
(function () {
  "use strict";
  var form = document.getElementById("play-board");
  if (!form) return;
  var id = form.dataset.game;
  var status = document.getElementById("play-status");
  var moves = document.getElementById("play-moves");
  var discs = document.getElementById("play-discs");
  var csrf = form.querySelector("input[name=csrf]");
  var table = form.querySelector("table");
  var othello = table.classList.contains("othello");
  var revision = Number(form.dataset.revision);
  // The game's change counter, from /state: -1 until the first answer.
  var seq = -1;
  var running = form.dataset.status === "running";
  var sending = false;

  // A square as people name it: Othello's `d3` as it is, tic-tac-toe's
  // `0-1` (row-column) as "top middle" (the server says the same).
  function words(name) {
    if (othello) return name;
    var m = /^([0-2])-([0-2])$/.exec(name);
    if (!m) return name;
    if (m[1] === "1" && m[2] === "1") return "centre";
    return ["top", "middle", "bottom"][Number(m[1])] + " " + ["left", "middle", "right"][Number(m[2])];
  }

  function cell(square, legal) {
    var td = document.createElement("td");
    td.className = "sq " + square.mark;
    if (legal) {
      var button = document.createElement("button");
      button.type = "submit";
      button.name = "square";
      button.value = square.name;
      button.className = "legal";
      button.setAttribute("aria-label", words(square.name) + ", legal move");
      if (othello) {
        var dot = document.createElement("span");
        dot.className = "dot";
        dot.setAttribute("aria-hidden", "true");
        button.appendChild(dot);
      }
      td.appendChild(button);
    } else {
      var mark = document.createElement("span");
      mark.className = "mark";
      mark.setAttribute("role", "img");
      mark.setAttribute("aria-label", words(square.name) + ", " + (square.mark || "empty"));
      if (!othello) mark.textContent = square.mark;
      td.appendChild(mark);
    }
    return td;
  }

  // Draws `game` (an answer of /state); `message`, if any, is said before
  // the status line (a refused move).
  function render(game, message) {
    // An answer older than the one shown (a long wait and a post's read
    // can come back out of order) changes nothing.
    if (game.seq < seq) return;
    seq = game.seq;
    var focused = document.activeElement && document.activeElement.value;
    revision = game.revision;
    form.dataset.revision = String(revision);
    form.querySelector("input[name=revision]").value = String(revision);
    var myTurn = game.mine && game.to_move === "person" && game.legal.length > 0;
    var body = document.createElement("tbody");
    game.rows.forEach(function (row, index) {
      var tr = document.createElement("tr");
      if (othello) {
        // Othello's rows are numbered from 1, top first.
        var th = document.createElement("th");
        th.scope = "row";
        th.textContent = String(index + 1);
        tr.appendChild(th);
      }
      row.forEach(function (square) {
        tr.appendChild(cell(square, myTurn && game.legal.indexOf(square.name) >= 0));
      });
      body.appendChild(tr);
    });
    table.replaceChild(body, table.tBodies[0]);
    var line = message ? message + " " + game.status_line : game.status_line;
    if (status.textContent !== line) status.textContent = line;
    moves.textContent = (game.move_words || game.moves).join(", ");
    if (discs) {
      discs.textContent = "Discs: " + (game.mine ? "you" : game.person) + " " + game.counts[0] + ", " + game.bot + " " + game.counts[1] + ".";
    }
    var buttons = legalButtons();
    var again = buttons.filter(function (b) { return b.value === focused; })[0];
    if (myTurn && buttons.length) (again || buttons[0]).focus({ preventScroll: true });
    if (game.status !== "running") {
      running = false;
      // The finished page has the replay's link and the result.
      window.setTimeout(function () { window.location.reload(); }, 1500);
    }
  }

  function legalButtons() {
    return Array.prototype.slice.call(table.querySelectorAll("button.legal"));
  }

  function fetchState(after) {
    var url = "/play/" + id + "/state" + (after === null || after < 0 ? "" : "?after=" + after);
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      if (!r.ok) throw new Error("HTTP " + r.status);
      return r.json();
    });
  }

  function follow() {
    if (!running) return;
    fetchState(seq)
      .then(function (game) {
        render(game);
        follow();
      })
      .catch(function () {
        window.setTimeout(follow, 2000);
      });
  }

  form.addEventListener("submit", function (event) {
    event.preventDefault();
    if (sending) return;
    var submitter = event.submitter;
    if (!submitter) return;
    var data = new URLSearchParams();
    data.set("revision", String(revision));
    data.set(submitter.name, submitter.value);
    // A signed-in person may play from any browser: the account then
    // vouches for the move, with the session's CSRF token.
    if (csrf) data.set("csrf", csrf.value);
    sending = true;
    legalButtons().forEach(function (b) { b.disabled = true; });
    fetch(form.action, {
      method: "POST",
      body: data,
      credentials: "same-origin",
      headers: { Accept: "application/json" },
    })
      .then(function (r) {
        return r.json().then(function (answer) {
          var refused = r.ok ? null : answer.message || "That move was refused.";
          return fetchState(null).then(function (game) {
            render(game, refused);
          });
        });
      })
      .catch(function () {
        status.textContent = "The move could not be sent: try again.";
        legalButtons().forEach(function (b) { b.disabled = false; });
      })
      .then(function () { sending = false; });
  });

  // Arrow keys: to the nearest legal square in that direction.
  table.addEventListener("keydown", function (event) {
    var steps = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] }[event.key];
    if (!steps || !event.target.matches("button.legal")) return;
    var at = function (b) {
      var td = b.parentElement;
      return [td.parentElement.rowIndex, td.cellIndex];
    };
    var here = at(event.target);
    var best = null;
    var bestCost = Infinity;
    legalButtons().forEach(function (b) {
      var p = at(b);
      var along = (p[0] - here[0]) * steps[0] + (p[1] - here[1]) * steps[1];
      var across = Math.abs((p[0] - here[0]) * steps[1]) + Math.abs((p[1] - here[1]) * steps[0]);
      if (along <= 0) return;
      var cost = along + 2 * across;
      if (cost < bestCost) {
        bestCost = cost;
        best = b;
      }
    });
    if (best) {
      event.preventDefault();
      best.focus();
    }
  });

  if (running) follow();
})();
