"""Small helpers shared by the Stratego example bots."""

from __future__ import annotations

from typing import Any


def random_setup(rng: Any, options: dict[str, Any]) -> dict[str, Any]:
    """A uniformly random legal setup: the army shuffled over the setup squares."""
    squares = list(options["squares"])
    army = [name for name, n in options["army"].items() for _ in range(n)]
    rng.shuffle(squares)
    return {"type": "setup", "placement": dict(zip(map(str, squares), army, strict=False))}
