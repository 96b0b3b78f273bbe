"""Stratego: the state of one game and its rules.

The board is two arrays of 100 squares (``rank``, ``owner``) plus per-square public
facts that travel with a piece (has it moved, has it moved more than one square, has
its rank been revealed). Pieces have internal ids (for the rescue rule's "the same
piece cannot rescue twice"); ids never leave the state: observations describe the
opponent's pieces by square and public facts only.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from arena.engine.chance import SecureRandom
from arena.engine.core import (
    Action,
    ClonedRandom,
    Decision,
    EndReason,
    Event,
    IllegalAction,
    Result,
    State,
    check_kind,
    check_turn,
)
from arena.games.stratego.board import (
    BACK_ROW,
    HALF_ROWS,
    LAKES,
    NEIGHBOURS,
    RAYS,
    SETUP_ROWS,
    SIZE,
    SQUARES,
    between,
    in_line,
    parse_square,
    square_name,
)
from arena.games.stratego.pieces import (
    BOMB,
    CLASSIC_ARMY,
    FLAG,
    IMMOVABLE,
    NAMES,
    RANK_OF,
    SCOUT,
    strike,
)
from arena.games.stratego.setup import guarded_setup

SETUP, PLAY, RESCUE, GAME_OVER = range(4)
PHASE_NAMES = ("setup", "move", "rescue", "game_over")
PHASE_ACTIONS: tuple[tuple[str, ...], ...] = (("setup",), ("move",), ("rescue", "no_rescue"), ())
RESULT_NAMES = {1: "attacker", -1: "defender", 0: "both"}
EMPTY = -1

# Zobrist keys for position repetition (the more-squares rule); fixed, not from the
# match's generator, so they draw nothing from the game's chance. Rank 12 stands for
# "an enemy piece": each player's view of a position knows its own ranks only, so
# whether a move repeats a position never depends on what that player cannot see.
HIDDEN = 12
_ZRNG = random.Random(0x5747)
ZOBRIST = tuple(
    tuple(tuple(_ZRNG.getrandbits(64) for _ in range(13)) for _ in range(2)) for _ in range(SQUARES)
)


@dataclass
class StrategoRules:
    """The rule switches of one game; variants adjust them through ``stratego_rules``."""

    name: str = "classic"
    army: dict[str, int] = field(default_factory=lambda: dict(CLASSIC_ARMY))
    #: every square of the 4 setup rows must be filled (false for barrage)
    fill_setup_rows: bool = True
    #: a Scout may move and strike in the same turn (ISF)
    scout_move_and_strike: bool = False
    #: most consecutive moves of one player between the same two squares (classic 2:
    #: the third is refused; ISF 3)
    shuttle_limit: int = 2
    #: ISF 10.2: a Scout's moves count against the two-squares rule while they stay on
    #: the squares the first move of the series covered (False: exact squares only)
    scout_lines: bool = False
    #: the ISF more-squares rule against endless chases
    more_squares: bool = False
    #: the manual's optional rescue rule
    rescue: bool = False
    #: plies after which the game is drawn (0: none)
    turn_limit: int = 3000


#: the two-squares rule's series of one player: (last from, last to, moves in a row,
#: first from, first to)
Shuttle = tuple[int, int, int, int, int]
NO_SHUTTLE: Shuttle = (EMPTY, EMPTY, 0, EMPTY, EMPTY)


def on_segment(x: int, a: int, b: int) -> bool:
    """Whether square ``x`` is ``a``, ``b`` or between them on their row or column."""
    if a // SIZE == b // SIZE:
        return x // SIZE == a // SIZE and min(a, b) <= x <= max(a, b)
    return x % SIZE == a % SIZE and min(a, b) <= x <= max(a, b)


def next_shuttle(series: Shuttle, s: int, t: int, scout_lines: bool) -> Shuttle:
    """The two-squares rule's series after its player moves (or strikes) s->t.

    The move goes on with the series when it is the same piece's (it starts where the
    last move ended) and it goes back to where the last move started, or, under ISF 10.2
    (``scout_lines``), it ends on the squares the series' first move covered: from one
    end to the other, both included. Any other move starts a series of its own.
    """
    a, b, count, first, last = series
    if s == b and (t == a or (scout_lines and on_segment(t, first, last))):
        return (s, t, count + 1, first, last)
    return (s, t, 1, s, t)


class StrategoState(ClonedRandom, State):
    """One game of Stratego. Create it through ``StrategoGame.new_state``."""

    def __init__(self, rules: StrategoRules, seed: int) -> None:
        self.rules = rules
        self.num_players = 2
        self._rng = SecureRandom(seed, "match")
        self._rng_shared = False  # True while a clone may hold the same generator
        #: per seat, the seed of its fallback setup (``default_action``), drawn once from
        #: the match's secret generator: the fallback is random, the same on a replay, and
        #: the same however often it is asked for (the rules themselves draw nothing)
        self.fallback_seeds = (self.rng.getrandbits(64), self.rng.getrandbits(64))
        self.rank = [EMPTY] * SQUARES
        self.owner = [EMPTY] * SQUARES
        self.pid = [EMPTY] * SQUARES
        self.moved = [False] * SQUARES
        self.far = [False] * SQUARES
        self.revealed = [False] * SQUARES
        self.pieces: list[set[int]] = [set(), set()]
        self.captured: list[list[int]] = [[], []]  # ranks each side has lost, in order
        #: the public move log, one JSON-ready entry per move (shared by observations)
        self.history: list[dict[str, Any]] = []
        self.phase = SETUP
        self.player = 0
        self.ply = 0
        #: per player, the Zobrist hash of the position as that player sees it
        self.zview = [0, 0]
        self.last_move: list[tuple[int, int, bool] | None] = [None, None]
        #: per player, the two-squares rule's series: its last move (from, to), how many
        #: moves in a row the series holds, and the first move's squares (from, to)
        self.shuttle: list[Shuttle] = [NO_SHUTTLE, NO_SHUTTLE]
        #: per player as the chaser: the positions (in that player's view) its moves
        #: created during its current continuous chase (None: no chase)
        self.chase: list[set[int] | None] = [None, None]
        #: per player as the chaser: the squares of the enemy pieces that evaded during
        #: that chase (pieces followed square by square, as everyone sees them move)
        self.evaders: list[set[int]] = [set(), set()]
        self.rescues = [0, 0]
        self.rescuers: list[set[int]] = [set(), set()]
        self._rescuer = EMPTY
        self._result: Result | None = None
        #: True from a ``simulate`` to the next ``apply``: moves and strikes make no events
        self._quiet = False
        #: (player, its legal moves) once computed for this position; any change of the
        #: board (``_put``, ``_clear``: every move, strike, setup and rescue) forgets them
        self._moves: tuple[int, list[list[int]]] | None = None
        self.initial_events: list[Event] = []

    # --- State protocol -------------------------------------------------------------

    @property
    def terminal(self) -> bool:
        return self._result is not None

    @property
    def current_player(self) -> int:
        return self.player

    def result(self) -> Result | None:
        return self._result

    def decision(self) -> Decision:
        return Decision(self.player, PHASE_NAMES[self.phase], self.legal_options)

    def apply(self, player: int, action: Action) -> list[Event]:
        events: list[Event] = []
        self.simulate(player, action, events)
        return events

    def simulate(self, player: int, action: Action, events: list[Event] | None = None) -> None:
        """As the base class says; ``events``: the list ``apply`` collects every event in
        (None: moves and strikes make no events, until the next ``apply``)."""
        if events is None:
            self._quiet = True
            events = []  # for the rare events (a setup, a rescue, the game's end)
        else:
            self._quiet = False
        if self._result is not None or player != self.player or type(action) is not dict:
            check_turn(self._result is not None, self.player, player, action)  # raises
        phase = self.phase
        kind = action.get("type")
        if type(kind) is not str or kind not in PHASE_ACTIONS[phase]:
            check_kind(action, PHASE_ACTIONS[phase], f"the {PHASE_NAMES[phase]} phase")
        _HANDLERS[kind](self, action, events)

    def clone(self) -> StrategoState:
        other = StrategoState.__new__(StrategoState)
        other.__dict__.update(self.__dict__)
        other._moves = None  # never the same list in two states
        # the generator is shared until either state draws from it (copy on write)
        self.share_rng(other)
        for name in (
            "rank",
            "owner",
            "pid",
            "moved",
            "far",
            "revealed",
            "history",
            "last_move",
            "shuttle",
            "zview",
            "rescues",
        ):
            setattr(other, name, getattr(self, name)[:])
        other.pieces = [set(s) for s in self.pieces]
        other.captured = [c[:] for c in self.captured]
        other.chase = [None if c is None else set(c) for c in self.chase]
        other.evaders = [set(e) for e in self.evaders]
        other.rescuers = [set(s) for s in self.rescuers]
        return other

    # --- observation ------------------------------------------------------------------

    def observation(self, player: int) -> dict[str, Any]:
        """Own pieces with ranks; enemy pieces as positions plus public facts only.

        The setups are simultaneous: until both armies stand, a seat sees none of the
        other's (seat 1 sets up after seat 0 in the engine, but is shown nothing of it).
        """
        board: list[dict[str, Any] | None] = [None] * SQUARES
        in_setup = self.phase == SETUP
        rank, owner, moved, far, revealed = (
            self.rank,
            self.owner,
            self.moved,
            self.far,
            self.revealed,
        )
        for s in range(SQUARES):
            o = owner[s]
            if o < 0 or (in_setup and o != player):
                continue
            known = o == player or revealed[s]
            board[s] = {
                "owner": o,
                "rank": NAMES[rank[s]] if known else None,
                "moved": moved[s],
                "moved_far": far[s],
                "revealed": revealed[s],
            }
        return {
            "game": "stratego",
            "seat": player,
            "rules": self.rules.name,
            "phase": PHASE_NAMES[self.phase],
            "current_player": self.player,
            "ply": self.ply,
            "board": board,
            "lakes": sorted(LAKES),
            "captured": [[NAMES[r] for r in lost] for lost in self.captured],
            "history": [dict(entry) for entry in self.history],  # the bot's own copies
            "rescues_left": [2 - n for n in self.rescues] if self.rules.rescue else [0, 0],
        }

    def spectator_view(self, reveal: bool = False) -> dict[str, Any]:
        """Where every piece stands, each as ``[owner, rank or None, moved, revealed]``
        (moved: 0, 1, or 2 for a move of more than one square), the rank only once a
        strike or a rescue showed it; the pieces each side has lost; whose move it is.
        No piece during the setup (a seat must not learn the other's). With ``reveal``
        (a match that has ended), every rank, during the setup too."""
        board: list[list[Any] | None] = [None] * SQUARES
        if reveal or self.phase != SETUP:
            facts = zip(self.owner, self.rank, self.moved, self.far, self.revealed, strict=True)
            for s, (o, r, moved, far, shown) in enumerate(facts):
                if o >= 0:
                    rank = NAMES[r] if reveal or shown else None
                    board[s] = [o, rank, 2 if far else int(moved), int(shown)]
        return {
            "phase": PHASE_NAMES[self.phase],
            "player": self.player,
            "ply": self.ply,
            "board": board,
            "captured": [[NAMES[r] for r in lost] for lost in self.captured],
        }

    # --- legal options ----------------------------------------------------------------

    def legal_options(self) -> dict[str, Any]:
        p = self.player
        if self.phase == SETUP:
            return {
                "squares": [r * SIZE + c for r in SETUP_ROWS[p] for c in range(SIZE)],
                "army": dict(self.rules.army),
                "fill_rows": self.rules.fill_setup_rows,
            }
        if self.phase == PLAY:
            cached = self._moves
            self._moves = None  # handed out: the bot may change the list
            return {"moves": cached[1] if cached and cached[0] == p else self.legal_moves(p)}
        if self.phase == RESCUE:
            return {"pieces": self._rescuable(p), "squares": self._rescue_squares(p)}
        return {}

    def legal_moves(self, p: int) -> list[list[int]]:
        """Every legal [from, to] for ``p`` (a move onto an enemy square is a strike)."""
        out: list[list[int]] = []
        rank, owner = self.rank, self.owner
        rules = self.rules
        scout_strikes = rules.scout_move_and_strike
        check = self._refused
        # The repetition rules can refuse a move of one piece only (the one on the
        # square the two-squares rule counts), or of any piece while p chases under the
        # more-squares rule: every other piece moves unchecked.
        back, count = self.shuttle[p][1:3]
        if count < rules.shuttle_limit:
            back = EMPTY
        chasing = self.chase[p] is not None and rules.more_squares
        append = out.append
        for s in self.pieces[p]:
            r = rank[s]
            if r in IMMOVABLE:
                continue
            if not chasing and s != back:
                if r != SCOUT:
                    for t in NEIGHBOURS[s]:
                        if owner[t] != p:
                            append([s, t])
                    continue
                for ray in RAYS[s]:
                    for t in ray:
                        o = owner[t]
                        if o < 0:
                            append([s, t])
                        else:
                            if o != p and (scout_strikes or t == ray[0]):
                                append([s, t])
                            break
            elif r == SCOUT:
                for ray in RAYS[s]:
                    first = True
                    for t in ray:
                        o = owner[t]
                        if o < 0:
                            if not check(p, s, t, False):
                                out.append([s, t])
                        else:
                            if o != p and (first or scout_strikes) and not check(p, s, t, True):
                                out.append([s, t])
                            break
                        first = False
            else:
                for t in NEIGHBOURS[s]:
                    o = owner[t]
                    if o != p and not check(p, s, t, o >= 0):
                        out.append([s, t])
        return out

    def _has_move(self, p: int) -> bool:
        owner, rank = self.owner, self.rank
        back, count = self.shuttle[p][1:3]
        if count < self.rules.shuttle_limit:
            back = EMPTY
        chasing = self.chase[p] is not None and self.rules.more_squares
        for s in self.pieces[p]:
            r = rank[s]
            if r in IMMOVABLE:
                continue
            for t in NEIGHBOURS[s]:
                o = owner[t]
                if o != p and ((not chasing and s != back) or not self._refused(p, s, t, o >= 0)):
                    return True
        # a Scout's longer moves need a free neighbour first, unless ISF 10.2 refuses the
        # neighbours on its line but not the squares beyond: the caller then asks
        # ``legal_moves``
        return False

    def _refused(self, p: int, s: int, t: int, is_strike: bool) -> str | None:
        """Why the geometrically possible move s->t is refused by a repetition rule."""
        a, b, count, first, last = self.shuttle[p]
        if s == b and count >= self.rules.shuttle_limit:
            if t == a:
                return (
                    f"two-squares rule: this piece has moved {count} times in a row between "
                    f"{square_name(a)} and {square_name(b)}"
                )
            if self.rules.scout_lines and on_segment(t, first, last):
                return (
                    f"two-squares rule (ISF 10.2): this Scout has moved {count} times in a "
                    f"row within {square_name(first)}-{square_name(last)}, the squares its "
                    "first move of the series covered"
                )
        seen = self.chase[p]  # None unless p is chasing
        if (
            seen is not None
            and not is_strike
            and self.rules.more_squares
            and not self.evaders[p].isdisjoint(NEIGHBOURS[t])
        ):
            r = self.rank[s]
            if self.zview[p] ^ ZOBRIST[s][p][r] ^ ZOBRIST[t][p][r] in seen:
                back = self.last_move[p]
                if back is None or back[0] != t or back[1] != s:
                    return (
                        "more-squares rule: this chasing move repeats a position your "
                        "moves already created during this chase (only a move straight "
                        "back to the square the piece just came from may)"
                    )
        return None

    def _evades(self, p: int, s: int) -> bool:
        """Whether moving p's piece off s evades the opponent's last move: that move
        ended next to s (a threat), and p answers it at once with the threatened piece."""
        q = 1 - p
        last = self.last_move[q]
        return last is not None and self.owner[last[1]] == q and s in NEIGHBOURS[last[1]]

    def _follow_chases(self, p: int, s: int, t: int, evading: bool, created: int) -> None:
        """The more-squares rule's bookkeeping after p's move s->t (not a strike):
        ``created`` is the position the opponent's previous move created, in its view."""
        q = 1 - p
        # p's own chase goes on while each of its moves threatens an enemy piece
        seen = self.chase[p]
        if seen is not None:
            if any(self.owner[n] == q for n in NEIGHBOURS[t]):
                seen.add(self.zview[p])
            else:
                self._end_chase(p)
        # the opponent's chase of p goes on while p evades: its first position is the
        # one the threatening move created
        if evading:
            if self.chase[q] is None:
                self.chase[q] = {created}
            evaders = self.evaders[q]
            evaders.discard(s)
            evaders.add(t)
        else:
            self._end_chase(q)

    def _end_chase(self, p: int) -> None:
        self.chase[p] = None
        self.evaders[p] = set()

    # --- setup ------------------------------------------------------------------------

    def _do_setup(self, action: Action, events: list[Event]) -> None:
        p = self.player
        raw = action.get("placement")
        if isinstance(raw, dict):
            items = list(raw.items())
        elif isinstance(raw, list) and all(
            isinstance(x, list | tuple) and len(x) == 2 for x in raw
        ):
            items = [tuple(x) for x in raw]
        else:
            raise IllegalAction(
                f"'placement' must map squares to piece names, got {type(raw).__name__}",
                allowed='{"a1": "flag", "b1": "bomb", ...}',
            )
        rows = SETUP_ROWS[p]
        placement: dict[int, int] = {}
        for ref, name in items:
            try:
                s = parse_square(ref)
            except ValueError as exc:
                raise IllegalAction(f"'placement': {exc}") from None
            if s // SIZE not in rows:
                raise IllegalAction(
                    f"{square_name(s)} is outside your setup rows",
                    allowed=f"rows {rows[0] + 1} to {rows[-1] + 1}",
                )
            if s in placement:
                raise IllegalAction(f"{square_name(s)} is given twice")
            if type(name) is not str or name not in RANK_OF:
                raise IllegalAction(f"unknown piece {name!r}", allowed=", ".join(NAMES))
            placement[s] = RANK_OF[name]
        counts: dict[str, int] = {}
        for r in placement.values():
            counts[NAMES[r]] = counts.get(NAMES[r], 0) + 1
        army = self.rules.army
        wrong = [
            f"{name} {counts.get(name, 0)} (expected {army.get(name, 0)})"
            for name in sorted(set(counts) | set(army))
            if counts.get(name, 0) != army.get(name, 0)
        ]
        if wrong:
            raise IllegalAction(
                "wrong pieces: " + ", ".join(wrong),
                allowed=", ".join(f"{n} {name}" for name, n in army.items()),
            )
        if self.rules.fill_setup_rows and len(placement) != len(rows) * SIZE:
            raise IllegalAction(
                f"{len(placement)} squares filled; every square of your "
                f"{len(rows)} setup rows must hold a piece"
            )
        next_id = p * 100
        for s, r in sorted(placement.items()):
            self._put(s, p, r, next_id)
            next_id += 1
        events.append({"e": "setup", "p": p, "pieces": len(placement)})
        if p == 0:
            self.player = 1
        else:
            self.phase = PLAY
            self.player = 0
            self._check_stuck(events)

    def _put(self, s: int, p: int, r: int, piece_id: int) -> None:
        self._moves = None
        self.rank[s] = r
        self.owner[s] = p
        self.pid[s] = piece_id
        self.pieces[p].add(s)
        self._toggle(s, p, r)

    # --- moves ------------------------------------------------------------------------

    def _square(self, action: Action, key: str) -> int:
        try:
            return parse_square(action.get(key))
        except ValueError as exc:
            raise IllegalAction(f"{key!r}: {exc}") from None

    def _do_move(self, action: Action, events: list[Event]) -> None:
        s = action.get("from")
        if type(s) is not int or not 0 <= s < SQUARES:  # the common case: an index
            s = self._square(action, "from")
        t = action.get("to")
        if type(t) is not int or not 0 <= t < SQUARES:
            t = self._square(action, "to")
        p = self.player
        rank, owner = self.rank, self.owner
        if owner[s] != p:
            raise IllegalAction(
                f"no piece of yours on {square_name(s)}",
                allowed="a square holding one of your movable pieces",
            )
        r = rank[s]
        if r in IMMOVABLE:
            raise IllegalAction(f"the {NAMES[r]} on {square_name(s)} never moves")
        if t in LAKES:
            raise IllegalAction(f"{square_name(t)} is a lake")
        if owner[t] == p:
            raise IllegalAction(f"{square_name(t)} holds your own piece")
        is_strike = owner[t] >= 0
        if t not in NEIGHBOURS[s]:
            if r != SCOUT:
                raise IllegalAction(
                    f"the {NAMES[r]} moves one square forward, backward or sideways",
                    allowed=", ".join(square_name(n) for n in NEIGHBOURS[s]),
                )
            if not in_line(s, t):
                raise IllegalAction("a Scout moves in a straight line, never diagonally")
            blocked = [q for q in between(s, t) if owner[q] >= 0 or q in LAKES]
            if blocked:
                raise IllegalAction(
                    f"the Scout cannot pass {square_name(blocked[0])}: a Scout moves "
                    "over empty squares only"
                )
            if is_strike and not self.rules.scout_move_and_strike:
                raise IllegalAction(
                    "under these rules a Scout may not move and strike in the same turn",
                    allowed="strike an adjacent piece, or move to an empty square",
                )
        b = self.shuttle[p][1]
        if s == b or self.chase[p] is not None:  # else no repetition rule applies
            why = self._refused(p, s, t, is_strike)
            if why:
                raise IllegalAction(why, allowed="another move")
        # --- legal: apply it ---
        follow = self.rules.more_squares and not is_strike
        evading = follow and self._evades(p, s)
        created = self.zview[1 - p]
        self.shuttle[p] = next_shuttle(self.shuttle[p], s, t, self.rules.scout_lines)
        self.ply += 1
        if is_strike:
            d = rank[t]
            outcome = strike(r, d)
            entry = {
                "p": p,
                "from": s,
                "to": t,
                "attacker": NAMES[r],
                "defender": NAMES[d],
                "result": RESULT_NAMES[outcome],
            }
            self.history.append(entry)
            if not self._quiet:
                events.append({"e": "strike", **entry})
            mover_id = self.pid[s]
            far = t not in NEIGHBOURS[s]
            if outcome >= 0:
                self._remove(t)
            if outcome <= 0:
                self._remove(s)
            if outcome == 1:
                self._relocate(s, t, far)
                self.revealed[t] = True
            elif outcome == -1:
                self.revealed[t] = True
            self.last_move[p] = (s, t, True)
            if d == FLAG:
                self._finish(
                    Result(
                        EndReason.VICTORY,
                        (1, 2) if p == 0 else (2, 1),
                        f"seat {p} captured the flag",
                    ),
                    events,
                )
                return
            landed = t if outcome == 1 else EMPTY
        else:
            far = t not in NEIGHBOURS[s]
            mover_id = self.pid[s]
            self._relocate(s, t, far)
            entry = {"p": p, "from": s, "to": t}
            self.history.append(entry)
            if not self._quiet:
                events.append({"e": "move", **entry})
            self.last_move[p] = (s, t, False)
            landed = t
        if follow:
            self._follow_chases(p, s, t, evading, created)
        elif is_strike and self.rules.more_squares:
            # a strike takes a piece off the board: no earlier position can come back
            self._end_chase(0)
            self._end_chase(1)
        if landed >= 0 and self.rules.rescue and self._can_rescue(p, landed, mover_id):
            self._rescuer = mover_id
            self.phase = RESCUE
            return
        self._next_turn(events)

    def _relocate(self, s: int, t: int, far: bool) -> None:
        p, r = self.owner[s], self.rank[s]
        # the piece leaves s for t in both players' views (as _toggle twice)
        zview = self.zview
        zview[p] ^= ZOBRIST[s][p][r] ^ ZOBRIST[t][p][r]
        zview[1 - p] ^= ZOBRIST[s][p][HIDDEN] ^ ZOBRIST[t][p][HIDDEN]
        self.rank[t], self.owner[t], self.pid[t] = r, p, self.pid[s]
        self.moved[t] = True
        self.far[t] = self.far[s] or far
        self.revealed[t] = self.revealed[s]
        self.pieces[p].discard(s)
        self.pieces[p].add(t)
        self._clear(s)

    def _remove(self, s: int) -> None:
        p, r = self.owner[s], self.rank[s]
        self._toggle(s, p, r)
        self.captured[p].append(r)
        self.pieces[p].discard(s)
        self._clear(s)

    def _toggle(self, s: int, p: int, r: int) -> None:
        """Add or remove a piece of ``p`` with rank ``r`` on ``s`` in both players' views."""
        self.zview[p] ^= ZOBRIST[s][p][r]
        self.zview[1 - p] ^= ZOBRIST[s][p][HIDDEN]

    def _clear(self, s: int) -> None:
        self._moves = None
        self.rank[s] = self.owner[s] = self.pid[s] = EMPTY
        self.moved[s] = self.far[s] = self.revealed[s] = False

    def _next_turn(self, events: list[Event]) -> None:
        self.phase = PLAY
        self.player = 1 - self.player
        limit = self.rules.turn_limit
        if limit and self.ply >= limit:
            self._finish(
                Result(EndReason.TURN_LIMIT, (1, 1), f"turn limit of {limit} moves reached"), events
            )
            return
        self._check_stuck(events)

    def _check_stuck(self, events: list[Event]) -> None:
        p = self.player
        moves = self.legal_moves(p)
        if moves:  # kept for the decision's options, which nearly every bot reads
            self._moves = (p, moves)
            return
        if self._has_move(1 - p) or self.legal_moves(1 - p):
            places = (2, 1) if p == 0 else (1, 2)
            self._finish(
                Result(EndReason.NO_MOVES, places, f"seat {p} has no legal move or strike"), events
            )
        else:
            self._finish(Result(EndReason.DRAW, (1, 1), "neither side can move"), events)

    # --- the rescue rule ----------------------------------------------------------------

    def _can_rescue(self, p: int, square: int, mover_id: int) -> bool:
        rules = self.rules
        return (
            rules.rescue
            and square // SIZE == BACK_ROW[1 - p]
            and self.rank[square] != SCOUT
            and self.rescues[p] < 2
            and mover_id not in self.rescuers[p]
            and bool(self._rescuable(p))
            and bool(self._rescue_squares(p))
        )

    def _rescuable(self, p: int) -> list[str]:
        return sorted({NAMES[r] for r in self.captured[p] if r != BOMB})

    def _rescue_squares(self, p: int) -> list[int]:
        return [
            r * SIZE + c
            for r in HALF_ROWS[p]
            for c in range(SIZE)
            if r * SIZE + c not in LAKES and self.owner[r * SIZE + c] < 0
        ]

    def _do_rescue(self, action: Action, events: list[Event]) -> None:
        p = self.player
        name = action.get("piece")
        if name not in self._rescuable(p):
            raise IllegalAction(
                f"cannot rescue {name!r}", allowed=", ".join(self._rescuable(p)) or "nothing"
            )
        s = self._square(action, "square")
        if s not in self._rescue_squares(p):
            raise IllegalAction(f"{square_name(s)} is not an empty square of your half")
        r = RANK_OF[name]
        self.captured[p].remove(r)
        self._put(s, p, r, 1000 + len(self.history))
        self.revealed[s] = True  # its rank became known when it was captured
        self.rescues[p] += 1
        self.rescuers[p].add(self._rescuer)
        entry = {"p": p, "rescue": name, "square": s}
        self.history.append(entry)
        events.append({"e": "rescue", **entry})
        self._next_turn(events)

    def _do_no_rescue(self, action: Action, events: list[Event]) -> None:
        self._next_turn(events)

    # --- the referee's interface --------------------------------------------------------

    def forfeit(self, seat: int) -> list[Event]:
        if self._result is not None or seat not in (0, 1):
            return []
        events: list[Event] = [{"e": "forfeit", "p": seat}]
        self._finish(
            Result(EndReason.FORFEIT, (2, 1) if seat == 0 else (1, 2), f"seat {seat} forfeited"),
            events,
        )
        return events

    def default_action(self) -> Action:
        """A random guarded setup (the flag on the back row) from the match's secret
        generator; the first legal move; no rescue."""
        if self.phase == SETUP:
            opts = self.legal_options()
            rng = SecureRandom(self.fallback_seeds[self.player], "fallback-setup")
            return guarded_setup(opts["squares"], opts["army"], rng)
        if self.phase == PLAY:
            s, t = min(self.legal_moves(self.player))
            return {"type": "move", "from": s, "to": t}
        if self.phase == RESCUE:
            return {"type": "no_rescue"}
        raise IllegalAction("the game is over: no action is due")

    def _finish(self, result: Result, events: list[Event]) -> None:
        self._result = result
        self.phase = GAME_OVER
        events.append(
            {"e": "game_over", "reason": result.reason.value, "places": list(result.places)}
        )


_HANDLERS: dict[str, Callable[[StrategoState, Action, list[Event]], None]] = {
    "setup": StrategoState._do_setup,
    "move": StrategoState._do_move,
    "rescue": StrategoState._do_rescue,
    "no_rescue": StrategoState._do_no_rescue,
}
