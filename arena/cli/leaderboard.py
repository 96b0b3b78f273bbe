"""``arena leaderboard``, ``arena compare`` and ``arena bots``: ratings, two bots head to
head, and the bots a store knows."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

from arena.cli.args import (
    check_game,
    db_option,
    json_option,
    open_store,
    rule_options,
    stored_options,
)
from arena.cli.console import print_json
from arena.store.models import board_parts

#: `arena compare` shows an Elo difference beyond this as "> +1000" (or "< -1000")
ELO_SHOWN = 1000


def board_of(args: argparse.Namespace) -> str:
    """The board ``--game``, ``--variant`` and ``--option`` name (options that do not
    change play name none: a board is a game, a variant set and the options that make it
    a game of its own)."""
    from arena.plugins import default_registry
    from arena.store import variant_key

    options = stored_options(args)
    if options and args.game:  # ValueError: an option the game has not, a bad value
        default_registry().check_board_query(args.game, list(args.variant), options)
    return variant_key(args.variant, options, args.game)


def cmd_leaderboard(args: argparse.Namespace) -> int:
    from arena.tournament.leaderboard import board_title, refresh, render
    from arena.web.data import board_filter

    if args.game:
        check_game(args.game, args.variant)
    elif args.variant or args.option:
        raise ValueError("--variant and --option filter the boards of a game: give --game too")
    store = open_store(args, create=False)
    boards = store.boards()
    if args.game:
        if args.all_variants:  # every board of the game that holds these options
            options = dict(board_parts(board_of(args))[1])
            boards = board_filter(boards, args.game, args.variant, options)
        else:
            wanted = board_of(args)
            boards = [(g, v) for g, v in boards if g == args.game and v == wanted]
        if not boards and not args.json:
            print(render([], board_title(args.game, board_of(args))))
            return 0
    if args.json:
        return _leaderboards_json(store, boards)
    if not boards:
        print(f"no finished matches in {args.db} yet")
    for index, (game, variants) in enumerate(boards):
        if index:
            print()
        print(render(refresh(store, game, variants), board_title(game, variants)))
    return 0


def _leaderboards_json(store: Any, boards: Sequence[tuple[str, str]]) -> int:
    """The web API's leaderboard dicts (arena.web.data), stored as the text's are."""
    from arena.tournament.leaderboard import refresh
    from arena.web import data

    for game, variants in boards:
        refresh(store, game, variants)
    return print_json({"boards": [data.leaderboard(store, g, v) for g, v in boards]})


def _elo_shown(elo: float) -> str:
    """An Elo difference for the text: beyond +-ELO_SHOWN (a perfect score's bound is
    infinite) it reads "> +1000", never "inf"."""
    if elo > ELO_SHOWN:
        return f"> +{ELO_SHOWN}"
    if elo < -ELO_SHOWN:
        return f"< -{ELO_SHOWN}"
    return f"{elo:+.0f}"


def cmd_compare(args: argparse.Namespace) -> int:
    from arena.plugins import load_registry
    from arena.ratings import head_to_head
    from arena.tournament.leaderboard import board_title
    from arena.tournament.runner import resolve_bot

    check_game(args.game, args.variant)
    store = open_store(args, create=False)
    registry = load_registry()
    a = resolve_bot(store, registry, args.game, args.a)
    b = resolve_bot(store, registry, args.game, args.b)
    wins = draws = losses = games = 0
    for g in store.played(args.game, board_of(args)):
        if a.id in g.bot_ids and b.id in g.bot_ids:
            games += 1
            pa = g.places[g.bot_ids.index(a.id)]
            pb = g.places[g.bot_ids.index(b.id)]
            wins += pa < pb
            draws += pa == pb
            losses += pa > pb
    if args.json:
        return _compare_json(args, a.label, b.label, (wins, draws, losses))
    print(f"{a.label} against {b.label} in {board_title(args.game, board_of(args))}:")
    if not games:
        print("  they have not met in a finished match yet")
        return 0
    h = head_to_head(wins, draws, losses, elo0=args.elo0, elo1=args.elo1)
    print(
        f"  {games} matches together; {a.label} placed ahead {wins}, level {draws}, behind {losses}"
    )
    print(
        f"  Elo difference: {_elo_shown(h.elo)} "
        f"(95% interval {_elo_shown(h.elo_low)} .. {_elo_shown(h.elo_high)})"
    )
    print(f"  likelihood of superiority: {h.los:.1%} that {a.label} is the stronger")
    s = h.sprt
    print(
        f"  SPRT elo0={s.elo0:g} elo1={s.elo1:g}: LLR {s.llr:+.2f} in ({s.lower:.2f}, "
        f"{s.upper:.2f}): {s.verdict}"
    )
    return 0


def _compare_json(args: argparse.Namespace, a: str, b: str, results: tuple[int, int, int]) -> int:
    """What `arena compare` prints, as numbers; null where there is none (no match yet, or
    an infinite Elo bound)."""
    import dataclasses

    from arena.ratings import head_to_head

    wins, draws, losses = results
    h = head_to_head(wins, draws, losses, elo0=args.elo0, elo1=args.elo1) if sum(results) else None
    return print_json(
        {
            "a": a,
            "b": b,
            "game": args.game,
            "variants": board_of(args),
            "matches": sum(results),
            "wins": wins,
            "draws": draws,
            "losses": losses,
            "elo": h.elo if h else None,
            "elo_low": h.elo_low if h else None,
            "elo_high": h.elo_high if h else None,
            "los": h.los if h else None,
            "sprt": dataclasses.asdict(h.sprt) if h else None,
        }
    )


def cmd_bots_list(args: argparse.Namespace) -> int:
    store = open_store(args, create=False)
    if args.json:
        from arena.web.data import bot_versions

        return print_json({"bots": bot_versions(store)})
    rows = store.bots()
    if not rows:
        print(f"no bots in {args.db} yet: `arena bot register NAME` on a referee")
    sizes = store.code_sizes(bot.digest for bot in rows if bot.digest)
    for bot in rows:
        state = " (revoked)" if bot.revoked else ""
        code = ""
        if bot.kind == "hosted" and bot.digest:
            code = f"  sha256 {bot.digest[:12]} {sizes.get(bot.digest, 0)} bytes"
        print(f"{bot.label:<32} {bot.kind:<6} {bot.created:%Y-%m-%d %H:%M}  {bot.id}{state}{code}")
    return 0


def add_parsers(sub: Any) -> None:
    board = sub.add_parser("leaderboard", help="ratings with 95%% intervals, per game/variants")
    board.add_argument("--game", help="one game (default: every game with results)")
    rule_options(board)  # the board of these variants and options (those that change play)
    board.add_argument(
        "--all-variants",
        action="store_true",
        help="every board of --game (each variant set and set of options that change play), "
        "those with the --variant and --option given",
    )
    db_option(board)
    json_option(board)
    board.set_defaults(func=cmd_leaderboard)

    compare = sub.add_parser("compare", help="two bots head to head: Elo, LOS, SPRT")
    compare.add_argument("a", help="a bot, NAME or NAME@VERSION")
    compare.add_argument("b", help="the bot it is compared with")
    compare.add_argument("--game", required=True, help="the game, e.g. risk")
    rule_options(compare)
    compare.add_argument("--elo0", type=float, default=0.0, help="SPRT H0 (default 0)")
    compare.add_argument("--elo1", type=float, default=10.0, help="SPRT H1 (default 10)")
    db_option(compare)
    json_option(compare)
    compare.set_defaults(func=cmd_compare)

    bots = sub.add_parser("bots", help="bots in the store")
    bots_sub = bots.add_subparsers(dest="bots_command", required=True)
    blist = bots_sub.add_parser("list", help="every bot version, registered and house")
    db_option(blist)
    json_option(blist)
    blist.set_defaults(func=cmd_bots_list)
