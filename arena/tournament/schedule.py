"""Tournament schedules: which bots meet, in which seats, with which seeds.

A schedule is a pure function of its inputs (the bots, the seats, the games per pairing and
the tournament seed), so a stopped tournament can be resumed by recomputing it and skipping
the match keys already played. Three ideas keep it fair:

* **Groups.** A *group* is one set of ``k`` bots that sit at a table together (a "pairing").
  Every ``k``-combination of the bots is a group when there are few enough; otherwise a
  balanced design in which every pair of bots shares a group equally often, give or take one.
* **Seat rotation.** A group plays its bots in cyclic shifts of one base order, so the seats
  go round like the rows of a Latin square: ``k`` games put every bot in every seat once.
* **Duplicate seeds.** The ``k`` rotations of one *deal* replay the same seed, so whatever
  the dice or the shuffle favour (a strong start, a lucky seat) every bot of the group gets
  in turn. For two seats this is the double round robin with colours swapped.

Only the seeds and the match keys depend on the tournament seed; the groups and the seat
orders come from a fixed seed, so a different tournament seed replays the same pairings
with other dice.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

#: the most groups a schedule plays when the caller does not say (``max_groups``)
DEFAULT_MAX_GROUPS = 2000

# The designs and seat orders must not depend on the tournament seed (a new seed replays
# the same pairings), so their searches draw from this fixed seed.
_DESIGN_SEED = 20240601
# Seeds stay below 2**31: every engine, database column and bot language takes them.
_SEED_BITS = 31
# Iterations per search; the defaults balance realistic fields in well under a second.
_CYCLIC_BUDGET = 20_000
_SWAP_BUDGET = 20_000
_SEAT_BUDGET = 50_000
# How many smaller designs to try when the largest affordable one cannot be balanced.
_FALLBACK_TRIES = 4


@dataclass(frozen=True)
class ScheduledMatch:
    """One match to play: who sits where, with which seed, and where it belongs."""

    #: stable identifier: the same inputs always give the same keys (resuming skips these)
    match_key: str
    #: bot names in seat order
    players: tuple[str, ...]
    #: the match's dice / shuffle seed, shared by the rotations of one deal
    seed: int
    #: the deal number: after each round every group has played every rotation once more
    round: int
    #: index of the group (the set of bots) in the schedule, to gather its results
    group: int


def round_robin(
    bots: Sequence[str],
    seats: int,
    games_per_pairing: int = 1,
    seed: int = 0,
    max_groups: int | None = None,
) -> list[ScheduledMatch]:
    """Every bot against every other, ``seats`` to a table, in rounds of deals.

    Groups: every ``seats``-combination of the bots when there are at most ``max_groups``
    (default :data:`DEFAULT_MAX_GROUPS`) of them, so every pair meets exactly
    ``C(n-2, k-2)`` times. Otherwise as many groups as ``max_groups`` affords, arranged so
    that every pair of bots meets equally often or within one (checked before returning),
    and every bot plays the same number of groups:

    * preferably a *cyclic design*: base blocks of bot numbers developed modulo ``n``
      (``t = max_groups // n`` blocks, ``t * n`` groups). A pair ``{a, b}`` then meets as
      often as the difference ``b - a`` occurs in the base blocks, so balancing ``n / 2``
      difference counts (a greedy start, then a local search) balances all pairs, and every
      bot plays ``t * k`` groups;
    * if that search fails (near-exact designs that may not exist, such as a cyclic
      2-(16, 6, 2) design), fewer blocks, then a local search over swaps of bots between
      groups for designs smaller than ``n`` groups; if none balances, a ``ValueError`` asks
      for a larger ``max_groups``.

    Each group plays ``games_per_pairing`` games: ``ceil(games / k)`` deals, each a fresh
    seed played in the ``k`` cyclic rotations of the group's base order (the last deal only
    in ``games % k`` of them). With ``games_per_pairing`` a multiple of ``k``, every bot
    sits in every seat equally often; otherwise the base orders are chosen (greedily, then
    by local search) so that each bot's seat counts over the whole schedule are as even as
    the search can make them, within one whenever it finds such an assignment.

    The schedule depends on the set of names, not their order. Matches come in round
    (deal) order, then group, then rotation, so stopping between rounds leaves every group
    with the same number of games and every started deal with all its rotations.
    """
    names = _check_bots(bots, "bots")
    k = _check_seats(seats)
    games = _check_games(games_per_pairing)
    if len(names) < k:
        raise ValueError(
            f"{k} seats need at least {k} bots, got {len(names)}: {', '.join(names) or 'none'}"
        )
    cap = _check_max_groups(max_groups)
    groups = [tuple(names[i] for i in g) for g in _design(len(names), k, cap)]
    return _matches("round-robin", groups, k, games, seed)


def gauntlet(
    challenger: str,
    field: Sequence[str],
    seats: int,
    games_per_pairing: int = 1,
    seed: int = 0,
    max_groups: int | None = None,
) -> list[ScheduledMatch]:
    """The challenger against the field: every match seats the challenger.

    The other ``seats - 1`` places of each group come from the field by the same design as
    :func:`round_robin` (every combination when affordable, else a balanced design), so
    every field bot meets the challenger equally often, and pairs of field bots meet equally
    often or within one. Seat rotation and duplicate seeds are those of :func:`round_robin`.
    """
    if not isinstance(challenger, str) or not challenger:
        raise ValueError(f"the challenger must be a non-empty name, got {challenger!r}")
    others = _check_bots(field, "field")
    if challenger in others:
        raise ValueError(f"the challenger {challenger!r} is also in the field")
    k = _check_seats(seats)
    games = _check_games(games_per_pairing)
    if len(others) < k - 1:
        raise ValueError(
            f"{k} seats need a field of at least {k - 1} bots besides the challenger, "
            f"got {len(others)}: {', '.join(others) or 'none'}"
        )
    cap = _check_max_groups(max_groups)
    groups = [(challenger, *(others[i] for i in g)) for g in _design(len(others), k - 1, cap)]
    return _matches("gauntlet", groups, k, games, seed)


def seat_balance(schedule: Iterable[ScheduledMatch]) -> dict[str, list[int]]:
    """How many games each bot played in each seat (index 0 is the first seat)."""
    matches = list(schedule)
    width = max((len(m.players) for m in matches), default=0)
    counts: dict[str, list[int]] = {}
    for match in matches:
        for place, bot in enumerate(match.players):
            counts.setdefault(bot, [0] * width)[place] += 1
    return dict(sorted(counts.items()))


def pair_balance(schedule: Iterable[ScheduledMatch]) -> dict[frozenset[str], int]:
    """How many games each pair of bots played together; 0 for pairs that never met."""
    matches = list(schedule)
    bots = sorted({bot for m in matches for bot in m.players})
    counts = {frozenset(pair): 0 for pair in itertools.combinations(bots, 2)}
    for match in matches:
        for pair in itertools.combinations(match.players, 2):
            counts[frozenset(pair)] += 1
    return counts


# -- validation ---------------------------------------------------------------------------


def _check_bots(bots: Sequence[str], what: str) -> list[str]:
    if isinstance(bots, str):
        raise ValueError(f"{what} must be a sequence of names, not the string {bots!r}")
    names = list(bots)
    bad = [b for b in names if not isinstance(b, str) or not b]
    if bad:
        raise ValueError(f"{what} must be non-empty names, got {bad[0]!r}")
    duplicates = sorted(name for name, c in Counter(names).items() if c > 1)
    if duplicates:
        raise ValueError(f"duplicate names in {what}: {', '.join(duplicates)}")
    return sorted(names)


def _check_seats(seats: int) -> int:
    if isinstance(seats, bool) or not isinstance(seats, int) or seats < 2:
        raise ValueError(f"seats must be an integer >= 2, got {seats!r}")
    return seats


def _check_games(games: int) -> int:
    if isinstance(games, bool) or not isinstance(games, int) or games < 1:
        raise ValueError(f"games_per_pairing must be an integer >= 1, got {games!r}")
    return games


def _check_max_groups(max_groups: int | None) -> int:
    if max_groups is None:
        return DEFAULT_MAX_GROUPS
    if isinstance(max_groups, bool) or not isinstance(max_groups, int) or max_groups < 1:
        raise ValueError(f"max_groups must be an integer >= 1, got {max_groups!r}")
    return max_groups


# -- matches, seeds and keys --------------------------------------------------------------


def _matches(
    kind: str, groups: list[tuple[str, ...]], k: int, games: int, seed: int
) -> list[ScheduledMatch]:
    deals, partial = divmod(games, k)
    orders = [list(g) for g in groups]
    if partial:
        orders = _seat_orders(groups, k, partial)
    else:
        deals -= 1
        partial = k
    # ``deals`` full deals of k rotations, then one deal of ``partial`` rotations
    occurrence: Counter[tuple[str, ...]] = Counter()
    identities = []
    for group in groups:
        members = tuple(sorted(group))
        identities.append((members, occurrence[members]))  # a design may repeat a group
        occurrence[members] += 1
    used: set[int] = set()
    out: list[ScheduledMatch] = []
    for deal in range(deals + 1):
        rotations = k if deal < deals else partial
        for index, (order, (members, repeat)) in enumerate(zip(orders, identities, strict=True)):
            deal_seed = _unique_seed([kind, seed, k, members, repeat, deal], used)
            for shift in range(rotations):
                players = tuple(order[shift:] + order[:shift])
                tag = _digest([kind, seed, players, deal_seed]).hex()[:10]
                out.append(
                    ScheduledMatch(
                        match_key=f"g{index}-d{deal}-r{shift}-{tag}",
                        players=players,
                        seed=deal_seed,
                        round=deal,
                        group=index,
                    )
                )
    return out


def _digest(parts: list[object]) -> bytes:
    # JSON keeps names with any characters apart; blake2b does not change with
    # PYTHONHASHSEED as hash() does.
    return hashlib.blake2b(json.dumps(parts).encode(), digest_size=8).digest()


def _unique_seed(parts: list[object], used: set[int]) -> int:
    """A seed for one deal, distinct from every other deal's in the schedule."""
    salt = 0
    while True:
        value = int.from_bytes(_digest([*parts, salt]), "big") >> (64 - _SEED_BITS)
        if value not in used:
            used.add(value)
            return value
        salt += 1


