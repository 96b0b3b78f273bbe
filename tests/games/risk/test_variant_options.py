"""Rule options of RULES.md (Risk, Variants): card values, defender dice, turn limit, and
the combinations refused before a game starts (through the API and the command line).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from arena.cli import main
from arena.engine.core import EndReason, Event, IllegalAction
from arena.engine.match import play_match
from arena.engine.replay import verify
from arena.games.risk.dice import decode_outcome
from arena.games.risk.map import DESIGNS, load_map
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
MAP = load_map("classic")
WILD_A, WILD_B = MAP.size, MAP.size + 1


def t(name: str) -> int:
    return MAP.index[name]


def cards_of(design: str, count: int, skip: Sequence[int] = ()) -> list[int]:
    d = DESIGNS.index(design)
    return [c for c in range(MAP.size) if MAP.card_design[c] == d and c not in skip][:count]


def of_kind(events: list[Event], kind: str) -> list[Event]:
    return [e for e in events if e["e"] == kind]


def start(variants: Sequence[str], num_players: int, options: Mapping[str, Any]) -> RiskState:
    """What ``arena play`` does before the first decision."""
    chosen = REGISTRY.resolve_variants("risk", variants)
    REGISTRY.check_options("risk", dict(options), chosen)
    return GAME.new_state(num_players, 0, dict(options), chosen)


def position(
    num_players: int = 3,
    *,
    own: Mapping[str, tuple[int, int]] | None = None,
    hands: Mapping[int, list[int]] | None = None,
    sets_traded: int = 0,
    options: Mapping[str, Any] | None = None,
) -> tuple[RiskState, list[Event]]:
    """A classic board at the start of seat 0's turn (see tests/games/risk/test_rules.py)."""
    state = GAME.new_state(num_players, 0, dict(options or {}))
    own = own or {}
    state.owner = [-1] * MAP.size
    state.armies = [0] * MAP.size
    for name, (seat, armies) in own.items():
        state.owner[t(name)] = seat
        state.armies[t(name)] = armies
    unlisted = [i for i in range(MAP.size) if state.owner[i] < 0]
    for k, i in enumerate(unlisted):
        state.owner[i] = k % num_players
        state.armies[i] = 1
    state.territory_count = [state.owner.count(seat) for seat in range(num_players)]
    state.hands = [list((hands or {}).get(seat, [])) for seat in range(num_players)]
    held = {c for hand in state.hands for c in hand}
    state.draw_pile = [c for c in state.draw_pile if c not in held]
    state.sets_traded = sets_traded
    state._setup_left = [0] * num_players
    events: list[Event] = []
    state._begin_turn(0, events)
    return state, events


def snapshot(state: RiskState) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name in RiskState.__slots__:
        if name not in ("map", "config", "hooks", "rng", "_custom"):
            out[name] = copy.deepcopy(getattr(state, name))
    out["rng"] = state.rng.getstate()
    out["observations"] = [
        json.dumps(state.observation(s), sort_keys=True) for s in range(state.num_players)
    ]
    return out


# --- card values ----------------------------------------------------------------------------

INF, CAV, ART = cards_of("infantry", 3), cards_of("cavalry", 3), cards_of("artillery", 3)
FIXED_SETS = [
    ("three infantry", INF, 4),
    ("three cavalry", CAV, 6),
    ("three artillery", ART, 8),
    ("one of each", [INF[0], CAV[0], ART[0]], 10),
    ("two infantry and a wild", [INF[0], INF[1], WILD_A], 4),
    ("two cavalry and a wild", [CAV[0], CAV[1], WILD_A], 6),
    ("two artillery and a wild", [ART[0], ART[1], WILD_B], 8),
    ("two designs and a wild", [INF[0], ART[0], WILD_A], 10),
    ("one card and two wilds", [INF[0], WILD_A, WILD_B], 10),
]
FIXED_FORMS = [{"cards": "fixed"}, {"fixed-cards": None}]


