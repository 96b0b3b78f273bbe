"""Two players with a neutral (RULES.md, Risk, Variants): one test per rule.

The neutral is owner id 2, after the two seats. Games are created through the registry
as ``arena play --variant neutral`` does; positions are laid out with :func:`position`
(board assigned directly, then a seat's turn started as the engine does).
"""

from __future__ import annotations

import copy
import json
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from arena.bots._risk_common import variant_decision
from arena.engine.core import EndReason, Event, IllegalAction
from arena.engine.match import play_match
from arena.engine.replay import ReplayMismatch, from_json, to_json, verify
from arena.games.risk.map import load_map
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
NEUTRAL_VARIANT = REGISTRY.resolve_variants("risk", ["neutral"])
MAP = load_map("classic")
NEUTRAL = 2  # the neutral's owner id
DECK = 44


def t(name: str) -> int:
    return MAP.index[name]


def of_kind(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["e"] == kind]


def new_game(seed: int = 0, **options: str) -> RiskState:
    return GAME.new_state(2, seed, options, NEUTRAL_VARIANT)


def play_setup(state: RiskState, seed: int = 0) -> list[Event]:
    """Answer every neutral_place decision with random legal placements."""
    rng = random.Random(seed)
    events: list[Event] = []
    while state.decision().kind == "neutral_place":
        d = state.decision()
        events += state.apply(d.player, variant_decision(rng, state.observation(d.player), d))
    return events


def totals(state: RiskState) -> list[int]:
    """Armies on the board per owner: seat 0, seat 1, the neutral."""
    out = [0] * state.num_owners
    for i, owner in enumerate(state.owner):
        out[owner] += state.armies[i]
    return out


def position(
    *,
    own: Mapping[str, tuple[int, int]] | None = None,
    rest: Sequence[int] = (0, 1, NEUTRAL),
    rest_armies: int = 1,
    to_move: int = 0,
    seed: int = 0,
    options: Mapping[str, str] | None = None,
) -> tuple[RiskState, list[Event]]:
    """A board after setup at the start of ``to_move``'s turn (owners 0, 1 and 2)."""
    state = GAME.new_state(2, seed, dict(options or {}), NEUTRAL_VARIANT)
    own = own or {}
    state.owner = [-1] * MAP.size
    state.armies = [0] * MAP.size
    for name, (owner, armies) in own.items():
        state.owner[t(name)] = owner
        state.armies[t(name)] = armies
    unlisted = [i for i in range(MAP.size) if state.owner[i] < 0]
    for k, i in enumerate(unlisted):
        state.owner[i] = rest[k % len(rest)]
        state.armies[i] = rest_armies
    state.territory_count = [state.owner.count(o) for o in range(state.num_owners)]
    state.alive = [state.territory_count[seat] > 0 for seat in range(2)]
    state.hands = [[] for _ in range(state.num_owners)]
    state._setup_left = [0, 0]
    state.variant_data["neutral"]["left"] = [0, 0, 0]
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


def snapshot(state: RiskState) -> dict[str, Any]:
    return {
        "owner": state.owner[:],
        "armies": state.armies[:],
        "variant_data": copy.deepcopy(state.variant_data),
        "setup_left": state._setup_left[:],
        "player": state.player,
        "decision": state.decision().to_json(),
        "rng": state.rng.getstate(),
        "observations": [json.dumps(state.observation(s), sort_keys=True) for s in (0, 1)],
    }


# --- players --------------------------------------------------------------------------------


@pytest.mark.parametrize("num_players", [3, 4])
def test_rule_the_neutral_variant_is_for_two_players_only(num_players: int) -> None:
    with pytest.raises(ValueError, match=f"neutral variant is for 2 players, not {num_players}"):
        GAME.new_state(num_players, 0, {}, NEUTRAL_VARIANT)


