"""Between the engine's JSON forms and the wire's typed messages.

The referee turns a state's observation (a dict) into ``arena.v1.Observation`` and a
bot's ``arena.v1.Action`` into the action dict ``State.apply`` takes. The Python SDK
does the reverse, so a bot gets exactly the dict an in-process bot gets: the same bot
code runs in-process and over the network. A game without typed messages travels as
a ``google.protobuf.Struct``.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

from arena.referee import limits
from arena.v1 import arena_pb2 as pb

try:  # a dependency of the package; the standard library still works without it
    import orjson
except ImportError:  # pragma: no cover
    orjson = None  # type: ignore[assignment]

# Fields copied as they are between the observation dict and the typed message.
_RISK_PLAIN = (
    "seat",
    "num_players",
    "num_owners",
    "passive",
    "map",
    "phase",
    "current_player",
    "turn",
    "round",
    "owner",
    "armies",
    "alive",
    "eliminated",
    "hand",
    "hand_sizes",
    "discard",
    "draw_pile_size",
    "sets_traded",
    "setup_armies_left",
    "reinforcements_left",
    "conquered_this_turn",
)
_STRATEGO_PLAIN = ("seat", "rules", "phase", "current_player", "ply", "lakes", "rescues_left")
_SQUARE_FIELDS = ("owner", "moved", "moved_far", "revealed")
_RISK_TYPED = {
    "game",
    *_RISK_PLAIN,
    "move_in",
    "attack",
    "mission",
    "colours",
    "headquarters",
    "headquarters_needed",
}
_STRATEGO_TYPED = {"game", *_STRATEGO_PLAIN, "board", "captured", "history"}


class CodecError(ValueError):
    """A message that does not fit its game's form (malformed, or the wrong game)."""


# --- JSON text --------------------------------------------------------------------------


_json_text = json.JSONEncoder(separators=(",", ":")).encode
# Digits to "0", anything else to " ": 19 zeros in a row may be an integer beyond 64 bits.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_LONG_NUMBER = b"0" * 19


def to_json_text(value: Any) -> str:
    """Compact JSON text (what options, events and third-party messages travel as).

    The text of ``json.dumps(value, separators=(",", ":"))``, made by orjson (about ten
    times faster) where that gives the same text: plain values in ASCII text. Non-ASCII
    text (which the standard library escapes) and what orjson refuses (integers beyond
    64 bits, say) go through the standard library. Left: a float with a negative
    exponent is spelled ``1e-7``, not ``1e-07`` (the same number), and a NaN or an
    infinity, which JSON has not, becomes ``null``. The built-in games send no floats.
    """
    if orjson is not None:
        try:
            data = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS)
        except TypeError:
            return _json_text(value)
        if data.isascii():
            return data.decode()
    return _json_text(value)


def from_json_text(text: str) -> Any:
    """The value of JSON text, as ``json.loads`` reads it (orjson where that is the same:
    orjson reads an integer of more than 64 bits as a float)."""
    if orjson is not None and _no_long_numbers(text):
        try:
            return orjson.loads(text)
        except orjson.JSONDecodeError:
            pass  # the standard library decides (it takes a little more: NaN, say)
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not valid JSON: {exc}") from None
    except RecursionError:  # nested deeper than the parser recurses
        raise CodecError("not valid JSON: nested too deep") from None


def untrusted_json(text: str) -> Any:
    """The value of JSON text a bot sent, within the bounds of ``limits``: its size and
    depth are checked before a parser sees it, and what it holds after (integers within
    64 bits, finite numbers); CodecError says which bound it passed, never what it was."""
    problem = limits.json_problem(text)
    if problem is not None:
        raise CodecError(problem)
    value: Any = _NOTHING
    if orjson is not None and _no_long_numbers(text):
        # what orjson refuses, the standard library decides, and says why
        with contextlib.suppress(orjson.JSONDecodeError):
            value = orjson.loads(text)
    if value is _NOTHING:
        try:
            value = limits.parse_untrusted_json(text)
        except ValueError as exc:
            raise CodecError(f"not valid JSON: {limits.short(str(exc), 120)}") from None
    problem = limits.value_problem(value)
    if problem is not None:
        raise CodecError(problem)
    return value