@pytest.mark.parametrize("options", FIXED_FORMS, ids=["cards=fixed", "fixed-cards"])
@pytest.mark.parametrize(("label", "cards", "value"), FIXED_SETS, ids=[s[0] for s in FIXED_SETS])
@pytest.mark.parametrize("sets_traded", [0, 9])
def test_rule_fixed_card_values(
    options: dict[str, Any], label: str, cards: list[int], value: int, sets_traded: int
) -> None:
    """3 infantry 4, 3 cavalry 6, 3 artillery 8, one of each 10; a wild counts as whatever
    is worth most; the value does not depend on how many sets were traded before."""
    # Nobody owns a card's territory here: no +2 bonus muddles the count.
    own = {MAP.territories[c]: (1, 1) for c in cards if c < MAP.size}
    state, _ = position(own=own, hands={0: cards}, sets_traded=sets_traded, options=options)
    assert state.config.cards == "fixed"
    decision = state.decision()
    assert decision.kind == "trade"
    assert decision.options["sets"] == [sorted(cards)]
    assert decision.options["values"] == [value]
    before = state._reinforce_left
    events = state.apply(0, {"type": "trade", "cards": cards})
    (trade,) = of_kind(events, "trade")
    assert trade["value"] == value
    assert state._reinforce_left == before + value
    assert state.sets_traded == sets_traded + 1


def test_rule_fixed_values_do_not_grow_with_the_sets_traded() -> None:
    """Two sets in a row, then turn after turn: always the same value."""
    hand = INF + CAV
    own = {MAP.territories[c]: (1, 1) for c in hand}
    state, _ = position(own=own, hands={0: hand}, options={"cards": "fixed"})
    state.apply(0, {"type": "trade", "cards": INF})
    events = state.apply(0, {"type": "trade", "cards": CAV})
    assert of_kind(events, "trade")[0]["value"] == 6
    values = []
    for sets_traded in range(12):
        state, _ = position(
            own=own, hands={0: INF}, sets_traded=sets_traded, options={"cards": "fixed"}
        )
        values.append(of_kind(state.apply(0, {"type": "trade", "cards": INF}), "trade")[0]["value"])
    assert values == [4] * 12
    # Progressive values do grow (the option matters).
    state, _ = position(own=own, hands={0: INF}, sets_traded=9)
    assert of_kind(state.apply(0, {"type": "trade", "cards": INF}), "trade")[0]["value"] == 35


@pytest.mark.parametrize(
    ("options", "cards"),
    [
        ({"cards": "none"}, "none"),
        ({"no-cards": None}, "none"),
        ({"cards": "progressive"}, "progressive"),
        ({}, "progressive"),
    ],
)
def test_rule_card_option_forms(options: dict[str, Any], cards: str) -> None:
    assert GAME.new_state(3, 0, options).config.cards == cards


def test_rule_card_option_conflicting_forms_are_refused() -> None:
    with pytest.raises(ValueError, match="given twice"):
        GAME.new_state(3, 0, {"cards": "progressive", "fixed-cards": None})
    with pytest.raises(ValueError, match="expected one of progressive, fixed, none"):
        GAME.new_state(3, 0, {"cards": "gold"})


# --- defender dice ----------------------------------------------------------------------------


def test_rule_chosen_defender_dice_are_asked_before_every_roll() -> None:
    own = {"Alaska": (0, 14), "Kamchatka": (1, 6)}
    state, _ = position(own=own, options={"defender-dice": "choose", "dice": "faces"})
    state.apply(0, {"type": "reinforce", "armies": {"Alaska": state.decision().options["armies"]}})
    state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3, "until": 1})
    chosen = []
    events: list[Event] = []
    while state.decision().kind == "defend":
        decision = state.decision()
        assert decision.player == 1
        defenders = state.armies[t("Kamchatka")]
        assert decision.options["max_dice"] == min(2, defenders)
        assert len(decision.options["attack"]["rolls"]) == len(chosen)  # the rolls so far
        dice = 1 if len(chosen) % 2 else decision.options["max_dice"]
        chosen.append(dice)
        events = state.apply(1, {"type": "defend", "dice": dice})
    assert len(chosen) >= 2, "a multi-roll attack asked only once"
    (battle,) = of_kind(events, "battle")
    assert battle["def_dice"] == "".join(map(str, chosen))
    assert len(battle["rolls"]) == len(chosen)
    faces = battle["faces"].split(" ")
    assert [len(f.split("-")[1]) for f in faces] == chosen
    losses = [decode_outcome(code) for code in battle["rolls"]]
    assert sum(al for al, _ in losses) == battle["att_loss"]
    assert sum(dl for _, dl in losses) == battle["def_loss"]
    assert state.armies[t("Kamchatka")] == 0 or state.armies[t("Alaska")] == 1


