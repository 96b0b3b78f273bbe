"""Geometry of the viewers' boards, drawn on the server (the templates write the SVG,
the browser's script only recolours and relabels it): a Risk map from its map file's
layout, the Stratego board; and the side panel's facts of a view, so that a page
shows the position without JavaScript too."""

from __future__ import annotations

import math
from typing import Any

from arena.games.risk.map import RiskMap

#: seat colours, in the order of the missions variant's colours (red, blue, green,
#: yellow, black, pink); passive owners (the neutral) grey
SEAT_COLOURS = ("#d33b30", "#2f6fc0", "#2f9a48", "#e0b019", "#3a3a3a", "#e27ab4")
PASSIVE_COLOUR = "#9a9a9a"
#: continent tints for a map file that gives none
TINTS = ("#e3b505", "#d9653b", "#3f7fd0", "#9a6a3c", "#4e9f48", "#9b59b6", "#16a085", "#c0392b")
NODE = 17  # a territory's radius
HALO = 52  # a continent's tint around each of its territories


def owner_colour(owner: int, num_players: int) -> str:
    if owner < 0:
        return "#ffffff"
    return SEAT_COLOURS[owner % len(SEAT_COLOURS)] if owner < num_players else PASSIVE_COLOUR


def risk_map(game_map: RiskMap) -> dict[str, Any]:
    """Where each territory, border and continent tint goes. A map file without a
    layout gets one: its continents on a grid, each continent's territories round a
    circle."""
    if game_map.layout is not None:
        (width, height), points = game_map.layout
    else:
        width, height, points = _automatic(game_map)
    colours = [
        given or TINTS[i % len(TINTS)]
        for i, given in enumerate(game_map.continent_colour or [None] * len(game_map.continents))
    ]
    borders = []
    for a, near in enumerate(game_map.neighbours):
        for b in near:
            if a < b:
                borders.extend(_border(points[a], points[b], width))
    return {
        "width": width,
        "height": height,
        "borders": borders,
        "continents": [
            {
                "name": name,
                "colour": colours[c],
                "points": [points[t] for t in members],
            }
            for c, (name, members) in enumerate(
                zip(game_map.continents, game_map.continent_members, strict=True)
            )
        ],
        "territories": [
            {
                "index": t,
                "name": name,
                "label": name.replace("-", " "),
                "x": points[t][0],
                "y": points[t][1],
                "colour": colours[game_map.territory_continent[t]],
            }
            for t, name in enumerate(game_map.territories)
        ],
        "node": NODE,
        "halo": HALO,
    }


def _border(p: tuple[float, float], q: tuple[float, float], width: float) -> list[dict[str, Any]]:
    """A border as one line, or, when its ends are more than half the map apart across
    (Alaska and Kamchatka), as two lines that leave by the nearer edges: the map wraps."""
    if abs(p[0] - q[0]) <= width / 2:
        return [{"x1": p[0], "y1": p[1], "x2": q[0], "y2": q[1], "wraps": False}]
    left, right = (p, q) if p[0] < q[0] else (q, p)
    across = left[0] + (width - right[0])  # the distance the short way, over the edge
    y = left[1] + (right[1] - left[1]) * left[0] / across if across else left[1]
    return [
        {"x1": left[0], "y1": left[1], "x2": 0.0, "y2": y, "wraps": True},
        {"x1": right[0], "y1": right[1], "x2": width, "y2": y, "wraps": True},
    ]


def _automatic(game_map: RiskMap) -> tuple[float, float, list[tuple[float, float]]]:
    columns = math.ceil(math.sqrt(len(game_map.continents)))
    rows = math.ceil(len(game_map.continents) / columns)
    cell = 260.0
    points: list[tuple[float, float]] = [(0.0, 0.0)] * game_map.size
    for c, members in enumerate(game_map.continent_members):
        cx = cell * (c % columns) + cell / 2
        cy = cell * (c // columns) + cell / 2
        radius = 0.0 if len(members) == 1 else cell / 2 - 45
        for k, t in enumerate(members):
            angle = 2 * math.pi * k / len(members) - math.pi / 2
            points[t] = (
                round(cx + radius * math.cos(angle), 1),
                round(cy + radius * math.sin(angle), 1),
            )
    return cell * columns, cell * rows, points


def risk_owners(players: list[str], board: dict[str, Any]) -> list[dict[str, Any]]:
    """The owners of territories: the seats, then passive owners (the neutral)."""
    seats = [{"label": label, "passive": False} for label in players]
    passive = [{"label": name, "passive": True} for name in board.get("passive_owners", [])]
    owners = seats + passive
    for i, o in enumerate(owners):
        o["index"] = i
        o["colour"] = owner_colour(i, len(players))
    return owners


def risk_panel(view: dict[str, Any], players: list[str], board: dict[str, Any]) -> dict[str, Any]:
    """The side panel's rows for a view (what the script redraws at every step)."""
    continents = board["continents"]
    owners = risk_owners(players, board)
    for o in owners:
        i = o["index"]
        o["territories"] = view["territories"][i]
        o["armies"] = view["strength"][i]
        o["cards"] = view["cards"][i]
        o["continents"] = [
            c["name"] for c, held in zip(continents, view["continents"], strict=True) if held == i
        ]
        o["out"] = i < len(players) and not view["alive"][i]
    return {"owners": owners, "view": view}


#: Stratego: a square's side in the picture
SQUARE = 52


def _stratego_codes() -> dict[str, str]:
    """What a piece shows: its strength (2 scout ... 10 marshal), S spy, B bomb, F flag."""
    from arena.games.stratego.pieces import NAMES

    letters = {"flag": "F", "spy": "S", "bomb": "B"}
    return {name: letters.get(name, str(rank)) for rank, name in enumerate(NAMES)}


def stratego_board() -> dict[str, Any]:
    """The 10x10 squares (row 1, seat 0's side, at the bottom) and the lakes."""
    from arena.games.stratego.board import COLUMNS, LAKES, SIZE, square_name

    squares = [
        {
            "index": s,
            "name": square_name(s),
            "x": (s % SIZE) * SQUARE,
            "y": (SIZE - 1 - s // SIZE) * SQUARE,
            "lake": s in LAKES,
            "dark": (s // SIZE + s % SIZE) % 2 == 0,
        }
        for s in range(SIZE * SIZE)
    ]
    return {
        "size": SIZE * SQUARE,
        "square": SQUARE,
        "squares": squares,
        "columns": list(COLUMNS),
        "codes": _stratego_codes(),
    }
