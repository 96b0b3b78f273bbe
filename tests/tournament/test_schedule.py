"""Schedules: pair and seat balance, duplicate seeds, stable keys, gauntlets, errors."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.engine.seeds import derive_seed
from arena.tournament import (
    DEFAULT_MAX_GROUPS,
    ScheduledMatch,
    gauntlet,
    pair_balance,
    round_robin,
    seat_balance,
)


def names(n: int) -> list[str]:
    return [f"bot{i:02d}" for i in range(n)]


def groups_of(schedule: list[ScheduledMatch]) -> dict[int, frozenset[str]]:
    """Every group's bot set, checking that a group always seats the same bots."""
    seen: dict[int, frozenset[str]] = {}
    for match in schedule:
        assert seen.setdefault(match.group, frozenset(match.players)) == set(match.players)
    return seen


def group_pair_counts(schedule: list[ScheduledMatch]) -> Counter[frozenset[str]]:
    """How many groups each pair shares (games per group factored out), 0s included."""
    bots = {bot for m in schedule for bot in m.players}
    counts = Counter({frozenset((a, b)): 0 for a in bots for b in bots if a < b})
    for members in groups_of(schedule).values():
        counts.update(frozenset((a, b)) for a in members for b in members if a < b)
    return counts


def spread(values) -> int:
    values = list(values)
    return max(values) - min(values)


def check_schedule(schedule: list[ScheduledMatch], bots: list[str], k: int, games: int) -> None:
    """What every schedule promises, whatever its size."""
    assert len({m.match_key for m in schedule}) == len(schedule)
    assert all(len(m.players) == k == len(set(m.players)) for m in schedule)
    assert {bot for m in schedule for bot in m.players} <= set(bots)
    # every group plays exactly ``games`` games, in rounds 0, 1, ...
    per_group = Counter(m.group for m in schedule)
    assert set(per_group.values()) == {games}
    assert sorted({m.round for m in schedule}) == list(range(math.ceil(games / k)))
    # matches come round by round
    rounds = [m.round for m in schedule]
    assert rounds == sorted(rounds)
    # pairs: within one (in groups) and every bot in as many groups
    assert spread(group_pair_counts(schedule).values()) <= 1
    uses = Counter(bot for members in groups_of(schedule).values() for bot in members)
    assert set(uses) == set(bots) and spread(uses.values()) == 0
    # duplicate deals: a deal's rotations share one deal seed, distinct cyclic shifts of
    # one base order; different deals never share one; every match has a seed of its own
    deals: dict[tuple[int, int], list[ScheduledMatch]] = defaultdict(list)
    for match in schedule:
        deals[match.group, match.round].append(match)
    assert len({ms[0].deal_seed for ms in deals.values()}) == len(deals)
    seeds = [m.seed for m in schedule]
    assert len(set(seeds)) == len(seeds) and not set(seeds) & {m.deal_seed for m in schedule}
    for ms in deals.values():
        assert len({m.deal_seed for m in ms}) == 1
        assert len({m.players for m in ms}) == len(ms)
        base = ms[0].players
        shifts = {base[s:] + base[:s] for s in range(k)}
        assert {m.players for m in ms} <= shifts
        assert len(ms) == k or ms[0].round == math.ceil(games / k) - 1
    # seats: equal when games is a multiple of k, else within one
    seats = seat_balance(schedule)
    assert all(spread(counts) <= (0 if games % k == 0 else 1) for counts in seats.values())


# -- groups ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "k"), [(5, 4), (6, 3), (8, 2), (6, 6), (7, 5)])
def test_every_combination_when_affordable(n: int, k: int) -> None:
    schedule = round_robin(names(n), k)
    check_schedule(schedule, names(n), k, 1)
    assert len(groups_of(schedule)) == math.comb(n, k)
    assert set(pair_balance(schedule).values()) == {math.comb(n - 2, k - 2)}


