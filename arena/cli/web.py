"""``arena web`` and ``arena demo``: the web app on a store, and the main job in one
command (played by :mod:`arena.demo`), which ends serving its results on the web."""

from __future__ import annotations

import argparse
import gc
import os
import socket
from collections.abc import Callable
from typing import Any

from arena.cli.args import (
    db_option,
    port_number,
    positive_float,
    positive_int,
    progress_options,
)
from arena.cli.console import tournament_display

#: how long, once stopping, the web waits for the responses still being sent (seconds)
GRACEFUL_S = 3


def listen(host: str, port: int, option: str) -> socket.socket:
    """The web's listening socket, bound now: a port in use fails here, in one line naming
    ``option`` (the one that chooses another), before anything else has run."""
    from arena.web.server import BACKLOG

    try:
        return socket.create_server((host, port), backlog=BACKLOG)
    except OSError as exc:
        why = os.strerror(exc.errno).lower() if exc.errno else str(exc)
        raise OSError(
            f"cannot serve the web on {host}:{port}: {why}; choose another port with "
            f"{option} (0: any free one)"
        ) from None


def serve(
    db: str,
    listener: socket.socket,
    say: Callable[[str], str],
    referee: str | None = None,
    prebuild: bool = True,
    bounds: argparse.Namespace | None = None,
) -> int:
    """Serve the web app (uvicorn) on the store, read-only, on ``listener`` (see
    :func:`listen`; port 0 takes a free port, and the URL names it) until interrupted;
    first print ``say(url)``. Ctrl-C stops it cleanly: the app ends its event streams
    (live matches, tournaments), uvicorn shuts down, then raises the interrupt again,
    which ``main`` turns into exit status 130 without a traceback. A response still
    going after :data:`GRACEFUL_S` (a browser that stopped reading) is cancelled: one
    Ctrl-C is enough. ``prebuild``: build the frames of matches as they end, ahead of
    their first viewer (:mod:`arena.web.prebuild`). ``bounds``: the options of
    :func:`bound_options` (their defaults if None)."""
    import uvicorn

    from arena.web import create_app, server
    from arena.web.app import Limits
    from arena.web.prebuild import POLL_S

    b = bounds or argparse.Namespace(**{name: default for name, default, _ in BOUNDS})
    limits = Limits(
        live_watchers=b.live_watchers,
        live_per_match=b.live_watchers_per_match,
        tournament_streams=b.tournament_streams,
        frames_bytes=b.frames_cache_mb * 2**20,
    )
    with listener:
        # a bad store fails here, in one line
        app = create_app(
            db, referee=referee, prebuild_s=None if not prebuild else POLL_S, limits=limits
        )
        # What exists now (modules, FastAPI's and SQLAlchemy's machinery, the games:
        # about 100,000 objects) lives as long as the process: out of the garbage
        # collector's way, its full collections walk only what requests make (each walk
        # of it took ~65 ms here; a replay's first load in the viewer ran into one)
        gc.collect()
        gc.freeze()
        host, port = listener.getsockname()[:2]
        print(say(f"http://{host}:{port}"), flush=True)
        config = server.config(
            app, b.max_connections, b.head_timeout, b.keep_alive, graceful_s=GRACEFUL_S
        )
        uvicorn.Server(config).run(sockets=[listener])
    return 0


def cmd_web(args: argparse.Namespace) -> int:
    """Serve the web app on the store, read-only, until interrupted."""
    return serve(
        args.db,
        listen(args.host, args.port, "--port"),
        lambda url: f"arena web: {url}/ (store {args.db}, read-only)",
        referee=args.referee,
        prebuild=args.prebuild,
        bounds=args,
    )


#: (dest, default, help) of every bound of `arena web` (docs/web.md, "Bounds"); the
#: defaults are those of arena.web (server, live, progress, viewers: a test checks),
#: written here so that the command line starts without importing the web
BOUNDS: list[tuple[str, Any, str]] = [
    (
        "max_connections",
        1_000,
        "connections served at once; beyond, a request gets a 503 (never more than the "
        "open-files limit less 64)",
    ),
    ("head_timeout", 10.0, "seconds a client has to send a request's head (slow ones are closed)"),
    ("keep_alive", 5.0, "seconds an idle connection is kept open"),
    ("live_watchers", 1_000, "browsers watching live matches, in all"),
    ("live_watchers_per_match", 800, "browsers watching one match"),
    ("tournament_streams", 200, "tournament pages followed live (event streams) at once"),
    ("frames_cache_mb", 192, "megabytes of replay viewers' frames kept"),
]


def bound_options(parser: argparse.ArgumentParser) -> None:
    for name, default, help_text in BOUNDS:
        kind = positive_float if isinstance(default, float) else positive_int
        parser.add_argument(
            "--" + name.replace("_", "-"),
            type=kind,
            default=default,
            help=f"{help_text} (default {default:g})",
        )


def cmd_demo(args: argparse.Namespace) -> int:
    from arena import demo

    # the web's port is taken first: one in use stops the demo now, not after it played
    listener = None if args.no_web else listen(args.web_host, args.web_port, "--web-port")
    try:
        code = demo.run(
            db=args.db,
            risk_games=args.risk_games,
            stratego_games=args.stratego_games,
            workers=args.workers,
            progress=lambda: tournament_display(args),
        )
        if code or listener is None:
            return code
        print()
        return serve(args.db, listener, lambda url: f"open {url} (Ctrl-C to stop)")
    finally:
        if listener is not None:
            listener.close()


def add_parsers(sub: Any) -> None:
    web = sub.add_parser("web", help="the leaderboards, bots, tournaments and matches in a browser")
    web.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    web.add_argument(
        "--port", type=port_number, default=8000, help="port (default 8000; 0: a free one)"
    )
    web.add_argument("--referee", help="HOST:PORT of a referee whose health the home page shows")
    web.add_argument(
        "--no-prebuild",
        dest="prebuild",
        action="store_false",
        help="do not build the frames of matches as they end (a long replay's first "
        "viewer then waits for them)",
    )
    bound_options(web)
    db_option(web)
    web.set_defaults(func=cmd_web)

    demo = sub.add_parser(
        "demo",
        help="the main job: a referee, the example bots as processes, Risk and Stratego "
        "round robins, leaderboards, then the results on the web",
    )
    demo.add_argument("--risk-games", type=positive_int, default=6, help="games per Risk pairing")
    demo.add_argument(
        "--stratego-games", type=positive_int, default=6, help="games per Stratego pairing"
    )
    demo.add_argument(
        "--workers", type=positive_int, default=2, help="processes for house-bot matches"
    )
    progress_options(demo)
    demo.add_argument(
        "--no-web",
        action="store_true",
        help="end after the leaderboards, instead of serving the results on the web",
    )
    demo.add_argument("--web-host", default="127.0.0.1", help="the web's address")
    demo.add_argument(
        "--web-port", type=port_number, default=8000, help="the web's port (0: a free one)"
    )
    db_option(demo)
    demo.set_defaults(func=cmd_demo)
