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
    from_json_text,
    observation_from_proto,
    observation_to_proto,
    to_json_text,
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


@pytest.mark.parametrize(
    "value",
    [
        {"attacks": [{"from": 1, "to": 2, "max_dice": 3}], "can_end": True, "x": None},
        {1: "integer keys", 2: [True, False]},  # as json.dumps: keys become strings
        {"text": "héllo ☃ \u2028"},  # non-ASCII: escaped, as json.dumps does
        {"big": 2**70, "small": -(2**63) - 1},  # beyond 64 bits
        [1.5, -0.0, 1e16, 0.1, 'a "quoted" \\ string\n'],
        (1, (2, 3)),
    ],
)
def test_json_text_is_the_standard_librarys(value):
    text = to_json_text(value)
    assert text == json.dumps(value, separators=(",", ":"))
    assert from_json_text(text) == json.loads(text)


def test_json_text_of_every_message_of_a_game_is_the_standard_librarys():
    for game, variants, players, options in CASES:
        state = REGISTRY.game(game).new_state(
            players, 3, options, REGISTRY.resolve_variants(game, variants)
        )
        bots = [REGISTRY.bot(game, "random").factory(s, s) for s in range(players)]
        values: list = [state.initial_events]
        for _ in range(150):
            if state.terminal:
                break
            decision = state.decision()
            values += [decision.options, state.observation(decision.player)]
            action = bots[decision.player].decide(state.observation(decision.player), decision)
            values += [action, state.apply(decision.player, action)]
        for value in values:
            assert to_json_text(value) == json.dumps(value, separators=(",", ":"))


def test_malformed_json_text_is_a_codec_error():
    with pytest.raises(CodecError, match="not valid JSON"):
        from_json_text("{not json")
    assert from_json_text("NaN") != from_json_text("NaN")  # the standard library's reading
