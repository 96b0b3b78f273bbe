"""The referee end to end: a real ``arena referee`` process, real bot processes
(``arena bot run``), misbehaving bot processes (misbehaving_bot.py) and raw gRPC
clients, all over 127.0.0.1.

Whole games in every variant, time controls and strikes, reconnection, keys and
tokens, replies for the wrong seat, floods and oversized messages, and an audit of
the hidden information in the serialized messages every bot and spectator receives.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import random
import re
import socket
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from arena.bots._stratego_common import random_setup
from arena.engine.core import State
from arena.engine.match import MatchRecord, play_match
from arena.engine.replay import from_json, verify
from arena.games.risk.variants.missions import BY_ID as MISSIONS
from arena.games.stratego.setup import guarded_setup
from arena.plugins import load_registry
from arena.referee.codec import action_from_proto, action_to_proto, observation_to_proto
from arena.v1 import arena_pb2 as pb

from .conftest import wait_until


def _load_wire() -> Any:
    """The wire helpers of misbehaving_bot.py (conftest.py loads the same file)."""
    name = "referee_tests_misbehaving_bot"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(
        name, Path(__file__).resolve().with_name("misbehaving_bot.py")
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


wire = _load_wire()

REGISTRY = load_registry()
SERVING = health_pb2.HealthCheckResponse.SERVING
REASONS = {"victory", "turn_limit", "no_moves", "draw", "forfeit"}
RISK_LIMIT = {"turn-limit": "80"}  # bounds a game of random bots; a limit is a real end

# --- helpers -------------------------------------------------------------------------


def replay_of(info: pb.MatchInfo) -> MatchRecord:
    assert info.replay_json, f"match {info.match_id} ({info.status}) has no replay"
    return from_json(json.loads(info.replay_json))


def assert_sensible_result(info: pb.MatchInfo, seats: int) -> list[int]:
    """Finished, a known reason, one place per seat in competition ranking (1, 2, 2, 4)."""
    assert info.status == "finished", f"{info.status}: {info.result}"
    result = info.result
    assert result.reason in REASONS, result
    places = list(result.places)
    assert len(places) == seats == len(info.players)
    assert 1 in places
    for place in places:
        assert place == 1 + sum(other < place for other in places), places
    if result.reason in ("victory", "forfeit"):
        assert places.count(1) == 1, places
    return places


def assert_replay_verifies(info: pb.MatchInfo) -> MatchRecord:
    """The replay (from RunMatch/GetMatch) re-simulates exactly, result included."""
    rec = replay_of(info)
    assert verify(rec) == len(rec.steps) > 0
    assert rec.players == list(info.players)
    assert rec.result is not None
    assert rec.result.to_json() == {
        "reason": info.result.reason,
        "places": list(info.result.places),
        "detail": info.result.detail,
    }
    last = rec.events[-1]
    assert last["e"] == "game_over" and last["places"] == list(info.result.places)
    return rec


def new_state(rec: MatchRecord) -> State:
    game = REGISTRY.game(rec.game)
    variants = REGISTRY.resolve_variants(rec.game, rec.variants)
    return game.start_state(rec.num_players, rec.seed, rec.options, variants, rec.deal_seed)


def replay_states(rec: MatchRecord) -> Iterable[tuple[int, int, dict[str, Any], State]]:
    """(step index, seat, action, the state before the step), re-simulating ``rec``."""
    state = new_state(rec)
    for index, (seat, action, _events) in enumerate(rec.steps):
        yield index, seat, action, state
        if action.get("type") == "forfeit":
            state.forfeit(seat)
        else:
            state.apply(seat, action)


def final_state(rec: MatchRecord) -> State:
    state = new_state(rec)
    for _, _, _, state in replay_states(rec):  # noqa: B007
        pass
    return state  # the generator applied the last step when it ran out


def of_match(received: list, match_id: str, kind: str) -> list:
    """The ``kind`` messages of one match in a misbehaving bot's log, in order."""
    out = []
    for r in received:
        if r.kind == kind and getattr(r.message, kind).match_id == match_id:
            out.append(r)
    return out


def assert_still_serves(ref, fleet) -> None:
    """After abuse: health SERVING, bot processes still connected, and matches (house
    bots, and bot processes) play to the end."""
    assert ref.health() == SERVING
    assert ref.health("arena.v1.BotService") == SERVING
    ref.wait_connected(*fleet, timeout=10)
    info = ref.run_match(
        "risk", ["house:blitz", "house:random", "house:aggressive"], options=RISK_LIMIT, seed=3
    )
    assert_sensible_result(info, 3)
    info = ref.run_match("stratego", ["heuristic", "rand"], variants=["barrage"], seed=4)
    assert_sensible_result(info, 2)
    assert not info.result.forfeits
    assert_replay_verifies(info)


def code_of(call) -> grpc.StatusCode:
    with pytest.raises(grpc.RpcError) as caught:
        call()
    return caught.value.code()


# --- 1. whole games ------------------------------------------------------------------

WHOLE_GAMES = [
    pytest.param("risk", [], ["aggressive", "defensive", "rand"], id="risk-classic"),
    pytest.param("risk", ["missions"], ["rand", "aggressive", "defensive"], id="risk-missions"),
    pytest.param("risk", ["capital"], ["defensive", "aggressive", "rand"], id="risk-capital"),
    pytest.param("risk", ["neutral"], ["aggressive", "defensive"], id="risk-neutral"),
    pytest.param(
        "risk",
        [],
        ["aggressive", "house:blitz", "defensive", "house:random"],
        id="risk-processes-and-house-bots",
    ),
    pytest.param("risk", [], ["aggressive", "rand", "aggressive"], id="risk-one-bot-two-seats"),
    pytest.param("stratego", [], ["heuristic", "rand"], id="stratego-classic"),
    pytest.param("stratego", ["isf"], ["rand", "heuristic"], id="stratego-isf"),
    pytest.param("stratego", ["barrage"], ["heuristic", "rand"], id="stratego-barrage"),
]


@pytest.mark.parametrize(("game", "variants", "players"), WHOLE_GAMES)
def test_whole_game_between_bot_processes_finishes_and_its_replay_verifies(
    referee_server, bot_fleet, game, variants, players
):
    options = dict(RISK_LIMIT) if game == "risk" else {}
    info = referee_server.run_match(game, players, variants=variants, options=options, seed=11)
    places = assert_sensible_result(info, len(players))
    assert not info.result.forfeits  # well-behaved bots never forfeit
    assert list(info.players) == [f"{p}@1" for p in players]  # house bots are versioned too
    assert len(json.loads(info.replay_json)["steps"]) == len(replay_of(info).steps)
    rec = assert_replay_verifies(info)
    assert rec.variants == variants
    # GetMatch gives the same match and replay afterwards
    again = referee_server.get_match(info.match_id)
    assert again.status == "finished" and again.result == info.result
    assert json.loads(again.replay_json) == json.loads(info.replay_json)
    # the result agrees with the final position
    final = final_state(rec)
    assert final.terminal and final.result().to_json() == rec.result.to_json()
    winners = [seat for seat, place in enumerate(places) if place == 1]
    if game == "risk" and info.result.reason == "victory" and not variants:
        assert set(final.owner) == set(winners), "the winner of classic Risk owns the world"
    # a spectator arriving after the end gets the finished match, replay included
    late = Spectator(referee_server.channel, info.match_id)
    late.join()
    assert late.events == [] and late.finished is not None
    assert late.finished.result == info.result and late.finished.replay_json
    # one that asks for the end without the replay gets the result alone
    brief = Spectator(referee_server.channel, info.match_id, without_replay=True)
    brief.join()
    assert brief.finished is not None and brief.finished.result == info.result
    assert brief.finished.replay_json == "" and not brief.finished.HasField("seed")
    if game == "stratego" and info.result.reason == "victory":
        assert "captured the flag" in info.result.detail
        assert rec.events[-2]["e"] == "strike" and rec.events[-2]["defender"] == "flag"
        assert rec.events[-2]["p"] == winners[0]


def test_cli_match_run_and_replay_verify_with_bot_processes(
    referee_server, bot_fleet, spawn, tmp_path
):
    """The manual path: ``arena match run`` against bot processes, then ``arena replay
    verify`` of the replay it wrote (gzipped, as its name ends in .gz)."""
    replay = tmp_path / "match.json.gz"
    run = spawn.cli(
        tmp_path,
        "match-run",
        "match",
        "run",
        "risk",
        "--players",
        "aggressive,defensive,house:blitz",
        "--variant",
        "missions",
        "--referee",
        referee_server.address,
        "--seed",
        "5",
        "--replay",
        str(replay),
    )
    assert run.wait(60) == 0, run.stderr()
    out = run.stdout()
    assert ": finished, " in out and "seat 0: aggressive@1 place " in out, out
    # its id first, while it plays (to watch it), and the same match at the end
    started = re.match(r"match (\S+) started on (\S+); watch it live with `(.+)`\n", out)
    assert started and started.group(2) == referee_server.address, out
    assert started.group(3) == f"arena match watch {started.group(1)} --referee {started.group(2)}"
    assert f"match {started.group(1)}: finished, " in out
    assert replay.read_bytes()[:2] == b"\x1f\x8b", "not gzipped"
    check = spawn.cli(tmp_path, "replay-verify", "replay", "verify", str(replay))
    assert check.wait(30) == 0, check.stderr()
    assert "OK (" in check.stdout()


