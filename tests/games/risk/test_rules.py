"""One test per rule of the classic (world domination) Risk rules in RULES.md.

Each test is named after the rule it checks. Positions are either played from a new
game or laid out directly with :func:`position`, which assigns the state's public
fields and starts a chosen seat's turn the way the rules engine does.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from fractions import Fraction
from functools import cache
from pathlib import Path

import pytest

from arena.engine.core import EndReason, Event, IllegalAction
from arena.games.risk import cards as cardlib
from arena.games.risk.dice import compare, decode_outcome, outcome_table
from arena.games.risk.game import RiskGame
from arena.games.risk.map import DESIGNS, WILD, load_map, map_option
from arena.games.risk.state import RiskState

MAP = load_map("classic")
WILD_A, WILD_B = MAP.size, MAP.size + 1  # the two wild cards: ids 42 and 43
#: a territory far from the fighting where a test may park its reinforcements
RESERVE = "Madagascar"


def t(name: str) -> int:
    """The index of a classic-map territory."""
    return MAP.index[name]


def card(name: str) -> int:
    """The id of the territory card showing ``name`` (card i shows territory i)."""
    return MAP.index[name]


def cards_of(design: str, count: int, *, skip: Sequence[int] = ()) -> list[int]:
    """``count`` territory cards of one design, avoiding the card ids in ``skip``."""
    d = DESIGNS.index(design)
    found = [c for c in range(MAP.size) if MAP.card_design[c] == d and c not in skip]
    return found[:count]


# --- building positions ---------------------------------------------------------------


def new_game(num_players: int = 3, seed: int = 0, **options: str) -> RiskState:
    return RiskGame().new_state(num_players, seed, options)


def position(
    num_players: int = 3,
    *,
    own: Mapping[str, tuple[int, int]] | None = None,
    rest: Sequence[int] | None = None,
    rest_armies: int = 1,
    hands: Mapping[int, list[int]] | None = None,
    sets_traded: int = 0,
    to_move: int = 0,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
) -> tuple[RiskState, list[Event]]:
    """A laid-out board at the start of ``to_move``'s turn, and that start's events.

    ``own`` maps territory names to (seat, armies); every other territory goes round
    robin to the seats in ``rest`` (default: all seats) with ``rest_armies`` each. A
    seat left with no territory counts as eliminated. Cards in ``hands`` leave the draw
    pile. The turn starts through ``RiskState._begin_turn`` exactly as in play, so the
    returned events hold its "turn" and "reinforcements" events.
    """
    state = RiskGame().new_state(num_players, seed, dict(options or {}))
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
    state.hands = [list((hands or {}).get(seat, [])) for seat in range(num_players)]
    held = {c for hand in state.hands for c in hand}
    state.draw_pile = [c for c in state.draw_pile if c not in held]
    state.discard = []
    state.sets_traded = sets_traded
    state._setup_left = [0] * num_players  # setup is over
    events: list[Event] = []
    state._begin_turn(to_move, events)
    return state, events


def play_setup(state: RiskState) -> list[Event]:
    """Finish the setup: each seat claims/places on the first territory it may."""
    events: list[Event] = []
    while state.decision().kind in ("claim", "setup_place"):
        decision = state.decision()
        kind = "claim" if decision.kind == "claim" else "place"
        territory = decision.options["territories"][0]
        events += state.apply(decision.player, {"type": kind, "territory": territory})
    return events


def place_reinforcements(state: RiskState, where: str | int | None = None) -> list[Event]:
    """Decline an optional trade, then put every reinforcement on one own territory."""
    p = state.player
    events: list[Event] = []
    if state.decision().kind == "trade":
        events += state.apply(p, {"type": "no_trade"})
    target = state.owned(p)[0] if where is None else where
    events += state.apply(p, {"type": "reinforce", "armies": {target: state._reinforce_left}})
    return events


def pass_turn(state: RiskState) -> list[Event]:
    """Play a quiet turn: reinforce on one territory, no attack, no fortify."""
    p = state.player
    events = place_reinforcements(state)
    events += state.apply(p, {"type": "end_attack"})
    events += state.apply(p, {"type": "end_turn"})
    return events


def conquer(state: RiskState, src: str, dst: str, dice: int = 3) -> list[Event]:
    """Attack one roll at a time until ``dst`` falls; returns the events."""
    p = state.player
    events: list[Event] = []
    while state.owner[t(dst)] != p:
        assert state.armies[t(src)] > dice, "the attacking stack ran out; use a bigger one"
        events += state.apply(p, {"type": "attack", "from": src, "to": dst, "dice": dice})
    return events


def of_kind(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["e"] == kind]


def armies_by_seat(state: RiskState) -> list[int]:
    totals = [0] * state.num_players
    for i, seat in enumerate(state.owner):
        totals[seat] += state.armies[i]
    return totals


def rolls_of(event: Event) -> list[tuple[list[int], list[int], int, int]]:
    """(attacker faces, defender faces, attacker losses, defender losses) per roll."""
    out = []
    for faces, code in zip(event["faces"].split(" "), event["rolls"], strict=True):
        att, dfn = faces.split("-")
        al, dl = decode_outcome(code)
        out.append(([int(x) for x in att], [int(x) for x in dfn], al, dl))
    return out


# --- board and pieces -----------------------------------------------------------------


def test_rule_map_has_42_territories_in_6_continents_with_listed_bonuses() -> None:
    """The classic map: 42 territories, 6 continents, bonuses NA 5 SA 2 EU 5 AF 3 AS 7 AU 2."""
    assert MAP.size == 42
    assert len(set(MAP.territories)) == 42
    bonuses = dict(zip(MAP.continents, MAP.continent_bonus, strict=True))
    assert bonuses == {
        "North America": 5,
        "South America": 2,
        "Europe": 5,
        "Africa": 3,
        "Asia": 7,
        "Australia": 2,
    }
    sizes = {MAP.continents[c]: len(m) for c, m in enumerate(MAP.continent_members)}
    assert sizes == {
        "North America": 9,
        "South America": 4,
        "Europe": 7,
        "Africa": 6,
        "Asia": 12,
        "Australia": 4,
    }
    every = sorted(i for members in MAP.continent_members for i in members)
    assert every == list(range(42))  # each territory in exactly one continent


def test_rule_map_has_83_borders() -> None:
    """83 borders, each joining two different territories both ways, one connected world."""
    assert MAP.num_borders == 83
    pairs = {frozenset((a, b)) for a in range(MAP.size) for b in MAP.neighbours[a]}
    assert len(pairs) == 83
    for a in range(MAP.size):
        assert a not in MAP.adjacent[a]
        for b in MAP.neighbours[a]:
            assert a in MAP.adjacent[b]
    seen, todo = {0}, [0]
    while todo:
        for n in MAP.neighbours[todo.pop()]:
            if n not in seen:
                seen.add(n)
                todo.append(n)
    assert len(seen) == 42


def test_rule_alaska_borders_kamchatka_across_the_edge() -> None:
    """Alaska borders Kamchatka: the rules let an army attack across the map's edge."""
    assert t("Kamchatka") in MAP.adjacent[t("Alaska")]
    assert t("Alaska") in MAP.adjacent[t("Kamchatka")]
    state, _ = position(own={"Alaska": (0, 5), "Kamchatka": (1, 1)})
    place_reinforcements(state, "Alaska")
    attacks = state.decision().options["attacks"]
    assert {"from": t("Alaska"), "to": t("Kamchatka"), "max_dice": 3} in attacks
    events = state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3})
    assert of_kind(events, "battle")[0]["to"] == t("Kamchatka")