_NOTHING = object()


def _no_long_numbers(text: str) -> bool:
    """No run of 19 digits: no integer that orjson would read as a float (fast: C loops)."""
    return _LONG_NUMBER not in text.encode(errors="surrogatepass").translate(_DIGITS)


# --- observations ------------------------------------------------------------------------


def observation_to_proto(game: str, obs: dict[str, Any]) -> pb.Observation:
    message = pb.Observation()
    fill_observation(message, game, obs)
    return message


def fill_observation(message: pb.Observation, game: str, obs: dict[str, Any]) -> None:
    """Write ``obs`` into an empty ``message`` in place: a decision request builds its
    observation where it lies instead of copying a separately built one."""
    if game == "risk":
        message.risk.SetInParent()
        _risk_observation(message.risk, obs)
    elif game == "stratego":
        message.stratego.SetInParent()
        _stratego_observation(message.stratego, obs)
    else:
        message.other_json = to_json_text(obs)


def observation_from_proto(message: pb.Observation) -> dict[str, Any]:
    which = message.WhichOneof("game")
    if which == "risk":
        return _risk_observation_dict(message.risk)
    if which == "stratego":
        return _stratego_observation_dict(message.stratego)
    if which == "other_json":
        return from_json_text(message.other_json)
    raise CodecError("an observation with no game")


def _repeated(message_type: Any, names: tuple[str, ...]) -> tuple[set[str], set[str]]:
    """Which of ``names`` are repeated fields of ``message_type``, and which are not."""
    empty = message_type()
    many = {k for k in names if not isinstance(getattr(empty, k), int | str | bool)}
    return many, set(names) - many


_RISK_MANY, _RISK_ONE = _repeated(pb.RiskObservation, _RISK_PLAIN)
_STRATEGO_MANY, _STRATEGO_ONE = _repeated(pb.StrategoObservation, _STRATEGO_PLAIN)


def _put_plain(msg: Any, obs: dict[str, Any], many: set[str], one: set[str]) -> None:
    """Copy plain fields field by field into ``msg`` (cheaper than keyword arguments,
    which build a message that must then be copied into its place)."""
    for key in many:
        if (value := obs[key]) is not None:  # None leaves a field unset, as keywords do
            getattr(msg, key).extend(value)
    for key in one:
        if (value := obs[key]) is not None:
            setattr(msg, key, value)


def _risk_observation(msg: pb.RiskObservation, obs: dict[str, Any]) -> None:
    _put_plain(msg, obs, _RISK_MANY, _RISK_ONE)
    if "move_in" in obs:
        msg.move_in.CopyFrom(pb.RiskMoveIn(**obs["move_in"]))
    if "attack" in obs:
        msg.attack.CopyFrom(pb.RiskAttack(**obs["attack"]))
    if "mission" in obs:
        msg.mission.CopyFrom(pb.RiskMission(**obs["mission"]))
    if "colours" in obs:
        msg.colours.extend(obs["colours"])
    if "headquarters" in obs:
        msg.headquarters.extend(-1 if t is None else t for t in obs["headquarters"])
        msg.headquarters_needed = obs["headquarters_needed"]
    _put_extra(msg, obs, _RISK_TYPED)


def _put_extra(msg: Any, obs: dict[str, Any], typed: set[str]) -> None:
    if not typed.issuperset(obs):
        extra = {k: v for k, v in obs.items() if k not in typed}
        if extra:
            msg.extra_json = to_json_text(extra)


def _get_extra(msg: Any, obs: dict[str, Any]) -> dict[str, Any]:
    if msg.extra_json:
        obs.update(from_json_text(msg.extra_json))
    return obs


