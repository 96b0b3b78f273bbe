"""The replay a referee serves and stores: made from each step's JSON text, kept as the
match goes (strings, which the garbage collector does not walk), it must be exactly the
text of the whole replay encoded at once, and replay to the same result."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import pytest

from arena.engine.replay import from_json, verify
from arena.engine.replay import to_json as replay_to_json
from arena.referee.codec import to_json_text
from arena.referee.live import LiveMatch
from arena.referee.server import Referee, RefereeConfig
from arena.store import Store
from arena.v1 import arena_pb2 as pb

GAMES = [
    ("risk", [], {"turn-limit": "40"}),
    ("risk", ["missions"], {"turn-limit": "40"}),
    ("risk", ["capital"], {"turn-limit": "40", "defender-dice": "choose"}),
    ("stratego", ["isf"], {}),
    ("stratego", ["barrage"], {}),
]


async def _play(db: Path, game: str, variants: list[str], options: dict[str, str]) -> LiveMatch:
    referee = Referee(Store(str(db)), RefereeConfig())
    try:
        players = ["house:random"] * (3 if game == "risk" else 2)
        request = pb.RunMatchRequest(
            game=game, variants=variants, options=options, players=players, seed=7
        )
        match = referee.create_match(request)
        await asyncio.wait_for(match.done.wait(), 120)
        return match
    finally:
        await referee.shutdown(grace_s=1)


@pytest.mark.parametrize(("game", "variants", "options"), GAMES)
def test_the_replay_text_is_the_whole_replay_encoded_at_once(
    tmp_path: Path, game: str, variants: list[str], options: dict[str, str]
) -> None:
    db = tmp_path / "arena.db"
    match = asyncio.run(_play(db, game, variants, options))
    assert match.status == "finished"
    record = match.full_record()
    assert len(record.steps) > 10 and record.result is not None
    text = match.replay_text()
    assert text == to_json_text(replay_to_json(record))  # byte for byte
    assert json.loads(text)["steps"] == record.steps
    assert verify(from_json(json.loads(text))) == len(record.steps)
    assert Store(str(db)).replay(match.match_id) == text  # what the store keeps
    # the steps held in memory are strings: nothing for the garbage collector to walk
    assert all(type(step) is str and not gc.is_tracked(step) for step in match._steps)
