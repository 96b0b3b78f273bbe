"""The generic game API test for Stratego, under every rule set.

In the spirit of OpenSpiel's ``random_sim_test`` and PettingZoo's ``api_test``: games
are played to the end from random legal setups by the example bots, and at every
decision the contract of :class:`arena.engine.core.State` is checked on samples:

* every option the decision lists is accepted (applied to a clone);
* actions outside the options (random squares, the opponent's pieces, the wrong
  seat, the wrong kind of action, malformed actions) are refused with an
  :class:`IllegalAction` that carries a reason, and change nothing;
* applying to a clone never touches the original;
* the game always ends, within the turn limit, with a well-formed result;
* the recorded game replays and verifies (:func:`arena.engine.replay.verify`).
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from arena.bots.random_bot import RandomStrategoBot
from arena.bots.stratego_heuristic import HeuristicStrategoBot
from arena.engine import replay
from arena.engine.core import Action, EndReason, IllegalAction
from arena.engine.match import MatchRecord
from arena.games.stratego.board import LAKES, NEIGHBOURS, SQUARES, square_name
from arena.games.stratego.pieces import IMMOVABLE, NAMES
from arena.games.stratego.state import StrategoState
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("stratego")
TURN_LIMIT = 400

#: rule set -> (variants, options)
RULE_SETS: dict[str, tuple[list[str], dict[str, str]]] = {
    "classic": ([], {}),
    "classic-rescue": ([], {"rescue": "on"}),
    "isf": (["isf"], {}),
    "barrage": (["barrage"], {}),
}
BOTS: dict[str, Callable[[int, int], Any]] = {
    "random": RandomStrategoBot,
    "heuristic": HeuristicStrategoBot,
}
PAIRINGS = (
    ("random", "random"),
    ("heuristic", "random"),
    ("random", "heuristic"),
    ("heuristic", "heuristic"),
)
#: every this many decisions, every listed option is tried (otherwise a sample)
FULL_CHECK_EVERY = 25


def new_state(rule_set: str, seed: int) -> tuple[StrategoState, list[str], dict[str, str]]:
    variant_names, options = RULE_SETS[rule_set]
    options = {**options, "turn-limit": str(TURN_LIMIT)}
    variants = REGISTRY.resolve_variants("stratego", variant_names)
    return GAME.new_state(2, seed, options, variants), variant_names, options


def fingerprint(state: StrategoState) -> str:
    """What must not change when an action is refused or a clone is played on."""
    return json.dumps(
        [
            state.observation(0),
            state.observation(1),
            state.rank,
            state.owner,
            state.pid,
            state.moved,
            state.far,
            state.revealed,
            [sorted(p) for p in state.pieces],
            state.captured,
            state.phase,
            state.player,
            state.ply,
            list(state.zview),
            state.last_move,
            state.shuttle,
            [None if c is None else sorted(c) for c in state.chase],
            [sorted(e) for e in state.evaders],
            state.rescues,
            [sorted(r) for r in state.rescuers],
            repr(state.result()),
        ],
        sort_keys=True,
    )


class Checker:
    """Runs the sampled checks on one state and counts what it tried."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.counts: Counter[str] = Counter()

    def accepted(self, state: StrategoState, seat: int, action: Action) -> list[Any]:
        trial = state.clone()
        events = trial.apply(seat, action)
        assert isinstance(events, list)
        json.dumps(events)  # events are JSON
        self.counts["accepted"] += 1
        return events

    def refused(self, state: StrategoState, seat: int, action: Any) -> None:
        try:
            state.apply(seat, action)
        except IllegalAction as exc:
            assert exc.reason and isinstance(exc.reason, str), action
            self.counts["refused"] += 1
            return
        raise AssertionError(f"seat {seat}'s {action!r} was accepted but is not a legal option")

    # --- per decision kind ----------------------------------------------------------------

    def setup(self, state: StrategoState, seat: int, action: Action, opts: dict) -> None:
        placement = action["placement"]
        self.accepted(state, seat, action)
        assert len(placement) == sum(opts["army"].values())
        self.refused(state, 1 - seat, action)  # not your turn
        squares = [int(s) for s in placement]
        outside = [s for s in range(SQUARES) if s not in opts["squares"]]
        moved = dict(placement)
        moved[str(self.rng.choice(outside))] = moved.pop(str(self.rng.choice(squares)))
        self.refused(state, seat, {"type": "setup", "placement": moved})
        short = dict(placement)
        del short[str(self.rng.choice(squares))]
        self.refused(state, seat, {"type": "setup", "placement": short})
        wrong = dict(placement)
        victim = str(self.rng.choice(squares))
        wrong[victim] = self.rng.choice([n for n in NAMES if n != wrong[victim]])
        self.refused(state, seat, {"type": "setup", "placement": wrong})
        self.refused(state, seat, {"type": "move", "from": squares[0], "to": squares[0] + 10})

    def move(self, state: StrategoState, seat: int, opts: dict, full: bool) -> None:
        rng = self.rng
        moves = opts["moves"]
        assert moves, "a player to move must have a legal move (else the game is over)"
        legal = {tuple(m) for m in moves}
        assert len(legal) == len(moves), "a move is listed twice"
        for s, t in moves:
            assert state.owner[s] == seat and state.rank[s] not in IMMOVABLE
            assert state.owner[t] != seat and t not in LAKES
        sample = moves if full else rng.sample(moves, min(3, len(moves)))
        for s, t in sample:
            events = self.accepted(state, seat, {"type": "move", "from": s, "to": t})
            assert events[0]["e"] in ("move", "strike") and events[0]["p"] == seat
        # squares given by name are accepted too
        s, t = rng.choice(moves)
        self.accepted(state, seat, {"type": "move", "from": square_name(s), "to": square_name(t)})
        # random squares that are not a listed move
        tries = 0
        while tries < 4:
            pair = (rng.randrange(SQUARES), rng.randrange(SQUARES))
            if pair in legal:
                continue
            tries += 1
            self.refused(state, seat, {"type": "move", "from": pair[0], "to": pair[1]})
        # near misses: a movable own piece to a square next to it that is not listed
        own = sorted(state.pieces[seat])
        for s in rng.sample(own, min(3, len(own))):
            for t in NEIGHBOURS[s]:
                if (s, t) not in legal:
                    self.refused(state, seat, {"type": "move", "from": s, "to": t})
        # the opponent's pieces
        theirs = sorted(state.pieces[1 - seat])
        for s in rng.sample(theirs, min(2, len(theirs))):
            for t in NEIGHBOURS[s]:
                self.refused(state, seat, {"type": "move", "from": s, "to": t})
        # a legal move, but by the seat not to move
        s, t = rng.choice(moves)
        self.refused(state, 1 - seat, {"type": "move", "from": s, "to": t})
        # the wrong kind of action, malformed actions
        self.refused(state, seat, {"type": "no_rescue"})
        self.refused(state, seat, {"type": "move", "from": s})
        self.refused(state, seat, [s, t])

    def rescue(self, state: StrategoState, seat: int, opts: dict, full: bool) -> None:
        pieces, squares = opts["pieces"], opts["squares"]
        assert pieces and squares
        assert "bomb" not in pieces and "flag" not in pieces
        pairs = [(p, q) for p in pieces for q in squares]
        sample = pairs if full else self.rng.sample(pairs, min(4, len(pairs)))
        for piece, square in sample:
            self.accepted(state, seat, {"type": "rescue", "piece": piece, "square": square})
        self.accepted(state, seat, {"type": "no_rescue"})
        square = self.rng.choice(squares)
        for piece in ("bomb", "flag", *(n for n in NAMES if n not in pieces)):
            self.refused(state, seat, {"type": "rescue", "piece": piece, "square": square})
        for q in self.rng.sample(range(SQUARES), 6):
            if q not in squares:
                self.refused(state, seat, {"type": "rescue", "piece": pieces[0], "square": q})
        self.refused(state, 1 - seat, {"type": "no_rescue"})
        s, t = next(iter(state.legal_moves(seat)), (0, 10))
        self.refused(state, seat, {"type": "move", "from": s, "to": t})


