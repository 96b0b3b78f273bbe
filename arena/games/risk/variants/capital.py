"""Capital (headquarters) Risk.

Deal setup. After placement every player secretly picks one own territory as their
headquarters: they pick in seat order, but nobody sees another's pick until all have
picked, then all are revealed at once. A player wins by holding every opposing
headquarters while holding their own; with ``short-capital``, any 2 opposing
headquarters with 4 players, any 3 with 5 or 6. Losing your headquarters does not
eliminate you. The headquarters' territory cards cannot be traded in sets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.engine.core import EndReason, IllegalAction, OptionSpec, Result
from arena.games.risk.state import CustomDecision
from arena.plugins import Variant

NAME = "capital"
#: 2: headquarters cards count towards the 5 cards that force a trade (1: they did not)
RULES_VERSION = 2
SHORT_NEEDED = {4: 2, 5: 3, 6: 3}


def needed(num_players: int, short: bool) -> int:
    """How many opposing headquarters a player must hold to win."""
    if short and num_players in SHORT_NEEDED:
        return SHORT_NEEDED[num_players]
    return num_players - 1


class Capital:
    #: the entries its observation hook adds (it changes no other)
    risk_observation_keys = ("headquarters", "headquarters_needed")

    @hookimpl
    def risk_configure(
        self, num_players: int, options: dict[str, Any], given: dict[str, Any]
    ) -> None:
        if given.get("setup") not in (None, "deal"):
            raise ValueError(f"capital is played with the deal setup, not setup={given['setup']}")
        options["setup"] = "deal"

    @hookimpl
    def risk_after_setup(self, state: Any, events: list[dict[str, Any]]) -> bool:
        state.variant_data[NAME] = {"hq": [None] * state.num_players, "revealed": False}
        self._ask(state, 0)
        return True

    def _ask(self, state: Any, seat: int) -> None:
        state.ask(
            CustomDecision(
                seat,
                "headquarters",
                lambda st: {"territories": st.owned(st.player)},
                {"headquarters": self._pick},
                lambda st: {"type": "headquarters", "territory": st.owned(st.player)[0]},
            )
        )

    def _pick(self, state: Any, action: dict[str, Any], events: list[dict[str, Any]]) -> None:
        seat = state.player
        t = state._territory(action, "territory")
        if state.owner[t] != seat:
            raise IllegalAction(
                f"{state.map.territories[t]} is not yours", allowed="one of your territories"
            )
        data = state.variant_data[NAME]
        data["hq"][seat] = t
        # the pick itself stays secret until everyone has picked
        events.append({"e": "headquarters_picked", "p": seat})
        if seat + 1 < state.num_players:
            self._ask(state, seat + 1)
            return
        data["revealed"] = True
        state.untradable.update(data["hq"])  # card i shows territory i
        events.append({"e": "headquarters", "hq": list(data["hq"])})
        state.begin_first_turn(events)

    @hookimpl
    def risk_check_victory(self, state: Any, player: int) -> Result | None:
        if player < 0:
            return None
        data = state.variant_data[NAME]
        if not data["revealed"]:
            return None
        hq = data["hq"]
        owner = state.owner
        if owner[hq[player]] != player:
            return None
        held = sum(1 for seat, t in enumerate(hq) if seat != player and owner[t] == player)
        if held >= needed(state.num_players, state.options["short-capital"] == "on"):
            return Result(
                EndReason.VICTORY,
                state.places([player]),
                f"seat {player} holds {held} opposing headquarters and its own",
            )
        return None

    @hookimpl
    def risk_observation(self, state: Any, player: int, observation: dict[str, Any]) -> None:
        data = state.variant_data.get(NAME)
        if data is None:
            return
        if data["revealed"]:
            observation["headquarters"] = list(data["hq"])
        else:  # before the reveal: only your own pick
            observation["headquarters"] = [
                t if seat == player else None for seat, t in enumerate(data["hq"])
            ]
        observation["headquarters_needed"] = needed(
            state.num_players, state.options["short-capital"] == "on"
        )

    @hookimpl
    def risk_spectator_view(self, state: Any, view: dict[str, Any], reveal: bool) -> None:
        data = state.variant_data.get(NAME)
        if data is not None and (data["revealed"] or reveal):
            view["headquarters"] = list(data["hq"])


CAPITAL_OPTIONS = (
    OptionSpec(
        "short-capital",
        "the shorter game: any 2 opposing headquarters with 4 players, any 3 with 5 or 6",
        "off",
        ("off", "on"),
    ),
)


@hookimpl
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    register(
        Variant(
            "risk",
            NAME,
            "capture the opposing headquarters while holding your own",
            Capital(),
            conflicts=("missions", "neutral"),
            options=CAPITAL_OPTIONS,
            rules_version=RULES_VERSION,
        )
    )
