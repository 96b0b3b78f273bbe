"""Secret seeds: drawn from the operating system, checked, and derived with a keyed hash."""

from __future__ import annotations

import argparse

import pytest

from arena.engine.seeds import (
    SEED_BITS,
    check_seed,
    derive_seed,
    fresh_seed,
    house_bot_seed,
    seed_argument,
)


def test_fresh_seeds_are_distinct_and_use_63_bits() -> None:
    seeds = [fresh_seed() for _ in range(64)]
    assert len(set(seeds)) == len(seeds)
    assert all(0 <= s < 2**SEED_BITS for s in seeds)
    # 64 draws of 63 random bits: the largest below 2**57 has a chance of 2**-384
    assert max(seeds) >= 2**57
    assert SEED_BITS == 63  # fits a signed 64-bit column and an int64 field


def test_a_derived_seed_needs_the_secret() -> None:
    assert derive_seed(41, "deal", 3) == derive_seed(41, "deal", 3)  # reproducible
    others = {derive_seed(secret, "deal", 3) for secret in range(42, 142)}
    assert derive_seed(41, "deal", 3) not in others
    # parts are kept apart: ("ab", "c") is not ("a", "bc")
    assert derive_seed(7, "ab", "c") != derive_seed(7, "a", "bc")
    assert all(0 <= derive_seed(s, "x") < 2**SEED_BITS for s in (-(2**63), 0, 2**70))


def test_house_bot_seeds_are_not_the_old_public_formula() -> None:
    # the old seat seed was match_seed * 1000 + seat: with seed 0, just the seat number
    seeds = [house_bot_seed(0, seat) for seat in range(6)]
    assert len(set(seeds)) == 6
    assert not set(seeds) & set(range(6000))
    assert house_bot_seed(12345, 1) != house_bot_seed(12346, 1)


@pytest.mark.parametrize("bad", [1.5, "7", True, None, 2**63, -(2**63) - 1])
def test_check_seed_refuses_what_no_store_holds(bad: object) -> None:
    with pytest.raises(ValueError, match=r"seed must be an integer from -9223372036854775808"):
        check_seed(bad)


def test_check_seed_keeps_what_it_is_given() -> None:
    assert [check_seed(s) for s in (0, -1, 2**63 - 1)] == [0, -1, 2**63 - 1]


def test_seed_argument_says_what_was_wrong() -> None:
    assert seed_argument("42") == 42
    for text in ("x", "1e3", str(2**64)):
        with pytest.raises(argparse.ArgumentTypeError, match=f"got '{text}'"):
            seed_argument(text)