def test_an_example_bot_module_refused_its_token_says_so_in_one_line(referee_server):
    """``python -m arena.bots.aggressive --token T`` (the README's line) with a token the
    referee does not know: one line and status 2, as ``arena bot run``, no traceback."""
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.bots.aggressive",
            *("--referee", referee_server.address, "--token", "arena_not-a-token"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    assert refused.stdout == ""
    assert refused.stderr == (
        f"python -m arena.bots.aggressive: error: {referee_server.address}: unknown token: "
        "register the bot and use "
        "the token it got\n"
    )


# --- 9. health and reflection --------------------------------------------------------


def test_health_is_serving_and_reflection_lists_both_services(referee_server):
    for service in ("", "arena.v1.BotService", "arena.v1.ArenaService"):
        assert referee_server.health(service) == SERVING, service
    assert code_of(lambda: referee_server.health("no.such.Service")) == grpc.StatusCode.NOT_FOUND
    stub = reflection_pb2_grpc.ServerReflectionStub(referee_server.channel)
    replies = list(
        stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=10
        )
    )
    names = {s.name for r in replies for s in r.list_services_response.service}
    assert {"arena.v1.BotService", "arena.v1.ArenaService", "grpc.health.v1.Health"} <= names
    replies = list(
        stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(file_containing_symbol="arena.v1.Hello")]),
            timeout=10,
        )
    )
    assert replies[0].file_descriptor_response.file_descriptor_proto, replies[0]


# --- 2. timeouts ------------------------------------------------------------------------


def test_silent_bot_times_out_gets_strikes_then_forfeits_while_other_matches_play_on(
    referee_server, bot_fleet, spawn
):
    ref = referee_server
    silent = spawn.misbehaving(ref, "silent-bot", "silent")
    ref.wait_connected("silent-bot")
    # a match of the same bot processes runs meanwhile
    other_id = ref.start_match("risk", ["rand", "aggressive", "defensive"], options=RISK_LIMIT)
    info = ref.run_match(
        "risk", ["aggressive", "silent-bot", "defensive"], options=RISK_LIMIT, seed=22
    )

    places = assert_sensible_result(info, 3)
    forfeits = {f.seat: f.why for f in info.result.forfeits}
    assert list(forfeits) == [1], forfeits
    assert "strikes" in forfeits[1] and "timeout" in forfeits[1], forfeits
    # it left in the claim phase, before anyone else: below every other seat
    assert all(places[1] > places[seat] for seat in (0, 2)), places
    rec = assert_replay_verifies(info)
    forfeit_steps = [step for step in rec.steps if step[1].get("type") == "forfeit"]
    assert [step[0] for step in forfeit_steps] == [1]

    assert silent.wait(15) == 0, silent.stderr()
    got = silent.received()
    asked = of_match(got, info.match_id, "decision")
    asks = [r.message.decision for r in asked]
    assert len(asks) == ref.max_strikes, "one ask per strike, none after the forfeit"
    assert all(a.attempt == 1 and a.seat == 1 for a in asks)
    assert all(a.deadline_ms == ref.decision_ms for a in asks)
    assert [a.time_bank_ms for a in asks] == [ref.time_bank_ms] + [0] * (ref.max_strikes - 1)
    for before, after, ask in zip(asked, asked[1:], asks, strict=False):
        waited = after.t - before.t
        assert waited >= (ask.deadline_ms + ask.time_bank_ms) / 1000 - 0.15, waited
    assert not of_match(got, info.match_id, "rejected")
    ended = of_match(got, info.match_id, "match_ended")
    assert len(ended) == 1 and ended[0].message.match_ended.seat == 1
    assert ended[0].message.match_ended.result == info.result

    other = ref.wait_match(other_id)
    assert_sensible_result(other, 3)
    assert not other.result.forfeits
    assert_replay_verifies(other)


def test_slow_bot_spends_its_time_bank_then_times_out_into_a_forfeit(
    referee_server, bot_fleet, spawn
):
    """Answers past the deadline are accepted while the bank lasts, and each eats the
    overrun from the bank; once it is empty, a late answer is a timeout."""
    ref = referee_server
    delay = (ref.decision_ms + ref.time_bank_ms / 3) / 1000  # a third of the bank each
    slow = spawn.misbehaving(ref, "slow-bot", "slow", "--delay", str(delay), "--answers", "2")
    ref.wait_connected("slow-bot")
    info = ref.run_match("stratego", ["heuristic", "slow-bot"], seed=71)
    assert slow.wait(15) == 0, slow.stderr()
    asks = [r.message.decision for r in of_match(slow.received(), info.match_id, "decision")]
    banks = [a.time_bank_ms for a in asks]
    assert len(banks) == 2 + ref.max_strikes, banks  # two slow answers, then three timeouts
    assert banks[0] == ref.time_bank_ms
    overruns = [banks[0] - banks[1], banks[1] - banks[2]]
    expected = ref.time_bank_ms / 3
    assert all(expected <= o <= expected + 150 for o in overruns), banks
    assert banks[3:] == [0] * (ref.max_strikes - 1), "a timeout empties the bank"
    assert [(f.seat, "timeout" in f.why) for f in info.result.forfeits] == [(1, True)]
    assert info.result.reason == "forfeit" and list(info.result.places) == [1, 2]
    rec = assert_replay_verifies(info)
    _, _, setup, state = next(
        (i, seat, action, state)
        for i, seat, action, state in replay_states(rec)
        if seat == 1 and action["type"] == "setup"
    )
    default = json.loads(json.dumps(state.default_action()))
    assert setup != default, "the late (but in-bank) setup was played, not the default"


# --- 3. illegal actions -----------------------------------------------------------------

BAD_ACTIONS = [
    pytest.param("risk", "illegal", ["aggressive", None, "defensive"], id="risk-wrong-phase"),
    pytest.param("stratego", "nonsense", ["heuristic", None], id="stratego-empty-action"),
]


@pytest.mark.parametrize(("game", "mode", "players"), BAD_ACTIONS)
def test_illegal_actions_are_rejected_reasked_then_defaulted_with_strikes_until_forfeit(
    referee_server, bot_fleet, spawn, game, mode, players
):
    ref = referee_server
    name = f"{mode}-{game}-bot"
    bad = spawn.misbehaving(ref, name, mode)
    ref.wait_connected(name)
    seat = players.index(None)
    players = [name if p is None else p for p in players]
    options = dict(RISK_LIMIT) if game == "risk" else {}
    info = ref.run_match(game, players, options=options, seed=31)
    assert bad.wait(15) == 0, bad.stderr()
    got = bad.received()
    mid = info.match_id
    tries, strikes = ref.max_attempts, ref.max_strikes

    # ask, reject, ask again (attempt + 1) ... max_attempts times per decision
    sequence = [r for r in got if r.kind in ("decision", "rejected")]
    assert [r.kind for r in sequence] == ["decision", "rejected"] * (tries * strikes)
    asks = [r.message.decision for r in sequence[::2]]
    rejections = [r.message.rejected for r in sequence[1::2]]
    assert all(a.match_id == mid and a.seat == seat for a in asks)
    assert [a.attempt for a in asks] == list(range(1, tries + 1)) * strikes
    ids = [a.request_id for a in asks]
    assert len(set(ids)) == len(ids), "every ask has a new request id"
    for ask, rejection in zip(asks, rejections, strict=True):
        assert rejection.match_id == mid and rejection.request_id == ask.request_id
        assert rejection.reason
        if mode == "illegal":
            assert "not allowed" in rejection.reason and rejection.allowed, rejection
        else:
            assert "empty action" in rejection.reason, rejection
    # strikes so far: one more after every max_attempts rejections
    assert [r.strikes for r in rejections] == [k for k in range(strikes) for _ in range(tries)]
    # the re-asks are the same decision
    for k in range(strikes):
        group = asks[k * tries : (k + 1) * tries]
        assert len({(a.kind, a.observation.SerializeToString()) for a in group}) == 1

    places = assert_sensible_result(info, len(players))
    forfeits = {f.seat: f.why for f in info.result.forfeits}
    assert list(forfeits) == [seat], forfeits
    assert "strikes" in forfeits[seat] and "illegal" in forfeits[seat], forfeits
    assert all(places[seat] > places[s] for s in range(len(players)) if s != seat), places
    if game == "stratego":
        assert info.result.reason == "forfeit"
    assert of_match(got, mid, "match_ended")

    # the referee played the state's default for the bad seat, every time
    rec = assert_replay_verifies(info)
    forfeit_at = next(i for i, step in enumerate(rec.steps) if step[1].get("type") == "forfeit")
    assert rec.steps[forfeit_at][0] == seat
    before = [step for step in rec.steps[:forfeit_at] if step[0] == seat]
    assert len(before) == strikes - 1  # the last strike's decision comes after the forfeit
    for _, step_seat, action, state in replay_states(rec):
        if step_seat == seat and action.get("type") != "forfeit":
            assert action == json.loads(json.dumps(state.default_action()))


# --- 4. disconnection and reconnection ------------------------------------------------