@pytest.mark.parametrize(
    ("n", "k", "max_groups"),
    [(12, 6, 100), (12, 6, 30), (9, 4, 40), (20, 4, 500), (14, 3, 100), (13, 5, 13), (30, 6, 50)],
)
def test_balanced_design_when_combinations_cost_too_much(n: int, k: int, max_groups: int) -> None:
    schedule = round_robin(names(n), k, max_groups=max_groups)
    check_schedule(schedule, names(n), k, 1)
    assert len(groups_of(schedule)) <= max_groups < math.comb(n, k)
    counts = pair_balance(schedule)
    assert len(counts) == math.comb(n, 2)
    assert spread(counts.values()) <= 1


def test_balanced_design_fills_the_budget() -> None:
    schedule = round_robin(names(12), 6, max_groups=100)
    groups = groups_of(schedule)
    assert 88 <= len(groups) <= 100  # a cyclic design: a multiple of 12 groups
    assert len(set(groups.values())) == len(groups)
    assert min(group_pair_counts(schedule).values()) >= 1  # every pair meets


def test_default_budget_balances_a_large_field() -> None:
    schedule = round_robin(names(30), 4)  # C(30, 4) = 27405 groups: too many
    groups = groups_of(schedule)
    assert 1900 <= len(groups) <= 2000
    assert spread(pair_balance(schedule).values()) <= 1
    assert spread(Counter(b for g in groups.values() for b in g).values()) == 0


# -- seats and seeds ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "k", "games", "max_groups"),
    [(5, 4, 4, None), (6, 3, 6, None), (8, 2, 2, None), (12, 6, 6, 30), (7, 5, 10, None)],
)
def test_every_bot_plays_every_seat_equally_often(
    n: int, k: int, games: int, max_groups: int | None
) -> None:
    schedule = round_robin(names(n), k, games, max_groups=max_groups)
    check_schedule(schedule, names(n), k, games)
    counts = seat_balance(schedule)
    assert set(counts) == set(names(n))
    for seats in counts.values():
        assert len(set(seats)) == 1 and seats[0] > 0


@pytest.mark.parametrize(
    ("n", "k", "games"), [(7, 3, 1), (6, 4, 2), (8, 6, 4), (9, 5, 2), (9, 5, 3)]
)
def test_seats_within_one_when_games_do_not_divide(n: int, k: int, games: int) -> None:
    schedule = round_robin(names(n), k, games)
    for seats in seat_balance(schedule).values():
        assert spread(seats) <= 1
    # and the total is what it must be
    per_bot = Counter(b for m in schedule for b in m.players)
    assert {sum(seats) for seats in seat_balance(schedule).values()} == set(per_bot.values())


def test_rotations_of_a_deal_share_its_deal_seed_and_nothing_else() -> None:
    schedule = round_robin(names(5), 3, games_per_pairing=6)
    by_seed: dict[int, list[ScheduledMatch]] = defaultdict(list)
    for match in schedule:
        by_seed[match.deal_seed].append(match)
    assert len({m.seed for m in schedule}) == len(schedule)  # the secrets: each its own
    assert len(by_seed) == math.comb(5, 3) * 2  # two deals per group
    for matches in by_seed.values():
        assert len(matches) == 3
        assert len({frozenset(m.players) for m in matches}) == 1
        assert len({(m.group, m.round) for m in matches}) == 1
        first = matches[0].players
        assert {m.players for m in matches} == {first[s:] + first[:s] for s in range(3)}


def test_two_seats_double_round_robin_swaps_colours_on_the_same_deal() -> None:
    bots = names(4)
    schedule = round_robin(bots, 2, games_per_pairing=2)
    assert len(schedule) == 12
    games: dict[frozenset[str], list[ScheduledMatch]] = defaultdict(list)
    for match in schedule:
        games[frozenset(match.players)].append(match)
    assert len(games) == 6
    for first, second in games.values():
        assert first.deal_seed == second.deal_seed and first.seed != second.seed
        assert second.players == first.players[::-1]
    assert all(seats == [3, 3] for seats in seat_balance(schedule).values())


