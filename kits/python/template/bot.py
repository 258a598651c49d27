"""my-bot: greedy Othello (every mode), perfect tic-tac-toe and a skirmish
economy. Replace the three methods of MyBot with your own.

  python3 bot.py          natively: arbiter play othello cmd:'python3 bot.py' house:othello-random
  sh build.sh             the component: bot.wasm (component.py calls main())

The same source runs both ways. Its moves depend on the request alone (ties
go to the first candidate, no clock, no randomness), so the native run and
the component play the same moves from the same seed.
"""

from functools import lru_cache

import arbiter
from arbiter import othello, tictactoe


class MyBot(arbiter.Bot):
    name = "my-bot"

    def othello(self, req, clock):
        """The legal move that flips the most discs (in anti: the fewest);
        the first in `legal_moves` on a tie."""
        sign = -1 if req.is_anti else 1
        return max(req.legal_moves,
                   key=lambda m: sign * len(othello.flips(req.board, req.board_size, m, req.color)))

    def tictactoe(self, req, clock):
        """Perfect play: the cell with the best minimax value (the first one
        on a tie)."""
        cells = tuple(req.cells)
        best, best_value = None, -2
        for cell in req.empty_cells():
            after = cells[:cell] + (req.you,) + cells[cell + 1:]
            value = -_value(after, req.opponent)
            if value > best_value:
                best, best_value = cell, value
        return best

    def on_tick(self, g):
        """An economy: every idle peasant mines the nearest gold, the town
        hall trains peasants up to 12, a farm goes up when food runs short, a
        barracks once there are 8 peasants; footmen gather at home and, six
        strong, attack what they see or march to the enemy's start."""
        halls = g.town_halls()
        if not halls:
            return
        hall = halls[0]
        for w in g.idle_workers():
            g.gather(w, g.nearest(g.gold_mines(), w))
        builders = [w for w in g.workers() if w.order == "gather"]
        if g.food_left() <= 2 and g.count("hhou") - len(g.my("hhou")) == 0 and g.can_afford("hhou") and builders:
            self.build_near(g, hall, "hhou", builders)
        elif (g.count("hpea") >= 8 and g.count("hbar") == 0 and g.can_afford("hbar") and builders):
            self.build_near(g, hall, "hbar", builders)
        if not hall.queue and g.count("hpea") < 12 and g.food_left() >= 1 and g.can_afford("hpea"):
            g.train(hall, "hpea")
        for barracks in g.my("hbar"):
            if barracks.built and len(barracks.queue) < 2 and g.food_left() >= 2 and g.can_afford("hfoo"):
                g.train(barracks, "hfoo")
        army = g.army()
        if len(army) >= 6:
            for f in army:
                target = g.nearest(g.enemies, f)
                if target is not None and f.order != "attack":
                    g.attack(f, target)
                elif target is None and f.idle:
                    goal = g.enemy_start()
                    if goal is not None:
                        g.move(f, goal.x, goal.y)

    @staticmethod
    def build_near(g, hall, code, builders):
        site = g.find_site(code, hall)
        if site is not None:
            g.build(g.nearest(builders, site), code, site.x, site.y)


@lru_cache(maxsize=None)
def _value(cells, to_move):
    """The minimax value of a grid for the player to move: 1 win, 0 draw,
    -1 loss."""
    if tictactoe.winner(cells):
        return -1  # the previous move won
    if "" not in cells:
        return 0
    other = "O" if to_move == "X" else "X"
    best = -1
    for cell, mark in enumerate(cells):
        if mark == "":
            best = max(best, -_value(cells[:cell] + (to_move,) + cells[cell + 1:], other))
            if best == 1:
                break
    return best


# Solve tic-tac-toe now: in a component this runs at build time (the
# snapshot keeps the table), natively at start-up (about 20 ms).
_value(("",) * 9, "X")


def main():
    arbiter.run(MyBot())


if __name__ == "__main__":
    main()