def test_rule_a_single_roll_attack_asks_the_defender_once() -> None:
    own = {"Alaska": (0, 14), "Kamchatka": (1, 6)}
    state, _ = position(own=own, options={"defender-dice": "choose"})
    state.apply(0, {"type": "reinforce", "armies": {"Alaska": state.decision().options["armies"]}})
    state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 2})
    assert (state.decision().kind, state.decision().player) == ("defend", 1)
    events = state.apply(1, {"type": "defend", "dice": 2})
    (battle,) = of_kind(events, "battle")
    assert battle["def_dice"] == "2" and len(battle["rolls"]) == 1
    assert (state.decision().kind, state.decision().player) == ("attack", 0)


@pytest.mark.parametrize(
    ("defenders", "dice", "message"),
    [
        (5, 3, "cannot defend Kamchatka with 3 dice"),
        (5, 0, "cannot defend Kamchatka with 0 dice"),
        (5, "2", "cannot defend Kamchatka with '2' dice"),
        (1, 2, "cannot defend Kamchatka with 2 dice"),
    ],
)
def test_rule_the_defender_rolls_1_or_2_dice_2_only_with_2_armies(
    defenders: int, dice: Any, message: str
) -> None:
    own = {"Alaska": (0, 14), "Kamchatka": (1, defenders)}
    state, _ = position(own=own, options={"defender-dice": "choose"})
    state.apply(0, {"type": "reinforce", "armies": {"Alaska": state.decision().options["armies"]}})
    state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "dice": 3, "until": 1})
    assert state.decision().options["max_dice"] == min(2, defenders)
    before = snapshot(state)
    with pytest.raises(IllegalAction, match=message):
        state.apply(1, {"type": "defend", "dice": dice})
    assert snapshot(state) == before, "a refused defence changed the state"
    # The legal choices are accepted.
    for legal in range(1, min(2, defenders) + 1):
        other = state.clone()
        other.apply(1, {"type": "defend", "dice": legal})


def test_rule_automatic_defender_dice_ask_nobody() -> None:
    own = {"Alaska": (0, 14), "Kamchatka": (1, 6)}
    state, _ = position(own=own, options={"defender-dice": "automatic", "dice": "faces"})
    state.apply(0, {"type": "reinforce", "armies": {"Alaska": state.decision().options["armies"]}})
    events = state.apply(0, {"type": "attack", "from": "Alaska", "to": "Kamchatka", "until": 1})
    assert state.decision().player == 0 and state.decision().kind in ("attack", "move_in")
    (battle,) = of_kind(events, "battle")
    assert "def_dice" not in battle
    armies = 6
    for faces, code in zip(battle["faces"].split(" "), battle["rolls"], strict=True):
        assert len(faces.split("-")[1]) == min(2, armies)  # always the most allowed
        armies -= decode_outcome(code)[1]


# --- turn limit -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("variants", "num_players"),
    [((), 3), (("missions",), 4), (("capital",), 5), (("neutral",), 2)],
)
def test_rule_turn_limit_ends_the_game_with_the_survivors_tied(
    variants: tuple[str, ...], num_players: int
) -> None:
    chosen = REGISTRY.resolve_variants("risk", variants)
    names = ["random"] * num_players
    bots = [REGISTRY.bot("risk", n).factory(s, s) for s, n in enumerate(names)]
    rec = play_match(GAME, bots, 1, {"turn-limit": "3"}, chosen, names=names)
    assert rec.result is not None
    assert rec.result.reason == EndReason.TURN_LIMIT
    assert rec.result.places == (1,) * num_players
    assert "turn limit of 3 rounds" in rec.result.detail
    turns = of_kind(rec.events, "turn")
    assert turns[-1]["round"] == 3 and len(turns) == 3 * num_players
    assert verify(rec) == len(rec.steps)


