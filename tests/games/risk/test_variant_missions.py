"""Secret missions (RULES.md, Risk, Variants): one test per rule, named after it.

Games are created through the registry exactly as ``arena play --variant missions``
does. Positions are laid out with :func:`position`: it plays nothing, assigns the
board, the hands and the dealt missions directly, and starts a seat's turn through
``RiskState._begin_turn`` as the engine does.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from arena.engine.core import EndReason, Event
from arena.engine.match import MatchRecord, play_match
from arena.engine.replay import verify
from arena.games.risk.map import load_map
from arena.games.risk.state import RiskState
from arena.games.risk.variants.missions import (
    BY_ID,
    COLOURS,
    DECK_1998,
    OCCUPY_24,
    STANDARD_DECK,
    deck_for,
)
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
MISSIONS = REGISTRY.resolve_variants("risk", ["missions"])
MAP = load_map("classic")
THIRD_CONTINENT_IDS = {"europe+australia+third", "europe+south-america+third"}


def t(name: str) -> int:
    return MAP.index[name]


def members(continent: str) -> list[str]:
    c = MAP.continents.index(continent)
    return [MAP.territories[i] for i in MAP.continent_members[c]]


def normal(value: Any) -> Any:
    """The value as a bot receives it over the wire (tuples become lists)."""
    return json.loads(json.dumps(value))


def of_kind(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["e"] == kind]


# --- building games and positions --------------------------------------------------------


def new_game(num_players: int = 3, seed: int = 0, **options: str) -> RiskState:
    return GAME.new_state(num_players, seed, options, MISSIONS)


def play_setup(state: RiskState) -> list[Event]:
    """Place the remaining setup armies on the first territory offered; the step events."""
    events: list[Event] = []
    while not state.terminal and state.decision().kind == "setup_place":
        decision = state.decision()
        events += state.apply(
            decision.player, {"type": "place", "territory": decision.options["territories"][0]}
        )
    return events


def dealt_missions(state: RiskState, setup_events: list[Event]) -> list[str]:
    """The missions as dealt, before a "destroy your own colour" card fell back."""
    dealt = list(state.variant_data["missions"]["assigned"])
    for e in of_kind(setup_events, "mission_changed"):
        dealt[e["p"]] = f"destroy-{COLOURS[e['p']]}"
    return dealt


def position(
    missions: Sequence[str],
    *,
    own: Mapping[str, tuple[int, int]] | None = None,
    rest: Sequence[int] | None = None,
    rest_armies: int = 1,
    to_move: int = 0,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
) -> tuple[RiskState, list[Event]]:
    """A board at the start of ``to_move``'s turn where seat i holds ``missions[i]``.

    ``own`` maps territory names to (seat, armies); the other territories go round robin
    to the seats in ``rest`` (default: all) with ``rest_armies`` each.
    """
    num_players = len(missions)
    state = GAME.new_state(num_players, seed, dict(options or {}), MISSIONS)
    own = own or {}
    seats = list(rest) if rest is not None else list(range(num_players))
    state.owner = [-1] * MAP.size
    state.armies = [0] * MAP.size
    for name, (seat, armies) in own.items():
        state.owner[t(name)] = seat
        state.armies[t(name)] = armies
    unlisted = [i for i in range(MAP.size) if state.owner[i] < 0]
    for k, i in enumerate(unlisted):
        state.owner[i] = seats[k % len(seats)]
        state.armies[i] = rest_armies
    state.territory_count = [state.owner.count(seat) for seat in range(num_players)]
    state.alive = [count > 0 for count in state.territory_count]
    state.eliminated = [seat for seat in range(num_players) if not state.alive[seat]]
    state.hands = [[] for _ in range(num_players)]
    state._setup_left = [0] * num_players
    state.variant_data["missions"] = {
        "assigned": list(missions),
        "killed_by": {},
        "unchecked": list(range(num_players)),
    }
    events: list[Event] = []
    state._begin_turn(to_move, events)
    return state, events


def reinforce(state: RiskState, where: str) -> list[Event]:
    """Decline an optional trade and put every reinforcement on ``where``."""
    p = state.player
    events: list[Event] = []
    if state.decision().kind == "trade":
        events += state.apply(p, {"type": "no_trade"})
    return events + state.apply(
        p, {"type": "reinforce", "armies": {where: state.decision().options["armies"]}}
    )


def capture(state: RiskState, src: str, dst: str) -> list[Event]:
    """Attack from ``src`` until ``dst`` falls, answering defence decisions with 2 dice,
    then move in the fewest armies allowed. Stops as soon as the game is over (the
    capture may complete a mission)."""
    attacker = state.player
    events: list[Event] = []
    while state.owner[t(dst)] != attacker and not state.terminal:
        assert state.armies[t(src)] > 3, "the attacking stack ran out; use a bigger one"
        events += state.apply(attacker, {"type": "attack", "from": src, "to": dst, "dice": 3})
        while not state.terminal and state.decision().kind == "defend":
            d = state.decision()
            events += state.apply(d.player, {"type": "defend", "dice": d.options["max_dice"]})
    return events + finish_move_in(state)


def finish_move_in(state: RiskState) -> list[Event]:
    if not state.terminal and state.decision().kind == "move_in":
        return state.apply(
            state.player, {"type": "move_in", "armies": state.decision().options["min"]}
        )
    return []


# --- setup -----------------------------------------------------------------------------


def test_rule_missions_force_the_deal_setup() -> None:
    """Secret missions are played with the deal setup; setup=claim is refused, saying so."""
    state = new_game(4, seed=1)
    assert state.config.setup == "deal"
    deals = of_kind(state.initial_events, "deal")
    assert [e["p"] for e in deals] == [0, 1, 2, 3]
    assert sorted(t for e in deals for t in e["t"]) == list(range(42))
    assert state.decision().kind == "setup_place"
    assert new_game(3, seed=1, setup="deal").config.setup == "deal"
    with pytest.raises(ValueError, match=r"deal setup, not setup=claim"):
        new_game(3, seed=1, setup="claim")


def test_rule_standard_deck_has_14_missions_and_the_1998_deck_12() -> None:
    """The 1998 US edition omits exactly the two "Europe and ... and a third continent"."""
    assert len(STANDARD_DECK) == 14
    assert len({m.id for m in STANDARD_DECK}) == 14
    assert len(DECK_1998) == 12
    assert {m.id for m in STANDARD_DECK} - {m.id for m in DECK_1998} == THIRD_CONTINENT_IDS
    # What is really dealt: over many 6-player games (every colour in play), the
    # standard deck deals all 14 and the 1998 deck all of its 12 and never the other two.
    for edition, expected in (("standard", STANDARD_DECK), ("1998", DECK_1998)):
        seen: set[str] = set()
        for seed in range(40):
            state = new_game(6, seed, **{"mission-deck": edition})
            seen.update(dealt_missions(state, play_setup(state)))
        assert seen == {m.id for m in expected}, edition
    with pytest.raises(ValueError, match="mission-deck"):
        new_game(3, **{"mission-deck": "2000"})


def test_rule_destroy_missions_of_colours_not_in_play_are_removed() -> None:
    """With 3 players (red, blue, green) no destroy-yellow/black/pink card is dealt."""
    deck = {m.id for m in deck_for("standard", 3)}
    assert len(deck) == 11
    assert {"destroy-red", "destroy-blue", "destroy-green"} <= deck
    assert not deck & {"destroy-yellow", "destroy-black", "destroy-pink"}
    assert len(deck_for("standard", 5)) == 13 and len(deck_for("1998", 4)) == 10
    dealt: set[str] = set()
    for seed in range(60):
        state = new_game(3, seed)
        dealt.update(dealt_missions(state, play_setup(state)))
    assert not dealt & {"destroy-yellow", "destroy-black", "destroy-pink"}
    assert {"destroy-red", "destroy-blue", "destroy-green"} <= dealt


@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_rule_each_player_is_dealt_exactly_one_mission_all_different(num_players: int) -> None:
    for seed in range(8):
        state = new_game(num_players, seed)
        assert "missions" not in state.variant_data  # dealt once the placement is over
        events = play_setup(state)
        dealt = dealt_missions(state, events)
        assert len(dealt) == num_players
        assert len(set(dealt)) == num_players, dealt
        assert set(dealt) <= {m.id for m in deck_for("standard", num_players)}
        assert of_kind(events, "missions_dealt") == [{"e": "missions_dealt", "count": num_players}]
        for seat in range(num_players):
            mission = normal(state.observation(seat)["mission"])
            assert mission == BY_ID[state.variant_data["missions"]["assigned"][seat]].to_json()


def test_rule_destroy_your_own_colour_becomes_occupy_24_at_once_told_privately() -> None:
    """A seat dealt "destroy <its own colour>" holds "occupy 24" before the first turn."""
    found = 0
    for seed in range(60):
        state = new_game(3, seed)
        events = play_setup(state)
        assigned = state.variant_data["missions"]["assigned"]
        assert all(assigned[seat] != f"destroy-{COLOURS[seat]}" for seat in range(3))
        changed = of_kind(events, "mission_changed")
        found += bool(changed)
        first_turn = next(i for i, e in enumerate(events) if e["e"] == "turn")
        for e in changed:
            seat = e["p"]
            assert events.index(e) < first_turn  # at once, before any turn
            assert e["private"] == seat
            assert e["mission"] == "occupy-24"
            assert "own colour" in e["why"]
            assert assigned[seat] == "occupy-24"
            assert normal(state.observation(seat)["mission"]) == OCCUPY_24.to_json()
    assert found >= 3, "no seed dealt a player its own colour"


def test_rule_target_destroyed_by_another_becomes_occupy_24_the_destroyer_gains_nothing() -> None:
    """Seat 0 must destroy green; seat 1 destroys green first: seat 0 now occupies 24."""
    own = {"Madagascar": (2, 1), "South-Africa": (1, 30)}
    state, _ = position(
        ["destroy-green", "asia+south-america", "europe+australia+third"],
        own=own,
        rest=(0, 1),
        to_move=1,
    )
    reinforce(state, "South-Africa")
    events = capture(state, "South-Africa", "Madagascar")
    assert state.alive == [True, True, False]
    assert not state.terminal, "the destroyer won through someone else's mission"
    changed = of_kind(events, "mission_changed")
    assert len(changed) == 1
    assert changed[0]["p"] == 0 and changed[0]["private"] == 0
    assert changed[0]["mission"] == "occupy-24"
    assert "destroyed by another player" in changed[0]["why"]
    assert events.index(changed[0]) > events.index(of_kind(events, "eliminate")[0])
    assert state.variant_data["missions"]["assigned"] == [
        "occupy-24",
        "asia+south-america",
        "europe+australia+third",
    ]
    assert normal(state.observation(0)["mission"]) == OCCUPY_24.to_json()
    assert state.observation(1)["mission"]["id"] == "asia+south-america"
    # The game goes on: seat 1 finishes its turn, seat 0 plays.
    finish_move_in(state)
    state.apply(1, {"type": "end_attack"})
    state.apply(1, {"type": "end_turn"})
    assert not state.terminal
    assert state.player == 0


@pytest.mark.parametrize("defender_dice", ["automatic", "choose"])
def test_rule_holder_destroying_its_target_wins_at_once_mid_turn(defender_dice: str) -> None:
    """An elimination during the attack phase ends the game: victory, the holder first.
    With chosen dice the last roll is the target's own "defend" action: still a win."""
    own = {"Madagascar": (2, 2), "South-Africa": (0, 30)}
    state, _ = position(
        ["destroy-green", "asia+south-america", "destroy-red"],
        own=own,
        rest=(0, 1),
        options={"defender-dice": defender_dice},
    )
    reinforce(state, "South-Africa")
    assert state.decision().kind == "attack"
    events = capture(state, "South-Africa", "Madagascar")
    assert state.terminal
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.VICTORY
    assert result.winners == (0,)
    assert result.places == (1, 2, 3)  # seat 1 survives; seat 2 was destroyed
    assert "completed the mission: Destroy all armies of green" in result.detail
    kinds = [e["e"] for e in events]
    assert kinds.index("eliminate") < kinds.index("missions") < kinds.index("game_over")
    assert kinds[-1] == "game_over"
    assert "draw" not in kinds and "turn" not in kinds, "the turn went on after the win"
    assert state.alive == [True, True, False]


