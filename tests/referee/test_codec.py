"""Observations and actions survive the wire exactly: a remote Python bot sees the very
dict an in-process bot sees, in every game, variant and rule set."""

from __future__ import annotations

import json

import pytest

from arena.plugins import load_registry
from arena.referee.codec import (
    CodecError,
    action_from_proto,
    action_to_proto,
    observation_from_proto,
    observation_to_proto,
)
from arena.v1 import arena_pb2 as pb

REGISTRY = load_registry()
CASES = [
    ("risk", [], 3, {}),
    ("risk", [], 4, {"setup": "deal", "defender-dice": "choose"}),
    ("risk", ["missions"], 4, {}),
    ("risk", ["capital"], 4, {"defender-dice": "choose"}),
    ("risk", ["neutral"], 2, {"defender-dice": "choose"}),
    ("stratego", [], 2, {"rescue": "on"}),
    ("stratego", ["isf"], 2, {}),
    ("stratego", ["barrage"], 2, {}),
]


def _index_keys(game: str, action: dict) -> dict:
    """Actions on the wire name territories/squares by index (the SDK converts names)."""
    if game == "risk" and isinstance(action.get("armies"), dict):
        return {**action, "armies": {int(k): v for k, v in action["armies"].items()}}
    return action


@pytest.mark.parametrize(("game", "variants", "players", "options"), CASES)
def test_every_observation_and_action_round_trips(game, variants, players, options):
    state = REGISTRY.game(game).new_state(
        players, 5, options, REGISTRY.resolve_variants(game, variants)
    )
    bots = [REGISTRY.bot(game, "random").factory(s, s) for s in range(players)]
    steps = 0
    while not state.terminal and steps < 400:
        decision = state.decision()
        for seat in range(players):
            obs = state.observation(seat)
            wire = observation_to_proto(game, obs).SerializeToString()
            assert observation_from_proto(pb.Observation.FromString(wire)) == obs
        action = _index_keys(
            game, bots[decision.player].decide(state.observation(decision.player), decision)
        )
        wire = action_to_proto(game, action).SerializeToString()
        back = action_from_proto(game, pb.Action.FromString(wire))
        assert (
            json.dumps(back, sort_keys=True)
            == json.dumps({k: v for k, v in action.items()}, sort_keys=True, default=str)
            or action["type"] == "setup"
        )
        state.apply(decision.player, back)
        steps += 1
    assert steps > 10


def test_third_party_keys_travel_in_extra():
    obs = REGISTRY.game("risk").new_state(3, 1).observation(0)
    obs["my_variant"] = {"secret": [1, 2]}
    assert observation_from_proto(observation_to_proto("risk", obs)) == obs


def test_an_action_for_the_wrong_game_is_refused():
    with pytest.raises(CodecError, match="a stratego action in a risk match"):
        action_from_proto("risk", pb.Action(stratego=pb.StrategoAction(type="move")))
    with pytest.raises(CodecError, match="an empty action in a risk match"):
        action_from_proto("risk", pb.Action())


def test_a_third_party_game_uses_struct():
    action = {"type": "bid", "amount": 3, "cards": [1, 2]}
    assert action_from_proto("poker", action_to_proto("poker", action)) == action
