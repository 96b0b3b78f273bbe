"""Illegal decisions: one exception type, a message that helps, and no change at all.

Every refused action must raise :class:`IllegalAction` whose message names what was
wrong (the territory, the number) and, where there is one, what is allowed; the state
(every seat's observation, the hidden state and the random generator) must be exactly
as before, and the game must go on exactly as it would have without the attempt.
"""

from __future__ import annotations

import copy
import json
import random
from typing import Any

import pytest

from arena.engine.core import IllegalAction
from arena.games.risk.map import load_map
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

GAME = load_registry().game("risk")
MAP = load_map("classic")
T = MAP.index  # territory name -> index

ALASKA, NWT, ALBERTA, GREENLAND = (
    T["Alaska"],
    T["North-West-Territory"],
    T["Alberta"],
    T["Greenland"],
)
KAMCHATKA, BRAZIL, ARGENTINA = T["Kamchatka"], T["Brazil"], T["Argentina"]


# --- helpers ---------------------------------------------------------------------------------


def frozen(state: RiskState) -> dict[str, Any]:
    """Everything observable and hidden about the state, deep-copied."""
    out = {
        "observations": [json.dumps(state.observation(p)) for p in range(state.num_players)],
        "rng": state.rng.getstate(),
        "decision": (state.decision().player, state.decision().kind, state.decision().options),
    }
    for name in RiskState.__slots__:
        if name not in ("map", "config", "hooks", "rng"):
            out[name] = copy.deepcopy(getattr(state, name))
    return out


def simple_action(state: RiskState) -> dict[str, Any]:
    """A fixed legal action that keeps the game moving without attacking."""
    decision = state.decision()
    opts = decision.options
    kind = decision.kind
    if kind == "claim":
        return {"type": "claim", "territory": opts["territories"][0]}
    if kind == "setup_place":
        return {"type": "place", "territory": opts["territories"][-1]}
    if kind == "trade":
        return {"type": "trade", "cards": opts["sets"][0]}
    if kind == "reinforce":
        return {"type": "reinforce", "armies": {opts["territories"][0]: opts["armies"]}}
    if kind == "attack":
        return {"type": "end_attack"}
    if kind == "move_in":
        return {"type": "move_in", "armies": opts["min"]}
    if kind == "fortify":
        return {"type": "end_turn"}
    raise AssertionError(kind)


def assert_illegal(
    state: RiskState, player: int | None, action: Any, *fragments: str
) -> IllegalAction:
    """``action`` is refused with a message holding ``fragments``; nothing changes."""
    player = state.current_player if player is None else player
    before = frozen(state)
    twin = state.clone()
    with pytest.raises(IllegalAction) as info:
        state.apply(player, action)
    exc = info.value
    assert type(exc) is IllegalAction
    message = str(exc)
    for fragment in fragments:
        assert fragment in message, f"{fragment!r} not in the message {message!r}"
    assert frozen(state) == before, f"the refused action {action!r} changed the state"
    # and the game goes on exactly as if nothing had been tried (checked on a copy, so
    # that the caller can try more on the same position)
    if not state.terminal:
        after = state.clone()
        legal = simple_action(after)
        assert after.apply(after.current_player, copy.deepcopy(legal)) == twin.apply(
            twin.current_player, legal
        )
        assert frozen(after) == frozen(twin)
    return exc


def set_territory(state: RiskState, t: int, seat: int, armies: int) -> None:
    """Test setup: give territory ``t`` to ``seat`` with ``armies`` (keeping counts right)."""
    old = state.owner[t]
    if old >= 0:
        state.territory_count[old] -= 1
    state.owner[t] = seat
    state.territory_count[seat] += 1
    state.armies[t] = armies


