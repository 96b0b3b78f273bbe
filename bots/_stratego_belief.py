"""What a Stratego bot may believe of the enemy's hidden pieces, and full states drawn
from that belief (determinization).

A search plays forward, so it needs whole states; an observation shows where every
enemy piece stands but not what it is. Everything here comes from the bot's own
observation, never from a true state:

- a revealed enemy piece is what it was shown to be;
- an enemy piece that has moved is neither a bomb nor the flag;
- one that moved more than one square in a line (``moved_far``) is a Scout;
- the enemy's remaining army is its rule set's army less what it has lost
  (``captured``) and less its revealed pieces still standing.

:meth:`Belief.sample` assigns that remaining army to the unrevealed enemy pieces by a
constrained random draw: Scouts to the far-movers first, then movable ranks to the
other moved pieces, then the flag, the bombs and what is left to the pieces that have
never moved. The flag is drawn with more weight on the enemy's back rows and the bombs
with more weight next to the drawn flag: where a guarded flag usually stands. Every
draw respects the counts, so each sample is a position the game could really be in.

:meth:`Belief.state` builds a full :class:`StrategoState` from a sample with the
engine's own setters (``_put``), so every rule (strikes, the two-squares rule, the
rescue rule, the end of the game) is the engine's, not a copy of it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from functools import cache
from typing import Any

from arena.games.stratego.board import BACK_ROW, NEIGHBOURS, SIZE
from arena.games.stratego.pieces import (
    BARRAGE_ARMY,
    BOMB,
    CLASSIC_ARMY,
    FLAG,
    IMMOVABLE,
    RANK_OF,
    SCOUT,
)
from arena.games.stratego.state import PLAY, StrategoRules, StrategoState, next_shuttle
from arena.plugins import load_registry

#: the weight of a never-moved piece on the enemy's back row, and on the row before it,
#: to be the flag (other rows weigh 1)
FLAG_WEIGHT_BACK, FLAG_WEIGHT_NEXT = 6.0, 2.0
#: the weight of a never-moved piece next to the sampled flag to be a bomb
BOMB_WEIGHT_GUARD = 5.0


@cache
def rules_for(name: str, rescue: bool) -> StrategoRules:
    """The rules an observation's ``rules`` name stands for, through the game plugin
    and its variants (no turn limit: samples are searched a few moves ahead only)."""
    registry = load_registry()
    game = registry.game("stratego")
    variants = [] if name == "classic" else [registry.variant("stratego", name)]
    rules: StrategoRules = game.rules_for({"rescue": "on" if rescue else "off"}, variants)
    rules.turn_limit = 0
    return rules


def army_of(rules_name: str) -> dict[str, int]:
    return dict(BARRAGE_ARMY if rules_name == "barrage" else CLASSIC_ARMY)


@dataclass
class Belief:
    """One observation's facts about the enemy's unrevealed pieces."""

    me: int
    #: the enemy's unrevealed pieces by square, split by what is known of them
    far: list[int]
    moved: list[int]
    still: list[int]
    #: ranks still to assign to those pieces (the remaining army, unrevealed part)
    pool: dict[int, int]
    #: the state every sample starts from: the board with the enemy's unrevealed pieces
    #: as placeholders (rank SCOUT, never looked at by the search's policies)
    template: StrategoState

    @classmethod
    def from_observation(cls, obs: dict[str, Any]) -> Belief:
        me = obs["seat"]
        enemy = 1 - me
        board = obs["board"]
        pool = {RANK_OF[n]: c for n, c in army_of(obs["rules"]).items()}
        for name in obs["captured"][enemy]:
            pool[RANK_OF[name]] -= 1
        far: list[int] = []
        moved: list[int] = []
        still: list[int] = []
        for s, piece in enumerate(board):
            if piece is None or piece["owner"] != enemy:
                continue
            if piece["rank"] is not None:
                pool[RANK_OF[piece["rank"]]] -= 1
            elif piece["moved_far"]:
                far.append(s)
            elif piece["moved"]:
                moved.append(s)
            else:
                still.append(s)
        if any(n < 0 for n in pool.values()):
            raise ValueError(f"the observation shows more enemy pieces than its army: {pool}")
        return cls(me, far, moved, still, pool, build_template(obs))

    @property
    def unknown(self) -> list[int]:
        return self.far + self.moved + self.still

    def assign(self, rng: random.Random) -> dict[int, int]:
        """One constrained random draw: square to rank for every unrevealed enemy piece."""
        pool = [r for r, n in sorted(self.pool.items()) for _ in range(n)]
        out: dict[int, int] = {}
        for s in self.far:  # a far-mover is a Scout
            pool.remove(SCOUT)
            out[s] = SCOUT
        movable = [r for r in pool if r not in IMMOVABLE]
        fixed = [r for r in pool if r in IMMOVABLE]
        rng.shuffle(movable)
        for s in self.moved:  # a moved piece is neither bomb nor flag
            out[s] = movable.pop()
        still = self.still[:]
        back = BACK_ROW[1 - self.me]
        step = 1 if back == 0 else -1
        if FLAG in fixed:
            weights = [
                FLAG_WEIGHT_BACK
                if s // SIZE == back
                else FLAG_WEIGHT_NEXT
                if s // SIZE == back + step
                else 1.0
                for s in still
            ]
            flag = rng.choices(still, weights)[0]
            out[flag] = FLAG
            still.remove(flag)
            guards = set(NEIGHBOURS[flag])
            for _ in range(fixed.count(BOMB)):
                weights = [BOMB_WEIGHT_GUARD if s in guards else 1.0 for s in still]
                bomb = rng.choices(still, weights)[0]
                out[bomb] = BOMB
                still.remove(bomb)
        else:  # no flag left to place (a sample after the game's end): bombs anywhere
            rng.shuffle(still)
            for _ in range(fixed.count(BOMB)):
                out[still.pop()] = BOMB
        rng.shuffle(still)
        for s, r in zip(still, movable, strict=True):
            out[s] = r
        return out

    def sample(self, rng: random.Random) -> StrategoState:
        """A full state consistent with the observation, its hidden ranks drawn from
        ``rng``."""
        st = self.template.clone()
        enemy = 1 - self.me
        for s, r in self.assign(rng).items():
            # the placeholder leaves both players' position hashes, the drawn rank enters
            st._toggle(s, enemy, st.rank[s])
            st.rank[s] = r
            st._toggle(s, enemy, r)
        return st


def build_template(obs: dict[str, Any]) -> StrategoState:
    """A StrategoState with the observation's board, history and counts; the enemy's
    unrevealed pieces stand as Scouts until a sample draws them."""
    rules = rules_for(obs["rules"], any(obs["rescues_left"]))
    st = StrategoState(rules, 0)
    for s, piece in enumerate(obs["board"]):
        if piece is None:
            continue
        p = piece["owner"]
        rank = RANK_OF[piece["rank"]] if piece["rank"] is not None else SCOUT
        st._put(s, p, rank, p * 100 + s)
        st.moved[s] = piece["moved"]
        st.far[s] = piece["moved_far"]
        st.revealed[s] = piece["revealed"]
    st.captured = [[RANK_OF[n] for n in lost] for lost in obs["captured"]]
    st.history = [dict(e) for e in obs["history"]]
    st.ply = obs["ply"]
    st.phase = PLAY
    st.player = obs["current_player"]
    st.rescues = [2 - left for left in obs["rescues_left"]] if rules.rescue else [0, 0]
    # the two-squares rule's count and each player's last move, from the public log
    for entry in st.history:
        if "from" not in entry:
            continue
        p, s, t = entry["p"], entry["from"], entry["to"]
        st.shuttle[p] = next_shuttle(st.shuttle[p], s, t, rules.scout_lines)
        st.last_move[p] = (s, t, "result" in entry)
    return st
