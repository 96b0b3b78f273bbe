"""The stdio protocol's lines, as written to a sandboxed bot's stdin: each is one
RefereeMessage in protobuf's JSON form and nothing more, and what they show each seat
passes the referee's own hidden-information audit (the same checks as the gRPC
messages to connected bots: hands, missions, capitals, unrevealed Stratego ranks,
events). Every seat is the Node.js stdio bot, each in its own sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena.engine.match import play_match
from arena.plugins import load_registry
from arena.sandbox import SandboxedPlayer
from arena.sandbox.stdio import bot_message, message_line, referee_message
from arena.sdk import MatchContext
from arena.v1 import arena_pb2 as pb
from tests.referee.test_referee import _counter, audit
from tests.sandbox.test_node_stdio import node_program


class Recorded(SandboxedPlayer):
    """A sandboxed player that keeps every line it writes to its bot."""

    def send(self, message: pb.RefereeMessage, timeout_s: float = 10.0) -> None:
        self.__dict__.setdefault("lines", []).append(message_line(message))
        super().send(message, timeout_s)


MATCHES = [
    ("risk", [], 3, {"turn-limit": "40"}),
    ("risk", ["missions"], 3, {"turn-limit": "40"}),
    ("risk", ["capital"], 3, {"turn-limit": "40"}),
    ("stratego", [], 2, {"turn-limit": "400"}),
    ("stratego", ["barrage"], 2, {}),
]


@pytest.mark.parametrize(("game", "variants", "seats", "options"), MATCHES)
def test_what_stdio_bots_are_sent_passes_the_hidden_information_audit(
    game: str, variants: list[str], seats: int, options: dict[str, str]
) -> None:
    registry = load_registry()
    names = [f"node-{seat}" for seat in range(seats)]
    players: list[Recorded] = []
    try:
        for seat in range(seats):
            context = MatchContext("m-audit", game, seat, names, variants, options)
            players.append(Recorded(node_program(), context, name=names[seat]))
        record = play_match(
            registry.game(game),
            players,
            23,
            options,
            registry.resolve_variants(game, variants),
            names=names,
        )
    finally:
        for player in players:
            player.close()
    assert record.result is not None
    assert all(c.strikes == 0 and not c.forfeit for c in record.conduct), record.conduct
    requests: dict[int | None, list[bytes]] = {}
    events: dict[int | None, list[dict[str, Any]]] = {}
    for seat, player in enumerate(players):
        lines = player.lines
        kinds = [referee_message(line).WhichOneof("kind") for line in lines]
        assert kinds[:2] == ["welcome", "match_started"] and kinds[-1] == "match_ended"
        requests[seat], events[seat] = [], []
        for line in lines:
            assert line.endswith(b"\n") and line.count(b"\n") == 1
            message = referee_message(line)  # strict: a field the proto has not fails
            # the line is the message's canonical JSON and holds nothing else
            assert message_line(message) == line
            assert json.loads(line) == json.loads(line.decode())
            if message.WhichOneof("kind") == "decision":
                requests[seat].append(message.SerializeToString())
            inner = getattr(message, message.WhichOneof("kind"))
            if message.WhichOneof("kind") in ("decision", "match_ended"):
                events[seat].extend(json.loads(text) for text in inner.events_json)
    stats = _counter()
    problems = audit(record, requests, events, stats)  # type: ignore[arg-type]
    assert problems == [], "\n".join(problems[:20])
    assert stats["events checked"] > 0


def test_a_bots_line_is_read_strictly() -> None:
    """What a bot writes is held to the referee's bounds: JSON of a BotMessage only."""
    from arena.referee.codec import CodecError

    reply = bot_message('{"action": {"match_id": "m", "request_id": "12", "action": {}}}')
    assert reply.action.request_id == 12
    for bad in ("not json", "[1]", '{"nope": 1}', '{"action": {"request_id": "x"}}', ""):
        with pytest.raises(CodecError):
            bot_message(bad)
    with pytest.raises(CodecError):
        bot_message('{"action": {"match_id": "' + "m" * 100_000 + '"}}')
