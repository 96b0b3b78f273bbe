"""``race``: scripts in several processes released at the same moment (``store``, on
each backend, is in tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence

import pytest

Race = Callable[[str, Sequence[Sequence[str]]], list[str]]


@pytest.fixture
def race() -> Race:
    """``race(script, argvs)`` runs ``script`` once per argv, each in its own Python
    process. A script prints ``ready`` and then reads a line from stdin: once every
    process is ready they are all released together. Returns each one's output after
    ``ready``; fails the test if one fails."""

    def run(script: str, argvs: Sequence[Sequence[str]]) -> list[str]:
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", script, *argv],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for argv in argvs
        ]
        try:
            for proc in procs:
                line = proc.stdout.readline()
                assert line == "ready\n", (line, proc.stderr.read())
            for proc in procs:
                proc.stdin.write("go\n")
                proc.stdin.flush()
            outputs = []
            for proc in procs:
                out, err = proc.communicate(timeout=60)
                assert proc.returncode == 0, err
                outputs.append(out.strip())
            return outputs
        finally:
            for proc in procs:
                if proc.poll() is None:
                    proc.kill()

    return run
