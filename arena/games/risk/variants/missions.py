"""Secret missions: each player is dealt a secret goal; the first to reach it wins.

Deal setup. The standard deck has 14 missions; ``mission-deck=1998`` takes the 12 of
the 1998 US edition (without the two "Europe and ... and a third continent" cards).
Seat ``i`` plays colour ``COLOURS[i]``; "destroy <colour>" cards for colours not in
play are removed. A "destroy" mission whose colour is the holder's own, or whose colour
someone else destroys first, becomes "occupy 24 territories" (the holder is told
privately). A mission wins at once, on anyone's turn: it is checked after every applied
action (once a conquest's move-in is made), for every player still taking turns. When
one decision completes two missions, the player whose turn it is wins.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from arena import hookimpl
from arena.engine.core import EndReason, OptionSpec, Result
from arena.plugins import Variant

NAME = "missions"
#: 2: a mission wins at once on anyone's turn (1: only on its holder's own turn)
RULES_VERSION = 2
COLOURS = ("red", "blue", "green", "yellow", "black", "pink")


@dataclass(frozen=True)
class Mission:
    id: str
    text: str
    continents: tuple[str, ...] = ()
    third_continent: bool = False
    occupy: int = 0
    min_armies: int = 1
    destroy: str = ""  # a colour

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "continents": list(self.continents),
            "third_continent": self.third_continent,
            "occupy": self.occupy,
            "min_armies": self.min_armies,
            "destroy": self.destroy,
        }


def _conquer(a: str, b: str, third: bool = False) -> Mission:
    slug = f"{a}+{b}".lower().replace(" ", "-") + ("+third" if third else "")
    text = f"Conquer {a} and {b}" + (" and a third continent of your choice" if third else "")
    return Mission(slug, text, (a, b), third)


OCCUPY_24 = Mission("occupy-24", "Occupy 24 territories", occupy=24)
STANDARD_DECK: tuple[Mission, ...] = (
    _conquer("Asia", "South America"),
    _conquer("Asia", "Africa"),
    _conquer("North America", "Africa"),
    _conquer("North America", "Australia"),
    _conquer("Europe", "Australia", third=True),
    _conquer("Europe", "South America", third=True),
    Mission(
        "occupy-18x2",
        "Occupy 18 territories with at least 2 armies in each",
        occupy=18,
        min_armies=2,
    ),
    OCCUPY_24,
    *(Mission(f"destroy-{c}", f"Destroy all armies of {c}", destroy=c) for c in COLOURS),
)
DECK_1998 = tuple(m for m in STANDARD_DECK if not m.third_continent)
BY_ID = {m.id: m for m in STANDARD_DECK}
#: what a holder sees of a mission (nested values immutable, so the dicts may be shared)
_SHOWN = {m.id: {**m.to_json(), "continents": m.continents} for m in STANDARD_DECK}


def deck_for(edition: str, num_players: int) -> list[Mission]:
    deck = STANDARD_DECK if edition == "standard" else DECK_1998
    in_play = COLOURS[:num_players]
    return [m for m in deck if not m.destroy or m.destroy in in_play]


def completed(state: Any, seat: int, mission: Mission, killed_by: dict[int, int]) -> bool:
    """Has ``seat`` reached ``mission``?"""
    return _goal(state.map, mission)(state, seat, killed_by)


#: per map and mission: the map (the key holds only its id) and the mission's test
_GOALS: dict[tuple[int, str], tuple[Any, Callable[[Any, int, dict[int, int]], bool]]] = {}


def _goal(game_map: Any, mission: Mission) -> Callable[[Any, int, dict[int, int]], bool]:
    """The test of ``mission`` on ``game_map``: made once, with what it looks up in the
    map made ahead (it runs after most actions)."""
    key = (id(game_map), mission.id)
    known = _GOALS.get(key)
    if known is not None and known[0] is game_map:
        return known[1]
    if mission.destroy:
        target = COLOURS.index(mission.destroy)

        def test(state: Any, seat: int, killed_by: dict[int, int]) -> bool:
            return killed_by.get(target) == seat

    elif mission.occupy:
        occupy, least = mission.occupy, mission.min_armies

        def test(state: Any, seat: int, killed_by: dict[int, int]) -> bool:
            if state.territory_count[seat] < occupy:
                return False
            if least <= 1:
                return True
            armies = state.armies
            held = sum(1 for t, o in enumerate(state.owner) if o == seat and armies[t] >= least)
            return held >= occupy

    else:
        members = game_map.continent_members
        chosen = [game_map.continents.index(name) for name in mission.continents]
        named = tuple(t for c in chosen for t in members[c])
        others = (
            tuple(tuple(members[c]) for c in range(len(members)) if c not in chosen)
            if mission.third_continent
            else ()
        )

        def test(state: Any, seat: int, killed_by: dict[int, int]) -> bool:
            at = state.owner.__getitem__
            holds = seat.__eq__
            if not all(map(holds, map(at, named))):
                return False
            return not others or any(all(map(holds, map(at, c))) for c in others)

    _GOALS[key] = (game_map, test)
    return test


#: missions reached only by holding territories, which change hands only by a conquest
#: (not by placing or moving armies)
_BY_TERRITORIES = frozenset(m.id for m in STANDARD_DECK if m.min_armies <= 1)


def match_data(assigned: list[str], unchecked: list[int]) -> dict[str, Any]:
    """The variant's data of a match (``state.variant_data["missions"]``): the mission
    of each seat, who destroyed whom, and what its victory check keeps."""
    return {
        "assigned": assigned,
        "killed_by": {},
        # seats to check at the next check besides the player acting (risk_check_victory)
        "unchecked": unchecked,
        # the state's conquests at the last check (risk_check_victory)
        "conquests": -1,
    }


def _won(state: Any, seat: int, data: dict[str, Any]) -> Result | None:
    """The victory of ``seat`` if its mission is complete (never a seat out of the game,
    or removed by the referee)."""
    if not state.alive[seat] or state.passive[seat]:
        return None
    mission = BY_ID[data["assigned"][seat]]
    if not _goal(state.map, mission)(state, seat, data["killed_by"]):
        return None
    return Result(
        EndReason.VICTORY,
        state.places([seat]),
        f"seat {seat} completed the mission: {mission.text}",
    )


class Missions:
    """The per-match hooks of the missions variant (state in ``variant_data``)."""

    #: the entries its observation hook adds (it changes no other)
    risk_observation_keys = ("mission", "colours")

    @hookimpl
    def risk_configure(
        self, num_players: int, options: dict[str, Any], given: dict[str, Any]
    ) -> None:
        if given.get("setup") not in (None, "deal"):
            raise ValueError(
                f"secret missions are played with the deal setup, not setup={given['setup']}"
            )
        options["setup"] = "deal"

    @hookimpl
    def risk_after_setup(self, state: Any, events: list[dict[str, Any]]) -> bool:
        deck = deck_for(state.options["mission-deck"], state.num_players)
        state.rng.shuffle(deck)  # the secret generator, never the deal's: missions are hidden
        assigned = [m.id for m in deck[: state.num_players]]
        data = state.variant_data[NAME] = match_data(assigned, list(range(state.num_players)))
        events.append({"e": "missions_dealt", "count": len(assigned)})
        for seat, mission_id in enumerate(assigned):
            mission = BY_ID[mission_id]
            if mission.destroy == COLOURS[seat]:
                self._fall_back(data, seat, "your own colour", events)
        return False

    @staticmethod
    def _fall_back(data: dict[str, Any], seat: int, why: str, events: list[dict[str, Any]]) -> None:
        data["assigned"][seat] = OCCUPY_24.id
        data["unchecked"].append(seat)  # it may be complete already, on anyone's turn
        # private: only the holder is told (the replay shows it after the game)
        events.append(
            {
                "e": "mission_changed",
                "p": seat,
                "private": seat,
                "mission": OCCUPY_24.id,
                "why": why,
            }
        )

    @hookimpl
    def risk_eliminated(
        self, state: Any, loser: int, by: int, events: list[dict[str, Any]]
    ) -> None:
        data = state.variant_data[NAME]
        data["killed_by"][loser] = by
        for seat, mission_id in enumerate(data["assigned"]):
            mission = BY_ID[mission_id]
            if mission.destroy == COLOURS[loser] and seat != by and state.alive[seat]:
                self._fall_back(
                    data, seat, f"{COLOURS[loser]} was destroyed by another player", events
                )

    @hookimpl
    def risk_check_victory(self, state: Any, player: int) -> Result | None:
        """A seat whose mission is complete, the player acting first: it wins a tie.

        Besides the player acting only the seats in ``unchecked`` can have completed
        theirs: another player's action only takes territories and armies away from a
        seat, and a "destroy" mission is completed by the destroyer, who is acting. A
        seat's mission becomes complete through someone else's action only by changing
        into "occupy 24", and a changed seat is put in ``unchecked`` (as every seat is
        when the missions are dealt). So every seat is checked whenever its mission may
        have become complete, at the cost of one check per action that can complete one.
        """
        data = state.variant_data.get(NAME)
        if data is None:
            return None
        unchecked = data["unchecked"]
        if not unchecked:  # the usual case: only the player acting
            if player < 0:
                return None
            # Nothing conquered since the last check: every territory has its owner of
            # then, and a goal reached by holding territories was checked then, after
            # the conquest that gave its holder its last one.
            conquests, data["conquests"] = data["conquests"], state.conquests
            if conquests == state.conquests and data["assigned"][player] in _BY_TERRITORIES:
                return None
            return _won(state, player, data)
        data["conquests"] = state.conquests
        n = state.num_players
        seats = [player] if player >= 0 else []
        seats += sorted(set(unchecked) - {player}, key=lambda s: (s - player) % n)
        unchecked.clear()
        for seat in seats:
            result = _won(state, seat, data)
            if result is not None:
                return result
        return None

    @hookimpl
    def risk_observation(self, state: Any, player: int, observation: dict[str, Any]) -> None:
        data = state.variant_data.get(NAME)
        if data is not None and player < state.num_players:
            observation["mission"] = dict(_SHOWN[data["assigned"][player]])
            observation["colours"] = COLOURS[: state.num_players]

    @hookimpl
    def risk_spectator_view(self, state: Any, view: dict[str, Any], reveal: bool) -> None:
        """The seats' colours; the missions once the game is over (its ``missions``
        event shows them then)."""
        data = state.variant_data.get(NAME)
        if data is None:
            return
        view["colours"] = list(COLOURS[: state.num_players])
        if state.terminal or reveal:
            view["missions"] = [BY_ID[m].text for m in data["assigned"]]

    @hookimpl
    def risk_game_over(self, state: Any, result: Result, events: list[dict[str, Any]]) -> None:
        data = state.variant_data.get(NAME)
        if data is not None:
            events.append({"e": "missions", "missions": list(data["assigned"])})


MISSION_OPTIONS = (
    OptionSpec(
        "mission-deck",
        "the standard 14 missions, or the 12 of the 1998 US edition",
        "standard",
        ("standard", "1998"),
    ),
)


@hookimpl
def arena_register_variants(register: Callable[[Variant], None]) -> None:
    register(
        Variant(
            "risk",
            NAME,
            "secret missions: the first to complete their own secret goal wins",
            Missions(),
            conflicts=("capital", "neutral"),
            options=MISSION_OPTIONS,
            rules_version=RULES_VERSION,
        )
    )
