"""Secret seeds, and what is derived from them.

Every secret of a match (the missions, the draw pile, every future die, a house bot's
choices such as its Stratego setup) follows from the match's seed and the public actions
(its public start may come from a deal seed shared with other matches: ``Game.new_state``).
So a seed nobody chose is drawn from the operating system's secure random source
(:func:`fresh_seed`), never a default such as 0; and whatever is derived from a secret seed
(a tournament's match seeds, a house bot's own seed) is derived with a keyed hash,
HMAC-SHA256 keyed by the secret (:func:`derive_seed`): knowing one derived value (the seed
of a match that has ended, revealed with its replay) tells nothing about the secret or
about the values derived from it for other purposes, short of guessing the secret itself.
A seed an organiser gives explicitly is used as given: small ones can be guessed.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import secrets

#: bits of every seed this module makes: they fit the signed 64-bit integers of the store
#: (PostgreSQL BIGINT) and of the wire (``int64``), and are far too many to guess
SEED_BITS = 63
#: the range of a seed given explicitly (a signed 64-bit integer)
SEED_MIN, SEED_MAX = -(2**63), 2**63 - 1


def fresh_seed() -> int:
    """A new secret seed from the operating system's secure random source."""
    return secrets.randbits(SEED_BITS)


def check_seed(seed: object) -> int:
    """``seed`` if it is an integer a store and the wire can hold, else ValueError."""
    if isinstance(seed, bool) or not isinstance(seed, int) or not SEED_MIN <= seed <= SEED_MAX:
        raise ValueError(f"seed must be an integer from {SEED_MIN} to {SEED_MAX}, got {seed!r}")
    return seed


#: ``--seed`` of a built-in bot run as its own process
HOUSE_SEED_HELP = (
    "seed this bot's choices (default: a secret from the operating system; with a seed, a "
    "match of the same id and seat plays the same way again)"
)


def seed_argument(text: str) -> int:
    """``--seed`` of a command line (an argparse type): a clear error for a bad one."""
    try:
        return check_seed(int(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"seed must be an integer from {SEED_MIN} to {SEED_MAX}, got {text!r}"
        ) from None


def keyed_digest(secret: int, parts: list[object]) -> bytes:
    """HMAC-SHA256 of ``parts`` (as JSON) keyed by ``secret``."""
    return hmac.new(str(secret).encode(), json.dumps(parts).encode(), hashlib.sha256).digest()


def derive_seed(secret: int, *parts: object) -> int:
    """A seed of :data:`SEED_BITS` bits for ``parts``, which only ``secret`` computes."""
    return int.from_bytes(keyed_digest(secret, list(parts))[:8], "big") >> (64 - SEED_BITS)


def house_bot_seed(match_seed: int, seat: int) -> int:
    """The seed of the built-in bot in ``seat``: secret while the match seed is, and the
    same wherever the match is played (the referee, a worker process, ``arena play``), so
    a match of house bots replays exactly from its seed."""
    return derive_seed(match_seed, "house-bot", seat)


def attempt_seed(previous: int, attempt: int) -> int:
    """The seed of a match's ``attempt``-th play (2, 3, ...), from the seed it played with
    the time before: a match played again after an abort (a referee killed, a worker
    lost) never reuses a seed whose consequences a bot has seen (its deal, its cards,
    the dice so far: replaying them would let a losing bot abort and play on knowing
    them). Keyed by the previous seed, so it is as secret as that one, and the organiser
    follows the chain from the schedule's seed (attempt 1). The store chooses it, in the
    transaction that counts the attempt (``Store.start_match``, ``Store.claim_match``)."""
    if attempt < 2:
        raise ValueError(f"attempt {attempt}: the first attempt plays the match's own seed")
    return derive_seed(previous, "attempt", attempt)