def test_rule_two_players_without_the_neutral_are_refused_naming_the_variant() -> None:
    with pytest.raises(ValueError, match=r"2 players play with --variant neutral"):
        GAME.new_state(2, 0, {}, [])


def test_rule_the_neutral_variant_has_its_own_setup() -> None:
    with pytest.raises(ValueError, match="own setup"):
        new_game(setup="deal")


# --- setup ----------------------------------------------------------------------------------


def test_rule_three_piles_of_14_one_army_on_each_territory() -> None:
    for seed in range(5):
        state = new_game(seed)
        assert state.num_owners == 3 and state.passive == [False, False, True]
        assert state.config.passive_owners == ("neutral",)
        deals = of_kind(state.initial_events, "deal")
        assert [e["p"] for e in deals] == [0, 1, NEUTRAL]
        assert [len(e["t"]) for e in deals] == [14, 14, 14]
        assert sorted(i for e in deals for i in e["t"]) == list(range(42))
        for e in deals:
            assert all(state.owner[i] == e["p"] and state.armies[i] == 1 for i in e["t"])
        obs = state.observation(0)
        assert obs["num_owners"] == 3 and obs["passive"] == [False, False, True]
        assert obs["setup_armies_left"] == [26, 26]


def test_rule_40_armies_each_for_both_players_and_the_neutral() -> None:
    for seed in range(5):
        state = new_game(seed)
        assert totals(state) == [14, 14, 14]
        events = play_setup(state, seed)
        assert of_kind(events, "turn")[0]["p"] == 0, "setup did not end in the first turn"
        # The first turn has begun but nothing is placed yet: the setup armies only.
        assert totals(state) == [40, 40, 40]
        assert state.observation(1)["setup_armies_left"] == [0, 0]


def test_rule_placement_alternates_2_own_armies_and_1_neutral_army() -> None:
    state = new_game(3)
    rng = random.Random(3)
    seats = []
    while state.decision().kind == "neutral_place":
        d = state.decision()
        seats.append(d.player)
        assert d.options["armies"] == 2 and d.options["neutral"] == 1
        assert d.options["territories"] == state.owned(d.player)
        assert d.options["neutral_territories"] == state.owned(NEUTRAL)
        mine = d.options["territories"]
        # Both forms: 2 armies on one territory, or 1 each on two.
        armies = {mine[0]: 2} if len(seats) % 2 else dict.fromkeys(rng.sample(mine, 2), 1)
        neutral_t = rng.choice(d.options["neutral_territories"])
        before = state.armies[:]
        events = state.apply(d.player, {"type": "place", "armies": armies, "neutral": neutral_t})
        diff = {i: state.armies[i] - before[i] for i in range(42) if state.armies[i] != before[i]}
        expected = Counter(armies)
        expected[neutral_t] += 1
        assert diff == dict(expected)
        assert of_kind(events, "neutral_place")[0]["neutral"] == neutral_t
    assert seats == [0, 1] * 13
    assert totals(state) == [40, 40, 40]


@pytest.mark.parametrize(
    ("make_action", "message"),
    [
        (lambda mine, theirs, neutral: {mine[0]: 3}, "placed 3 of your armies"),
        (lambda mine, theirs, neutral: {mine[0]: 1}, "placed 1 of your armies"),
        (lambda mine, theirs, neutral: {mine[0]: 1, mine[1]: 1, mine[2]: 1}, "placed 3"),
        (lambda mine, theirs, neutral: {theirs[0]: 2}, "is not yours"),
        (lambda mine, theirs, neutral: {neutral[0]: 2}, "is not yours"),
        (lambda mine, theirs, neutral: {mine[0]: 2, mine[1]: 0}, "must be at least 1"),
        (lambda mine, theirs, neutral: [mine[0], 2], "'armies' must map"),
    ],
    ids=["3 armies", "1 army", "3 territories", "opponent's", "neutral's", "0 armies", "a list"],
)
def test_rule_a_wrong_own_placement_is_refused_naming_the_problem(make_action, message) -> None:
    state = new_game(1)
    play_turns = 3  # a few placements first: the refusal is not about the first turn only
    rng = random.Random(0)
    for _ in range(play_turns):
        d = state.decision()
        state.apply(d.player, variant_decision(rng, state.observation(d.player), d))
    seat = state.player
    mine, theirs, neutral = state.owned(seat), state.owned(1 - seat), state.owned(NEUTRAL)
    before = snapshot(state)
    action = {"type": "place", "armies": make_action(mine, theirs, neutral), "neutral": neutral[0]}
    with pytest.raises(IllegalAction, match=message):
        state.apply(seat, action)
    assert snapshot(state) == before


