"""A bot's observation (``LazyObservation``) builds only the parts the bot reads, and
whatever it shows is exactly ``State.observation``: the same entries, in the same
order, the same bytes once serialized."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena import hookimpl
from arena.engine import State
from arena.engine.match import LazyObservation
from arena.plugins import Variant, load_registry

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")


def positions(
    variants: list[str], options: dict[str, str], bots: tuple[str, ...], seed: int = 2
) -> list[State]:
    """A copy of the position at every decision of one game (every phase comes up)."""
    state = RISK.new_state(len(bots), seed, options, REGISTRY.resolve_variants("risk", variants))
    players = [REGISTRY.bot("risk", b).factory(s, seed + s) for s, b in enumerate(bots)]
    out = []
    while not state.terminal and len(out) < 1500:
        out.append(state.clone())
        decision = state.decision()
        state.apply(
            decision.player,
            players[decision.player].decide(state.observation(decision.player), decision),
        )
    out.append(state)
    return out


CLASSIC = positions([], {"defender-dice": "choose"}, ("random", "aggressive", "blitz"))


def test_every_part_read_alone_is_the_observations_entry() -> None:
    parts = CLASSIC[0].observation_parts()
    assert {"seat", "owner", "armies", "map", "reinforcements_left"} <= set(parts)
    phases = set()
    for state in CLASSIC:
        for seat in range(state.num_players):
            full = state.observation(seat)
            phases.add(full["phase"])
            for key in parts:
                obs = LazyObservation.of(state, seat)
                assert obs[key] == full[key], (full["phase"], seat, key)
                assert obs.get(key) == full[key]
    assert {"claim", "setup_place", "trade", "reinforce", "attack", "move_in"} <= phases
    assert {"fortify", "defend", "game_over"} <= phases


def test_the_whole_comes_in_the_observations_order_keeping_what_was_read() -> None:
    for state in CLASSIC[::25]:
        seat = state.current_player
        full = state.observation(seat)
        obs = LazyObservation.of(state, seat)
        owner = obs["owner"]
        owner.append("the bot's own scribble")  # its copy: the state is untouched
        assert "move_in" not in obs or state.decision().kind == "move_in"  # builds the whole
        assert list(obs) == list(full)
        assert obs["owner"] is owner
        owner.pop()
        assert json.dumps(obs) == json.dumps(full)  # the same bytes
        assert dict(obs) == full and obs == full and len(obs) == len(full)
        assert state.observation(seat) == full


def test_what_was_not_read_during_decide_cannot_be_read_after() -> None:
    state = CLASSIC[200]
    seat = state.current_player
    obs = LazyObservation.of(state, seat)
    owner = obs["owner"]
    obs.expire()
    assert obs["owner"] is owner  # read during decide: still there
    with pytest.raises(RuntimeError, match=r"dict\(obs\)"):
        obs["hand"]  # never read
    with pytest.raises(RuntimeError):
        list(obs)
    kept = LazyObservation.of(state, seat)
    copied = dict(kept)
    kept.expire()
    assert kept == copied == state.observation(seat)  # read whole: all of it stays


def test_a_missing_key_is_missing() -> None:
    state = CLASSIC[100]
    obs = LazyObservation.of(state, 0)
    assert obs.get("mission", "none") == "none"
    with pytest.raises(KeyError):
        obs["mission"]
    assert "mission" not in obs and "owner" in obs


@pytest.mark.parametrize("variant", ["missions", "capital"])
def test_a_variant_that_declares_what_it_adds_keeps_the_parts(variant: str) -> None:
    """A built-in variant's observation hook declares the entries it adds
    (``risk_observation_keys``): the board part is still built alone, equal to the whole
    observation's entries in every phase; the hook's entries build the whole; and the
    hook adds no entry it did not declare."""
    states = positions([variant], {}, ("aggressive", "defensive", "blitz", "random"))
    parts = states[0].observation_parts()
    assert {"seat", "owner", "armies", "map", "reinforcements_left"} <= set(parts)
    declared = set(REGISTRY.variant("risk", variant).plugin.risk_observation_keys)
    classic_keys = {key for state in CLASSIC for key in state.observation(0)}
    seen: set[str] = set()
    for state in states[::7]:
        seat = state.current_player
        full = state.observation(seat)
        assert set(full) - classic_keys <= declared
        for key in parts:
            obs = LazyObservation.of(state, seat)
            assert obs[key] == full[key], (full["phase"], seat, key)
        obs = LazyObservation.of(state, seat)
        obs["owner"]
        for key in declared & set(full):
            assert obs[key] == full[key]  # builds the whole
        copied = dict(obs)
        assert list(copied) == list(full) and json.dumps(obs) == json.dumps(full)
        seen.update(copied)
    assert ("mission" in seen) == (variant == "missions")
    assert ("headquarters" in seen) == (variant == "capital")


class _Fog:
    """A third-party variant whose observation hook hides the armies of other seats: it
    declares nothing, so it may change any entry."""

    @hookimpl
    def risk_observation(self, state: Any, player: int, observation: dict[str, Any]) -> None:
        observation["armies"] = [
            n if o == player else 0 for n, o in zip(observation["armies"], state.owner, strict=True)
        ]


def test_a_variant_that_does_not_declare_what_it_adds_gets_the_whole() -> None:
    fog = Variant("risk", "fog", "armies hidden", _Fog())
    state = RISK.new_state(3, 5, {}, [fog])
    assert state.observation_parts() == {}
    while state.round < 2:  # past the setup: every seat has armies on the board
        state.apply(state.current_player, state.default_action())
    seat = state.current_player
    obs = LazyObservation.of(state, seat)
    hidden = [n if o == seat else 0 for n, o in zip(state.armies, state.owner, strict=True)]
    assert obs["armies"] == hidden != state.armies  # the hook's entry, never the state's


def test_stratego_builds_the_whole_at_the_first_read() -> None:
    game = REGISTRY.game("stratego")
    state = game.new_state(2, 4)
    bots = [REGISTRY.bot("stratego", "random").factory(s, s) for s in (0, 1)]
    for _ in range(60):
        decision = state.decision()
        obs = LazyObservation.of(state, decision.player)
        assert obs["board"] == state.observation(decision.player)["board"]
        obs.expire()
        assert json.dumps(obs) == json.dumps(state.observation(decision.player))
        state.apply(decision.player, bots[decision.player].decide(obs, decision))


def test_an_observation_from_a_loader_loads_once() -> None:
    """The SDK's kind: the whole observation from a function, at the first read."""
    calls: list[int] = []

    def load() -> dict[str, Any]:
        calls.append(1)
        return {"seat": 1, "board": [None] * 3}

    obs = LazyObservation(load)
    assert calls == [] and repr(obs) == "LazyObservation(...)"
    assert obs["seat"] == 1 and obs["board"] == [None] * 3 and len(obs) == 2
    assert calls == [1]
    obs.expire()
    assert obs == {"seat": 1, "board": [None] * 3}
