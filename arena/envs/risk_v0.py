"""Risk as a PettingZoo AEC environment (``env``, ``raw_env``) and a Gymnasium
single-agent environment against house bots (``single_agent_env``).

Rules are the engine's, chosen as in ``arena play``: ``num_players`` (3 to 6; 2 with
the ``neutral`` variant), ``variants=["missions"]``, ``options={"cards": "fixed",
"turn-limit": "100"}``. Agents are ``player_0`` .. ``player_{n-1}``, one per seat.

Actions: one ``Discrete`` range; on the classic map (42 territories, 166 directed
borders, 44 cards) it has 265 actions:

====================  =========  ==============================================
actions               classic    meaning
====================  =========  ==============================================
territory ``t``       0-41       claim, place on, pick as headquarters; the
                                 territory of the next reinforcement part
border ``b``          42-207     attack or fortify across ``edges[b]`` (from, to)
card ``c``            208-251    the next card of a trade (42, 43: the wilds)
dice ``k``            252-254    roll 1, 2 or 3 dice (attack, defend)
amount                255-262    add 1, 2, 3, 5, 10, 20, 50 armies, or all there is room for
blitz                 263        attack on until the territory falls or 1 army is left
pass                  264        no trade, end the attack phase, end the turn (no
                                 fortify), or stop adding armies
====================  =========  ==============================================

Decisions that are distributions are factored into parts, each one action:
``reinforce`` is territory, amount, territory, amount, ... until every army is placed;
``move_in`` is amounts (from the minimum) until pass or the maximum; ``fortify`` is a
border then amounts until pass (at least one army) or the maximum; ``attack`` is a
border (or pass) then dice or blitz; ``trade`` is three cards (or pass); the
``neutral`` variant's placement is a territory per army, then the neutral territory.
The observation's ``part`` says which block is open, and ``pending``, ``focus``,
``chosen_cards`` and ``amount`` what the parts so far chose. docs/environments.md has
every array of the observation.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine.core import State
from arena.engine.match import Player
from arena.envs.aec import ArenaAECEnv, OrderEnforcing
from arena.envs.core import Reward, Table, make_table
from arena.envs.risk import RiskCodec
from arena.envs.single import SingleAgentEnv


def table(
    num_players: int = 3,
    variants: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
) -> Table:
    """A Risk table for these rules (a ValueError names what is wrong with them)."""

    def codec_of(probe: State, given: dict[str, str]) -> RiskCodec:
        owners = probe.observation(0)["num_owners"]
        return RiskCodec(num_players, owners, given.get("map", "classic"))

    return make_table("risk", num_players, variants, options, codec_of)


class raw_env(ArenaAECEnv):  # PettingZoo's name for it
    metadata = {**ArenaAECEnv.metadata, "name": "risk_v0"}

    def __init__(
        self,
        num_players: int = 3,
        variants: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        reward: str | Reward = "win_loss",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(table(num_players, variants, options), reward, render_mode)


def env(**kwargs: Any) -> OrderEnforcing:
    """The AEC environment, checked for the order of calls (reset first)."""
    return OrderEnforcing(raw_env(**kwargs))


def single_agent_env(
    opponents: Sequence[str | Player] = ("random", "random"),
    seat: int | None = 0,
    variants: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    reward: str | Reward = "win_loss",
    render_mode: str | None = None,
    illegal_reward: float | None = None,
) -> SingleAgentEnv:
    """The learner in ``seat`` against ``opponents`` (house bots by name: random,
    aggressive, defensive, blitz), one per other seat. ``illegal_reward``: see
    :class:`~arena.envs.single.SingleAgentEnv`."""
    rules = table(len(opponents) + 1, variants, options)
    return SingleAgentEnv(rules, opponents, seat, reward, render_mode, illegal_reward)