def test_rule_a_map_is_data_other_maps_load_the_same_way(tmp_path: Path) -> None:
    """Another map file loads through the same option and plays by the same rules."""
    data = {
        "name": "tiny",
        "continents": [
            {"name": "West", "bonus": 1, "territories": ["A", "B", "C"]},
            {"name": "East", "bonus": 4, "territories": ["D", "E", "F"]},
        ],
        "borders": [["A", "B"], ["B", "C"], ["C", "D"], ["D", "E"], ["E", "F"]],
    }
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data))
    state = new_game(3, **{"map": map_option(str(path))})
    assert state.map.territories == ("A", "B", "C", "D", "E", "F")
    assert state.map.continent_bonus == (1, 4)
    assert state.map.num_borders == 5
    assert len(state.draw_pile) == 6 + 2  # one card per territory plus the two wilds
    assert state.decision().options["territories"] == list(range(6))
    play_setup(state)
    assert state.decision().player == 0
    assert armies_by_seat(state) == [35, 35, 35]


def test_rule_44_cards_14_per_design_plus_2_wilds() -> None:
    """42 territory cards (14 infantry, 14 cavalry, 14 artillery, one per territory) + 2 wilds."""
    assert cardlib.deck_size(MAP) == 44
    designs = Counter(cardlib.design_name(MAP, c) for c in range(44))
    assert designs == {"infantry": 14, "cavalry": 14, "artillery": 14, "wild": 2}
    assert cardlib.design(MAP, WILD_A) == cardlib.design(MAP, WILD_B) == WILD
    state = new_game(3)
    assert sorted(state.draw_pile) == list(range(44))


# --- players and starting armies ------------------------------------------------------


@pytest.mark.parametrize(("players", "armies"), [(3, 35), (4, 30), (5, 25), (6, 20)])
def test_rule_starting_armies_35_30_25_20(players: int, armies: int) -> None:
    """3 players get 35 armies each, 4 get 30, 5 get 25, 6 get 20; others need a variant."""
    state = new_game(players)
    assert state.observation(0)["setup_armies_left"] == [armies] * players
    play_setup(state)
    assert armies_by_seat(state) == [armies] * players
    for wrong in (2, 7):
        with pytest.raises(ValueError):
            new_game(wrong)


def test_rule_seat_order_is_the_turn_order() -> None:
    """Turns go round the seats in order, each seat's turn following the previous seat's."""
    state = new_game(4, seed=3)
    play_setup(state)
    seen = []
    for _ in range(9):
        seen.append(state.player)
        pass_turn(state)
    assert seen == [0, 1, 2, 3, 0, 1, 2, 3, 0]


# --- setup ------------------------------------------------------------------------------


def test_rule_claim_setup_one_army_per_turn_on_an_unoccupied_territory() -> None:
    """Claim (default): in turn, each player puts one army on an unclaimed territory."""
    state = new_game(3, seed=1)
    assert state.config.setup == "claim"
    assert state.decision().kind == "claim"
    state.apply(0, {"type": "claim", "territory": "Alaska"})
    assert state.owner[t("Alaska")] == 0 and state.armies[t("Alaska")] == 1
    with pytest.raises(IllegalAction):  # one army per turn: seat 0 must wait
        state.apply(0, {"type": "claim", "territory": "Peru"})
    with pytest.raises(IllegalAction):  # already claimed
        state.apply(1, {"type": "claim", "territory": "Alaska"})
    with pytest.raises(IllegalAction):  # no reinforcing own territories while some are free
        state.apply(1, {"type": "place", "territory": "Alaska"})
    assert t("Alaska") not in state.decision().options["territories"]
    movers = [0]
    while state.decision().kind == "claim":
        movers.append(state.player)
        state.apply(state.player, {"type": "claim", "territory": state.owner.index(-1)})
    assert len(movers) == 42
    assert movers == [k % 3 for k in range(42)]
    assert all(armies == 1 for armies in state.armies)
    assert state.territory_count == [14, 14, 14]


def test_rule_claim_setup_then_one_army_at_a_time_on_own_territories() -> None:
    """Once all 42 are claimed, players place one more army at a time, in turn, on their own."""
    state = new_game(4, seed=2)
    for _ in range(42):
        state.apply(state.player, {"type": "claim", "territory": state.owner.index(-1)})
    # 42 claims over 4 seats: seats 0 and 1 claimed 11, the 42nd claim was seat 1's.
    assert state.decision().kind == "setup_place"
    assert state.player == 2
    foreign = state.owned(3)[0]
    with pytest.raises(IllegalAction):
        state.apply(2, {"type": "place", "territory": foreign})
    mine = state.owned(2)[0]
    before = state.armies[mine]
    events = state.apply(2, {"type": "place", "territory": mine})
    assert events == [{"e": "place", "p": 2, "t": mine}]
    assert state.armies[mine] == before + 1
    assert state.player == 3
    order = [2]
    while state.decision().kind == "setup_place":
        order.append(state.player)
        state.apply(state.player, {"type": "place", "territory": state.owned(state.player)[0]})
    # seats 0 and 1 have 19 armies to place, seats 2 and 3 have 20: 78 placements in turn
    assert len(order) == 78
    assert order[:76] == [(2 + k) % 4 for k in range(76)]
    assert order[76:] == [2, 3]
    assert armies_by_seat(state) == [30, 30, 30, 30]


