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

from google.protobuf import descriptor, json_format

from arena.referee.codec import CodecError, from_json_text, to_json_text, untrusted_json
from arena.v1 import arena_pb2 as pb


def message_line(message: Any) -> bytes:
    """One message as its line: compact JSON and a newline."""
    return to_json_text(message_dict(message)).encode() + b"\n"


# --- protobuf's JSON mapping, fast ---------------------------------------------------
#
# json_format walks a message value by value in Python: 150 us to write a Risk decision
# and 650 us to read it, most of a stdio decision's cost. The messages of this protocol
# hold only what the mapping leaves as it is (strings, 32-bit integers, booleans,
# messages, repeated fields, maps), and 64-bit integers (strings in JSON): those are
# converted here a field at a time, and anything else (floats, bytes, enums, the
# well-known types) goes through json_format. tests/sandbox/test_stdio_protocol.py
# checks that both give the same, message for message.

_FD = descriptor.FieldDescriptor
_PLAIN = {_FD.TYPE_STRING, _FD.TYPE_INT32, _FD.TYPE_UINT32, _FD.TYPE_SINT32, _FD.TYPE_BOOL}
_WIDE = {_FD.TYPE_INT64, _FD.TYPE_UINT64, _FD.TYPE_SINT64, _FD.TYPE_FIXED64}


def _repeated(field: Any) -> bool:
    flag = getattr(field, "is_repeated", None)  # protobuf 6+; ``label`` before
    return bool(flag) if flag is not None else field.label == _FD.LABEL_REPEATED


class _Unusual(Exception):
    """A field the fast path leaves to json_format."""


def _fast_type(message_type: Any) -> bool:
    return not message_type.full_name.startswith("google.protobuf.")


def message_dict(message: Any) -> dict[str, Any]:
    """``json_format.MessageToDict(message, preserving_proto_field_name=True)``."""
    try:
        return _to_dict(message)
    except _Unusual:
        return json_format.MessageToDict(message, preserving_proto_field_name=True)


def _to_dict(message: Any) -> dict[str, Any]:
    if not _fast_type(message.DESCRIPTOR):
        raise _Unusual
    out: dict[str, Any] = {}
    for field, value in message.ListFields():
        out[field.name] = _value_out(field, value)
    return out


def _value_out(field: Any, value: Any) -> Any:
    if field.message_type is not None and field.message_type.GetOptions().map_entry:
        value_field = field.message_type.fields_by_name["value"]
        return {str(k): _scalar_out(value_field, v) for k, v in value.items()}
    if _repeated(field):
        return [_scalar_out(field, v) for v in value]
    return _scalar_out(field, value)


def _scalar_out(field: Any, value: Any) -> Any:
    kind = field.type
    if kind in _PLAIN:
        return value
    if kind in _WIDE:
        return str(value)
    if kind == _FD.TYPE_MESSAGE:
        return _to_dict(value)
    raise _Unusual


def parse_dict(value: dict[str, Any], message: Any) -> Any:
    """``json_format.ParseDict(value, message)``; json_format's ParseError for what does
    not fit (the fast path gives up on anything unexpected and lets it decide)."""
    try:
        _fill(value, message)
    except (_Unusual, TypeError, ValueError, KeyError, AttributeError):
        message.Clear()
        json_format.ParseDict(value, message)
    return message


def _fill(value: Any, message: Any) -> None:
    descriptor_ = message.DESCRIPTOR
    if not isinstance(value, dict) or not _fast_type(descriptor_):
        raise _Unusual
    fields = descriptor_.fields_by_name
    for name, item in value.items():
        field = fields.get(name)
        if field is None or item is None:
            raise _Unusual  # camelCase names, unknown fields, nulls: json_format's say
        if field.message_type is not None and field.message_type.GetOptions().map_entry:
            key_field = field.message_type.fields_by_name["key"]
            value_field = field.message_type.fields_by_name["value"]
            if value_field.type == _FD.TYPE_MESSAGE or key_field.type == _FD.TYPE_BOOL:
                raise _Unusual
            target = getattr(message, name)
            for key, entry in item.items():
                k = key if key_field.type == _FD.TYPE_STRING else _integer(key)
                target[k] = _scalar_in(value_field, entry)
        elif _repeated(field):
            if not isinstance(item, list):
                raise _Unusual
            if field.type == _FD.TYPE_MESSAGE:
                target = getattr(message, name)
                for entry in item:
                    _fill(entry, target.add())
            else:
                getattr(message, name).extend(_scalar_in(field, v) for v in item)
        elif field.type == _FD.TYPE_MESSAGE:
            inner = getattr(message, name)
            inner.SetInParent()  # present, even empty (a oneof's ``{"ping": {}}``)
            _fill(item, inner)
        else:
            setattr(message, name, _scalar_in(field, item))


def _integer(text: str) -> int:
    if not text.lstrip("-").isdigit():
        raise _Unusual
    return int(text)


def _scalar_in(field: Any, value: Any) -> Any:
    kind = field.type
    if kind == _FD.TYPE_STRING:
        if not isinstance(value, str):
            raise _Unusual
        return value
    if kind == _FD.TYPE_BOOL:
        if not isinstance(value, bool):
            raise _Unusual
        return value
    if kind in _PLAIN or kind in _WIDE:
        if isinstance(value, str) and kind in _WIDE:
            return _integer(value)
        if type(value) is not int:
            raise _Unusual  # floats with no fraction, booleans: json_format decides
        return value
    raise _Unusual


def read_message(line: bytes | str, message_type: Any, untrusted: bool = True) -> Any:
    """The message of one line (a BotMessage from a bot, a RefereeMessage in a bot);
    CodecError, in a few words, if it is not one. ``untrusted``: a bot's line, held to
    the referee's bounds on what a bot sends (its size, depth and numbers)."""
    text = line.decode(errors="replace") if isinstance(line, bytes) else line
    text = text.strip()
    if not text:
        raise CodecError("an empty line")
    value = untrusted_json(text) if untrusted else from_json_text(text)
    if not isinstance(value, dict):
        raise CodecError("not a JSON object")
    message = message_type()
    try:
        parse_dict(value, message)
    except json_format.ParseError as exc:
        raise CodecError(f"not a {message_type.DESCRIPTOR.name}: {str(exc)[:160]}") from None
    return message


def bot_message(line: bytes | str) -> pb.BotMessage:
    return read_message(line, pb.BotMessage)  # type: ignore[no-any-return]


def referee_message(line: bytes | str) -> pb.RefereeMessage:
    return read_message(line, pb.RefereeMessage, untrusted=False)  # type: ignore[no-any-return]
