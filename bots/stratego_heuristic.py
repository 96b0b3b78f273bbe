"""A heuristic Stratego bot: a guarded flag, probing Scouts, and strikes it knows it wins.

Setup: the flag on the back row, bombs beside and in front of it, Scouts in front.
Each move is scored: capturing a flag or striking a revealed piece it beats scores
high; striking a revealed piece that beats it scores very low; Scouts probe unknown
pieces; Miners go for unmoved pieces (maybe bombs); the Marshal and General avoid
unknown pieces; a piece next to a revealed stronger enemy gets away; advancing is
slightly preferred. Ties are broken by the seeded generator.
"""

from __future__ import annotations

import random
from typing import Any

from arena.engine import Decision
from arena.games.stratego.board import NEIGHBOURS, SIZE
from arena.games.stratego.pieces import FLAG, MINER, RANK_OF, SCOUT, strike

HIGH = {RANK_OF["marshal"], RANK_OF["general"]}


def guarded_setup(rng: random.Random, options: dict[str, Any], seat: int) -> dict[str, Any]:
    squares = options["squares"]
    back = 0 if seat == 0 else 9
    front_step = 1 if seat == 0 else -1
    army = [name for name, n in options["army"].items() for _ in range(n)]
    placement: dict[int, str] = {}
    flag_col = rng.randrange(SIZE)
    flag = back * SIZE + flag_col
    placement[flag] = "flag"
    army.remove("flag")
    guards = [flag + front_step * SIZE] + [flag + d for d in (-1, 1) if 0 <= flag_col + d < SIZE]
    for g in guards:
        if "bomb" in army:
            placement[g] = "bomb"
            army.remove("bomb")
    free = [s for s in squares if s not in placement]
    front_row = back + 3 * front_step
    scouts = [a for a in army if a == "scout"]
    others = [a for a in army if a != "scout"]
    rng.shuffle(free)
    free.sort(key=lambda s: 0 if s // SIZE == front_row else 1)  # front row first
    rng.shuffle(others)
    for s, name in zip(free, scouts + others, strict=False):
        placement[s] = name
    return {"type": "setup", "placement": {str(s): n for s, n in placement.items()}}


def rescue_choice(seat: int, options: dict[str, Any]) -> dict[str, Any]:
    """The highest piece that can be rescued, onto the offered square farthest from the
    back row (the nearest the enemy; the highest-numbered of equals)."""
    best = max(options["pieces"], key=lambda name: RANK_OF[name])
    back = 0 if seat == 0 else 9
    square = max(options["squares"], key=lambda s: (abs(s // SIZE - back), s))
    return {"type": "rescue", "piece": best, "square": square}


class HeuristicStrategoBot:
    def __init__(self, seat: int = 0, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def decide(self, obs: dict[str, Any], decision: Decision) -> dict[str, Any]:
        kind = decision.kind
        opts = decision.options
        if kind == "setup":
            return guarded_setup(self.rng, opts, obs["seat"])
        if kind == "rescue":
            return rescue_choice(obs["seat"], opts)
        if kind == "move":
            s, t = self.choose_move(obs, opts["moves"])
            return {"type": "move", "from": s, "to": t}
        raise ValueError(f"{type(self).__name__}: unknown decision {kind!r}")

    def choose_move(self, obs: dict[str, Any], moves: list[list[int]]) -> tuple[int, int]:
        """The move to play (a subclass may choose otherwise: the search bot shares this
        bot's setup and rescue)."""
        board = obs["board"]
        seat = obs["seat"]
        best_score = None
        best = (-1, -1)
        for s, t in moves:
            score = self._score(board, seat, s, t) + self.rng.random()
            if best_score is None or score > best_score:
                best_score, best = score, (s, t)
        return best

    def _score(self, board: list[Any], seat: int, s: int, t: int) -> float:
        mine = RANK_OF[board[s]["rank"]]
        target = board[t]
        forward = (t // SIZE - s // SIZE) * (1 if seat == 0 else -1)
        score = 1.5 * forward if mine not in HIGH else 0.5 * forward
        if target is not None:  # a strike
            if target["rank"] is not None:
                theirs = RANK_OF[target["rank"]]
                if theirs == FLAG:
                    return 10_000.0
                outcome = strike(mine, theirs)
                score += {1: 100 + theirs, 0: 5 - mine, -1: -100}[outcome]
            elif mine == SCOUT:
                score += 20
            elif mine == MINER and not target["moved"]:
                score += 15
            elif mine in HIGH:
                score -= 40 if not target["moved"] else 5
            else:
                score += 8 - mine
            return score
        # a plain move: flee from revealed stronger enemies, do not walk into them
        for n in NEIGHBOURS[s]:
            e = board[n]
            if (
                e
                and e["owner"] != seat
                and e["rank"] is not None
                and strike(RANK_OF[e["rank"]], mine) == 1
            ):
                score += 30
        for n in NEIGHBOURS[t]:
            e = board[n]
            if e and e["owner"] != seat and n != s:
                if e["rank"] is not None:
                    theirs = RANK_OF[e["rank"]]
                    score += -50 if strike(theirs, mine) == 1 else 10
                elif mine == SCOUT or mine <= RANK_OF["sergeant"] + 1:
                    score += 3  # cheap pieces go and find out
        return score


if __name__ == "__main__":  # python -m arena.bots.stratego_heuristic --referee HOST:PORT --token T
    from arena.sdk.house import main

    main("heuristic")