def play_checked(
    rule_set: str, seed: int, pairing: tuple[str, str]
) -> tuple[MatchRecord, Counter[str]]:
    state, variant_names, options = new_state(rule_set, seed)
    players = [BOTS[name](seat, seed * 10 + seat) for seat, name in enumerate(pairing)]
    checker = Checker(random.Random(seed))
    rec = MatchRecord(
        game="stratego",
        num_players=2,
        seed=seed,
        players=list(pairing),
        options=options,
        variants=variant_names,
        initial_events=list(state.initial_events),
    )
    decisions = 0
    while not state.terminal:
        # plies are bounded by the turn limit; setups and rescues add a few decisions
        assert decisions <= TURN_LIMIT + 2 + 4, "the game does not end"
        decision = state.decision()
        seat = decision.player
        assert seat == state.current_player
        assert decision.kind == state.observation(seat)["phase"]
        opts = decision.options
        json.dumps(decision.to_json())
        before = fingerprint(state)
        action = players[seat].decide(state.observation(seat), decision)
        full = decisions % FULL_CHECK_EVERY == 0
        checker.counts[decision.kind] += 1
        if decision.kind == "setup":
            checker.setup(state, seat, action, opts)
        elif decision.kind == "move":
            checker.move(state, seat, opts, full)
            assert [action["from"], action["to"]] in opts["moves"]
        else:
            assert decision.kind == "rescue", decision.kind
            checker.rescue(state, seat, opts, full)
        assert fingerprint(state) == before, "a refused action or a clone changed the state"
        events = state.apply(seat, action)
        rec.steps.append([seat, action, events])
        decisions += 1
    rec.result = state.result()
    result = rec.result
    assert result is not None
    assert result.reason in (
        EndReason.VICTORY,
        EndReason.NO_MOVES,
        EndReason.DRAW,
        EndReason.TURN_LIMIT,
    )
    assert sorted(result.places) in ([1, 1], [1, 2])
    assert state.ply <= TURN_LIMIT
    if result.reason is EndReason.TURN_LIMIT:
        assert state.ply == TURN_LIMIT and result.places == (1, 1)
    # once over, everything is refused
    with pytest.raises(IllegalAction, match="the game is over"):
        state.apply(state.current_player, {"type": "move", "from": 0, "to": 10})
    assert rec.steps[-1][2][-1]["e"] == "game_over"
    return rec, checker.counts


