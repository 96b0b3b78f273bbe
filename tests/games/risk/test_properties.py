"""Property tests over random legal play of classic Risk.

Hypothesis draws the configuration (seed, 3-6 players, claim/deal setup, progressive
cards or none, dice mode, a short turn limit) and the driver (the registered random
bot, or uniformly random picks from ``state.decision().options`` that also use
``until`` so that captures, eliminations and card trades really happen). After every
applied action the invariants of RULES.md are checked against the state before it.
"""

from __future__ import annotations

import copy
import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.engine.core import EndReason, IllegalAction, Result
from arena.games.risk.state import RiskState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")
DECK = 44  # 42 territory cards + 2 wilds
NUM_TERRITORIES = 42

PROPERTY_SETTINGS = settings(
    max_examples=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)


# --- drivers ---------------------------------------------------------------------------


def uniform_action(state: RiskState, rng: random.Random) -> dict[str, Any]:
    """A uniformly random legal action built only from the decision's options."""
    decision = state.decision()
    kind = decision.kind
    opts = decision.options
    if kind == "claim":
        return {"type": "claim", "territory": rng.choice(opts["territories"])}
    if kind == "setup_place":
        return {"type": "place", "territory": rng.choice(opts["territories"])}
    if kind == "trade":
        choices: list[Any] = list(opts["sets"])
        if not opts["must_trade"]:
            choices.append(None)
        pick = rng.choice(choices)
        return {"type": "no_trade"} if pick is None else {"type": "trade", "cards": list(pick)}
    if kind == "reinforce":
        placed: dict[int, int] = {}
        for _ in range(opts["armies"]):
            t = rng.choice(opts["territories"])
            placed[t] = placed.get(t, 0) + 1
        if rng.random() < 0.5:  # the list form of the same thing
            return {"type": "reinforce", "armies": [[t, n] for t, n in placed.items()]}
        return {"type": "reinforce", "armies": placed}
    if kind == "attack":
        attacks = opts["attacks"]
        # Mostly attack, so that the game moves: captures, cards, eliminations.
        if not attacks or rng.random() < 0.15:
            return {"type": "end_attack"}
        a = rng.choice(attacks)
        action = {"type": "attack", "from": a["from"], "to": a["to"]}
        action["dice"] = rng.randint(1, a["max_dice"])
        if rng.random() < 0.5:  # fight on until only this many armies are left
            action["until"] = rng.randint(1, state.armies[a["from"]] - 1)
        return action
    if kind == "move_in":
        return {"type": "move_in", "armies": rng.randint(opts["min"], opts["max"])}
    if kind == "fortify":
        k = rng.randrange(len(opts["moves"]) + 1)
        if k == len(opts["moves"]):
            return {"type": "end_turn"}
        m = opts["moves"][k]
        return {
            "type": "fortify",
            "from": m["from"],
            "to": m["to"],
            "armies": rng.randint(1, m["max_armies"]),
        }
    raise AssertionError(f"unexpected decision kind {kind!r}")


BOT_NAMES = ("random", "aggressive", "blitz", "defensive")


class Driver:
    """Chooses actions for every seat.

    ``uniform``: ``uniform_action``; ``bot``: the registered random bot in every seat;
    ``mixed``: the registered bots in turn (they finish games, so victories happen too).
    """

    def __init__(self, kind: str, num_players: int, seed: int) -> None:
        self.kind = kind
        self.rng = random.Random(seed)
        names = ["random"] * num_players
        if kind == "mixed":
            names = [BOT_NAMES[(seed + seat) % len(BOT_NAMES)] for seat in range(num_players)]
        self.bots = [
            REGISTRY.bot("risk", name).factory(seat, seed * 10 + seat)
            for seat, name in enumerate(names)
        ]

    def __call__(self, state: RiskState) -> dict[str, Any]:
        if self.kind != "uniform":
            decision = state.decision()
            seat = decision.player
            return self.bots[seat].decide(state.observation(seat), decision)
        return uniform_action(state, self.rng)


