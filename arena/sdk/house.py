"""Run a built-in (house) bot as its own process against a referee.

``arena bot run NAME --referee HOST:PORT --token T`` and ``python -m arena.bots.MODULE ...`` both
land here: the bot registered under NAME for the match's game plays it remotely, with
exactly the code it runs in-process.

Its choices (a Stratego setup, which attack) must be as secret as the opponents' cards: a
bot seeded from what its opponents see (the match id, the seat) could be predicted by
them. So each match's seed is a keyed hash (HMAC) of the match and seat under a secret
drawn from the operating system when the process starts, or under ``--seed`` when the
user wants the same choices again.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any

from arena.engine.seeds import derive_seed, fresh_seed
from arena.plugins import load_registry
from arena.sdk import MatchContext


def house_factory(name: str, seed: int | None = None) -> Callable[[MatchContext], Any]:
    """A factory of per-match players for the built-in bot ``name`` (any game it plays),
    seeded from ``seed`` (None: a secret of this process)."""
    secret = fresh_seed() if seed is None else seed
    registry = load_registry()
    specs = {game: spec for (game, bot), spec in registry.bots.items() if bot == name}
    if not specs:
        known = sorted({bot for _, bot in registry.bots})
        raise ValueError(f"no built-in bot named {name!r}; known: {', '.join(known)}")

    class HouseBot:
        def __init__(self, match: MatchContext) -> None:
            spec = specs.get(match.game)
            if spec is None:
                raise ValueError(f"bot {name} does not play {match.game}")
            own = derive_seed(secret, "house-process", match.match_id, match.seat)
            self.inner = spec.factory(match.seat, own)

        def decide(self, observation: Any, decision: Any) -> Any:
            return self.inner.decide(observation, decision)

    return HouseBot


def main(name: str, argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bots.MODULE ARGS``: exactly ``arena bot run NAME ARGS`` (the same
    options, and one line with exit status 2 on a refused token or bad input, 130 on
    Ctrl-C, never a traceback)."""
    from arena.cli import main as arena

    sys.exit(arena(["bot", "run", name, *(sys.argv[1:] if argv is None else argv)]))
