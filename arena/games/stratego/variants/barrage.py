"""Barrage: the quick game with 8 pieces a side, under ISF rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.games.stratego.pieces import BARRAGE_ARMY
from arena.games.stratego.state import StrategoRules
from arena.games.stratego.variants.isf import apply_isf
from arena.plugins import Variant

#: 3: ISF 10.2, a Scout's moves along the squares its first move covered count against
#: the two-squares rule (2: only moves between the same two squares; 1: the more-squares
#: rule followed only the piece that fled last)
RULES_VERSION = 3


class BarrageRules:
    @hookimpl
    def stratego_rules(self, rules: StrategoRules, options: dict[str, Any]) -> None:
        apply_isf(rules)
        rules.name = "barrage"
        rules.army = dict(BARRAGE_ARMY)
        rules.fill_setup_rows = False


@hookimpl
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    register(
        Variant(
            "stratego",
            "barrage",
            "quick game: 8 pieces a side (flag, marshal, "
            "general, miner, 2 scouts, spy, bomb), ISF rules",
            BarrageRules(),
            conflicts=("isf",),
            rules_version=RULES_VERSION,
        )
    )