@pytest.mark.parametrize("setup", ["claim", "deal"])
def test_rule_first_player_is_seat_0_who_placed_the_first_army(setup: str) -> None:
    """Seat 0 places the first army, and seat 0 takes the first turn."""
    state = new_game(5, seed=4, setup=setup)
    assert state.decision().player == 0
    events = play_setup(state)
    first = next(e for e in events if e["e"] in ("claim", "place"))
    assert first["p"] == 0
    turn = of_kind(events, "turn")
    assert turn == [{"e": "turn", "p": 0, "turn": 1, "round": 1}]
    assert state.player == 0 and state.decision().kind in ("trade", "reinforce")


@pytest.mark.parametrize(
    ("players", "counts"),
    [(3, [14] * 3), (4, [11, 11, 10, 10]), (5, [9, 9, 8, 8, 8]), (6, [7] * 6)],
)
def test_rule_deal_setup_deals_all_42_round_the_table_one_army_each(
    players: int, counts: list[int]
) -> None:
    """Deal: all 42 territory cards dealt round the table (4-5 players: two get one extra)."""
    state = new_game(players, seed=5, setup="deal")
    deals = of_kind(state.initial_events, "deal")
    assert [len(e["t"]) for e in deals] == counts
    dealt = sorted(i for e in deals for i in e["t"])
    assert dealt == list(range(42))
    assert state.territory_count == counts
    for e in deals:
        for i in e["t"]:
            assert state.owner[i] == e["p"]
            assert state.armies[i] == 1
    assert all(w not in dealt for w in (WILD_A, WILD_B))


def test_rule_deal_setup_places_the_rest_one_at_a_time_in_turn() -> None:
    """Deal: after the dealt armies, players place their remaining armies one at a time in turn."""
    state = new_game(5, seed=6, setup="deal")
    assert state.decision().kind == "setup_place"
    assert state.observation(0)["setup_armies_left"] == [16, 16, 17, 17, 17]
    order = []
    while state.decision().kind == "setup_place":
        order.append(state.player)
        state.apply(state.player, {"type": "place", "territory": state.owned(state.player)[0]})
    assert order == [k % 5 for k in range(80)] + [2, 3, 4]
    assert armies_by_seat(state) == [25] * 5


def test_rule_deal_setup_shuffles_the_wilds_back_into_the_draw_pile() -> None:
    """Deal: nobody keeps a card; the draw pile is all 42 territory cards plus both wilds."""
    state = new_game(4, seed=7, setup="deal")
    assert state.hands == [[], [], [], []]
    assert sorted(state.draw_pile) == list(range(44))
    assert WILD_A in state.draw_pile and WILD_B in state.draw_pile
    other = new_game(4, seed=8, setup="deal")
    assert other.draw_pile != state.draw_pile  # shuffled, by the seed


# --- reinforcements -------------------------------------------------------------------


@pytest.mark.parametrize("count", [1, 5, 8, 9, 11, 12, 14, 17, 18, 29, 30, 36])
def test_rule_reinforcements_are_territories_div_3_at_least_3(count: int) -> None:
    """Reinforcements = max(3, territories owned // 3), before continents and cards."""
    last = {members[-1] for members in MAP.continent_members}
    no_continent = [MAP.territories[i] for i in range(MAP.size) if i not in last]
    own = {name: (0, 1) for name in no_continent[:count]}
    state, events = position(own=own, rest=(1, 2))
    expected = max(3, count // 3)
    assert of_kind(events, "reinforcements") == [
        {"e": "reinforcements", "p": 0, "total": expected, "breakdown": [["territories", expected]]}
    ]
    assert state.decision().options["armies"] == expected


@pytest.mark.parametrize("continent", list(range(6)))
def test_rule_reinforcements_add_the_bonus_of_each_continent_wholly_owned(continent: int) -> None:
    """A wholly owned continent adds its bonus, listed in the breakdown; a partial one adds 0."""
    members = MAP.continent_members[continent]
    name, bonus = MAP.continents[continent], MAP.continent_bonus[continent]
    own = {MAP.territories[i]: (0, 2) for i in members}
    state, events = position(own=own, rest=(1, 2))
    base = max(3, len(members) // 3)
    [event] = of_kind(events, "reinforcements")
    assert event["breakdown"] == [["territories", base], [name, bonus]]
    assert event["total"] == base + bonus
    assert state.decision().options["armies"] == base + bonus
    own[MAP.territories[members[0]]] = (1, 2)  # one territory short: no bonus
    _, events = position(own=own, rest=(1, 2))
    [event] = of_kind(events, "reinforcements")
    assert event["breakdown"] == [["territories", 3]]
    assert event["total"] == 3


def test_rule_continent_bonus_counts_continents_held_at_the_start_of_the_turn() -> None:
    """A continent completed during a turn pays its bonus at the start of the next turn."""
    own = {
        "Siam": (0, 30),
        "Indonesia": (1, 1),
        "New-Guinea": (0, 1),
        "Western-Australia": (0, 1),
        "Eastern-Australia": (0, 1),
    }
    state, events = position(own=own, rest=(1, 2))
    first = of_kind(events, "reinforcements")[0]
    assert first["breakdown"] == [["territories", 3]]
    place_reinforcements(state, "Siam")
    events = conquer(state, "Siam", "Indonesia")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": state.decision().options["min"]})
    assert state.decision().kind == "attack"
    assert state._reinforce_left == 0  # nothing added during the turn
    state.apply(0, {"type": "end_attack"})
    events = state.apply(0, {"type": "end_turn"})
    events += pass_turn(state)  # seat 1
    events += pass_turn(state)  # seat 2
    assert state.player == 0
    second = next(e for e in of_kind(events, "reinforcements") if e["p"] == 0)
    assert second["breakdown"] == [["territories", 3], ["Australia", 2]]
    assert second["total"] == 5


def test_rule_reinforcements_are_placed_on_own_territories() -> None:
    """All the reinforcements must be placed, and only on the player's own territories."""
    state, _ = position(own={"Alaska": (0, 1), "Kamchatka": (1, 1)}, rest=(1, 2))
    total = state.decision().options["armies"]
    assert total == 3  # Alaska alone
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "reinforce", "armies": {"Kamchatka": total}})
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "reinforce", "armies": {"Alaska": total - 1}})
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "reinforce", "armies": {"Alaska": total + 1}})
    assert state.armies[t("Alaska")] == 1  # refused actions change nothing
    state.apply(0, {"type": "reinforce", "armies": {"Alaska": total}})
    assert state.armies[t("Alaska")] == 1 + total
    assert state.decision().kind == "attack"