# -- group designs ------------------------------------------------------------------------


def _design(n: int, k: int, max_groups: int) -> list[tuple[int, ...]]:
    """Groups of ``k`` bot numbers out of ``n``: pairs balanced within one, bots exactly."""
    if math.comb(n, k) <= max_groups:
        return list(itertools.combinations(range(n), k))
    rng = random.Random(_DESIGN_SEED)
    most = max_groups // n
    for blocks in range(most, max(0, most - _FALLBACK_TRIES), -1):
        design = _cyclic_design(n, k, blocks, rng)
        if design is not None:
            return design
    # Fewer groups than bots: every bot still plays equally often when the number of
    # groups is a multiple of n / gcd(n, k).
    step = n // math.gcd(n, k)
    sizes = range(min(max_groups, n - 1) // step * step, 0, -step)
    for size in itertools.islice(sizes, _FALLBACK_TRIES):
        design = _swap_design(n, k, size, rng)
        if design is not None:
            return design
    raise ValueError(
        f"no balanced design of {k}-groups for {n} bots fits in max_groups={max_groups} "
        f"(every pair meeting equally often, or within one, and every bot as often); "
        f"raise max_groups (all {math.comb(n, k)} groups need max_groups >= {math.comb(n, k)})"
    )


def _spread_ok(counts: Iterable[int]) -> bool:
    values = list(counts)
    return not values or max(values) - min(values) <= 1


def _cyclic_design(n: int, k: int, blocks: int, rng: random.Random) -> list[tuple[int, ...]] | None:
    """``blocks`` base blocks developed modulo ``n``, or None if the search cannot balance.

    The pair ``{a, a + d}`` lies in one translate of a block per occurrence of ``d`` or
    ``-d`` as a difference of its members (twice per occurrence when ``d = n / 2``, whose
    two orientations coincide), so the search only has to balance ``n // 2`` class counts.
    """
    if blocks < 1:
        return None
    half = n // 2
    # weight: pair meetings per difference of the class; size: pairs in the class (halved
    # for d = n / 2); the objective sum(size * meetings**2) is the pairs' sum of squares.
    weight = [0] + [2 if 2 * d == n else 1 for d in range(1, half + 1)]
    size = [0] + [1 if 2 * d == n else 2 for d in range(1, half + 1)]

    def cls(a: int, b: int) -> int:
        d = (a - b) % n
        return min(d, n - d)

    found = [0] * (half + 1)  # differences per class over all base blocks

    def cost(changes: dict[int, int]) -> int:
        total = 0
        for d, c in changes.items():
            if c:
                now, step = weight[d] * found[d], weight[d] * c
                total += size[d] * (2 * now * step + step * step)
        return total

    def moves(block: list[int], skip: int | None) -> list[tuple[int, int, dict[int, int]]]:
        """Every bot number that could join ``block`` (instead of ``skip``) and its cost."""
        rest = [z for z in block if z != skip]
        base: dict[int, int] = {}
        if skip is not None:
            for z in rest:
                d = cls(skip, z)
                base[d] = base.get(d, 0) - 1
        out = []
        for y in range(n):
            if y in block:
                continue
            changes = dict(base)
            for z in rest:
                d = cls(y, z)
                changes[d] = changes.get(d, 0) + 1
            out.append((cost(changes), y, changes))
        return out

    def best(options: list[tuple[int, int, dict[int, int]]]) -> tuple[int, int, dict[int, int]]:
        low = min(o[0] for o in options)
        return rng.choice([o for o in options if o[0] == low])

    base_blocks: list[list[int]] = []
    for _ in range(blocks):  # greedy: each new member balances the differences so far
        block = [0]  # translates of a block are the same block, so start each at 0
        while len(block) < k:
            _, y, changes = best(moves(block, None))
            for d, c in changes.items():
                found[d] += c
            block.append(y)
        base_blocks.append(block)

    def balanced() -> bool:
        return _spread_ok(weight[d] * found[d] for d in range(1, half + 1))

    # Local search: move one member of one block where the differences gain most; a
    # worse move now and then (annealing) climbs out of local minima.
    for _ in range(_CYCLIC_BUDGET):
        if balanced():
            return [
                tuple(sorted((x + shift) % n for x in block))
                for block in base_blocks
                for shift in range(n)
            ]
        block = rng.choice(base_blocks)
        at = rng.randrange(k)
        delta, y, changes = best(moves(block, block[at]))
        if delta <= 0 or rng.random() < math.exp(-delta / 4):
            for d, c in changes.items():
                found[d] += c
            block[at] = y
    return None


def _swap_design(n: int, k: int, size: int, rng: random.Random) -> list[tuple[int, ...]] | None:
    """``size`` groups in which every bot plays equally often and pairs meet within one.

    Greedy start (each member the least-used bot that has met the group least), then a
    local search exchanging bots between two groups, which keeps every bot's count.
    """
    meet = [[0] * n for _ in range(n)]
    uses = [0] * n
    groups: list[list[int]] = []
    for _ in range(size):
        group: list[int] = []
        for _ in range(k):
            free = [i for i in range(n) if i not in group]
            low = min(uses[i] for i in free)
            scores = {i: sum(meet[i][j] for j in group) for i in free if uses[i] == low}
            least = min(scores.values())
            pick = rng.choice([i for i, s in scores.items() if s == least])
            for j in group:
                meet[pick][j] += 1
                meet[j][pick] += 1
            uses[pick] += 1
            group.append(pick)
        groups.append(group)

    def balanced() -> bool:
        return _spread_ok(meet[a][b] for a in range(n) for b in range(a + 1, n))

    for _ in range(_SWAP_BUDGET):
        if balanced():
            return [tuple(sorted(g)) for g in groups]
        first, second = rng.sample(range(size), 2) if size > 1 else (0, 0)
        g1, g2 = groups[first], groups[second]
        options = []
        for x in g1:
            for y in g2:
                if x in g2 or y in g1:
                    continue
                changes: Counter[tuple[int, int]] = Counter()
                for z in g1:
                    if z != x:
                        changes[min(x, z), max(x, z)] -= 1
                        changes[min(y, z), max(y, z)] += 1
                for w in g2:
                    if w != y:
                        changes[min(y, w), max(y, w)] -= 1
                        changes[min(x, w), max(x, w)] += 1
                delta = sum(2 * meet[a][b] * c + c * c for (a, b), c in changes.items())
                options.append((delta, x, y, changes))
        if not options:
            continue
        low = min(o[0] for o in options)
        delta, x, y, changes = rng.choice([o for o in options if o[0] == low])
        if delta <= 0 or rng.random() < math.exp(-delta / 2):
            for (a, b), c in changes.items():
                meet[a][b] += c
                meet[b][a] += c
            g1[g1.index(x)] = y
            g2[g2.index(y)] = x
    return None


# -- seat orders --------------------------------------------------------------------------


def _seat_orders(groups: list[tuple[str, ...]], k: int, rotations: int) -> list[list[str]]:
    """Base orders so the first ``rotations`` shifts of every group even out the seats.

    In shifts ``0 .. rotations - 1`` of a base order, the bot at position ``q`` sits in
    seats ``q, q - 1, ..., q - rotations + 1`` (mod ``k``). Each group is ordered greedily,
    then a local search swaps two bots of a group while that evens out their seat counts
    (sum of squares); it stops once every bot's counts are within one.
    """
    rng = random.Random(_DESIGN_SEED)
    windows = [[(q - s) % k for s in range(rotations)] for q in range(k)]
    seats: dict[str, list[int]] = {bot: [0] * k for group in groups for bot in group}

    def gain(bot: str, old: int | None, new: int) -> int:
        """Change in ``bot``'s sum of squares when it moves from position old to new."""
        counts = seats[bot]
        delta = Counter(windows[new])
        if old is not None:
            delta.subtract(windows[old])
        return sum(2 * counts[c] * v + v * v for c, v in delta.items() if v)

    def move(bot: str, old: int | None, new: int) -> None:
        if old is not None:
            for c in windows[old]:
                seats[bot][c] -= 1
        for c in windows[new]:
            seats[bot][c] += 1

    orders: list[list[str]] = []
    for group in groups:
        order: list[str] = []
        for q in range(k):
            free = [b for b in group if b not in order]
            scores = {b: gain(b, None, q) for b in free}
            least = min(scores.values())
            pick = next(b for b in free if scores[b] == least)
            move(pick, None, q)
            order.append(pick)
        orders.append(order)

    member_of: dict[str, list[int]] = {}
    for j, group in enumerate(groups):
        for bot in group:
            member_of.setdefault(bot, []).append(j)

    def uneven() -> list[str]:
        return [bot for bot, counts in seats.items() if max(counts) - min(counts) > 1]

    for _ in range(_SEAT_BUDGET):
        bad = uneven()
        if not bad:
            break
        bot = rng.choice(bad)
        j = rng.choice(member_of[bot])
        order = orders[j]
        q = order.index(bot)
        options = []
        for r, other in enumerate(order):
            if r != q:
                options.append((gain(bot, q, r) + gain(other, r, q), r, other))
        low = min(o[0] for o in options)
        delta, r, other = rng.choice([o for o in options if o[0] == low])
        if delta <= 0 or rng.random() < math.exp(-delta / 2):
            move(bot, q, r)
            move(other, r, q)
            order[q], order[r] = other, bot
    return orders
