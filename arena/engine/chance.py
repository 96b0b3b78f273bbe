"""A match's chance: random numbers no bot can predict, from a stream keyed by a seed.

A Mersenne Twister (``random.Random``) gives its whole state away: 624 of its outputs
rebuild it, and a long Risk game shows a bot hundreds of thousands of rolls. So a match
draws from :class:`SecureRandom` instead: SHAKE-256 (an extendable-output function of
the SHA-3 family) in counter mode, keyed by the seed. Block ``i`` of the stream is the
digest of the key and ``i``; each 8 bytes of it become one double in [0, 1) with 52
random bits (the bytes set as the IEEE pattern of a double in [1, 2), then 1.0 taken
away: exact). Knowing any number of outputs tells nothing of the others short of
guessing the seed, and the stream is the same on every machine, so a match replays
exactly from its seed.

A ``domain`` separates the streams of one seed: a state's secret chance (``"match"``)
and its public deal (``"deal"``, see ``Game.new_state``'s ``deal_seed``) never share
a number, even when the two seeds are the same.

It stays a ``random.Random``: ``random()`` is the stream itself (a C call per number:
the doubles of a block are made at once and served by an ``itertools.chain``), and the
integer draws (``getrandbits``, ``randrange``, ``shuffle``, ``choice``, ``sample``) take
the high bits of the next double, exactly uniform. Blocks grow from 32 doubles to 4,096,
so a short game pays for little it does not use. ``getstate``/``setstate`` hold the key
and the position (block, index), and :meth:`SecureRandom.copy` is cheap: the copy shares
the block made already and makes its own from the next one on.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import random
import secrets
import sys
from array import array
from collections.abc import Iterator
from typing import Any

#: what :meth:`SecureRandom.getstate` starts with: the version of the stream's definition
STATE_VERSION = "arena-shake256/1"
#: doubles in the first block; each next block has twice as many, up to _LARGEST
_FIRST = 32
_LARGEST = 4096
#: the two bytes that hold a double's sign, exponent and top 4 mantissa bits: the last
#: byte is the exponent of [1, 2) (0x3F), the one before keeps its 4 low (random) bits
_HIGH = 0x3F
_NEXT = bytes(0xF0 | (byte & 0x0F) for byte in range(256))
#: a double of the stream times this is its 52 random bits as an integer, exactly
_SCALE = float(1 << 52)
_BITS = 52


def block_size(index: int) -> int:
    """How many doubles block ``index`` of a stream holds."""
    return _LARGEST if index >= 7 else _FIRST << index


def _block(key: bytes, index: int) -> list[float]:
    """Block ``index`` of the stream keyed by ``key``, as doubles in [1, 2): each draw
    is one of them less 1.0 (taken away as it is drawn, not for the whole block)."""
    n = block_size(index)
    raw = bytearray(hashlib.shake_256(key + index.to_bytes(8, "little")).digest(8 * n))
    raw[7::8] = bytes((_HIGH,)) * n
    raw[6::8] = raw[6::8].translate(_NEXT)
    doubles = array("d", raw)  # the machine's byte order: the bytes are little-endian
    if sys.byteorder == "big":
        doubles.byteswap()
    return doubles.tolist()


def _draws(values: Iterator[float]) -> Iterator[float]:
    return map(operator.sub, values, itertools.repeat(1.0))


def _blocks(key: bytes, cursor: list[Any]) -> Iterator[Iterator[float]]:
    """The draws of the blocks from ``cursor``'s on; ``cursor`` is kept as [block index,
    its doubles, the iterator over them] (not the generator itself: no cycle). Each draw
    takes one double from that iterator, so it tells the position."""
    yield _draws(cursor[2])
    index = cursor[0]
    while True:
        index += 1
        values = _block(key, index)
        it = iter(values)
        cursor[0], cursor[1], cursor[2] = index, values, it
        yield _draws(it)


class SecureRandom(random.Random):
    """A ``random.Random`` whose numbers come from SHAKE-256 keyed by ``seed``.

    ``seed`` None: a secret one from the operating system (as ``random.Random()``).
    ``domain`` names the stream, so that two uses of one seed draw unrelated numbers.
    ``random()``, the next double in [0, 1), is set on each instance: the ``__next__``
    of the chain of its blocks, so that a draw is one C call.
    """

    def __init__(self, seed: int | None = None, domain: str = "match") -> None:
        self.domain = domain
        super().__init__(seed)

    def seed(self, a: Any = None, version: int = 2) -> None:
        """Key the stream by ``a`` (an integer; None: a secret one) and start it over."""
        if a is None:
            a = secrets.randbits(128)
        if isinstance(a, bool) or not isinstance(a, int):
            raise TypeError(f"a SecureRandom seed is an integer, got {type(a).__name__}")
        self._key = f"arena-chance/{self.domain}/{a}/".encode()
        self.gauss_next = None
        self._resume(-1, [], 0)  # no block yet: the first draw makes block 0

    def _resume(self, index: int, values: list[float], position: int) -> None:
        it = iter(values)
        if position:
            it.__setstate__(position)
        cursor = [index, values, it]
        self._cursor = cursor
        self.random = itertools.chain.from_iterable(_blocks(self._key, cursor)).__next__

    def position(self) -> tuple[int, int]:
        """(block, index in it) of the next double (block -1: none drawn yet)."""
        index, values, it = self._cursor
        return index, len(values) - it.__length_hint__()

    def getrandbits(self, k: int) -> int:
        """``k`` random bits, from the high bits of the next doubles (52 a double)."""
        if 0 <= k <= _BITS:
            return int(self.random() * _SCALE) >> (_BITS - k)
        if k < 0:
            raise ValueError("number of bits must be non-negative")
        draw = self.random
        bits = have = 0
        while have < k:
            bits = (bits << _BITS) | int(draw() * _SCALE)
            have += _BITS
        return bits >> (have - k)

    def shuffle(self, x: list[Any]) -> None:  # type: ignore[override]
        """Shuffle ``x`` in place: ``random.Random.shuffle`` (the same draws, the same
        order), with :meth:`_randbelow` inline (a deck is shuffled in every Risk game)."""
        draw = self.random
        for i in reversed(range(1, len(x))):
            n = i + 1
            shift = _BITS - n.bit_length()
            j = int(draw() * _SCALE) >> shift
            while j >= n:
                j = int(draw() * _SCALE) >> shift
            x[i], x[j] = x[j], x[i]

    def _randbelow(self, n: int) -> int:  # type: ignore[override]
        """An integer in [0, n), uniform: the top bits of a double, until one fits (what
        ``random.Random`` does with ``getrandbits``, without a call per try)."""
        k = n.bit_length()
        if k > _BITS:
            return self._randbelow_with_getrandbits(n)
        draw, shift = self.random, _BITS - k
        r = int(draw() * _SCALE) >> shift
        while r >= n:
            r = int(draw() * _SCALE) >> shift
        return r

    def getstate(self) -> tuple[Any, ...]:
        """The key and the position: :meth:`setstate` goes back there."""
        index, position = self.position()
        return (STATE_VERSION, self._key, index, position, self.gauss_next)

    def setstate(self, state: tuple[Any, ...]) -> None:
        try:
            version, key, index, position, gauss_next = state
        except (TypeError, ValueError):
            raise ValueError(f"not a SecureRandom state: {state!r:.80}") from None
        if version != STATE_VERSION or not isinstance(key, bytes):
            raise ValueError(f"not a {STATE_VERSION} state: {version!r}")
        if not (type(index) is int and index >= -1 and type(position) is int):
            raise ValueError(
                f"a SecureRandom position is two integers, got {index!r}, {position!r}"
            )
        if not 0 <= position <= (block_size(index) if index >= 0 else 0):
            raise ValueError(f"position {position} is outside block {index}")
        current = getattr(self, "_cursor", None)
        if current is not None and current[0] == index and key == self._key:
            values = current[1]  # the block is made already
        else:
            values = _block(key, index) if index >= 0 else []
        self._key = key
        self.gauss_next = gauss_next
        self._resume(index, values, position)

    def copy(self) -> SecureRandom:
        """An independent generator at the same place: it shares the block made already
        (a list never changed) and makes the next ones itself."""
        other = SecureRandom.__new__(SecureRandom)  # skips the seeding
        other.domain = self.domain
        other._key = self._key
        other.gauss_next = self.gauss_next
        index, values, it = self._cursor
        other._resume(index, values, len(values) - it.__length_hint__())
        return other

    def __copy__(self) -> SecureRandom:
        return self.copy()

    def __deepcopy__(self, memo: dict[int, Any]) -> SecureRandom:
        return self.copy()

    def __reduce__(self) -> tuple[Any, ...]:
        return (SecureRandom, (0, self.domain), self.getstate())