# --- cards ------------------------------------------------------------------------------


def test_rule_card_sets_three_of_a_design_one_of_each_or_two_plus_a_wild() -> None:
    """Sets of 3: three of one design, one of each design, or any two plus a wild."""
    inf, cav, art = cards_of("infantry", 3), cards_of("cavalry", 3), cards_of("artillery", 3)
    for good in (inf, cav, art, [inf[0], cav[0], art[0]]):
        assert cardlib.is_set(MAP, good), good
    for pair in ([inf[0], inf[1]], [inf[0], cav[0]], [cav[1], art[2]], [WILD_A, art[0]]):
        assert cardlib.is_set(MAP, [*pair, WILD_B]), pair
    for bad in ([inf[0], inf[1], cav[0]], [cav[0], cav[1], art[0]], [art[0], art[1], inf[2]]):
        assert not cardlib.is_set(MAP, bad), bad
    assert not cardlib.is_set(MAP, inf[:2])  # a set is three cards
    # In play: a non-set is refused, a set is accepted.
    hand = [*inf, cav[0]]
    state, _ = position(own={"Alaska": (0, 1)}, hands={0: hand})
    assert state.decision().kind == "trade"
    assert state.decision().options["sets"] == [sorted(inf)]
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "trade", "cards": [inf[0], inf[1], cav[0]]})
    state.apply(0, {"type": "trade", "cards": inf})
    assert state.hands[0] == [cav[0]]
    # Two cards of different designs and no wild: no set, so no trade is offered.
    state, _ = position(hands={0: [inf[0], inf[1], cav[0], cav[1]]})
    assert state.decision().kind == "reinforce"


def test_rule_set_values_are_4_6_8_10_12_15_then_5_more_each() -> None:
    """The n-th set traded is worth 4, 6, 8, 10, 12, 15, 20, 25, 30, ..."""
    expected = [4, 6, 8, 10, 12, 15, 20, 25, 30, 35]
    assert [cardlib.progressive_value(k) for k in range(10)] == expected
    hand = [card("Peru"), card("Brazil"), card("Argentina")]  # one of each design
    for traded, value in enumerate(expected):
        state, _ = position(
            own={"Alaska": (0, 1)}, rest=(1, 2), hands={0: hand}, sets_traded=traded
        )
        assert state.decision().options["next_set_value"] == value
        [event] = state.apply(0, {"type": "trade", "cards": hand})
        assert event["value"] == value
        assert state._reinforce_left == 3 + value  # Alaska alone: 3, plus the set
        assert state.sets_traded == traded + 1


def test_rule_set_values_count_the_sets_anyone_has_traded() -> None:
    """The value goes by the number of sets traded by all players, not by the trader."""
    hand0 = [card("Alaska"), card("Alberta"), card("North-West-Territory")]
    hand1 = [card("Peru"), card("Brazil"), card("Argentina")]
    state, _ = position(hands={0: hand0, 1: hand1})
    [trade0] = state.apply(0, {"type": "trade", "cards": hand0})
    assert trade0["value"] == 4
    pass_turn(state)
    assert state.player == 1
    assert state.decision().options["next_set_value"] == 6
    events = state.apply(1, {"type": "trade", "cards": hand1})
    assert events[0]["value"] == 6
    assert state.sets_traded == 2


def test_rule_traded_card_of_an_owned_territory_gives_2_extra_armies_there() -> None:
    """A traded card showing a territory the trader owns puts 2 extra armies on it."""
    hand = [card("Alaska"), card("Peru"), card("Alberta")]  # one of each design
    assert cardlib.is_set(MAP, hand)
    own = {"Alaska": (0, 3), "Peru": (1, 1), "Alberta": (2, 1)}
    state, _ = position(own=own, hands={0: hand})
    before = state._reinforce_left
    with pytest.raises(IllegalAction):  # Peru is on a traded card but is not seat 0's
        state.apply(0, {"type": "trade", "cards": hand, "bonus": "Peru"})
    [event] = state.apply(0, {"type": "trade", "cards": hand})
    assert event["bonus"] == t("Alaska")
    assert state.armies[t("Alaska")] == 5
    assert state.armies[t("Peru")] == 1 and state.armies[t("Alberta")] == 1
    assert state._reinforce_left == before + 4  # the 2 extra are not reinforcements
    # No owned territory on the cards: no extra armies.
    own = {"Alaska": (1, 3), "Peru": (1, 1), "Alberta": (2, 1)}
    state, _ = position(own=own, hands={0: hand})
    board = state.armies[:]
    [event] = state.apply(0, {"type": "trade", "cards": hand})
    assert "bonus" not in event
    assert state.armies == board


