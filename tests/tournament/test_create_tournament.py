"""Creating a tournament: the bots resolved to versions, the schedule stored whole and
fair, and every bad request refused before anything is written."""

from __future__ import annotations

import itertools
import re
from collections import Counter, defaultdict
from dataclasses import replace

import pytest
from sqlalchemy import func, select

from arena.store import EntryRow, MatchRow, SeatRow, Store
from arena.tournament.runner import TournamentSpec, create_tournament

RISK_BOTS = ["aggressive", "blitz", "defensive", "random"]


def _stored(store: Store, tournament_id: str) -> list[tuple[tuple[str, ...], int, int, int]]:
    """(seat labels from the seat rows, deal seed, round, group) of every stored match;
    every match has a seed of its own besides, distinct from every other seed."""
    matches = store.tournament_matches(tournament_id)
    seats = store.match_seats([m.id for m in matches])
    labels = {b.id: b.label for b in store.bots()}
    out = []
    for m in matches:
        from_seats = tuple(labels[s.bot_id] for s in seats[m.id])
        assert from_seats == tuple(m.players)  # the seat rows and the labels agree
        out.append((from_seats, m.deal_seed, m.round, m.group))
    own = [m.seed for m in matches]
    assert len(set(own)) == len(own) and not set(own) & {m.deal_seed for m in matches}
    return out


def _assert_nothing_written(store: Store) -> None:
    assert store.tournaments() == []
    with store.session() as s:
        for row in (MatchRow, SeatRow, EntryRow):
            assert s.scalar(select(func.count()).select_from(row)) == 0


def test_the_stored_schedule_balances_seats_and_pairs(store):
    spec = TournamentSpec(game="risk", bots=RISK_BOTS, seats=3, games_per_pairing=6, seed=9)
    tournament = create_tournament(store, spec)
    matches = _stored(store, tournament.id)
    assert len(matches) == 4 * 6  # C(4, 3) groups, 6 games each
    seat_counts: dict[str, Counter[int]] = defaultdict(Counter)
    pair_counts: Counter[frozenset[str]] = Counter()
    for players, *_ in matches:
        for seat, label in enumerate(players):
            seat_counts[label][seat] += 1
        pair_counts.update(frozenset(p) for p in itertools.combinations(players, 2))
    labels = [f"house:{b}@1" for b in RISK_BOTS]
    # 3 groups a bot, 6 games a group, every seat twice a group
    assert {label: dict(c) for label, c in seat_counts.items()} == {
        label: {0: 6, 1: 6, 2: 6} for label in labels
    }
    # every pair shares 2 groups of 6 games
    assert pair_counts == {frozenset(p): 12 for p in itertools.combinations(labels, 2)}
    assert sorted(e.label for e in store.entries(tournament.id)) == labels
    assert store.progress(tournament.id) == Counter(pending=24)
    assert all(m.tournament_id == tournament.id for m in store.tournament_matches(tournament.id))


def test_the_seat_rotations_of_one_deal_share_its_deal_seed(store):
    spec = TournamentSpec(game="risk", bots=RISK_BOTS, seats=3, games_per_pairing=6, seed=9)
    tournament = create_tournament(store, spec)
    deals = defaultdict(list)
    for players, seed, rnd, group in _stored(store, tournament.id):
        deals[(rnd, group)].append((players, seed))
    assert len(deals) == 4 * 2  # two deals a group
    seeds = set()
    for rotations in deals.values():
        assert len(rotations) == 3
        assert len({seed for _, seed in rotations}) == 1
        first = rotations[0][0]
        cyclic = {first[i:] + first[:i] for i in range(3)}
        assert {players for players, _ in rotations} == cyclic
        seeds.add(rotations[0][1])
    assert len(seeds) == len(deals)  # a fresh deal seed for every deal

    # another tournament seed: the same tables, other dice
    other = create_tournament(store, replace(spec, seed=10))
    again = _stored(store, other.id)
    assert sorted(p for p, *_ in again) == sorted(p for p, *_ in _stored(store, tournament.id))
    assert not {s for _, s, *_ in again} & seeds


def test_two_seats_swap_colours_on_the_same_deal(store):
    spec = TournamentSpec(
        game="stratego", bots=["heuristic", "random"], seats=2, games_per_pairing=4
    )
    tournament = create_tournament(store, spec)
    matches = _stored(store, tournament.id)
    by_seed = defaultdict(set)
    for players, seed, *_ in matches:
        by_seed[seed].add(players)
    assert len(by_seed) == 2
    for pairs in by_seed.values():
        assert pairs == {
            ("house:heuristic@1", "house:random@1"),
            ("house:random@1", "house:heuristic@1"),
        }