def test_single_round_robin_on_two_seats_shares_the_colours() -> None:
    for n in (5, 6, 9):
        schedule = round_robin(names(n), 2)
        for white, black in seat_balance(schedule).values():
            assert abs(white - black) <= 1


# -- determinism and keys -------------------------------------------------------------------


def test_same_inputs_same_schedule_whatever_the_order_of_the_bots() -> None:
    bots = names(7)
    first = round_robin(bots, 3, 4, seed=11)
    assert round_robin(bots, 3, 4, seed=11) == first
    assert round_robin(list(reversed(bots)), 3, 4, seed=11) == first
    assert round_robin(names(13), 4, 1, seed=3, max_groups=60) == round_robin(
        names(13), 4, 1, seed=3, max_groups=60
    )


def test_another_seed_changes_seeds_and_keys_not_pairings() -> None:
    bots = names(7)
    one, two = round_robin(bots, 3, 4, seed=1), round_robin(bots, 3, 4, seed=2)
    assert [(m.players, m.round, m.group) for m in one] == [
        (m.players, m.round, m.group) for m in two
    ]
    assert not {m.seed for m in one} & {m.seed for m in two}
    assert not {m.deal_seed for m in one} & {m.deal_seed for m in two}
    assert not {m.match_key for m in one} & {m.match_key for m in two}


def test_match_keys_are_unique_and_short() -> None:
    schedule = round_robin(names(9), 4, 5, max_groups=50)
    keys = [m.match_key for m in schedule]
    assert len(set(keys)) == len(keys)
    assert max(map(len, keys)) <= 64  # the store's match id column


def test_seeds_are_63_bits_keyed_by_the_tournament_seed() -> None:
    # 63 bits: the store's signed 64-bit column; far too many to search from a deal seen
    for tournament_seed in (2**70, -5, 0):
        schedule = round_robin(names(8), 4, 4, seed=tournament_seed)
        for seeds in ([m.seed for m in schedule], [m.deal_seed for m in schedule]):
            assert all(0 <= s < 2**63 for s in seeds) and max(seeds) > 2**60
        # HMACs of the deal's and the match's place keyed by the tournament seed: nothing
        # else computes them
        first = schedule[0]
        members = sorted(first.players)
        expected = derive_seed(tournament_seed, "round-robin", 4, members, 0, 0, 0)
        assert first.deal_seed == expected
        own = derive_seed(tournament_seed, "round-robin", 4, members, 0, 0, "match", 0, 0)
        assert first.seed == own


def test_no_seed_given_draws_a_secret_one() -> None:
    drawn = [{m.seed for m in round_robin(names(4), 2, 2)} for _ in range(4)]
    assert all(not a & b for i, a in enumerate(drawn) for b in drawn[i + 1 :])
    assert round_robin(names(4), 2, 2, seed=0) == round_robin(names(4), 2, 2, seed=0)


def test_balance_helpers_count_games() -> None:
    schedule = [
        ScheduledMatch("a", ("x", "y", "z"), 1, 0, 0),
        ScheduledMatch("b", ("y", "z", "x"), 1, 0, 0),
        ScheduledMatch("c", ("x", "y", "w"), 2, 0, 1),
    ]
    assert seat_balance(schedule) == {
        "w": [0, 0, 1],
        "x": [2, 0, 1],
        "y": [1, 2, 0],
        "z": [0, 1, 1],
    }
    pairs = pair_balance(schedule)
    assert pairs[frozenset("xy")] == 3 and pairs[frozenset("wz")] == 0
    assert len(pairs) == 6
    assert seat_balance([]) == {} and pair_balance([]) == {}