configs = st.fixed_dictionaries(
    {
        "seed": st.integers(min_value=0, max_value=2**32 - 1),
        "players": st.integers(min_value=3, max_value=6),
        "setup": st.sampled_from(["claim", "deal"]),
        "cards": st.sampled_from(["progressive", "none"]),
        "dice": st.sampled_from(["distribution", "faces"]),
        "turn_limit": st.integers(min_value=30, max_value=60),
        "driver": st.sampled_from(["bot", "uniform", "uniform", "mixed"]),
    }
)


def new_state(cfg: dict[str, Any]) -> RiskState:
    return GAME.new_state(
        cfg["players"],
        cfg["seed"],
        {
            "setup": cfg["setup"],
            "cards": cfg["cards"],
            "dice": cfg["dice"],
            "turn-limit": str(cfg["turn_limit"]),
        },
    )


# --- snapshots and invariants -----------------------------------------------------------


def snapshot(s: RiskState) -> dict[str, Any]:
    return {
        "owner": s.owner[:],
        "armies": s.armies[:],
        "hands": [h[:] for h in s.hands],
        "draw_pile": s.draw_pile[:],
        "discard": s.discard[:],
        "alive": s.alive[:],
        "eliminated": s.eliminated[:],
        "phase": s.decision().kind if not s.terminal else "game_over",
        "setup_left": s.observation(0)["setup_armies_left"],
    }


def full_state(s: RiskState) -> dict[str, Any]:
    """Every slot of the state (deep-copied), the generator's state and all observations."""
    out: dict[str, Any] = {}
    for name in RiskState.__slots__:
        if name in ("map", "config", "hooks", "rng"):
            continue
        out[name] = copy.deepcopy(getattr(s, name))
    out["rng"] = s.rng.getstate()
    out["observations"] = [s.observation(p) for p in range(s.num_players)]
    return out


def check_board(s: RiskState) -> None:
    """Invariants of a single position."""
    snap = snapshot(s)
    owner, armies = snap["owner"], snap["armies"]
    assert len(owner) == len(armies) == NUM_TERRITORIES
    assert min(armies) >= 0, f"negative armies: {armies}"
    # Cards are conserved: every card exactly once in the draw pile, discard or a hand.
    everywhere = snap["draw_pile"] + snap["discard"] + [c for h in snap["hands"] for c in h]
    assert sorted(everywhere) == list(range(DECK)), f"cards not conserved: {sorted(everywhere)}"
    if snap["phase"] == "claim":
        for t in range(NUM_TERRITORIES):
            assert (owner[t] == -1) == (armies[t] == 0), (t, owner[t], armies[t])
        return
    # Once setup is over, every territory is owned with at least one army; the only
    # exception is the territory just captured, empty until the move-in decision.
    moving_into = s.decision().options["to"] if snap["phase"] == "move_in" else None
    for t in range(NUM_TERRITORIES):
        assert 0 <= owner[t] < s.num_players, f"territory {t} unowned after setup"
        if t == moving_into:
            assert armies[t] == 0
        else:
            assert armies[t] >= 1, f"territory {t} has {armies[t]} armies"
    counts = Counter(owner)
    if snap["phase"] != "setup_place":
        for p in range(s.num_players):
            assert snap["alive"][p] == (counts[p] > 0), (p, snap["alive"], counts)
            if not snap["alive"][p]:
                assert snap["hands"][p] == [], "an eliminated player still holds cards"
    assert sorted(snap["eliminated"]) == [p for p in range(s.num_players) if not snap["alive"][p]]