# --- completing each kind of mission ---------------------------------------------------------


def conquest_setup(mission_id: str) -> tuple[dict[str, tuple[int, int]], str, str]:
    """Seat 0 holds every continent the mission needs but one territory X (seat 1's).

    For a mission with a third continent of choice, the third is the smallest continent
    not named. Returns (own, src, X): a stack of 30 on ``src`` borders X.
    """
    mission = BY_ID[mission_id]
    needed = list(mission.continents)
    if mission.third_continent:
        others = [c for c in MAP.continents if c not in needed]
        needed.append(min(others, key=lambda c: len(members(c))))
    last = members(needed[-1])
    x = last[-1]
    src = next(n for n in last if t(n) in MAP.adjacent[t(x)])
    own = {name: (0, 1) for c in needed for name in members(c)}
    own[x] = (1, 1)
    own[src] = (0, 30)
    return own, src, x


TWO_CONTINENTS = [m.id for m in STANDARD_DECK if m.continents and not m.third_continent]
THIRD = [m.id for m in STANDARD_DECK if m.third_continent]


@pytest.mark.parametrize("mission_id", TWO_CONTINENTS + THIRD)
def test_rule_conquer_mission_completes_when_every_continent_is_held(mission_id: str) -> None:
    own, src, x = conquest_setup(mission_id)
    state, _ = position([mission_id, "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    reinforce(state, src)
    assert not state.terminal, "won without the last territory"
    capture(state, src, x)
    assert state.terminal
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.VICTORY and result.winners == (0,)
    assert BY_ID[mission_id].text in result.detail


@pytest.mark.parametrize("mission_id", THIRD)
def test_rule_third_continent_mission_needs_the_third(mission_id: str) -> None:
    """Holding the two named continents (and no third) is not enough, turn after turn."""
    mission = BY_ID[mission_id]
    own = {name: (0, 2) for c in mission.continents for name in members(c)}
    state, _ = position([mission_id, "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    held = {c for c in range(6) if all(state.owner[i] == 0 for i in MAP.continent_members[c])}
    assert {MAP.continents[c] for c in held} == set(mission.continents)
    for _ in range(3):  # three rounds of quiet turns
        for seat in range(3):
            assert state.player == seat
            reinforce(state, MAP.territories[state.owned(seat)[0]])
            state.apply(seat, {"type": "end_attack"})
            state.apply(seat, {"type": "end_turn"})
            assert not state.terminal


def eighteen_by_two() -> tuple[dict[str, tuple[int, int]], str, str]:
    """Seat 0: 18 territories, 16 with 2 armies, Congo with 10, South-Africa with 1."""
    names = members("North America") + members("South America") + members("Africa")[:5]
    assert len(names) == 18 and "Madagascar" not in names
    own = {name: (0, 2) for name in names}
    own["Congo"] = (0, 10)
    own["South-Africa"] = (0, 1)
    return own, "Congo", "South-Africa"


def test_rule_occupy_18_with_2_armies_each_counts_only_territories_with_2() -> None:
    own, stack, weak = eighteen_by_two()
    state, _ = position(["occupy-18x2", "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    assert state.territory_count[0] == 18
    other = state.clone()
    # All reinforcements on the stack: 17 territories with 2+, one with 1: not done.
    reinforce(state, stack)
    assert not state.terminal
    state.apply(0, {"type": "end_attack"})
    assert not state.terminal
    # One more army on the weak territory: 18 with 2+, the mission is complete.
    if other.decision().kind == "trade":
        other.apply(0, {"type": "no_trade"})
    n = other.decision().options["armies"]
    other.apply(0, {"type": "reinforce", "armies": {stack: n - 1, weak: 1}})
    assert other.terminal
    result = other.result()
    assert result is not None and result.winners == (0,)
    assert "Occupy 18 territories with at least 2 armies" in result.detail


def test_rule_occupy_18_with_2_is_not_24_territories_with_1() -> None:
    names = [MAP.territories[i] for i in range(24)]
    own = {name: (0, 1) for name in names}
    state, _ = position(["occupy-18x2", "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    assert state.territory_count[0] == 24
    reinforce(state, names[0])  # one territory with 2+: 1 of 18
    assert not state.terminal


def occupy_24_with_23_held() -> RiskState:
    """Seat 0 must occupy 24 and holds 23; its 30 armies on Western Europe border
    Southern Europe (seat 1's)."""
    names = (
        members("North America")
        + members("South America")
        + members("Africa")
        + ["Iceland", "Scandinavia", "Great-Britain", "Western-Europe"]
    )
    own = {name: (0, 1) for name in names}
    own["Western-Europe"] = (0, 30)
    own["Southern-Europe"] = (1, 1)
    state, _ = position(["occupy-24", "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    return state


def test_rule_occupy_24_completes_on_the_24th_territory() -> None:
    state = occupy_24_with_23_held()
    assert state.territory_count[0] == 23
    reinforce(state, "Western-Europe")
    assert not state.terminal
    capture(state, "Western-Europe", "Southern-Europe")
    assert state.terminal
    result = state.result()
    assert result is not None and result.winners == (0,)
    assert "Occupy 24 territories" in result.detail


# --- a mission wins at once, on anyone's turn ----------------------------------------------


def twenty_four_and_green_on_kamchatka() -> dict[str, tuple[int, int]]:
    """Seat 0: 24 territories (North America, South America, Africa and 5 of Europe);
    seat 2 (green): Kamchatka only, which seat 1's 30 armies on Yakutsk border."""
    names = (
        members("North America")
        + members("South America")
        + members("Africa")
        + ["Iceland", "Scandinavia", "Great-Britain", "Western-Europe", "Southern-Europe"]
    )
    own = {name: (0, 1) for name in names}
    own["Scandinavia"] = (0, 10)
    own["Kamchatka"] = (2, 1)
    own["Yakutsk"] = (1, 30)
    own["Ukraine"] = (1, 10)
    return own


@pytest.mark.parametrize("defender_dice", ["automatic", "choose"])
def test_mission_completed_on_another_players_turn_wins_at_once(defender_dice: str) -> None:
    """Seat 0 holds 24 and must destroy green; seat 1 destroys green. Seat 0's mission
    becomes "occupy 24", which it holds: it wins then, on seat 1's turn, once seat 1's
    conquest is complete (its move-in made)."""
    state, _ = position(
        ["destroy-green", "asia+africa", "destroy-red"],
        own=twenty_four_and_green_on_kamchatka(),
        rest=(1,),
        to_move=1,
        options={"defender-dice": defender_dice},
    )
    assert state.territory_count[0] == 24
    reinforce(state, "Yakutsk")
    events: list[Event] = []
    while state.owner[t("Kamchatka")] != 1:
        events = state.apply(1, {"type": "attack", "from": "Yakutsk", "to": "Kamchatka"})
        while state.decision().kind == "defend":
            events = state.apply(2, {"type": "defend", "dice": 1})
    assert of_kind(events, "eliminate") and of_kind(events, "mission_changed")
    assert state.variant_data["missions"]["assigned"][0] == "occupy-24"
    assert state.decision().kind == "move_in"
    assert not state.terminal, "the game ended before the conquest's move-in"
    events = finish_move_in(state)
    assert state.terminal
    result = state.result()
    assert result is not None and result.reason == EndReason.VICTORY
    assert result.winners == (0,)
    assert result.places == (1, 2, 3)
    assert "seat 0 completed the mission: Occupy 24 territories" in result.detail
    assert [e["e"] for e in events] == ["move_in", "missions", "game_over"]


def test_two_missions_complete_same_decision_actor_wins() -> None:
    """Seat 1, whose turn it is, takes green's last territory, Kamchatka: that completes
    its own "Asia and South America", and turns seat 0's "destroy green" into "occupy
    24", which seat 0 holds. Both are complete in one decision: seat 1, acting, wins,
    although seat 0 comes first in seat order."""
    names = (
        members("North America")
        + members("Europe")
        + members("Africa")
        + ["Indonesia", "New-Guinea"]
    )
    own = {name: (0, 1) for name in names}
    own["Kamchatka"] = (2, 1)
    own["Yakutsk"] = (1, 30)
    state, _ = position(
        ["destroy-green", "asia+south-america", "destroy-red"], own=own, rest=(1,), to_move=1
    )
    assert state.territory_count == [24, 17, 1]
    reinforce(state, "Yakutsk")
    events = capture(state, "Yakutsk", "Kamchatka")
    assert of_kind(events, "mission_changed")[0]["p"] == 0
    assert state.territory_count[0] == 24, "seat 0's mission is complete too"
    result = state.result()
    assert result is not None and result.winners == (1,)
    assert "seat 1 completed the mission: Conquer Asia and South America" in result.detail


def test_conquest_awaiting_move_in_is_not_complete() -> None:
    """The 24th territory is taken, but the armies have not moved in: the game goes on
    until the move-in, which wins."""
    state = occupy_24_with_23_held()
    reinforce(state, "Western-Europe")
    while state.owner[t("Southern-Europe")] != 0:
        state.apply(0, {"type": "attack", "from": "Western-Europe", "to": "Southern-Europe"})
    assert state.territory_count[0] == 24
    decision = state.decision()
    assert (decision.kind, decision.player) == ("move_in", 0)
    assert not state.terminal, "the conquest won before its move-in"
    events = state.apply(0, {"type": "move_in", "armies": decision.options["max"]})
    assert state.terminal
    assert [e["e"] for e in events] == ["move_in", "missions", "game_over"]
    result = state.result()
    assert result is not None and result.winners == (0,)


def test_occupy_18_with_2_armies_completes_by_a_fortify() -> None:
    """The fortify that puts a second army on the 18th territory wins at once."""
    own, stack, weak = eighteen_by_two()
    state, _ = position(["occupy-18x2", "destroy-green", "destroy-red"], own=own, rest=(1, 2))
    reinforce(state, stack)
    state.apply(0, {"type": "end_attack"})
    assert not state.terminal
    events = state.apply(0, {"type": "fortify", "from": stack, "to": weak, "armies": 1})
    assert state.terminal
    assert of_kind(events, "fortify") and of_kind(events, "game_over")
    result = state.result()
    assert result is not None and result.winners == (0,)


def test_a_mission_completed_by_the_last_fortify_before_the_turn_limit_wins() -> None:
    """The fortify that ends the last turn of the last round completes the mission: the
    mission wins, not the turn limit."""
    own, stack, weak = eighteen_by_two()
    own = {name: (2, armies) for name, (_, armies) in own.items()}
    missions = ["destroy-green", "destroy-red", "occupy-18x2"]
    state, _ = position(missions, own=own, rest=(0, 1), to_move=2, options={"turn-limit": "1"})
    reinforce(state, stack)
    state.apply(2, {"type": "end_attack"})
    quiet = state.clone()
    state.apply(2, {"type": "fortify", "from": stack, "to": weak, "armies": 1})
    result = state.result()
    assert result is not None and result.reason == EndReason.VICTORY
    assert result.winners == (2,)
    quiet.apply(2, {"type": "end_turn"})  # the same turn without the fortify: the limit
    result = quiet.result()
    assert result is not None and result.reason == EndReason.TURN_LIMIT


def test_a_seat_the_referee_removed_never_wins_by_mission() -> None:
    """A forfeited seat stays on the board, passive: its mission becoming complete (here
    "destroy green" turned "occupy 24" with 24 held) does not make it the winner."""
    state, _ = position(
        ["destroy-green", "asia+africa", "destroy-red", "destroy-blue"],
        own=twenty_four_and_green_on_kamchatka(),
        rest=(1, 3),
        to_move=1,
    )
    state.forfeit(0)
    reinforce(state, "Yakutsk")
    capture(state, "Yakutsk", "Kamchatka")
    assert state.variant_data["missions"]["assigned"][0] == "occupy-24"
    assert state.territory_count[0] == 24
    assert not state.terminal


def replayed(names: str, seed: int, **options: str) -> MatchRecord:
    """The steps of ``arena play risk --players NAMES --variant missions --seed SEED``."""
    seats = names.split(",")
    bots = [REGISTRY.bot("risk", nm).factory(s, seed * 1000 + s) for s, nm in enumerate(seats)]
    rec = play_match(GAME, bots, seed, options, MISSIONS, names=seats)
    assert verify(rec) == len(rec.steps)
    return rec


@pytest.mark.parametrize(
    ("names", "seed", "options", "eliminated_at"),
    [
        # seat 0 eliminates blue; seat 2's "destroy blue" becomes "occupy 24", held already
        ("defensive,blitz,aggressive,random", 5022, {}, 271),
        # seat 1 (blue) loses its last territory on its own defence roll; seat 2's
        # "destroy blue" becomes "occupy 24", held already
        (
            "random,blitz,defensive,aggressive",
            5035,
            {"mission-deck": "1998", "defender-dice": "choose"},
            452,
        ),
    ],
)
def test_regression_a_mission_completed_by_an_elimination_ends_the_game_at_its_move_in(
    names: str, seed: int, options: dict[str, str], eliminated_at: int
) -> None:
    """Issue #18: these games went on until seat 2's own turn. Now they end with the
    move-in of the conquest that eliminated the colour, seat 2 the winner."""
    rec = replayed(names, seed, **options)
    _, _, events = rec.steps[eliminated_at]
    assert of_kind(events, "eliminate")
    changed = of_kind(events, "mission_changed")
    assert [(e["p"], e["mission"]) for e in changed] == [(2, "occupy-24")]
    assert not of_kind(events, "game_over"), "the game ended before the move-in"
    assert len(rec.steps) == eliminated_at + 2
    seat, action, last = rec.steps[-1]
    assert action["type"] == "move_in" and seat != 2
    assert [e["e"] for e in last] == ["move_in", "missions", "game_over"]
    assert rec.result is not None and rec.result.winners == (2,)
    assert rec.result.detail == "seat 2 completed the mission: Occupy 24 territories"


# --- secrecy and the replay ----------------------------------------------------------------


def other_missions_text(state: RiskState, seat: int) -> list[str]:
    """Ids and texts of the other seats' missions that differ from ``seat``'s own."""
    assigned = state.variant_data["missions"]["assigned"]
    mine = BY_ID[assigned[seat]]
    out = []
    for other, mission_id in enumerate(assigned):
        if other != seat and mission_id != mine.id:
            out += [mission_id, BY_ID[mission_id].text]
    return out


def check_mission_secrecy(state: RiskState) -> None:
    assigned = state.variant_data["missions"]["assigned"]
    for seat in range(state.num_players):
        obs = state.observation(seat)
        text = json.dumps(obs, sort_keys=True)
        assert normal(obs["mission"]) == BY_ID[assigned[seat]].to_json()
        assert normal(obs["colours"]) == list(COLOURS[: state.num_players])
        for leak in other_missions_text(state, seat):
            assert leak not in text, f"seat {seat} sees {leak!r}"
        # Non-interference: any other deal of the other seats' missions, same text.
        pool = [m.id for m in STANDARD_DECK if m.id != assigned[seat]]
        rng = random.Random(seat)
        for _ in range(3):
            other = state.clone()
            shuffled = rng.sample(pool, state.num_players)
            other.variant_data["missions"]["assigned"] = [
                assigned[q] if q == seat else shuffled[q] for q in range(state.num_players)
            ]
            assert json.dumps(other.observation(seat), sort_keys=True) == text


def test_rule_a_mission_is_secret_each_observation_shows_only_its_own() -> None:
    missions = ["asia+africa", "occupy-18x2", "destroy-red", "europe+australia+third"]
    state, _ = position(missions)
    for seat in range(4):
        obs = state.observation(seat)
        assert obs["mission"]["id"] == missions[seat]
        text = json.dumps(obs)
        assert missions[seat] in text
        for other, mission_id in enumerate(missions):
            if other != seat:
                assert mission_id not in text
                assert BY_ID[mission_id].text not in text
    check_mission_secrecy(state)


def test_rule_a_mission_stays_secret_through_a_whole_game() -> None:
    """Every seat's observation at every 5th decision of random games: its own only."""
    checked = 0
    for seed in range(3):
        names = ["random", "aggressive", "blitz", "defensive"]
        state = new_game(4, seed, **{"turn-limit": "30"})
        bots = [REGISTRY.bot("risk", n).factory(s, seed * 10 + s) for s, n in enumerate(names)]
        step = 0
        while not state.terminal:
            decision = state.decision()
            if "missions" in state.variant_data and step % 5 == 0:
                check_mission_secrecy(state)
                checked += 1
            action = bots[decision.player].decide(state.observation(decision.player), decision)
            state.apply(decision.player, action)
            step += 1
    assert checked > 50


def test_rule_a_changed_mission_is_told_to_its_holder_only() -> None:
    """During the match a seat receives the events as ``Game.public_event`` shows them:
    a "mission_changed" event reaches its holder and nobody else, not even spectators."""
    changes = 0
    for seed in range(30):
        state = new_game(3, seed)
        for e in play_setup(state):
            if e["e"] != "mission_changed":
                continue
            changes += 1
            holder = e["p"]
            assert GAME.public_event(e, holder) == e
            for seat in (*range(3), None):
                if seat != holder:
                    assert GAME.public_event(e, seat) is None, (seat, e)
        for e in state.initial_events:
            assert "mission" not in json.dumps(e), e
    assert changes >= 2


def test_rule_the_replay_reveals_every_mission_at_the_end() -> None:
    reasons = set()
    for seed, limit in ((3, "200"), (4, "2")):  # a victory and a turn limit
        names = ["aggressive", "defensive", "blitz"]
        bots = [REGISTRY.bot("risk", n).factory(s, seed * 10 + s) for s, n in enumerate(names)]
        rec = play_match(GAME, bots, seed, {"turn-limit": limit}, MISSIONS, names=names)
        events = rec.events
        assert events[-1]["e"] == "game_over"
        assert events[-2] == {
            "e": "missions",
            "missions": rec.final_state.variant_data["missions"]["assigned"],
        }
        assert len(of_kind(events, "missions")) == 1
        dealt = of_kind(events, "missions_dealt")
        assert dealt == [{"e": "missions_dealt", "count": 3}]  # the deal shows no mission
        for e in of_kind(events, "mission_changed"):
            assert e["private"] == e["p"]
        assert verify(rec) == len(rec.steps)
        assert rec.result is not None
        reasons.add(rec.result.reason)
    assert reasons == {EndReason.VICTORY, EndReason.TURN_LIMIT}


def test_rule_mission_games_end_and_verify_with_every_player_count() -> None:
    reasons: dict[str, int] = {}
    for seed, n in enumerate((3, 4, 5, 6)):
        names = ["aggressive", "defensive", "blitz", "random", "aggressive", "blitz"][:n]
        bots = [REGISTRY.bot("risk", nm).factory(s, seed * 10 + s) for s, nm in enumerate(names)]
        rec = play_match(GAME, bots, seed, {"turn-limit": "150"}, MISSIONS, names=names)
        assert rec.result is not None
        reasons[rec.result.reason.value] = reasons.get(rec.result.reason.value, 0) + 1
        assert verify(rec) == len(rec.steps)
    assert reasons.get("victory", 0) >= 3, reasons