def test_bot_that_reconnects_within_grace_resumes_its_seat(referee_server, bot_fleet, spawn):
    ref = referee_server
    after = 4  # answers, then walks away from the 5th decision
    flaky = spawn.misbehaving(
        ref, "flaky-bot", "flaky", "--after", str(after), "--away", str(ref.grace_s / 3)
    )
    ref.wait_connected("flaky-bot")
    info = ref.run_match("stratego", ["heuristic", "flaky-bot"], seed=41)
    assert_sensible_result(info, 2)
    assert not info.result.forfeits and info.result.reason != "forfeit"
    rec = assert_replay_verifies(info)
    assert sum(1 for step in rec.steps if step[0] == 1) > after + 1  # it played on

    assert flaky.wait(15) == 0, flaky.stderr()
    got = flaky.received()
    first = [r for r in got if r.conn == 1]
    second = [r for r in got if r.conn == 2]
    assert {r.conn for r in got} == {1, 2}
    started = [r.message.match_started for r in first if r.kind == "match_started"]
    assert len(started) == 1 and not started[0].resumed and started[0].seat == 1
    asked_first = [r for r in first if r.kind == "decision"]
    assert len(asked_first) == after + 1
    dropped = asked_first[-1]
    left = next(r for r in first if r.note == "dropping")

    kinds = [r.kind for r in second]
    assert kinds[0] == "welcome"
    resumed_at = kinds.index("match_started")
    resumed = second[resumed_at].message.match_started
    assert resumed.resumed and resumed.seat == 1 and resumed.match_id == info.match_id
    assert list(resumed.players) == list(info.players)
    assert second[resumed_at].wall - left.wall < ref.grace_s
    # the decision it walked away from is asked again, on the new stream
    again = next(r for r in second[resumed_at:] if r.kind == "decision").message.decision
    assert again.kind == dropped.message.decision.kind
    assert again.observation == dropped.message.decision.observation
    assert again.request_id != dropped.message.decision.request_id  # a new request
    assert of_match(second, info.match_id, "match_ended")
    assert not of_match(got, info.match_id, "rejected")


class Spectator:
    """WatchMatch in a thread: every SpectatorMessage (as bytes), events with the time
    they arrived, the positions shown (steps played, the view's JSON) and the final
    MatchInfo."""

    def __init__(
        self,
        channel: grpc.Channel,
        match_id: str,
        timeout: float = 90,
        batches: bool = False,
        without_replay: bool = False,
    ) -> None:
        self.raws: list[bytes] = []
        self.events: list[dict[str, Any]] = []
        #: every step shown: (steps played, the view's JSON or "", whose step it was or
        #: None, whether it was the last of its message)
        self.views: list[tuple[int, str, int | None, bool]] = []
        self.arrived: list[float] = []
        self.finished: pb.MatchInfo | None = None
        self.status: grpc.StatusCode | None = None
        watch = channel.unary_stream(
            "/arena.v1.ArenaService/WatchMatch",
            request_serializer=pb.WatchMatchRequest.SerializeToString,
            response_deserializer=None,
        )
        self.batches_received = 0
        self.batches = batches
        request = pb.WatchMatchRequest(
            match_id=match_id, batches=batches, without_replay=without_replay
        )
        self.request = request
        self.call = watch(request, timeout=timeout)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for raw in self.call:
                now = time.time()
                self.raws.append(raw)
                message = pb.SpectatorMessage.FromString(raw)
                kind = message.WhichOneof("kind")
                steps = [message.events] if kind == "events" else list(message.batch.steps)
                self.batches_received += kind == "batch"
                for index, step in enumerate(steps, start=1):
                    seat = step.seat if step.HasField("seat") else None
                    self.views.append((step.steps, step.view_json, seat, index == len(steps)))
                    events = [json.loads(text) for text in step.events_json]
                    self.events.extend(events)
                    self.arrived.extend([now] * len(events))
                if kind == "finished":
                    self.finished = message.finished
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status = exc.code()

    def join(self, timeout: float = 15) -> None:
        self.thread.join(timeout)
        if self.thread.is_alive():
            self.call.cancel()
            raise AssertionError("the spectator stream did not end")


def test_bot_that_does_not_come_back_within_grace_forfeits_as_disconnected(
    referee_server, bot_fleet, spawn
):
    ref = referee_server
    vanishing = spawn.misbehaving(ref, "vanishing-bot", "vanish", "--after", "3")
    ref.wait_connected("vanishing-bot")
    mid = ref.start_match(
        "risk", ["aggressive", "vanishing-bot", "defensive"], options=RISK_LIMIT, seed=51
    )
    spectator = Spectator(ref.channel, mid)
    info = ref.wait_match(mid)
    spectator.join()
    assert vanishing.wait(10) == 0
    gone = [r for r in vanishing.received() if r.note == "vanishing"]
    assert len(gone) == 1, "the bot process left mid-match"

    places = assert_sensible_result(info, 3)
    assert [(f.seat, f.why) for f in info.result.forfeits] == [(1, "disconnected")]
    assert all(places[1] > places[seat] for seat in (0, 2)), places
    assert_replay_verifies(info)
    # the referee waited the grace period before the forfeit
    forfeit_at = next(
        when
        for event, when in zip(spectator.events, spectator.arrived, strict=True)
        if event["e"] == "forfeit"
    )
    assert forfeit_at - gone[0].wall >= ref.grace_s - 0.25
    assert not ref.bots()["vanishing-bot"].connected


class Blackhole:
    """A TCP proxy to the referee whose referee-to-bot direction can be cut silently:
    bytes are dropped and no connection closes (a network partition, as the referee
    sees it)."""

    def __init__(self, target: str) -> None:
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        self.cut = threading.Event()
        self.sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
                upstream = socket.create_connection(self.target, timeout=5)
                upstream.settimeout(None)
            except OSError:
                return
            self.sockets += [client, upstream]
            for src, dst, down in ((client, upstream, False), (upstream, client, True)):
                threading.Thread(target=self._pump, args=(src, dst, down), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, down: bool) -> None:
        try:
            while data := src.recv(65536):
                if not (down and self.cut.is_set()):
                    dst.sendall(data)
        except OSError:
            pass

    def close(self) -> None:
        for sock in [self.listener, *self.sockets]:  # shutdown wakes the blocked threads
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()


class CutAfter:
    """A player that cuts its own connection's downstream after answering ``count``
    decisions (the answer itself still reaches the referee)."""

    def __init__(self, inner, count: int, cut: threading.Event) -> None:
        self.inner, self.count, self.cut = inner, count, cut
        self.answered = 0

    def handle(self, message: pb.RefereeMessage) -> pb.BotMessage | None:
        reply = self.inner.handle(message)
        if reply is not None:
            self.answered += 1
            if self.answered == self.count:
                self.cut.set()
        return reply


def test_resumed_bot_still_gets_every_event_of_its_seat(
    referee_server, bot_fleet, raw_bots, legal_player
):
    """The stream to a bot goes silent (its DecisionRequest, with the events since its
    last decision, is lost on the way); the bot reconnects within the grace period. The
    decision is asked again on the new stream, and what the others did in between must
    still reach the bot: protocol.md, "events_json ... holds the match's events since
    your seat's last decision"."""
    ref = referee_server
    token = ref.register("partitioned-bot").token
    proxy = Blackhole(ref.address)
    player = legal_player({"risk": "random"})
    answered = 3
    try:
        first = raw_bots(proxy.address, token, player=CutAfter(player, answered, proxy.cut))
        ref.wait_connected("partitioned-bot")
        mid = ref.start_match(
            "risk",  # a Risk game cannot end within a few decisions, whatever the dice
            ["rand", "partitioned-bot", "aggressive"],
            seed=81,
            options=dict(RISK_LIMIT),
            decision_ms=10_000,  # the lost request must not time out before the bot is back
        )
        # the bot answers three decisions, then its stream goes silent; the others
        # moves (a few ms) and the next request, with that move's events, is lost
        assert proxy.cut.wait(30), (
            f"the bot did not answer its first decisions: {ref.get_match(mid)}; "
            f"received {[m.WhichOneof('kind') for _, m in first.messages]}"
        )
        time.sleep(0.5)
        second = raw_bots(ref.address, token, player=player)  # same token: replaces the first
        info = ref.wait_match(mid)
    finally:
        proxy.close()
    assert_sensible_result(info, 3)
    assert not info.result.forfeits
    rec = assert_replay_verifies(info)
    resumed = second.of_kind("match_started", mid)
    kinds = [m.WhichOneof("kind") for _, m in second.messages]
    assert len(resumed) == 1 and resumed[0].resumed and resumed[0].seat == 1, (
        resumed,
        kinds,
        info.result,
        [m.WhichOneof("kind") for _, m in first.messages],
    )
    _, got_first = seen_by(first, mid)
    _, got_second = seen_by(second, mid)
    game = REGISTRY.game("risk")
    shown = [game.public_event(e, 1) for e in rec.events]
    expected = json.loads(json.dumps([e for e in shown if e is not None]))
    missing = [e for e in expected if e not in got_first + got_second]
    assert got_first + got_second == expected, f"events never delivered to the bot: {missing}"


def test_new_connection_of_the_same_bot_replaces_the_old_one(referee_server, raw_bots):
    ref = referee_server
    token = ref.register("twin-bot").token
    old = raw_bots(ref.address, token)
    old.wait_kind("welcome")
    new = raw_bots(ref.address, token)
    new.wait_kind("welcome")
    # the old stream ends, with a status that says why...
    assert old.wait_done(10) == grpc.StatusCode.ABORTED, old.details
    assert old.details == "replaced by a new connection of the same bot"
    _sync(new, 1)  # ...the new one is served
    assert not new.done.is_set() and ref.bots()["twin-bot"].connected


