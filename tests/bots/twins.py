"""A search bot beside its twin: the same bot and seed deciding from a copy of the state
whose hidden facts were shuffled. Shared by the Risk and Stratego search bots' tests."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Sequence
from typing import Any


def play_beside_a_twin(
    state: Any,
    bots: Sequence[Any],
    twin: Any,
    shuffle: Callable[[Any, int, random.Random], Any],
    changed: Callable[[Any, Any], bool],
) -> tuple[int, int]:
    """Plays ``state`` to its end with ``bots``; at each of seat 0's decisions, ``twin``
    decides from ``shuffle(state, 0, rng)``: its serialized observation must equal the
    true one, and its decision seat 0's. (decisions compared, shuffles that ``changed``
    a hidden fact)."""
    rng = random.Random(1)
    compared = differed = 0
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        obs = state.observation(seat)
        action = bots[seat].decide(obs, decision)
        if seat == 0:
            shuffled = shuffle(state, 0, rng)
            differed += changed(shuffled, state)
            seen = shuffled.observation(0)
            assert json.dumps(seen, sort_keys=True) == json.dumps(obs, sort_keys=True)
            assert twin.decide(seen, shuffled.decision()) == action
            compared += 1
        state.apply(seat, action)
    return compared, differed
