"""A policy trained in an Arena environment, played as a bot on a referee, unchanged.

A policy is any ``policy(observation, mask) -> action``: ``observation`` is the dict of
arrays the environments give (``arena.envs``: docs/environments.md), ``mask`` its
``action_mask``, and the action an int the mask allows. :class:`PolicyBot` plays it:
each decision the referee asks is made part by part, as in the environment, and sent
as the protocol's action. :class:`Translator` is the bridge itself, both ways: from
environment actions to the protocol's action, and from a protocol action (a house
bot's, a replay's) back to environment actions.

A bot file (``arena bot run ./trained.py``, ``python trained.py --token T``)::

    import numpy as np

    from arena.sdk import main
    from arena.sdk.policy import PolicyBot


    class Trained(PolicyBot):
        def policy(self, observation, mask):
            return int(np.flatnonzero(mask)[0])  # yours: a trained model


    if __name__ == "__main__":
        main(Trained)

It needs numpy (Arena's own) and the ``envs`` extra (``pip install 'arena[envs]'``).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from arena.engine.core import Action, Decision
from arena.envs.aec import as_action
from arena.envs.core import Chooser, Codec
from arena.sdk import Bot, MatchContext

#: observation arrays and mask -> an action the mask allows
Policy = Callable[[dict[str, np.ndarray], np.ndarray], Any]


def codec_for(game: str, num_players: int, observation: Mapping[str, Any], map_name: str) -> Codec:
    """The environments' codec for a match of ``game`` (Risk's depends on the owners of
    territories, read from the first observation, and on the map)."""
    if game == "risk":
        from arena.envs.risk import RiskCodec

        return RiskCodec(num_players, observation["num_owners"], map_name)
    if game == "stratego":
        from arena.envs.stratego import StrategoCodec

        return StrategoCodec()
    raise ValueError(f"no environment encoding for the game {game!r}")


class Translator:
    """Environment actions and protocol actions for one seat of one match.

    ``start(observation, decision)`` opens a decision; ``arrays()`` is the observation
    the policy sees for the part asked now (with its ``action_mask``); ``choose(action)``
    takes the part's action and returns the protocol's action once the decision is
    complete (None while parts remain). ``env_actions(decision, action)`` is the way
    back: the environment actions that make a protocol action.
    """

    def __init__(self, context: MatchContext, observation: Mapping[str, Any]) -> None:
        self.seat = context.seat
        map_name = context.options.get("map", "classic")
        self.codec = codec_for(context.game, len(context.players), observation, map_name)
        self.observation: Mapping[str, Any] = observation
        self.chooser: Chooser | None = None

    def start(self, observation: Mapping[str, Any], decision: Decision) -> None:
        self.observation = observation
        self.chooser = self.codec.chooser(self.seat, decision)

    def arrays(self) -> dict[str, np.ndarray]:
        return self.codec.observe(self.seat, self.observation, self.chooser)

    def choose(self, action: Any) -> Action | None:
        chooser = self.chooser
        if chooser is None:
            raise ValueError("no decision is open: start() one first")
        chosen = as_action(action, "the policy")
        if not 0 <= chosen < len(chooser.mask) or not chooser.mask[chosen]:
            legal = np.flatnonzero(chooser.mask)
            raise ValueError(
                f"the policy chose {chosen}, which the action mask does not allow "
                f"({len(legal)} legal: {', '.join(map(str, legal[:8]))}...)"
            )
        made = chooser.choose(chosen)
        if made is not None:
            self.chooser = None
        return made

    def env_actions(self, decision: Decision, action: Action) -> list[int]:
        return self.codec.actions(self.seat, decision, action)


class PolicyBot(Bot):
    """A bot that plays ``self.policy(observation, mask)``: override ``policy``, or make
    a bot of a function with :func:`policy_bot`."""

    def __init__(self, match: MatchContext) -> None:
        super().__init__(match)
        self.translator: Translator | None = None

    def policy(self, observation: dict[str, np.ndarray], mask: np.ndarray) -> Any:
        raise NotImplementedError(
            f"{type(self).__name__}.policy(observation, mask) must return an action the mask allows"
        )

    def decide(self, observation: dict[str, Any], decision: Decision) -> dict[str, Any]:
        if self.translator is None:
            self.translator = Translator(self.match, observation)
        translator = self.translator
        translator.start(observation, decision)
        while True:
            arrays = translator.arrays()
            action = translator.choose(self.policy(arrays, arrays["action_mask"]))
            if action is not None:
                return action


def policy_bot(policy: Policy) -> Callable[[MatchContext], PolicyBot]:
    """A bot factory for ``run_bot`` that plays ``policy`` (one bot per match)."""

    def make(match: MatchContext) -> PolicyBot:
        bot = PolicyBot(match)
        bot.policy = policy  # type: ignore[method-assign]
        return bot

    return make


def masked_random(seed: int | None = None) -> Policy:
    """A policy that picks uniformly among the actions the mask allows."""
    rng = random.Random(seed)

    def policy(observation: dict[str, np.ndarray], mask: np.ndarray) -> int:
        legal = mask.view(bool).nonzero()[0]
        return int(legal[rng.randrange(len(legal))])

    return policy
