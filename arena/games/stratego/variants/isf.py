"""ISF (tournament) rules: Scouts move and strike; the two-squares and more-squares rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.games.stratego.state import StrategoRules
from arena.plugins import Variant

#: 3: ISF 10.2, a Scout's moves along the squares its first move covered count against
#: the two-squares rule (2: only moves between the same two squares; 1: the more-squares
#: rule followed only the piece that fled last)
RULES_VERSION = 3


def apply_isf(rules: StrategoRules) -> None:
    rules.name = "isf"
    rules.scout_move_and_strike = True
    rules.shuttle_limit = 3  # "not more than 3 times non-stop between the same two squares"
    rules.scout_lines = True  # ISF 10.2: a Scout's long moves count by the squares covered
    rules.more_squares = True


class IsfRules:
    @hookimpl
    def stratego_rules(self, rules: StrategoRules, options: dict[str, Any]) -> None:
        apply_isf(rules)


@hookimpl
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    register(
        Variant(
            "stratego",
            "isf",
            "ISF tournament rules: Scouts move and strike, two-squares and more-squares rules",
            IsfRules(),
            rules_version=RULES_VERSION,
        )
    )
