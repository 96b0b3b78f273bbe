"""The stdin/stdout protocol: one JSON line per message each way.

Each line is one ``arena.v1.RefereeMessage`` (host to bot) or ``arena.v1.BotMessage``
(bot to host) in protobuf's JSON mapping, with the .proto's field names
(``match_id``, ``request_id``; a 64-bit integer is a JSON string, as the mapping says).
The messages are the ones the referee sends a connected bot over gRPC, built by the
same code (``arena.referee.codec``), so a stdio bot sees exactly what a connected bot
sees. docs/protocol.md describes the conversation.
"""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format

from arena.referee.codec import CodecError, to_json_text, untrusted_json
from arena.v1 import arena_pb2 as pb


def message_line(message: Any) -> bytes:
    """One message as its line: compact JSON and a newline."""
    value = json_format.MessageToDict(message, preserving_proto_field_name=True)
    return to_json_text(value).encode() + b"\n"


def read_message(line: bytes | str, message_type: Any) -> Any:
    """The message of one line (a BotMessage from a bot, a RefereeMessage in a bot);
    CodecError, in a few words, if it is not one."""
    text = line.decode(errors="replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text:
        raise CodecError("an empty line")
    value = untrusted_json(text)
    if not isinstance(value, dict):
        raise CodecError("not a JSON object")
    message = message_type()
    try:
        json_format.ParseDict(value, message)
    except json_format.ParseError as exc:
        raise CodecError(f"not a {message_type.DESCRIPTOR.name}: {str(exc)[:160]}") from None
    return message


def bot_message(line: bytes | str) -> pb.BotMessage:
    return read_message(line, pb.BotMessage)  # type: ignore[no-any-return]


def referee_message(line: bytes | str) -> pb.RefereeMessage:
    return read_message(line, pb.RefereeMessage)  # type: ignore[no-any-return]