def test_a_gauntlet_seats_the_challenger_in_every_match(sqlite_store):
    spec = TournamentSpec(
        game="risk",
        bots=RISK_BOTS,
        seats=3,
        games_per_pairing=3,
        format="gauntlet",
        challenger="blitz",
    )
    tournament = create_tournament(sqlite_store, spec)
    matches = _stored(sqlite_store, tournament.id)
    assert len(matches) == 3 * 3  # C(3, 2) pairs of the field, 3 games each
    assert all("house:blitz@1" in players for players, *_ in matches)
    assert {e.label: e.challenger for e in sqlite_store.entries(tournament.id)} == {
        "house:aggressive@1": False,
        "house:blitz@1": True,
        "house:defensive@1": False,
        "house:random@1": False,
    }


def test_a_registered_name_means_its_newest_version_and_name_at_version_an_older_one(
    sqlite_store,
):
    old, _ = sqlite_store.register_bot("random")  # shadows the house bot of that name
    new, _ = sqlite_store.register_bot("random")
    spec = TournamentSpec(game="stratego", bots=["random", "random@1", "house:random"], seats=2)
    tournament = create_tournament(sqlite_store, spec)
    assert {e.bot_id for e in sqlite_store.entries(tournament.id)} == {
        old.id,
        new.id,
        sqlite_store.house_bot("random").id,
    }
    labels = {label for m in sqlite_store.tournament_matches(tournament.id) for label in m.players}
    assert labels == {"random@1", "random@2", "house:random@1"}


@pytest.mark.parametrize(
    ("bots", "message"),
    [
        (["random", "nobody"], "no registered bot and no stratego house bot named 'nobody'"),
        (["random", "house:nobody"], "unknown bot 'nobody'"),
        (["random", "ghost@3"], "no bot version 'ghost@3'"),
        (["random", "house:random"], "house:random@1 is in the tournament twice ('house:random')"),
        (["heuristic", "zombie@1"], "zombie@1 is revoked"),
        # a revoked name falls back to the house bots, and there is none of that name
        (["heuristic", "zombie"], "no registered bot and no stratego house bot named 'zombie'"),
    ],
)
def test_bad_bots_are_refused_naming_the_bot_and_nothing_is_written(sqlite_store, bots, message):
    zombie, _ = sqlite_store.register_bot("zombie")
    sqlite_store.revoke_bot(zombie.id)
    spec = TournamentSpec(game="stratego", bots=bots, seats=2)
    with pytest.raises(ValueError, match=re.escape(message)):
        create_tournament(sqlite_store, spec)
    _assert_nothing_written(sqlite_store)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"game": "chess"}, "unknown game 'chess'"),
        ({"variants": ["nope"]}, "unknown variant 'nope' for risk"),
        ({"options": {"cards": "gold"}}, "option cards='gold': expected one of"),
        ({"options": {"colour": "red"}}, "unknown option(s) for risk: colour"),
        ({"options": {"turn-limit": "soon"}}, "turn-limit"),
        ({"seats": 7}, "risk takes 2 to 6 players, not 7"),
        # two-player Risk needs the neutral variant: refused now, not in every match
        ({"seats": 2}, "Risk takes 3 to 6 players, not 2"),
        ({"seats": 5}, "5 seats need at least 5 bots"),
        ({"format": "swiss"}, "format must be one of round-robin, gauntlet, got 'swiss'"),
        ({"format": "gauntlet"}, "a gauntlet needs a challenger"),
        ({"format": "gauntlet", "challenger": "house:blitz"}, "must be one of the bots"),
        ({"games_per_pairing": 0}, "games_per_pairing must be an integer >= 1"),
        ({"time_bank_ms": -1}, "time bank -1 ms: 0 (the referee's default) or more"),
    ],
)
def test_bad_requests_are_refused_before_anything_is_written(sqlite_store, changes, message):
    spec = {"game": "risk", "bots": ["aggressive", "defensive", "random"], "seats": 3}
    with pytest.raises(ValueError, match=re.escape(message)):
        create_tournament(sqlite_store, TournamentSpec(**{**spec, **changes}))
    _assert_nothing_written(sqlite_store)


def test_two_player_risk_with_the_neutral_variant_is_accepted(sqlite_store):
    spec = TournamentSpec(
        game="risk", bots=["blitz", "random"], seats=2, variants=["neutral"], games_per_pairing=2
    )
    tournament = create_tournament(sqlite_store, spec)
    assert tournament.variants == ["neutral"]
    assert [m.variant_key for m in sqlite_store.tournament_matches(tournament.id)] == [
        "neutral",
        "neutral",
    ]
