"""Reinforcement-learning environments for Arena's games (the ``envs`` extra:
``pip install 'arena[envs]'``).

* ``arena.envs.risk_v0``, ``arena.envs.stratego_v0``: PettingZoo AEC environments
  (``env()``, ``raw_env``) and Gymnasium single-agent ones against house bots
  (``single_agent_env()``).
* Gymnasium ids, registered on import: ``arena/Risk-v0`` and ``arena/Stratego-v0``
  (``gymnasium.make("arena/Risk-v0", opponents=["aggressive", "defensive"])``).
* ``arena.sdk.policy`` plays a policy trained here as a bot on a referee.

docs/environments.md describes the spaces, the factored decisions and the rewards.
"""

from __future__ import annotations

import gymnasium

gymnasium.register("arena/Risk-v0", entry_point="arena.envs.risk_v0:single_agent_env")
gymnasium.register("arena/Stratego-v0", entry_point="arena.envs.stratego_v0:single_agent_env")
