"""The built-in bots draw every choice from their seed, and one made without a seed
seeds itself from the operating system (never 0, which anyone could replay)."""

from __future__ import annotations

import pytest

from arena.bots.random_bot import RandomStrategoBot
from arena.bots.stratego_heuristic import HeuristicStrategoBot
from arena.plugins import load_registry

REGISTRY = load_registry()


def _setup(bot: object) -> dict[str, str]:
    state = REGISTRY.game("stratego").new_state(2, 0, {}, [])
    decision = state.decision()
    return bot.decide(state.observation(decision.player), decision)["placement"]


@pytest.mark.parametrize("kind", [RandomStrategoBot, HeuristicStrategoBot])
def test_without_a_seed_each_bot_chooses_its_own_way(kind: type) -> None:
    unseeded = [_setup(kind(0)) for _ in range(4)]
    assert all(a != b for i, a in enumerate(unseeded) for b in unseeded[i + 1 :])
    assert _setup(kind(0)) != _setup(kind(0, 0))  # not the old default
    assert _setup(kind(0, 9)) == _setup(kind(0, 9))  # a seed: the same choices