def test_rule_at_most_2_extra_armies_from_traded_cards_per_turn() -> None:
    """However many traded cards show owned territories, only 2 extra armies per turn."""
    first = [card("Alaska"), card("North-West-Territory"), card("Alberta")]
    second = [card("Peru"), card("Brazil"), card("Argentina")]
    own = {name: (0, 1) for name in ("Alaska", "North-West-Territory", "Alberta")}
    own |= {name: (0, 1) for name in ("Peru", "Brazil", "Argentina")}
    state, _ = position(own=own, rest=(1, 2), hands={0: first + second})
    start = state._reinforce_left
    board = state.armies[:]
    events = state.apply(0, {"type": "trade", "cards": first, "bonus": "Alberta"})
    assert events[0]["bonus"] == t("Alberta")
    assert state.decision().kind == "trade"
    events = state.apply(0, {"type": "trade", "cards": second})
    assert "bonus" not in events[0]
    changed = {i: a - b for i, (a, b) in enumerate(zip(state.armies, board, strict=True)) if a != b}
    assert changed == {t("Alberta"): 2}
    assert state._reinforce_left == start + 4 + 6


def test_rule_a_set_may_be_traded_at_the_start_of_the_turn() -> None:
    """With a set and fewer than 5 cards, trading is the player's choice."""
    hand = [card("Peru"), card("Brazil"), card("Argentina"), card("Alaska")]
    state, _ = position(own={"Egypt": (0, 1)}, rest=(1, 2), hands={0: hand})
    options = state.decision().options
    assert state.decision().kind == "trade"
    assert options["must_trade"] is False
    state.apply(0, {"type": "no_trade"})
    assert state.decision().kind == "reinforce"
    assert state.hands[0] == hand and state._reinforce_left == 3
    place_reinforcements(state, "Egypt")
    with pytest.raises(IllegalAction):  # only at the start of the turn
        state.apply(0, {"type": "trade", "cards": hand[:3]})
    assert state.hands[0] == hand


@pytest.mark.parametrize("size", [5, 6])
def test_rule_5_or_6_cards_at_the_start_of_the_turn_force_a_trade(size: int) -> None:
    """Holding 5 or 6 cards at the start of the turn forces at least one trade."""
    hand = cards_of("infantry", 3) + cards_of("cavalry", size - 3)
    state, _ = position(hands={0: hand})
    assert state.decision().kind == "trade"
    assert state.decision().options["must_trade"] is True
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "no_trade"})
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "reinforce", "armies": {state.owned(0)[0]: 4}})
    state.apply(0, {"type": "trade", "cards": cards_of("infantry", 3)})
    assert len(state.hands[0]) == size - 3
    if state.decision().kind == "trade":  # 3 cavalry left: another set, now optional
        assert state.decision().options["must_trade"] is False
        state.apply(0, {"type": "no_trade"})
    assert state.decision().kind == "reinforce"


def test_rule_a_second_set_may_be_traded() -> None:
    """After the forced trade a second set may also be traded in the same turn."""
    first = cards_of("artillery", 3)
    second = [card("Peru"), card("Brazil"), card("Argentina")]
    state, _ = position(own={"Egypt": (0, 1)}, rest=(1, 2), hands={0: first + second})
    e1 = state.apply(0, {"type": "trade", "cards": first})
    assert state.decision().kind == "trade"
    e2 = state.apply(0, {"type": "trade", "cards": second})
    assert [e1[0]["value"], e2[0]["value"]] == [4, 6]
    assert state.hands[0] == []
    assert state.decision().kind == "reinforce"
    assert state._reinforce_left == 3 + 4 + 6


def test_rule_traded_cards_go_to_the_discard_reshuffled_when_the_draw_pile_runs_out() -> None:
    """Traded cards go to the discard; an empty draw pile is refilled from the discard."""
    hand = [card("Peru"), card("Brazil"), card("Argentina")]
    own = {"Alaska": (0, 30), "Kamchatka": (1, 1)}
    state, _ = position(own=own, hands={0: hand}, seed=11)
    state.draw_pile = []
    state.apply(0, {"type": "trade", "cards": hand})
    assert sorted(state.discard) == sorted(hand)
    assert state.hands[0] == []
    place_reinforcements(state, "Alaska")
    conquer(state, "Alaska", "Kamchatka")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": state.decision().options["min"]})
    events = state.apply(0, {"type": "end_attack"})
    assert of_kind(events, "reshuffle") == [{"e": "reshuffle", "cards": 3}]
    [draw] = of_kind(events, "draw")
    assert draw["card"] in hand
    assert state.hands[0] == [draw["card"]]
    assert sorted(state.draw_pile + state.hands[0]) == sorted(hand)
    assert state.discard == []


# --- attack -----------------------------------------------------------------------------


def test_rule_attack_from_an_own_territory_with_at_least_2_armies() -> None:
    """An attack starts from an own territory holding at least 2 armies."""
    own = {"Alaska": (0, 1), "Alberta": (0, 2), "Kamchatka": (1, 5), "Ontario": (1, 1)}
    state, _ = position(own=own | {RESERVE: (0, 1)}, rest=(1, 2))
    state.apply(0, {"type": "reinforce", "armies": {RESERVE: state._reinforce_left}})
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 1})
    with pytest.raises(IllegalAction):  # not one's own territory
        state.apply(0, {"type": "attack", "from": "Kamchatka", "to": "Alaska", "dice": 1})
    sources = {a["from"] for a in state.decision().options["attacks"]}
    assert t("Alaska") not in sources and t("Alberta") in sources
    events = state.apply(0, {"type": "attack", "from": "Alberta", "to": "Ontario", "dice": 1})
    assert of_kind(events, "battle")[0]["from"] == t("Alberta")


def test_rule_attack_only_an_adjacent_enemy_territory() -> None:
    """The target must border the attacking territory and belong to someone else."""
    own = {"Alaska": (0, 10), "Alberta": (0, 1), "Kamchatka": (1, 1), "Japan": (1, 1)}
    state, _ = position(own=own, rest=(1, 2))
    place_reinforcements(state, "Alaska")
    for target in ("Japan", "Alberta"):  # not adjacent; own territory
        with pytest.raises(IllegalAction):
            state.apply(0, {"type": "attack", "from": "Alaska", "to": target, "dice": 1})
    targets = {a["to"] for a in state.decision().options["attacks"] if a["from"] == t("Alaska")}
    assert targets == {t("Kamchatka"), t("North-West-Territory")}


