"""Stratego as a PettingZoo AEC environment (``env``, ``raw_env``) and a Gymnasium
single-agent environment against a house bot (``single_agent_env``).

Rules: ``rules="classic"`` (the manual's), ``"isf"`` or ``"barrage"`` (or the same as
``variants=[...]``), and ``options={"rescue": "on", "turn-limit": "1000"}``. Agents
are ``player_0`` (sets up in rows 1-4, moves first) and ``player_1``.

Everything is seen from the agent's own side: seat 1's board is turned half a turn
(square ``s`` is ``99 - s``), so that row 0 is always the agent's back row.

Actions: one ``Discrete(3713)``:

================  ==========  ==================================================
actions           numbers     meaning
================  ==========  ==================================================
move              0-3599      ``(square * 4 + direction) * 9 + distance - 1``:
                              from ``square`` (0-99, your view), ``direction``
                              forward, back, right, left (0-3), 1 to 9 squares
rank ``r``        3600-3611   setup: the piece on the square being set up;
                              rescue: the piece to bring back (flag 0, spy 1,
                              scout 2, ..., marshal 10, bomb 11)
square ``s``      3612-3711   rescue: where the piece comes back (your view)
pass              3712        setup: leave the square empty (barrage); no rescue
================  ==========  ==================================================

The setup is factored: one part per setup square, your back row first and each row
from your left, each the rank of the piece that goes there; once every piece is
placed the rest stay empty. A rescue is the piece, then the square.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from arena.engine.match import Player
from arena.envs.aec import ArenaAECEnv, OrderEnforcing
from arena.envs.core import Reward, Table, make_table
from arena.envs.single import SingleAgentEnv
from arena.envs.stratego import StrategoCodec

RULES = ("classic", "isf", "barrage")


def table(
    rules: str = "classic",
    variants: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
) -> Table:
    """A Stratego table for these rules (a ValueError names what is wrong with them)."""
    if rules not in RULES:
        raise ValueError(f"rules {rules!r}: expected one of {', '.join(RULES)}")
    names = list(variants) + ([] if rules == "classic" or rules in variants else [rules])
    return make_table("stratego", 2, names, options, lambda probe, given: StrategoCodec())


class raw_env(ArenaAECEnv):  # PettingZoo's name for it
    metadata = {**ArenaAECEnv.metadata, "name": "stratego_v0"}

    def __init__(
        self,
        rules: str = "classic",
        variants: Sequence[str] = (),
        options: Mapping[str, str] | None = None,
        reward: str | Reward = "win_loss",
        render_mode: str | None = None,
    ) -> None:
        super().__init__(table(rules, variants, options), reward, render_mode)


def env(**kwargs: Any) -> OrderEnforcing:
    """The AEC environment, checked for the order of calls (reset first)."""
    return OrderEnforcing(raw_env(**kwargs))


def single_agent_env(
    opponent: str | Player = "random",
    seat: int | None = 0,
    rules: str = "classic",
    variants: Sequence[str] = (),
    options: Mapping[str, str] | None = None,
    reward: str | Reward = "win_loss",
    render_mode: str | None = None,
    illegal_reward: float | None = None,
) -> SingleAgentEnv:
    """The learner in ``seat`` against ``opponent`` (a house bot by name: random,
    heuristic). ``illegal_reward``: see :class:`~arena.envs.single.SingleAgentEnv`."""
    rules_table = table(rules, variants, options)
    return SingleAgentEnv(rules_table, [opponent], seat, reward, render_mode, illegal_reward)
