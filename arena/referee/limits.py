"""Every bound the referee puts on what others send it, in one place.

A bot's answers, an organiser's requests, a spectator's stream, a connection's streams
and messages: each is checked against a bound here before any work is done on it, and a
refusal says what was wrong and which bound it passed, never what was sent (an error
that echoes a megabyte of input is itself an attack). docs/protocol.md lists them all.
"""

from __future__ import annotations

import json
import math
import re
import time
from typing import Any

# --- a bot's answer ------------------------------------------------------------------------

#: characters of an action sent as JSON text (``Action.other_json``)
MAX_ACTION_JSON = 64 << 10
#: how deep arrays and objects may nest in it
MAX_JSON_DEPTH = 32
#: items of a list or map in a typed action: Risk ``cards`` and ``placements``, a
#: Stratego ``placement``
MAX_ACTION_ITEMS = 256
#: characters of a string in a typed action (``type``, ``piece``, a placed piece's name)
MAX_ACTION_TEXT = 64
#: characters of a rejection's reason (the rules' text; input never goes into it whole)
MAX_REASON = 200
INT64 = (-(1 << 63), (1 << 63) - 1)

_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPENERS = str.maketrans("", "", "".join(chr(c) for c in range(128) if chr(c) not in "[]{}"))


def json_problem(text: str) -> str | None:
    """Why ``text`` may not be parsed as an action (too long, nested too deep), or None.

    The depth is found without recursion, before any parser sees the text: the brackets
    outside strings, counted. A parser that recurses (the standard library's) would
    otherwise raise RecursionError on a deep enough nesting."""
    if len(text) > MAX_ACTION_JSON:
        return f"an action's JSON text is over {MAX_ACTION_JSON} characters"
    if text.count("[") + text.count("{") <= MAX_JSON_DEPTH:
        return None  # every real action: too few brackets to nest too deep
    depth = deepest = 0
    for bracket in _STRINGS.sub("", text).translate(_OPENERS):
        if bracket in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
        else:
            depth -= 1
    if deepest > MAX_JSON_DEPTH:
        return f"an action's JSON nests deeper than {MAX_JSON_DEPTH}"
    return None


def value_problem(value: Any) -> str | None:
    """Why a parsed JSON action may not go to the rules, or None: every integer within 64
    bits, every number finite (JSON has no NaN or infinity; Python's parser takes them,
    and 1e999). Walked without recursion; its size is bounded by ``json_problem``."""
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is int:
            if not INT64[0] <= item <= INT64[1]:
                return "an integer beyond 64 bits in the action"
        elif kind is float and not math.isfinite(item):
            return "a number that is not finite (NaN or an infinity) in the action"
    return None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_untrusted_json(text: str) -> Any:
    """``json.loads`` that refuses NaN and infinities (the caller has checked the size and
    the depth with ``json_problem``)."""
    return json.loads(text, parse_constant=_no_constant)


def short(text: str, limit: int = MAX_REASON) -> str:
    """``text`` safe to send: at most ``limit`` characters, and valid UTF-8 (a lone
    surrogate, which JSON escapes can make, would fail the message's serialization)."""
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    if not text.isascii():
        text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text


def peer_host(peer: str) -> str:
    """The address part of a gRPC peer (``ipv4:1.2.3.4:5678``, ``ipv6:[::1]:5678``,
    ``ipv6:%5B::1%5D:5678``): what the per-address limits count by."""
    kind, _, rest = peer.partition(":")
    if kind not in ("ipv4", "ipv6"):
        return kind or peer
    rest = rest.replace("%5B", "[").replace("%5D", "]")
    host = rest.rsplit(":", 1)[0].strip("[]")
    if host.startswith("::ffff:") and "." in host:  # an IPv4 peer of an IPv6 socket
        host = host[7:]
    return host


# --- rates ----------------------------------------------------------------------------


