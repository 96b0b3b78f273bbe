"""Tournament schedules: which bots meet, in which seats, with which seeds.

A schedule is a pure function of its inputs (the bots, the seats, the games per pairing and
the tournament seed), so a stopped tournament can be resumed by recomputing it and skipping
the match keys already played. Three ideas keep it fair:

* **Groups.** A *group* is one set of ``k`` bots that sit at a table together (a "pairing").
  Every ``k``-combination of the bots is a group when there are few enough; otherwise a
  balanced design in which every pair of bots shares a group equally often, give or take one.
* **Seat rotation.** A group plays its bots in cyclic shifts of one base order, so the seats
  go round like the rows of a Latin square: ``k`` games put every bot in every seat once.
* **Duplicate deals.** The ``k`` rotations of one *deal* share its deal seed, which makes
  the public start (Risk's territory deal), so whatever that start favours (a strong
  position, a lucky seat) every bot of the group gets in turn. For two seats this is the
  double round robin with colours swapped. Everything hidden or still to come (missions,
  the cards, the dice) comes from each match's own seed: a bot that sits in every seat of
  a deal learns nothing in one rotation about the secrets of another.

Only the seeds and the match keys depend on the tournament seed; the groups and the seat
orders come from a fixed seed, so a different tournament seed replays the same pairings
with other dice.

**Secret seeds.** No tournament seed given: a fresh secret one (63 bits from the operating
system). A deal's seed and each match's seed are HMACs of their place in the schedule
keyed by the tournament seed (:func:`arena.engine.seeds.derive_seed`), not steps of a
sequence: a seed that has been played and revealed tells nothing about the tournament seed
or about the other seeds. A revealed replay shows its deal seed, which the deal's other
rotations share (their start, public anyway), so replays and seeds still stay with the
organiser until the whole tournament has ended. The match keys (part of the match ids bots
see) carry a keyed hash too, never the seeds themselves.
"""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from arena.engine.seeds import derive_seed, fresh_seed, keyed_digest

#: the most groups a schedule plays when the caller does not say (``max_groups``)
DEFAULT_MAX_GROUPS = 2000

# The designs and seat orders must not depend on the tournament seed (a new seed replays
# the same pairings), so their searches draw from this fixed seed.
_DESIGN_SEED = 20240601
# Iterations per search; the defaults balance realistic fields in well under a second.
_CYCLIC_BUDGET = 1_500
_SWAP_BUDGET = 300
_SEAT_BUDGET = 50_000
# Random draws when looking for a member or a group to move.
_SAMPLES = 16
# How many smaller designs to try when the largest affordable one cannot be balanced.
_FALLBACK_TRIES = 6


@dataclass(frozen=True)
class ScheduledMatch:
    """One match to play: who sits where, with which seed, and where it belongs."""

    #: stable identifier: the same inputs always give the same keys (resuming skips these)
    match_key: str
    #: bot names in seat order
    players: tuple[str, ...]
    #: the match's own secret seed: its missions, cards, dice (``Game.new_state``)
    seed: int
    #: the deal: round ``r`` holds deal ``r`` of every group, so a tournament stopped
    #: between rounds has played as many games of every group
    round: int
    #: index of the group (the set of bots) in the schedule, to gather its results
    group: int
    #: the seed of the public start, shared by the rotations of one deal
    deal_seed: int = 0


