"""The example Risk bots: legal in every configuration, deterministic, and not aimless."""

from __future__ import annotations

import pytest

from arena.engine import EndReason, play_match
from arena.plugins import load_registry

REGISTRY = load_registry()
RISK = REGISTRY.game("risk")
BOTS = ["random", "aggressive", "defensive", "blitz"]


def _play(names, seed, **options):
    bots = [REGISTRY.bot("risk", n).factory(seat, seed * 10 + seat) for seat, n in enumerate(names)]
    return play_match(RISK, bots, seed, options, names=names)


@pytest.mark.parametrize("bot", BOTS)
@pytest.mark.parametrize("setup", ["claim", "deal"])
@pytest.mark.parametrize("cards", ["progressive", "none"])
def test_bot_plays_whole_games_legally(bot, setup, cards):
    """play_match raises BotError on any illegal action, so finishing proves legality."""
    for players in (3, 6):
        rec = _play([bot] * players, seed=players, setup=setup, cards=cards, **{"turn-limit": "80"})
        assert rec.result is not None


@pytest.mark.parametrize("bot", BOTS)
def test_bot_is_deterministic_given_the_seed(bot):
    names = [bot, "random", "blitz"]
    first = _play(names, seed=5)
    again = _play(names, seed=5)
    other = _play(names, seed=6)
    assert first.steps == again.steps
    assert first.steps != other.steps


@pytest.mark.parametrize("bot", ["aggressive", "defensive", "blitz"])
def test_strategic_bots_beat_the_random_bot(bot):
    """Over 12 three-player games against two random bots, the strategic bot wins most."""
    wins = 0
    for seed in range(12):
        names = [bot, "random", "random"]
        names = names[seed % 3 :] + names[: seed % 3]  # rotate seats
        rec = _play(names, seed=seed, **{"turn-limit": "200"})
        winners = [names[s] for s in rec.result.winners]
        wins += rec.result.reason == EndReason.VICTORY and winners == [bot]
    assert wins >= 9
