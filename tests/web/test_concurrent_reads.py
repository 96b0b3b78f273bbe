"""Many requests at once: `arena web` answers them all. Its read-only SQLite store once
kept one connection per thread and at most five, closing the others' connections under
them, and the process died when more threads read at once (live viewers, say)."""

from __future__ import annotations

import concurrent.futures
import urllib.request

from .conftest import Filled, web_app


def test_sixty_requests_at_once_are_all_answered(filled: Filled):
    with web_app(filled.path) as base:

        def get(i: int) -> str:
            path = ("/api/tournaments", "/api/bots", "/leaderboards")[i % 3]
            try:
                with urllib.request.urlopen(base + path, timeout=120) as answer:
                    return str(answer.status)
            except OSError as exc:
                return type(exc).__name__

        with concurrent.futures.ThreadPoolExecutor(60) as pool:
            answers = list(pool.map(get, range(300)))
        assert set(answers) == {"200"}
        with urllib.request.urlopen(base + "/api/home", timeout=30) as answer:
            assert answer.status == 200  # and it is still up
