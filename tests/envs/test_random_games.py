"""Masked random agents play 100 whole games of each environment, over several rule
sets, and every action the mask allows is one the engine accepts: an engine refusal
(IllegalAction) would fail the test. Every 97th step the whole observation is checked
against the observation space and its mask against the one in ``infos``."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from arena.envs import risk_v0, stratego_v0

GAMES_PER_TEST = 10
#: (num_players, variants, options): 5 rule sets, 20 games each
RISK = [
    (3, [], {"turn-limit": "30"}),
    (4, ["missions"], {"turn-limit": "30"}),
    (2, ["neutral"], {"turn-limit": "30"}),
    (5, ["capital"], {"turn-limit": "30", "defender-dice": "choose"}),
    (6, [], {"turn-limit": "30", "cards": "fixed", "setup": "deal"}),
]
#: (rules, options): 4 rule sets, 25 games each
STRATEGO = [
    ("classic", {}),
    ("classic", {"rescue": "on"}),
    ("isf", {}),
    ("barrage", {}),
]


def play(env: Any, seed: int, kinds: Counter[str]) -> int:
    """One masked random game to its end; returns the steps taken. Counts the decision
    kinds met in ``kinds``."""
    env.reset(seed=seed)
    rng = random.Random(seed)
    table = env.unwrapped.table
    space = env.observation_space(env.possible_agents[0])
    steps = 0
    for agent in env.agent_iter():
        _, _, terminated, truncated, info = env.last(observe=False)
        if terminated or truncated:
            env.step(None)
            continue
        mask = info["action_mask"]
        if steps % 97 == 0:
            obs = env.observe(agent)
            assert space.contains(obs)
            assert np.array_equal(obs["action_mask"], mask)
        kinds[table.decision.kind] += 1
        legal = mask.view(bool).nonzero()[0]
        env.step(int(legal[rng.randrange(len(legal))]))
        steps += 1
    assert table.over and table.result() is not None
    return steps


@pytest.mark.parametrize("chunk", range(100 // GAMES_PER_TEST))
def test_masked_random_agents_play_100_risk_games_without_an_illegal_action(chunk: int):
    players, variants, options = RISK[chunk % len(RISK)]
    env = risk_v0.env(num_players=players, variants=variants, options=options)
    kinds: Counter[str] = Counter()
    for game in range(GAMES_PER_TEST):
        assert play(env, chunk * 1000 + game, kinds) > 100
    # the sample holds the factored decisions
    assert {"reinforce", "attack", "fortify", "move_in"} <= set(kinds)
    assert kinds["trade"] > 0 or options.get("cards") == "none"


@pytest.mark.parametrize("chunk", range(100 // GAMES_PER_TEST))
def test_masked_random_agents_play_100_stratego_games_without_an_illegal_action(chunk: int):
    rules, options = STRATEGO[chunk % len(STRATEGO)]
    env = stratego_v0.env(rules=rules, options=options)
    kinds: Counter[str] = Counter()
    for game in range(GAMES_PER_TEST):
        assert play(env, chunk * 1000 + game, kinds) > 10
    assert kinds["setup"] >= 2 * GAMES_PER_TEST and kinds["move"] > 0