def test_run_match_with_the_same_match_id_starts_one_match(referee_server):
    ref = referee_server
    request = ref.match_request(
        "risk",
        ["house:blitz", "house:aggressive", "house:random"],
        options=RISK_LIMIT,
        seed=9,
        wait=False,
    )
    request.match_id = "one-match-please"
    ids = {ref.arena.RunMatch(request, timeout=10).match_id for _ in range(3)}
    assert ids == {"one-match-please"}
    info = ref.wait_match("one-match-please")
    request.wait = True
    again = ref.arena.RunMatch(request, timeout=30).match
    assert again.result == info.result and again.replay_json == info.replay_json
    assert_sensible_result(info, 3)


# --- 5. tokens and keys --------------------------------------------------------------


def test_wrong_token_ends_the_stream_with_unauthenticated(referee_server, raw_bots):
    for token in ("not-a-registered-token", ""):
        bot = raw_bots(referee_server.address, token)
        assert bot.wait_done(10) == grpc.StatusCode.UNAUTHENTICATED, bot.details
        assert bot.messages == []


def test_closed_registration_needs_the_registration_key(locked_referee, raw_bots, spawn):
    ref = locked_referee
    for key in ("", "wrong-key"):
        request = pb.RegisterBotRequest(name="keyless", registration_key=key)
        code = code_of(lambda r=request: ref.arena.RegisterBot(r, timeout=10))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    assert "keyless" not in ref.bots()
    reply = ref.arena.RegisterBot(
        pb.RegisterBotRequest(name="keyed", registration_key=ref.registration_key), timeout=10
    )
    assert reply.token and reply.version == 1
    bot = raw_bots(ref.address, reply.token)
    _, welcome = bot.wait_kind("welcome")
    assert welcome.bot_name == "keyed" and welcome.bot_id == reply.bot_id
    # and through the CLI
    refused = spawn.cli(
        ref.workdir, "register-nokey", "bot", "register", "cli-nokey", "--referee", ref.address
    )
    assert refused.wait(30) == 2 and "registration is closed" in refused.stderr()
    accepted = spawn.cli(
        ref.workdir,
        "register-key",
        "bot",
        "register",
        "cli-key",
        "--referee",
        ref.address,
        "--key",
        ref.registration_key,
    )
    assert accepted.wait(30) == 0, accepted.stderr()
    assert "token (shown once" in accepted.stdout()


def test_run_match_needs_the_organiser_key(locked_referee):
    ref = locked_referee
    request = ref.match_request("risk", ["house:blitz", "house:random", "house:defensive"])
    for metadata in ([], [("authorization", "Bearer wrong-key")], [("authorization", "x")]):
        code = code_of(lambda m=metadata: ref.arena.RunMatch(request, metadata=m, timeout=30))
        assert code == grpc.StatusCode.PERMISSION_DENIED
    reply = ref.arena.RunMatch(request, metadata=ref.organiser(), timeout=60)
    assert_sensible_result(reply.match, 3)
    assert_replay_verifies(reply.match)


def test_revoked_bot_is_refused_with_permission_denied(locked_referee, raw_bots):
    ref = locked_referee
    reg = ref.register("revokee")
    bot = raw_bots(ref.address, reg.token)
    bot.wait_kind("welcome")
    bot.close()
    revoke = pb.RevokeBotRequest(bot_id=reg.bot_id)
    code = code_of(lambda: ref.arena.RevokeBot(revoke, timeout=10))
    assert code == grpc.StatusCode.PERMISSION_DENIED, "revoking needs the organiser key"
    assert not ref.bots()["revokee"].revoked
    ref.arena.RevokeBot(revoke, metadata=ref.organiser(), timeout=10)
    assert ref.bots()["revokee"].revoked
    again = raw_bots(ref.address, reg.token)
    assert again.wait_done(10) == grpc.StatusCode.PERMISSION_DENIED, again.details
    assert again.messages == []
    # a revoked bot cannot be seated either
    code = code_of(lambda: ref.run_match("risk", ["revokee", "house:blitz", "house:random"]))
    assert code == grpc.StatusCode.INVALID_ARGUMENT


def test_sdk_bot_process_stops_for_good_once_revoked(locked_referee, spawn):
    ref = locked_referee
    process = spawn.bot(ref, "random", "sdk-revokee")
    ref.wait_connected("sdk-revokee")
    bot_id = ref.bots()["sdk-revokee"].bot_id
    ref.arena.RevokeBot(pb.RevokeBotRequest(bot_id=bot_id), metadata=ref.organiser(), timeout=10)
    assert process.wait(20) != 0  # FatalError: the SDK does not retry a revoked token
    assert "revoked" in process.stderr()
    assert not ref.bots()["sdk-revokee"].connected


def test_live_stream_of_a_bot_revoked_while_connected_ends_with_permission_denied(
    locked_referee, raw_bots
):
    ref = locked_referee
    reg = ref.register("revoked-live")
    bot = raw_bots(ref.address, reg.token)
    bot.wait_kind("welcome")
    ref.arena.RevokeBot(
        pb.RevokeBotRequest(bot_id=reg.bot_id), metadata=ref.organiser(), timeout=10
    )
    status = bot.wait_done(10)
    assert status == grpc.StatusCode.PERMISSION_DENIED, f"{status}: {bot.details!r}"


# --- 6. replies for the wrong seat, stale and replayed replies --------------------------


def _normal_action(game: str, action: dict[str, Any]) -> dict[str, Any]:
    """An action as the referee records it (through the wire and JSON)."""
    return json.loads(json.dumps(action_from_proto(game, action_to_proto(game, action))))


def _reply(match_id: str, request_id: int, game: str, action: dict[str, Any]) -> pb.BotMessage:
    return pb.BotMessage(
        action=pb.ActionReply(
            match_id=match_id, request_id=request_id, action=action_to_proto(game, action)
        )
    )


def _sync(bot, nonce: int) -> None:
    """Ping and wait for the pong: the referee has read everything sent before."""
    bot.send(pb.BotMessage(ping=pb.Ping(nonce=nonce)))
    bot.wait_for(
        lambda m: m.WhichOneof("kind") == "pong" and m.pong.nonce == nonce, what=f"pong {nonce}"
    )


def test_reply_for_another_bots_seat_is_ignored_and_stale_replies_are_harmless(
    referee_server, raw_bots, legal_player
):
    ref = referee_server
    a_token = ref.register("seat-thief").token
    b_token = ref.register("seat-owner").token
    player_a = legal_player({"stratego": "random"})
    player_b = legal_player({"stratego": "random"})
    a = raw_bots(ref.address, a_token)
    b = raw_bots(ref.address, b_token)
    ref.wait_connected("seat-thief", "seat-owner")
    mid = ref.start_match(
        "stratego",
        ["seat-thief", "seat-owner"],
        options={"turn-limit": "40"},
        decision_ms=5000,
        seed=61,
    )
    for bot, player in ((a, player_a), (b, player_b)):
        _, started = bot.wait_kind("match_started")
        player.handle(pb.RefereeMessage(match_started=started))

    ia, ask_a1 = a.wait_kind("decision")  # seat 0 sets up
    setup_a = player_a.action(ask_a1)
    reply_a1 = _reply(mid, ask_a1.request_id, "stratego", setup_a)
    a.send(reply_a1)
    ib, ask_b1 = b.wait_kind("decision")  # seat 1 sets up
    assert ask_b1.seat == 1

    # A answers B's request (right match id, B's request id, a legal seat-1 setup)
    forged = player_b.action(ask_b1)
    own = player_b.action(ask_b1)
    for _ in range(20):  # random setups; make sure the two differ
        if _normal_action("stratego", own) != _normal_action("stratego", forged):
            break
        own = player_b.action(ask_b1)
    a.send(_reply(mid, ask_b1.request_id, "stratego", forged))
    _sync(a, 1)
    time.sleep(0.3)
    assert len(b.of_kind("decision", mid)) == 1, "B's seat did not move: its request still waits"
    assert len(a.of_kind("decision", mid)) == 1, "seat 0 is not asked to move yet"
    b.send(_reply(mid, ask_b1.request_id, "stratego", own))
    _, ask_a2 = a.wait_kind("decision", start=ia + 1)
    assert ask_a2.kind == "move"

    # stale and replayed replies do nothing
    moves = wire.decision_options(ask_a2)["moves"]
    move_x = {"type": "move", "from": moves[0][0], "to": moves[0][1]}
    move_y = {"type": "move", "from": moves[-1][0], "to": moves[-1][1]}
    assert move_x != move_y
    a.send(reply_a1)  # the very reply it sent before
    a.send(_reply(mid, ask_a1.request_id, "stratego", move_x))  # an old id, an action legal now
    a.send(_reply(mid, ask_a2.request_id + 10_000, "stratego", move_x))  # an id never sent
    a.send(_reply("no-such-match", ask_a2.request_id, "stratego", move_x))
    b.send(_reply(mid, ask_b1.request_id, "stratego", own))  # B's own answer, again
    _sync(a, 2)
    _sync(b, 3)
    time.sleep(0.3)
    assert len(b.of_kind("decision", mid)) == 1, "seat 0 has not moved: B is not asked"
    # from here on both play by themselves
    a.player, b.player = player_a, player_b
    a.send(_reply(mid, ask_a2.request_id, "stratego", move_y))

    info = ref.wait_match(mid)
    assert_sensible_result(info, 2)
    assert not info.result.forfeits
    rec = assert_replay_verifies(info)
    assert rec.steps[0][:2] == [0, _normal_action("stratego", setup_a)]
    assert rec.steps[1][:2] == [1, _normal_action("stratego", own)], "B's own setup, not A's"
    assert rec.steps[2][:2] == [0, _normal_action("stratego", move_y)], "not the stale move"
    assert not a.of_kind("rejected") and not b.of_kind("rejected")
    assert a.error is None and b.error is None
    assert ib >= 0


