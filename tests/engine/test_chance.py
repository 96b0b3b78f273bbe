"""A match's chance (arena/engine/chance.py): a secure stream keyed by the seed.

Deterministic from the seed, different for another seed or domain, a ``random.Random``
in every use the engine makes of one (shuffle, choice, randrange, getrandbits), with
states and copies that continue exactly; and, unlike the Mersenne Twister it replaced,
not to be predicted from its outputs.
"""

from __future__ import annotations

import copy
import hashlib
import pickle
import random
import struct
from collections import Counter

import pytest

from arena.engine.chance import SecureRandom, block_size
from arena.engine.core import copy_random
from arena.plugins import load_registry

REGISTRY = load_registry()
#: chi-square critical values at p = 0.001, by degrees of freedom
CHI2_CRITICAL_001 = {5: 20.515, 9: 27.877}


def draws(rng: random.Random, n: int) -> list[float]:
    return [rng.random() for _ in range(n)]


def test_the_stream_is_shake256_of_the_seed_as_documented():
    """The definition, computed apart: a change to it would change every replay."""
    digest = hashlib.shake_256(b"arena-chance/match/7/" + (0).to_bytes(8, "little")).digest(256)
    words = struct.unpack("<32Q", digest)
    expected = [(w & (2**52 - 1)) / 2**52 for w in words]
    assert draws(SecureRandom(7), 32) == expected
    second = hashlib.shake_256(b"arena-chance/deal/-3/" + (1).to_bytes(8, "little")).digest(512)
    rng = SecureRandom(-3, "deal")
    draws(rng, 32)  # block 0
    assert rng.random() == (struct.unpack("<Q", second[:8])[0] & (2**52 - 1)) / 2**52


def test_deterministic_from_the_seed_and_apart_for_another_seed_or_domain():
    n = 10_000  # several blocks: 32, 64, ... doubles
    first = draws(SecureRandom(2024), n)
    assert first == draws(SecureRandom(2024), n)
    assert all(0.0 <= x < 1.0 for x in first)
    assert all(x * 2**52 == int(x * 2**52) for x in first)  # 52 bits, exactly
    assert len(set(first)) == n
    for other in (SecureRandom(2025), SecureRandom(2024, "deal"), SecureRandom(-2024)):
        theirs = draws(other, n)
        assert sum(a == b for a, b in zip(first, theirs, strict=True)) == 0
    assert draws(SecureRandom(2**200), 5) != draws(SecureRandom(2**200 + 1), 5)


def test_no_seed_is_a_secret_one_and_a_seed_must_be_an_integer():
    assert draws(SecureRandom(), 4) != draws(SecureRandom(), 4)
    for bad in ("7", 1.5, True, b"x"):
        with pytest.raises(TypeError, match="a SecureRandom seed is an integer"):
            SecureRandom(bad)  # type: ignore[arg-type]


def test_integer_draws_are_the_random_module_s_and_deterministic():
    a, b = SecureRandom(5), SecureRandom(5)
    deck_a, deck_b = list(range(44)), list(range(44))
    a.shuffle(deck_a)
    b.shuffle(deck_b)
    assert deck_a == deck_b != list(range(44)) and sorted(deck_a) == list(range(44))
    # the inline shuffle is random.Random's own, draw for draw
    c, deck_c = SecureRandom(5), list(range(44))
    random.Random.shuffle(c, deck_c)
    assert deck_c == deck_a and c.getstate() == a.getstate()
    picks = [(a.randrange(6), a.choice("abcdef"), a.randint(1, 3), a.sample(range(9), 3))]
    assert picks == [(b.randrange(6), b.choice("abcdef"), b.randint(1, 3), b.sample(range(9), 3))]
    for k in (0, 1, 31, 52, 53, 64, 100, 1000):
        x, y = a.getrandbits(k), b.getrandbits(k)
        assert x == y and 0 <= x < 2**k
    wide = [a.getrandbits(200) for _ in range(50)]
    assert wide == [b.getrandbits(200) for _ in range(50)]
    assert max(wide) >= 2**190  # the high bits are drawn
    assert a.randrange(2**80) == b.randrange(2**80)  # wider than one double
    assert a.uniform(2, 3) == b.uniform(2, 3) and a.gauss() == b.gauss()
    with pytest.raises(ValueError, match="non-negative"):
        a.getrandbits(-1)
    with pytest.raises(ValueError):
        a.randrange(0)


