"""Risk's observation arrays and action layout (the encoding is documented in
``arena.envs.risk_v0`` and docs/environments.md).

Seats are relative in every array: 0 is the observing seat, 1 the next in turn order,
and so on; passive owners (the neutral) keep their numbers after the seats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from arena.engine.core import Action, Decision
from arena.envs.core import FLAG, ArraySpec, Chooser, Codec
from arena.games.risk.cards import NUM_WILDS
from arena.games.risk.state import PHASE_NAMES
from arena.sdk.risk_map import RiskMap, risk_map

#: the observation's ``phase``, one-hot in this order
PHASES = PHASE_NAMES
#: the kinds of part, one-hot in ``part``: which block of actions is open
PARTS = ("territory", "edge", "card", "dice", "amount")
#: armies an amount action adds; the action after them adds all that is left
AMOUNTS = (1, 2, 3, 5, 10, 20, 50)
#: ``scalars``, in this order
SCALARS = (
    "current_player",
    "turn",
    "round",
    "draw_pile_size",
    "sets_traded",
    "reinforcements_left",
    "conquered_this_turn",
    "headquarters_needed",
)
BIG = 1_000_000  # the bound of counts that have none (armies, turns)


class RiskCodec(Codec):
    """Arrays and actions of Risk for ``num_players`` seats (and ``num_owners`` owners of
    territories: the seats, then passive ones such as the neutral) on ``map_name``."""

    game = "risk"

    def __init__(self, num_players: int, num_owners: int | None = None, map_name: str = "classic"):
        self.num_players = n = num_players
        self.num_owners = owners = num_owners or num_players
        self.map: RiskMap = risk_map(map_name)
        self.num_territories = t = len(self.map.territories)
        self.num_cards = c = t + NUM_WILDS
        #: every directed border (from, to), in territory order then neighbour order
        self.edges: list[tuple[int, int]] = [
            (a, b) for a in range(t) for b in self.map.neighbour_indices[a]
        ]
        self.edge_index = {edge: i for i, edge in enumerate(self.edges)}
        self.territory = 0
        self.edge = t
        self.card = self.edge + len(self.edges)
        self.dice = self.card + c
        self.amount = self.dice + 3
        self.blitz = self.amount + len(AMOUNTS) + 1
        self.pass_ = self.blitz + 1
        self.num_actions = self.pass_ + 1
        continents = [c.name for c in self.map.continents]
        self.continent_index = {name: i for i, name in enumerate(continents)}
        self.mission_size = len(continents) + 4
        # relative seats: REL[seat][owner + 1] (owner -1 is unclaimed), and the order of
        # per-seat (ROT) and per-owner (ROT_OWNERS) lists seen from ``seat``
        self.rel = [
            np.array([-1, *[(o - s) % n for o in range(n)], *range(n, owners)], np.int8)
            for s in range(n)
        ]
        self.rot = [np.array([(s + k) % n for k in range(n)]) for s in range(n)]
        self.rot_owners = [np.concatenate([self.rot[s], np.arange(n, owners)]) for s in range(n)]
        self.phase_eye = {name: np.eye(len(PHASES), dtype=FLAG)[i] for i, name in enumerate(PHASES)}
        self.specs = {
            "owner": ArraySpec((t,), np.int8, -1, owners - 1),
            "armies": ArraySpec((t,), np.int32, 0, BIG),
            "hand": ArraySpec((c,), FLAG, 0, 1),
            "discard": ArraySpec((c,), FLAG, 0, 1),
            "hand_sizes": ArraySpec((owners,), np.int16, 0, c),
            "alive": ArraySpec((n,), FLAG, 0, 1),
            "setup_armies_left": ArraySpec((n,), np.int16, 0, 1000),
            "phase": ArraySpec((len(PHASES),), FLAG, 0, 1),
            "scalars": ArraySpec((len(SCALARS),), np.int32, 0, BIG),
            "mission": ArraySpec((self.mission_size,), np.int16, 0, 1000),
            "headquarters": ArraySpec((t,), FLAG, 0, n),
            "focus": ArraySpec((t,), FLAG, 0, 2),
            "part": ArraySpec((len(PARTS),), FLAG, 0, 1),
            "pending": ArraySpec((t,), np.int32, 0, BIG),
            "chosen_cards": ArraySpec((c,), FLAG, 0, 1),
            "amount": ArraySpec((3,), np.int32, 0, BIG),
        }

    # --- observation ----------------------------------------------------------------------

    def arrays(self, seat: int, observation: Mapping[str, Any]) -> dict[str, np.ndarray]:
        obs = observation
        t, c = self.num_territories, self.num_cards
        hand = np.zeros(c, FLAG)
        hand[obs["hand"]] = 1
        discard = np.zeros(c, FLAG)
        discard[obs["discard"]] = 1
        focus = np.zeros(t, FLAG)
        shown = obs.get("move_in") or obs.get("attack")
        if shown is not None:
            focus[shown["from"]] = 1
            focus[shown["to"]] = 2
        headquarters = np.zeros(t, FLAG)
        rel = self.rel[seat]
        for owner, where in enumerate(obs.get("headquarters") or ()):
            if where is not None:
                headquarters[where] = rel[owner + 1] + 1
        rot = self.rot[seat]
        return {
            "owner": rel[np.array(obs["owner"]) + 1],
            "armies": np.array(obs["armies"], np.int32),
            "hand": hand,
            "discard": discard,
            "hand_sizes": np.array(obs["hand_sizes"], np.int16)[self.rot_owners[seat]],
            "alive": np.array(obs["alive"], FLAG)[rot],
            "setup_armies_left": np.array(obs["setup_armies_left"], np.int16)[rot],
            "phase": self.phase_eye[obs["phase"]].copy(),
            "scalars": np.array(
                [
                    rel[obs["current_player"] + 1],
                    obs["turn"],
                    obs["round"],
                    obs["draw_pile_size"],
                    obs["sets_traded"],
                    obs["reinforcements_left"],
                    obs["conquered_this_turn"],
                    obs.get("headquarters_needed", 0),
                ],
                np.int32,
            ),
            "mission": self._mission(seat, obs),
            "headquarters": headquarters,
            "focus": focus,
            "part": np.zeros(len(PARTS), FLAG),
            "pending": np.zeros(t, np.int32),
            "chosen_cards": np.zeros(c, FLAG),
            "amount": np.zeros(3, np.int32),
        }

    def _mission(self, seat: int, obs: Mapping[str, Any]) -> np.ndarray:
        """Your mission (variant missions): a flag per continent to conquer, then a third
        continent of your choice, territories to occupy, armies each, the seat (relative,
        plus 1) to destroy."""
        out = np.zeros(self.mission_size, np.int16)
        mission = obs.get("mission")
        if mission is None:
            return out
        for name in mission["continents"]:
            out[self.continent_index[name]] = 1
        k = len(self.continent_index)
        out[k] = mission["third_continent"]
        out[k + 1] = mission["occupy"]
        out[k + 2] = mission["min_armies"]
        if mission["destroy"]:
            target = list(obs["colours"]).index(mission["destroy"])
            out[k + 3] = self.rel[seat][target + 1] + 1
        return out

    # --- actions ----------------------------------------------------------------------

    def chooser(self, seat: int, decision: Decision) -> Chooser:
        return _CHOOSERS[decision.kind](self, decision.options)

    def amounts_mask(self, room: int, can_stop: bool) -> np.ndarray:
        """Adding 1, 2, 3, 5, ... armies (those that fit in ``room``) or all of it; and
        the pass action when ``can_stop``."""
        legal = [self.amount + i for i, k in enumerate(AMOUNTS) if k <= room]
        if room > 0:
            legal.append(self.amount + len(AMOUNTS))
        if can_stop:
            legal.append(self.pass_)
        return self.mask_of(legal)

    def armies_of(self, action: int, room: int) -> int:
        i = action - self.amount
        return AMOUNTS[i] if i < len(AMOUNTS) else room

    def amount_actions(self, armies: int, room: int) -> list[int]:
        """Amount actions adding exactly ``armies`` (of ``room``): all of it if that is
        what is asked, else the greedy sum of the fixed amounts."""
        if armies == room and armies > 0:
            return [self.amount + len(AMOUNTS)]
        out = []
        while armies > 0:
            i = max(i for i, k in enumerate(AMOUNTS) if k <= armies)
            out.append(self.amount + i)
            armies -= AMOUNTS[i]
        return out

    def actions(self, seat: int, decision: Decision, action: Action) -> list[int]:
        kind, opts, verb = decision.kind, decision.options, action.get("type")
        if verb in ("claim", "headquarters") or (verb == "place" and kind == "setup_place"):
            return [self._territory(action["territory"])]
        if verb in ("no_trade", "end_attack", "end_turn"):
            return [self.pass_]
        if verb == "trade":
            cards = list(action["cards"])
            bonus = action.get("bonus")
            if bonus is not None and self._territory(bonus) in cards:
                cards.remove(self._territory(bonus))
                cards.insert(0, self._territory(bonus))
            return [self.card + card for card in cards]
        if verb == "reinforce":
            out, left = [], opts["armies"]
            for t, n in _pairs(action["armies"]):
                for step in self.amount_actions(n, left):
                    out += [self._territory(t), step]
                left -= n
            return out
        if verb == "attack":
            src, dst = self._territory(action["from"]), self._territory(action["to"])
            edge = self.edge + self.edge_index[src, dst]
            until = action.get("until")
            if until is None:
                limits = {(a["from"], a["to"]): a["max_dice"] for a in opts["attacks"]}
                return [edge, self.dice + action.get("dice", limits[src, dst]) - 1]
            if until != 1:
                raise ValueError(
                    "the environment's attacks roll once, or on until the end (until=1), "
                    f"not until={until}"
                )
            return [edge, self.blitz]
        if verb == "move_in":
            return self._moved(action["armies"] - opts["min"], opts["max"] - opts["min"])
        if verb == "fortify":
            src, dst = self._territory(action["from"]), self._territory(action["to"])
            limits = {(m["from"], m["to"]): m["max_armies"] for m in opts["moves"]}
            border = self.edge + self.edge_index[src, dst]
            return [border, *self._moved(action["armies"], limits[src, dst])]
        if verb == "defend":
            return [self.dice + action["dice"] - 1]
        if verb == "place":  # neutral_place
            out = [self._territory(t) for t, n in _pairs(action["armies"]) for _ in range(n)]
            if action.get("neutral") is not None:
                out.append(self._territory(action["neutral"]))
            return out
        raise ValueError(f"no environment actions for a {verb!r} action in a {kind} decision")

    def _moved(self, armies: int, room: int) -> list[int]:
        """Amount actions for ``armies`` of ``room``, and pass unless that is all."""
        return [*self.amount_actions(armies, room), *([self.pass_] if armies < room else [])]

    def _territory(self, ref: Any) -> int:
        return self.map.index(ref) if isinstance(ref, str) else int(ref)


def _pairs(armies: Any) -> list[tuple[Any, int]]:
    return list(armies.items()) if isinstance(armies, dict) else [tuple(p) for p in armies]


# --- the decisions, part by part -------------------------------------------------------


class _Pick(Chooser):
    """One territory: claim, setup_place, headquarters."""

    __slots__ = ("mask", "verb")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any], verb: str) -> None:
        self.verb = verb
        self.mask = codec.mask_of(opts["territories"])

    def choose(self, action: int) -> Action:
        return {"type": self.verb, "territory": action}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"part": _PART["territory"].copy()}


class _Trade(Chooser):
    """Three cards, one at a time (the first territory card you own gets the 2 extra
    armies), or pass (no trade) first, if you need not trade."""

    __slots__ = ("chosen", "codec", "mask", "sets")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        self.codec = codec
        self.sets = [set(s) for s in opts["sets"]]
        self.chosen: list[int] = []
        legal = [codec.card + c for c in sorted(set().union(*self.sets))]
        if not opts["must_trade"]:
            legal.append(codec.pass_)
        self.mask = codec.mask_of(legal)

    def choose(self, action: int) -> Action | None:
        codec = self.codec
        if action == codec.pass_:
            return {"type": "no_trade"}
        self.chosen.append(action - codec.card)
        if len(self.chosen) == 3:
            return {"type": "trade", "cards": self.chosen}
        chosen = set(self.chosen)
        fits = set().union(*(s - chosen for s in self.sets if chosen <= s))
        self.mask = codec.mask_of([codec.card + c for c in sorted(fits)])
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        cards = np.zeros(self.codec.num_cards, FLAG)
        cards[self.chosen] = 1
        return {"part": _PART["card"].copy(), "chosen_cards": cards}


class _Reinforce(Chooser):
    """A territory, then how many armies go there; again until all are placed."""

    __slots__ = ("at", "codec", "left", "mask", "placed", "territories", "total")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        self.codec = codec
        self.total = self.left = opts["armies"]
        self.territories = codec.mask_of(opts["territories"])
        self.placed: dict[int, int] = {}
        self.at = -1
        self.mask = self.territories.copy()

    def choose(self, action: int) -> Action | None:
        if self.at < 0:
            self.at = action
            self.mask = self.codec.amounts_mask(self.left, False)
            return None
        n = self.codec.armies_of(action, self.left)
        self.placed[self.at] = self.placed.get(self.at, 0) + n
        self.left -= n
        self.at = -1
        if self.left == 0:
            return {"type": "reinforce", "armies": self.placed}
        self.mask = self.territories.copy()
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        codec = self.codec
        pending = np.zeros(codec.num_territories, np.int32)
        for t, n in self.placed.items():
            pending[t] = n
        focus = np.zeros(codec.num_territories, FLAG)
        if self.at >= 0:
            focus[self.at] = 2
        return {
            "part": _PART["territory" if self.at < 0 else "amount"].copy(),
            "pending": pending,
            "focus": focus,
            "amount": np.array([self.total - self.left, 0, self.total], np.int32),
        }


class _Amount(Chooser):
    """Armies added a fixed amount at a time (or all that fit), then pass to stop once
    at least ``low`` are moved: move_in, and a fortify's second part."""

    __slots__ = ("codec", "dst", "high", "low", "mask", "moved", "src", "verb")

    def __init__(self, codec: RiskCodec, verb: str, src: int, dst: int, low: int, high: int):
        self.codec = codec
        self.verb, self.src, self.dst = verb, src, dst
        self.low, self.high, self.moved = low, high, low if verb == "move_in" else 0
        self.mask = codec.amounts_mask(high - self.moved, self.moved >= max(low, 1))

    def choose(self, action: int) -> Action | None:
        codec = self.codec
        if action != codec.pass_:
            self.moved += codec.armies_of(action, self.high - self.moved)
        if action == codec.pass_ or self.moved == self.high:
            if self.verb == "move_in":
                return {"type": "move_in", "armies": self.moved}
            return {"type": "fortify", "from": self.src, "to": self.dst, "armies": self.moved}
        self.mask = codec.amounts_mask(self.high - self.moved, True)
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        focus = np.zeros(self.codec.num_territories, FLAG)
        focus[self.src] = 1
        focus[self.dst] = 2
        return {
            "part": _PART["amount"].copy(),
            "focus": focus,
            "amount": np.array([self.moved, self.low, self.high], np.int32),
        }


