"""ISF (tournament) rules: Scouts move and strike; the two-squares and more-squares rules."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.games.stratego.state import StrategoRules
from arena.plugins import Variant

#: 2: the more-squares rule follows chases of several pieces (1: only the piece that
#: fled last)
RULES_VERSION = 2


def apply_isf(rules: StrategoRules) -> None:
    rules.name = "isf"
    rules.scout_move_and_strike = True
    rules.shuttle_limit = 3  # "not more than 3 times non-stop between the same two squares"
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