def give_hand(state: RiskState, seat: int, cards: list[int]) -> None:
    """Test setup: ``seat`` holds exactly ``cards``; every card stays somewhere once."""
    state.draw_pile.extend(state.hands[seat])
    state.hands[seat].clear()
    for pile in [state.draw_pile, state.discard, *state.hands]:
        pile[:] = [c for c in pile if c not in cards]
    state.hands[seat].extend(cards)
    assert sorted(state.draw_pile + state.discard + [c for h in state.hands for c in h]) == list(
        range(44)
    )


def game(seed: int = 1, **options: str) -> RiskState:
    return GAME.new_state(3, seed, {"setup": "deal", **options})


def advance_to(state: RiskState, kind: str, seat: int | None = None) -> RiskState:
    for _ in range(10_000):
        decision = state.decision()
        if decision.kind == kind and (seat is None or decision.player == seat):
            return state
        state.apply(decision.player, simple_action(state))
    raise AssertionError(f"never reached a {kind} decision")


def attack_board() -> tuple[RiskState, int, int]:
    """Seat 0 attacking, with a known corner of the map.

    Seat 0: Alaska 5, North-West-Territory 1, Alberta 1. Seat 1: Kamchatka 3,
    Greenland 2, Brazil 2.
    """
    state = advance_to(game(), "attack")
    p = state.current_player
    q = (p + 1) % 3
    for t, seat, armies in [
        (ALASKA, p, 5),
        (NWT, p, 1),
        (ALBERTA, p, 1),
        (KAMCHATKA, q, 3),
        (GREENLAND, q, 2),
        (BRAZIL, q, 2),
    ]:
        set_territory(state, t, seat, armies)
    assert state.territory_count[q] > 3
    return state, p, q


# --- whose turn, which phase -----------------------------------------------------------------


def test_not_your_turn_in_setup():
    state = game()
    assert state.decision().kind == "setup_place" and state.current_player == 0
    own = state.owned(1)[0]
    assert_illegal(
        state, 1, {"type": "place", "territory": own}, "not your turn", "seat 1", "seat 0"
    )


def test_not_your_turn_in_attack():
    state, p, q = attack_board()
    exc = assert_illegal(
        state, q, {"type": "attack", "from": KAMCHATKA, "to": ALASKA, "dice": 1}, "not your turn"
    )
    assert f"seat {q} acted but seat {p} is to move" in str(exc)


def test_wrong_phase_attack_during_reinforce():
    state = advance_to(game(), "reinforce")
    own = state.owned(state.current_player)
    exc = assert_illegal(
        state,
        None,
        {"type": "attack", "from": own[0], "to": own[1], "dice": 1},
        "'attack'",
        "reinforce phase",
    )
    assert exc.allowed == "reinforce"


def test_wrong_phase_reinforce_during_attack():
    state, _, _ = attack_board()
    exc = assert_illegal(
        state, None, {"type": "reinforce", "armies": {"Alaska": 3}}, "'reinforce'", "attack phase"
    )
    assert "attack" in exc.allowed and "end_attack" in exc.allowed


def test_wrong_phase_claim_after_setup_and_anything_after_the_end():
    state = advance_to(game(), "setup_place")
    assert_illegal(state, None, {"type": "claim", "territory": 0}, "'claim'", "setup_place")
    over = GAME.new_state(3, 2, {"setup": "deal", "turn-limit": "1"})
    while not over.terminal:
        over.apply(over.current_player, simple_action(over))
    assert_illegal(over, over.current_player, {"type": "end_turn"}, "the game is over")


# --- attacks ---------------------------------------------------------------------------------


def test_attack_across_a_border_that_does_not_exist():
    state, _, _ = attack_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "attack", "from": "Alaska", "to": "Brazil", "dice": 1},
        "Alaska does not border Brazil",
    )
    assert exc.allowed is not None
    for neighbour in ("North-West-Territory", "Alberta", "Kamchatka"):
        assert neighbour in exc.allowed


def test_attack_your_own_territory():
    state, _, _ = attack_board()
    assert_illegal(
        state, None, {"type": "attack", "from": ALASKA, "to": ALBERTA, "dice": 1}, "Alberta", "own"
    )


