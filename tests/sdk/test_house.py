"""Built-in bots run as their own processes: their choices come from a secret of the
process (the operating system's), or from --seed, never from what opponents see."""

from __future__ import annotations

import signal
import subprocess
import sys
import zlib
from typing import Any

from arena.plugins import load_registry
from arena.sdk import MatchContext
from arena.sdk.house import house_factory

REGISTRY = load_registry()
MATCH = MatchContext(match_id="m-1", game="stratego", seat=0, players=["heuristic", "other"])


def _setup(player: Any) -> dict[str, str]:
    """The placement ``player`` chooses for seat 0 of a new Stratego game."""
    state = REGISTRY.game("stratego").new_state(2, 0, {}, [])
    decision = state.decision()
    assert (decision.player, decision.kind) == (0, "setup")
    return player.decide(state.observation(0), decision)["placement"]


def test_without_a_seed_each_process_chooses_its_own_way() -> None:
    setups = [_setup(house_factory("heuristic")(MATCH)) for _ in range(4)]
    assert all(a != b for i, a in enumerate(setups) for b in setups[i + 1 :])
    # and not as the match id and seat alone would have it (the old seeding)
    public = zlib.crc32(f"{MATCH.match_id}/{MATCH.seat}".encode())
    guess = _setup(REGISTRY.bot("stratego", "heuristic").factory(MATCH.seat, public))
    assert guess not in setups


def test_a_seed_given_plays_the_same_way_again() -> None:
    first, again = (_setup(house_factory("heuristic", 5)(MATCH)) for _ in range(2))
    assert first == again
    assert _setup(house_factory("heuristic", 6)(MATCH)) != first


def test_ctrl_c_stops_an_example_bot_module_with_130_and_no_traceback() -> None:
    """``python -m arena.bots.random_bot``, waiting for a referee that is not there."""
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "arena.bots.random_bot",
            *("--referee", "127.0.0.1:1", "--token", "arena_not-a-token"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert child.stderr is not None
    assert "retrying; 5 tries before giving up" in child.stderr.readline()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=60)
    assert child.returncode == 130
    assert "Traceback" not in err and out == ""