# -- gauntlet -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("field", "k", "games", "max_groups"),
    [(5, 2, 2, None), (6, 4, 4, None), (4, 3, 1, None), (20, 6, 6, 100), (12, 4, 2, 40)],
)
def test_gauntlet_seats_the_challenger_against_a_balanced_field(
    field: int, k: int, games: int, max_groups: int | None
) -> None:
    bots = names(field)
    schedule = gauntlet("champ", bots, k, games, seed=5, max_groups=max_groups)
    assert all("champ" in m.players for m in schedule)
    assert len(groups_of(schedule)) <= (max_groups or math.inf)
    pairs = pair_balance(schedule)
    meets = [pairs[frozenset(("champ", bot))] for bot in bots]
    assert len(set(meets)) == 1 and meets[0] > 0
    others = [c for pair, c in pairs.items() if "champ" not in pair]
    assert not others or spread(others) <= games
    seats = seat_balance(schedule)
    assert all(spread(s) <= (0 if games % k == 0 else 1) for s in seats.values())
    deals: dict[tuple[int, int], set[int]] = defaultdict(set)
    for match in schedule:
        deals[match.group, match.round].add(match.deal_seed)
    assert all(len(s) == 1 for s in deals.values())
    assert len({next(iter(s)) for s in deals.values()}) == len(deals)


def test_gauntlet_and_round_robin_keys_differ() -> None:
    bots = names(3)
    rr = round_robin(["champ", *bots], 4, 4)
    gt = gauntlet("champ", bots, 4, 4)
    assert [frozenset(m.players) for m in rr] == [frozenset(m.players) for m in gt]
    assert not {m.seed for m in rr} & {m.seed for m in gt}


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: round_robin(names(3), 4), "4 seats need at least 4 bots, got 3"),
        (lambda: round_robin(names(3), 1), "seats must be an integer >= 2, got 1"),
        (lambda: round_robin(["a", "b", "a", "c"], 2), "duplicate names in bots: a"),
        (lambda: round_robin(["a", ""], 2), "non-empty names"),
        (lambda: round_robin("abc", 2), "not the string 'abc'"),
        (lambda: round_robin(names(4), 2, 0), "games_per_pairing must be an integer >= 1"),
        (lambda: round_robin(names(4), 2, seed=1.5), "seed must be an integer, got 1.5"),
        (lambda: round_robin(names(4), 2, max_groups=0), "max_groups must be an integer >= 1"),
        (lambda: round_robin(names(29), 6, max_groups=50), "max_groups=58 would"),
        (lambda: gauntlet("a", ["a", "b"], 2), "the challenger 'a' is also in the field"),
        (lambda: gauntlet("a", ["b"], 3), "a field of at least 2 bots besides the challenger"),
        (lambda: gauntlet("a", ["b", "b"], 2), "duplicate names in field: b"),
        (lambda: gauntlet("", ["b"], 2), "the challenger must be a non-empty name"),
    ],
)
def test_bad_input_is_refused_with_a_clear_message(call, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        call()


# -- properties -----------------------------------------------------------------------------


@settings(max_examples=80, deadline=None)
@given(
    n=st.integers(2, 9),
    k=st.integers(2, 6),
    games=st.integers(1, 8),
    max_groups=st.one_of(st.none(), st.integers(1, 60)),
    seed=st.integers(0, 2**40),
)
def test_any_schedule_keeps_its_promises(
    n: int, k: int, games: int, max_groups: int | None, seed: int
) -> None:
    k = min(k, n)
    bots = names(n)
    try:
        schedule = round_robin(bots, k, games, seed=seed, max_groups=max_groups)
    except ValueError as exc:  # only a budget too small for any balanced design
        assert max_groups is not None and max_groups < math.comb(n, k)
        assert "would (all" in str(exc)
        return
    check_schedule(schedule, bots, k, games)
    groups = groups_of(schedule)
    budget = max_groups or DEFAULT_MAX_GROUPS
    if math.comb(n, k) <= budget:
        assert len(groups) == math.comb(n, k)
        assert len(set(pair_balance(schedule).values())) == 1
    else:
        assert len(groups) <= budget
    assert round_robin(bots, k, games, seed=seed, max_groups=max_groups) == schedule
