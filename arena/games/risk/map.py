"""Risk maps are data: territories, continents with bonuses, and borders.

A map file is JSON: ``{"name", "continents": [{"name", "bonus", "territories"}],
"borders": [[a, b], ...]}`` and, optionally, ``"cards": {"territory": "infantry"}``.
Without ``cards``, designs are dealt infantry, cavalry, artillery in turn over the
territories in file order, so each design appears equally often (14 each on the
classic map).

For pictures (the web's replay viewer), optionally: a ``"colour"`` per continent
(``"#rrggbb"``) and ``"layout": {"width", "height", "territories": {"name": [x, y]}}``,
where each territory is drawn (x to the right, y down). The rules never read them.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

DESIGNS = ("infantry", "cavalry", "artillery")
WILD = 3  # design index of a wild card
COLOUR = re.compile(r"^#[0-9a-fA-F]{6}$")


@dataclass(frozen=True, eq=False)
class RiskMap:
    name: str
    territories: tuple[str, ...]
    index: dict[str, int]
    continents: tuple[str, ...]
    continent_bonus: tuple[int, ...]
    continent_members: tuple[tuple[int, ...], ...]
    territory_continent: tuple[int, ...]
    neighbours: tuple[tuple[int, ...], ...]
    adjacent: tuple[frozenset[int], ...]
    card_design: tuple[int, ...]  # design index per territory card
    #: for pictures only: a "#rrggbb" per continent (None: not given)
    continent_colour: tuple[str | None, ...] = ()
    #: for pictures only: (width, height) and an (x, y) per territory, or None
    layout: tuple[tuple[float, float], tuple[tuple[float, float], ...]] | None = None

    @property
    def size(self) -> int:
        return len(self.territories)

    @property
    def num_borders(self) -> int:
        return sum(len(n) for n in self.neighbours) // 2

    def territory(self, ref: Any) -> int:
        """The index of a territory given by name or index; ValueError otherwise.

        An index may also come as its decimal string, since JSON object keys are strings.
        """
        if type(ref) is int:
            if 0 <= ref < len(self.territories):
                return ref
        elif type(ref) is str:
            i = self.index.get(ref)
            if i is not None:
                return i
            if ref.isdigit() and int(ref) < len(self.territories):
                return int(ref)
        raise ValueError(f"unknown territory {ref!r} on map {self.name!r}")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RiskMap:
        try:
            continents = data["continents"]
            names: list[str] = [t for c in continents for t in c["territories"]]
            raw_borders = data["borders"]
        except (KeyError, TypeError) as exc:
            raise ValueError(f"map is missing {exc}; expected continents and borders") from None
        index = {name: i for i, name in enumerate(names)}
        if len(index) != len(names):
            raise ValueError("map lists a territory in more than one continent")
        neighbours: list[set[int]] = [set() for _ in names]
        for pair in raw_borders:
            a, b = pair
            if a not in index or b not in index:
                raise ValueError(f"border {a}-{b} names a territory not in any continent")
            if a == b:
                raise ValueError(f"border {a}-{b} joins a territory to itself")
            neighbours[index[a]].add(index[b])
            neighbours[index[b]].add(index[a])
        cards = data.get("cards")
        if cards is None:
            design = tuple(i % 3 for i in range(len(names)))
        else:
            design = tuple(DESIGNS.index(cards[name]) for name in names)
        colours = tuple(c.get("colour") for c in continents)
        for c, colour in zip(continents, colours, strict=True):
            if colour is not None and (type(colour) is not str or not COLOUR.match(colour)):
                raise ValueError(f"continent {c['name']}: colour {colour!r} is not #rrggbb")
        territory_continent = [0] * len(names)
        members = []
        for ci, c in enumerate(continents):
            members.append(tuple(index[t] for t in c["territories"]))
            for t in c["territories"]:
                territory_continent[index[t]] = ci
        return cls(
            name=data.get("name", "unnamed"),
            territories=tuple(names),
            index=index,
            continents=tuple(c["name"] for c in continents),
            continent_bonus=tuple(int(c["bonus"]) for c in continents),
            continent_members=tuple(members),
            territory_continent=tuple(territory_continent),
            neighbours=tuple(tuple(sorted(n)) for n in neighbours),
            adjacent=tuple(frozenset(n) for n in neighbours),
            card_design=design,
            continent_colour=colours,
            layout=_layout(data.get("layout"), names),
        )


def _layout(
    layout: Any, names: list[str]
) -> tuple[tuple[float, float], tuple[tuple[float, float], ...]] | None:
    """The map file's ``layout``, checked: a size and a place inside it for every
    territory."""
    if layout is None:
        return None

    def number(value: Any) -> bool:
        return type(value) in (int, float) and value >= 0

    try:
        width, height, places = layout["width"], layout["height"], layout["territories"]
    except (KeyError, TypeError):
        raise ValueError("map layout needs width, height and territories") from None
    if not (number(width) and number(height) and width > 0 and height > 0):
        raise ValueError(f"map layout: width and height must be positive, got {width}, {height}")
    points = []
    for name in names:
        point = places.get(name) if isinstance(places, dict) else None
        if not (
            isinstance(point, list)
            and len(point) == 2
            and all(number(v) for v in point)
            and point[0] <= width
            and point[1] <= height
        ):
            raise ValueError(
                f"map layout: territory {name} needs [x, y] inside {width}x{height}, got {point!r}"
            )
        points.append((float(point[0]), float(point[1])))
    unknown = sorted(set(places) - set(names))
    if unknown:
        raise ValueError(f"map layout places territories not on the map: {', '.join(unknown)}")
    return (float(width), float(height)), tuple(points)


#: a built-in map's name (a file ``data/NAME.json`` of this package)
BUILT_IN = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@lru_cache(maxsize=32)
def load_map(spec: str = "classic") -> RiskMap:
    """The map of a game's ``map`` option: a built-in map by name (``classic``), or a
    map given by its content, the JSON of a map file (what a command stores for
    ``--option map=FILE.json``: :func:`map_option`). Never a file by its path: the
    option travels with the match to the referee, the store, the replay and the web,
    none of which opens a file an option names. ValueError for anything else."""
    if spec.lstrip().startswith("{"):
        try:
            doc = json.loads(spec)
        except ValueError as exc:
            raise ValueError(f"a map given by its content is not JSON: {exc}") from None
        if not isinstance(doc, dict):
            raise ValueError("a map given by its content is not a JSON object")
        return RiskMap.from_json(doc)
    if not BUILT_IN.fullmatch(spec):
        raise ValueError(
            f"unknown map {spec[:80]!r}: a map is a built-in one (classic) or a map "
            "file's content; give a file to a command as --option map=FILE.json"
        )
    try:
        text = resources.files("arena.games.risk").joinpath(f"data/{spec}.json").read_text()
    except FileNotFoundError:
        raise ValueError(f"unknown map {spec!r}: not a built-in map (classic)") from None
    return RiskMap.from_json(json.loads(text))


def map_option(value: str) -> str:
    """The ``map`` option as a command stores it: a built-in name as it is, a map file
    (a path ending in ``.json``) as its content (compact JSON, checked to be a map), so
    that the match carries its map and nothing ever reads that path again. ValueError
    for a file that is missing or not a map."""
    if not value.endswith(".json"):
        return value
    path = Path(value).expanduser()
    try:
        doc = json.loads(path.read_text())
    except OSError as exc:
        raise ValueError(f"map {value}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ValueError(f"map {value}: not JSON ({exc})") from None
    if not isinstance(doc, dict):
        raise ValueError(f"map {value}: not a map file (a JSON object)")
    RiskMap.from_json(doc)  # refused here, with the reason, not when a match starts
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False)


def map_key(spec: str) -> str:
    """The ``map`` option as a leaderboard's key holds it: a built-in name as it is, a
    map given by its content as its name (letters, digits, ``.``, ``_``, ``-``) and the
    start of its SHA-256 (two maps of one name are two boards), a path an older Arena
    stored as ``file``."""
    if BUILT_IN.fullmatch(spec):
        return spec
    if spec.lstrip().startswith("{"):
        digest = hashlib.sha256(spec.encode()).hexdigest()[:12]
        try:
            name = str(json.loads(spec).get("name", "custom"))
        except (ValueError, AttributeError):
            name = "custom"
        return f"{re.sub(r'[^A-Za-z0-9._-]+', '-', name)[:32] or 'custom'}-{digest}"
    return "file"


def map_shown(spec: str) -> str:
    """The ``map`` option as a page may show it: a built-in name as it is; a map given
    by its content as its name and the start of its SHA-256; anything else (the path
    an older Arena stored) as neither, since a path tells of the machine that played."""
    if BUILT_IN.fullmatch(spec):
        return spec
    if spec.lstrip().startswith("{"):
        digest = hashlib.sha256(spec.encode()).hexdigest()[:12]
        try:
            name = str(json.loads(spec).get("name", "custom"))[:64]
        except (ValueError, AttributeError):
            name = "custom"
        return f"{name} (a map given by its content, sha256 {digest})"
    return "a map file (its path is not shown)"
