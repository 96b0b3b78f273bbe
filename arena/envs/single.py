"""A Gymnasium single-agent environment: the learner in one seat, bots in the others.

The other seats are played by house bots chosen by name from the registry (``arena
variants`` lists them), or by any object with ``decide(observation, decision)`` (an
``arena.engine.Player``: a frozen copy of the learner, say). They play exactly as they
do in a match: each gets its own observation (built only if it reads it) and the
decision, and its action is applied whole.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import gymnasium
import numpy as np

from arena.engine.match import LazyObservation, Player
from arena.engine.seeds import house_bot_seed
from arena.envs.aec import as_action, observation_space
from arena.envs.core import Reward, Table, registry, reward_scheme


class SingleAgentEnv(gymnasium.Env):
    """One seat of an Arena game against ``opponents`` (made by
    ``risk_v0.single_agent_env`` and ``stratego_v0.single_agent_env``).

    ``seat``: the learner's seat, or None for a seat drawn at each reset (from the
    reset's seed). The reward is 0 until the end, then the scheme's reward for the
    learner's place. ``info`` holds the ``action_mask`` (and ``action_masks()`` returns
    it, for sb3-contrib's MaskablePPO); at the end it holds the ``place`` and the
    ``result``.

    An action the mask does not allow raises a ValueError (and changes nothing); with
    ``illegal_reward`` set it ends the episode instead, with that reward and the reason
    in ``info["illegal"]``, for learners that ignore masks (and Gymnasium's check_env,
    which steps with any action of the space).
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 1}

    def __init__(
        self,
        table: Table,
        opponents: Sequence[str | Player],
        seat: int | None,
        reward: str | Reward,
        render_mode: str | None,
        illegal_reward: float | None = None,
    ) -> None:
        n = table.num_players
        if len(opponents) != n - 1:
            raise ValueError(f"{n} seats take {n - 1} opponents, not {len(opponents)}")
        if seat is not None and not 0 <= seat < n:
            raise ValueError(f"seat {seat}: expected 0 to {n - 1}, or None for any")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode {render_mode!r}: expected 'ansi' or None")
        game = table.game.name
        for opponent in opponents:
            if isinstance(opponent, str):
                registry().bot(game, opponent)  # an unknown name fails here, saying which
        self.table = table
        self.opponents = list(opponents)
        self.fixed_seat = seat
        self.seat = 0 if seat is None else seat
        self.reward_of = reward_scheme(reward)
        self.render_mode = render_mode
        self.observation_space = observation_space(table.codec)
        self.action_space = gymnasium.spaces.Discrete(table.codec.num_actions)
        self.illegal_reward = illegal_reward
        self.bots: dict[int, Player] = {}
        self.game_seed: int | None = None
        self.ended = True  # until reset

    @property
    def game_state(self) -> Any:
        """The engine's state of the game: read it, do not change it."""
        return self.table.state

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        super().reset(seed=seed)
        self.game_seed = game_seed = self.table.reset(seed)
        n = self.table.num_players
        if self.fixed_seat is None:
            self.seat = random.Random(game_seed).randrange(n)
        others = [s for s in range(n) if s != self.seat]
        self.bots = {
            s: (
                registry().bot(self.table.game.name, who).factory(s, house_bot_seed(game_seed, s))
                if isinstance(who, str)
                else who
            )
            for s, who in zip(others, self.opponents, strict=True)
        }
        self._play_bots()
        self.ended = False
        return self.table.observe(self.seat), self._info()

    def _play_bots(self) -> None:
        table = self.table
        while not table.over and table.seat != self.seat:
            seat = table.seat
            observation = LazyObservation.of(table.state, seat)  # type: ignore[arg-type]
            action = self.bots[seat].decide(observation, table.decision)  # type: ignore[arg-type]
            observation.expire()
            table.apply(action)

    def _info(self) -> dict[str, Any]:
        table = self.table
        if not table.over:
            return {"action_mask": table.mask.copy()}
        result = table.result()
        assert result is not None
        return {"place": result.places[self.seat], "result": result.reason.value}

    def step(self, action: Any) -> tuple[dict[str, np.ndarray], float, bool, bool, dict[str, Any]]:
        table = self.table
        if self.ended:
            raise ValueError("the episode is over: reset() starts a new one")
        try:
            applied = table.act(as_action(action, "the learner"))
        except ValueError as exc:
            if self.illegal_reward is None:
                raise
            self.ended = True
            illegal = {"illegal": str(exc)}
            return table.observe(self.seat), float(self.illegal_reward), True, False, illegal
        if applied:
            self._play_bots()
        reward = 0.0
        self.ended = table.over
        if table.over:
            result = table.result()
            assert result is not None
            reward = float(self.reward_of(result.places, self.seat))
        return table.observe(self.seat), reward, table.over, False, self._info()

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as booleans (what sb3-contrib's MaskablePPO asks for)."""
        return self.table.mask.astype(bool)

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: give render_mode='ansi'")
            return None
        return self.table.render()
