"""The stdio protocol's lines, as written to a sandboxed bot's stdin: each is one
RefereeMessage in protobuf's JSON form and nothing more, and what they show each seat
passes the referee's own hidden-information audit (the same checks as the gRPC
messages to connected bots: hands, missions, capitals, unrevealed Stratego ranks,
events). Every seat is the Node.js stdio bot, each in its own sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf import json_format

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
            # the line is the message's canonical JSON and holds nothing else: what
            # protobuf's own json_format writes and reads (the fast path's check)
            assert message_line(message) == line
            value = json.loads(line)
            assert value == json_format.MessageToDict(message, preserving_proto_field_name=True)
            assert json_format.ParseDict(value, pb.RefereeMessage()) == message
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


BOT_LINES = [
    '{"hello": {"client": "x"}}',
    '{"ping": {}}',
    '{"hello": null, "ping": {}}',
    '{"ping": {"nonce": "18446744073709551615"}}',
    '{"action": {"match_id": "m", "request_id": "9007199254740993", "error": "boom"}}',
    '{"action": {"matchId": "m", "requestId": 5, "action": {"risk": {"type": "end_turn"}}}}',
    '{"action": {"match_id": "m", "request_id": "1", "action": {"risk": {"type": '
    '"reinforce", "placements": {"3": 2, "-1": 1}, "territory": 0}}}}',
    '{"action": {"match_id": "m", "request_id": "1", "action": {"stratego": {"type": '
    '"setup", "placement": {"0": "flag"}, "from": 0}}}}',
    '{"batch": {"messages": [{"ping": {}}, {"action": {"request_id": "2"}}]}}',
]
BAD_LINES = [
    '{"action": {"request_id": 1.5}}',
    '{"action": {"request_id": "-1"}}',
    '{"action": {"match_id": 7}}',
    '{"ping": {"nonce": "99999999999999999999"}}',
    '{"action": {"action": {"risk": {"territory": 2147483648}}}}',
    '{"action": {"action": {"risk": {"placements": {"x": 1}}}}}',
    '{"hello": {"batches": 1}}',
]


@pytest.mark.parametrize("line", BOT_LINES)
def test_a_bots_line_reads_as_json_format_reads_it(line: str) -> None:
    assert bot_message(line) == json_format.Parse(line, pb.BotMessage())


@pytest.mark.parametrize("line", BAD_LINES)
def test_a_line_json_format_refuses_is_refused(line: str) -> None:
    from arena.referee.codec import CodecError

    with pytest.raises(json_format.ParseError):
        json_format.Parse(line, pb.BotMessage())
    with pytest.raises(CodecError):
        bot_message(line)