def test_attack_from_a_territory_with_one_army():
    state, _, _ = attack_board()
    assert_illegal(
        state,
        None,
        {"type": "attack", "from": NWT, "to": GREENLAND, "dice": 1},
        "North-West-Territory",
        "1 army",
        "at least 2",
    )


def test_attack_from_an_enemy_territory():
    state, _, _ = attack_board()
    assert_illegal(
        state,
        None,
        {"type": "attack", "from": KAMCHATKA, "to": ALASKA, "dice": 1},
        "Kamchatka is not yours",
    )


@pytest.mark.parametrize("dice", [4, 0, -1, "3", 2.0, True, None])
def test_attack_with_impossible_dice(dice):
    state, _, _ = attack_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "attack", "from": ALASKA, "to": KAMCHATKA, "dice": dice},
        f"cannot roll {dice!r} dice from Alaska with 5 armies",
    )
    assert exc.allowed is not None and "1 to 3 dice" in exc.allowed


def test_attack_with_more_dice_than_armies_minus_one():
    state, _, _ = attack_board()
    state.armies[ALASKA] = 3
    exc = assert_illegal(
        state,
        None,
        {"type": "attack", "from": ALASKA, "to": KAMCHATKA, "dice": 3},
        "cannot roll 3 dice from Alaska with 3 armies",
    )
    assert "1 to 2 dice" in exc.allowed


@pytest.mark.parametrize("until", [0, 5, 9, "1", 1.5])
def test_attack_with_a_bad_until(until):
    state, _, _ = attack_board()
    assert_illegal(
        state,
        None,
        {"type": "attack", "from": ALASKA, "to": KAMCHATKA, "dice": 3, "until": until},
        "'until'",
        "from 1 to 4",
        repr(until),
    )


# --- move-in ---------------------------------------------------------------------------------


def captured_board() -> tuple[RiskState, dict[str, int]]:
    state, p, _ = attack_board()
    state.armies[ALASKA] = 12
    state.armies[KAMCHATKA] = 1
    state.apply(p, {"type": "attack", "from": ALASKA, "to": KAMCHATKA, "dice": 3, "until": 1})
    decision = state.decision()
    assert decision.kind == "move_in", "12 armies against 1 should capture"
    return state, decision.options


def test_move_in_below_the_dice_rolled_or_above_all_but_one():
    state, opts = captured_board()
    lo, hi = opts["min"], opts["max"]
    assert lo == 3 and hi == state.armies[ALASKA] - 1
    allowed = f"{lo} to {hi} armies"
    for n in (lo - 1, hi + 1, 0):
        exc = assert_illegal(
            state, None, {"type": "move_in", "armies": n}, f"cannot move {n} armies into Kamchatka"
        )
        assert allowed in exc.allowed


@pytest.mark.parametrize("armies", ["3", None, 3.0, [3]])
def test_move_in_with_a_malformed_count(armies):
    state, opts = captured_board()
    exc = assert_illegal(
        state, None, {"type": "move_in", "armies": armies}, repr(armies), "Kamchatka"
    )
    assert f"{opts['min']} to {opts['max']}" in exc.allowed


def test_attack_while_a_move_in_is_pending():
    state, _ = captured_board()
    assert_illegal(
        state,
        None,
        {"type": "attack", "from": ALASKA, "to": NWT, "dice": 1},
        "'attack'",
        "move_in phase",
    )


# --- fortify ---------------------------------------------------------------------------------


def fortify_board() -> RiskState:
    state, p, _ = attack_board()
    set_territory(state, BRAZIL, p, 4)
    state.apply(p, {"type": "end_attack"})
    assert state.decision().kind == "fortify"
    return state


@pytest.mark.parametrize("armies", [5, 6, 0, -2])
def test_fortify_that_would_leave_no_army_behind(armies):
    state = fortify_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "fortify", "from": ALASKA, "to": ALBERTA, "armies": armies},
        f"cannot move {armies} armies from Alaska with 5 armies",
    )
    assert "1 to 4 armies" in exc.allowed


