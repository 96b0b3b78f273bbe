"""The classic rules as the default implementations of the ``risk_*`` hooks.

They are registered ``trylast`` on every match's hook manager, so a variant that
answers a ``firstresult`` hook replaces the classic answer.
"""

from __future__ import annotations

from typing import Any

from arena import hookimpl
from arena.games.risk.cards import progressive_value

STARTING_ARMIES = {3: 35, 4: 30, 5: 25, 6: 20}


class ClassicRules:
    @hookimpl(trylast=True)
    def risk_starting_armies(self, num_players: int, options: dict[str, Any]) -> int | None:
        return STARTING_ARMIES.get(num_players)

    @hookimpl(trylast=True)
    def risk_card_set_value(self, state: Any, sets_traded: int, cards: list[int]) -> int:
        return progressive_value(sets_traded)


CLASSIC_RULES = ClassicRules()
