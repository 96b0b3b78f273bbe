"""The OpenSkill wrapper: the same numbers as the openskill package itself."""

from __future__ import annotations

import random

import pytest
from openskill.models import PlackettLuce

from arena.ratings.openskill_ratings import Skill, Skills, rate
from arena.ratings.results import Ranking


def random_games(seed: int, count: int) -> list[tuple[list[str], list[int]]]:
    """Risk-like games of 2 to 6 bots from a pool of 8, with some tied places."""
    rng = random.Random(seed)
    pool = [f"bot{k}" for k in range(8)]
    games = []
    for _ in range(count):
        players = rng.sample(pool, rng.randint(2, 6))
        places = [rng.randint(1, len(players)) for _ in players]
        games.append((players, places))
    return games


def direct(games, model) -> dict[str, tuple[float, float, float]]:
    """The reference: openskill's own API, game by game."""
    ratings = {}
    for players, places in games:
        teams = [[ratings.get(p, model.rating())] for p in players]
        for p, [new] in zip(players, model.rate(teams, ranks=places), strict=True):
            ratings[p] = new
    return {p: (r.mu, r.sigma, r.ordinal()) for p, r in ratings.items()}


@pytest.mark.parametrize(
    "model",
    [PlackettLuce(), PlackettLuce(mu=1500, sigma=500, beta=250, tau=5)],
    ids=["default", "elo-like"],
)
def test_agrees_with_calling_openskill_directly(model):
    games = random_games(seed=5, count=60)
    ours = rate(games, model=model)
    reference = direct(games, model)
    assert ours.keys() == reference.keys()
    for player, (mu, sigma, ordinal) in reference.items():
        assert ours[player] == pytest.approx((mu, sigma, ordinal), rel=1e-12)


def test_default_model_is_plackett_luce_with_default_parameters():
    games = random_games(seed=9, count=20)
    assert rate(games) == rate(games, model=PlackettLuce())


def test_published_one_versus_one_update():
    # openskill's published 1v1 result from the default prior (mu 25, sigma 25/3), no tau.
    skills = rate([Ranking(["winner", "loser"], [1, 2])], model=PlackettLuce(tau=0))
    assert skills["winner"].mu == pytest.approx(27.63523138347365)
    assert skills["loser"].mu == pytest.approx(22.36476861652635)
    assert skills["winner"].sigma == pytest.approx(8.065506316323548)
    assert skills["loser"].sigma == pytest.approx(8.065506316323548)


def test_tied_newcomers_stay_equal_and_ordinal_is_mu_minus_three_sigma():
    skills = rate([(["a", "b", "c"], [2, 1, 2])])
    assert skills["a"] == skills["c"]
    assert skills["b"].mu > skills["a"].mu
    for skill in skills.values():
        assert isinstance(skill, Skill)
        assert skill.ordinal == pytest.approx(skill.mu - 3 * skill.sigma)


def test_bad_games_are_refused_with_their_number():
    with pytest.raises(ValueError, match=r"game 1: places\[0\] must be >= 1"):
        rate([(["a", "b"], [1, 2]), (["a", "b"], [0, 1])])


def test_skills_go_on_game_by_game_and_a_copy_goes_on_apart():
    games = random_games(seed=3, count=40)
    skills = Skills().add(games[:25])
    copy = skills.copy()
    assert skills.add(games[25:]).current() == rate(games)  # to the last bit
    assert copy.current() == rate(games[:25])  # untouched by the other's games
    assert copy.add(games[25:]).current() == rate(games)