@pytest.mark.parametrize(
    ("value", "message"),
    [("-1", "at least 0"), ("ten", "turn-limit='ten'"), ("", "turn-limit=''")],
)
def test_rule_turn_limit_values_are_checked(value: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        GAME.new_state(3, 0, {"turn-limit": value})
    assert GAME.new_state(3, 0, {"turn-limit": "0"}).config.turn_limit == 0
    assert GAME.new_state(3, 0, {}).config.turn_limit == 500


# --- combinations refused before the game starts -----------------------------------------------


@pytest.mark.parametrize(
    ("variants", "num_players", "options", "message"),
    [
        (["missions", "capital"], 4, {}, "variants 'missions' and 'capital' cannot be combined"),
        (["capital", "missions"], 4, {}, "variants 'capital' and 'missions' cannot be combined"),
        (["missions", "neutral"], 2, {}, "variants 'missions' and 'neutral' cannot be combined"),
        (["neutral", "capital"], 2, {}, "variants 'neutral' and 'capital' cannot be combined"),
        (["missions", "missions"], 3, {}, "variant 'missions' given twice"),
        (["neutral"], 3, {}, "the neutral variant is for 2 players, not 3"),
        (["neutral"], 4, {}, "the neutral variant is for 2 players, not 4"),
        ([], 7, {}, "risk takes 2 to 6 players, not 7"),
        (["missions"], 7, {}, "risk takes 2 to 6 players, not 7"),
        ([], 2, {}, "2 players play with --variant neutral"),
        (["capital"], 2, {}, "2 players play with --variant neutral"),
        (["missions"], 3, {"setup": "claim"}, "deal setup, not setup=claim"),
        (["capital"], 3, {"setup": "claim"}, "deal setup, not setup=claim"),
        (["neutral"], 2, {"setup": "deal"}, "has its own setup"),
        ([], 3, {"mission-deck": "1998"}, "belongs to a variant: add --variant missions"),
        ([], 4, {"short-capital": "on"}, "belongs to a variant: add --variant capital"),
        (["missions"], 3, {"mission-deck": "2024"}, "expected one of standard, 1998"),
        (["nothing"], 3, {}, "unknown variant 'nothing' for risk"),
    ],
)
def test_rule_senseless_combinations_are_refused_with_the_reason(
    variants: list[str], num_players: int, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        start(variants, num_players, options)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            "--players random,random,random,random --variant missions --variant capital",
            "variants 'missions' and 'capital' cannot be combined",
        ),
        (
            "--players random,random,random --variant neutral",
            "the neutral variant is for 2 players, not 3",
        ),
        (
            "--players random,random --variant neutral --variant missions",
            "variants 'neutral' and 'missions' cannot be combined",
        ),
        (
            "--players " + ",".join(["random"] * 7) + " --variant missions",
            "risk takes 2 to 6 players, not 7",
        ),
        (
            "--players random,random,random --variant missions --option setup=claim",
            "secret missions are played with the deal setup, not setup=claim",
        ),
        (
            "--players random,random,random,random --option short-capital",
            "option short-capital belongs to a variant: add --variant capital",
        ),
    ],
)
def test_cli_refuses_senseless_combinations_with_the_reason(
    args: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["play", "risk", *args.split()]) == 2
    captured = capsys.readouterr()
    assert message in captured.err
    assert captured.out == "", "a game was played before the refusal"


def test_cli_plays_variants_with_options(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    path = tmp_path / "neutral.json"
    args = ["play", "risk", "--players", "aggressive,random", "--variant", "neutral"]
    args += ["--option", "defender-dice=choose", "--option", "fixed-cards", "--seed", "2"]
    assert main([*args, "--replay", str(path)]) == 0
    out = capsys.readouterr().out
    assert "variants: neutral" in out
    assert "winner: " in out or "tie between" in out
    assert main(["replay", "verify", str(path)]) == 0
    data = json.loads(path.read_text())
    assert data["variants"] == ["neutral"]
    # the bare flag is stored as what it means: never a null (docs/replay-format.md)
    assert data["options"] == {"defender-dice": "choose", "cards": "fixed"}
    assert any(e["e"] == "battle" and "def_dice" in e for s in data["steps"] for e in s[2])
