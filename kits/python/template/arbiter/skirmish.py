"""Skirmish (docs/spec/skirmish.md): a `Game` the bot reads and orders
through at every tick.

    class MyBot(arbiter.Bot):
        def on_tick(self, g):
            for w in g.idle_workers():
                g.gather(w, g.nearest(g.gold_mines(), w))

`g` is the same object for the whole game: the map (sent at tick 0 only),
felled trees and the mines' places are kept from tick to tick; units,
enemies, mines in sight, resources and `rejected` are this tick's. Orders
are collected and sent as the tick's reply when `on_tick` returns: the last
order per unit counts (an earlier one is replaced, never sent), at most 32
per tick (more are dropped here, with a log line).
"""

from __future__ import annotations

import sys

from .clock import Clock

#: Gold and lumber each code costs.
COST = {"hpea": (75, 0), "hfoo": (135, 0), "hrif": (205, 30),
        "htow": (385, 205), "hhou": (80, 20), "hbar": (160, 60)}
#: Food each unit uses.
FOOD = {"hpea": 1, "hfoo": 2, "hrif": 3}
#: Side of each building's square footprint (units take one tile).
SIZE = {"htow": 3, "hhou": 2, "hbar": 3}
#: What each building trains.
TRAINS = {"htow": ("hpea",), "hbar": ("hfoo", "hrif")}
BUILDINGS = frozenset(SIZE)
MINE_SIZE = 2
#: At most this many actions of a reply are read.
ACTION_LIMIT = 32


class Unit:
    """One of the side's units or buildings, or a visible enemy one."""

    __slots__ = ("raw", "id", "type", "owner", "x", "y", "hp", "hp_max", "order", "target",
                 "code", "carry", "built", "queue", "progress", "size")

    def __init__(self, raw: dict):
        self.raw = raw
        self.id: int = raw["id"]
        #: Its code: hpea, hfoo, hrif, htow, hhou, hbar.
        self.type: str = raw["type"]
        self.owner: int = raw.get("owner", 0)
        #: Its tile (a building's top-left tile).
        self.x: int = raw["x"]
        self.y: int = raw["y"]
        self.hp: int = raw.get("hp", 0)
        self.hp_max: int = raw.get("hpMax", 0)
        #: None (idle), "move", "attack", "gather", "return", "build", "train".
        self.order: str | None = raw.get("order")
        #: The order's target: an id, or a tile {"x", "y"}.
        self.target = raw.get("target")
        #: The building being built (order "build").
        self.code: str | None = raw.get("code")
        #: A peasant's load: {"gold": g, "lumber": l}.
        self.carry: dict = raw.get("carry") or {"gold": 0, "lumber": 0}
        #: Buildings: False while a construction site.
        self.built: bool = raw.get("built", True)
        #: Buildings: codes queued, the one in training first.
        self.queue: list[str] = raw.get("queue") or []
        self.progress: int = raw.get("progress", 0)
        self.size: int = SIZE.get(self.type, 1)

    @property
    def is_building(self) -> bool:
        return self.type in BUILDINGS

    @property
    def idle(self) -> bool:
        """No order (a building: an empty queue)."""
        return self.order is None

    def __repr__(self) -> str:
        return f"{self.type}#{self.id}@({self.x},{self.y})"


class Mine:
    """A gold mine: a neutral 2×2 structure."""

    __slots__ = ("id", "x", "y", "gold", "size")

    def __init__(self, raw: dict):
        self.id: int = raw["id"]
        self.x: int = raw["x"]
        self.y: int = raw["y"]
        self.gold: int = raw.get("gold", 0)
        self.size = MINE_SIZE

    def __repr__(self) -> str:
        return f"mine#{self.id}@({self.x},{self.y})"


class Tile:
    """A tile (a tree to fell, a place to go), 1×1."""

    __slots__ = ("x", "y", "size")

    def __init__(self, x: int, y: int):
        self.x, self.y, self.size = x, y, 1

    def __repr__(self) -> str:
        return f"({self.x},{self.y})"


def distance(a, b) -> int:
    """Chebyshev distance between the closest tiles of two things (anything
    with x, y and size: units, buildings, mines, tiles)."""
    sa, sb = getattr(a, "size", 1), getattr(b, "size", 1)
    dx = max(0, a.x - (b.x + sb - 1), b.x - (a.x + sa - 1))
    dy = max(0, a.y - (b.y + sb - 1), b.y - (a.y + sa - 1))
    return max(dx, dy)


def _id(thing) -> int:
    return thing if isinstance(thing, int) else thing.id


