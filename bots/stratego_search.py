"""The search bot for Stratego: determinized Monte Carlo over a few candidate moves,
on positions sampled from what its observation lets it believe.

**Why search on sampled positions.** Stratego hides ranks, not squares: what a move
is worth depends on what the enemy pieces around it are, and the observation says
which they can be (see :mod:`arena.bots._stratego_belief`: revealed ranks, moved
pieces are no bombs, far-movers are Scouts, the remaining army). A fixed rule such as
the heuristic bot's "strike what you know you beat, probe with Scouts" sees only the
revealed pieces; a search over sampled positions weighs every strike on an unknown
piece by how often the belief says it wins, and sees the reply the strike invites.
Plain information-set MCTS with random rollouts learns little at a small budget in a
game of several hundred moves: random play is too far from real play for its
outcomes to say anything. Here every sample is played a few moves on by a fast
version of the heuristic policy for both sides (which knows what each side knows:
its own ranks and the other's revealed ones), then scored by a static evaluation.

**A decision.** The legal moves are scored by that policy (the prior); the best
``CANDIDATES`` of them are searched, and up to ``DEFEND`` moves that strike or close in
on an enemy piece near the bot's flag (the prior knows nothing of defending). One
iteration draws a full position from the belief, and for every candidate (common random
numbers: the same position and the same rollout seed) plays the candidate, then
``DEPTH`` plies of the policy for both sides, and evaluates the position: material by
rank value (the last two Miners worth more), the information each side has given away,
how far its movable pieces have come and how near the (sampled) enemy flag (only its
Miners, when bombs alone stand beside the flag), a raider within a few squares of a
flag as an urgent matter, in an endgame how near its hunters are to the enemy's pieces
they beat, and a win or a loss outright. The candidate with the best mean is played.

**Budget.** ``iterations`` (default :data:`DEFAULT_ITERATIONS`) samples per move; with a
fixed budget and seed the bot plays the same game every time. ``time_ms`` (optional,
for live play under a clock) stops a search early when it runs out; decisions then
depend on the machine's speed. Setup and rescue decisions need no search: the setup
is the heuristic bot's guarded one, a rescue brings back the strongest piece.
"""

from __future__ import annotations

import random
import time
from typing import Any

from arena.bots._stratego_belief import Belief
from arena.bots.stratego_heuristic import HeuristicStrategoBot
from arena.games.stratego.board import NEIGHBOURS, SIZE
from arena.games.stratego.pieces import BOMB, FLAG, MARSHAL, MINER, RANK_OF, SCOUT, SPY
from arena.games.stratego.state import RESCUE, StrategoState

DEFAULT_ITERATIONS = 12
#: moves searched a decision (the best by the policy's prior)
CANDIDATES = 6
#: plies of the policy played after a candidate, before the evaluation
DEPTH = 6

HIGH = frozenset({RANK_OF["marshal"], RANK_OF["general"]})
#: what each rank is worth on the board (the flag's loss ends the game)
VALUE = (0.0, 3.0, 1.5, 3.0, 2.0, 2.5, 3.5, 5.0, 7.0, 9.0, 12.0, 1.0)
WIN = 1000.0
#: the worth of a square closer to the (sampled) enemy flag, for the nearest movable piece
FLAG_PULL = 0.3
#: a piece this near a flag (squares) that can take it is worth FLAG_RUSH times the
#: square of the squares it is inside this distance: a raid on a flag is urgent
RUSH_FROM = 4
FLAG_RUSH = 1.0
#: the extra worth of each of the last two Miners (they take the bombs round a flag)
MINER_SCARCE = 3.0
#: the worth of a square closer, on average, to the enemy's movable pieces (endgames)
HUNT = 0.5
HUNT_PIECES = 8
#: searched moves that defend the flag, beyond the prior's best (0: none)
DEFEND = 4
#: an enemy piece this close to the flag (squares, orthogonally) is a raider
RAID_DISTANCE = 4