@pytest.mark.parametrize("armies", [2, 3, 4, 5, 9])
def test_rule_attacker_rolls_at_most_3_dice_and_fewer_than_its_armies(armies: int) -> None:
    """The attacker rolls 1 to 3 dice and needs at least one more army than dice rolled."""
    own = {"Alaska": (0, armies), "Kamchatka": (1, 20), RESERVE: (0, 1)}
    state, _ = position(own=own, rest=(1, 2), options={"dice": "faces"})
    state.apply(0, {"type": "reinforce", "armies": {RESERVE: state._reinforce_left}})
    most = min(3, armies - 1)
    options = state.decision().options["attacks"]
    [option] = [a for a in options if (a["from"], a["to"]) == (t("Alaska"), t("Kamchatka"))]
    assert option["max_dice"] == most
    for dice in (0, most + 1, 4):
        with pytest.raises(IllegalAction):
            state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": dice})
    for dice in range(1, most + 1):
        trial = state.clone()
        events = trial.apply(
            0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": dice}
        )
        [(att, _dfn, _al, _dl)] = rolls_of(events[0])
        assert len(att) == dice


@pytest.mark.parametrize(("defenders", "dice"), [(1, 1), (2, 2), (7, 2)])
def test_rule_defender_rolls_2_dice_only_with_at_least_2_armies(defenders: int, dice: int) -> None:
    """The defender rolls 1 die with one army, 2 dice with two or more."""
    own = {"Alaska": (0, 10), "Kamchatka": (1, defenders), RESERVE: (0, 1)}
    for seed in range(5):
        state, _ = position(own=own, rest=(1, 2), seed=seed, options={"dice": "faces"})
        place_reinforcements(state, RESERVE)
        for att_dice in (1, 3):
            trial = state.clone()
            events = trial.apply(
                0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": att_dice}
            )
            [(_att, dfn, _al, _dl)] = rolls_of(events[0])
            assert len(dfn) == dice


def test_rule_ties_go_to_the_defender() -> None:
    """Highest die against highest, second against second; a tie is won by the defender."""
    assert compare([3], [3]) == (1, 0)
    assert compare([6, 6, 6], [6, 6]) == (2, 0)
    assert compare([5, 4], [5, 3]) == (1, 1)
    assert compare([1, 6, 2], [5, 2]) == (1, 1)  # pairs 6-5 and 2-2, whatever the order
    assert compare([6, 5, 1], [5, 4]) == (0, 2)
    # Recorded faces in play agree with the tie rule, roll after roll.
    state, _ = position(
        own={"Alaska": (0, 400), "Kamchatka": (1, 400), RESERVE: (0, 1)},
        rest=(1, 2),
        options={"dice": "faces"},
    )
    place_reinforcements(state, RESERVE)
    events = state.apply(
        0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3, "until": 200}
    )
    [battle] = of_kind(events, "battle")
    ties = 0
    for att, dfn, al, dl in rolls_of(battle):
        assert att == sorted(att, reverse=True) and dfn == sorted(dfn, reverse=True)
        expect_al = expect_dl = 0
        for a, d in zip(att, dfn, strict=False):
            if a > d:
                expect_dl += 1
            else:
                expect_al += 1
                ties += a == d
        assert (al, dl) == (expect_al, expect_dl)
    assert ties > 0
    rolls = rolls_of(battle)
    assert battle["att_loss"] == sum(r[2] for r in rolls) == 400 - state.armies[t("Alaska")]
    assert battle["def_loss"] == sum(r[3] for r in rolls) == 400 - state.armies[t("Kamchatka")]


def test_rule_at_most_2_armies_are_lost_per_roll() -> None:
    """Each roll compares min(attacker dice, defender dice) pairs: at most 2 losses in all."""
    for a in (1, 2, 3):
        for d in (1, 2):
            table = outcome_table(a, d)
            assert sum(table.values()) == 1
            for al, dl in table:
                assert al + dl == min(a, d) <= 2
    for dist in ("distribution", "faces"):
        state, _ = position(
            own={"Alaska": (0, 300), "Kamchatka": (1, 300), RESERVE: (0, 1)},
            rest=(1, 2),
            options={"dice": dist},
        )
        place_reinforcements(state, RESERVE)
        events = state.apply(
            0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3, "until": 100}
        )
        [battle] = of_kind(events, "battle")
        for code in battle["rolls"]:
            al, dl = decode_outcome(code)
            assert al + dl == 2


def test_rule_published_battle_odds() -> None:
    """The dice tables give the published one-roll odds and whole-battle odds."""
    assert outcome_table(3, 2) == {
        (0, 2): Fraction(2890, 7776),
        (1, 1): Fraction(2611, 7776),
        (2, 0): Fraction(2275, 7776),
    }
    assert outcome_table(2, 2) == {
        (0, 2): Fraction(295, 1296),
        (1, 1): Fraction(420, 1296),
        (2, 0): Fraction(581, 1296),
    }
    assert outcome_table(3, 1)[(0, 1)] == Fraction(855, 1296)
    assert outcome_table(2, 1)[(0, 1)] == Fraction(125, 216)
    assert outcome_table(1, 2)[(0, 1)] == Fraction(55, 216)
    assert outcome_table(1, 1)[(0, 1)] == Fraction(15, 36)

    @cache
    def takes(a: int, d: int) -> Fraction:
        if d == 0:
            return Fraction(1)
        if a == 0:
            return Fraction(0)
        table = outcome_table(min(3, a), min(2, d))
        return sum((p * takes(a - al, d - dl) for (al, dl), p in table.items()), Fraction(0))

    published = {(3, 2): 0.656, (5, 5): 0.506, (10, 10): 0.568, (20, 20): 0.633}
    for (a, d), odds in published.items():
        assert round(float(takes(a, d)), 3) == odds


