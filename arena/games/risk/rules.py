"""The classic rules as the default implementations of the ``risk_*`` hooks.

They are registered ``trylast`` on every match's hook manager, so a variant that
answers a ``firstresult`` hook replaces the classic answer.
"""

from __future__ import annotations

from typing import Any

from arena import hookimpl
from arena.games.risk.cards import fixed_value, progressive_value

STARTING_ARMIES = {3: 35, 4: 30, 5: 25, 6: 20}


class ClassicRules:
    @hookimpl(trylast=True)
    def risk_starting_armies(self, num_players: int, options: dict[str, Any]) -> int | None:
        if num_players not in STARTING_ARMIES:
            raise ValueError(
                f"Risk takes 3 to 6 players, not {num_players} "
                "(2 players play with --variant neutral)"
            )
        return STARTING_ARMIES[num_players]

    @hookimpl(trylast=True)
    def risk_setup(self, state: Any, events: list[dict[str, Any]]) -> bool:
        if state.config.setup == "deal":
            state.setup_deal(events)
        else:
            state.setup_claim(events)
        return True

    @hookimpl(trylast=True)
    def risk_card_set_value(self, state: Any, sets_traded: int, cards: list[int]) -> int:
        if state.config.cards == "fixed":
            return fixed_value(state.map, cards)
        return progressive_value(sets_traded)

    @hookimpl(trylast=True)
    def risk_defence_chooser(self, state: Any, attacker: int, defender: int) -> int | None:
        if defender < state.num_players and not state.passive[defender]:
            return defender
        return None  # nobody to ask: the most dice allowed


CLASSIC_RULES = ClassicRules()