def check_step(
    before: dict[str, Any],
    after: dict[str, Any],
    actor: int,
    action: dict[str, Any],
    events: list[dict[str, Any]],
    num_players: int,
) -> None:
    """Only the acting player changes the state, and only in the ways the rules allow."""
    kind = action["type"]
    newly_dead = [p for p in range(num_players) if before["alive"][p] and not after["alive"][p]]
    assert actor not in newly_dead, "the acting player eliminated themselves"
    if newly_dead:
        assert kind in ("attack", "move_in"), f"elimination by a {kind}"
    # Other players' hands change only by an elimination handing them to the actor.
    for q in range(num_players):
        if q == actor:
            continue
        if q in newly_dead:
            assert after["hands"][q] == []
        else:
            assert after["hands"][q] == before["hands"][q], f"seat {q}'s hand changed"
        assert after["setup_left"][q] == before["setup_left"][q], f"seat {q}'s setup armies"
    # The actor's hand: loses exactly the traded cards, gains the drawn and the taken ones.
    traded = Counter(c for e in events if e["e"] == "trade" for c in e["cards"])
    drawn = Counter(e["card"] for e in events if e["e"] == "draw")
    taken = Counter(c for q in newly_dead for c in before["hands"][q])
    hand_before, hand_after = Counter(before["hands"][actor]), Counter(after["hands"][actor])
    assert hand_before - hand_after == traded, (hand_before, hand_after, traded)
    assert hand_after - hand_before == drawn + taken, (hand_before, hand_after, drawn, taken)
    if kind != "trade":
        assert not traded
    if kind != "end_attack":
        assert not drawn
    assert sum(drawn.values()) <= 1, "more than one card drawn in a turn"
    # Territories of everyone else only lose armies, or ownership to the actor, by the
    # actor's attack on them (or an unclaimed territory is claimed by the actor).
    targets = {e["to"] for e in events if e["e"] == "battle"}
    for t in range(NUM_TERRITORIES):
        o_b, o_a = before["owner"][t], after["owner"][t]
        a_b, a_a = before["armies"][t], after["armies"][t]
        if o_b == actor:
            assert o_a == actor, f"the actor lost territory {t} on their own move"
            continue
        if (o_a, a_a) == (o_b, a_b):
            continue
        if o_a == o_b:
            assert kind == "attack" and t in targets and a_a < a_b, (
                f"territory {t} of seat {o_b} went {a_b} -> {a_a} on a {kind}"
            )
        else:
            assert o_a == actor, f"territory {t} went from {o_b} to {o_a}, not the actor"
            assert kind in ("attack", "claim"), f"territory {t} changed hands on a {kind}"
            if kind == "claim":
                assert o_b == -1 and a_a == 1
            else:
                assert t in targets
    # No territory changes that the action's events do not name.
    named: set[int] = set()
    for e in events:
        if e["e"] in ("claim", "place"):
            named.add(e["t"])
        elif e["e"] in ("battle", "move_in", "fortify", "conquer"):
            named.update((e["from"], e["to"]))
        elif e["e"] == "reinforce":
            named.update(t for t, _n in e["armies"])
        elif e["e"] == "trade" and "bonus" in e:
            named.add(e["bonus"])
    for t in range(NUM_TERRITORIES):
        if (before["owner"][t], before["armies"][t]) != (after["owner"][t], after["armies"][t]):
            assert t in named, f"territory {t} changed on a {kind} whose events do not name it"
    # The discard pile only grows by traded cards, or is reshuffled into the draw pile.
    reshuffled = any(e["e"] == "reshuffle" for e in events)
    if reshuffled:
        assert before["draw_pile"] == [] and after["discard"] == []
    else:
        assert after["discard"][: len(before["discard"])] == before["discard"]
        assert Counter(after["discard"][len(before["discard"]) :]) == traded