def round_robin(
    bots: Sequence[str],
    seats: int,
    games_per_pairing: int = 1,
    seed: int | None = None,
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
    deal seed played in the ``k`` cyclic rotations of the group's base order (the last deal
    in only ``games % k`` of them), each rotation with a seed of its own. With
    ``games_per_pairing`` a multiple of ``k`` every bot sits in every seat equally often.
    Otherwise the base orders come from an equitable edge colouring (see
    :func:`_seat_orders`), which puts every bot in every seat equally often within one
    over the whole schedule whenever ``min(games % k, k - games % k)`` divides ``k``
    (every case up to six seats but five seats with ``games % 5`` in 2, 3); in the
    remaining cases a local search aims for the same and returns the most even it found.

    The schedule depends on the set of names, not their order. Matches come in round
    (deal) order, then group, then rotation, so stopping between rounds leaves every group
    with the same number of games and every started deal with all its rotations.
    """
    names = _check_bots(bots, "bots")
    k = _check_seats(seats)
    games = _check_games(games_per_pairing)
    seed = _check_seed(seed)
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
    seed: int | None = None,
    max_groups: int | None = None,
) -> list[ScheduledMatch]:
    """The challenger against the field: every match seats the challenger.

    The other ``seats - 1`` places of each group come from the field by the same design as
    :func:`round_robin` (every combination when affordable, else a balanced design), so
    every field bot meets the challenger equally often, and pairs of field bots meet equally
    often or within one. Seat rotation and duplicate deals are those of :func:`round_robin`.
    """
    if not isinstance(challenger, str) or not challenger:
        raise ValueError(f"the challenger must be a non-empty name, got {challenger!r}")
    others = _check_bots(field, "field")
    if challenger in others:
        raise ValueError(f"the challenger {challenger!r} is also in the field")
    k = _check_seats(seats)
    games = _check_games(games_per_pairing)
    seed = _check_seed(seed)
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


def _check_seed(seed: int | None) -> int:
    if seed is None:  # nobody chose one: a secret one, never a default anyone can guess
        return fresh_seed()
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")
    return seed


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
    full, rest = divmod(games, k)
    orders = [list(group) for group in groups]
    last: list[int] = []
    if rest:
        orders, last = _seat_orders(groups, k, rest)
    deals = [list(range(k))] * full + ([last] if rest else [])
    occurrence: Counter[tuple[str, ...]] = Counter()
    identities = []  # the group's names and which repeat of them it is (designs may repeat)
    for group in groups:
        members = tuple(sorted(group))
        identities.append((members, occurrence[members]))
        occurrence[members] += 1
    used: set[int] = set()
    out: list[ScheduledMatch] = []
    for deal, shifts in enumerate(deals):
        for index, (order, (members, repeat)) in enumerate(zip(orders, identities, strict=True)):
            deal_seed = _unique_seed(seed, [kind, k, members, repeat, deal], used)
            for shift in shifts:
                players = tuple(order[shift:] + order[:shift])
                # bots see match ids: the tag is keyed too, so it helps no one guess
                tag = keyed_digest(seed, [kind, players, deal_seed]).hex()[:10]
                own = _unique_seed(seed, [kind, k, members, repeat, deal, "match", shift], used)
                out.append(
                    ScheduledMatch(
                        match_key=f"g{index}-d{deal}-r{shift}-{tag}",
                        players=players,
                        seed=own,
                        round=deal,
                        group=index,
                        deal_seed=deal_seed,
                    )
                )
    return out


def _unique_seed(secret: int, parts: list[object], used: set[int]) -> int:
    """A seed for one deal or match, distinct from every other seed of the schedule."""
    salt = 0
    while True:
        value = derive_seed(secret, *parts, salt)
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
    every = math.comb(n, k)
    larger = (t * n for t in range(most + 1, most + 1 + _FALLBACK_TRIES) if t * n < every)
    works = next((size for size in larger if _cyclic_design(n, k, size // n, rng)), every)
    raise ValueError(
        f"cannot balance {n} bots in groups of {k} with max_groups={max_groups} (every pair "
        f"meeting equally often or within one, every bot in as many groups); "
        f"max_groups={works} would (all {every} groups need max_groups >= {every})"
    )


def _class_counts_fit(n: int, differences: int) -> bool:
    """Whether ``differences`` can spread over the classes of Z_n with meetings within one.

    A necessary condition only (counting), which rules out hopeless searches quickly: for
    ``n`` even, the pairs of class ``n / 2`` meet twice per difference, an even number.
    """
    normal = (n - 1) // 2
    for low in range(differences // max(normal, 1) + 2):
        half = [v // 2 for v in (low, low + 1) if v % 2 == 0] if n % 2 == 0 else [0]
        if normal * low + min(half) <= differences <= normal * (low + 1) + max(half):
            return True
    return False


def _cyclic_design(n: int, k: int, blocks: int, rng: random.Random) -> list[tuple[int, ...]] | None:
    """``blocks`` base blocks developed modulo ``n``, or None if the search cannot balance.

    The pair ``{a, a + d}`` lies in one translate of a block per occurrence of ``d`` or
    ``-d`` as a difference of its members (twice per occurrence when ``d = n / 2``, whose
    two orientations coincide), so the search only has to balance ``n // 2`` class counts.
    """
    half = n // 2
    if blocks < 1 or not _class_counts_fit(n, blocks * math.comb(k, 2)):
        return None
    classes = np.arange(half + 1)
    weight = np.where(2 * classes == n, 2, 1)  # meetings per difference of the class
    size = np.where(2 * classes == n, 1, 2)  # pairs in the class, over n / 2
    unit = size * weight**2  # so the pairs' sum of squares is sum(unit * found**2)
    unit[0] = 0
    ids = np.arange(n)
    cls = np.minimum((ids[:, None] - ids) % n, (ids - ids[:, None]) % n)
    found = np.zeros(half + 1, dtype=np.int64)  # differences per class, all base blocks

    def move(block: list[int], leaving: int | None) -> tuple[int, int]:
        """The best bot number to take ``leaving``'s place in ``block`` (or join it): the
        change in the sum of squares and the number. Updates nothing."""
        rest = [z for z in block if z != leaving]
        after = found.copy()
        cost = 0
        if leaving is not None:
            for d in cls[leaving, rest]:
                cost += int(unit[d] * (1 - 2 * after[d]))
                after[d] -= 1
        # adding y: each new difference costs unit * (2 * count + 1), counting the
        # same class already added for y
        grid = cls[:, rest]
        added = np.zeros(n, dtype=np.int64)
        for j in range(len(rest)):
            column = grid[:, j]
            repeats = (grid[:, :j] == column[:, None]).sum(axis=1)
            added += unit[column] * (2 * (after[column] + repeats) + 1)
        added[block] = np.iinfo(np.int64).max
        low = int(added.min())
        return cost + low, int(rng.choice(np.flatnonzero(added == low).tolist()))

    def place(block: list[int], at: int | None, y: int) -> None:
        """Put ``y`` in ``block`` (at index ``at``, or at the end) and count its differences."""
        rest = [z for i, z in enumerate(block) if i != at]
        if at is not None:
            np.subtract.at(found, cls[block[at], rest], 1)
            block[at] = y
        else:
            block.append(y)
        np.add.at(found, cls[y, rest], 1)

    base_blocks: list[list[int]] = []
    for _ in range(blocks):  # greedy: each new member balances the differences so far
        block = [0]  # translates of a block are the same block, so start each at 0
        while len(block) < k:
            place(block, None, move(block, None)[1])
        base_blocks.append(block)

    # Local search: move a member with a difference in a most-met class to where the
    # differences gain most; a worse move now and then (annealing) leaves local minima.
    for _ in range(_CYCLIC_BUDGET):
        meets = weight[1:] * found[1:]  # n >= 2 here, so there is a class
        most = int(meets.max())
        if most - int(meets.min()) <= 1:
            return [
                tuple(sorted((x + shift) % n for x in block))
                for block in base_blocks
                for shift in range(n)
            ]
        for _ in range(_SAMPLES):
            block = rng.choice(base_blocks)
            at = rng.randrange(k)
            if any(weight[d] * found[d] == most for d in cls[block[at], block] if d):
                break
        delta, y = move(block, block[at])
        if delta <= 0 or rng.random() < math.exp(-delta):
            place(block, at, y)
    return None


def _swap_design(n: int, k: int, size: int, rng: random.Random) -> list[tuple[int, ...]] | None:
    """``size`` groups in which every bot plays equally often and pairs meet within one.

    Greedy start (each member the least-used bot that has met the group least), then a
    local search exchanging bots between two groups, which keeps every bot's count.
    """
    # Every bot meets r * (k - 1) others (with repeats), r = size * k / n; pairs within one
    # need that between (n - 1) * low and (n - 1) * (low + 1).
    floor = size * math.comb(k, 2) // math.comb(n, 2)
    if not (n - 1) * floor <= size * k // n * (k - 1) <= (n - 1) * (floor + 1):
        return None
    meet = [[0] * n for _ in range(n)]
    uses = [0] * n
    groups: list[list[int]] = []
    for _ in range(size):
        group: list[int] = []
        for _ in range(k):
            free = [i for i in range(n) if i not in group]
            fewest = min(uses[i] for i in free)
            scores = {i: sum(meet[i][j] for j in group) for i in free if uses[i] == fewest}
            least = min(scores.values())
            pick = rng.choice([i for i, s in scores.items() if s == least])
            for j in group:
                meet[pick][j] += 1
                meet[j][pick] += 1
            uses[pick] += 1
            group.append(pick)
        groups.append(group)
    # how many pairs meet how often: balance is a glance at its keys
    levels = Counter(meet[a][b] for a in range(n) for b in range(a + 1, n))

    def shift(a: int, b: int, c: int) -> None:
        levels[meet[a][b]] -= 1
        meet[a][b] += c
        meet[b][a] += c
        levels[meet[a][b]] += 1

    for _ in range(_SWAP_BUDGET):
        present = [v for v, c in levels.items() if c]
        if max(present) - min(present) <= 1:
            return [tuple(sorted(g)) for g in groups]
        top = max(present)
        for _ in range(_SAMPLES):  # a group holding one of the most-met pairs
            first = rng.randrange(size)
            g1 = groups[first]
            pairs = [(a, b) for a, b in itertools.combinations(g1, 2) if meet[a][b] == top]
            if pairs:
                break
        x = rng.choice(rng.choice(pairs) if pairs else g1)
        options = []
        for second in rng.sample(range(size), min(size, _SAMPLES)):
            g2 = groups[second]
            if x in g2:
                continue
            for y in g2:
                if y in g1:
                    continue
                # x leaves its partners in g1 only (not in g2) for y, y those in g2 for x;
                # each pair changes by one, so the sum of squares by 2 * (new - old + 1)
                only1 = [z for z in g1 if z != x and z not in g2]
                only2 = [w for w in g2 if w != y and w not in g1]
                delta = 2 * sum(meet[y][z] - meet[x][z] + 1 for z in only1)
                delta += 2 * sum(meet[x][w] - meet[y][w] + 1 for w in only2)
                options.append((delta, second, y, only1, only2))
        if not options:
            continue
        low = min(o[0] for o in options)
        delta, second, y, only1, only2 = rng.choice([o for o in options if o[0] == low])
        if delta <= 0 or rng.random() < math.exp(-delta / 2):
            for z in only1:
                shift(x, z, -1)
                shift(y, z, 1)
            for w in only2:
                shift(y, w, -1)
                shift(x, w, 1)
            g2 = groups[second]
            g1[g1.index(x)] = y
            g2[g2.index(y)] = x
    return None


# -- seat orders --------------------------------------------------------------------------


def _seat_orders(
    groups: list[tuple[str, ...]], k: int, rotations: int
) -> tuple[list[list[str]], list[int]]:
    """Base orders and which ``rotations`` of the ``k`` shifts the last deal plays.

    A bot at position ``q`` of a base order sits in seat ``q - s`` in shift ``s``. All
    ``k`` shifts put it in every seat once, so playing shifts ``R`` balances the seats as
    well as leaving out the others does: work with ``m = min(rotations, k - rotations)``.

    When ``m`` divides ``k``, ``R`` (or the shifts left out) is the subgroup
    ``{0, c, 2c, ...}`` with ``c = k / m``: a bot at position ``q`` then sits in the seats
    ``q + R``, the positions congruent to ``q`` mod ``c``, so only the class of its
    position mod ``c`` matters. An equitable edge colouring of the bots-groups graph with
    ``c`` colours (every group uses every colour ``m`` times, every bot every colour
    equally often within one; it exists for any bipartite graph) then seats every bot in
    every seat equally often, within one. That covers every case up to six seats except
    five seats with two or three shifts.

    Otherwise the shifts are ``0 .. rotations - 1``, positions come from a ``k``-colouring
    (every bot in every position within one), and a local search swaps two bots of a
    group while that evens out their seat counts (sum of squares), until every bot's
    counts are within one or the budget runs out.
    """
    m = min(rotations, k - rotations)
    if k % m == 0:
        c = k // m
        subgroup = list(range(0, k, c))
        played = subgroup if m == rotations else [s for s in range(k) if s not in subgroup]
        orders = []
        for colours in _equitable_colouring(groups, k, c):
            order = [""] * k
            taken = Counter[int]()
            for bot, colour in colours.items():
                order[colour + c * taken[colour]] = bot
                taken[colour] += 1
            orders.append(order)
        return orders, played
    orders = [[""] * k for _ in groups]
    for j, colours in enumerate(_equitable_colouring(groups, k, k)):
        for bot, colour in colours.items():
            orders[j][colour] = bot
    played = list(range(rotations))
    _even_out_seats(orders, k, played)
    return orders, played


def _even_out_seats(orders: list[list[str]], k: int, played: list[int]) -> None:
    """Swap bots within groups (in place) while that evens out the seat counts."""
    rng = random.Random(_DESIGN_SEED)
    windows = [[(q - s) % k for s in played] for q in range(k)]
    seats: dict[str, list[int]] = {bot: [0] * k for order in orders for bot in order}
    member_of: dict[str, list[int]] = {bot: [] for bot in seats}
    for j, order in enumerate(orders):
        for q, bot in enumerate(order):
            member_of[bot].append(j)
            for c in windows[q]:
                seats[bot][c] += 1
    uneven = {bot for bot, counts in seats.items() if max(counts) - min(counts) > 1}

    def gain(bot: str, old: int, new: int) -> int:
        """Change in ``bot``'s sum of squares when it moves from position old to new."""
        counts = seats[bot]
        delta = Counter(windows[new])
        delta.subtract(windows[old])
        return sum(2 * counts[c] * v + v * v for c, v in delta.items() if v)

    def move(bot: str, old: int, new: int) -> None:
        counts = seats[bot]
        for c in windows[old]:
            counts[c] -= 1
        for c in windows[new]:
            counts[c] += 1
        if max(counts) - min(counts) > 1:
            uneven.add(bot)
        else:
            uneven.discard(bot)

    for _ in range(_SEAT_BUDGET):
        if not uneven:
            return
        bot = rng.choice(sorted(uneven))
        order = orders[rng.choice(member_of[bot])]
        q = order.index(bot)
        options = [
            (gain(bot, q, r) + gain(other, r, q), r, other)
            for r, other in enumerate(order)
            if r != q
        ]
        low = min(o[0] for o in options)
        delta, r, other = rng.choice([o for o in options if o[0] == low])
        if delta <= 0 or rng.random() < math.exp(-delta / 2):
            move(bot, q, r)
            move(other, r, q)
            order[q], order[r] = other, bot