@pytest.mark.parametrize("where", ["own", "opponent", "missing", "unknown"])
def test_rule_the_neutral_army_goes_on_a_neutral_territory(where: str) -> None:
    state = new_game(2)
    seat = state.player
    mine, theirs = state.owned(seat), state.owned(1 - seat)
    action: dict[str, Any] = {"type": "place", "armies": {mine[0]: 2}}
    if where == "own":
        action["neutral"] = mine[1]
    elif where == "opponent":
        action["neutral"] = theirs[0]
    elif where == "unknown":
        action["neutral"] = "Atlantis"
    before = snapshot(state)
    message = "is not neutral" if where in ("own", "opponent") else "'neutral': unknown territory"
    with pytest.raises(IllegalAction, match=message):
        state.apply(seat, action)
    assert snapshot(state) == before


def test_rule_only_the_seat_asked_places() -> None:
    state = new_game(4)
    d = state.decision()
    other = 1 - d.player
    with pytest.raises(IllegalAction, match="not your turn"):
        state.apply(
            other,
            {
                "type": "place",
                "armies": {state.owned(other)[0]: 2},
                "neutral": state.owned(NEUTRAL)[0],
            },
        )


def test_rule_the_wilds_go_back_in_the_draw_pile_holds_all_44_cards() -> None:
    state = new_game(6)
    assert sorted(state.draw_pile) == list(range(DECK))
    play_setup(state, 6)
    assert sorted(state.draw_pile) == list(range(DECK))
    assert {42, 43} <= set(state.draw_pile)
    assert state.hands == [[], [], []] and state.discard == []


# --- play -----------------------------------------------------------------------------------


@pytest.mark.parametrize("defender_dice", ["automatic", "choose"])
def test_rule_the_neutral_never_takes_a_turn_reinforces_or_draws(defender_dice: str) -> None:
    games = 0
    for seed in range(4):
        state = new_game(seed, **{"defender-dice": defender_dice, "turn-limit": "60"})
        names = ("aggressive", "random") if seed % 2 else ("blitz", "defensive")
        bots = [REGISTRY.bot("risk", n).factory(s, seed * 10 + s) for s, n in enumerate(names)]
        setup_over = False
        while not state.terminal:
            d = state.decision()
            assert d.player in (0, 1), "the neutral was asked to decide"
            before = (state.owner[:], state.armies[:])
            in_play = setup_over
            events = state.apply(d.player, bots[d.player].decide(state.observation(d.player), d))
            setup_over = setup_over or bool(of_kind(events, "turn"))
            for e in events:
                if e["e"] in ("turn", "reinforcements", "reinforce", "draw", "trade", "attack"):
                    assert e["p"] in (0, 1), e
                if e["e"] == "battle":
                    assert e["p"] in (0, 1) and state.owner[e["from"]] in (0, 1)
            assert state.hands[NEUTRAL] == []
            if in_play:  # after setup the neutral's armies only ever go down
                for i in range(42):
                    if before[0][i] == NEUTRAL and state.owner[i] == NEUTRAL:
                        assert state.armies[i] <= before[1][i]
                    if state.owner[i] == NEUTRAL:
                        assert before[0][i] == NEUTRAL, "the neutral took a territory"
        assert len(state.hands) == 3
        games += 1
        assert sorted(
            state.draw_pile + state.discard + [c for h in state.hands for c in h]
        ) == list(range(DECK))
    assert games == 4