class _MoveIn(_Amount):
    __slots__ = ()

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        super().__init__(codec, "move_in", opts["from"], opts["to"], opts["min"], opts["max"])


class _Border(Chooser):
    """A border (from, to), or pass; then the rest: attack (dice or blitz) and fortify
    (armies) go on with a second chooser."""

    __slots__ = ("codec", "limits", "mask", "then")

    def __init__(self, codec: RiskCodec, choices: Sequence[Mapping[str, Any]], key: str) -> None:
        self.codec = codec
        index = codec.edge_index
        self.limits = {codec.edge + index[c["from"], c["to"]]: c[key] for c in choices}
        self.mask = codec.mask_of([*self.limits, codec.pass_])
        self.then: Chooser | None = None

    def arrays(self) -> dict[str, np.ndarray]:
        if self.then is not None:
            return self.then.arrays()
        return {"part": _PART["edge"].copy()}


class _Attack(_Border):
    __slots__ = ("dst", "src")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        super().__init__(codec, opts["attacks"], "max_dice")
        self.src = self.dst = -1

    def choose(self, action: int) -> Action | None:
        codec = self.codec
        if self.src < 0:
            if action == codec.pass_:
                return {"type": "end_attack"}
            self.src, self.dst = codec.edges[action - codec.edge]
            max_dice = self.limits[action]
            self.mask = codec.mask_of([*range(codec.dice, codec.dice + max_dice), codec.blitz])
            return None
        if action == codec.blitz:
            return {"type": "attack", "from": self.src, "to": self.dst, "until": 1}
        return {"type": "attack", "from": self.src, "to": self.dst, "dice": action - codec.dice + 1}

    def arrays(self) -> dict[str, np.ndarray]:
        if self.src < 0:
            return {"part": _PART["edge"].copy()}
        focus = np.zeros(self.codec.num_territories, FLAG)
        focus[self.src] = 1
        focus[self.dst] = 2
        return {"part": _PART["dice"].copy(), "focus": focus}