@pytest.mark.parametrize("rule_set", list(RULE_SETS))
def test_random_play_accepts_every_listed_option_and_refuses_the_rest(rule_set: str) -> None:
    totals: Counter[str] = Counter()
    reasons: Counter[str] = Counter()
    for i, pairing in enumerate(PAIRINGS):
        seed = 100 * i + len(rule_set)
        rec, counts = play_checked(rule_set, seed, pairing)
        totals.update(counts)
        reasons[rec.result.reason.value] += 1
        # the record replays: through JSON, as a replay file would hold it
        loaded = replay.from_json(json.loads(replay.dumps(rec)))
        assert replay.verify(loaded, REGISTRY) == len(rec.steps)
    # the checks were not vacuous
    assert totals["setup"] == 2 * len(PAIRINGS)
    assert totals["move"] >= 100
    assert totals["accepted"] >= totals["move"] and totals["refused"] >= 10 * totals["move"]
    if rule_set == "classic-rescue":
        assert totals["rescue"] > 0, "no rescue decision came up: the rescue checks never ran"
    else:
        assert totals["rescue"] == 0


def test_a_tampered_replay_does_not_verify() -> None:
    rec, _ = play_checked("isf", 7, ("heuristic", "random"))
    data = json.loads(replay.dumps(rec))
    # claim a different outcome for the first strike in the game
    strikes = [i for i, step in enumerate(data["steps"]) if step[2] and step[2][0]["e"] == "strike"]
    index = strikes[0]
    step = data["steps"][index]
    step[2][0]["result"] = {"attacker": "defender", "defender": "both", "both": "attacker"}[
        step[2][0]["result"]
    ]
    with pytest.raises(replay.ReplayMismatch) as info:
        replay.verify(replay.from_json(data), REGISTRY)
    assert info.value.step == index


def played(rule_set: str, plies: int, seed: int = 4) -> StrategoState:
    state, _, _ = new_state(rule_set, seed)
    players = [HeuristicStrategoBot(0, seed), RandomStrategoBot(1, seed)]
    while not state.terminal and state.ply < plies:
        decision = state.decision()
        seat = decision.player
        state.apply(seat, players[seat].decide(state.observation(seat), decision))
    assert not state.terminal and any("attacker" in entry for entry in state.history)
    return state


def scribble(value: Any) -> None:
    """Overwrite everything inside an observation, the way a careless bot might."""
    if isinstance(value, dict):
        for key in list(value):
            if isinstance(value[key], dict | list):
                scribble(value[key])
            else:
                value[key] = "scribbled"
    elif isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict | list):
                scribble(item)
            else:
                value[i] = "scribbled"
        value.append("scribbled")


def test_a_players_observation_is_its_own_copy() -> None:
    # a bot that writes into its observation changes nothing in the game, nor what
    # the other player is told (play_match hands the observation to the bot as is)
    state = played("classic", 40)
    before = fingerprint(state)
    for seat in (0, 1):
        scribble(state.observation(seat))
        assert fingerprint(state) == before, f"writing into seat {seat}'s observation changed it"


@pytest.mark.parametrize("rule_set", list(RULE_SETS))
def test_a_clone_is_independent_of_the_original(rule_set: str) -> None:
    state = played(rule_set, 40)
    before = fingerprint(state)
    clone = state.clone()
    assert fingerprint(clone) == before
    players = [RandomStrategoBot(0, 1), RandomStrategoBot(1, 2)]
    for _ in range(30):
        if clone.terminal:
            break
        decision = clone.decision()
        clone.apply(decision.player, players[decision.player].decide({}, decision))
    assert clone.ply > state.ply
    assert fingerprint(state) == before, "playing on the clone changed the original"