@pytest.mark.parametrize("attacker", [0, 1])
def test_rule_with_chosen_dice_the_other_player_defends_a_neutral_territory(attacker: int) -> None:
    other = 1 - attacker
    own = {"Alaska": (attacker, 20), "Kamchatka": (NEUTRAL, 5), "Alberta": (other, 5)}
    state, _ = position(own=own, to_move=attacker, options={"defender-dice": "choose"})
    reinforce(state, "Alaska")
    state.apply(attacker, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3})
    decision = state.decision()
    assert decision.kind == "defend"
    assert decision.player == other  # neither the neutral (2) nor the attacker
    assert decision.options["max_dice"] == 2
    assert state.observation(other)["attack"]["attacker"] == attacker
    with pytest.raises(IllegalAction, match="not your turn"):
        state.apply(attacker, {"type": "defend", "dice": 1})
    events = state.apply(other, {"type": "defend", "dice": 1})
    (battle,) = of_kind(events, "battle")
    assert battle["def_dice"] == "1" and battle["to"] == t("Kamchatka")
    assert state.decision().player == attacker
    # Attacking the opponent asks the opponent itself.
    state.apply(attacker, {"type": "attack", "from": "Alaska", "to": "Alberta", "dice": 1})
    assert (state.decision().kind, state.decision().player) == ("defend", other)


def test_rule_with_automatic_dice_nobody_is_asked_for_the_neutral() -> None:
    own = {"Alaska": (0, 20), "Kamchatka": (NEUTRAL, 5), "Alberta": (1, 5)}
    state, _ = position(own=own)
    reinforce(state, "Alaska")
    events = state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "until": 1})
    assert state.decision().kind in ("attack", "move_in")
    assert state.decision().player == 0
    (battle,) = of_kind(events, "battle")
    assert "def_dice" not in battle


def test_rule_win_by_eliminating_the_opponent_while_the_neutral_holds_territories() -> None:
    own = {"Alaska": (0, 40), "Kamchatka": (1, 1)}
    state, _ = position(own=own, rest=(0, NEUTRAL))
    assert state.territory_count[1] == 1
    reinforce(state, "Alaska")
    while not state.terminal:
        state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3})
    result = state.result()
    assert result is not None
    assert result.reason == EndReason.VICTORY
    assert result.places == (1, 2)
    assert state.owner.count(NEUTRAL) >= 19
    assert state.alive == [True, False]


def test_rule_neutral_games_end_and_their_replays_verify() -> None:
    reasons = Counter()
    configs = [
        ("aggressive", "defensive", {"defender-dice": "choose"}),
        ("random", "blitz", {"cards": "fixed"}),
        ("defensive", "aggressive", {"cards": "none", "dice": "faces"}),
        ("blitz", "random", {"defender-dice": "choose", "turn-limit": "30"}),
    ]
    for seed, (a, b, options) in enumerate(configs):
        bots = [REGISTRY.bot("risk", n).factory(s, seed * 10 + s) for s, n in enumerate((a, b))]
        rec = play_match(GAME, bots, seed, options, NEUTRAL_VARIANT, names=[a, b])
        assert rec.result is not None
        reasons[rec.result.reason] += 1
        loaded = from_json(json.loads(json.dumps(to_json(rec))))
        assert verify(loaded) == len(rec.steps)
    assert reasons[EndReason.VICTORY] >= 2
    # A tampered placement is caught.
    step = next(i for i, s in enumerate(loaded.steps) if s[2] and s[2][0]["e"] == "neutral_place")
    loaded.steps[step][2][0]["neutral"] = (loaded.steps[step][2][0]["neutral"] + 1) % 42
    with pytest.raises(ReplayMismatch):
        verify(loaded)
