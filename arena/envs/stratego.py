"""Stratego's observation arrays and action layout (the encoding is documented in
``arena.envs.stratego_v0`` and docs/environments.md).

Everything is seen from the observing seat's side of the board: seat 0's squares as
they are, seat 1's turned half a turn (square ``s`` is ``99 - s``), so that for either
seat row 0 is its own back row and moving "forward" goes up a row.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from arena.engine.core import Action, Decision
from arena.envs.core import FLAG, ArraySpec, Chooser, Codec
from arena.games.stratego.board import LAKES, parse_square
from arena.games.stratego.pieces import NAMES, RANK_OF

SIZE = 10
SQUARES = SIZE * SIZE
RANKS = len(NAMES)
#: directions of a move, as seen by the mover: forward, back, right, left
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1))
MOVES = SQUARES * len(DIRECTIONS) * (SIZE - 1)
PHASES = ("setup", "move", "rescue", "game_over")
PARTS = ("move", "rank", "square")
#: the planes of ``board``, in this order (the last index of the array)
PLANES = (
    *(f"own {name}" for name in NAMES),
    *(f"enemy {name}" for name in NAMES),
    "enemy unknown",
    "moved",
    "moved far",
    "lake",
    "last move from",
    "last move to",
)
_ENEMY, _UNKNOWN = RANKS, 2 * RANKS
_MOVED, _FAR, _LAKE, _FROM, _TO = range(2 * RANKS + 1, 2 * RANKS + 6)


def relative(seat: int, square: int) -> int:
    """``square`` as ``seat`` sees it (and back: the map is its own inverse)."""
    return square if seat == 0 else SQUARES - 1 - square


def _move_tables() -> tuple[list[list[tuple[int, int] | None]], list[list[list[int]]]]:
    """Per seat: the (from, to) squares of each move action (None off the board), and
    the action of each (from, to) (-1: none)."""
    moves: list[list[tuple[int, int] | None]] = []
    index: list[list[list[int]]] = []
    for seat in (0, 1):
        of: list[tuple[int, int] | None] = []
        at = [[-1] * SQUARES for _ in range(SQUARES)]
        for r in range(SQUARES):
            row, col = divmod(r, SIZE)
            for dr, dc in DIRECTIONS:
                for dist in range(1, SIZE):
                    rr, cc = row + dr * dist, col + dc * dist
                    if 0 <= rr < SIZE and 0 <= cc < SIZE:
                        src, dst = relative(seat, r), relative(seat, rr * SIZE + cc)
                        at[src][dst] = len(of)
                        of.append((src, dst))
                    else:
                        of.append(None)
        moves.append(of)
        index.append(at)
    return moves, index


MOVE_OF, MOVE_INDEX = _move_tables()


class StrategoCodec(Codec):
    """Arrays and actions of Stratego (every rule set: the layout is the same)."""

    game = "stratego"
    num_players = 2

    def __init__(self) -> None:
        self.move = 0
        self.rank = MOVES
        self.square = self.rank + RANKS
        self.pass_ = self.square + SQUARES
        self.num_actions = self.pass_ + 1
        lakes = np.zeros((SIZE, SIZE), FLAG)
        for s in LAKES:  # the lakes are where they are from either side
            lakes[divmod(s, SIZE)] = 1
        self.lakes = lakes
        self.phase_eye = {name: np.eye(len(PHASES), dtype=FLAG)[i] for i, name in enumerate(PHASES)}
        self.specs = {
            "board": ArraySpec((SIZE, SIZE, len(PLANES)), FLAG, 0, 1),
            "captured": ArraySpec((2, RANKS), FLAG, 0, 8),
            "phase": ArraySpec((len(PHASES),), FLAG, 0, 1),
            "scalars": ArraySpec((4,), np.int32, 0, 1_000_000),
            "part": ArraySpec((len(PARTS),), FLAG, 0, 1),
            "pieces": ArraySpec((RANKS,), FLAG, 0, 8),
            "setup_square": ArraySpec((SIZE, SIZE), FLAG, 0, 1),
            "placed": ArraySpec((SIZE, SIZE), FLAG, 0, RANKS),
        }

    # --- observation ----------------------------------------------------------------------

    def arrays(self, seat: int, observation: Mapping[str, Any]) -> dict[str, np.ndarray]:
        obs = observation
        board = np.zeros((SIZE, SIZE, len(PLANES)), FLAG)
        board[:, :, _LAKE] = self.lakes
        flip = seat == 1
        for s, piece in enumerate(obs["board"]):
            if piece is None:
                continue
            row, col = divmod(SQUARES - 1 - s if flip else s, SIZE)
            cell = board[row, col]
            rank = piece["rank"]
            if piece["owner"] == seat:
                cell[RANK_OF[rank]] = 1
            elif rank is None:
                cell[_UNKNOWN] = 1
            else:
                cell[_ENEMY + RANK_OF[rank]] = 1
            if piece["moved"]:
                cell[_MOVED] = 1
            if piece["moved_far"]:
                cell[_FAR] = 1
        history = obs["history"]
        if history:
            last = history[-1]
            if "from" in last:
                board[(*divmod(relative(seat, last["from"]), SIZE), _FROM)] = 1
            board[(*divmod(relative(seat, last.get("to", last.get("square"))), SIZE), _TO)] = 1
        captured = np.zeros((2, RANKS), FLAG)
        for row, lost in enumerate((obs["captured"][seat], obs["captured"][1 - seat])):
            for name in lost:
                captured[row, RANK_OF[name]] += 1
        rescues = obs["rescues_left"]
        return {
            "board": board,
            "captured": captured,
            "phase": self.phase_eye[obs["phase"]].copy(),
            "scalars": np.array(
                [obs["current_player"] == seat, obs["ply"], rescues[seat], rescues[1 - seat]],
                np.int32,
            ),
            "part": np.zeros(len(PARTS), FLAG),
            "pieces": np.zeros(RANKS, FLAG),
            "setup_square": np.zeros((SIZE, SIZE), FLAG),
            "placed": np.zeros((SIZE, SIZE), FLAG),
        }

    # --- actions ----------------------------------------------------------------------

    def chooser(self, seat: int, decision: Decision) -> Chooser:
        kind = decision.kind
        if kind == "move":
            index = MOVE_INDEX[seat]
            mask = bytearray(self.num_actions)
            for src, dst in decision.options["moves"]:
                mask[index[src][dst]] = 1
            return _Move(np.frombuffer(mask, FLAG), MOVE_OF[seat])
        if kind == "setup":
            return _Setup(self, seat, decision.options)
        if kind == "rescue":
            return _Rescue(self, seat, decision.options)
        raise ValueError(f"no environment actions for a Stratego {kind} decision")

    def actions(self, seat: int, decision: Decision, action: Action) -> list[int]:
        verb = action.get("type")
        if verb == "move":
            src, dst = parse_square(action["from"]), parse_square(action["to"])
            move = MOVE_INDEX[seat][src][dst]
            if move < 0:
                raise ValueError(f"{action['from']}-{action['to']} is not a move along a line")
            return [move]
        if verb == "no_rescue":
            return [self.pass_]
        if verb == "rescue":
            return [
                self.rank + RANK_OF[action["piece"]],
                self.square + relative(seat, parse_square(action["square"])),
            ]
        if verb == "setup":
            placement = action["placement"]
            pairs = placement.items() if isinstance(placement, dict) else placement
            at = {parse_square(square): name for square, name in pairs}
            out, left = [], len(at)
            for square in _setup_order(seat, decision.options["squares"]):
                if not left:
                    break
                name = at.get(square)
                out.append(self.pass_ if name is None else self.rank + RANK_OF[name])
                left -= name is not None
            return out
        raise ValueError(f"no environment actions for a {verb!r} action")


def _setup_order(seat: int, squares: list[int]) -> list[int]:
    """The setup squares in the order they are filled: your back row first, each row
    from your left."""
    return sorted(squares, key=lambda s: relative(seat, s))


# --- the decisions, part by part -------------------------------------------------------


class _Move(Chooser):
    __slots__ = ("mask", "moves")

    def __init__(self, mask: np.ndarray, moves: list[tuple[int, int] | None]) -> None:
        self.mask = mask
        self.moves = moves

    def choose(self, action: int) -> Action:
        src, dst = self.moves[action]  # type: ignore[misc]
        return {"type": "move", "from": src, "to": dst}

    def arrays(self) -> dict[str, np.ndarray]:
        return {"part": _PART["move"].copy()}


class _Setup(Chooser):
    """One setup square after the other (your back row first, each row from your
    left): the rank of the piece that goes there, or pass to leave it empty (only when
    the pieces left fit in the squares left, as in barrage)."""

    __slots__ = ("codec", "left", "mask", "next", "placement", "seat", "squares")

    def __init__(self, codec: StrategoCodec, seat: int, opts: Mapping[str, Any]) -> None:
        self.codec = codec
        self.seat = seat
        self.squares = _setup_order(seat, opts["squares"])
        self.left = [opts["army"].get(name, 0) for name in NAMES]
        self.placement: dict[int, str] = {}
        self.next = 0
        self.mask = self._mask()

    def _mask(self) -> np.ndarray:
        codec = self.codec
        legal = [codec.rank + r for r, n in enumerate(self.left) if n]
        if len(self.squares) - self.next > sum(self.left):
            legal.append(codec.pass_)
        return codec.mask_of(legal)

    def choose(self, action: int) -> Action | None:
        codec = self.codec
        if action != codec.pass_:
            rank = action - codec.rank
            self.placement[self.squares[self.next]] = NAMES[rank]
            self.left[rank] -= 1
        self.next += 1
        if not any(self.left):
            return {"type": "setup", "placement": self.placement}
        self.mask = self._mask()
        return None

    def arrays(self) -> dict[str, np.ndarray]:
        square = np.zeros((SIZE, SIZE), FLAG)
        square[divmod(relative(self.seat, self.squares[self.next]), SIZE)] = 1
        placed = np.zeros((SIZE, SIZE), FLAG)
        for s, name in self.placement.items():
            placed[divmod(relative(self.seat, s), SIZE)] = RANK_OF[name] + 1
        return {
            "part": _PART["rank"].copy(),
            "pieces": np.array(self.left, FLAG),
            "setup_square": square,
            "placed": placed,
        }


class _Rescue(Chooser):
    """The piece to bring back (its rank), or pass for no rescue; then its square."""

    __slots__ = ("codec", "mask", "piece", "seat", "squares")

    def __init__(self, codec: StrategoCodec, seat: int, opts: Mapping[str, Any]) -> None:
        self.codec = codec
        self.seat = seat
        self.piece = -1
        self.squares = opts["squares"]
        self.mask = codec.mask_of([*(codec.rank + RANK_OF[p] for p in opts["pieces"]), codec.pass_])

    def choose(self, action: int) -> Action | None:
        codec = self.codec
        if self.piece < 0:
            if action == codec.pass_:
                return {"type": "no_rescue"}
            self.piece = action - codec.rank
            self.mask = codec.mask_of([codec.square + relative(self.seat, s) for s in self.squares])
            return None
        square = relative(self.seat, action - codec.square)
        return {"type": "rescue", "piece": NAMES[self.piece], "square": square}

    def arrays(self) -> dict[str, np.ndarray]:
        pieces = np.zeros(RANKS, FLAG)
        if self.piece >= 0:
            pieces[self.piece] = 1
        return {"part": _PART["rank" if self.piece < 0 else "square"].copy(), "pieces": pieces}


_PART = {name: np.eye(len(PARTS), dtype=FLAG)[i] for i, name in enumerate(PARTS)}
