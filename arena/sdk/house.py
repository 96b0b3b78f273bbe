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

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from arena.engine.seeds import HOUSE_SEED_HELP, derive_seed, fresh_seed, seed_argument
from arena.plugins import load_registry
from arena.sdk import MatchContext
from arena.sdk.process import bot_connection_arguments, run_as_process


def house_factory(
    name: str, seed: int | None = None, make: Callable[[int, int], Any] | None = None
) -> Callable[[MatchContext], Any]:
    """A factory of per-match players for the built-in bot ``name`` (any game it plays),
    seeded from ``seed`` (None: a secret of this process). ``make(seat, seed)``, if
    given, makes the player instead of the registry's factory: a built-in bot with
    options of its own (the search bot's budget)."""
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
            self.inner = (make or spec.factory)(match.seat, own)

        def decide(self, observation: Any, decision: Any) -> Any:
            return self.inner.decide(observation, decision)

    return HouseBot


def main(name: str, argv: Sequence[str] | None = None) -> None:
    """``python -m arena.bots.MODULE ARGS``: the built-in bot ``name`` with the options of
    ``arena bot run NAME`` (one line with exit status 2 on a refused token or bad input,
    130 on Ctrl-C, never a traceback)."""
    args = house_parser(name).parse_args(argv)
    run(name, args)


def house_parser(name: str, module: str | None = None) -> argparse.ArgumentParser:
    """The options of ``python -m arena.bots.MODULE`` (MODULE: ``name`` unless given):
    those of every bot process, and ``--seed``; a bot with options of its own adds them,
    then calls :func:`run`."""
    parser = argparse.ArgumentParser(
        prog=f"python -m arena.bots.{module or name}",
        description=f"run the {name} bot against a referee",
    )
    bot_connection_arguments(parser)
    parser.add_argument("--seed", type=seed_argument, default=None, help=HOUSE_SEED_HELP)
    return parser


def run(name: str, args: argparse.Namespace, make: Callable[[int, int], Any] | None = None) -> None:
    """Play as the built-in bot ``name`` (made by ``make``, if given) with the options
    of :func:`house_parser`, registered (with --register-as) for the games it plays."""
    prog = f"python -m arena.bots.{name}"
    try:
        factory = house_factory(name, args.seed, make)
    except ValueError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        sys.exit(2)
    games = sorted({game for game, bot in load_registry().bots if bot == name})
    run_as_process(prog, factory, args, games)


def run_search_bot(
    module: str,
    default_iterations: int,
    iterations_help: str,
    time_option: tuple[str, str],
    make: Callable[[int, int, int, float | None], Any],
    argv: Sequence[str] | None = None,
) -> None:
    """``python -m arena.bots.MODULE``: a search bot registered as ``search`` as its own
    process, with its budget as options: ``--iterations`` (default
    ``default_iterations``) and a time budget ``time_option`` (flag, help; more than 0
    if given). ``make(seat, seed, iterations, time)`` makes the player."""
    flag, time_help = time_option
    parser = house_parser("search", module)
    parser.add_argument(
        "--iterations",
        type=int,
        default=default_iterations,
        help=f"{iterations_help} (default {default_iterations})",
    )
    parser.add_argument(
        flag,
        type=float,
        default=None,
        dest="time_budget",
        metavar=flag.lstrip("-").upper().replace("-", "_"),
        help=time_help,
    )
    args = parser.parse_args(argv)
    if args.iterations < 1:
        parser.error(f"--iterations must be at least 1, got {args.iterations}")
    if args.time_budget is not None and args.time_budget <= 0:
        parser.error(f"{flag} must be more than 0, got {args.time_budget}")
    run("search", args, lambda seat, seed: make(seat, seed, args.iterations, args.time_budget))
