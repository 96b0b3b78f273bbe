"""Play an SDK bot file over stdin/stdout: ``python -m arena.sandbox.runner bot.py``.

What a Python bot file (a subclass of :class:`arena.sdk.Bot`) runs as in a sandbox: it
says Hello, then reads one RefereeMessage a line and answers each DecisionRequest with
one ActionReply line, through the SDK's own handling of messages (so the bot is given
what it would be given connected over gRPC), until its match ends. Whatever the bot
prints goes to stderr: stdout carries the protocol only.
"""

from __future__ import annotations

import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        print("usage: python -m arena.sandbox.runner BOT.py", file=sys.stderr)
        return 2
    # the protocol keeps the real stdout; the bot's prints go to stderr
    out = os.fdopen(os.dup(1), "wb", buffering=0)
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    from arena.sandbox.stdio import message_line, referee_message
    from arena.sdk import _Session
    from arena.sdk.local import load
    from arena.v1 import arena_pb2 as pb

    try:
        bot = load(args[0])
    except ValueError as exc:
        print(f"arena.sandbox.runner: {exc}", file=sys.stderr)
        return 1
    out.write(message_line(pb.BotMessage(hello=pb.Hello(client="arena-sandbox-runner/0.1"))))
    session = _Session(bot.cls, "", 1, 0)
    for line in sys.stdin.buffer:
        message = referee_message(line)
        replies: list[pb.BotMessage] = []
        done = session._handle(None, message, 1, replies)
        for reply in replies:
            out.write(message_line(reply))
        if done:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
