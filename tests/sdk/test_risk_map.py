"""The SDK's Risk map is the engine's map, by name: a bot needs no copy of its own."""

from __future__ import annotations

import json

import pytest

from arena.games.risk.map import load_map
from arena.sdk import risk_map


def test_the_classic_map_has_42_territories_in_6_continents_with_their_bonuses() -> None:
    m = risk_map()
    assert len(m.territories) == len(set(m.territories)) == 42
    assert [(c.name, c.bonus) for c in m.continents] == [
        ("North America", 5),
        ("South America", 2),
        ("Europe", 5),
        ("Africa", 3),
        ("Asia", 7),
        ("Australia", 2),
    ]
    assert sorted(t for c in m.continents for t in c.territories) == sorted(m.territories)
    assert m.continent_of("Brazil").name == "South America"


def test_neighbours_are_symmetric_and_cross_the_edge() -> None:
    m = risk_map()
    for a, others in m.neighbours.items():
        assert a not in others
        for b in others:
            assert a in m.neighbours[b], f"{a} borders {b} but not the other way"
    assert m.are_neighbours("Alaska", "Kamchatka") and m.are_neighbours("Kamchatka", "Alaska")
    assert not m.are_neighbours("Alaska", "Brazil")


def test_indices_are_the_observations_and_the_engines() -> None:
    m, engine = risk_map("classic"), load_map("classic")
    assert m.territories == engine.territories
    alaska = m.index("Alaska")
    assert m.territories[alaska] == "Alaska"
    assert {m.territories[j] for j in m.neighbour_indices[alaska]} == set(m.neighbours["Alaska"])
    assert sum(len(n) for n in m.neighbours.values()) // 2 == engine.num_borders == 83


def test_a_map_file_loads_as_the_engine_loads_it(tmp_path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(
        json.dumps(
            {
                "name": "tiny",
                "continents": [{"name": "Isle", "bonus": 1, "territories": ["A", "B", "C"]}],
                "borders": [["A", "B"], ["B", "C"]],
            }
        )
    )
    m = risk_map(str(path))
    assert m.name == "tiny" and m.neighbours["B"] == ("A", "C")
    assert m.continents[0].bonus == 1


def test_unknown_names_are_refused_with_the_name() -> None:
    with pytest.raises(ValueError, match="unknown territory 'Atlantis' on map 'classic'"):
        risk_map().index("Atlantis")
    with pytest.raises(ValueError, match="unknown territory 'Atlantis'"):
        risk_map().continent_of("Atlantis")
    with pytest.raises(ValueError, match="unknown map 'nowhere'"):
        risk_map("nowhere")


def test_the_cards_are_the_engines_with_their_designs() -> None:
    """Card ``i`` of a hand is ``cards[i]``: the territory it shows and its design, as the
    rules read them; the last two are wild; ``is_set`` counts sets as the rules do."""
    from itertools import combinations

    from arena.games.risk import cards as rules

    m, engine = risk_map("classic"), load_map("classic")
    assert len(m.cards) == rules.deck_size(engine) == 44
    assert [c.index for c in m.cards] == list(range(44))
    assert [c.territory for c in m.cards[:42]] == list(m.territories)
    assert [(c.territory, c.design) for c in m.cards[42:]] == [(None, "wild")] * 2
    assert {c.design for c in m.cards[:42]} == {"infantry", "cavalry", "artillery"}
    assert all(m.cards[i].design == rules.design_name(engine, i) for i in range(44))
    assert all(m.is_set(t) == rules.is_set(engine, t) for t in combinations(range(44), 3))
    assert not m.is_set([0, 1]) and not m.is_set([0, 1, 99])
