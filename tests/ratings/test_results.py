"""Rankings and their pairwise games: every pair of seats, ties as draws, clear errors."""

from __future__ import annotations

import pytest

from arena.ratings.results import Ranking, pairwise, pairwise_all, rankings


def test_four_player_ranking_with_a_tie_gives_every_pair():
    # b won, a and c tied for second, d came last.
    pairs = pairwise(["a", "b", "c", "d"], [2, 1, 2, 4])
    assert pairs == [
        ("a", "b", 0.0),
        ("a", "c", 0.5),
        ("a", "d", 1.0),
        ("b", "c", 1.0),
        ("b", "d", 1.0),
        ("c", "d", 1.0),
    ]


def test_points_of_a_ranking_follow_the_places():
    points = {"a": 0.0, "b": 0.0, "c": 0.0, "d": 0.0}
    for a, b, score in pairwise(["a", "b", "c", "d"], [2, 1, 2, 4]):
        points[a] += score
        points[b] += 1 - score
    assert points == {"a": 1.5, "b": 3.0, "c": 1.5, "d": 0.0}


def test_two_player_game_is_one_pair():
    assert pairwise(["red", "blue"], [2, 1]) == [("red", "blue", 0.0)]
    assert pairwise(["red", "blue"], [1, 1]) == [("red", "blue", 0.5)]


def test_places_need_not_be_consecutive():
    assert pairwise(["x", "y", "z"], [3, 7, 3]) == pairwise(["x", "y", "z"], [1, 2, 1])


def test_ranking_unpacks_like_a_pair_and_lists_its_pairs():
    game = Ranking(["x", "y", "z"], [1, 2, 3])
    players, places = game
    assert players == ("x", "y", "z") and places == (1, 2, 3)
    assert game.pairs() == [("x", "y", 1.0), ("x", "z", 1.0), ("y", "z", 1.0)]


def test_pairwise_all_concatenates_games_in_order():
    games = [Ranking(["a", "b"], [1, 2]), (["b", "c", "a"], [1, 1, 3])]
    assert pairwise_all(games) == [
        ("a", "b", 1.0),
        ("b", "c", 0.5),
        ("b", "a", 1.0),
        ("c", "a", 1.0),
    ]


def test_rankings_accepts_both_forms():
    checked = rankings([Ranking(["a", "b"], [1, 2]), (["c", "d"], [2, 1])])
    assert checked == [Ranking(["a", "b"], [1, 2]), Ranking(["c", "d"], [2, 1])]


@pytest.mark.parametrize(
    ("players", "places", "error", "message"),
    [
        (["a", "b", "c"], [1, 2], ValueError, r"same length, got 3 players .* and 2 places"),
        (["a"], [1], ValueError, r"at least 2 players, got \['a'\]"),
        ([], [], ValueError, "at least 2 players"),
        (["a", "b"], [1, 0], ValueError, r"places\[1\] must be >= 1 \(1 is best\), got 0"),
        (["a", "b"], [-2, 1], ValueError, r"places\[0\] must be >= 1 .* got -2"),
        (["a", "b"], [1, 1.5], TypeError, r"places\[1\] must be an integer, got 1.5"),
        (["a", "b"], [True, 2], TypeError, r"places\[0\] must be an integer, got True"),
        (["a", "b", "a"], [1, 2, 3], ValueError, r"player 'a' sits in seats 0 and 2"),
        ([["a"], "b"], [1, 2], TypeError, r"players\[0\] must be hashable"),
        ("ab", [1, 2], TypeError, "not strings"),
    ],
)
def test_bad_rankings_are_refused_with_the_bad_value(players, places, error, message):
    with pytest.raises(error, match=message):
        pairwise(players, places)
    with pytest.raises(error, match=message):
        Ranking(players, places)


def test_errors_in_many_games_name_the_game():
    with pytest.raises(ValueError, match=r"game 1: places\[0\] must be >= 1"):
        pairwise_all([(["a", "b"], [1, 2]), (["a", "b"], [0, 1])])
    with pytest.raises(TypeError, match=r"game 0 must be a Ranking or a \(players, places\) pair"):
        rankings([("a", "b", "c")])