def move_score(st: StrategoState, p: int, s: int, t: int) -> float:
    """The fast heuristic policy's score of p's move s->t, from what p knows: its own
    ranks, the enemy's revealed ones, and that a far-mover is a Scout."""
    rank, owner, revealed = st.rank, st.owner, st.revealed
    mine = rank[s]
    forward = (t // SIZE - s // SIZE) * (1 if p == 0 else -1)
    score = 0.5 * forward if mine in HIGH else 1.5 * forward
    q = 1 - p
    if owner[t] == q:  # a strike
        if revealed[t] or st.far[t]:
            theirs = rank[t] if revealed[t] else SCOUT
            if theirs == FLAG:
                return 10_000.0
            if theirs == BOMB:
                return score + (50.0 if mine == MINER else -100.0)
            if mine == SPY and theirs == MARSHAL:
                return score + 110.0
            if mine > theirs:
                return score + 100.0 + theirs
            if mine == theirs:
                return score + 5.0 - mine
            return score - 100.0
        if mine == SCOUT:
            return score + 20.0
        if mine == MINER and not st.moved[t]:
            return score + 15.0
        if mine in HIGH:
            return score - (40.0 if not st.moved[t] else 5.0)
        return score + 8.0 - mine
    # flee a revealed stronger enemy, do not walk into one: a bomb (or the flag) never
    # strikes, so standing next to one is no danger (and is how a Miner digs to a flag)
    for n in NEIGHBOURS[s]:
        if owner[n] == q and revealed[n] and rank[n] < BOMB and _beats(rank[n], mine):
            score += 30.0
    for n in NEIGHBOURS[t]:
        if owner[n] == q and n != s:
            if revealed[n]:
                if rank[n] == BOMB:
                    score += 10.0 if mine == MINER else 0.0
                else:
                    score += -50.0 if _beats(rank[n], mine) else 10.0
            elif mine == SCOUT or mine <= RANK_OF["sergeant"] + 1:
                score += 3.0
    return score


def defence(st: StrategoState, me: int, moves: list[list[int]]) -> list[int]:
    """The moves (indices) that strike or close in on an enemy piece near ``me``'s
    flag: the heuristic prior knows nothing of defending, so they are searched too."""
    rank, owner = st.rank, st.owner
    flag = next((s for s in st.pieces[me] if rank[s] == FLAG), -1)
    if flag < 0:
        return []
    fr, fc = divmod(flag, SIZE)
    raiders = [
        s for s in st.pieces[1 - me] if abs(s // SIZE - fr) + abs(s % SIZE - fc) <= RAID_DISTANCE
    ]
    if not raiders:
        return []
    out = []
    for i, (_, t) in enumerate(moves):
        if owner[t] == 1 - me and t in raiders:
            out.append(i)
            continue
        tr, tc = divmod(t, SIZE)
        if any(abs(r // SIZE - tr) + abs(r % SIZE - tc) <= 1 for r in raiders):
            out.append(i)
    return out


def _beats(attacker: int, defender: int) -> bool:
    """Whether a movable ``attacker`` wins striking ``defender``."""
    if defender == BOMB:
        return attacker == MINER
    if attacker == SPY and defender == MARSHAL:
        return True
    return attacker > defender


def policy_move(st: StrategoState, rng: random.Random) -> list[int]:
    """The fast heuristic policy's move for the player to move (ties broken by ``rng``)."""
    p = st.player
    best: list[int] = []
    best_score = -1e18
    rand = rng.random
    for move in st.legal_options()["moves"]:
        score = move_score(st, p, move[0], move[1]) + rand()
        if score > best_score:
            best_score, best = score, move
    return best


def rollout(st: StrategoState, plies: int, rng: random.Random) -> None:
    """Play ``plies`` moves of the policy for both sides (a rescue is declined)."""
    for _ in range(plies):
        if st.terminal:
            return
        p = st.player
        if st.phase == RESCUE:
            st.simulate(p, {"type": "no_rescue"})
            continue
        s, t = policy_move(st, rng)
        st.simulate(p, {"type": "move", "from": s, "to": t})


def evaluate(st: StrategoState, me: int) -> float:
    """The position's worth to ``me``: a win or loss outright; else material, less
    a share of the worth of the pieces each side has revealed, plus how far each
    side's movable pieces have advanced."""
    result = st.result()
    if result is not None:
        places = result.places
        if places[me] < places[1 - me]:
            return WIN
        if places[me] > places[1 - me]:
            return -WIN
        return 0.0
    rank, revealed = st.rank, st.revealed
    total = 0.0
    flags = [-1, -1]
    for p in (0, 1):
        for s in st.pieces[p]:
            if rank[s] == FLAG:
                flags[p] = s
    owner = st.owner
    for p in (0, 1):
        sign = 1.0 if p == me else -1.0
        home = 0 if p == 0 else 9
        worth = 0.0
        target = flags[1 - p]
        tr, tc = divmod(target, SIZE)
        # a flag with only bombs (and the edge, and lakes) beside it: only a Miner gets
        # to it, so only Miners count as near it
        enclosed = all(owner[n] == 1 - p and rank[n] == BOMB for n in NEIGHBOURS[target])
        near = 20
        miners = 0
        for s in st.pieces[p]:
            r = rank[s]
            v = VALUE[r]
            worth += v * 0.85 if revealed[s] else v
            if r != BOMB and r != FLAG:
                row, col = divmod(s, SIZE)
                worth += 0.02 * abs(row - home)
                if r == MINER:
                    miners += 1
                elif enclosed:
                    continue
                d = abs(row - tr) + abs(col - tc)
                if d < near:
                    near = d
        # the two Miners a side keeps longest are worth more (whatever the count: a
        # bonus only once two were left made the third Miner's loss a gain)
        worth += MINER_SCARCE * min(miners, 2)
        worth -= FLAG_PULL * near
        if near < RUSH_FROM:  # a piece about to take the flag: deal with it now
            worth += FLAG_RUSH * (RUSH_FROM - near) ** 2
        total += sign * worth
    if HUNT:
        total -= HUNT * _hunt_distance(st, me)
    return total


def _hunt_distance(st: StrategoState, me: int) -> float:
    """In an endgame (at most ``HUNT_PIECES`` enemy movable pieces), the mean distance
    from each enemy movable piece to the nearest of ``me``'s pieces that beats it."""
    rank = st.rank
    prey = [s for s in st.pieces[1 - me] if rank[s] != BOMB and rank[s] != FLAG]
    if not prey or len(prey) > HUNT_PIECES:
        return 0.0
    hunters = [(s, rank[s]) for s in st.pieces[me] if rank[s] != BOMB and rank[s] != FLAG]
    total = 0
    for t in prey:
        tr, tc = divmod(t, SIZE)
        r = rank[t]
        best = 20
        for s, h in hunters:
            if h > r or (h == SPY and r == MARSHAL):
                d = abs(s // SIZE - tr) + abs(s % SIZE - tc)
                if d < best:
                    best = d
        total += best
    return total / len(prey)


class StrategoSearchBot(HeuristicStrategoBot):
    """Searches its moves; sets up and rescues as the heuristic bot does."""

    def __init__(
        self,
        seat: int = 0,
        seed: int | None = None,
        iterations: int = DEFAULT_ITERATIONS,
        time_ms: float | None = None,
        candidates: int = CANDIDATES,
        depth: int = DEPTH,
    ) -> None:
        if iterations < 1:
            raise ValueError(f"iterations must be at least 1, got {iterations}")
        super().__init__(seat, seed)
        self.iterations = iterations
        self.time_ms = time_ms
        self.candidates = candidates
        self.depth = depth
        #: rollouts played and searched decisions, for benchmarks
        self.simulations = 0
        self.searches = 0

    def choose_move(self, obs: dict[str, Any], moves: list[list[int]]) -> tuple[int, int]:
        if len(moves) == 1:
            return moves[0][0], moves[0][1]
        moves = sorted(moves)  # the same moves in any order: the same decision
        me = obs["seat"]
        belief = Belief.from_observation(obs)
        template = belief.template
        prior = [move_score(template, me, s, t) for s, t in moves]
        order = sorted(range(len(moves)), key=lambda i: (-prior[i], i))
        chosen = order[: self.candidates]
        if DEFEND:
            urgent = set(defence(template, me, moves))
            chosen += [i for i in order[self.candidates :] if i in urgent][:DEFEND]
        top = [moves[i] for i in chosen]
        if prior[order[0]] >= 10_000.0 or len(top) == 1:  # the flag, known: take it
            return top[0][0], top[0][1]
        self.searches += 1
        totals = [0.0] * len(top)
        deadline = None if self.time_ms is None else time.process_time() + self.time_ms / 1000
        for _ in range(self.iterations):
            sample = belief.sample(self.rng)
            seed = self.rng.getrandbits(64)
            for i, (s, t) in enumerate(top):
                st = sample.clone()
                st.simulate(me, {"type": "move", "from": s, "to": t})
                rollout(st, self.depth, random.Random(seed))
                totals[i] += evaluate(st, me)
                self.simulations += 1
            if deadline is not None and time.process_time() > deadline:
                break
        best = max(range(len(top)), key=lambda i: (totals[i], -i))
        return top[best][0], top[best][1]


def main(argv: list[str] | None = None) -> None:
    """``python -m arena.bots.stratego_search``: the house bot ``search`` for Stratego as
    its own process, with its budget as options (``arena bot run search`` plays the
    default budget)."""
    from arena.sdk.house import run_search_bot

    run_search_bot(
        "stratego_search",
        DEFAULT_ITERATIONS,
        "sampled positions a move",
        ("--time-ms", "CPU milliseconds a move at most (default none: the iterations alone)"),
        StrategoSearchBot,
        argv,
    )


if __name__ == "__main__":  # python -m arena.bots.stratego_search --referee HOST:PORT --token T
    main()
