"""Othello requests and rules (docs/spec/othello.md): every mode (std, anti,
grand, octagon, reversi), squares numbered row * size + column."""

from __future__ import annotations

#: The pass move (answered by the loop when `legal_moves` is empty).
PASS = -1
EMPTY, BLACK, WHITE = 0, 1, 2
DIRECTIONS = ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1))


class Request:
    """One move request, every field typed."""

    def __init__(self, raw: dict):
        #: The request as parsed JSON.
        self.raw = raw
        self.board_size: int = int(raw.get("board_size") or 8)
        #: size² ints: 0 empty (blocked octagon squares too), 1 black, 2 white.
        self.board: list[int] = list(raw.get("board") or [])
        #: 1 or 2: the colour to move (the bot's).
        self.color: int = int(raw.get("color") or BLACK)
        #: Legal squares for `color`; empty means a pass (answered by the loop).
        self.legal_moves: list[int] = list(raw.get("legal_moves") or [])
        #: std, anti, grand, octagon or reversi.
        self.game_mode: str = raw.get("game_mode") or "std"
        self.blocked_squares: list[int] = list(raw.get("blocked_squares") or [])
        placed = raw.get("placed") or {}
        #: Discs placed so far per colour, opening included: {1: n, 2: n}.
        self.placed: dict[int, int] = {BLACK: int(placed.get("1", 0)), WHITE: int(placed.get("2", 0))}
        #: The bot's clock left in this leg (ms).
        self.remaining_ms: int = int(raw.get("remaining_ms") or 0)
        #: The most this move may take (ms).
        self.budget_ms: int = int(raw.get("budget_ms") or 0)
        self.match_id = raw.get("match_id")
        self.leg: int = int(raw.get("leg") or 0)
        self.revision: int = int(raw.get("revision") or 0)
        #: Moves of this leg after the opening: {"color", "participant", "move", "at_ms"}.
        self.history: list[dict] = list(raw.get("history") or [])

    @property
    def opponent(self) -> int:
        return 3 - self.color

    @property
    def is_anti(self) -> bool:
        """In anti, the fewest discs win."""
        return self.game_mode == "anti"


def flips(board: list[int], size: int, square: int, color: int) -> list[int]:
    """The squares that placing `color` on `square` would flip. Blocked
    octagon squares are 0 on the board, so a line stops there as at an
    empty square. (In reversi's centre phase nothing flips.)"""
    opp = 3 - color
    row, col = divmod(square, size)
    out: list[int] = []
    for dr, dc in DIRECTIONS:
        r, c, line = row + dr, col + dc, []
        while 0 <= r < size and 0 <= c < size and board[r * size + c] == opp:
            line.append(r * size + c)
            r, c = r + dr, c + dc
        if line and 0 <= r < size and 0 <= c < size and board[r * size + c] == color:
            out.extend(line)
    return out


def play(board: list[int], size: int, square: int, color: int) -> list[int]:
    """The board after `color` plays `square` (a new list; standard rules)."""
    after = list(board)
    after[square] = color
    for s in flips(board, size, square, color):
        after[s] = color
    return after


def legal_moves(board: list[int], size: int, color: int, blocked: list[int] | tuple = ()) -> list[int]:
    """Legal squares for `color` under the standard rules (not reversi's
    centre phase or 32-disc limit: the request's `legal_moves` has those)."""
    blocked_set = set(blocked)
    return [s for s in range(size * size)
            if board[s] == EMPTY and s not in blocked_set and flips(board, size, s, color)]


def count(board: list[int], color: int) -> int:
    return sum(1 for v in board if v == color)


def square_name(square: int, size: int = 8) -> str:
    """"d3" for 19 on 8×8; the tenth row of 10×10 is written 0 ("j0" = 99)."""
    row, col = divmod(square, size)
    return f"{chr(ord('a') + col)}{(row + 1) % 10 if size == 10 else row + 1}"


def parse_square(name: str, size: int = 8) -> int:
    """The square of a name ("d3", "J0", "j10"), case-insensitive."""
    name = name.strip().lower()
    col = ord(name[0]) - ord("a")
    row = int(name[1:])
    if size == 10 and row == 0:
        row = 10
    if not (0 <= col < size and 1 <= row <= size):
        raise ValueError(f"no square {name!r} on {size}x{size}")
    return (row - 1) * size + col