class _Fortify(_Border):
    __slots__ = ()

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        super().__init__(codec, opts["moves"], "max_armies")

    def choose(self, action: int) -> Action | None:
        if self.then is not None:
            action_out = self.then.choose(action)
            self.mask = self.then.mask
            return action_out
        codec = self.codec
        if action == codec.pass_:
            return {"type": "end_turn"}
        src, dst = codec.edges[action - codec.edge]
        self.then = _Amount(codec, "fortify", src, dst, 1, self.limits[action])
        self.mask = self.then.mask
        return None


class _Defend(Chooser):
    __slots__ = ("dice", "mask")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        self.mask = codec.mask_of(range(codec.dice, codec.dice + opts["max_dice"]))
        self.dice = codec.dice

    def choose(self, action: int) -> Action:
        return {"type": "defend", "dice": action - self.dice + 1}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"part": _PART["dice"].copy()}


class _NeutralPlace(Chooser):
    """Variant neutral: a territory of yours for each of your armies (one at a time),
    then a neutral territory for the neutral army, if one is left to place."""

    __slots__ = ("codec", "left", "mask", "neutral", "own", "placed")

    def __init__(self, codec: RiskCodec, opts: Mapping[str, Any]) -> None:
        self.codec = codec
        self.left = opts["armies"]
        self.own = codec.mask_of(opts["territories"])
        self.neutral = codec.mask_of(opts["neutral_territories"]) if opts["neutral"] else None
        self.placed: dict[int, int] = {}
        self.mask = self.own if self.left else self.neutral  # type: ignore[assignment]

    def choose(self, action: int) -> Action | None:
        if self.left:
            self.placed[action] = self.placed.get(action, 0) + 1
            self.left -= 1
            if self.left or self.neutral is not None:
                self.mask = (self.own if self.left else self.neutral).copy()  # type: ignore[union-attr]
                return None
            return {"type": "place", "armies": self.placed}
        return {"type": "place", "armies": self.placed, "neutral": action}

    def arrays(self) -> dict[str, np.ndarray]:
        pending = np.zeros(self.codec.num_territories, np.int32)
        for t, n in self.placed.items():
            pending[t] = n
        return {"part": _PART["territory"].copy(), "pending": pending}


_PART = {name: np.eye(len(PARTS), dtype=FLAG)[i] for i, name in enumerate(PARTS)}
_CHOOSERS: dict[str, Any] = {
    "claim": lambda codec, opts: _Pick(codec, opts, "claim"),
    "setup_place": lambda codec, opts: _Pick(codec, opts, "place"),
    "headquarters": lambda codec, opts: _Pick(codec, opts, "headquarters"),
    "trade": _Trade,
    "reinforce": _Reinforce,
    "attack": _Attack,
    "move_in": _MoveIn,
    "fortify": _Fortify,
    "defend": _Defend,
    "neutral_place": _NeutralPlace,
}