def test_rule_conquest_moves_in_at_least_the_last_roll_dice_leaving_one_behind() -> None:
    """Taking the last army captures the territory; move in >= last dice, leave >= 1."""
    own = {"Alaska": (0, 12), "Kamchatka": (1, 1), RESERVE: (0, 1)}
    state, _ = position(own=own, rest=(1, 2), seed=3)
    place_reinforcements(state, RESERVE)
    count = state.territory_count[:]
    events = conquer(state, "Alaska", "Kamchatka", dice=2)
    assert of_kind(events, "conquer") == [
        {"e": "conquer", "p": 0, "from": t("Alaska"), "to": t("Kamchatka"), "prev": 1}
    ]
    assert state.owner[t("Kamchatka")] == 0
    assert state.territory_count == [count[0] + 1, count[1] - 1, count[2]]
    assert state.armies[t("Kamchatka")] == 0
    left = state.armies[t("Alaska")]
    assert state.decision().kind == "move_in"
    assert state.decision().options == {
        "from": t("Alaska"),
        "to": t("Kamchatka"),
        "min": 2,
        "max": left - 1,
    }
    for wrong in (1, left, 0):
        with pytest.raises(IllegalAction):
            state.apply(0, {"type": "move_in", "armies": wrong})
    with pytest.raises(IllegalAction):  # no attacking before the move-in
        state.apply(0, {"type": "attack", "from": "Alaska", "to": "North-West-Territory"})
    state.apply(0, {"type": "move_in", "armies": left - 1})
    assert (state.armies[t("Alaska")], state.armies[t("Kamchatka")]) == (1, left - 1)
    assert state.decision().kind == "attack"
    # When only the minimum can move (4 armies, 3 dice), the move happens by itself.
    for seed in range(40):
        own = {"Alaska": (0, 4), "Kamchatka": (1, 1), RESERVE: (0, 1)}
        state, _ = position(own=own, rest=(1, 2), seed=seed)
        place_reinforcements(state, RESERVE)
        events = state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3})
        if state.owner[t("Kamchatka")] == 0:
            break
    else:
        pytest.fail("no seed gave a first-roll conquest")
    assert of_kind(events, "move_in")[0]["armies"] == 3
    assert (state.armies[t("Alaska")], state.armies[t("Kamchatka")]) == (1, 3)
    assert state.decision().kind == "attack"


# --- drawing a card ---------------------------------------------------------------------


def test_rule_exactly_one_card_drawn_at_the_end_of_a_turn_with_a_conquest() -> None:
    """One card, and only one, however many territories were captured."""
    own = {"Alaska": (0, 40), "Kamchatka": (1, 1), "North-West-Territory": (2, 1)}
    state, _ = position(own=own, rest=(0, 1, 2), seed=5)
    place_reinforcements(state, "Alaska")
    for target in ("Kamchatka", "North-West-Territory"):
        conquer(state, "Alaska", target)
        if state.decision().kind == "move_in":
            state.apply(0, {"type": "move_in", "armies": state.decision().options["min"]})
    assert state.hands[0] == []
    top = state.draw_pile[-1]
    pile = len(state.draw_pile)
    events = state.apply(0, {"type": "end_attack"})
    assert of_kind(events, "draw") == [{"e": "draw", "p": 0, "card": top}]
    assert state.hands[0] == [top]
    assert len(state.draw_pile) == pile - 1
    events = state.apply(0, {"type": "end_turn"})
    assert state.hands[0] == [top] and not of_kind(events, "draw")


def test_rule_no_card_at_the_end_of_a_turn_without_a_conquest() -> None:
    """A turn with attacks but no capture ends without a card."""
    state, _ = position(own={"Alaska": (0, 5), "Kamchatka": (1, 30), RESERVE: (0, 1)}, rest=(1, 2))
    place_reinforcements(state, RESERVE)
    state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3})
    assert state.owner[t("Kamchatka")] == 1
    pile = state.draw_pile[:]
    events = state.apply(0, {"type": "end_attack"})
    assert not of_kind(events, "draw")
    assert state.hands[0] == [] and state.draw_pile == pile


def test_rule_no_card_ever_with_option_cards_none() -> None:
    """With cards=none ("no spoils") a conquest draws no card."""
    own = {"Alaska": (0, 30), "Kamchatka": (1, 1)}
    state, _ = position(own=own, rest=(1, 2), options={"cards": "none"})
    place_reinforcements(state, "Alaska")
    conquer(state, "Alaska", "Kamchatka")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": 3})
    pile = len(state.draw_pile)
    events = state.apply(0, {"type": "end_attack"})
    assert not of_kind(events, "draw")
    assert state.hands[0] == [] and len(state.draw_pile) == pile


# --- fortify and the next turn ------------------------------------------------------------


def test_rule_fortify_once_to_an_adjacent_own_territory_leaving_one() -> None:
    """One move from one own territory to one adjacent own territory, leaving at least 1."""
    own = {
        "Alaska": (0, 6),
        "Alberta": (0, 1),
        "Kamchatka": (1, 1),
        "Ontario": (0, 1),
        "North-West-Territory": (0, 1),
        RESERVE: (0, 1),
    }
    state, _ = position(own=own, rest=(1, 2))
    place_reinforcements(state, RESERVE)
    state.apply(0, {"type": "end_attack"})
    assert state.decision().kind == "fortify"
    bad = [
        {"from": "Alaska", "to": "Ontario", "armies": 2},  # own but not adjacent
        {"from": "Alaska", "to": "Kamchatka", "armies": 2},  # adjacent but an enemy's
        {"from": "Alaska", "to": "Alberta", "armies": 6},  # nobody left behind
        {"from": "Alaska", "to": "Alberta", "armies": 0},
        {"from": "Alberta", "to": "Alaska", "armies": 1},  # 1 army: nothing can move
    ]
    for move in bad:
        with pytest.raises(IllegalAction):
            state.apply(0, {"type": "fortify", **move})
    assert state.armies[t("Alaska")] == 6 and state.armies[t("Alberta")] == 1
    events = state.apply(0, {"type": "fortify", "from": "Alaska", "to": "Alberta", "armies": 5})
    assert of_kind(events, "fortify")[0]["armies"] == 5
    assert (state.armies[t("Alaska")], state.armies[t("Alberta")]) == (1, 6)
    assert state.player == 1  # the move ends the turn: no second fortify
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "fortify", "from": "Alberta", "to": "Ontario", "armies": 1})


