"""Capital (headquarters) Risk (RULES.md, Risk, Variants): one test per rule.

Games are created through the registry as ``arena play --variant capital`` does;
positions are laid out with :func:`position` (board, hands and revealed headquarters
assigned directly, then a seat's turn started as the engine does).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from arena.engine.core import EndReason, Event, IllegalAction
from arena.engine.match import play_match
from arena.engine.replay import verify
from arena.games.risk.map import DESIGNS, load_map
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
CAPITAL = REGISTRY.resolve_variants("risk", ["capital"])
MAP = load_map("classic")


def t(name: str) -> int:
    return MAP.index[name]


card = t  # card i shows territory i


def of_kind(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["e"] == kind]


def new_game(num_players: int = 3, seed: int = 0, **options: str) -> RiskState:
    return GAME.new_state(num_players, seed, options, CAPITAL)


def play_setup(state: RiskState) -> list[Event]:
    events: list[Event] = []
    while state.decision().kind == "setup_place":
        d = state.decision()
        events += state.apply(d.player, {"type": "place", "territory": d.options["territories"][0]})
    return events


def position(
    num_players: int,
    hq: Sequence[str],
    *,
    own: Mapping[str, tuple[int, int]] | None = None,
    rest: Sequence[int] | None = None,
    hands: Mapping[int, list[int]] | None = None,
    to_move: int = 0,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
) -> tuple[RiskState, list[Event]]:
    """A board with the headquarters ``hq`` revealed, at the start of ``to_move``'s turn.

    Each headquarters starts with its seat (1 army) unless ``own`` says otherwise; the
    other territories go round robin to the seats in ``rest`` (default: all), 1 army each.
    """
    state = GAME.new_state(num_players, seed, dict(options or {}), CAPITAL)
    placed = {name: (seat, 1) for seat, name in enumerate(hq)}
    placed.update(own or {})
    seats = list(rest) if rest is not None else list(range(num_players))
    state.owner = [-1] * MAP.size
    state.armies = [0] * MAP.size
    for name, (seat, armies) in placed.items():
        state.owner[t(name)] = seat
        state.armies[t(name)] = armies
    unlisted = [i for i in range(MAP.size) if state.owner[i] < 0]
    for k, i in enumerate(unlisted):
        state.owner[i] = seats[k % len(seats)]
        state.armies[i] = 1
    state.territory_count = [state.owner.count(seat) for seat in range(num_players)]
    state.alive = [count > 0 for count in state.territory_count]
    state.eliminated = [seat for seat in range(num_players) if not state.alive[seat]]
    state.hands = [list((hands or {}).get(seat, [])) for seat in range(num_players)]
    held = {c for hand in state.hands for c in hand}
    state.draw_pile = [c for c in state.draw_pile if c not in held]
    state._setup_left = [0] * num_players
    state.variant_data["capital"] = {"hq": [t(name) for name in hq], "revealed": True}
    state.untradable = {t(name) for name in hq}
    state._custom = None
    events: list[Event] = []
    state._begin_turn(to_move, events)
    return state, events


def reinforce(state: RiskState, where: str) -> list[Event]:
    p = state.player
    events: list[Event] = []
    if state.decision().kind == "trade":
        events += state.apply(p, {"type": "no_trade"})
    return events + state.apply(
        p, {"type": "reinforce", "armies": {where: state.decision().options["armies"]}}
    )


def capture(state: RiskState, src: str, dst: str) -> list[Event]:
    p = state.player
    events: list[Event] = []
    while state.owner[t(dst)] != p and not state.terminal:
        assert state.armies[t(src)] > 3
        events += state.apply(p, {"type": "attack", "from": src, "to": dst, "dice": 3})
    if not state.terminal and state.decision().kind == "move_in":
        events += state.apply(p, {"type": "move_in", "armies": state.decision().options["min"]})
    return events


def full_snapshot(state: RiskState) -> dict[str, Any]:
    return {
        "owner": state.owner[:],
        "armies": state.armies[:],
        "hands": [h[:] for h in state.hands],
        "discard": state.discard[:],
        "variant_data": copy.deepcopy(state.variant_data),
        "untradable": set(state.untradable),
        "player": state.player,
        "decision": state.decision().to_json(),
        "rng": state.rng.getstate(),
        "reinforce_left": state._reinforce_left,
    }


# --- setup and the secret picks ---------------------------------------------------------


def test_rule_capital_forces_the_deal_setup() -> None:
    state = new_game(4, seed=2)
    assert state.config.setup == "deal"
    assert [e["p"] for e in of_kind(state.initial_events, "deal")] == [0, 1, 2, 3]
    assert state.decision().kind == "setup_place"
    with pytest.raises(ValueError, match=r"deal setup, not setup=claim"):
        new_game(3, setup="claim")


@pytest.mark.parametrize("num_players", [3, 4, 5, 6])
def test_rule_after_placement_each_player_in_seat_order_picks_a_headquarters(
    num_players: int,
) -> None:
    state = new_game(num_players, seed=num_players)
    events = play_setup(state)
    assert not of_kind(events, "turn"), "play began before the headquarters were picked"
    for seat in range(num_players):
        decision = state.decision()
        assert (decision.kind, decision.player) == ("headquarters", seat)
        assert decision.options == {"territories": state.owned(seat)}
        mine = state.owned(seat)
        events = state.apply(seat, {"type": "headquarters", "territory": mine[-1]})
    assert of_kind(events, "turn")[0]["p"] == 0
    assert state.decision().kind in ("trade", "reinforce")
    assert state.variant_data["capital"]["hq"] == [state.owned(s)[-1] for s in range(num_players)]


@pytest.mark.parametrize(
    ("pick", "message"),
    [
        ("theirs", "is not yours"),
        ("Atlantis", "unknown territory"),
        (None, "unknown territory"),
    ],
)
def test_rule_a_headquarters_must_be_one_of_your_territories(
    pick: str | None, message: str
) -> None:
    state = new_game(3, seed=5)
    play_setup(state)
    state.apply(0, {"type": "headquarters", "territory": state.owned(0)[0]})
    territory: Any = state.owned(2)[0] if pick == "theirs" else pick
    before = full_snapshot(state)
    with pytest.raises(IllegalAction, match=message):
        state.apply(1, {"type": "headquarters", "territory": territory})
    assert full_snapshot(state) == before
    with pytest.raises(IllegalAction, match="not allowed in the headquarters decision"):
        state.apply(1, {"type": "place", "territory": state.owned(1)[0]})
    with pytest.raises(IllegalAction, match="not your turn"):
        state.apply(2, {"type": "headquarters", "territory": state.owned(2)[0]})
    assert full_snapshot(state) == before


def test_rule_headquarters_stay_secret_until_everyone_has_picked() -> None:
    n = 4
    state = new_game(n, seed=8)
    play_setup(state)
    picks = [state.owned(seat)[seat] for seat in range(n)]
    for k in range(n):
        # Before seat k picks: every seat sees its own pick (if made), nobody else's.
        for seat in range(n):
            obs = json.loads(json.dumps(state.observation(seat)))
            own = picks[seat] if seat < k else None
            assert obs["headquarters"] == [own if s == seat else None for s in range(n)]
            assert obs["headquarters_needed"] == n - 1
            # Non-interference: other picks moved elsewhere change nothing this seat sees.
            text = json.dumps(state.observation(seat), sort_keys=True)
            other = state.clone()
            data = other.variant_data["capital"]
            for q in range(k):
                if q != seat:
                    data["hq"][q] = state.owned(q)[(seat + 5) % len(state.owned(q))]
            assert json.dumps(other.observation(seat), sort_keys=True) == text
        events = state.apply(k, {"type": "headquarters", "territory": picks[k]})
        assert of_kind(events, "headquarters_picked") == [{"e": "headquarters_picked", "p": k}]
    # The last pick reveals them all, together, to everyone.
    assert of_kind(events, "headquarters") == [{"e": "headquarters", "hq": picks}]
    kinds = [e["e"] for e in events]
    assert kinds.index("headquarters_picked") < kinds.index("headquarters") < kinds.index("turn")
    for seat in range(n):
        assert json.loads(json.dumps(state.observation(seat)))["headquarters"] == picks


def test_rule_the_picked_events_never_show_the_territory() -> None:
    names = ["aggressive", "defensive", "blitz", "random"]
    bots = [REGISTRY.bot("risk", n).factory(s, s) for s, n in enumerate(names)]
    rec = play_match(GAME, bots, 3, {"turn-limit": "5"}, CAPITAL, names=names)
    picked = of_kind(rec.events, "headquarters_picked")
    assert [e["p"] for e in picked] == [0, 1, 2, 3]
    assert all(set(e) == {"e", "p"} for e in picked)
    (reveal,) = of_kind(rec.events, "headquarters")
    assert reveal["hq"] == rec.final_state.variant_data["capital"]["hq"]
    assert verify(rec) == len(rec.steps)


# --- headquarters cards -------------------------------------------------------------------


HQ3 = ("Alaska", "Kamchatka", "Brazil")  # infantry, cavalry, artillery cards


def test_rule_headquarters_cards_cannot_be_traded_in_sets() -> None:
    assert [DESIGNS[MAP.card_design[card(n)]] for n in HQ3] == ["infantry", "cavalry", "artillery"]
    cavalry = [card("Peru"), card("Iceland"), card("Madagascar")]
    hand = [card("Kamchatka"), *cavalry]  # an opponent's headquarters and 3 cavalry
    state, _ = position(3, HQ3, hands={0: hand})
    decision = state.decision()
    assert decision.kind == "trade"
    assert decision.options["sets"] == [sorted(cavalry)]
    before = full_snapshot(state)
    with pytest.raises(IllegalAction, match="may not be traded"):
        state.apply(
            0, {"type": "trade", "cards": [card("Kamchatka"), card("Peru"), card("Iceland")]}
        )
    assert full_snapshot(state) == before
    # Your own headquarters card is no more usable.
    own_hq = [card("Alaska"), card("Venezuela"), card("Argentina")]  # three infantry
    state, _ = position(3, HQ3, hands={0: own_hq})
    assert state.decision().kind == "reinforce", "a set with a headquarters card was offered"
    with pytest.raises(IllegalAction, match="not allowed in the reinforce phase"):
        state.apply(0, {"type": "trade", "cards": own_hq})


def test_rule_every_headquarters_card_is_held_back_from_the_reveal_on() -> None:
    state = new_game(3, seed=4)
    play_setup(state)
    picks = [state.owned(seat)[0] for seat in range(3)]
    for seat in range(3):
        assert state.untradable == set(), "cards held back before the reveal"
        state.apply(seat, {"type": "headquarters", "territory": picks[seat]})
    assert state.untradable == set(picks)


def test_rule_a_forced_trade_never_takes_a_headquarters_card() -> None:
    cavalry = [card("Peru"), card("Iceland"), card("Madagascar")]
    infantry = [card("Venezuela"), card("Argentina")]
    hand = [card("Kamchatka"), *cavalry, *infantry]  # 6 cards: a trade is forced
    state, _ = position(3, HQ3, hands={0: hand})
    decision = state.decision()
    assert decision.kind == "trade" and decision.options["must_trade"]
    assert decision.options["sets"]
    assert all(card("Kamchatka") not in s for s in decision.options["sets"])
    with pytest.raises(IllegalAction, match="may not be traded"):
        state.apply(0, {"type": "trade", "cards": [card("Kamchatka"), *infantry]})
    state.apply(0, {"type": "trade", "cards": cavalry})
    assert card("Kamchatka") in state.hands[0]
    # Five cards whose tradable part holds no set: no trade is asked, the turn goes on.
    hand = [card("Kamchatka"), card("Alaska"), card("Peru"), card("Iceland"), card("Venezuela")]
    state, _ = position(3, HQ3, hands={0: hand})
    assert state.decision().kind == "reinforce"
    reinforce(state, MAP.territories[state.owned(0)[0]])
    assert state.decision().kind == "attack"


def test_capital_five_cards_with_headquarters_forces_trade() -> None:
    """Holding 5 cards at the start of the turn forces a trade, headquarters cards
    counted: two of them, and Peru, North Africa and Ural (cavalry, artillery, infantry:
    a set) make 5, so the set must be traded; the headquarters cards stay."""
    hq_cards = [card("Kamchatka"), card("Brazil")]
    tradable = [card("Peru"), card("North-Africa"), card("Ural")]
    state, _ = position(3, HQ3, hands={0: [*hq_cards, *tradable]})
    decision = state.decision()
    assert decision.kind == "trade"
    assert decision.options["must_trade"], "the headquarters cards were not counted"
    assert decision.options["sets"] == [sorted(tradable)]
    before = full_snapshot(state)
    with pytest.raises(IllegalAction, match="must trade a set: you began the turn with 5"):
        state.apply(0, {"type": "no_trade"})
    assert full_snapshot(state) == before
    state.apply(0, {"type": "trade", "cards": tradable})
    assert sorted(state.hands[0]) == sorted(hq_cards)
    assert state.decision().kind == "reinforce"
    # Four cards, one of them a headquarters card: the set is a choice.
    state, _ = position(3, HQ3, hands={0: [card("Kamchatka"), *tradable]})
    decision = state.decision()
    assert decision.kind == "trade" and not decision.options["must_trade"]


def eliminate_green_with(hand_0: list[int], hand_2: list[int]) -> tuple[RiskState, list[Event]]:
    """Seat 0 takes Brazil, seat 2's only territory, from Venezuela, and with it seat
    2's cards; returns the state after the move-in and that conquest's events."""
    own = {"Venezuela": (0, 30)}
    state, _ = position(3, HQ3, own=own, rest=(0, 1), hands={0: hand_0, 2: hand_2})
    assert state.territory_count[2] == 1
    reinforce(state, "Venezuela")
    events = capture(state, "Venezuela", "Brazil")
    assert state.alive == [True, True, False] and not state.terminal
    return state, events


def test_capital_trade_down_stops_when_no_tradable_set() -> None:
    """An elimination brings 8 cards (all three headquarters cards among them): trading
    down to 4 or fewer stops once no set of tradable cards is left, at 5 cards here;
    with 6 cards and no tradable set at all, no trade is asked. Nothing gets stuck."""
    hq_cards = [card(name) for name in HQ3]
    cavalry = [card("Peru"), card("Iceland"), card("Madagascar")]
    infantry = [card("Venezuela"), card("Argentina")]
    state, events = eliminate_green_with([*hq_cards, cavalry[0]], [*cavalry[1:], *infantry])
    assert of_kind(events, "eliminate")[0]["cards"] == 4
    decision = state.decision()
    assert decision.kind == "trade" and decision.options["must_trade"]
    assert decision.options["sets"] == [sorted(cavalry)]
    state.apply(0, {"type": "trade", "cards": cavalry})
    assert sorted(state.hands[0]) == sorted([*hq_cards, *infantry])  # 5 cards, no set
    decision = state.decision()
    assert decision.kind == "reinforce", "the trade-down went on without a set"
    state.apply(0, {"type": "reinforce", "armies": {"Brazil": decision.options["armies"]}})
    assert state.decision().kind == "attack"
    # 6 cards after the elimination, only 3 tradable, not a set: the attack goes on.
    state, _ = eliminate_green_with(hq_cards, [cavalry[0], cavalry[1], infantry[0]])
    assert len(state.hands[0]) == 6
    assert state.decision().kind == "attack"
    state.apply(0, {"type": "end_attack"})
    state.apply(0, {"type": "end_turn"})
    assert state.player == 1 and not state.terminal


def test_regression_capital_five_cards_with_two_headquarters_cards_must_trade() -> None:
    """Issue #18: seat 2 held 5 cards, two of them headquarters cards, and a set; its
    ``no_trade`` was accepted (``arena play risk --players random,blitz,defensive
    --variant capital``, a seed of the first generator). Now it must trade: seed 0 comes
    to that position at step 293, with the set Alberta, Central America, Egypt."""
    names = ["random", "blitz", "defensive"]
    seed = 0
    bots = [REGISTRY.bot("risk", nm).factory(s, seed * 1000 + s) for s, nm in enumerate(names)]
    rec = play_match(GAME, bots, seed, {}, CAPITAL, names=names)
    assert verify(rec) == len(rec.steps)
    state = new_game(3, seed)
    for seat, action, _ in rec.steps[:293]:
        state.apply(seat, action)
    decision = state.decision()
    assert (decision.kind, decision.player) == ("trade", 2)
    hand = state.hands[2]
    assert len(hand) == 5 and len([c for c in hand if c in state.untradable]) == 2
    expected = sorted([card("Alberta"), card("Central-America"), card("Egypt")])
    assert decision.options["must_trade"] and decision.options["sets"] == [expected]
    with pytest.raises(IllegalAction, match="must trade a set"):
        state.apply(2, {"type": "no_trade"})
    assert rec.steps[293][:2] == [2, {"type": "trade", "cards": expected}]


# --- winning --------------------------------------------------------------------------------


def test_rule_win_by_holding_every_opposing_headquarters_and_your_own() -> None:
    own = {"Kamchatka": (0, 3), "Venezuela": (0, 30)}  # seat 1's HQ already taken
    state, _ = position(3, HQ3, own=own)
    reinforce(state, "Venezuela")
    assert not state.terminal, "one opposing headquarters of two is not enough"
    capture(state, "Venezuela", "Brazil")
    assert state.terminal
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.VICTORY and result.winners == (0,)
    assert result.places == (1, 2, 2)
    assert "holds 2 opposing headquarters and its own" in result.detail
    assert state.alive == [True, True, True]


def test_rule_no_win_while_your_own_headquarters_is_lost() -> None:
    own = {
        "Alaska": (1, 1),  # seat 0's own headquarters, held by seat 1
        "Kamchatka": (0, 3),
        "Venezuela": (0, 30),
        "Alberta": (0, 30),
    }
    state, _ = position(3, HQ3, own=own)
    reinforce(state, "Venezuela")
    capture(state, "Venezuela", "Brazil")
    assert state.owner[t("Brazil")] == 0 and state.owner[t("Kamchatka")] == 0
    assert not state.terminal, "won without its own headquarters"
    capture(state, "Alberta", "Alaska")
    assert state.terminal
    result = state.result()
    assert result is not None and result.winners == (0,)


def test_rule_losing_your_headquarters_does_not_eliminate_you() -> None:
    own = {"Alaska": (0, 30)}
    state, _ = position(3, HQ3, own=own)
    assert state.territory_count[1] > 1
    reinforce(state, "Alaska")
    events = capture(state, "Alaska", "Kamchatka")
    assert state.owner[t("Kamchatka")] == 0
    assert not of_kind(events, "eliminate")
    assert state.alive == [True, True, True]
    state.apply(0, {"type": "end_attack"})
    events = state.apply(0, {"type": "end_turn"})
    assert of_kind(events, "turn")[0]["p"] == 1, "seat 1 lost its turn with its headquarters"
    assert not state.terminal


HQ6 = ("Alaska", "Kamchatka", "Brazil", "Egypt", "Iceland", "Siam")


@pytest.mark.parametrize(
    ("num_players", "short", "held", "needed"),
    [
        (3, "on", 1, 2),
        (3, "on", 2, 2),
        (4, "on", 1, 2),
        (4, "on", 2, 2),
        (4, "off", 2, 3),
        (4, "off", 3, 3),
        (5, "on", 2, 3),
        (5, "on", 3, 3),
        (5, "off", 3, 4),
        (5, "off", 4, 4),
        (6, "on", 2, 3),
        (6, "on", 3, 3),
        (6, "off", 4, 5),
        (6, "off", 5, 5),
    ],
)
def test_rule_short_capital_any_2_of_4_players_any_3_of_5_or_6(
    num_players: int, short: str, held: int, needed: int
) -> None:
    """Seat 0 holds its own and ``held`` opposing headquarters when its turn starts."""
    hq = HQ6[:num_players]
    own = {name: (0, 2) for name in hq[1 : 1 + held]}
    state, _ = position(num_players, hq, own=own, options={"short-capital": short})
    assert all(state.alive)
    assert state.observation(0)["headquarters_needed"] == needed
    reinforce(state, "Alaska")
    assert state.terminal == (held >= needed)
    if state.terminal:
        result = state.result()
        assert result is not None and result.winners == (0,)
        assert f"holds {held} opposing headquarters" in result.detail


def test_rule_short_capital_needs_the_capital_variant() -> None:
    with pytest.raises(
        ValueError, match="option short-capital belongs to a variant: add --variant capital"
    ):
        REGISTRY.check_options("risk", {"short-capital": "on"}, [])
    REGISTRY.check_options("risk", {"short-capital": "on"}, CAPITAL)  # accepted with it
    with pytest.raises(ValueError, match="unknown option"):
        GAME.new_state(4, 0, {"short-capital": "on"}, [])
    assert new_game(4, 0, **{"short-capital": None}).options["short-capital"] == "on"


def test_rule_capital_games_end_by_headquarters_and_verify() -> None:
    details = []
    for seed, n in enumerate((3, 4, 5, 6)):
        names = ["aggressive", "defensive", "blitz", "random", "aggressive", "blitz"][:n]
        bots = [REGISTRY.bot("risk", nm).factory(s, seed * 10 + s) for s, nm in enumerate(names)]
        options = {"turn-limit": "150", "short-capital": "on" if seed % 2 else "off"}
        rec = play_match(GAME, bots, seed, options, CAPITAL, names=names)
        assert rec.result is not None
        details.append(rec.result.detail)
        assert verify(rec) == len(rec.steps)
    assert sum("opposing headquarters" in d for d in details) >= 3, details
