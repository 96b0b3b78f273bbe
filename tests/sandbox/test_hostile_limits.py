"""Hostile bots that try to exhaust the host or break their protocol: a fork bomb, a
10 GB allocation, 1 GB written to a file, a spin and a sleep for ever, its output
closed, its parent signalled, 1 GB printed, a flood of lines and an endless one. Each
through a real bot file in a real bubblewrap sandbox with small limits: the seat gets
a strike or a forfeit with a clear reason, the match goes on to its result, the host
and the other seat are unharmed, and no process of the bot outlives its match."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from arena.sandbox.bwrap import uid_processes
from tests.sandbox.hostile import LIMITS, play_hostile

CASES = {
    # name: (attack, what its seat gets: a strike's or a forfeit's words)
    "forkbomb": (
        """
children = 0
for _ in range(10000):
    pid = os.fork()
    if pid == 0:
        time.sleep(600)
        os._exit(0)
    children += 1
""",
        "BlockingIOError",
    ),
    "allocate": ("block = bytearray(10 << 30)", "MemoryError"),
    "bigfile": (
        """
chunk = b"x" * (1 << 20)
with open("/tmp/big", "wb") as f:
    for _ in range(1024):
        f.write(chunk)
""",
        "OSError",
    ),
    "spin": ("while True:\n    pass", "timeout"),
    "sleep": ("time.sleep(10 ** 6)", "timeout"),
    "closeout": ("os.closerange(0, 1024)\ntime.sleep(1)", "closed its output|process ended"),
    "parent": (
        """
for target in (os.getppid(), 1):
    try:
        os.kill(target, signal.SIGKILL)
    except OSError as exc:
        print("refused", target, exc, file=sys.stderr)
os.kill(-1, signal.SIGKILL)
""",
        "refused 1 .*Operation not permitted",
    ),
    "print": ('line = "x" * 1023\nfor _ in range(1 << 20):\n    print(line)', "timeout"),
    "flood": (
        """
fd = max(int(n) for n in os.listdir("/proc/self/fd") if int(n) > 2)
for fd in range(3, 12):
    try:
        for _ in range(1 << 20):
            os.write(fd, b"not json\\n")
    except OSError:
        pass
""",
        "unreadable line",
    ),
    "endless": (
        """
for fd in range(3, 12):
    try:
        for _ in range(1 << 10):
            os.write(fd, b"x" * (1 << 20))
    except OSError:
        pass
""",
        "wrote a line over 64 KiB",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_hostile_bot_is_contained(tmp_path: Path, name: str) -> None:
    attack, expected = CASES[name]
    record, player = play_hostile(tmp_path, name, attack)
    hostile, other = record.conduct
    assert record.result is not None, "the match went on to its end"
    assert other.strikes == 0 and not other.forfeit, "the other seat is unharmed"
    said = hostile.forfeit or ""
    stderr = player.stderr().decode(errors="replace")
    assert hostile.strikes >= 1 or hostile.forfeit, (record.conduct, stderr[-500:])
    assert re.search(expected, said) or re.search(expected, stderr), (said, stderr[-500:])
    assert len(player.stderr()) <= LIMITS.stderr_kb << 10, "its stderr is kept bounded"
    assert player.process.poll() is not None, "its process ended with its match"
    assert _processes_of(player) == [], "no process of the bot outlives its match"
    assert os.getpid() > 0 and Path(__file__).exists()


def _processes_of(player) -> list[int]:  # type: ignore[no-untyped-def]
    """Live processes of the sandbox's own uid (a root host gives each sandbox one)."""
    return [] if player.uid is None else uid_processes(player.uid)
