"""The fast mode: ``State.simulate`` and ``play_match(record=False)`` play exactly the game
that ``apply`` plays (same state, same generator, same result), only without events;
a match recorded in the normal mode still verifies. And ``clone()``, which shares the
generator until one of the two states draws, still gives independent copies."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from arena.engine import IllegalAction, State, play_match
from arena.engine.chance import SecureRandom
from arena.engine.match import LazyObservation, MatchRecord
from arena.engine.replay import dumps, from_json, verify
from arena.plugins import load_registry

REGISTRY = load_registry()

#: (game, bots by seat, variants, options)
CASES = [
    ("risk", ("blitz",) * 4, [], {"cards": "none"}),
    ("risk", ("blitz", "aggressive", "defensive"), [], {"setup": "deal"}),
    ("risk", ("random", "aggressive", "defensive", "random"), [], {"turn-limit": "60"}),
    ("risk", ("aggressive", "blitz", "defensive", "random"), ["missions"], {"dice": "faces"}),
    ("risk", ("defensive", "random", "blitz"), ["capital"], {"defender-dice": "choose"}),
    ("risk", ("blitz", "aggressive"), ["neutral"], {"cards": "fixed"}),
    ("stratego", ("random", "random"), [], {}),
    ("stratego", ("random", "random"), [], {"rescue": "on"}),
    ("stratego", ("heuristic", "random"), ["isf"], {}),
    ("stratego", ("random", "heuristic"), ["barrage"], {}),
]
SEEDS = range(8)
#: what a state holds that is not the position: the rules, hooks and the mode itself
NOT_POSITION = {
    "map",
    "config",
    "hooks",
    "rules",
    "_custom",
    "_quiet",
    "_moves",
    "_rng",
    "_rng_shared",
}


def fields(state: State) -> dict[str, Any]:
    """Every field of the position (deep-copied, sets sorted), the generator's state and
    every seat's observation."""
    names = [*getattr(type(state), "__slots__", ()), *vars(state)]
    out: dict[str, Any] = {}
    for name in names:
        if name not in NOT_POSITION:
            value = getattr(state, name)
            out[name] = sorted(value) if isinstance(value, set) else copy.deepcopy(value)
    out["rng"] = state.rng.getstate()
    out["observations"] = [state.observation(p) for p in range(state.num_players)]
    return out


def play(case: tuple[Any, ...], seed: int, record: bool) -> MatchRecord:
    game, bots, variants, options = case
    players = [
        REGISTRY.bot(game, name).factory(seat, seed * 100 + seat) for seat, name in enumerate(bots)
    ]
    return play_match(
        REGISTRY.game(game),
        players,
        seed,
        options,
        REGISTRY.resolve_variants(game, variants),
        names=list(bots),
        record=record,
    )


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{'-'.join(c[2]) or 'classic'}")
def test_the_fast_mode_plays_the_same_game(case: tuple[Any, ...]) -> None:
    for seed in SEEDS:
        normal = play(case, seed, record=True)
        fast = play(case, seed, record=False)
        assert fast.steps == [], "the fast mode keeps no steps"
        assert fast.result == normal.result, f"seed {seed}: the results differ"
        assert fields(fast.final_state) == fields(normal.final_state), f"seed {seed}"
        # the match recorded in the normal mode verifies, from its JSON
        assert verify(from_json(json.loads(dumps(normal))), REGISTRY) == len(normal.steps)


@pytest.mark.parametrize(
    "case", CASES[3:6] + CASES[7:9], ids=lambda c: f"{c[0]}-{'-'.join(c[2]) or 'rescue'}"
)
def test_simulate_and_apply_agree_at_every_step(case: tuple[Any, ...]) -> None:
    """Two copies of one game, one driven by apply and one by simulate: after every
    action they offer the same decision and show every seat the same observation."""
    game, bots, variants, options = case
    seed = 5
    made = REGISTRY.game(game).new_state(
        len(bots), seed, options, REGISTRY.resolve_variants(game, variants)
    )
    applied, simulated = made, made.clone()
    players = [REGISTRY.bot(game, n).factory(s, s) for s, n in enumerate(bots)]
    steps = 0
    while not applied.terminal and steps < 3000:
        decision = applied.decision()
        other = simulated.decision()
        assert (other.player, other.kind) == (decision.player, decision.kind), f"step {steps}"
        assert other.options == decision.options, f"step {steps}"
        seat = decision.player
        for p in range(applied.num_players):
            assert simulated.observation(p) == applied.observation(p), f"step {steps}, seat {p}"
        observation = LazyObservation.of(applied, seat)
        action = players[seat].decide(observation, decision)
        observation.expire()
        assert simulated.simulate(seat, copy.deepcopy(action)) is None
        applied.apply(seat, action)
        steps += 1
    assert simulated.terminal == applied.terminal
    assert fields(simulated) == fields(applied)


def test_simulate_refuses_what_apply_refuses_and_changes_nothing() -> None:
    risk = REGISTRY.game("risk").new_state(3, 1, {"setup": "deal"})  # placing armies now
    seat = risk.current_player
    theirs = risk.owner.index((seat + 1) % 3)
    stratego = REGISTRY.game("stratego").new_state(2, 1)
    refused = [
        (risk, seat, {"type": "attack", "from": 0, "to": 1}),  # not in this phase
        (risk, (seat + 1) % 3, {"type": "place", "territory": theirs}),  # not its turn
        (risk, seat, {"type": "place", "territory": theirs}),  # not its territory
        (risk, seat, "place"),  # not a mapping
        (stratego, 0, {"type": "move", "from": 0, "to": 10}),  # the setup comes first
        (stratego, 0, {"type": "setup", "placement": {"a1": "flag"}}),  # not an army
        (stratego, 1, {"type": "setup", "placement": {}}),  # seat 0 sets up first
    ]
    for state, seat, action in refused:
        before = fields(state)
        with pytest.raises(IllegalAction) as by_apply:
            state.apply(seat, action)
        with pytest.raises(IllegalAction) as by_simulate:
            state.simulate(seat, action)
        assert str(by_simulate.value) == str(by_apply.value)
        assert fields(state) == before, f"the refused {action} changed the state"


def test_apply_after_simulate_makes_every_event_again() -> None:
    """The mode is per call: a state simulated for a while gives full events again."""
    case = CASES[0]
    normal = play(case, 3, record=True)
    state = REGISTRY.game("risk").new_state(4, 3, {"cards": "none"})
    half = len(normal.steps) // 2
    for seat, action, _ in normal.steps[:half]:
        state.simulate(seat, copy.deepcopy(action))
    for seat, action, events in normal.steps[half:]:
        assert json.loads(json.dumps(state.apply(seat, copy.deepcopy(action)))) == events


@pytest.mark.parametrize("game", ["risk", "stratego"])
def test_a_clone_shares_the_generator_until_either_draws(game: str) -> None:
    num_players = 4 if game == "risk" else 2
    state = REGISTRY.game(game).new_state(num_players, 11)
    reference = SecureRandom()
    reference.setstate(state.rng.getstate())
    expected = [reference.random() for _ in range(5)]
    first = state.clone()
    second = first.clone()  # a clone of a clone shares it too
    # whichever draws first, each continues from where the original stood
    assert [second.rng.random() for _ in range(5)] == expected
    assert [state.rng.random() for _ in range(5)] == expected
    assert [first.rng.random() for _ in range(5)] == expected
    # and drawing more from one changes none of the others
    state.rng.random()
    third = state.clone()
    assert third.rng.getstate() == state.rng.getstate() != first.rng.getstate()
