"""Everything the commands print beyond their own lines: progress, JSON documents, error
lines, and what to do when the reader of the output goes away."""

from __future__ import annotations

import os
import sys
from typing import Any


class ProgressBar:
    """One line redrawn in place on a terminal; a line now and then in a log."""

    def __init__(self, stream: Any = None, width: int = 30) -> None:
        import time

        self.stream = stream or sys.stderr
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self._last = 0.0
        self._clock = time.monotonic

    def __call__(self, progress: Any) -> None:
        now = self._clock()
        done = progress.finished >= progress.total
        if not self.tty and not done and now - self._last < 5.0:
            return
        self._last = now
        filled = self.width * progress.finished // max(progress.total, 1)
        bar = "#" * filled + "." * (self.width - filled)
        elapsed = now - progress.started
        rate = (progress.finished or 1) / max(elapsed, 1e-9)
        left = (progress.total - progress.finished) / rate if progress.finished else 0
        leader = ""
        if progress.live:
            best = max(progress.live, key=progress.live.__getitem__)
            leader = f"  leader {best} ({progress.live[best]:.0f})"
        problems = f"  {progress.problems} retried/failed" if progress.problems else ""
        line = (
            f"[{bar}] {progress.finished}/{progress.total} matches"
            f"  {elapsed:.0f}s elapsed, ~{left:.0f}s left{problems}{leader}"
        )
        if self.tty:
            self.stream.write("\r" + line[:160].ljust(160) + ("\n" if done else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def print_json(document: Any) -> int:
    """``--json``: one JSON document on stdout (infinite numbers, which JSON lacks, as null)."""
    import orjson

    print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    return 0


def stdout_gone() -> int:
    """The reader of our output went away (``arena ... | head -1``): stop quietly, the way
    Python's documentation says to (its note on SIGPIPE): point stdout at devnull, so the
    flush at exit does not fail again, and exit as a process killed by SIGPIPE would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13


def error(message: object) -> None:
    """One line on stderr: what went wrong, and (in the message) what to do."""
    print(f"arena: error: {message}", file=sys.stderr)