def test_fortify_from_a_territory_with_one_army():
    state = fortify_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "fortify", "from": ALBERTA, "to": ALASKA, "armies": 1},
        "Alberta with 1 armies",
    )
    assert "cannot fortify" in exc.allowed


def test_fortify_between_territories_that_do_not_border():
    state = fortify_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "fortify", "from": "Alaska", "to": "Brazil", "armies": 1},
        "Alaska does not border Brazil",
    )
    assert "adjacent" in exc.allowed


def test_fortify_into_an_enemy_territory():
    state = fortify_board()
    assert_illegal(
        state,
        None,
        {"type": "fortify", "from": ALASKA, "to": KAMCHATKA, "armies": 1},
        "your own territories",
    )


# --- cards -----------------------------------------------------------------------------------

# Designs on the classic map go infantry, cavalry, artillery in file order: card i is
# design i % 3; cards 42 and 43 are wild.
INF = [0, 3, 6, 9]
CAV = [1, 4, 7]
ART = [2, 5, 8]


def trade_board(hand: list[int]) -> RiskState:
    """The next seat starts its turn holding ``hand``."""
    state = advance_to(game(), "fortify")
    nxt = (state.current_player + 1) % 3
    give_hand(state, nxt, hand)
    state.apply(state.current_player, {"type": "end_turn"})
    assert state.current_player == nxt and state.decision().kind == "trade"
    return state


def test_trading_cards_that_are_not_a_set():
    state = trade_board([INF[0], INF[1], INF[2], CAV[0]])
    assert not state.decision().options["must_trade"]
    exc = assert_illegal(
        state,
        None,
        {"type": "trade", "cards": [INF[0], INF[1], CAV[0]]},
        "not a set",
        "infantry, infantry, cavalry",
    )
    assert "three of one design" in exc.allowed and "wild" in exc.allowed


def test_trading_cards_you_do_not_hold():
    hand = [INF[0], INF[1], INF[2], CAV[0]]
    state = trade_board(hand)
    assert INF[3] not in hand
    assert_illegal(
        state,
        None,
        {"type": "trade", "cards": [INF[0], INF[1], INF[3]]},
        str([INF[0], INF[1], INF[3]]),
        "your hand",
        str(sorted(hand)),
    )
    # the same card twice is not three cards either
    assert_illegal(
        state, None, {"type": "trade", "cards": [INF[0], INF[0], INF[1]]}, "3 different cards"
    )


@pytest.mark.parametrize("cards", [[0, 3], [0, 3, 6, 1], "0,3,6", None, [0, 3, "6"], [0.0, 3, 6]])
def test_trade_with_malformed_cards(cards):
    state = trade_board([INF[0], INF[1], INF[2], CAV[0]])
    exc = assert_illegal(state, None, {"type": "trade", "cards": cards}, "'cards'", repr(cards))
    assert "sets in the decision's options" in exc.allowed


def test_trade_bonus_on_a_territory_not_on_the_cards():
    state = trade_board([INF[0], INF[1], INF[2], CAV[0]])
    p = state.current_player
    owned_on_cards = [c for c in INF[:3] if state.owner[c] == p]
    other = next(t for t in state.owned(p) if t not in INF[:3])
    exc = assert_illegal(
        state,
        None,
        {"type": "trade", "cards": INF[:3], "bonus": other},
        f"bonus territory {MAP.territories[other]}",
    )
    for c in owned_on_cards:
        assert MAP.territories[c] in exc.allowed