class Game:
    """One skirmish game, as the side sees it; updated every tick."""

    def __init__(self):
        self.tick = -1
        self.game_ms = 0
        #: 1 or 2.
        self.me = 0
        #: Banked gold and lumber, less what this tick's `train` orders cost.
        self.gold = 0
        self.lumber = 0
        self.food_used = 0
        self.food_cap = 0
        self.deadline_ms = 0
        #: This tick's clock (budget `deadlineMs`, aiming at half of it).
        self.clock = Clock(0)
        #: Own units and buildings, ascending id.
        self.units: list[Unit] = []
        #: Enemy units and buildings in vision, ascending id.
        self.enemies: list[Unit] = []
        #: Mines with gold in vision (at tick 0: every mine).
        self.mines: list[Mine] = []
        #: Rejections of the previous tick's reply: {"index", "reason"}.
        self.rejected: list[dict] = []
        #: The map: width, height and rows as at tick 0 (see `tile`).
        self.width = 0
        self.height = 0
        self.rows: list[str] = []
        #: Every tile seen felled so far.
        self.felled: set[tuple[int, int]] = set()
        #: The places of every mine listed at tick 0, by id.
        self.mine_places: dict[int, Mine] = {}
        #: The observation as parsed JSON.
        self.raw: dict = {}
        self._actions: dict[int, dict] = {}
        self._dropped = False

    def update(self, obs: dict, start: float | None = None) -> None:
        """Takes a tick's observation (the loop calls it)."""
        self.raw = obs
        self.tick = obs.get("tick", 0)
        self.game_ms = obs.get("gameMs", 0)
        self.me = obs.get("me", 0)
        res = obs.get("res") or {}
        self.gold = res.get("gold", 0)
        self.lumber = res.get("lumber", 0)
        self.food_used, self.food_cap = (res.get("food") or [0, 0])[:2]
        self.deadline_ms = obs.get("deadlineMs", 0)
        self.clock = Clock(self.deadline_ms, self.deadline_ms / 2, start)
        self.units = [Unit(u) for u in obs.get("units") or []]
        self.enemies = [Unit(u) for u in obs.get("visibleEnemies") or []]
        self.mines = [Mine(m) for m in obs.get("mines") or []]
        for m in self.mines:
            self.mine_places.setdefault(m.id, m)
        self.rejected = obs.get("rejected") or []
        for t in obs.get("cleared") or []:
            self.felled.add((t["x"], t["y"]))
        m = obs.get("map")
        if m:
            self.width, self.height, self.rows = m["w"], m["h"], list(m["rows"])
        self._actions = {}
        self._dropped = False

    # What the side has and sees.

    def my(self, *types: str) -> list[Unit]:
        """Own units and buildings of these codes (all when none given)."""
        return [u for u in self.units if not types or u.type in types]

    def workers(self) -> list[Unit]:
        return self.my("hpea")

    def idle_workers(self) -> list[Unit]:
        """Peasants without an order, not counting those ordered this tick."""
        return [u for u in self.workers() if u.idle and u.id not in self._actions]

    def town_halls(self, built: bool = True) -> list[Unit]:
        """Own town halls (only finished ones unless `built` is False)."""
        return [u for u in self.my("htow") if u.built or not built]

    def army(self) -> list[Unit]:
        return self.my("hfoo", "hrif")

    def gold_mines(self) -> list[Mine]:
        """Mines in vision with gold left (those `gather` may name)."""
        return list(self.mines)

    def enemy_buildings(self) -> list[Unit]:
        return [e for e in self.enemies if e.is_building]

    def count(self, code: str) -> int:
        """Own units of `code`, plus those queued and, for buildings, those a
        peasant is on its way to build."""
        n = len(self.my(code))
        n += sum(b.queue.count(code) for b in self.units if b.is_building)
        n += sum(1 for u in self.workers() if u.order == "build" and u.code == code
                 and not self._site_at(u.target))
        return n

    def _site_at(self, target) -> bool:
        if not isinstance(target, dict):
            return False
        return any(b.is_building and b.x == target["x"] and b.y == target["y"] for b in self.units)

    def nearest(self, things, to):
        """The thing nearest to `to` (Chebyshev, closest tiles), the first one
        listed on a tie; None when there is none."""
        best, best_d = None, None
        for t in things:
            d = distance(t, to)
            if best_d is None or d < best_d:
                best, best_d = t, d
        return best

    distance = staticmethod(distance)

    def enemy_start(self) -> Tile | None:
        """The enemy's start town hall's top-left tile: the map is symmetric
        under the half-turn, so it is the mirror of the own first hall."""
        halls = self.town_halls(built=False)
        if not halls or not self.width:
            return None
        h = halls[0]
        return Tile(self.width - h.x - h.size, self.height - h.y - h.size)

    # The map.

    def tile(self, x: int, y: int) -> str:
        """"." ground, "T" tree, "#" rock or water ("" off the map), as far as
        the side knows: a tree seen felled is ground."""
        if not (0 <= y < self.height and 0 <= x < self.width):
            return ""
        c = self.rows[y][x]
        if c == "T" and (x, y) in self.felled:
            return "."
        return c

    def structures(self) -> list:
        """Everything known to stand on the map: own buildings and sites,
        enemy buildings in vision, every mine listed at tick 0."""
        return [u for u in self.units if u.is_building] + self.enemy_buildings() + list(self.mine_places.values())

    def _near_structures(self, margin: int) -> set[tuple[int, int]]:
        """Tiles within `margin` of a known structure."""
        near = set()
        for st in self.structures():
            size = getattr(st, "size", 1)
            for ty in range(st.y - margin, st.y + size + margin):
                for tx in range(st.x - margin, st.x + size + margin):
                    near.add((tx, ty))
        return near

    def footprint_free(self, x: int, y: int, size: int, margin: int = 0, *, blocked=None) -> bool:
        """Every tile of the size×size square at (x, y) is ground, and no known
        structure stands within `margin` tiles of it (`blocked`: those tiles,
        when the caller has them already)."""
        near = self._near_structures(margin) if blocked is None else blocked
        for ty in range(y, y + size):
            for tx in range(x, x + size):
                if self.tile(tx, ty) != "." or (tx, ty) in near:
                    return False
        return True

    def find_site(self, code: str, near, margin: int = 1, radius: int = 10) -> Tile | None:
        """A place for building `code` near `near`: its footprint free (see
        `footprint_free`, with `margin` tiles kept free around it so paths
        stay open), the nearest one to `near`, by row then column on a tie."""
        size = SIZE[code]
        blocked = self._near_structures(margin)
        best, best_d = None, None
        for y in range(max(0, near.y - radius), min(self.height - size, near.y + radius) + 1):
            for x in range(max(0, near.x - radius), min(self.width - size, near.x + radius) + 1):
                spot = Tile(x, y)
                spot.size = size
                d = distance(spot, near)
                if (best_d is None or d < best_d) and self.footprint_free(x, y, size, margin, blocked=blocked):
                    best, best_d = Tile(x, y), d
        return best

    # Resources.

    def can_afford(self, code: str) -> bool:
        gold, lumber = COST[code]
        return self.gold >= gold and self.lumber >= lumber

    def food_left(self) -> int:
        return self.food_cap - self.food_used

    # Orders (each takes units, buildings, mines as objects or ids).

    def _order(self, unit, action: dict) -> None:
        uid = _id(unit)
        action = {"do": action.pop("do"), "unit": uid, **action}
        self._actions.pop(uid, None)
        if len(self._actions) >= ACTION_LIMIT:
            if not self._dropped:
                sys.stderr.write(f"skirmish: more than {ACTION_LIMIT} orders at tick {self.tick}; the rest are dropped\n")
                self._dropped = True
            return
        self._actions[uid] = action

    def move(self, unit, x: int, y: int) -> None:
        self._order(unit, {"do": "move", "x": x, "y": y})

    def attack(self, unit, target) -> None:
        self._order(unit, {"do": "attack", "target": _id(target)})

    def gather(self, unit, source) -> None:
        """A peasant mines `source` (a mine or its id) or fells a tree
        (a `Tile`, an (x, y) pair or {"x", "y"})."""
        if isinstance(source, (Mine, int)):
            target = _id(source)
        elif isinstance(source, Tile):
            target = {"x": source.x, "y": source.y}
        elif isinstance(source, dict):
            target = {"x": source["x"], "y": source["y"]}
        elif isinstance(source, (tuple, list)):
            target = {"x": source[0], "y": source[1]}
        elif source is None:
            return
        else:
            target = _id(source)
        self._order(unit, {"do": "gather", "target": target})

    def build(self, unit, code: str, x: int, y: int) -> None:
        """A peasant builds `code` with its top-left tile at (x, y); the cost
        is paid when building starts, not now."""
        self._order(unit, {"do": "build", "code": code, "x": x, "y": y})

    def train(self, building, code: str) -> None:
        """Queues `code`; its cost leaves `gold`/`lumber` at once, as on the
        referee's side."""
        earlier = self._actions.get(_id(building))
        if earlier is not None and earlier["do"] == "train":
            # Only the last order per unit counts: that one will not be paid.
            self.gold += COST.get(earlier["code"], (0, 0))[0]
            self.lumber += COST.get(earlier["code"], (0, 0))[1]
        gold, lumber = COST.get(code, (0, 0))
        self.gold -= gold
        self.lumber -= lumber
        self._order(building, {"do": "train", "code": code})

    def stop(self, unit) -> None:
        self._order(unit, {"do": "stop"})

    def orders(self) -> list[dict]:
        """This tick's orders so far."""
        return list(self._actions.values())

    def reply(self) -> dict:
        """The reply to this tick (the loop sends it)."""
        return {"t": "act", "tick": self.tick, "actions": self.orders()}
