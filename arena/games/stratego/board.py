"""The Stratego board: 10x10 squares, two lakes, and square names.

Square ``i`` is row ``i // 10``, column ``i % 10``, zero-based. Seat 0 sets up in rows
0-3 and seat 1 in rows 6-9. In text a square is a column letter ``a``-``j`` and a row
number ``1``-``10``: ``a1`` is square 0, ``j10`` is square 99.
"""

from __future__ import annotations

from typing import Any

SIZE = 10
SQUARES = SIZE * SIZE
LAKES = frozenset({42, 43, 52, 53, 46, 47, 56, 57})
COLUMNS = "abcdefghij"
SETUP_ROWS = {0: (0, 1, 2, 3), 1: (6, 7, 8, 9)}
BACK_ROW = {0: 0, 1: 9}
HALF_ROWS = {0: (0, 1, 2, 3, 4), 1: (5, 6, 7, 8, 9)}


def square_name(square: int) -> str:
    return f"{COLUMNS[square % SIZE]}{square // SIZE + 1}"


def parse_square(ref: Any) -> int:
    """A square from its index (0-99, or its decimal string) or name (``c5``)."""
    if type(ref) is int:
        if 0 <= ref < SQUARES:
            return ref
    elif type(ref) is str and ref:
        if ref.isdigit():
            if int(ref) < SQUARES:
                return int(ref)
        elif ref[0] in COLUMNS and ref[1:].isdigit() and 1 <= int(ref[1:]) <= SIZE:
            return (int(ref[1:]) - 1) * SIZE + COLUMNS.index(ref[0])
    raise ValueError(f"unknown square {ref!r}: expected 0-99 or a1-j10")


def _ray(square: int, dr: int, dc: int) -> tuple[int, ...]:
    r, c = divmod(square, SIZE)
    out = []
    while True:
        r += dr
        c += dc
        if not (0 <= r < SIZE and 0 <= c < SIZE):
            break
        s = r * SIZE + c
        if s in LAKES:
            break
        out.append(s)
    return tuple(out)


#: RAYS[square]: for each direction, the squares along it up to the edge or a lake
RAYS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(ray for ray in (_ray(s, dr, dc) for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))) if ray)
    for s in range(SQUARES)
)
#: NEIGHBOURS[square]: the orthogonally adjacent squares that are not lakes
NEIGHBOURS: tuple[tuple[int, ...], ...] = tuple(
    tuple(ray[0] for ray in RAYS[s]) for s in range(SQUARES)
)


def in_line(a: int, b: int) -> bool:
    return a // SIZE == b // SIZE or a % SIZE == b % SIZE


def between(a: int, b: int) -> range:
    """Squares strictly between two squares of one row or column."""
    step = 1 if a // SIZE == b // SIZE else SIZE
    if b < a:
        step = -step
    return range(a + step, b, step)