# --- 7. oversized messages, floods, malformed first messages ----------------------------


def test_oversized_message_ends_the_stream_with_resource_exhausted(
    referee_server, bot_fleet, raw_bots
):
    ref = referee_server
    token = ref.register("oversize-bot").token
    bot = raw_bots(ref.address, token)
    _, welcome = bot.wait_kind("welcome")
    limit = welcome.max_message_bytes
    assert limit == 1 << 20
    near = pb.BotMessage(action=pb.ActionReply(match_id="x" * (limit - 64), request_id=1))
    assert near.ByteSize() <= limit
    bot.send(near)  # just under the limit: an unknown match, ignored
    _sync(bot, 7)
    bot.send(pb.BotMessage(action=pb.ActionReply(match_id="x" * limit, request_id=2)))
    assert bot.wait_done(15) == grpc.StatusCode.RESOURCE_EXHAUSTED, bot.details
    # an oversized Hello too, before its token is even read
    hello = pb.BotMessage(hello=pb.Hello(token=token, client="y" * limit))
    early = raw_bots(ref.address, first=hello)
    assert early.wait_done(15) == grpc.StatusCode.RESOURCE_EXHAUSTED, early.details
    assert_still_serves(ref, bot_fleet)


def test_message_flood_ends_the_stream_with_resource_exhausted(referee_server, bot_fleet, raw_bots):
    ref = referee_server
    token = ref.register("flood-bot").token
    bot = raw_bots(ref.address, token)
    bot.wait_kind("welcome")
    for nonce in range(5000):
        bot.send(pb.BotMessage(ping=pb.Ping(nonce=nonce)))
    assert bot.wait_done(15) == grpc.StatusCode.RESOURCE_EXHAUSTED, bot.details
    assert "flood" in bot.details
    assert 0 < len(bot.of_kind("pong")) < 5000
    # the same bot, pinging calmly on a new stream once it has waited out its cut (2 s,
    # which the reason names), is served
    assert bot.details.endswith("; reconnect in 2 s at the earliest"), bot.details
    time.sleep(2.2)
    calm = raw_bots(ref.address, token)
    calm.wait_kind("welcome")
    for nonce in range(10):
        _sync(calm, nonce)
    assert not calm.done.is_set()
    assert_still_serves(ref, bot_fleet)


