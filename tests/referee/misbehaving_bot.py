"""A bot process that misbehaves in a chosen way, speaking raw gRPC (no SDK).

    python misbehaving_bot.py --referee HOST:PORT --token T --mode MODE [--after N]
        [--away S] [--policy NAME] [--matches N] [--timeout S]

Modes:

* ``silent``: says Hello, then never answers a decision (every decision times out).
* ``illegal``: answers every decision with an action of the wrong phase
  (``{"type": "end_turn"}``; ``{"type": "teleport"}`` where ``end_turn`` would do).
* ``nonsense``: answers every decision with an empty Action (no game set).
* ``flaky``: plays legally (with the built-in bot ``--policy``); on the decision after
  the first ``--after`` ones it drops the connection without answering, stays away
  ``--away`` seconds, reconnects with the same token and plays on.
* ``vanish``: like ``flaky`` but the process exits instead and never comes back.
* ``slow``: plays legally but answers each of its first ``--answers`` decisions only
  after ``--delay`` seconds (past the deadline: into the time bank), then goes silent.
* ``play``: plays legally, nothing else.

Every message received is written to stdout as one JSON line,
``{"t": seconds, "conn": n, "b64": the serialized RefereeMessage}``; how each
connection ended as ``{"t", "conn", "status": CODE, "details": ...}``. The process
exits after ``--matches`` MatchEnded messages, or after ``--timeout`` seconds.

The module also holds the small "wire" helpers the tests share (conftest.py and
test_referee.py load this file by path): they read the legal options, match events and
observation extras in either wire form, google.protobuf.Struct or JSON text.
"""

from __future__ import annotations

import argparse
import base64
import json
import os
import queue
import sys
import time
from typing import Any

import grpc
from google.protobuf import json_format

from arena.engine.core import Decision
from arena.plugins import load_registry
from arena.referee.codec import action_to_proto, observation_from_proto
from arena.sdk import _territory_indices
from arena.v1 import arena_pb2 as pb

CONNECT = "/arena.v1.BotService/Connect"
START = time.monotonic()


# --- wire helpers (either wire form) ------------------------------------------------------


def _whole(value: Any) -> Any:
    """JSON from a google.protobuf.Struct, whole numbers back to ints."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, dict):
        return {k: _whole(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_whole(v) for v in value]
    return value


def _has(message: Any, name: str) -> bool:
    return name in message.DESCRIPTOR.fields_by_name


def decision_options(request: pb.DecisionRequest) -> dict[str, Any]:
    """A DecisionRequest's legal options as JSON."""
    if _has(request, "options_json"):
        return json.loads(request.options_json) if request.options_json else {}
    return _whole(json_format.MessageToDict(request.options))


def match_events(message: Any) -> tuple[str, list[dict[str, Any]]] | None:
    """(match id, events) if a RefereeMessage/SpectatorMessage carries match events:
    a MatchEvent (Struct), MatchEvents, or the events_json of a DecisionRequest or a
    MatchEnded (the events since the seat's last decision)."""
    kind = message.WhichOneof("kind")
    if kind == "events":
        return message.events.match_id, [json.loads(t) for t in message.events.events_json]
    if kind == "event":
        return message.event.match_id, [_whole(json_format.MessageToDict(message.event.event))]
    if kind in ("decision", "match_ended"):
        inner = getattr(message, kind)
        if _has(inner, "events_json"):
            return inner.match_id, [json.loads(t) for t in inner.events_json]
    return None


def observation_extra(observation: Any) -> dict[str, Any]:
    """What a Risk/Stratego observation carries beyond its typed fields."""
    if _has(observation, "extra_json"):
        return json.loads(observation.extra_json) if observation.extra_json else {}
    if observation.HasField("extra"):
        return _whole(json_format.MessageToDict(observation.extra))
    return {}


def set_observation_extra(observation: Any, extra: dict[str, Any]) -> None:
    if _has(observation, "extra_json"):
        observation.extra_json = json.dumps(extra)
    else:
        observation.extra.update(extra)


# --- the bot -------------------------------------------------------------------------------


def emit(record: dict[str, Any]) -> None:
    record["t"] = round(time.monotonic() - START, 4)
    record["wall"] = time.time()
    sys.stdout.write(json.dumps(record) + "\n")
    sys.stdout.flush()


