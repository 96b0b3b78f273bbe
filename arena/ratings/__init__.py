"""Ratings for bots from finished games: online Elo, maximum-likelihood Elo with
intervals, OpenSkill for many-player games, and head-to-head tests (LOS, SPRT).

Every function is pure: it takes results and returns new values, and refuses bad input
with an error naming the value. Games come in as rankings (:class:`Ranking`); the pairwise
methods take ``(a, b, score_a)`` triples from :func:`pairwise` / :func:`pairwise_all`.
"""

from arena.ratings.compare import (
    HeadToHead,
    Sprt,
    elo_difference,
    head_to_head,
    llr_trinomial,
    los,
    sprt,
)
from arena.ratings.elo import expected_score, online, update
from arena.ratings.mle import (
    Leaderboard,
    PairTable,
    Row,
    fit,
    one_blas_thread,
    tabulate,
    tabulate_arrays,
    tabulate_counts,
    tabulate_tallies,
)
from arena.ratings.openskill_ratings import Skill, Skills, rate
from arena.ratings.results import PairResult, Player, Ranking, pairwise, pairwise_all, rankings

__all__ = [
    "HeadToHead",
    "Leaderboard",
    "PairResult",
    "PairTable",
    "Player",
    "Ranking",
    "Row",
    "Skill",
    "Skills",
    "Sprt",
    "elo_difference",
    "expected_score",
    "fit",
    "head_to_head",
    "llr_trinomial",
    "los",
    "one_blas_thread",
    "online",
    "pairwise",
    "pairwise_all",
    "rankings",
    "rate",
    "sprt",
    "tabulate",
    "tabulate_arrays",
    "tabulate_counts",
    "tabulate_tallies",
    "update",
]