def test_a_bonus_naming_an_unknown_territory_is_refused_even_once_the_bonus_is_used():
    """Every action is validated completely: a bogus ``bonus`` is refused on any trade."""
    state = advance_to(game(), "fortify")
    nxt = (state.current_player + 1) % 3
    own = state.owned(nxt)
    others = [t for t in range(42) if t not in own]
    first = [own[0], others[0], 42]  # any two plus a wild
    second = [others[1], others[2], 43]
    give_hand(state, nxt, first + second)
    state.apply(state.current_player, {"type": "end_turn"})
    assert state.decision().kind == "trade" and state.decision().options["must_trade"]
    # while the bonus is available, an unknown territory is refused ...
    assert_illegal(
        state, None, {"type": "trade", "cards": first, "bonus": "Atlantis"}, "'Atlantis'"
    )
    events = state.apply(nxt, {"type": "trade", "cards": first, "bonus": own[0]})
    assert events[0]["bonus"] == own[0]
    assert state.decision().kind == "trade"
    # ... and once this turn's 2 bonus armies are used, it must still be refused
    assert_illegal(
        state,
        None,
        {"type": "trade", "cards": second, "bonus": "Atlantis"},
        "unknown territory 'Atlantis'",
    )


def test_declining_a_forced_trade_at_five_cards():
    state = trade_board([INF[0], INF[1], INF[2], CAV[0], CAV[1]])
    assert state.decision().options["must_trade"]
    exc = assert_illegal(state, None, {"type": "no_trade"}, "must trade", "5 or more cards")
    assert exc.allowed == "trade"


def test_declining_the_trade_down_after_an_elimination():
    state, p, q = attack_board()
    # seat q is down to Kamchatka alone and holds 2 cards; seat p holds 4
    for t in state.owned(q):
        if t != KAMCHATKA:
            set_territory(state, t, p, 1)
    state.armies[ALASKA] = 12
    state.armies[KAMCHATKA] = 1
    give_hand(state, p, [INF[0], CAV[0], INF[1], CAV[1]])
    give_hand(state, q, [ART[0], ART[1]])
    state.apply(p, {"type": "attack", "from": ALASKA, "to": KAMCHATKA, "dice": 3, "until": 1})
    assert not state.alive[q] and len(state.hands[p]) == 6
    state.apply(p, {"type": "move_in", "armies": 3})
    assert state.decision().kind == "trade" and state.decision().options["must_trade"]
    exc = assert_illegal(
        state, None, {"type": "no_trade"}, "must trade", "6 or more", "elimination"
    )
    assert exc.allowed == "trade"


# --- reinforcements --------------------------------------------------------------------------


def reinforce_board() -> tuple[RiskState, int, list[int]]:
    state = advance_to(game(), "reinforce")
    opts = state.decision().options
    return state, opts["armies"], opts["territories"]


def test_reinforcements_that_do_not_add_up():
    state, n, own = reinforce_board()
    for placed in ({own[0]: n - 1}, {own[0]: n, own[1]: 1}, {}):
        exc = assert_illegal(
            state,
            None,
            {"type": "reinforce", "armies": placed},
            f"placed {sum(placed.values())} armies but {n} must be placed",
        )
        assert f"exactly {n} armies" in exc.allowed


def test_reinforcing_a_territory_that_is_not_yours():
    state, n, own = reinforce_board()
    enemy = next(t for t in range(42) if t not in own)
    exc = assert_illegal(
        state,
        None,
        {"type": "reinforce", "armies": {own[0]: n - 1, MAP.territories[enemy]: 1}},
        f"{MAP.territories[enemy]} is not yours",
    )
    assert "your own territories" in exc.allowed


@pytest.mark.parametrize("count", [-1, "3", 1.0, None])
def test_reinforcing_with_a_bad_count(count):
    state, n, own = reinforce_board()
    assert_illegal(
        state,
        None,
        {"type": "reinforce", "armies": {own[0]: n + 1, own[1]: count}},
        MAP.territories[own[1]],
        "at least 0",
        repr(count),
    )


@pytest.mark.parametrize("armies", [5, "Alaska", None, [["Alaska"]], [[0, 1, 2]]])
def test_reinforce_with_malformed_armies(armies):
    state, _, _ = reinforce_board()
    exc = assert_illegal(
        state, None, {"type": "reinforce", "armies": armies}, "'armies' must map territories"
    )
    assert "Alaska" in exc.allowed