class Player:
    """Legal play with a built-in bot, one instance per (match, seat)."""

    def __init__(self, policy: str) -> None:
        self.registry = load_registry()
        self.policy = policy
        self.bots: dict[tuple[str, int], Any] = {}
        self.games: dict[str, str] = {}

    def started(self, m: pb.MatchStarted) -> None:
        self.games[m.match_id] = m.game
        key = (m.match_id, m.seat)
        if key not in self.bots:
            spec = self.registry.bot(m.game, self.policy)
            self.bots[key] = spec.factory(m.seat, 1234 + m.seat)

    def action(self, request: pb.DecisionRequest) -> pb.Action:
        game = self.games[request.match_id]
        bot = self.bots[(request.match_id, request.seat)]
        observation = observation_from_proto(request.observation)
        options = decision_options(request)
        decision = Decision(request.seat, request.kind, lambda: options)
        action = bot.decide(observation, decision)
        return action_to_proto(game, _territory_indices(game, action, observation))


def bad_action(mode: str, request: pb.DecisionRequest, game: str) -> pb.Action:
    if mode == "nonsense":
        return pb.Action()
    kind = "teleport" if request.kind == "fortify" else "end_turn"
    if game == "stratego":
        return pb.Action(stratego=pb.StrategoAction(type=kind))
    return pb.Action(risk=pb.RiskAction(type=kind))


def session(args: argparse.Namespace, conn: int, player: Player, state: dict[str, int]) -> str:
    """One connection. Returns "done", "drop" (come back later) or "retry"."""
    outbox: queue.Queue[pb.BotMessage | None] = queue.Queue()

    def requests():
        yield pb.BotMessage(hello=pb.Hello(token=args.token, client=f"misbehaving/{args.mode}"))
        while (message := outbox.get()) is not None:
            yield message

    welcomed = False
    left = max(1.0, args.timeout - (time.monotonic() - START))
    with grpc.insecure_channel(args.referee) as channel:
        connect = channel.stream_stream(
            CONNECT,
            request_serializer=pb.BotMessage.SerializeToString,
            response_deserializer=None,  # keep the bytes exactly as they came
        )
        call = connect(requests(), timeout=left)
        try:
            for raw in call:
                emit({"conn": conn, "b64": base64.b64encode(raw).decode()})
                message = pb.RefereeMessage.FromString(raw)
                kind = message.WhichOneof("kind")
                if kind == "welcome":
                    welcomed = True
                elif kind == "match_started":
                    player.started(message.match_started)
                elif kind == "match_ended":
                    state["ended"] += 1
                    if state["ended"] >= args.matches:
                        outbox.put(None)
                        call.cancel()
                        return "done"
                elif kind == "decision":
                    request = message.decision
                    if args.mode == "silent":
                        continue
                    if args.mode == "slow":
                        if state["answered"] >= args.answers:
                            continue
                        time.sleep(args.delay)
                    if args.mode in ("flaky", "vanish") and state["answered"] == args.after:
                        state["answered"] += 1  # drop only once
                        if args.mode == "vanish":
                            emit({"conn": conn, "note": "vanishing"})
                            os._exit(0)  # no goodbye: the socket just goes away
                        emit({"conn": conn, "note": "dropping"})
                        outbox.put(None)
                        call.cancel()
                        return "drop"
                    if args.mode in ("illegal", "nonsense"):
                        game = player.games.get(request.match_id, "risk")
                        action = bad_action(args.mode, request, game)
                    else:
                        action = player.action(request)
                    state["answered"] += 1
                    outbox.put(
                        pb.BotMessage(
                            action=pb.ActionReply(
                                match_id=request.match_id,
                                request_id=request.request_id,
                                action=action,
                            )
                        )
                    )
            emit({"conn": conn, "status": "OK", "details": ""})
        except grpc.RpcError as exc:
            emit({"conn": conn, "status": exc.code().name, "details": exc.details() or ""})
            if exc.code() == grpc.StatusCode.UNAVAILABLE and not welcomed:
                return "retry"  # the referee could not be reached: try again
        finally:
            outbox.put(None)
    return "done"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--referee", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument(
        "--mode",
        required=True,
        choices=("silent", "illegal", "nonsense", "flaky", "vanish", "slow", "play"),
    )
    parser.add_argument("--after", type=int, default=5, help="decisions before dropping")
    parser.add_argument("--away", type=float, default=0.5, help="seconds away (flaky)")
    parser.add_argument("--delay", type=float, default=0.0, help="seconds per answer (slow)")
    parser.add_argument("--answers", type=int, default=2, help="slow answers, then silence")
    parser.add_argument("--policy", default="random", help="a built-in bot for legal play")
    parser.add_argument("--matches", type=int, default=1)
    parser.add_argument("--timeout", type=float, default=60.0)
    args = parser.parse_args()
    player = Player(args.policy)
    state = {"answered": 0, "ended": 0}
    conn = 0
    while time.monotonic() - START < args.timeout:
        conn += 1
        how = session(args, conn, player, state)
        if how == "done":
            break
        time.sleep(args.away if how == "drop" else 0.2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