def test_a_flood_inside_batches_is_counted_message_by_message(referee_server, bot_fleet, raw_bots):
    ref = referee_server
    bot = raw_bots(ref.address, ref.register("batch-flood-bot").token, batches=True)
    _, welcome = bot.wait_kind("welcome")
    assert welcome.batches and welcome.max_batch >= 2
    nonce = 0
    for _ in range(5000 // welcome.max_batch + 1):
        batch = pb.BotMessage()
        for _ in range(welcome.max_batch):
            batch.batch.messages.add(ping=pb.Ping(nonce=nonce))
            nonce += 1
        bot.send(batch)
    assert bot.wait_done(15) == grpc.StatusCode.RESOURCE_EXHAUSTED, bot.details
    assert "flood" in bot.details
    assert_still_serves(ref, bot_fleet)


def test_malformed_batches_end_the_stream_with_invalid_argument(
    referee_server, bot_fleet, raw_bots
):
    ref = referee_server
    token = ref.register("bad-batch-bot").token
    probe = raw_bots(ref.address, token, batches=True)
    _, welcome = probe.wait_kind("welcome")
    _sync(probe, 1)  # a batch of one ping is answered like a lone ping...
    ping = pb.BotMessage(ping=pb.Ping(nonce=2))
    probe.send(pb.BotMessage(batch=pb.BotBatch(messages=[ping])))
    probe.wait_for(lambda m: m.WhichOneof("kind") == "pong" and m.pong.nonce == 2)
    probe.close()
    nested = pb.BotMessage()
    nested.batch.messages.add().batch.messages.add(ping=pb.Ping(nonce=3))
    hello = pb.BotMessage(hello=pb.Hello(token=token))
    cases = {  # each after a ping of its own: a refused batch is refused whole
        "a batch inside a batch": pb.BotMessage(batch=pb.BotBatch(messages=[ping, nested])),
        "a Hello inside a batch": pb.BotMessage(batch=pb.BotBatch(messages=[ping, hello])),
        "too many messages": pb.BotMessage(
            batch=pb.BotBatch(messages=[ping] * (welcome.max_batch + 1))
        ),
        "an empty batch": pb.BotMessage(batch=pb.BotBatch()),  # would dodge the flood limit
    }
    for what, message in cases.items():
        bot = raw_bots(ref.address, token, batches=True)
        bot.wait_kind("welcome")
        bot.send(message)
        assert bot.wait_done(10) == grpc.StatusCode.INVALID_ARGUMENT, (what, bot.details)
        assert "batch" in bot.details, (what, bot.details)
        assert not bot.of_kind("pong"), what  # nothing of a refused batch was acted on
    assert_still_serves(ref, bot_fleet)


def test_first_message_that_is_not_hello_ends_the_stream_with_invalid_argument(
    referee_server, bot_fleet, raw_bots
):
    ref = referee_server
    token = ref.register("rude-bot").token
    firsts = [
        pb.BotMessage(ping=pb.Ping(nonce=1)),
        pb.BotMessage(),  # nothing set
        pb.BotMessage(action=pb.ActionReply(match_id="m", request_id=1)),
    ]
    for first in firsts:
        bot = raw_bots(ref.address, token, first=first)
        assert bot.wait_done(10) == grpc.StatusCode.INVALID_ARGUMENT, (first, bot.details)
        assert bot.messages == []
    assert_still_serves(ref, bot_fleet)


def test_undecodable_first_message_ends_the_stream_with_invalid_argument(
    referee_server, bot_fleet, raw_bots
):
    ref = referee_server
    bot = raw_bots(ref.address, first=b"\xff\xff\xff")  # not a BotMessage at all
    status = bot.wait_done(10)
    assert_still_serves(ref, bot_fleet)
    assert status == grpc.StatusCode.INVALID_ARGUMENT, f"{status}: {bot.details}"


# --- 8. the hidden-information audit ---------------------------------------------------


class StrategoBoard:
    """The true Stratego board, tracked from the replay alone: the setups (actions),
    then the public moves, strikes and rescues (events)."""

    def __init__(self) -> None:
        self.rank: dict[int, str] = {}
        self.owner: dict[int, int] = {}
        self.revealed: set[int] = set()
        self.placed: set[int] = set()  # the seats whose army stands

    def setup(self, seat: int, placement: dict[str, str]) -> None:
        self.placed.add(seat)
        for square, name in placement.items():
            self.rank[int(square)] = name
            self.owner[int(square)] = seat

    def event(self, event: dict[str, Any]) -> None:
        kind = event["e"]
        if kind == "move":
            self._move(event["from"], event["to"])
        elif kind == "strike":
            src, dst = event["from"], event["to"]
            if event["result"] == "attacker":
                self._remove(dst)
                self._move(src, dst)
                self.revealed.add(dst)
            elif event["result"] == "defender":
                self._remove(src)
                self.revealed.add(dst)
            else:
                self._remove(src)
                self._remove(dst)
        elif kind == "rescue":
            square = event["square"]
            self.rank[square], self.owner[square] = event["rescue"], event["p"]
            self.revealed.add(square)

    def _move(self, src: int, dst: int) -> None:
        self.rank[dst] = self.rank.pop(src)
        self.owner[dst] = self.owner.pop(src)
        if src in self.revealed:
            self.revealed.discard(src)
            self.revealed.add(dst)

    def _remove(self, square: int) -> None:
        del self.rank[square], self.owner[square]
        self.revealed.discard(square)


class Truth:
    """Re-simulates a replay; before each step it knows what every seat truly holds:
    Risk hands and missions (the engine's state), capital picks and their reveal (the
    replay's actions and events), the Stratego board (StrategoBoard)."""

    def __init__(self, rec: MatchRecord) -> None:
        self.rec = rec
        self.state = new_state(rec)
        self.hq: list[int | None] | None = None
        if "capital" in rec.variants:
            self.hq = [None] * rec.num_players
        self.hq_revealed = False
        self.board = StrategoBoard() if rec.game == "stratego" else None
        self._see(rec.initial_events)

    def steps(self) -> Iterable[tuple[int, int, dict[str, Any]]]:
        for index, (seat, action, events) in enumerate(self.rec.steps):
            yield index, seat, action
            if action.get("type") == "forfeit":
                self.state.forfeit(seat)
            else:
                self.state.apply(seat, action)
            if self.hq is not None and action.get("type") == "headquarters":
                ref = action["territory"]
                self.hq[seat] = self.state.map.territory(ref) if isinstance(ref, str) else ref
            if self.board is not None and action.get("type") == "setup":
                self.board.setup(seat, action["placement"])
            self._see(events)

    def _see(self, events: list[dict[str, Any]]) -> None:
        for event in events:
            if event["e"] == "headquarters":
                self.hq_revealed = True
            if self.board is not None:
                self.board.event(event)

    def hands(self) -> list[list[int]]:
        return [sorted(hand) for hand in self.state.hands]

    def missions(self) -> list[str] | None:
        data = self.state.variant_data.get("missions")
        return list(data["assigned"]) if data else None


def _strings_and_int_lists(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings_and_int_lists(v)
    elif isinstance(value, list):
        if value and all(isinstance(v, int) for v in value):
            yield sorted(value)
        for v in value:
            yield from _strings_and_int_lists(v)
    else:
        yield value


def risk_request_problems(raw: bytes, truth: Truth, seat: int, stats: dict[str, int]) -> list[str]:
    request = pb.RefereeMessage.FromString(raw).decision
    where = f"seat {seat} {request.kind} request {request.request_id}"
    if request.seat != seat or request.observation.WhichOneof("game") != "risk":
        return [f"{where}: asked as seat {request.seat} with a {request.observation} observation"]
    obs = request.observation.risk
    problems = []
    if obs.seat != seat:
        problems.append(f"{where}: the observation is seat {obs.seat}'s")
    hands = truth.hands()
    shown = sorted(obs.hand)
    if shown != hands[seat]:
        problems.append(f"{where}: shows the hand {shown}, it holds {hands[seat]}")
    for other, hand in enumerate(hands):
        if other != seat and set(hand) & set(shown):
            problems.append(f"{where}: shows seat {other}'s cards {sorted(set(hand) & set(shown))}")
        if other != seat and hand:
            stats["risk requests while another seat held cards"] += 1
    if list(obs.hand_sizes) != [len(hand) for hand in hands]:
        problems.append(f"{where}: hand sizes {list(obs.hand_sizes)}")
    secrets: set[Any] = {tuple(h) for o, h in enumerate(hands) if o != seat and h}
    missions = truth.missions()
    if missions is None:
        if obs.HasField("mission"):
            problems.append(f"{where}: a mission outside the missions variant")
    else:
        stats["missions requests"] += 1
        if obs.mission.id != missions[seat]:
            problems.append(
                f"{where}: shows the mission {obs.mission.id!r}, its own is {missions[seat]!r}"
            )
        for other, mission in enumerate(missions):
            if other == seat or mission == missions[seat]:
                continue
            secrets.add(mission)
            for secret in (mission, MISSIONS[mission].text):
                if secret.encode() in raw:
                    problems.append(f"{where}: its bytes hold seat {other}'s mission {secret!r}")
    if truth.hq is None:
        if len(obs.headquarters):
            problems.append(f"{where}: headquarters outside the capital variant")
    else:
        expected = [
            -1 if pick is None or not (truth.hq_revealed or other == seat) else pick
            for other, pick in enumerate(truth.hq)
        ]
        if not obs.headquarters and all(pick is None for pick in truth.hq):
            pass  # before the picks start the observation may leave them out
        elif list(obs.headquarters) != expected:
            problems.append(
                f"{where}: headquarters {list(obs.headquarters)}, expected {expected} "
                f"(revealed: {truth.hq_revealed})"
            )
        if not truth.hq_revealed and any(
            p is not None for o, p in enumerate(truth.hq) if o != seat
        ):
            stats["capital requests before the reveal, another pick made"] += 1
    for value in _strings_and_int_lists(wire.observation_extra(obs)):
        if (tuple(value) if isinstance(value, list) else value) in secrets:
            problems.append(f"{where}: its extra holds another seat's secret {value!r}")
    stats["risk requests"] += 1
    return problems


def stratego_request_problems(
    raw: bytes, truth: Truth, seat: int, stats: dict[str, int]
) -> list[str]:
    request = pb.RefereeMessage.FromString(raw).decision
    where = f"seat {seat} {request.kind} request {request.request_id}"
    if request.seat != seat or request.observation.WhichOneof("game") != "stratego":
        return [f"{where}: asked as seat {request.seat} with a {request.observation} observation"]
    obs = request.observation.stratego
    board = truth.board
    assert board is not None
    problems = []
    if len(obs.board) != 100:
        return [f"{where}: {len(obs.board)} squares"]
    in_setup = len(board.placed) < 2  # the setups are simultaneous: nothing of the other's
    for square, cell in enumerate(obs.board):
        owner = board.owner.get(square)
        if in_setup and owner is not None and owner != seat:
            stats["setup requests' squares of the other army checked"] += 1
            owner = None
        if owner is None:
            if cell.occupied:
                problems.append(f"{where}: square {square} shown occupied, it is empty (or hidden)")
            continue
        if not cell.occupied or cell.owner != owner:
            problems.append(f"{where}: square {square} shown as {cell}, seat {owner} is there")
            continue
        known = owner == seat or square in board.revealed
        expected = board.rank[square] if known else ""
        if owner != seat and not known:
            stats["unrevealed enemy pieces checked"] += 1
        if cell.rank != expected:
            if not known:
                problems.append(f"{where}: shows the unrevealed enemy {cell.rank} on {square}")
            else:
                problems.append(f"{where}: square {square} shows {cell.rank!r}, not {expected!r}")
        if cell.revealed != (square in board.revealed):
            problems.append(f"{where}: square {square} revealed={cell.revealed}")
    if wire.observation_extra(obs):
        problems.append(f"{where}: an extra {wire.observation_extra(obs)}")
    stats["stratego requests"] += 1
    return problems


def event_problems(events: list[dict[str, Any]], receiver: int | None, who: str) -> list[str]:
    """What no receiver may see of others (``receiver`` None: a spectator)."""
    problems = []
    for index, event in enumerate(events):
        kind = event.get("e")
        private = event.get("private")
        if private is not None and private != receiver:
            problems.append(f"{who}: seat {private}'s private event {event}")
        if kind == "draw" and event.get("p") != receiver and "card" in event:
            problems.append(f"{who}: the card seat {event['p']} drew: {event}")
        if kind == "mission_changed" and event.get("p") != receiver:
            problems.append(f"{who}: seat {event.get('p')}'s new mission: {event}")
        if kind == "missions" and index < len(events) - 2:
            problems.append(f"{who}: everyone's missions before the end: {event}")
        if kind == "headquarters_picked" and set(event) - {"e", "p"}:
            problems.append(f"{who}: a headquarters pick shown: {event}")
        if kind == "setup" and (set(event) - {"e", "p", "pieces"} or event["p"] != receiver):
            problems.append(f"{who}: a Stratego setup shown: {event}")
    return problems


def audit(
    rec: MatchRecord,
    requests: dict[int, list[bytes]],
    events: dict[int | None, list[dict[str, Any]]],
    stats: dict[str, int] | None = None,
) -> list[str]:
    """Every problem with what the seats (their DecisionRequests as serialized, their
    events) and a spectator (events; key None) were shown during ``rec``."""
    stats = stats if stats is not None else _counter()
    problems: list[str] = []
    truth = Truth(rec)
    check = risk_request_problems if rec.game == "risk" else stratego_request_problems
    queues = {seat: deque(raws) for seat, raws in requests.items()}
    for index, seat, action in truth.steps():
        if action.get("type") == "forfeit" or seat not in queues:
            continue
        if not queues[seat]:
            problems.append(f"step {index}: seat {seat} was never asked")
            continue
        problems += check(queues[seat].popleft(), truth, seat, stats)
    for seat, left in queues.items():
        if left:
            problems.append(f"seat {seat}: {len(left)} requests beyond the replay's steps")
    game = REGISTRY.game(rec.game)
    for receiver, got in events.items():
        who = "the spectator" if receiver is None else f"seat {receiver}"
        problems += event_problems(got, receiver, who)
        shown = [game.public_event(e, receiver) for e in rec.events]
        expected = json.loads(json.dumps([e for e in shown if e is not None]))
        if receiver is None:  # a spectator may have joined after the first events
            expected = expected[len(expected) - len(got) :] if got else []
        if got != expected:
            problems.append(f"{who}: the events differ from the replay's, as {who} may see them")
        stats["events checked"] += len(got)
    return problems


def view_problems(
    rec: MatchRecord,
    views: list[tuple[int, str, int | None, bool]],
    stats: dict[str, int],
    batches: bool = False,
) -> list[str]:
    """The steps and positions a spectator was shown, as serialized, each the engine's
    spectator view then (public facts only: see tests/web/test_frames.py), nothing else.

    With ``batches``: every step from where it began watching, with whose step it was,
    and the position after the last step of each batch (and where watching began).
    Without: a message a tick, each with the position after the steps it covers (from
    the previous message's on), and whose steps they were when they were all one seat's;
    the last at the end of the match."""
    problems = []
    if not views:
        return ["the spectator was shown no position"]
    steps = [n for n, *_ in views]
    if batches and steps != list(range(steps[0], len(rec.steps) + 1)):
        problems.append(f"the steps shown skip or repeat steps: {steps[:5]}...")
    if not batches and (steps != sorted(set(steps)) or steps[-1] != len(rec.steps)):
        problems.append(f"the messages' steps go back, repeat or stop short: {steps[:5]}...")
    if views[0][2] is not None:
        problems.append("where watching began is not a step of any seat")
    for (before, *_), (number, _view, seat, _last) in itertools.pairwise(views):
        seats = {s for s, _, _ in rec.steps[(number - 1 if batches else before) : number]}
        if seat is not None and seats != {seat}:
            problems.append(f"steps to {number} are said to be seat {seat}'s: {seats}")
        if seat is None and len(seats) == 1:
            problems.append(f"steps to {number} are one seat's, {seats}, but not said so")
    for index, (number, view, _seat, last) in enumerate(views):
        # a batch gives the position after its last step only: made once a batch
        expected = index == 0 or last or not batches
        if bool(view) != expected:
            problems.append(f"step {number}: a position {'missing' if expected else 'sent'}")
    state = new_state(rec)
    truth = [json.dumps(state.spectator_view())]
    for seat, action, _events in rec.steps:
        if action.get("type") == "forfeit":
            state.forfeit(seat)
        else:
            state.apply(seat, action)
        truth.append(json.dumps(state.spectator_view()))
    for number, text, _seat, _last in views:
        if text and json.loads(text) != json.loads(truth[number]):
            problems.append(f"the position shown after step {number} is not the spectator view")
        stats["spectator views checked"] += bool(text)
    return problems


def _counter() -> dict[str, int]:
    from collections import Counter

    return Counter()


def seen_by(bot, match_id: str) -> tuple[list[bytes], list[dict[str, Any]]]:
    """A raw client's DecisionRequests (serialized, first asks) and events of a match."""
    requests, events = [], []
    for raw, message in list(bot.messages):
        if message.WhichOneof("kind") == "decision" and message.decision.match_id == match_id:
            assert message.decision.attempt == 1
            requests.append(raw)
        carried = wire.match_events(message)
        if carried is not None and carried[0] == match_id:
            events.extend(carried[1])
    return requests, events


AUDIT_MATCHES = [
    ("risk", [], 3, {}),
    ("risk", [], 4, {"setup": "deal", "defender-dice": "choose"}),
    ("risk", ["missions"], 3, {}),
    ("risk", ["missions"], 4, {"mission-deck": "1998"}),
    ("risk", ["capital"], 3, {}),
    ("risk", ["capital"], 4, {"short-capital": "on", "defender-dice": "choose"}),
    ("risk", ["neutral"], 2, {}),
    ("risk", ["neutral"], 2, {"defender-dice": "choose"}),
    ("stratego", [], 2, {}),
    ("stratego", [], 2, {"rescue": "on"}),
    ("stratego", ["isf"], 2, {}),
    ("stratego", ["barrage"], 2, {}),
]
RECORDERS = [
    {"risk": "blitz", "stratego": "heuristic"},
    {"risk": "aggressive", "stratego": "random"},
    {"risk": "blitz", "stratego": "heuristic"},
    {"risk": "defensive", "stratego": "random"},
]


def test_hidden_information_audit_of_serialized_messages_to_bots_and_spectators(
    referee_server, raw_bots, legal_player
):
    """Recording clients play every seat of games of every Risk variant and Stratego
    rule set; a spectator watches each. Every DecisionRequest (as bytes) and every event
    is checked against the truth re-simulated from the replay. Half the recorders read
    batches: the requests inside a RefereeBatch are checked as the bytes they were on
    the wire."""
    ref = referee_server
    names = [f"recorder-{i}" for i in range(len(RECORDERS))]
    recorders = {
        name: raw_bots(
            ref.address,
            ref.register(name).token,
            player=legal_player(policies),
            batches=index % 2 == 0,
        )
        for index, (name, policies) in enumerate(zip(names, RECORDERS, strict=True))
    }
    ref.wait_connected(*names)
    started = []
    for number, (game, variants, seats, options) in enumerate(AUDIT_MATCHES):
        limit = {"turn-limit": "60"} if game == "risk" else {"turn-limit": "600"}
        rotate = number % seats
        players = names[rotate:seats] + names[:rotate]
        match_id = ref.start_match(
            game,
            players,
            variants=variants,
            options={**limit, **options},
            seed=100 + number,
            decision_ms=20_000,  # many matches at once on a small machine: no timeouts
        )
        # every other spectator asks for batches: its steps come a few at a time; every
        # third, for the end without the replay
        spectator = Spectator(
            ref.channel, match_id, batches=number % 2 == 1, without_replay=number % 3 == 2
        )
        started.append((match_id, players, spectator))

    problems: list[str] = []
    stats = _counter()
    for match_id, players, spectator in started:
        info = ref.wait_match(match_id, timeout=120)
        spectator.join()
        assert_sensible_result(info, len(players))
        assert not info.result.forfeits
        rec = assert_replay_verifies(info)
        requests, events = {}, {}
        for seat, name in enumerate(players):
            requests[seat], events[seat] = seen_by(recorders[name], match_id)
        events[None] = spectator.events
        label = f"{rec.game} {'+'.join(rec.variants) or 'classic'} {match_id[:8]}"
        problems += [f"{label}: {p}" for p in audit(rec, requests, events, stats)]
        problems += [
            f"{label}: {p}" for p in view_problems(rec, spectator.views, stats, spectator.batches)
        ]
        assert spectator.finished is not None and spectator.finished.status == "finished"
        assert spectator.finished.result == info.result
        # the whole replay and the seed, once it has ended, unless asked to leave them out
        brief = spectator.request.without_replay
        assert bool(spectator.finished.replay_json) is not brief
        assert spectator.finished.HasField("seed") is not brief
        stats[f"matches {rec.game}"] += 1
    for bot in recorders.values():
        assert bot.error is None, bot.error  # a batch for a recorder that did not ask fails
        assert not bot.of_kind("rejected")
    assert problems == [], "\n".join(problems[:30])
    assert all(recorders[name].batches_received > 0 for name in names[::2])
    assert sum(recorders[name].batches_sent for name in names[::2]) > 0
    # the audit looked at what matters
    assert stats["risk requests while another seat held cards"] > 100, stats
    assert stats["missions requests"] > 100, stats
    assert stats["capital requests before the reveal, another pick made"] >= 3, stats
    assert stats["unrevealed enemy pieces checked"] > 10_000, stats
    assert stats["setup requests' squares of the other army checked"] >= 4 * 8, stats
    assert stats["events checked"] > 1000, stats
    assert stats["spectator views checked"] > 100, stats  # a few a second a match
    assert sum(s.batches_received for _, _, s in started) > 0


def test_batch_spectators_share_each_batch_and_a_late_one_starts_where_the_match_stands(
    referee_server,
):
    """Two spectators asking for batches, the second from the middle of a fast match: it
    starts with the position then (a batch of that one step, the engine's spectator
    view), and from there gets the very bytes the first gets: the referee makes each
    batch once for all of them. Every step from where each began, once, in order."""
    ref = referee_server
    match_id = ref.start_match("risk", ["house:random"] * 3, options={"turn-limit": "400"}, seed=11)
    first = Spectator(ref.channel, match_id, batches=True)
    wait_until(lambda: len(first.views) > 200, 60, "the first spectator to see 200 steps")
    second = Spectator(ref.channel, match_id, batches=True)
    info = ref.wait_match(match_id)
    first.join()
    second.join()
    rec = from_json(json.loads(info.replay_json))
    start = pb.SpectatorMessage.FromString(second.raws[0]).batch.steps
    assert len(start) == 1 and start[0].view_json and not start[0].HasField("seat")
    assert first.views[0][0] < start[0].steps < len(rec.steps)  # it began mid-match
    shared = len(second.raws) - 1
    assert shared > 2 and second.raws[1:] == first.raws[-shared:]
    stats = _counter()
    for spectator in (first, second):
        assert view_problems(rec, spectator.views, stats, batches=True) == []
        assert spectator.finished is not None and spectator.finished.status == "finished"
    assert stats["spectator views checked"] > 4


# --- the audit itself catches leaks --------------------------------------------------


def _in_process(game: str, variants: list[str], bots: list[str], seed: int) -> MatchRecord:
    from arena.engine.replay import dumps

    players = [
        REGISTRY.bot(game, name).factory(seat, seed + seat) for seat, name in enumerate(bots)
    ]
    rec = play_match(
        REGISTRY.game(game), players, seed, {}, REGISTRY.resolve_variants(game, variants)
    )
    return from_json(json.loads(dumps(rec)))


def honest_view(rec: MatchRecord) -> tuple[dict[int, list[bytes]], dict[Any, list[Any]]]:
    """What an honest referee sends: requests and events made from the engine."""
    requests: dict[int, list[bytes]] = {seat: [] for seat in range(rec.num_players)}
    for index, seat, action, state in replay_states(rec):
        if action.get("type") == "forfeit":
            continue
        request = pb.DecisionRequest(
            match_id="audit",
            request_id=index + 1,
            seat=seat,
            kind=state.decision().kind,
            observation=observation_to_proto(rec.game, state.observation(seat)),
            attempt=1,
        )
        requests[seat].append(pb.RefereeMessage(decision=request).SerializeToString())
    game = REGISTRY.game(rec.game)
    events: dict[Any, list[Any]] = {}
    for receiver in [*range(rec.num_players), None]:
        shown = [game.public_event(e, receiver) for e in rec.events]
        events[receiver] = json.loads(json.dumps([e for e in shown if e is not None]))
    return requests, events


def _first_request(rec: MatchRecord, wanted) -> tuple[int, int, Truth]:
    """(seat, index among its requests) of the first step where ``wanted(truth, seat,
    state)`` holds; the Truth is left at that step."""
    truth = Truth(rec)
    asked = [0] * rec.num_players
    for _, seat, _ in truth.steps():
        if wanted(truth, seat):
            return seat, asked[seat], truth
        asked[seat] += 1
    raise AssertionError("no such step")


def _tampered(requests, seat: int, index: int, change) -> dict[int, list[bytes]]:
    message = pb.RefereeMessage.FromString(requests[seat][index])
    change(message.decision.observation)
    out = {s: list(raws) for s, raws in requests.items()}
    out[seat][index] = message.SerializeToString()
    return out


def test_audit_checker_catches_leaky_messages():
    """The checks of the audit above fail on a leaky message: each tampered message
    below is one leak, fed to the same audit that passes the honest messages."""
    # Risk with secret missions
    rec = _in_process("risk", ["missions"], ["blitz", "aggressive", "blitz"], seed=7)
    requests, events = honest_view(rec)
    assert audit(rec, requests, events) == []

    def others_hold_cards(truth, seat):
        return any(hand for other, hand in enumerate(truth.hands()) if other != seat)

    seat, index, truth = _first_request(rec, others_hold_cards)
    other = next(o for o, hand in enumerate(truth.hands()) if o != seat and hand)
    card = truth.hands()[other][0]
    missions = truth.missions()
    assert missions is not None
    other_mission = MISSIONS[next(m for m in missions if m != missions[seat])]

    leaks = {
        "another seat's card in the hand": lambda obs: obs.risk.hand.append(card),
        "another seat's mission": lambda obs: (
            setattr(obs.risk.mission, "id", other_mission.id),
            setattr(obs.risk.mission, "text", other_mission.text),
        ),
        "missions in the extra": lambda obs: wire.set_observation_extra(
            obs.risk, {"note": other_mission.id}
        ),
        "hands in the extra": lambda obs: wire.set_observation_extra(
            obs.risk, {"hands": truth.hands()}
        ),
    }
    for what, leak in leaks.items():
        problems = audit(rec, _tampered(requests, seat, index, leak), events)
        assert problems, f"the audit missed {what}"

    # events: another seat's drawn card, or its changed mission
    draw = next(e for e in rec.events if e["e"] == "draw")
    for receiver in (None, next(s for s in range(rec.num_players) if s != draw["p"])):
        leaky = dict(events)
        leaky[receiver] = [*events[receiver], draw]
        assert audit(rec, requests, leaky), "the audit missed a drawn card"
    changed = {"e": "mission_changed", "p": 0, "private": 0, "mission": "occupy-24", "why": "x"}
    leaky = dict(events)
    leaky[1] = [changed, *events[1]]
    assert audit(rec, requests, leaky), "the audit missed another seat's mission_changed"

    # capital: a headquarters shown before the reveal
    rec = _in_process("risk", ["capital"], ["blitz", "blitz", "blitz"], seed=8)
    requests, events = honest_view(rec)
    assert audit(rec, requests, events) == []
    seat, index, truth = _first_request(
        rec, lambda truth, seat: seat == 1 and truth.hq is not None and truth.hq[0] is not None
    )
    assert not truth.hq_revealed
    pick = truth.hq[0]
    leaky = _tampered(requests, seat, index, lambda obs: obs.risk.headquarters.__setitem__(0, pick))
    assert audit(rec, leaky, events), "the audit missed a headquarters before the reveal"

    # Stratego: an enemy rank nobody has seen
    rec = _in_process("stratego", [], ["heuristic", "random"], seed=9)
    requests, events = honest_view(rec)
    assert audit(rec, requests, events) == []
    seat, index, truth = _first_request(
        rec, lambda truth, seat: seat == 1 and len(truth.board.placed) == 2
    )
    board = truth.board
    hidden = next(s for s, o in board.owner.items() if o != seat and s not in board.revealed)
    leaky = _tampered(
        requests,
        seat,
        index,
        lambda obs: setattr(obs.stratego.board[hidden], "rank", board.rank[hidden]),
    )
    problems = audit(rec, leaky, events)
    assert any("unrevealed enemy" in p for p in problems), problems
    # Stratego: seat 1, setting up, shown a square seat 0 occupies
    seat, index, truth = _first_request(rec, lambda truth, seat: seat == 1)
    placed = next(iter(truth.board.owner))
    leaky = _tampered(
        requests,
        seat,
        index,
        lambda obs: setattr(obs.stratego.board[placed], "occupied", True),  # owner 0
    )
    problems = audit(rec, leaky, events)
    assert any(f"square {placed} shown occupied" in p for p in problems), problems
    setup = {"e": "setup", "p": 0, "pieces": 40, "placement": {"0": "flag"}}
    leaky_events = dict(events)
    leaky_events[None] = [*events[None], setup]
    assert audit(rec, requests, leaky_events), "the audit missed a shown setup"


# --- 9. Stratego setups: simultaneous, and the fallback -----------------------------------

SETUP_RULE_SETS = [([], {}), ([], {"rescue": "on"}), (["isf"], {}), (["barrage"], {})]


def _in_order(options: dict[str, Any]) -> dict[str, Any]:
    army = [name for name, n in options["army"].items() for _ in range(n)]
    squares = map(str, options["squares"][::-1])  # from the far corner: other squares in barrage
    return {"type": "setup", "placement": dict(zip(squares, army, strict=False))}


#: seat 0's setups, as different as can be: guarded, uniform, laid out in order
FIRST_SETUPS = [
    lambda options: guarded_setup(options["squares"], options["army"], random.Random(1)),
    lambda options: random_setup(random.Random(2), options),
    _in_order,
]


def test_second_seat_is_sent_the_same_setup_request_whatever_the_first_seat_placed(
    referee_server, raw_bots, legal_player
):
    """The engine asks seat 0 to set up, then seat 1; the setups are simultaneous all the
    same. For every rule set, matches of one seed in which seat 0 places different
    armies send seat 1 a setup DecisionRequest of the same bytes (but the match id): no
    square, count or event of seat 0's army. Nor do later events show another seat's
    setup, to a seat or a spectator."""
    ref = referee_server

    class FirstSeat(legal_player):
        """Plays legally, but sets up with the FIRST_SETUPS in turn."""

        made = 0

        def action(self, request: pb.DecisionRequest) -> dict[str, Any]:
            if request.kind != "setup":
                return super().action(request)
            self.made += 1
            return FIRST_SETUPS[(self.made - 1) % len(FIRST_SETUPS)](wire.decision_options(request))

    policies = {"stratego": "random"}
    first = raw_bots(ref.address, ref.register("setup-first").token, player=FirstSeat(policies))
    second_token = ref.register("setup-second").token
    second = raw_bots(ref.address, second_token, player=legal_player(policies))
    ref.wait_connected("setup-first", "setup-second")
    for number, (variants, options) in enumerate(SETUP_RULE_SETS):
        sent: set[bytes] = set()
        placed: set[str] = set()
        for _ in FIRST_SETUPS:
            match_id = ref.start_match(
                "stratego",
                ["setup-first", "setup-second"],
                variants=variants,
                options={"turn-limit": "30", **options},
                seed=700 + number,
                decision_ms=20_000,  # a slow machine: no timeouts
            )
            spectator = Spectator(ref.channel, match_id)
            info = ref.wait_match(match_id)
            spectator.join()
            assert not info.result.forfeits, info.result
            rec = assert_replay_verifies(info)
            assert [step[0] for step in rec.steps[:2]] == [0, 1]
            placed.add(json.dumps(rec.steps[0][1]["placement"], sort_keys=True))
            requests, events = seen_by(second, match_id)
            raw = requests[0]
            request = pb.RefereeMessage.FromString(raw).decision
            assert request.kind == "setup"
            assert not any(square.occupied for square in request.observation.stratego.board)
            assert list(request.events_json) == []
            request.match_id = ""
            request.request_id = 0  # random for every request: it counts nothing
            sent.add(request.SerializeToString(deterministic=True))
            for receiver, got in ((0, seen_by(first, match_id)[1]), (1, events)):
                assert [e["p"] for e in got if e["e"] == "setup"] == [receiver]
            assert spectator.events and all(e["e"] != "setup" for e in spectator.events)
        assert len(placed) == len(FIRST_SETUPS), "seat 0's setups did not differ"
        assert len(sent) == 1, f"{variants} {options}: seat 1's setup request followed seat 0's"


def test_fallback_setup_is_random_from_the_match_seed_and_keeps_the_flag_back(
    referee_server, raw_bots
):
    """A seat that never answers gets the referee's fallback setup: a legal one, the
    state's own default for that seed (so the same seed gives the same setup, another
    seed another), with the flag on the back row, for every rule set."""
    ref = referee_server
    mute = raw_bots(ref.address, ref.register("mute-at-setup").token)  # never answers
    ref.wait_connected("mute-at-setup")
    plan = []
    for number, (variants, options) in enumerate(SETUP_RULE_SETS):
        seat = number % 2
        players = ["house:heuristic", "house:heuristic"]
        players[seat] = "mute-at-setup"
        for seed in (800 + number, 850 + number, 800 + number):
            match_id = ref.start_match(
                "stratego", players, variants=variants, options=options, seed=seed
            )
            plan.append((number, seat, seed, match_id))
    fallbacks: dict[tuple[int, int], list[str]] = {}
    for number, seat, seed, match_id in plan:
        info = ref.wait_match(match_id)
        # three timeouts forfeit it, unless the game ends first (a quick flag capture)
        assert all(f.seat == seat and "timeout" in f.why for f in info.result.forfeits)
        assert mute.of_kind("decision", match_id)[0].kind == "setup"
        rec = assert_replay_verifies(info)
        _, _, action, state = next(
            step for step in replay_states(rec) if step[1] == seat and step[2]["type"] == "setup"
        )
        assert action == json.loads(json.dumps(state.default_action()))
        flag = next(int(s) for s, name in action["placement"].items() if name == "flag")
        assert flag // 10 == (0 if seat == 0 else 9), f"the flag on {flag}: not the back row"
        placement = json.dumps(action["placement"], sort_keys=True)
        fallbacks.setdefault((number, seed), []).append(placement)
    for number in range(len(SETUP_RULE_SETS)):
        same, other = fallbacks[(number, 800 + number)], fallbacks[(number, 850 + number)]
        assert len(same) == 2 and same[0] == same[1], "one seed, two fallback setups"
        assert other[0] != same[0], "two seeds, one fallback setup"
