"""A textbook Stratego random-vs-random game, as a reference measured in the same run.

What a straightforward Python engine looks like: a 2-D list board of (owner, rank)
tuples, all legal moves generated every ply, a random choice, strikes resolved; no
repetition rules, no observations, no replay, no validation of a bot's move.
"""

from __future__ import annotations

import random

from arena.games.stratego.pieces import BOMB, CLASSIC_ARMY, FLAG, RANK_OF, strike

LAKES = {(4, 2), (4, 3), (5, 2), (5, 3), (4, 6), (4, 7), (5, 6), (5, 7)}
DIRECTIONS = ((1, 0), (-1, 0), (0, 1), (0, -1))


def play_random_game(seed: int, max_plies: int = 3000) -> int:
    """Play one classic random game; returns the number of plies."""
    rng = random.Random(seed)
    board: list[list[tuple[int, int] | None]] = [[None] * 10 for _ in range(10)]
    army = [RANK_OF[name] for name, n in CLASSIC_ARMY.items() for _ in range(n)]
    for player, rows in ((0, range(0, 4)), (1, range(6, 10))):
        ranks = army[:]
        rng.shuffle(ranks)
        squares = [(r, c) for r in rows for c in range(10)]
        for (r, c), rank in zip(squares, ranks, strict=True):
            board[r][c] = (player, rank)
    player = 0
    for ply in range(max_plies):
        moves = []
        for r in range(10):
            for c in range(10):
                piece = board[r][c]
                if piece is None or piece[0] != player or piece[1] in (BOMB, FLAG):
                    continue
                for dr, dc in DIRECTIONS:
                    nr, nc = r + dr, c + dc
                    while 0 <= nr < 10 and 0 <= nc < 10 and (nr, nc) not in LAKES:
                        target = board[nr][nc]
                        if target is None:
                            moves.append((r, c, nr, nc))
                        else:
                            if target[0] != player and (nr - r, nc - c) == (dr, dc):
                                moves.append((r, c, nr, nc))
                            break
                        if piece[1] != RANK_OF["scout"]:
                            break
                        nr, nc = nr + dr, nc + dc
        if not moves:
            return ply
        r, c, nr, nc = rng.choice(moves)
        piece = board[r][c]
        target = board[nr][nc]
        board[r][c] = None
        if target is None:
            board[nr][nc] = piece
        else:
            if target[1] == FLAG:
                return ply + 1
            outcome = strike(piece[1], target[1])
            if outcome == 1:
                board[nr][nc] = piece
            elif outcome == 0:
                board[nr][nc] = None
        player = 1 - player
    return max_plies
