"""Tic-tac-toe messages (docs/spec/tictactoe.md): cells 0..8 are
row * 3 + column; on the wire a cell is "R-C"."""

from __future__ import annotations

LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))


def cell_name(cell: int) -> str:
    """"R-C" for a cell 0..8."""
    return f"{cell // 3}-{cell % 3}"


class Request:
    """One message: `action` "init" or "play-turn"; `cells` the grid."""

    def __init__(self, raw: dict):
        self.raw = raw
        self.action: str = raw.get("action") or ""
        self.game_id: str = str(raw.get("game-id") or "")
        #: The bot's mark, "X" or "O".
        self.you: str = raw.get("you") or "X"
        #: 0 for the player who moves first in this game.
        self.player_index: int = int(raw.get("player-index") or 0)
        board = raw.get("board")
        board = board if isinstance(board, dict) else {}
        #: 9 cells, each "", "X" or "O".
        self.cells: list[str] = [board.get(cell_name(i)) or "" for i in range(9)]

    @property
    def opponent(self) -> str:
        return "O" if self.you == "X" else "X"

    def empty_cells(self) -> list[int]:
        return [i for i, v in enumerate(self.cells) if v == ""]


def winner(cells: list[str] | tuple) -> str:
    """"X" or "O" when that mark has three in a row, else ""."""
    for a, b, c in LINES:
        if cells[a] and cells[a] == cells[b] == cells[c]:
            return cells[a]
    return ""


def reply(cell: int) -> dict:
    """The reply to a play-turn request (only `play` is read)."""
    return {"name": "", "play": cell_name(cell), "error": None}