def _risk_observation_dict(msg: pb.RiskObservation) -> dict[str, Any]:
    obs: dict[str, Any] = {"game": "risk"}
    for key in _RISK_PLAIN:
        value = getattr(msg, key)
        obs[key] = list(value) if not isinstance(value, int | str | bool) else value
    if msg.HasField("move_in"):
        obs["move_in"] = {k: getattr(msg.move_in, k) for k in ("from", "to", "min", "max")}
    if msg.HasField("attack"):
        obs["attack"] = {
            k: getattr(msg.attack, k) for k in ("attacker", "from", "to", "dice", "rolls")
        }
    if msg.HasField("mission"):
        m = msg.mission
        obs["mission"] = {
            "id": m.id,
            "text": m.text,
            "continents": tuple(m.continents),
            "third_continent": m.third_continent,
            "occupy": m.occupy,
            "min_armies": m.min_armies,
            "destroy": m.destroy,
        }
    if msg.colours:
        obs["colours"] = tuple(msg.colours)
    if msg.headquarters:
        obs["headquarters"] = [None if t < 0 else t for t in msg.headquarters]
        obs["headquarters_needed"] = msg.headquarters_needed
    return _get_extra(msg, obs)


def _stratego_observation(msg: pb.StrategoObservation, obs: dict[str, Any]) -> None:
    _put_plain(msg, obs, _STRATEGO_MANY, _STRATEGO_ONE)
    for square in obs["board"]:
        if square is None:
            msg.board.add()
        else:
            msg.board.add(
                occupied=True, rank=square["rank"] or "", **{k: square[k] for k in _SQUARE_FIELDS}
            )
    for lost in obs["captured"]:
        msg.captured.add(ranks=lost)
    for entry in obs["history"]:
        msg.history.add(**entry)
    _put_extra(msg, obs, _STRATEGO_TYPED)


def _stratego_observation_dict(msg: pb.StrategoObservation) -> dict[str, Any]:
    board: list[dict[str, Any] | None] = []
    for square in msg.board:
        if not square.occupied:
            board.append(None)
        else:
            board.append(
                {
                    "owner": square.owner,
                    "rank": square.rank or None,
                    "moved": square.moved,
                    "moved_far": square.moved_far,
                    "revealed": square.revealed,
                }
            )
    history = []
    for move in msg.history:
        if move.rescue:
            history.append({"p": move.p, "rescue": move.rescue, "square": move.square})
            continue
        entry: dict[str, Any] = {"p": move.p, "from": getattr(move, "from"), "to": move.to}
        if move.attacker:
            entry.update(attacker=move.attacker, defender=move.defender, result=move.result)
        history.append(entry)
    obs = {
        "game": "stratego",
        "seat": msg.seat,
        "rules": msg.rules,
        "phase": msg.phase,
        "current_player": msg.current_player,
        "ply": msg.ply,
        "board": board,
        "lakes": list(msg.lakes),
        "captured": [list(lost.ranks) for lost in msg.captured],
        "history": history,
        "rescues_left": list(msg.rescues_left),
    }
    return _get_extra(msg, obs)


# --- actions -----------------------------------------------------------------------------

_RISK_INTS = ("territory", "bonus", "from", "to", "dice", "until", "neutral")


def action_to_proto(game: str, action: dict[str, Any]) -> pb.Action:
    """A bot's action dict as a message. Territories/squares must be indices here."""
    message = pb.Action()
    fill_action(message, game, action)
    return message


def fill_action(message: pb.Action, game: str, action: dict[str, Any]) -> None:
    """Write ``action`` into an empty ``message`` in place (see ``action_to_proto``)."""
    try:
        _fill_action(message, game, action)
    except (TypeError, ValueError, OverflowError) as exc:
        raise CodecError(f"cannot send {action!r} as a {game} action: {exc}") from None


def _fill_action(message: pb.Action, game: str, action: dict[str, Any]) -> None:
    if game == "risk":
        msg = message.risk
        msg.SetInParent()
        _risk_action(msg, action)
    elif game == "stratego":
        msg = message.stratego
        msg.SetInParent()
        _stratego_action(msg, action)
    else:
        message.other_json = to_json_text(action)


def action_from_proto(game: str, message: pb.Action) -> dict[str, Any]:
    """The action dict ``State.apply`` takes, from a bot's message, within the bounds of
    ``arena.referee.limits``. Whatever is wrong with it is a CodecError with a short
    reason that does not echo it (the referee turns it into a refusal, never an abort).

    In a Risk or Stratego match an ``other_json`` action is read as its typed message
    would be: the same fields and types, the same bounds."""
    try:
        return _action_from_proto(game, message)
    except CodecError:
        raise
    except Exception as exc:  # nothing a bot sends may escape as anything else
        raise CodecError(f"the action could not be read ({type(exc).__name__})") from None


