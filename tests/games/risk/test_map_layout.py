"""A map file's picture: the layout (a place for every territory) and the continents'
colours, read and checked with the map; the rules never read them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from arena.games.risk.map import load_map, map_option, map_shown
from arena.web import boards

TINY = {
    "name": "tiny",
    "continents": [
        {"name": "West", "bonus": 1, "colour": "#aa0000", "territories": ["A", "B"]},
        {"name": "East", "bonus": 2, "territories": ["C", "D"]},
    ],
    "borders": [["A", "B"], ["B", "C"], ["C", "D"], ["A", "D"]],
    "layout": {
        "width": 400,
        "height": 200,
        "territories": {"A": [20, 100], "B": [150, 100], "C": [250, 100], "D": [390, 60]},
    },
}


def write(tmp_path: Path, data: dict) -> str:
    """A map file of ``data``, as a command stores its ``map`` option: its content."""
    path = tmp_path / f"map-{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return map_option(str(path))


def test_the_classic_map_places_every_territory_and_colours_every_continent():
    m = load_map("classic")
    assert m.layout is not None
    (width, height), points = m.layout
    assert len(points) == m.size == 42
    assert all(0 <= x <= width and 0 <= y <= height for x, y in points)
    assert len(set(points)) == 42  # no two territories on one spot
    assert all(c and c.startswith("#") for c in m.continent_colour)
    # Alaska-Kamchatka is the one border drawn across the map's edge
    picture = boards.risk_map(m)
    wrapping = [b for b in picture["borders"] if b["wraps"]]
    assert len(wrapping) == 2  # one line to each edge
    assert {b["x2"] for b in wrapping} == {0.0, width}
    assert len(picture["borders"]) == m.num_borders + 1


def test_a_second_map_draws_from_its_own_file(tmp_path):
    m = load_map(write(tmp_path, TINY))
    assert m.layout == (
        (400.0, 200.0),
        ((20.0, 100.0), (150.0, 100.0), (250.0, 100.0), (390.0, 60.0)),
    )
    assert m.continent_colour == ("#aa0000", None)
    picture = boards.risk_map(m)
    assert [t["x"] for t in picture["territories"]] == [20.0, 150.0, 250.0, 390.0]
    assert picture["continents"][0]["colour"] == "#aa0000"
    assert picture["continents"][1]["colour"].startswith("#")  # a default tint
    # A-D: 370 apart on a map 400 wide, so it wraps, leaving by both edges at one height
    left, right = [b for b in picture["borders"] if b["wraps"]]
    assert (left["x1"], left["x2"], right["x1"], right["x2"]) == (20.0, 0.0, 390.0, 400.0)
    assert left["y2"] == right["y2"] == pytest.approx(100 - 40 * 20 / 30)


def test_a_map_without_a_layout_is_laid_out_for_it(tmp_path):
    data = {k: v for k, v in TINY.items() if k != "layout"}
    m = load_map(write(tmp_path, data))
    assert m.layout is None
    picture = boards.risk_map(m)
    places = {(t["x"], t["y"]) for t in picture["territories"]}
    assert len(places) == 4
    assert all(0 <= x <= picture["width"] and 0 <= y <= picture["height"] for x, y in places)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"layout": {"width": 400}}, "map layout needs width, height and territories"),
        ({"layout": {**TINY["layout"], "width": -1}}, "width and height must be positive"),
        (
            {"layout": {**TINY["layout"], "territories": {"A": [20, 100]}}},
            "territory B needs \\[x, y\\] inside 400.*x200",
        ),
        (
            {
                "layout": {
                    **TINY["layout"],
                    "territories": {**TINY["layout"]["territories"], "D": [401, 0]},
                }
            },
            "territory D needs",
        ),
        (
            {
                "layout": {
                    **TINY["layout"],
                    "territories": {**TINY["layout"]["territories"], "Z": [1, 1]},
                }
            },
            "places territories not on the map: Z",
        ),
        (
            {"continents": [{**TINY["continents"][0], "colour": "red"}, TINY["continents"][1]]},
            "continent West: colour 'red' is not #rrggbb",
        ),
    ],
)
def test_a_bad_picture_is_refused_in_one_line(tmp_path, change, message):
    with pytest.raises(ValueError, match=message):
        load_map(write(tmp_path, {**TINY, **change}))


def test_a_map_is_a_name_or_its_content_never_a_path_the_option_names(tmp_path):
    """A command reads a map file into the option (its content, compact JSON); the
    game, the referee and the web never open a path an option names: one is refused,
    in one line, whether or not the file exists. Pages show a content's name and the
    start of its hash, and no path at all."""
    from arena.plugins import load_registry

    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(TINY, indent=2))
    content = map_option(str(path))
    assert json.loads(content) == TINY and "\n" not in content
    assert load_map(content).territories == ("A", "B", "C", "D")
    assert map_option("classic") == "classic"
    risk = load_registry().game("risk")
    for spec in (str(path), str(tmp_path / "missing.json"), "../../etc/passwd", "/etc/hosts"):
        with pytest.raises(ValueError, match="a map is a built-in one"):
            load_map(spec)
        with pytest.raises(ValueError, match="a map is a built-in one"):
            risk.new_state(3, 1, {"map": spec})
    assert risk.new_state(3, 1, {"map": content}).map.territories == ("A", "B", "C", "D")
    assert risk.stored_options({"map": str(path)}) == {"map": content}
    with pytest.raises(ValueError, match=r"missing\.json"):
        map_option(str(tmp_path / "missing.json"))
    assert map_shown("classic") == "classic"
    assert map_shown(content).startswith("tiny (a map given by its content, sha256 ")
    assert map_shown(str(path)) == "a map file (its path is not shown)"
    assert str(tmp_path) not in map_shown(str(path))
