"""Every hook is specified with a docstring and documented in docs/plugins.md."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from arena import hookspecs

DOCS = Path(__file__).resolve().parent.parent / "docs" / "plugins.md"


def _hook_names() -> list[str]:
    return [
        name
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith(("arena_", "risk_", "stratego_"))
    ]


def test_there_are_hooks_to_check():
    assert "arena_register_games" in _hook_names()


def test_every_hook_has_a_docstring():
    missing = [n for n in _hook_names() if not (getattr(hookspecs, n).__doc__ or "").strip()]
    assert not missing, f"hooks without a docstring: {missing}"


def test_every_hook_is_documented_in_plugins_md():
    headings = set(re.findall(r"^### `(\w+)`", DOCS.read_text(), flags=re.MULTILINE))
    missing = sorted(set(_hook_names()) - headings)
    assert not missing, f"hooks missing from docs/plugins.md: {missing}"
    stale = sorted(headings - set(_hook_names()))
    assert not stale, f"docs/plugins.md documents hooks that do not exist: {stale}"
