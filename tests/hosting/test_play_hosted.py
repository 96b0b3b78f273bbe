"""Hosted bots on the local executor: their code comes from the store by digest (in a
spawned worker process that opens the store by its URL), runs in the sandbox, its
stderr is kept with its seat; code that cannot start forfeits its seat, and the match
and the tournament go on."""

from __future__ import annotations

import hashlib
import io
import re
import zipfile
from pathlib import Path

import pytest

from arena.sdk.starter import write_starter
from arena.store import Store
from arena.tournament.executor import LocalExecutor
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament

TALKER = b"""

import sys as _sys

_decide = CLASS.decide_stratego


def _talking(self, observation, decision):
    print("hello from the talker", file=_sys.stderr)
    return _decide(self, observation, decision)


CLASS.decide_stratego = _talking
"""


def host(store: Store, name: str, data: bytes, format: str = "py") -> str:
    digest = hashlib.sha256(data).hexdigest()
    store.put_code(digest, format, data)
    return store.hosted_bot(name, digest, ["stratego"])[0].label


def test_hosted_bots_play_a_tournament_on_the_local_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ARENA_CODE_CACHE", str(tmp_path / "cache"))
    store = Store(str(tmp_path / "arena.db"))
    code = write_starter(str(tmp_path / "starter"), "stratego").read_bytes()
    # a bot that writes to stderr at each decision
    (cls,) = re.findall(rb"^class (\w+)\(Bot\)", code, flags=re.MULTILINE)
    talker = code + TALKER.replace(b"CLASS", cls)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("arena-bot.toml", 'command = ["/no/such/program"]\n')
    labels = [
        host(store, "quiet", code),
        host(store, "talker", talker),
        host(store, "broken", out.getvalue(), "zip"),
    ]
    spec = TournamentSpec(
        game="stratego",
        bots=["quiet", "talker", "broken"],
        seats=2,
        options={"turn-limit": "60"},
    )
    tournament = create_tournament(store, spec)
    summary = run_tournament(store, tournament.id, LocalExecutor(workers=1))
    matches = store.tournament_matches(tournament.id)
    assert [m.status for m in matches] == ["finished"] * 3, [(m.id, m.error) for m in matches]
    assert summary is not None
    ids = {b.label: b.id for b in store.bots()}
    for match in matches:
        seats = {seat.bot_id: seat for seat in store.seats(match.id)}
        if ids[labels[2]] in seats:  # the broken one forfeits, saying why
            why = seats[ids[labels[2]]].forfeit or ""
            assert "could not start" in why, why
        if ids[labels[1]] in seats:
            seat = seats[ids[labels[1]]]
            _, stderr = store.seat_stderr(match.id, seat.seat)
            assert "hello from the talker" in (stderr or "")
