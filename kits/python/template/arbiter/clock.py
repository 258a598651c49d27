"""The clock of one turn (see `Clock`)."""

from __future__ import annotations

import time


class Clock:
    """The time of one turn, started when its request line was read.

    `time.monotonic()` is the sandbox's virtual clock (fuel turned into
    milliseconds), so a search that stops on it stops at the same point on
    every machine; natively it is the wall clock. Reading it costs a host
    call: check it every few thousand nodes, not at every one.
    """

    def __init__(self, budget_ms: float, target_ms: float | None = None, start: float | None = None):
        self.start = time.monotonic() if start is None else start
        #: The most this turn may take.
        self.budget_ms = max(0.0, float(budget_ms))
        #: What the bot means to spend (at most the budget).
        self.target_ms = self.budget_ms if target_ms is None else max(0.0, min(float(target_ms), self.budget_ms))

    @classmethod
    def for_move(cls, budget_ms: float, remaining_ms: float, moves_left: int = 20,
                 fraction: float = 0.5, start: float | None = None) -> "Clock":
        """A move's clock aiming at `fraction` of min(budget, remaining / moves_left)."""
        share = budget_ms
        if remaining_ms > 0 and moves_left > 0:
            share = min(share, remaining_ms / moves_left)
        return cls(budget_ms, share * fraction, start)

    def elapsed_ms(self) -> float:
        """Milliseconds spent on this turn so far."""
        return (time.monotonic() - self.start) * 1000.0

    def left_ms(self) -> float:
        """Milliseconds left of the budget (may be negative)."""
        return self.budget_ms - self.elapsed_ms()

    def time_up(self) -> bool:
        """True once the target is used up: stop searching, answer."""
        return self.elapsed_ms() >= self.target_ms