def test_dice_from_the_stream_are_fair_by_chi_square():
    """600,000 dice (a fixed seed: the same sample every run) fit the uniform law."""
    rng = SecureRandom(31337)
    n = 600_000
    faces = Counter(rng.randrange(6) for _ in range(n))
    stat = sum((faces[f] - n / 6) ** 2 / (n / 6) for f in range(6))
    assert stat < CHI2_CRITICAL_001[5], faces
    # the doubles too, in ten bins, as the dice of dice=faces read them (int(u * 6))
    bins = Counter(int(rng.random() * 10) for _ in range(n))
    stat = sum((bins[b] - n / 10) ** 2 / (n / 10) for b in range(10))
    assert stat < CHI2_CRITICAL_001[9], bins
    # and the check has power: a die that shows 6 a fortieth less often fails it
    loaded = Counter({f: n / 6 for f in range(5)})
    loaded[5] = n / 6 * 0.975
    assert sum((loaded[f] - n / 6) ** 2 / (n / 6) for f in range(6)) > CHI2_CRITICAL_001[5]


def test_getstate_and_setstate_go_back_exactly_across_blocks():
    rng = SecureRandom(77)
    draws(rng, 31)  # the end of block 0 is next
    saved = rng.getstate()
    later = draws(rng, 5000)
    rng.setstate(saved)
    assert draws(rng, 5000) == later
    other = SecureRandom(1)  # another key: the state brings its own
    other.setstate(saved)
    assert draws(other, 5000) == later
    assert rng.position() == other.position()
    fresh = SecureRandom(77)
    fresh.setstate(SecureRandom(77).getstate())  # not drawn yet: block -1
    assert draws(fresh, 3) == draws(SecureRandom(77), 3)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        (1, 2),
        ("mt19937", b"k", 0, 0, None),
        ("arena-shake256/1", "not bytes", 0, 0, None),
        ("arena-shake256/1", b"k", -2, 0, None),
        ("arena-shake256/1", b"k", 0, 33, None),
        ("arena-shake256/1", b"k", -1, 1, None),
        ("arena-shake256/1", b"k", 1.5, 0, None),
    ],
)
def test_a_bad_state_is_refused_and_changes_nothing(bad):
    rng = SecureRandom(3)
    before = rng.getstate()
    with pytest.raises(ValueError):
        rng.setstate(bad)
    assert rng.getstate() == before
    assert draws(rng, 3) == draws(SecureRandom(3), 3)
    assert block_size(0) == 32 and block_size(7) == block_size(70) == 4096


def test_copies_continue_alike_and_independently():
    rng = SecureRandom(9)
    draws(rng, 100)  # inside block 2
    twin = rng.copy()
    assert twin.getstate() == rng.getstate()
    ahead = draws(twin, 9000)  # makes blocks of its own
    assert draws(rng, 9000) == ahead
    # copy.copy, deepcopy, pickle and the engine's copy_random agree
    for other in (copy.copy(rng), copy.deepcopy(rng), pickle.loads(pickle.dumps(rng))):
        assert type(other) is SecureRandom
        assert draws(other, 50) == draws(copy_random(rng), 50)
    assert type(copy_random(random.Random(1))) is random.Random  # a bot's own generator
    assert copy_random(random.Random(1)).random() == random.Random(1).random()


def untemper(y: int) -> int:
    """The Mersenne Twister's state word behind one 32-bit output."""
    y ^= y >> 18
    y ^= (y << 15) & 0xEFC60000
    x = y
    for _ in range(5):
        x = y ^ ((x << 7) & 0x9D2C5680)
    y = x
    x = y
    for _ in range(3):
        x = y ^ (x >> 11)
    return x & 0xFFFFFFFF


def predict(outputs: list[int]) -> random.Random:
    """A Mersenne Twister rebuilt from 624 of its 32-bit outputs, as an attacker would."""
    rebuilt = random.Random()
    rebuilt.setstate((3, (*[untemper(y) for y in outputs[-624:]], 624), None))
    return rebuilt


def test_the_old_generator_is_predicted_from_its_outputs_and_the_match_s_is_not():
    """The audit's finding: 624 outputs of ``random.Random(seed)`` tell every later die.
    The same attack on a game's generator predicts nothing."""
    old = random.Random(20240601)
    rebuilt = predict([old.getrandbits(32) for _ in range(624)])
    assert [rebuilt.randrange(6) for _ in range(1000)] == [old.randrange(6) for _ in range(1000)]
    state = REGISTRY.game("risk").new_state(4, 20240601)
    rng = state.rng
    assert type(rng) is SecureRandom
    guess = predict([rng.getrandbits(32) for _ in range(624)])
    dice = [rng.randrange(6) for _ in range(1000)]
    guessed = [guess.randrange(6) for _ in range(1000)]
    assert sum(a == b for a, b in zip(dice, guessed, strict=True)) < 250  # chance: 1 in 6
    stratego = REGISTRY.game("stratego").new_state(2, 1)
    assert type(stratego.rng) is SecureRandom
