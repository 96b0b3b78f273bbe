"""Everything the commands print beyond their own lines: progress, JSON documents, error
lines, and what to do when the reader of the output goes away."""

from __future__ import annotations

import os
import sys
from typing import Any

#: seconds between two status lines when the output is not a terminal (a log)
LOG_EVERY_S = 5.0
#: seconds between two fits of the standings behind the leader a display shows
LEADER_EVERY_S = 1.0


class TournamentProgress:
    """A tournament's progress on stdout, called with the runner's ``Progress`` after each
    result. On a terminal, a bar (rich) that fits its width, redrawn in place with the
    matches played, the time and the leader so far; in a log, a plain line every few
    seconds and one at the end, with no control codes. ``verbose`` adds a line per
    finished game, as cutechess-cli prints them (:func:`game_line`).

    The leader is ranked by the function that orders the final table
    (``Progress.leader``), so the last one shown is the table's first. Use it as a
    context manager: leaving it draws the last state and ends the bar."""

    def __init__(self, verbose: bool = False, bar: bool = True, console: Any = None) -> None:
        from rich.console import Console

        self.console = console or Console(highlight=False)
        self.verbose = verbose
        self.bar = bar
        self.live = bar and self.console.is_terminal
        self._bar: Any = None
        self._task: Any = None
        self._state: Any = None
        self._leader = ""
        self._leader_at = self._line_at = float("-inf")
        #: matches finished before this run (not counted in its rate)
        self._already = 0

    def __enter__(self) -> TournamentProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def start(self, state: Any) -> None:
        """Shown before any match ends (a match through a referee can take minutes): the
        bar at its count so far, or a line in a log. ``state``'s count is what earlier
        runs played: the time left is estimated from this run's matches only."""
        self._state = state
        self._already = state.finished
        if self.live:
            self._draw(state)
        elif self.bar:
            self._line_at = state.started
            self.console.out(
                f"{state.finished}/{state.total} matches: playing (a line every "
                f"{LOG_EVERY_S:.0f} s once results come)",
                highlight=False,
            )

    def __call__(self, state: Any) -> None:
        import time

        if self._state is None:
            self._already = 0
        self._state = state
        now = time.monotonic()
        done = state.finished >= state.total
        if done or now - self._leader_at >= LEADER_EVERY_S:
            self._leader, self._leader_at = leader_text(state), now
        if self.live:
            self._draw(state)  # first: the game's line is printed above the bar as it is now
        outcome = state.outcome
        if self.verbose and outcome is not None and outcome.status == "finished":
            self.console.out(game_line(state), highlight=False)
        if not self.live and self.bar and (done or now - self._line_at >= LOG_EVERY_S):
            self._line_at = now
            self.console.out(status_line(state, self._leader, now, self._already), highlight=False)

    def _draw(self, state: Any) -> None:
        import time

        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.table import Column

        if self._bar is None:
            # the bar and the status share what the counts and times leave of the width,
            # a third and two thirds; a status too long is cut short ("..."), not wrapped
            self._bar = Progress(
                BarColumn(bar_width=None, table_column=Column(ratio=1)),
                MofNCompleteColumn(),
                TextColumn("matches"),
                TimeElapsedColumn(),
                # this run's average rate, not rich's recent speed: matches through a
                # referee end in bursts (16 at once), which made that say 0:00:01 for 50 s
                TextColumn("[cyan]{task.fields[eta]}"),
                TextColumn(
                    "{task.fields[status]}",
                    markup=False,
                    table_column=Column(no_wrap=True, overflow="ellipsis", ratio=2),
                ),
                console=self.console,
                expand=True,
            )
            self._task = self._bar.add_task("", total=state.total, status="", eta="")
            self._bar.start()
        problems = f"{state.problems} retried/failed  " if state.problems else ""
        left = time_left(state, time.monotonic(), self._already)
        self._bar.update(
            self._task,
            completed=state.finished,
            total=state.total,
            status=problems + self._leader,
            eta="-:--:--" if left is None else _clock(left),
        )

    def close(self) -> None:
        """Draw the last state, the leader fitted on every result, and end the bar."""
        state = self._state
        if state is not None:
            self._leader = leader_text(state)
            if self._bar is not None:
                self._draw(state)
            elif self.bar and state.finished < state.total:  # not in the log yet
                import time

                line = status_line(state, self._leader, time.monotonic(), self._already)
                self.console.out(line)
        if self._bar is not None:
            self._bar.stop()
            self._bar = None


