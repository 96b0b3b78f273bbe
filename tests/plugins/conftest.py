"""Install a plugin the way pip would: a module plus a dist-info with entry points."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

Installer = Callable[[str, str, dict[str, str]], Path]


@pytest.fixture
def install_plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Installer]:
    """``install_plugin(module_name, source, entry_points)`` for the test's duration."""
    installed: list[str] = []

    def install(module: str, source: str, entry_points: dict[str, str]) -> Path:
        site = tmp_path / f"site-{module}"
        site.mkdir()
        (site / f"{module}.py").write_text(source)
        dist = site / f"{module}-0.1.dist-info"
        dist.mkdir()
        (dist / "METADATA").write_text(
            f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 0.1\n"
        )
        lines = ["[arena]", *(f"{name} = {target}" for name, target in entry_points.items())]
        (dist / "entry_points.txt").write_text("\n".join(lines) + "\n")
        monkeypatch.syspath_prepend(str(site))
        importlib.invalidate_caches()
        installed.append(module)
        return site

    yield install
    for module in installed:
        sys.modules.pop(module, None)
