"""``arena web`` and ``arena demo``: the web app on a store, and the main job in one
command (played by :mod:`arena.demo`)."""

from __future__ import annotations

import argparse
from typing import Any

from arena.cli.args import db_option, port_number, positive_int, progress_options
from arena.cli.console import tournament_display


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the web app (uvicorn) on the store, read-only, until interrupted."""
    import uvicorn

    from arena.web import create_app

    app = create_app(args.db, referee=args.referee)  # a bad store fails here, in one line
    print(f"arena web: http://{args.host}:{args.port}/ (store {args.db}, read-only)", flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from arena import demo

    return demo.run(
        db=args.db,
        risk_games=args.risk_games,
        stratego_games=args.stratego_games,
        workers=args.workers,
        progress=lambda: tournament_display(args),
    )


def add_parsers(sub: Any) -> None:
    web = sub.add_parser("web", help="the leaderboards, bots, tournaments and matches in a browser")
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    web.add_argument("--port", type=port_number, default=8000, help="port (default 8000)")
    web.add_argument("--referee", help="HOST:PORT of a referee whose health the home page shows")
    db_option(web)
    web.set_defaults(func=cmd_web)

    demo = sub.add_parser(
        "demo",
        help="the main job: a referee, the example bots as processes, Risk and Stratego "
        "round robins, leaderboards",
    )
    demo.add_argument("--risk-games", type=positive_int, default=6, help="games per Risk pairing")
    demo.add_argument(
        "--stratego-games", type=positive_int, default=6, help="games per Stratego pairing"
    )
    demo.add_argument(
        "--workers", type=positive_int, default=2, help="processes for house-bot matches"
    )
    progress_options(demo)
    db_option(demo)
    demo.set_defaults(func=cmd_demo)
