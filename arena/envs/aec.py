"""The PettingZoo AEC environment every Arena game shares, and its Gymnasium spaces.

One agent per seat (``player_0`` is seat 0). The agent to act is the seat the engine
asks; a decision factored into parts (docs/environments.md) keeps the same agent
selected until its last part is chosen, and only then is the engine's action applied.
The action mask is in the observation (``action_mask``) and in ``infos[agent]`` of the
agent to act, so an agent that needs only the mask can call ``last(observe=False)``.
"""

from __future__ import annotations

from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from arena.envs.core import FLAG, Codec, Reward, Table, reward_scheme


def observation_space(codec: Codec) -> gymnasium.spaces.Dict:
    """The codec's arrays as a ``Dict`` of ``Box`` spaces, with ``action_mask``."""
    spaces: dict[str, gymnasium.spaces.Space[Any]] = {
        name: gymnasium.spaces.Box(spec.low, spec.high, spec.shape, spec.dtype)
        for name, spec in codec.specs.items()
    }
    spaces["action_mask"] = gymnasium.spaces.Box(0, 1, (codec.num_actions,), FLAG)
    return gymnasium.spaces.Dict(spaces)


def as_action(action: Any, who: str) -> int:
    """``action`` as an int; ValueError (one line) for anything but an integer."""
    if isinstance(action, int | np.integer) and not isinstance(action, bool):
        return int(action)
    if isinstance(action, np.ndarray) and action.size == 1 and action.dtype.kind in "iu":
        return int(action.reshape(()))  # what a policy's predict() returns
    raise ValueError(f"{who}'s action must be an integer (see the action_mask), got {action!r}")


class ArenaAECEnv(AECEnv):
    """An Arena game as a PettingZoo AEC environment (made by ``risk_v0.raw_env`` and
    ``stratego_v0.raw_env``)."""

    metadata: dict[str, Any] = {
        "render_modes": ["ansi"],
        "render_fps": 1,
        "is_parallelizable": False,
    }

    def __init__(self, table: Table, reward: str | Reward, render_mode: str | None) -> None:
        super().__init__()
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode {render_mode!r}: expected one of "
                f"{', '.join(self.metadata['render_modes'])} (or None)"
            )
        self.table = table
        self.codec = table.codec
        self.reward_of = reward_scheme(reward)
        self.render_mode = render_mode
        self.possible_agents = [f"player_{seat}" for seat in range(table.num_players)]
        self._observation_space = observation_space(self.codec)
        self._action_space = gymnasium.spaces.Discrete(self.codec.num_actions)
        #: the engine seed of the game being played (reset draws it from its seed)
        self.game_seed: int | None = None

    def observation_space(self, agent: str) -> gymnasium.spaces.Dict:
        return self._observation_space

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self._action_space

    @property
    def game_state(self) -> Any:
        """The engine's state of the game (``arena.engine.State``): read it, do not
        change it."""
        return self.table.state

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        self.game_seed = self.table.reset(seed)
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        self._select()

    def _select(self) -> None:
        """The agent to act next, with its mask in its infos; or, once the game is over,
        every agent terminated with its reward."""
        table = self.table
        if not table.over:
            agent = self.possible_agents[table.seat]
            self.agent_selection = agent
            self.infos[agent] = {"action_mask": table.mask}
            return
        result = table.result()
        assert result is not None
        for agent in self.agents:
            seat = self.possible_agents.index(agent)
            self.rewards[agent] = float(self.reward_of(result.places, seat))
            self.terminations[agent] = True
            self.infos[agent] = {"place": result.places[seat], "result": result.reason.value}
        self._accumulate_rewards()

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        table = self.table
        if table.act(as_action(action, agent)):
            self.infos[agent] = {}
            self._select()
        else:
            self.infos[agent] = {"action_mask": table.mask}

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.table.observe(self.possible_agents.index(agent))

    def render(self) -> str | None:
        if self.render_mode is None:
            gymnasium.logger.warn("render() without a render_mode: give render_mode='ansi'")
            return None
        return self.table.render()

    def close(self) -> None:
        pass


def _forwarded(name: str) -> property:
    def get(self: OrderEnforcingWrapper) -> Any:
        if not self._has_reset:
            raise AttributeError(f"{name} cannot be accessed before reset")
        return getattr(self.env, name)

    return property(get)


class OrderEnforcing(OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper`` (reset first, then the agent loop), with
    the attributes read at every step forwarded directly: its generic ``__getattr__``
    (an AttributeError caught per read) cost more per step than the environment."""

    def step(self, action: Any) -> None:
        if not self._has_reset or not self.env.agents:
            super().step(action)  # PettingZoo's error or warning
            return
        self._has_updated = True
        self.env.step(action)

    def last(self, observe: bool = True) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        if not self._has_reset:
            raise AttributeError("last() cannot be called before reset")
        return self.env.last(observe)

    agent_selection = _forwarded("agent_selection")
    agents = _forwarded("agents")
    rewards = _forwarded("rewards")
    _cumulative_rewards = _forwarded("_cumulative_rewards")
    terminations = _forwarded("terminations")
    truncations = _forwarded("truncations")
    infos = _forwarded("infos")
