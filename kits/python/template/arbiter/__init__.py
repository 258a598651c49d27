"""The Arbiter bot protocol for Python (docs/spec/protocol.md).

One JSON request line arrives on stdin per turn; the bot answers one JSON
line on stdout. `run(bot)` is the loop: it reads one line, asks the bot
(`othello`, `tictactoe` or `on_tick`, by the kind of request), writes the
reply and flushes it, and only then reads the next line.

    import arbiter

    class MyBot(arbiter.Bot):
        def othello(self, req, clock):
            return req.legal_moves[0]

    arbiter.run(MyBot())

The same source runs natively (`python3 bot.py`, real pipes, wall-clock
time) and as a WASI 0.2 component (`sh build.sh`, fuel as the clock).

What the loop guarantees:
- stdin is read only when the previous request has been answered (asking
  for input before replying ends the turn as a fault in the sandbox), and
  never more than the host offers;
- every reply is one line, written to fd 1 and flushed before anything else
  happens; `print()` goes to stderr (the bot's log) while `run` is on, so a
  stray print never becomes a reply;
- an exception in the bot is logged with its traceback and answered with a
  legal fallback (Othello: the first legal move or a pass; tic-tac-toe: the
  first empty cell; skirmish: no actions), so the game goes on;
- skirmish: when several observations are waiting (the bot fell behind),
  only the newest is answered.
"""

from __future__ import annotations

import json
import os
import random
import sys
import time
import traceback

from . import othello, skirmish, tictactoe
from .clock import Clock

__all__ = ["Bot", "Clock", "PASS", "log", "rng", "run", "othello", "skirmish", "tictactoe"]

#: The Othello pass.
PASS = othello.PASS


def log(*parts: object) -> None:
    """Writes a line to stderr, the bot's log (stdout carries replies only;
    64 KiB per game and side are kept)."""
    sys.stderr.write(" ".join(str(p) for p in parts) + "\n")
    sys.stderr.flush()


def rng() -> random.Random:
    """A generator seeded at run time: natively from `ARBITER_RANDOM` (set by
    `arbiter play` for `cmd:` bots: the first bytes the sandbox's stream would
    give this bot), else from `os.urandom`, which in the sandbox reads the
    stream the match seeds, so games replay exactly. Call it in `run`'s
    time (in a method, not at import: a component's imports run at build
    time, and a generator made there would be the same in every game)."""
    seed = os.environ.get("ARBITER_RANDOM")
    if seed:
        try:
            return random.Random(bytes.fromhex(seed)[:32])
        except ValueError:
            pass
    return random.Random(os.urandom(32))


class Bot:
    """What a bot implements; override the games it plays.

    - `othello(req, clock)`: a square of `req.legal_moves` (an int), or a
      dict {"move": square, ...} whose other fields go into the replay;
      called only when there is a legal move (the loop answers the pass);
    - `tictactoe(req, clock)`: an empty cell, 0..8 (row * 3 + column);
    - `on_tick(g)`: skirmish; give orders with `g.gather(...)`, `g.train(...)`…
      `g` is the same `arbiter.skirmish.Game` at every tick of a game.
    """

    #: Sent in answer to tic-tac-toe's init message.
    name = "bot"

    def othello(self, req: othello.Request, clock: Clock) -> int:
        return req.legal_moves[0]

    def tictactoe(self, req: tictactoe.Request, clock: Clock) -> int:
        return req.empty_cells()[0]

    def on_tick(self, g: skirmish.Game) -> None:
        pass


class _Lines:
    """Request lines from fd 0, read with `os.read`: one read returns what
    the host offers, and a read happens only when no whole line is left."""

    def __init__(self, fd: int = 0):
        self.fd = fd
        self.buf = b""
        self.ended = False

    def next(self) -> bytes | None:
        """The next line (without its newline), or None at the end of stdin."""
        while True:
            nl = self.buf.find(b"\n")
            if nl >= 0:
                line, self.buf = self.buf[:nl], self.buf[nl + 1:]
                return line
            if self.ended:
                line, self.buf = self.buf, b""
                return line if line.strip() else None
            chunk = os.read(self.fd, 65536)
            if not chunk:
                self.ended = True
            self.buf += chunk

    def waiting(self) -> bool:
        """True when another whole line has already been read."""
        return b"\n" in self.buf


def _write(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data):]


def _dumps(value: object) -> str:
    return json.dumps(value, separators=(",", ":"))


def answer(bot: Bot, line: bytes | str, game: "skirmish.Game | None" = None, start: float | None = None) -> str:
    """The reply line (without newline) to one request line; `game` carries a
    skirmish game's state from tick to tick. Handy in tests."""
    start = time.monotonic() if start is None else start
    try:
        req = json.loads(line)
    except ValueError as e:
        log(f"cannot read the request: {e}")
        return _dumps({"move": PASS})
    if not isinstance(req, dict):
        log("the request is not a JSON object")
        return _dumps({"move": PASS})
    if req.get("t") == "obs":
        g = game if game is not None else skirmish.Game()
        g.update(req, start)
        try:
            bot.on_tick(g)
        except Exception:
            log(traceback.format_exc().rstrip())
        return _dumps(g.reply())
    if "action" in req:
        ttt = tictactoe.Request(req)
        if ttt.action != "play-turn":
            return _dumps({"name": bot.name})
        # Tic-tac-toe requests carry no clock: 100 ms per turn by default.
        clock = Clock(100, 50, start)
        try:
            cell = bot.tictactoe(ttt, clock)
            if type(cell) is not int or cell not in ttt.empty_cells():
                raise ValueError(f"cell {cell!r} is not one of the empty cells {ttt.empty_cells()}")
        except Exception:
            log(traceback.format_exc().rstrip())
            cell = ttt.empty_cells()[0] if ttt.empty_cells() else 0
        return _dumps(tictactoe.reply(cell))
    oth = othello.Request(req)
    if not oth.legal_moves:
        return _dumps({"move": PASS})
    clock = Clock.for_move(oth.budget_ms, oth.remaining_ms, 20, 0.5, start)
    try:
        move, extra = bot.othello(oth, clock), {}
        if isinstance(move, dict):
            # {"move": 19, "eval": 0.4}: extra fields go into the replay.
            extra = {k: v for k, v in move.items() if k != "move"}
            move = move.get("move")
        if type(move) is not int or move not in oth.legal_moves:
            raise ValueError(f"move {move!r} is not one of the legal moves {oth.legal_moves}")
    except Exception:
        log(traceback.format_exc().rstrip())
        move, extra = oth.legal_moves[0], {}
    return _dumps({"move": move, **extra})


def run(bot: Bot) -> None:
    """Answers request lines from stdin until it ends (one reply line each,
    flushed at once). Native runs and components run the same code."""
    lines = _Lines()
    game = skirmish.Game()
    # Replies go to fd 1 directly; anything printed goes to the log.
    real_stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        while True:
            line = lines.next()
            if line is None:
                return
            start = time.monotonic()
            if b'"t":"obs"' in line and lines.waiting():
                # Behind in skirmish: answer only the newest observation
                # (the map arrives once, at tick 0: keep it if it is here).
                if b'"map"' in line:
                    try:
                        game.update(json.loads(line), start)
                    except ValueError as e:
                        log(f"cannot read the observation: {e}")
                continue
            reply = answer(bot, line, game, start)
            _write(1, (reply + "\n").encode())
    finally:
        sys.stdout = real_stdout
