"""What the web shows of a match's secrets, and when: the referee's public rules
(``ArenaService.GetMatch`` / ``GetTournament`` for a caller without the organiser key).

* A match's replay (and so its event log) and its seeds only once it has finished: the
  seed tells every secret of the match (an aborted match is played again with a fresh
  seed, but its public deal seed stays).
* A tournament's matches' replays and seeds only once the whole tournament has finished:
  the rotations of a deal start from the same board (each with its own secrets), so the
  moves of one would help a bot in another still to be played.
* A tournament's own seed (every match seed derives from it) only once it has finished.

The web has no organiser: everyone gets these rules.
"""

from __future__ import annotations

from arena.store import MatchRow, TournamentRow

TOURNAMENT_HIDES = (
    "the replays and seeds of a tournament's matches are shown once the whole tournament "
    "has finished: the rotations of a deal start from the same board, so one's moves "
    "would help a bot in another"
)
MATCH_HIDES = "a match's replay and seed are shown once it has finished"
#: why a match that did not finish has no replay yet, by its status (the store's words:
#: arena.store.Outcome): it is played again, and its replay is that game's
NOT_FINISHED = {
    "pending": "the match has not been played yet: its replay and seed are shown once "
    "it has finished",
    "aborted": "the match was aborted (stopped before its end: a referee shutting down, "
    "a worker lost) and is played again from the start, with a fresh seed: the replay "
    "here will be that new game's, when it has been played to its end",
    "failed": "the match could not be played as asked (an unknown bot, a bot that "
    "crashed in process); it is played again when its tournament is resumed: the "
    "replay here will be that game's, when it has been played to its end",
}


def tournament_seed_visible(tournament: TournamentRow) -> bool:
    return tournament.status == "finished"


def replay_hidden_why(match: MatchRow, tournament: TournamentRow | None) -> str | None:
    """Why the match's replay and seed are hidden now; None when they may be shown."""
    if match.status != "finished":
        return NOT_FINISHED.get(match.status, MATCH_HIDES)
    if match.tournament_id is not None and (
        tournament is None or not tournament_seed_visible(tournament)
    ):
        return TOURNAMENT_HIDES
    return None
