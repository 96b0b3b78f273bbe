"""The ``arena`` console script: the CLI, imported here so that a Ctrl-C while it
loads (a second of imports on a busy machine) ends it quietly, as one later does."""

from __future__ import annotations

import sys


def run() -> None:  # pragma: no cover - console entry
    try:
        from arena.cli import main

        code = main()
    except KeyboardInterrupt:
        code = 130
    sys.exit(code)
