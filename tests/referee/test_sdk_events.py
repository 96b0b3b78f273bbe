"""What the SDK gives a bot beyond the observation, through a real referee and in process
alike: every event its seat may see (``decision.events``, then the end's), the end of the
match (``Bot.on_end``), an exception told to the referee at once (a strike "bot raised
..."), and decisions in a pool of threads (``--threads``)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from arena.engine.match import MAX_STRIKES, play_match
from arena.engine.replay import from_json
from arena.sdk import MatchContext
from arena.sdk.local import load

from .conftest import REGISTRY, Process, RefereeServer

BOT = Path(__file__).resolve().with_name("recording_bot.py")
GAMES = [
    ("stratego", ["house:random"], {"turn-limit": "60"}),
    ("risk", ["house:aggressive", "house:defensive"], {"turn-limit": "4"}),
]


def _records(path: Path, match_id: str) -> list[dict[str, Any]]:
    lines = path.read_text().splitlines() if path.exists() else []
    return [r for r in map(json.loads, lines) if r["match"] == match_id]


def _seen(records: list[dict[str, Any]]) -> tuple[list[Any], dict[str, Any]]:
    """Every event the bot was given, in order (its decisions', then its end's), and
    the end it was told."""
    ends = [r for r in records if "end" in r]
    assert len(ends) == 1, records[-3:]
    events = [e for r in records for e in r["events"]]
    return events, ends[0]


def _shown(game: str, replay: dict[str, Any], seat: int) -> list[Any]:
    """What ``seat`` may see of the replay's events, as JSON (what the wire carries)."""
    rec = from_json(replay)
    rules = REGISTRY.game(game)
    shown = [rules.public_event(e, seat) for e in rec.events]
    return json.loads(json.dumps([e for e in shown if e is not None]))


def _bot_process(
    server: RefereeServer, tmp_path: Path, name: str, record: Path, *extra: str
) -> Process:
    token = tmp_path / f"{name}.token"
    token.write_text(server.register(name).token)
    process = Process(
        name,
        [sys.executable, str(BOT), "--referee", server.address, "--token-file", str(token), *extra],
        tmp_path,
    )
    server.processes.append(process)
    server.wait_connected(name)
    return process


@pytest.mark.parametrize(("game", "opponents", "options"), GAMES)
def test_a_remote_bot_is_given_every_event_its_seat_may_see_and_the_end(
    referee_server: RefereeServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    game: str,
    opponents: list[str],
    options: dict[str, str],
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("RECORD", str(record))
    name = f"events-{game}"
    process = _bot_process(referee_server, tmp_path, name, record)
    try:
        info = referee_server.run_match(game, [name, *opponents], options=options)
        assert info.status == "finished" and not info.result.forfeits, info.result
        replay = json.loads(info.replay_json)
        records = _records(record, info.match_id)
        events, end = _seen(records)
        # every event the seat may see, once each, in order, and nothing it may not
        assert events == _shown(game, replay, 0)
        assert len(events) > 10
        assert end["end"] == info.result.reason and end["places"] == list(info.result.places)
        assert end["place"] == info.result.places[0] and end["seat"] == 0
    finally:
        process.stop()


@pytest.mark.parametrize(("game", "opponents", "options"), GAMES)
def test_in_process_the_same_bot_file_is_given_the_same(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    game: str,
    opponents: list[str],
    options: dict[str, str],
) -> None:
    record = tmp_path / "record.jsonl"
    bot = load(str(BOT))
    module = sys.modules[bot.cls.__module__]
    monkeypatch.setattr(module, "RECORD", str(record))
    names = [bot.name, *(o.removeprefix("house:") for o in opponents)]
    context = MatchContext("in-process", game, 0, names, [], dict(options))
    players = [bot.player(context)] + [
        REGISTRY.bot(game, o).factory(s + 1, s) for s, o in enumerate(names[1:])
    ]
    rec = play_match(REGISTRY.game(game), players, 7, options, names=names)
    events, end = _seen(_records(record, "in-process"))
    shown = [REGISTRY.game(game).public_event(e, 0) for e in rec.events]
    assert events == json.loads(json.dumps([e for e in shown if e is not None]))
    assert end["end"] == rec.result.reason.value and end["place"] == rec.result.places[0]


def test_an_exception_is_a_strike_at_once_remotely_and_in_process(
    referee_server: RefereeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The SDK tells the referee (an error answer): each failed decision is a strike
    "bot raised ...", never a wait for the deadline (a timeout strike); so is it in
    process, with the referee's limit of strikes."""
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("RECORD", str(record))
    monkeypatch.setenv("FAIL_FROM", "2")
    process = _bot_process(referee_server, tmp_path, "raiser", record)
    try:
        info = referee_server.run_match("stratego", ["raiser", "house:random"])
    finally:
        process.stop()
    assert info.status == "finished"
    why = {f.seat: f.why for f in info.result.forfeits}
    strikes = referee_server.max_strikes
    assert why == {0: f"{strikes} strikes (last: bot raised ValueError: boom)"}
    assert "raised ValueError deciding move; the referee was told" in process.stderr()
    _, end = _seen(_records(record, info.match_id))
    assert end["forfeits"] == {"0": why[0]} and end["place"] == 2

    bot = load(str(BOT))
    monkeypatch.setattr(sys.modules[bot.cls.__module__], "FAIL_FROM", 2)
    monkeypatch.setattr(sys.modules[bot.cls.__module__], "RECORD", "")
    warnings: list[str] = []
    context = MatchContext("in-process", "stratego", 0, ["file:recording_bot", "random"])
    players = [
        bot.player(context, warnings.append),
        REGISTRY.bot("stratego", "random").factory(1, 1),
    ]
    rec = play_match(REGISTRY.game("stratego"), players, 3)
    assert rec.conduct[0].forfeit == f"{MAX_STRIKES} strikes (last: bot raised ValueError: boom)"
    assert rec.result.places == (2, 1)
    assert len(warnings) == MAX_STRIKES
    assert all("recording_bot.py, line" in w and "ValueError: boom" in w for w in warnings)


def test_threads_run_decisions_in_a_pool(
    referee_server: RefereeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    record = tmp_path / "record.jsonl"
    monkeypatch.setenv("RECORD", str(record))
    process = _bot_process(referee_server, tmp_path, "pooled", record, "--threads", "2")
    try:
        info = referee_server.run_match(
            "stratego", ["pooled", "house:random"], options={"turn-limit": "20"}
        )
    finally:
        process.stop()
    threads = {r["thread"] for r in _records(record, info.match_id) if "thread" in r}
    assert threads and all(t.startswith("ThreadPoolExecutor") for t in threads), threads
