"""Play an SDK bot file connected to a referee over gRPC, from inside a sandbox:
``python -m arena.sandbox.connect bot.py --referee unix:/run/arena/referee.sock --token T``.

The sandbox has no network: the referee's Unix socket (``arena referee --unix PATH``)
is bound into it, and the bot plays as a connected bot does (the referee's own time
controls, strikes and forfeits). What benchmarks/sandbox.py measures against a bot
connected over TCP, and the stdio protocol.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="arena.sandbox.connect")
    parser.add_argument("file")
    parser.add_argument("--referee", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--max-matches", type=int, default=16)
    args = parser.parse_args(argv)
    from arena.sdk import run_bot
    from arena.sdk.local import _bot_class

    path = os.path.abspath(args.file)
    with open(path, "rb") as file:
        digest = hashlib.sha256(file.read()).hexdigest()
    run_bot(_bot_class(path, digest), args.referee, args.token, max_matches=args.max_matches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
