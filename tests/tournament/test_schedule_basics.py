"""Schedule properties: pair balance, seat balance, duplicate seeds, stable keys."""

from __future__ import annotations

from collections import defaultdict

import pytest

from arena.tournament.schedule import gauntlet, pair_balance, round_robin, seat_balance

BOTS = [f"bot{i}" for i in range(12)]


@pytest.mark.parametrize(
    ("n", "k", "max_groups"), [(5, 4, None), (6, 3, None), (8, 2, None), (12, 6, 30)]
)
def test_every_pair_meets_equally_often_or_within_one_group(n, k, max_groups):
    schedule = round_robin(BOTS[:n], k, games_per_pairing=k, seed=1, max_groups=max_groups)
    counts = set(pair_balance(schedule).values())
    assert len(pair_balance(schedule)) == n * (n - 1) // 2  # every pair meets
    assert max(counts) - min(counts) <= k  # one group = k games together


@pytest.mark.parametrize(("n", "k"), [(5, 4), (6, 3), (8, 2)])
def test_every_bot_plays_every_seat_equally_often(n, k):
    schedule = round_robin(BOTS[:n], k, games_per_pairing=2 * k, seed=2)
    for bot, seats in seat_balance(schedule).items():
        assert len(set(seats)) == 1, (bot, seats)


def test_rotations_of_a_deal_share_its_deal_seed_with_the_same_bots():
    schedule = round_robin(BOTS[:5], 4, games_per_pairing=8, seed=3)
    by_seed = defaultdict(list)
    for match in schedule:
        by_seed[match.deal_seed].append(match)
    assert len({m.seed for m in schedule}) == len(schedule)  # the secrets: each its own
    for matches in by_seed.values():
        assert len(matches) == 4  # the 4 seat rotations of one deal
        assert len({frozenset(m.players) for m in matches}) == 1
        assert len({m.players for m in matches}) == 4
    assert len(by_seed) == len(schedule) // 4  # different deals, different seeds


def test_two_seat_games_swap_colours_on_the_same_deal():
    schedule = round_robin(BOTS[:4], 2, games_per_pairing=2, seed=4)
    for first, second in zip(schedule[::2], schedule[1::2], strict=True):
        assert first.deal_seed == second.deal_seed and first.players == second.players[::-1]
        assert first.seed != second.seed


def test_schedules_are_deterministic_with_unique_keys():
    one = round_robin(BOTS[:6], 3, games_per_pairing=3, seed=5)
    assert one == round_robin(BOTS[:6], 3, games_per_pairing=3, seed=5)
    assert len({m.match_key for m in one}) == len(one)
    other = round_robin(BOTS[:6], 3, games_per_pairing=3, seed=6)
    assert [m.players for m in other] == [m.players for m in one]
    assert [m.seed for m in other] != [m.seed for m in one]


def test_the_gauntlet_puts_the_challenger_in_every_match_against_a_balanced_field():
    schedule = gauntlet("champ", BOTS[:4], 3, games_per_pairing=3, seed=7)
    assert all("champ" in m.players for m in schedule)
    met = pair_balance(schedule)
    against = {b: met[frozenset(("champ", b))] for b in BOTS[:4]}
    assert max(against.values()) - min(against.values()) <= 3, against


@pytest.mark.parametrize(
    ("bots", "seats", "message"),
    [(["a", "b"], 3, "3"), (["a", "b", "c"], 1, "seat"), (["a", "a", "b"], 2, "a")],
)
def test_impossible_schedules_are_refused_with_a_reason(bots, seats, message):
    with pytest.raises(ValueError, match=message):
        round_robin(bots, seats)
