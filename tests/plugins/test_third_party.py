"""A third-party variant, installed as a real distribution with an entry point, plays
without any change to arena: found by the same path as the built-in plugins."""

from __future__ import annotations

import pytest

from arena.engine import play_match
from arena.engine.replay import verify
from arena.plugins import get_plugin_manager, load_registry

TOY_MODULE = '''
"""Toy variant: the bonus of one continent doubles."""
from arena import hookimpl
from arena.plugins import Variant


class DoubleContinent:
    continent = "Australia"

    @hookimpl
    def risk_reinforcement_bonus(self, state, player):
        game_map = state.map
        c = game_map.continents.index(self.continent)
        if all(state.owner[t] == player for t in game_map.continent_members[c]):
            return [(f"{self.continent} doubled", game_map.continent_bonus[c])]
        return []


@hookimpl
def arena_register_variants(register):
    register(Variant("risk", "double-australia", "Australia's bonus doubles",
                     DoubleContinent()))
'''


@pytest.fixture
def installed_toy(install_plugin):
    return install_plugin("toy_variant", TOY_MODULE, {"toy": "toy_variant"})


def test_third_party_variant_is_discovered_through_its_entry_point(installed_toy):
    registry = load_registry()
    variant = registry.variant("risk", "double-australia")
    assert variant.description == "Australia's bonus doubles"
    # The built-ins come through the very same path.
    names = {name for name, _ in get_plugin_manager().list_name_plugin()}
    assert {"risk", "bots", "toy"} <= names


def test_third_party_variant_changes_the_rules_and_plays_to_the_end(installed_toy):
    registry = load_registry()
    game = registry.game("risk")
    variant = registry.resolve_variants("risk", ["double-australia"])

    def start_turn_holding_australia(variants):
        s = game.new_state(3, seed=1, variants=variants)
        australia = s.map.continent_members[s.map.continents.index("Australia")]
        for t in range(s.map.size):
            s.owner[t] = 0 if t in australia else 1 + t % 2
            s.armies[t] = 1
        s.territory_count[:] = [s.owner.count(i) for i in range(3)]
        s.player = 2
        events: list = []
        s._begin_turn(0, events)
        return next(e for e in events if e["e"] == "reinforcements")

    plain = start_turn_holding_australia(())
    doubled = start_turn_holding_australia(variant)
    assert plain["total"] == 3 + 2
    assert doubled["total"] == 3 + 2 + 2
    assert doubled["breakdown"] == [["territories", 3], ["Australia", 2], ["Australia doubled", 2]]

    bots = [
        registry.bot("risk", name).factory(seat, seat)
        for seat, name in enumerate(["aggressive", "defensive", "blitz"])
    ]
    rec = play_match(game, bots, seed=5, variants=variant)
    assert rec.result is not None
    assert rec.variants == ["double-australia"]
    assert verify(rec, registry) == len(rec.steps)


def test_cli_plays_the_third_party_variant(installed_toy, capsys):
    from arena.cli import main

    assert (
        main(["play", "risk", "--players", "blitz,blitz,blitz", "--variant", "double-australia"])
        == 0
    )
    assert "variants: double-australia" in capsys.readouterr().out
    assert main(["variants"]) == 0
    assert "--variant double-australia: Australia's bonus doubles" in capsys.readouterr().out


def test_unknown_variant_is_refused_with_the_known_ones(capsys):
    from arena.cli import main

    assert main(["play", "risk", "--players", "blitz,blitz,blitz", "--variant", "nope"]) == 2
    assert "unknown variant 'nope' for risk" in capsys.readouterr().err