def _action_from_proto(game: str, message: pb.Action) -> dict[str, Any]:
    which = message.WhichOneof("game")
    if which == "other_json":
        action = untrusted_json(message.other_json)
        if not isinstance(action, dict):
            raise CodecError("an action must be a JSON object")
        if game not in ("risk", "stratego"):
            return action
        typed = pb.Action()
        try:
            _fill_action(typed, game, action)
        except Exception as exc:
            raise CodecError(
                f"an other_json action of a {game} match must fit its typed message: a "
                f"field of the wrong type or out of range ({type(exc).__name__})"
            ) from None
        message, which = typed, game
    if which is None:
        raise CodecError(f"an empty action in a {game} match: set the {game} field")
    if which != game or game not in ("risk", "stratego"):
        raise CodecError(f"a {which} action in a {game} match")
    if which == "risk":
        _check_risk_action(message.risk)
        return _risk_action_dict(message.risk)
    _check_stratego_action(message.stratego)
    return _stratego_action_dict(message.stratego)


def _check_text(what: str, text: str) -> None:
    if len(text) > limits.MAX_ACTION_TEXT:
        raise CodecError(f"{what}: over {limits.MAX_ACTION_TEXT} characters")


def _check_items(what: str, items: Any) -> None:
    if len(items) > limits.MAX_ACTION_ITEMS:
        raise CodecError(f"{what}: more than {limits.MAX_ACTION_ITEMS} items")


def _check_risk_action(msg: pb.RiskAction) -> None:
    _check_text("type", msg.type)
    _check_items("cards", msg.cards)
    _check_items("placements", msg.placements)


def _check_stratego_action(msg: pb.StrategoAction) -> None:
    _check_text("type", msg.type)
    _check_text("piece", msg.piece)
    _check_items("placement", msg.placement)
    for name in msg.placement.values():
        _check_text("a placed piece's name", name)


def _risk_action(msg: pb.RiskAction, action: dict[str, Any]) -> None:
    msg.type = str(action.get("type", ""))
    for key in _RISK_INTS:
        if action.get(key) is not None:
            setattr(msg, key, int(action[key]))
    if action.get("cards") is not None:
        msg.cards.extend(int(c) for c in action["cards"])
    armies = action.get("armies")
    if isinstance(armies, dict):
        for t, n in armies.items():
            msg.placements[int(t)] = int(n)
    elif isinstance(armies, list):
        for t, n in armies:
            msg.placements[int(t)] = int(n)
    elif armies is not None:
        msg.armies = int(armies)


def _risk_action_dict(msg: pb.RiskAction) -> dict[str, Any]:
    action: dict[str, Any] = {"type": msg.type}
    for key in _RISK_INTS:
        if msg.HasField(key):
            action[key] = getattr(msg, key)
    if msg.cards:
        action["cards"] = list(msg.cards)
    if msg.placements:
        action["armies"] = dict(msg.placements)
    elif msg.HasField("armies"):
        action["armies"] = msg.armies
    return action


def _stratego_action(msg: pb.StrategoAction, action: dict[str, Any]) -> None:
    msg.type = str(action.get("type", ""))
    placement = action.get("placement")
    if isinstance(placement, dict):
        for square, name in placement.items():
            msg.placement[int(square)] = str(name)
    for key in ("from", "to", "square"):
        if action.get(key) is not None:
            setattr(msg, key, int(action[key]))
    if action.get("piece") is not None:
        msg.piece = str(action["piece"])


def _stratego_action_dict(msg: pb.StrategoAction) -> dict[str, Any]:
    action: dict[str, Any] = {"type": msg.type}
    if msg.placement:
        action["placement"] = {str(square): name for square, name in msg.placement.items()}
    for key in ("from", "to", "square"):
        if msg.HasField(key):
            action[key] = getattr(msg, key)
    if msg.piece:
        action["piece"] = msg.piece
    return action