def _equitable_colouring(
    groups: list[tuple[str, ...]], k: int, colours: int
) -> list[dict[str, int]]:
    """Colour each (group, member) so that every group has every colour ``k / colours``
    times and every bot has every colour equally often, within one.

    Cut each group into runs of ``colours`` members and each bot's groups into runs of
    ``colours``: no vertex of this bipartite graph has degree above ``colours``, so (König)
    ``colours`` colours colour it properly. Each edge takes a colour free at both ends,
    after swapping two colours along an alternating path if needed. A full run holds every
    colour once; a bot's last run holds any colour at most once.
    """
    per_group = k // colours
    seen: Counter[str] = Counter()
    keys = []  # (bot, its run) per (group, member), in order
    for group in groups:
        for bot in group:
            keys.append((bot, seen[bot] // colours))
            seen[bot] += 1
    runs = {key: vertex for vertex, key in enumerate(dict.fromkeys(keys))}
    # vertices: the bots' runs, then the groups' runs
    edges = []  # (bot run, group run, group, bot)
    members = ((j, at, bot) for j, group in enumerate(groups) for at, bot in enumerate(group))
    for key, (j, at, bot) in zip(keys, members, strict=True):
        edges.append((runs[key], len(runs) + j * per_group + at // colours, j, bot))
    by_colour: list[dict[int, int]] = [{} for _ in range(len(runs) + len(groups) * per_group)]
    for run, part, _, _ in edges:
        alpha = next(c for c in range(colours) if c not in by_colour[run])
        beta = next(c for c in range(colours) if c not in by_colour[part])
        if alpha in by_colour[part]:
            # Swap alpha and beta along the path leaving the group run by alpha; in a
            # bipartite graph it never reaches the bot run (where alpha is free).
            path, vertex, colour = [], part, alpha
            while colour in by_colour[vertex]:
                nxt = by_colour[vertex][colour]
                path.append((vertex, nxt, colour))
                vertex, colour = nxt, beta if colour == alpha else alpha
            for a, b, c in path:
                del by_colour[a][c], by_colour[b][c]
            for a, b, c in path:
                swapped = beta if c == alpha else alpha
                by_colour[a][swapped], by_colour[b][swapped] = b, a
        by_colour[run][alpha], by_colour[part][alpha] = part, run
    out: list[dict[str, int]] = [{} for _ in groups]
    for run, part, j, bot in edges:
        out[j][bot] = next(c for c, v in by_colour[run].items() if v == part)
    return out
