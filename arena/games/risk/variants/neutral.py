"""Two players with a neutral army.

Each side and the neutral get 40 armies. The 42 territory cards (no wilds) are dealt
into 3 piles of 14: one per player, one neutral; one army goes on every territory of
each pile. Then the players alternate, each turn placing 2 of their own armies (on 1 or
2 own territories) and 1 neutral army on any neutral territory, until all are placed.
The wilds go back in and play is as usual. The neutral (owner id 2) never attacks,
reinforces or draws; with ``defender-dice=choose`` the other player chooses its
defence. Win by eliminating the opponent.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from arena import hookimpl
from arena.engine.core import IllegalAction
from arena.games.risk.state import CustomDecision
from arena.plugins import Variant

NAME = "neutral"
ARMIES = 40
PILE = 14
NEUTRAL = 2  # the owner id after the two seats
OWN_PER_TURN = 2


class Neutral:
    @hookimpl
    def risk_configure(
        self, num_players: int, options: dict[str, Any], given: dict[str, Any]
    ) -> None:
        if num_players != 2:
            raise ValueError(f"the neutral variant is for 2 players, not {num_players}")
        if "setup" in given:
            raise ValueError(
                "the neutral variant has its own setup (three piles of 14); drop the setup option"
            )

    @hookimpl(tryfirst=True)
    def risk_starting_armies(self, num_players: int, options: dict[str, Any]) -> int:
        return ARMIES

    @hookimpl
    def risk_passive_owners(self, num_players: int, options: dict[str, Any]) -> list[str]:
        return ["neutral"]

    @hookimpl
    def risk_setup(self, state: Any, events: list[dict[str, Any]]) -> bool:
        cards = list(range(state.map.size))  # the territory cards: no wilds
        state.deal_rng.shuffle(cards)  # public: the rotations of a deal share it
        for owner in (0, 1, NEUTRAL):
            pile = sorted(cards[owner * PILE : (owner + 1) * PILE])
            state.give(owner, pile, 1)
            events.append({"e": "deal", "p": owner, "t": pile})
        state.variant_data[NAME] = {"left": [ARMIES - PILE] * 3}
        state._setup_left[:] = [ARMIES - PILE] * 2  # shown to bots as setup_armies_left
        state.shuffle_deck()  # the wilds go back in
        self._ask(state, 0)
        return True

    @staticmethod
    def _options(state: Any) -> dict[str, Any]:
        seat = state.player
        left = state.variant_data[NAME]["left"]
        return {
            "armies": min(OWN_PER_TURN, left[seat]),
            "territories": state.owned(seat),
            "neutral": 1 if left[NEUTRAL] else 0,
            "neutral_territories": state.owned(NEUTRAL),
        }

    def _default(self, state: Any) -> dict[str, Any]:
        opts = self._options(state)
        action: dict[str, Any] = {
            "type": "place",
            "armies": {opts["territories"][0]: opts["armies"]},
        }
        if opts["neutral"]:
            action["neutral"] = opts["neutral_territories"][0]
        return action

    def _ask(self, state: Any, seat: int) -> None:
        state.ask(
            CustomDecision(
                seat, "neutral_place", self._options, {"place": self._place}, self._default
            )
        )

    def _place(self, state: Any, action: dict[str, Any], events: list[dict[str, Any]]) -> None:
        seat = state.player
        left = state.variant_data[NAME]["left"]
        want = min(OWN_PER_TURN, left[seat])
        raw = action.get("armies")
        if not isinstance(raw, dict):
            raise IllegalAction(
                f"'armies' must map 1 or 2 of your territories to armies, got {raw!r}",
                allowed=f'{{"Alaska": {want}}}',
            )
        placements: dict[int, int] = {}
        for ref, n in raw.items():
            t = state._territory({"t": ref}, "t")
            if state.owner[t] != seat:
                raise IllegalAction(f"{state.map.territories[t]} is not yours")
            if type(n) is not int or n < 1:
                raise IllegalAction(f"armies for {state.map.territories[t]} must be at least 1")
            placements[t] = placements.get(t, 0) + n
        if sum(placements.values()) != want:
            raise IllegalAction(
                f"placed {sum(placements.values())} of your armies",
                allowed=f"exactly {want}, on 1 or 2 of your territories",
            )
        neutral_t = None
        if left[NEUTRAL]:
            neutral_t = state._territory(action, "neutral")
            if state.owner[neutral_t] != NEUTRAL:
                raise IllegalAction(
                    f"{state.map.territories[neutral_t]} is not neutral",
                    allowed="a neutral territory for the neutral army",
                )
        for t, n in placements.items():
            state.armies[t] += n
        left[seat] -= want
        state._setup_left[seat] = left[seat]
        event: dict[str, Any] = {
            "e": "neutral_place",
            "p": seat,
            "armies": [[t, n] for t, n in placements.items()],
        }
        if neutral_t is not None:
            state.armies[neutral_t] += 1
            left[NEUTRAL] -= 1
            event["neutral"] = neutral_t
        events.append(event)
        if left[0] or left[1] or left[NEUTRAL]:
            nxt = 1 - seat
            self._ask(state, nxt if left[nxt] or left[NEUTRAL] else seat)
        else:
            state.finish_setup(events)

    @hookimpl(tryfirst=True)
    def risk_defence_chooser(self, state: Any, attacker: int, defender: int) -> int | None:
        if defender == NEUTRAL:
            return 1 - attacker  # the other player rolls (chooses) the neutral's defence
        return None


@hookimpl
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    register(
        Variant(
            "risk",
            NAME,
            "two players and a neutral army (40 armies each)",
            Neutral(),
            conflicts=("missions", "capital"),
        )
    )
