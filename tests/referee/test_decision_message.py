"""The DecisionRequest the referee builds for a seat: a fresh request id, the seat's clock,
and the events that seat has not seen yet, each sent once."""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path

from arena.plugins import load_registry
from arena.referee.codec import observation_from_proto, to_json_text
from arena.referee.live import LiveMatch, Seat
from arena.v1 import arena_pb2 as pb

GAME = load_registry().game("risk")


def _match() -> LiveMatch:
    return LiveMatch(
        referee=None,  # type: ignore[arg-type]  # decision_message needs no referee
        match_id="m" * 32,
        game=GAME,
        variants=[],
        options={},
        seats=[Seat(label=f"b{i}", bot_id=f"b{i}") for i in range(3)],
        seed=5,
        decision_ms=250,
        time_bank_ms=4000,
    )


def test_request_carries_the_seat_clock_and_its_unsent_events_once() -> None:
    match = _match()
    state = GAME.new_state(3, 5, {}, [])
    decision = state.decision()
    seat = decision.player
    match.seats[seat].bank_ms = 1234
    match._unsent[seat] = ['{"type":"one"}', '{"type":"two"}']
    match._unsent[(seat + 1) % 3] = ['{"type":"other"}']
    observation = state.observation(seat)

    message, events = match.decision_message(
        seat, decision, observation, to_json_text(decision.options), 2
    )
    wire = pb.RefereeMessage.FromString(message.SerializeToString()).decision
    assert wire.match_id == match.match_id
    assert (wire.seat, wire.kind, wire.attempt) == (seat, decision.kind, 2)
    assert (wire.deadline_ms, wire.time_bank_ms) == (250, 1234)
    assert list(wire.events_json) == events == ['{"type":"one"}', '{"type":"two"}']
    assert observation_from_proto(wire.observation) == observation
    assert 0 < wire.request_id < 2**53  # exact as a JavaScript number
    # the other seat's events stay queued for it; this seat's are gone
    assert match._unsent == {(seat + 1) % 3: ['{"type":"other"}']}

    again, events = match.decision_message(seat, decision, observation, "{}", 1)
    # a re-ask is a new request: the old id is stale
    assert again.decision.request_id not in (0, wire.request_id)
    assert list(again.decision.events_json) == events == []


def test_the_protocol_benchmark_floor_runs_the_real_code_paths() -> None:
    """benchmarks/protocol.py times the referee's and the SDK's own code: it must keep
    running as they change (a whole game, both sides, no transport)."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "protocol.py"
    spec = importlib.util.spec_from_file_location("protocol_benchmark", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    referee_us, bot_us = bench.on_path_work(games=1, turn_limit=3)
    assert referee_us > 0 and bot_us > 0


def test_request_ids_tell_nothing_of_other_requests() -> None:
    """Ids are random, not a count of the match's requests: seat 1's first Stratego setup
    request must not show how many tries seat 0's setup took."""
    match = _match()
    state = GAME.new_state(3, 5, {}, [])
    decision = state.decision()
    observation = state.observation(decision.player)
    ids = [
        match.decision_message(decision.player, decision, observation, "{}", 1)[
            0
        ].decision.request_id
        for _ in range(200)
    ]
    assert len(set(ids)) == len(ids)
    assert all(0 < i < 2**53 for i in ids)
    steps = {b - a for a, b in itertools.pairwise(ids)}
    assert len(steps) > 100, "ids follow a pattern"
