"""A policy of the environments plays on a real referee: the masked random bot file of
docs/environments.md, run as its own process over gRPC, plays Risk and Stratego
matches against house bots to their end with no action refused and no strike."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

from .conftest import Process

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "environments.md"


def doc_bot() -> str:
    """The policy bot file that docs/environments.md shows."""
    blocks = re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.MULTILINE | re.DOTALL)
    (bot,) = [b for b in blocks if "main(MaskedRandom)" in b]
    return bot


def test_a_masked_random_policy_bot_plays_whole_matches_through_a_real_referee(
    referee_factory, tmp_path: Path
) -> None:
    # a strike (a refused action or a timeout) would forfeit at once
    ref = referee_factory(decision_ms=10_000, time_bank_ms=10_000, max_strikes=1)
    path = tmp_path / "masked_random.py"
    path.write_text(doc_bot())
    token = ref.register("policy").token
    command = [sys.executable, str(path), "--referee", ref.address, "--token", token]
    process = Process("bot-policy", command, tmp_path)
    ref.processes.append(process)
    ref.wait_connected("policy")
    matches = [
        ("risk", ["policy", "house:aggressive", "house:random"], [], {"turn-limit": "30"}),
        ("risk", ["house:random", "policy", "house:defensive"], ["missions"], {}),
        ("stratego", ["policy", "house:heuristic"], [], {}),
        ("stratego", ["house:random", "policy"], ["barrage"], {}),
    ]
    for game, players, variants, options in matches:
        info = ref.run_match(game, players, variants=variants, options=options, seed=5)
        assert info.status == "finished", info
        assert not info.result.forfeits, info.result.forfeits
        seat = players.index("policy")
        steps = json.loads(info.replay_json)["steps"]
        assert sum(1 for step in steps if step[0] == seat) > 5, (game, len(steps))
    log = process.stderr()
    assert "rejected" not in log and "failed to decide" not in log, log[-3000:]
    assert log.count("ended: you took") == len(matches), log[-3000:]