class TokenBucket:
    """At most ``rate`` events a second on average, ``burst`` at once.

    The bucket holds up to ``burst`` tokens and refills continuously at ``rate`` a
    second; each event takes one. An evenly paced sender at any rate below ``rate``
    never runs dry, whatever its jitter (a fixed one-second window counts a burst that
    straddles its edge twice, and cut a bot paced at 190 a second)."""

    __slots__ = ("burst", "rate", "stamp", "tokens")

    def __init__(self, rate: float, burst: float, now: float | None = None) -> None:
        self.rate = rate
        self.burst = burst
        self.tokens = burst
        self.stamp = time.monotonic() if now is None else now

    def take(self, now: float | None = None) -> bool:
        """Take one token; False if there is none (the event is over the rate)."""
        if now is None:
            now = time.monotonic()
        tokens = self.tokens + (now - self.stamp) * self.rate
        self.stamp = now
        if tokens > self.burst:
            tokens = self.burst
        if tokens < 1.0:
            self.tokens = tokens
            return False
        self.tokens = tokens - 1.0
        return True


# --- organisers' and spectators' requests ------------------------------------------------

#: characters of any string field of a request (a match or tournament id, a name, a key)
MAX_REQUEST_TEXT = 256
#: items of any list or map field of a request (variants, options, bots, games)
MAX_REQUEST_ITEMS = 64
#: characters of an option's name and of its value
MAX_OPTION_NAME = 64
MAX_OPTION_VALUE = 256
#: bots of one tournament, and games each group of them plays
MAX_TOURNAMENT_BOTS = 256
MAX_GAMES_PER_PAIRING = 1000
#: matches one tournament's schedule may hold
MAX_TOURNAMENT_MATCHES = 100_000
#: seats of a match or of a tournament's tables
MAX_SEATS = 16


def request_problem(message: Any) -> str | None:
    """Why a request is refused before any work (a field over its bound), or None.

    Every set field of the message and of the messages in it: strings at most
    MAX_REQUEST_TEXT characters, lists and maps at most MAX_REQUEST_ITEMS items (a
    tournament's ``bots`` MAX_TOURNAMENT_BOTS), options' names and values at most
    MAX_OPTION_NAME and MAX_OPTION_VALUE. Only the field's name is said, never its
    value."""
    stack = [message]
    while stack:
        current = stack.pop()
        for field, value in current.ListFields():
            name = field.name
            if _repeated(field):
                most = MAX_TOURNAMENT_BOTS if name == "bots" else MAX_REQUEST_ITEMS
                if len(value) > most:
                    return f"{name}: more than {most} items"
                entry = field.message_type
                if entry is not None and entry.GetOptions().map_entry:
                    for key, item in value.items():
                        if isinstance(key, str) and len(key) > MAX_OPTION_NAME:
                            return f"{name}: a key over {MAX_OPTION_NAME} characters"
                        if isinstance(item, str) and len(item) > MAX_OPTION_VALUE:
                            return f"{name}: a value over {MAX_OPTION_VALUE} characters"
                elif field.type == field.TYPE_STRING:
                    if any(len(item) > MAX_REQUEST_TEXT for item in value):
                        return f"{name}: an item over {MAX_REQUEST_TEXT} characters"
                elif field.type == field.TYPE_MESSAGE:
                    stack.extend(value)
            elif field.type == field.TYPE_STRING:
                if len(value) > MAX_REQUEST_TEXT:
                    return f"{name}: over {MAX_REQUEST_TEXT} characters"
            elif field.type == field.TYPE_MESSAGE:
                stack.append(value)
    return None


def _repeated(field: Any) -> bool:
    """A list or map field (protobuf 6+ says ``is_repeated``; older ones a label)."""
    repeated = getattr(field, "is_repeated", None)
    return field.label == field.LABEL_REPEATED if repeated is None else bool(repeated)


def tournament_problem(bots: int, seats: int, games_per_pairing: int) -> str | None:
    """Why a tournament of this size is refused before its schedule is made, or None: its
    schedule holds at most ``min(C(bots, seats), max groups) * games_per_pairing``
    matches (a tournament of 2^32 - 1 games a pairing grew the referee to 2.9 GB)."""
    from arena.tournament.schedule import DEFAULT_MAX_GROUPS

    if seats > MAX_SEATS:
        return f"seats: at most {MAX_SEATS}"
    if games_per_pairing > MAX_GAMES_PER_PAIRING:
        return f"games_per_pairing: at most {MAX_GAMES_PER_PAIRING}"
    groups = min(math.comb(bots, seats), DEFAULT_MAX_GROUPS) if seats >= 2 else bots
    if groups * games_per_pairing > MAX_TOURNAMENT_MATCHES:
        return (
            f"the schedule would hold {groups * games_per_pairing} matches: "
            f"at most {MAX_TOURNAMENT_MATCHES}"
        )
    return None
