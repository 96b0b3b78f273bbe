"""The bridge between environment actions and protocol actions (arena.sdk.policy): every
action of the house bots goes to environment actions and back to an action that plays
the same, and a policy bot plays whole games as the environments would have it."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import numpy as np
import pytest

from arena.engine.match import LazyObservation, play_match
from arena.envs.core import registry
from arena.sdk import MatchContext
from arena.sdk.policy import PolicyBot, Translator, masked_random, policy_bot

#: (game, bots by seat, variants, options)
GAMES = [
    ("risk", ["random", "aggressive", "defensive", "blitz"], [], {"turn-limit": "25"}),
    ("risk", ["random", "defensive", "random"], ["missions"], {"defender-dice": "choose"}),
    ("risk", ["random", "defensive"], ["neutral"], {"turn-limit": "25"}),
    ("risk", ["aggressive", "random", "defensive"], ["capital"], {"turn-limit": "25"}),
    ("stratego", ["random", "heuristic"], [], {"rescue": "on", "turn-limit": "600"}),
    ("stratego", ["heuristic", "random"], ["barrage"], {}),
]


def round_trips(case: int, seed: int, kinds: Counter[str]) -> None:
    """One game of house bots in which every action goes to environment actions, which
    a fresh decision must allow part by part, and back: the action they make must play
    exactly as the bot's (the same events, the same observation after)."""
    game_name, names, variants, options = GAMES[case]
    reg = registry()
    game = reg.game(game_name)
    state = game.new_state(len(names), seed, options, reg.resolve_variants(game_name, variants))
    bots = [reg.bot(game_name, n).factory(s, seed * 10 + s) for s, n in enumerate(names)]
    contexts = [
        MatchContext("m", game_name, s, names, variants, options) for s in range(len(names))
    ]
    translators: dict[int, Translator] = {}
    while not state.terminal:
        decision = state.decision()
        seat = decision.player
        observation = state.observation(seat)
        action = bots[seat].decide(LazyObservation.of(state, seat), decision)
        translator = translators.setdefault(seat, Translator(contexts[seat], observation))
        try:
            env_actions = translator.env_actions(decision, action)
        except ValueError as exc:  # only a roll "until N" with N > 1 has no env action
            assert action["type"] == "attack" and action["until"] > 1, exc
            kinds["until N"] += 1
            state.apply(seat, action)
            continue
        translator.start(observation, decision)
        made = [translator.choose(a) for a in env_actions]
        assert all(m is None for m in made[:-1]) and made[-1] is not None, (action, made)
        theirs, ours = state.clone(), state.clone()
        assert theirs.apply(seat, action) == ours.apply(seat, made[-1]), (action, made[-1])
        assert theirs.observation(seat) == ours.observation(seat)
        kinds[decision.kind] += 1
        state.apply(seat, made[-1])


@pytest.mark.parametrize("case", range(len(GAMES)))
def test_house_bot_actions_go_to_env_actions_and_back_to_the_same_play(case: int) -> None:
    kinds: Counter[str] = Counter()
    for seed in range(3):
        round_trips(case, seed, kinds)
    assert sum(kinds.values()) - kinds["until N"] > 50
    if GAMES[case][0] == "risk":
        assert {"reinforce", "attack", "fortify", "move_in"} <= set(kinds)
    else:
        assert kinds["setup"] == 6 and kinds["move"] > 10


def test_a_policy_choosing_outside_the_mask_is_told_in_one_line() -> None:
    state = registry().game("stratego").new_state(2, 1)
    translator = Translator(MatchContext("m", "stratego", 0, ["a", "b"]), state.observation(0))
    translator.start(state.observation(0), state.decision())
    with pytest.raises(ValueError, match="the policy chose 0, which the action mask does not"):
        translator.choose(0)
    with pytest.raises(ValueError, match="must be an integer"):
        translator.choose("3600")


@pytest.mark.parametrize("game_name", ["risk", "stratego"])
def test_a_masked_random_policy_bot_plays_whole_games_in_process(game_name: str) -> None:
    reg = registry()
    names = ["policy", "random", "random"] if game_name == "risk" else ["policy", "random"]
    for seed in range(3):
        players = [
            policy_bot(masked_random(seed))(MatchContext("m", game_name, 0, names)),
            *(reg.bot(game_name, "random").factory(s, seed) for s in range(1, len(names))),
        ]
        options = {"turn-limit": "20"} if game_name == "risk" else {}
        rec = play_match(reg.game(game_name), players, seed, options, names=names)
        assert rec.result is not None
        assert sum(1 for seat, _, _ in rec.steps if seat == 0) > 10


def test_a_policy_bot_subclass_sees_the_environments_arrays() -> None:
    from arena.envs import risk_v0

    space = risk_v0.raw_env().observation_space("player_0")
    seen: list[dict[str, np.ndarray]] = []

    class Watching(PolicyBot):
        def policy(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> Any:
            seen.append(observation)
            return random.Random(len(seen)).choice(np.flatnonzero(mask).tolist())

    reg = registry()
    names = ["watching", "random", "random"]
    players = [
        Watching(MatchContext("m", "risk", 0, names)),
        *(reg.bot("risk", "random").factory(s, s) for s in (1, 2)),
    ]
    play_match(reg.game("risk"), players, 4, {"turn-limit": "10"}, names=names)
    assert len(seen) > 100
    assert all(space.contains(obs) for obs in seen[::10])