def check_reinforcements(s: RiskState, events: list[dict[str, Any]]) -> None:
    """A turn's reinforcements: max(3, territories // 3) + wholly held continents."""
    game_map = s.map
    for e in events:
        if e["e"] != "reinforcements":
            continue
        p = e["p"]
        owned = [t for t, o in enumerate(s.owner) if o == p]
        expected = max(3, len(owned) // 3)
        for members, bonus in zip(
            game_map.continent_members, game_map.continent_bonus, strict=True
        ):
            if all(s.owner[t] == p for t in members):
                expected += bonus
        assert e["total"] == expected, (e, len(owned))


def check_result(s: RiskState, turn_events: list[dict[str, Any]], limit: int) -> Result:
    result = s.result()
    assert isinstance(result, Result)
    n = s.num_players
    places = result.places
    assert len(places) == n
    # A valid ranking: each place is 1 + the number of seats strictly better placed.
    for p in range(n):
        assert places[p] == 1 + sum(1 for q in range(n) if places[q] < places[p]), places
    winners = result.winners
    alive = [p for p in range(n) if s.alive[p]]
    assert winners, "nobody placed first"
    # Eliminated seats rank below every survivor, the last eliminated best.
    for p in alive:
        for q in s.eliminated:
            assert places[p] < places[q]
    for earlier, later in zip(s.eliminated, s.eliminated[1:], strict=False):
        assert places[later] < places[earlier]
    last_round = turn_events[-1]["round"] if turn_events else 0
    if result.reason == EndReason.VICTORY:
        assert len(winners) == 1
        (w,) = winners
        assert alive == [w], f"victory by {w} but alive: {alive}"
        assert all(o == w for o in s.owner)
        assert last_round <= limit
    else:
        assert result.reason == EndReason.TURN_LIMIT
        assert list(winners) == alive, "a turn limit ties exactly the survivors"
        assert len(alive) >= 2
        assert last_round == limit, f"limit {limit} but the last turn was in round {last_round}"
    return result


def check_turn_order(turn_events: list[dict[str, Any]], alive_at: list[list[bool]]) -> None:
    """Turns pass to the next living seat; a round starts again after the wrap."""
    for prev, nxt, alive in zip(turn_events, turn_events[1:], alive_at[1:], strict=False):
        n = len(alive)
        expected = next(s for k in range(1, n + 1) if alive[s := (prev["p"] + k) % n])
        assert nxt["p"] == expected, (prev, nxt, alive)
        assert nxt["turn"] == prev["turn"] + 1
        assert nxt["round"] == prev["round"] + (1 if nxt["p"] <= prev["p"] else 0)


def kind_is_trade_down(state: RiskState, events: list[dict[str, Any]]) -> bool:
    """An elimination just handed over cards and a forced trade follows at once."""
    if state.terminal or not any(e["e"] == "eliminate" for e in events):
        return False
    decision = state.decision()
    if decision.kind == "move_in":
        return len(state.hands[decision.player]) >= 6
    return decision.kind == "trade" and decision.options["must_trade"]


def play_checked(cfg: dict[str, Any], seen: Counter[str] | None = None) -> RiskState:
    """Play a whole game checking everything; count the event kinds into ``seen``."""
    seen = Counter() if seen is None else seen
    state = new_state(cfg)
    driver = Driver(cfg["driver"], cfg["players"], cfg["seed"])
    check_board(state)
    turn_events = [e for e in state.initial_events if e["e"] == "turn"]
    alive_at = [state.alive[:] for _ in turn_events]
    check_reinforcements(state, state.initial_events)
    max_steps = 200_000
    for _ in range(max_steps):
        if state.terminal:
            break
        decision = state.decision()
        actor = decision.player
        assert actor == state.current_player
        assert state.alive[actor], "a dead seat is asked to decide"
        action = driver(state)
        before = snapshot(state)
        events = state.apply(actor, action)
        after = snapshot(state)
        check_board(state)
        check_step(before, after, actor, action, events, cfg["players"])
        check_reinforcements(state, events)
        if kind_is_trade_down(state, events):
            seen["trade_down"] += 1
        for e in events:
            seen[e["e"]] += 1
            if e["e"] == "turn":
                turn_events.append(e)
                alive_at.append(state.alive[:])
                assert e["p"] == state.current_player
    assert state.terminal, f"the game did not end within {max_steps} decisions"
    check_turn_order(turn_events, alive_at)
    check_result(state, turn_events, cfg["turn_limit"])
    try:
        state.apply(state.current_player, {"type": "end_turn"})
    except IllegalAction as exc:
        assert "over" in str(exc)
    else:
        raise AssertionError("a finished game accepted an action")
    return state


# --- properties ---------------------------------------------------------------------------


@PROPERTY_SETTINGS
@given(cfg=configs)
def test_random_play_keeps_every_invariant_and_ends(cfg):
    play_checked(cfg)


def test_random_play_reaches_the_interesting_cases():
    """The driver really exercises captures, draws, reshuffles, trades (also after an
    elimination), eliminations and victories."""
    seen: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for seed in range(12):
        cfg = {
            "seed": seed,
            "players": 3 + seed % 4,
            "setup": ("claim", "deal")[seed % 2],
            "cards": "progressive",
            "dice": ("distribution", "faces")[seed // 2 % 2],
            "turn_limit": 60,
            "driver": ("uniform", "mixed")[seed % 3 == 0],
        }
        state = play_checked(cfg, seen)
        reasons[state.result().reason.value] += 1
    kinds = ("battle", "conquer", "draw", "trade", "eliminate", "move_in", "fortify")
    for kind in (*kinds, "reshuffle", "trade_down"):
        assert seen[kind] > 0, f"no {kind} event in the sample: {seen}"
    assert reasons["victory"] > 0 and reasons["turn_limit"] > 0, reasons


@pytest.mark.parametrize("seed", range(6))
def test_game_over_is_the_last_event(seed):
    """``game_over`` is "the end" (docs/replay-format.md): exactly once, and last."""
    cfg = {
        "seed": seed,
        "players": 3 + seed % 4,
        "setup": "deal",
        "cards": "progressive",
        "dice": "distribution",
        "turn_limit": 60,
        "driver": "mixed",
    }
    state = new_state(cfg)
    driver = Driver("mixed", cfg["players"], seed)
    events = list(state.initial_events)
    while not state.terminal:
        events.extend(state.apply(state.current_player, driver(state)))
    kinds = [e["e"] for e in events]
    assert kinds.count("game_over") == 1
    assert kinds[-1] == "game_over", f"{state.result().reason}: the game ends with {kinds[-4:]}"


@PROPERTY_SETTINGS
@given(cfg=configs, stop=st.integers(min_value=0, max_value=400), extra=st.integers(0, 300))
def test_clone_is_independent(cfg, stop, extra):
    state = new_state(cfg)
    driver = Driver("uniform", cfg["players"], cfg["seed"])
    for _ in range(stop):
        if state.terminal:
            break
        state.apply(state.current_player, driver(state))
    original = full_state(state)
    clone = state.clone()
    assert full_state(clone) == original, "a fresh clone differs from its original"

    # Playing the clone leaves the original untouched ...
    clone_driver = Driver("uniform", cfg["players"], cfg["seed"] + 1)
    for _ in range(extra):
        if clone.terminal:
            break
        clone.apply(clone.current_player, clone_driver(clone))
    # ... and so does mutating every list the clone holds.
    clone.armies[0] += 7
    clone.owner[1] = (clone.owner[1] + 1) % cfg["players"]
    for hand in clone.hands:
        hand.append(99)
    clone.draw_pile.append(98)
    clone.discard.append(97)
    clone.alive[0] = not clone.alive[0]
    clone.eliminated.append(5)
    clone.territory_count[0] += 1
    clone.rng.random()
    assert full_state(state) == original, "playing or mutating the clone changed the original"

    # Playing the original leaves an earlier clone untouched.
    second = state.clone()
    frozen = full_state(second)
    for _ in range(extra):
        if state.terminal:
            break
        state.apply(state.current_player, driver(state))
    assert full_state(second) == frozen, "playing the original changed its clone"


@PROPERTY_SETTINGS
@given(cfg=configs, stop=st.integers(min_value=0, max_value=600))
def test_clone_continues_identically(cfg, stop):
    state = new_state(cfg)
    driver = Driver("uniform", cfg["players"], cfg["seed"])
    for _ in range(stop):
        if state.terminal:
            break
        state.apply(state.current_player, driver(state))
    clone = state.clone()
    steps = 0
    while not state.terminal:
        assert not clone.terminal
        decision = state.decision()
        assert clone.decision().player == decision.player
        assert clone.decision().kind == decision.kind
        assert clone.decision().options == decision.options
        action = driver(state)
        events = state.apply(decision.player, copy.deepcopy(action))
        assert clone.apply(decision.player, action) == events, f"diverged at step {steps}"
        steps += 1
        if steps % 25 == 0:
            assert full_state(clone) == full_state(state)
    assert clone.terminal
    assert clone.result() == state.result()
    assert full_state(clone) == full_state(state)