# --- unknown territories ---------------------------------------------------------------------


@pytest.mark.parametrize("ref", ["Atlantis", "alaska", 42, -1, "42", None, 1.0, True])
def test_attack_from_an_unknown_territory(ref):
    state, _, _ = attack_board()
    exc = assert_illegal(
        state,
        None,
        {"type": "attack", "from": ref, "to": KAMCHATKA, "dice": 1},
        f"'from': unknown territory {ref!r}",
    )
    assert "0..41" in exc.allowed


def test_attack_to_an_unknown_territory():
    state, _, _ = attack_board()
    assert_illegal(
        state,
        None,
        {"type": "attack", "from": ALASKA, "to": "Middle-Earth", "dice": 1},
        "'to'",
        "'Middle-Earth'",
    )
    assert_illegal(state, None, {"type": "attack", "from": ALASKA, "dice": 1}, "'to'")


def test_reinforce_an_unknown_territory():
    state, n, _ = reinforce_board()
    assert_illegal(
        state,
        None,
        {"type": "reinforce", "armies": {"Atlantis": n}},
        "unknown territory 'Atlantis'",
    )


def test_claims_and_placements_in_setup():
    state = GAME.new_state(3, 5, {"setup": "claim"})
    state.apply(0, {"type": "claim", "territory": "Alaska"})
    exc = assert_illegal(
        state,
        None,
        {"type": "claim", "territory": "Alaska"},
        "Alaska is already claimed by seat 0",
    )
    assert "unclaimed" in exc.allowed
    assert_illegal(state, None, {"type": "claim", "territory": "Gondor"}, "'Gondor'")
    placing = game()
    enemy = placing.owned(1)[0]
    assert_illegal(
        placing,
        None,
        {"type": "place", "territory": enemy},
        f"{MAP.territories[enemy]} is not yours",
    )


# --- malformed actions -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("action", "fragment"),
    [
        (["attack", "Alaska", "Kamchatka"], "got list"),
        ("end_attack", "got str"),
        (None, "got NoneType"),
        (42, "got int"),
    ],
)
def test_an_action_that_is_not_a_mapping(action, fragment):
    state, _, _ = attack_board()
    assert_illegal(state, None, action, "must be a mapping with a 'type'", fragment)


@pytest.mark.parametrize(
    "action",
    [{}, {"from": "Alaska", "to": "Kamchatka"}, {"type": "nuke"}, {"type": "ATTACK"}, {"type": 3}],
)
def test_an_action_without_a_known_type(action):
    state, _, _ = attack_board()
    exc = assert_illegal(
        state, None, action, repr(action.get("type")), "not allowed", "attack phase"
    )
    assert exc.allowed == "attack, end_attack"


def test_random_garbage_is_always_refused_cleanly():
    """Fuzz: actions with mangled fields raise IllegalAction (never anything else)."""
    rng = random.Random(3)
    junk = [None, -1, 0, 1, 99, "1", "Alaska", "Atlantis", 1.5, True, [], {}, [1, 2, 3]]
    keys = ["type", "from", "to", "dice", "until", "armies", "cards", "territory", "bonus"]
    kinds = ["attack", "end_attack", "move_in", "fortify", "end_turn", "trade", "no_trade"]
    kinds += ["reinforce", "claim", "place"]
    state = advance_to(game(), "reinforce")
    refused = 0
    for _ in range(1500):
        if state.terminal:
            break
        action: dict[str, Any] = {"type": rng.choice(kinds)}
        for key in rng.sample(keys[1:], rng.randint(0, 4)):
            action[key] = rng.choice(junk)
        before = frozen(state)
        try:
            state.apply(rng.choice([state.current_player, (state.current_player + 1) % 3]), action)
        except IllegalAction:
            refused += 1
            assert frozen(state) == before, action
        if rng.random() < 0.2:
            state.apply(state.current_player, simple_action(state))
    assert refused > 1000
