"""Between the engine's JSON forms and the wire's typed messages.

The referee turns a state's observation (a dict) into ``arena.v1.Observation`` and a
bot's ``arena.v1.Action`` into the action dict ``State.apply`` takes. The Python SDK
does the reverse, so a bot gets exactly the dict an in-process bot gets: the same bot
code runs in-process and over the network. A game without typed messages travels as
a ``google.protobuf.Struct``.
"""

from __future__ import annotations

import json
from typing import Any

from arena.v1 import arena_pb2 as pb

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


def to_json_text(value: Any) -> str:
    """Compact JSON text (what options, events and third-party messages travel as)."""
    return json.dumps(value, separators=(",", ":"))


def from_json_text(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as exc:
        raise CodecError(f"not valid JSON: {exc}") from None


# --- observations ------------------------------------------------------------------------


def observation_to_proto(game: str, obs: dict[str, Any]) -> pb.Observation:
    if game == "risk":
        return pb.Observation(risk=_risk_observation(obs))
    if game == "stratego":
        return pb.Observation(stratego=_stratego_observation(obs))
    return pb.Observation(other_json=to_json_text(obs))


def observation_from_proto(message: pb.Observation) -> dict[str, Any]:
    which = message.WhichOneof("game")
    if which == "risk":
        return _risk_observation_dict(message.risk)
    if which == "stratego":
        return _stratego_observation_dict(message.stratego)
    if which == "other_json":
        return from_json_text(message.other_json)
    raise CodecError("an observation with no game")


def _risk_observation(obs: dict[str, Any]) -> pb.RiskObservation:
    msg = pb.RiskObservation(**{k: obs[k] for k in _RISK_PLAIN})
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
    return msg


def _put_extra(msg: Any, obs: dict[str, Any], typed: set[str]) -> None:
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


def _stratego_observation(obs: dict[str, Any]) -> pb.StrategoObservation:
    msg = pb.StrategoObservation(**{k: obs[k] for k in _STRATEGO_PLAIN})
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
    return msg


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
    try:
        if game == "risk":
            return pb.Action(risk=_risk_action(action))
        if game == "stratego":
            return pb.Action(stratego=_stratego_action(action))
    except (TypeError, ValueError) as exc:
        raise CodecError(f"cannot send {action!r} as a {game} action: {exc}") from None
    return pb.Action(other_json=to_json_text(action))


def action_from_proto(game: str, message: pb.Action) -> dict[str, Any]:
    """The action dict ``State.apply`` takes, from a bot's message."""
    which = message.WhichOneof("game")
    if which == "other_json":
        action = from_json_text(message.other_json)
        if not isinstance(action, dict):
            raise CodecError("an action must be a JSON object")
        return action
    if which is None:
        raise CodecError(f"an empty action in a {game} match: set the {game} field")
    if which != game or game not in ("risk", "stratego"):
        raise CodecError(f"a {which} action in a {game} match")
    if which == "risk":
        return _risk_action_dict(message.risk)
    return _stratego_action_dict(message.stratego)


def _risk_action(action: dict[str, Any]) -> pb.RiskAction:
    msg = pb.RiskAction(type=str(action.get("type", "")))
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
    return msg


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


def _stratego_action(action: dict[str, Any]) -> pb.StrategoAction:
    msg = pb.StrategoAction(type=str(action.get("type", "")))
    placement = action.get("placement")
    if isinstance(placement, dict):
        for square, name in placement.items():
            msg.placement[int(square)] = str(name)
    for key in ("from", "to", "square"):
        if action.get(key) is not None:
            setattr(msg, key, int(action[key]))
    if action.get("piece") is not None:
        msg.piece = str(action["piece"])
    return msg


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