def test_rule_the_turn_passes_to_the_left() -> None:
    """After a turn the next seat plays, wrapping round and skipping eliminated seats."""
    state, _ = position(4, own={}, rest=(0, 2, 3), to_move=2)
    assert state.alive == [True, False, True, True]
    seen = [state.player]
    for _ in range(4):
        events = pass_turn(state)
        seen.append(state.player)
        assert of_kind(events, "turn")[0]["p"] == state.player
    assert seen == [2, 3, 0, 2, 3]


# --- elimination and winning --------------------------------------------------------------


def test_rule_eliminating_a_player_hands_over_all_their_cards() -> None:
    """Taking a player's last territory gives the attacker every card they held."""
    loser_cards = [card("Peru"), WILD_A]
    own = {"Alaska": (0, 30), "Kamchatka": (2, 1)}
    state, _ = position(own=own, rest=(0, 1), hands={0: [card("Egypt")], 2: loser_cards})
    place_reinforcements(state, "Alaska")
    events = conquer(state, "Alaska", "Kamchatka")
    assert of_kind(events, "eliminate") == [{"e": "eliminate", "p": 2, "by": 0, "cards": 2}]
    assert state.hands[2] == []
    assert sorted(state.hands[0]) == sorted([card("Egypt"), *loser_cards])
    assert state.alive == [True, True, False] and state.eliminated == [2]
    assert not state.terminal


@pytest.mark.parametrize(("mine", "taken", "trades"), [(3, 3, 1), (4, 3, 1), (4, 4, 2)])
def test_rule_elimination_with_6_or_more_cards_trades_down_to_4_at_once(
    mine: int, taken: int, trades: int
) -> None:
    """6+ cards after an elimination: trade at once until 4 or fewer, place, keep attacking."""
    deck = [c for c in range(MAP.size) if c not in (t("Alaska"), t("Kamchatka"))]
    own_cards = deck[:mine]
    loser_cards = deck[mine : mine + taken]
    own = {"Alaska": (0, 30), "Kamchatka": (2, 1), "North-West-Territory": (1, 3)}
    state, _ = position(own=own, rest=(0, 1), hands={0: own_cards, 2: loser_cards})
    if state.decision().kind == "trade":
        state.apply(0, {"type": "no_trade"})
    place_reinforcements(state, "Alaska")
    conquer(state, "Alaska", "Kamchatka")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": 5})
    values = []
    for _ in range(trades):
        decision = state.decision()
        assert decision.kind == "trade"
        assert decision.options["must_trade"] is True
        with pytest.raises(IllegalAction):
            state.apply(0, {"type": "no_trade"})
        events = state.apply(0, {"type": "trade", "cards": decision.options["sets"][0]})
        [event] = of_kind(events, "trade")
        values.append(event["value"])
    assert len(state.hands[0]) == mine + taken - 3 * trades <= 4
    assert values == [4, 6][:trades]
    assert state.decision().kind == "reinforce"
    assert state.decision().options["armies"] == sum(values)
    state.apply(0, {"type": "reinforce", "armies": {"Kamchatka": sum(values)}})
    assert state.decision().kind == "attack"
    events = state.apply(0, {"type": "attack", "from": "Alaska", "to": "North-West-Territory"})
    assert of_kind(events, "battle")


def test_rule_elimination_with_fewer_than_6_cards_waits_for_the_next_turn() -> None:
    """Below 6 cards after an elimination there is no trade until the player's next turn."""
    mine = [card("Peru"), card("Brazil"), card("Argentina")]  # a set
    loser_cards = [card("Egypt"), card("Congo")]
    own = {"Alaska": (0, 30), "Kamchatka": (2, 1)}
    state, _ = position(own=own, rest=(0, 1), hands={0: mine, 2: loser_cards})
    state.apply(0, {"type": "no_trade"})
    place_reinforcements(state, "Alaska")
    conquer(state, "Alaska", "Kamchatka")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": 3})
    assert state.decision().kind == "attack"
    assert len(state.hands[0]) == 5
    assert state._reinforce_left == 0
    state.apply(0, {"type": "end_attack"})  # a conquest: one more card, 6
    state.apply(0, {"type": "end_turn"})
    pass_turn(state)  # seat 1; seat 2 is out
    assert state.player == 0
    assert state.decision().kind == "trade"
    assert state.decision().options["must_trade"] is True


def test_rule_world_domination_eliminating_every_opponent_wins() -> None:
    """The last player left wins; the others are placed by order of elimination."""
    own = {"Alaska": (0, 40), "Kamchatka": (1, 1), "Alberta": (2, 1)}
    state, _ = position(own=own, rest=(0,), seed=2)
    place_reinforcements(state, "Alaska")
    conquer(state, "Alaska", "Kamchatka")
    if state.decision().kind == "move_in":
        state.apply(0, {"type": "move_in", "armies": 3})
    assert not state.terminal and state.result() is None
    events = conquer(state, "Alaska", "Alberta")
    assert state.terminal
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.VICTORY
    assert result.places == (1, 3, 2)  # seat 2 went out last: second
    assert result.winners == (0,)
    assert of_kind(events, "game_over") == [
        {"e": "game_over", "reason": "victory", "places": [1, 3, 2]}
    ]
    assert state.owner == [0] * 42
    with pytest.raises(IllegalAction):
        state.apply(0, {"type": "end_attack"})


def test_rule_turn_limit_ends_the_game_with_the_survivors_tied() -> None:
    """With turn-limit=N the game ends after N rounds; the survivors share first place."""
    state = new_game(3, seed=9, **{"turn-limit": "2"})
    play_setup(state)
    for _ in range(5):
        pass_turn(state)
        assert not state.terminal
    events = pass_turn(state)
    assert state.terminal
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.TURN_LIMIT
    assert result.places == (1, 1, 1)
    assert of_kind(events, "game_over")[0]["reason"] == "turn_limit"
    # An eliminated seat does not share the tie.
    state, _ = position(4, own={}, rest=(0, 1, 2), options={"turn-limit": "1"})
    pass_turn(state)
    pass_turn(state)
    assert not state.terminal
    pass_turn(state)
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.TURN_LIMIT
    assert result.places == (1, 1, 1, 4)
