"""Tournaments: schedules of who plays whom, where and with which seeds."""

from arena.tournament.schedule import (
    DEFAULT_MAX_GROUPS,
    ScheduledMatch,
    gauntlet,
    pair_balance,
    round_robin,
    seat_balance,
)

__all__ = [
    "DEFAULT_MAX_GROUPS",
    "ScheduledMatch",
    "gauntlet",
    "pair_balance",
    "round_robin",
    "seat_balance",
]
