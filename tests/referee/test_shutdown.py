"""SIGTERM shuts the referee down gracefully: matches in flight get the grace period,
the rest are aborted cleanly (recorded, and their bots told), and it exits 0; played
again, an aborted match gets a fresh seed."""

from __future__ import annotations

import json
import signal
import time

from arena.engine import replay
from arena.engine.seeds import attempt_seed
from arena.store import Store
from arena.v1 import arena_pb2 as pb


def test_sigterm_aborts_matches_in_flight_cleanly_and_exits_zero(referee_factory, raw_bots):
    ref = referee_factory(shutdown_grace=1.0, decision_ms=20000, time_bank_ms=0)
    reg = ref.register("stayer")
    bot = raw_bots(ref.address, reg.token)  # connected, and never answers
    bot.wait_kind("welcome")
    # an endless house match (no turn limit), and one waiting on the silent bot
    endless = ref.arena.RunMatch(
        pb.RunMatchRequest(
            game="risk", players=["house:random"] * 6, seed=1, options={"turn-limit": "0"}
        ),
        timeout=10,
    ).match_id
    waiting = ref.arena.RunMatch(
        pb.RunMatchRequest(game="stratego", players=["stayer", "house:random"], seed=2), timeout=10
    ).match_id
    bot.wait_kind("decision")
    started = time.monotonic()
    ref.process.popen.send_signal(signal.SIGTERM)
    assert ref.process.wait(30) == 0, ref.process.stderr()[-2000:]
    assert time.monotonic() - started < 15  # the grace period, not the 20 s deadline
    assert "shutting down: 2 matches in flight" in ref.process.stderr()
    store = Store(str(ref.workdir / "arena.db"))
    for match_id in (endless, waiting):
        row = store.match(match_id)
        assert (row.status, row.result["reason"]) == ("aborted", "aborted"), match_id
    # the connected bot was told its match ended before its stream closed
    _, ended = bot.wait_kind("match_ended")
    assert ended.match_id == waiting
    assert ended.result.reason == "aborted"

    # a referee started again on the same store plays the match again on request, with
    # the seed given: not that one, whose consequences the bot has seen, but a fresh one
    again = referee_factory(db=ref.db, grace_s=0.5)
    request = pb.RunMatchRequest(
        game="stratego", players=["stayer", "house:random"], seed=2, match_id=waiting, wait=True
    )
    info = again.arena.RunMatch(request, timeout=60).match
    assert info.status == "finished"  # the stayer is gone: it forfeits
    assert info.seed == attempt_seed(2, 2) != 2
    record = replay.from_json(json.loads(info.replay_json))
    assert record.seed == info.seed and replay.verify(record) == len(record.steps)
    row = Store(again.db).match(waiting)
    assert (row.attempts, row.seed) == (2, info.seed)


def test_arena_match_run_exits_non_zero_when_its_match_is_aborted(referee_factory, tmp_path):
    """A script running `arena match run` must see that its match did not finish."""
    import subprocess
    import sys

    from .conftest import ROOT, wait_until

    ref = referee_factory(shutdown_grace=0.5)
    command = [sys.executable, "-m", "arena.cli", "match", "run", "risk", "--players",
               "house:random,house:random,house:random", "--option", "turn-limit=0",
               "--referee", ref.address]  # fmt: skip
    out = tmp_path / "out.txt"
    with out.open("w") as sink:
        child = subprocess.Popen(command, stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT)
        try:
            wait_until(lambda: "started on" in out.read_text(), 30, "the match to start")
            ref.process.popen.send_signal(signal.SIGTERM)
            assert child.wait(timeout=30) == 1
        finally:
            child.kill()
            child.wait()
    assert ": aborted: no result (" in out.read_text()