def tournament_display(args: Any) -> TournamentProgress | None:
    """The progress display that ``--quiet`` and ``-v`` ask for (none: neither a bar nor
    game lines)."""
    if args.quiet and not args.verbose:
        return None
    return TournamentProgress(verbose=args.verbose, bar=not args.quiet)


def leader_text(state: Any) -> str:
    leader = state.leader()
    return f"leader {leader[0]} ({leader[1]:.0f})" if leader else ""


def time_left(state: Any, now: float, already: int = 0) -> float | None:
    """Seconds until the tournament ends at this run's average rate (the matches it
    played, ``already`` finished before it not counted); None before its first."""
    played = state.finished - already
    if played <= 0:
        return None
    return (state.total - state.finished) * (now - state.started) / played


def _clock(seconds: float) -> str:
    whole = round(seconds)
    return f"{whole // 3600}:{whole // 60 % 60:02d}:{whole % 60:02d}"


def status_line(state: Any, leader: str, now: float, already: int = 0) -> str:
    """A tournament's progress as one plain line (for a log)."""
    elapsed = now - state.started
    left = time_left(state, now, already)
    problems = f"  {state.problems} retried/failed" if state.problems else ""
    eta = "" if left is None else f", ~{left:.0f} s left"
    line = f"{state.finished}/{state.total} matches  {elapsed:.0f} s elapsed{eta}{problems}"
    return f"{line}  {leader}" if leader else line


def game_line(state: Any) -> str:
    """The match that just finished, as cutechess-cli shows a game: its number, the bots
    best first with their places, how it ended and how long it went ("game 12/60: blitz
    1st, aggressive 2nd, random 3rd (victory, 54 turns)")."""
    from arena.engine.core import ordinal

    job, outcome = state.job, state.outcome
    seats = sorted(range(len(outcome.places)), key=lambda seat: outcome.places[seat])
    placed = ", ".join(f"{job.seats[s].label} {ordinal(outcome.places[s])}" for s in seats)
    how = outcome.reason.replace("_", " ")
    length = match_length(outcome.replay) if outcome.replay else ""
    return f"game {state.finished}/{state.total}: {placed} ({how}{', ' + length if length else ''})"


def match_length(replay: str) -> str:
    """How long a match went, from its replay text: Risk in turns (its ``turn`` events),
    Stratego in moves (``move`` and ``strike`` events: a move onto a piece)."""
    import orjson

    turns = moves = 0
    for step in orjson.loads(replay).get("steps", ()):
        for event in step[2]:
            kind = event.get("e")
            if kind == "turn":
                turns = event["turn"]
            elif kind in ("move", "strike"):
                moves += 1
    if turns:
        return f"{turns} turns"
    return f"{moves} moves" if moves else ""


def print_json(document: Any) -> int:
    """``--json``: one JSON document on stdout (infinite numbers, which JSON lacks, as null)."""
    import orjson

    print(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode())
    return 0


def stdout_gone() -> int:
    """The reader of our output went away (``arena ... | head -1``): stop quietly, the way
    Python's documentation says to (its note on SIGPIPE): point stdout at devnull, so the
    flush at exit does not fail again, and exit as a process killed by SIGPIPE would."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 128 + 13


def error(message: object) -> None:
    """One line on stderr: what went wrong, and (in the message) what to do."""
    print(f"arena: error: {message}", file=sys.stderr)


def warn(message: object) -> None:
    """One line on stderr that does not stop the command (a bot's refused action)."""
    print(f"arena: warning: {message}", file=sys.stderr, flush=True)


def os_error(exc: OSError) -> str:
    """An operating system's error about a file as ``FILE: what`` (``game.json: no such
    file or directory``), not Python's ``[Errno 2] No such file or directory: 'game.json'``."""
    if exc.filename is None or not exc.strerror:
        return str(exc)
    return f"{exc.filename}: {exc.strerror[0].lower()}{exc.strerror[1:]}"
