"""The leaderboards the web shows, kept in the web process and brought up to date from
the matches finished since the last look: a request reads every match only once.

A request asks the store whether anything was committed since the last look
(:class:`Changes`), and if so how many matches of the board have finished (one index
range).
The same number as last time: nothing came, and the rows kept are the answer (the fit is
not run again). Another number: the board reads the matches finished since a moment
``settled_before`` (the *tail*), adds the new ones to its :class:`Totals` (sums that do
not depend on the order), and goes on with its :class:`Running` figures (online Elo,
OpenSkill, which do). The fit is made again once, at the next request for the rows.

Exact, not approximate. The leaderboard orders matches by when they finished; a writer
stamps that time before it commits, so a match can become visible after one stamped
later (two Celery workers writing at once). The board therefore keeps the figures in
order up to ``settled_before`` (``head``), a moment :data:`MARGIN` before the latest
match, and the tail after it as read: a new match that lands inside the tail, not after
it, is seen when the tail is read again, and the running figures are replayed from the
head. A match that lands before the tail (a writer that took longer than the margin to
commit) shows in the count of the matches finished before the tail, which then no longer
adds up: the board starts again from every match. Matches that come while the tail is
read are read with it or at the next request, as the database's own reading sees them.
Whichever path it takes, the rows are those :func:`arena.tournament.leaderboard.compute`
gives on the same matches, to the last bit.

The rating history (:meth:`Board.history`) refits the board as it stood after each of a
bot's tournaments; those fits are kept too (by how many games they cover and the last of
them, so one that a late match changed is never reused), and shared between bots.
"""

from __future__ import annotations

import dataclasses
import threading
from array import array
from collections import OrderedDict, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import text

from arena.ratings import fit, one_blas_thread, pairwise, tabulate_tallies
from arena.store import PlayedGame, Store
from arena.tournament.leaderboard import BoardRow, Running, Totals, board_rows, rated

#: how long before the latest finished match the order is taken as settled: longer than a
#: writer takes from stamping a result to committing it (SQLite waits up to 60 s for a lock)
MARGIN = timedelta(minutes=2)
#: rating-history fits kept (each a few numbers per bot), the least recently used go
HISTORY_FITS = 512


class Log:
    """A board's rated games in order, compactly: each game's pairwise results (as
    indices of bots), its group (tournament, or the match itself) and its bots' games, so
    that the board as it stood after any game can be tabulated without reading it again."""

    def __init__(self) -> None:
        self.players: list[str] = []
        self.index: dict[str, int] = {}
        self.first = array("q")
        self.second = array("q")
        #: per pairwise result: 0 the first won, 1 a draw, 2 the second won
        self.outcome = array("b")
        #: per game: the pairwise results up to and including it
        self.ends = array("q")
        self.match_ids: list[str] = []
        self.groups: list[str] = []
        self.by_group: dict[str, list[int]] = defaultdict(list)
        self.by_bot: dict[str, list[int]] = defaultdict(list)

    def __len__(self) -> int:
        return len(self.ends)

    def add(self, games: Iterable[PlayedGame]) -> None:
        for g in games:
            number = len(self.ends)
            for a, b, score in pairwise(g.bot_ids, g.places):
                self.first.append(self._player(a))
                self.second.append(self._player(b))
                self.outcome.append(0 if score == 1.0 else 1 if score == 0.5 else 2)
            self.ends.append(len(self.first))
            group = g.tournament_id or g.match_id
            self.match_ids.append(g.match_id)
            self.groups.append(group)
            self.by_group[group].append(number)
            for bot in g.bot_ids:
                self.by_bot[bot].append(number)

    def truncate(self, games: int) -> None:
        """Keep the first ``games`` games only."""
        if games >= len(self.ends):
            return
        pairs = self.ends[games - 1] if games else 0
        for group in set(self.groups[games:]):
            numbers = self.by_group[group]
            while numbers and numbers[-1] >= games:
                numbers.pop()
        for numbers in self.by_bot.values():
            while numbers and numbers[-1] >= games:
                numbers.pop()
        del self.first[pairs:], self.second[pairs:], self.outcome[pairs:]
        del self.ends[games:], self.match_ids[games:], self.groups[games:]

    def _player(self, bot: str) -> int:
        k = self.index.get(bot)
        if k is None:
            k = self.index[bot] = len(self.players)
            self.players.append(bot)
        return k


@dataclass
class Board:
    """One game and variant set, as far as the store has been read."""

    game: str
    variants: str
    totals: Totals = field(default_factory=Totals)
    #: the running figures of the matches finished before ``settled_before``
    head: Running = field(default_factory=Running)
    #: the running figures of every match read
    running: Running = field(default_factory=Running)
    #: the matches finished at ``settled_before`` or later, in the leaderboard's order
    tail: list[PlayedGame] = field(default_factory=list)
    #: how many finished matches (rated or not) are older than ``settled_before``
    settled: int = 0
    settled_before: datetime | None = None
    log: Log = field(default_factory=Log)
    #: games of ``log`` that are in ``head``
    head_games: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: the generation of the store (:meth:`Boards._look`) it was last brought up to
    checked: int = -1
    rows: list[BoardRow] | None = None
    table: list[dict[str, Any]] | None = None
    fits: OrderedDict[tuple[int, str], dict[str, tuple[float, float, float]]] = field(
        default_factory=OrderedDict
    )

    @property
    def known(self) -> int:
        """How many finished matches the board has read."""
        return self.settled + len(self.tail)

    def take(self, fetched: list[PlayedGame]) -> None:
        """Bring the board up to ``fetched``: every match finished since
        ``settled_before``, read at once, in the leaderboard's order."""
        old = [g.match_id for g in self.tail]
        seen = set(old)
        new = rated(g for g in fetched if g.match_id not in seen)
        in_order = [g.match_id for g in fetched[: len(old)]] == old
        if in_order and len(fetched) == len(old):
            return
        self.totals.add(new)
        before = self.settled_before
        times = [g.finished for g in fetched]
        if fetched and all(t is not None for t in times):
            latest = max(t for t in times if t is not None) - MARGIN
            before = latest if before is None else max(before, latest)
        # a prefix: the matches come in the order of their finish times
        settled = [g for g in fetched if g.finished and before and g.finished < before]
        tail = fetched[len(settled) :]
        rated_tail = rated(tail)
        if in_order and len(new) <= len(rated_tail):
            # head + old tail + new is head + what was read: go on from where it stands
            self.running.add(new)
            self.log.add(new)
            self.head.add(rated(settled))
        else:
            # a match came inside the tail (or the tail is the shorter way): replay it
            self.head.add(rated(settled))
            self.running = self.head.copy().add(rated_tail)
            self.log.truncate(self.head_games)
            self.log.add(rated(fetched))
        self.head_games = len(self.log) - len(rated_tail)
        self.settled += len(settled)
        self.settled_before = before
        self.tail = tail
        self.rows = self.table = None

    def reset(self) -> None:
        """Forget everything read (keeping the lock): the next read starts from all."""
        vars(self).update(vars(Board(self.game, self.variants, lock=self.lock)))

    def history(self, bots: set[str], points: int) -> list[dict[str, object]]:
        """The board refitted after each of the latest ``points`` groups (a tournament,
        or a lone match) that any of ``bots`` played in, each once the last match of the
        group had finished: those bots' Elo and interval in each fit."""
        log = self.log
        ends = {
            log.by_group[log.groups[number]][-1]
            for bot in bots
            for number in log.by_bot.get(bot, ())
        }
        latest = sorted(ends)[-points:]
        out = []
        for end, ratings in zip(latest, self._fits(latest), strict=True):
            group = log.groups[end]
            for bot in sorted(bots & ratings.keys(), key=log.index.__getitem__):
                elo, low, high = ratings[bot]
                out.append(
                    {
                        "bot_id": bot,
                        "after": group,
                        "is_tournament": group != log.match_ids[end],
                        "matches": end + 1,
                        "elo": elo,
                        "elo_low": low,
                        "elo_high": high,
                    }
                )
        return out

    def _fits(self, ends: Sequence[int]) -> list[dict[str, tuple[float, float, float]]]:
        """The fit of the first ``end + 1`` games, for each end (ascending), kept."""
        log = self.log
        keys = [(end + 1, log.match_ids[end]) for end in ends]
        missing = [end for end, key in zip(ends, keys, strict=True) if key not in self.fits]
        if missing:
            # the pairwise counts as they stood after each missing end, one pass
            order = sorted(range(len(log.players)), key=log.players.__getitem__)
            rank = np.empty(len(order), np.int64)
            rank[order] = np.arange(len(order))
            n = len(order)
            counts = np.zeros((3, n * n), np.int64)
            done = 0
            start: dict[str, float] | None = None
            for end in missing:
                stop = log.ends[end]
                a = rank[np.frombuffer(log.first[done:stop], np.int64)]
                b = rank[np.frombuffer(log.second[done:stop], np.int64)]
                outcome = np.frombuffer(log.outcome[done:stop], np.int8)
                # as (lower rank, higher rank): a win of the second is one of the lower
                swap = a > b
                keys_ab = np.where(swap, b, a) * n + np.where(swap, a, b)
                flipped = np.where(swap, 2 - outcome, outcome)
                for column in range(3):
                    counts[column] += np.bincount(keys_ab[flipped == column], minlength=n * n)
                done = stop
                with one_blas_thread():
                    # from the fit of the last end: nearly the same games, fewer steps
                    fitted = _fit_counts(counts, n, order, log, start)
                self._remember((end + 1, log.match_ids[end]), fitted)
                start = {bot: figures[0] for bot, figures in fitted.items()}
        out = []
        for key in keys:
            self.fits.move_to_end(key)
            out.append(self.fits[key])
        return out

    def _remember(self, key: tuple[int, str], ratings: dict[str, tuple[float, float, float]]):
        self.fits[key] = ratings
        while len(self.fits) > HISTORY_FITS:
            self.fits.popitem(last=False)


def _fit_counts(
    counts: np.ndarray, n: int, order: list[int], log: Log, start: dict[str, float] | None
) -> dict[str, tuple[float, float, float]]:
    """Fit pairwise counts held as (3, n * n) by rank: each bot's Elo and interval."""
    total = counts.sum(axis=0)
    keys = np.flatnonzero(total)
    low, high = keys // n, keys % n
    present = np.unique(np.concatenate([low, high]))
    compact = np.full(n, -1, np.int64)
    compact[present] = np.arange(len(present))
    players = [log.players[order[k]] for k in present]
    table = tabulate_tallies(compact[low], compact[high], counts[:, keys].T, players)
    board = fit(table, start=start)
    return {row.player: (row.rating, row.low, row.high) for row in board}


#: a leaderboard row's fields, as its dict has them (and ``name``)
ROW_FIELDS = tuple(f.name for f in dataclasses.fields(BoardRow))


def board_row(row: BoardRow, name: str) -> dict[str, Any]:
    """A leaderboard row as a dict, with the bot's name (not ``dataclasses.asdict``: it
    deep-copies each value, 3 ms a hundred rows)."""
    return {**{f: getattr(row, f) for f in ROW_FIELDS}, "name": name}


class Changes:
    """A token that stays the same while nothing is committed to the store: SQLite's
    ``PRAGMA data_version`` on a connection of its own (it changes when another
    connection, in any process, commits), PostgreSQL's current snapshot (the
    transactions finished and in progress, of the whole server: another database's
    writes change it too, which only costs a look). Elsewhere None: always look."""

    def __init__(self, store: Store) -> None:
        self._lock = threading.Lock()
        self._engine = store.engine
        self._sqlite = (
            store.engine.raw_connection() if store.engine.dialect.name == "sqlite" else None
        )

    def token(self) -> object | None:
        if self._sqlite is not None:
            with self._lock:
                cursor = self._sqlite.cursor()
                try:
                    return cursor.execute("PRAGMA data_version").fetchone()[0]
                finally:
                    cursor.close()
        if self._engine.dialect.name == "postgresql":
            with self._engine.connect() as connection:
                return connection.execute(text("SELECT pg_current_snapshot()::text")).scalar()
        return None

    def close(self) -> None:
        with self._lock:  # not while a look is using the connection
            if self._sqlite is not None:
                self._sqlite.close()
                self._sqlite = None


class Boards:
    """Every board of one store, each read as far as the last request needed.

    ``watch``: keep a :class:`Changes` token, so that a request after which nothing was
    committed reads nothing at all (the web app's, for as long as it runs; close it).
    Without, each request counts the board's matches (a caller's one-off)."""

    def __init__(self, store: Store, watch: bool = False) -> None:
        self.store = store
        self._changes = Changes(store) if watch else None
        self._token: object | None = None
        #: bumped each time the store may have changed since the last look
        self._generation = 0
        self._keys: tuple[int, list[tuple[str, str]]] | None = None
        self._boards: dict[tuple[str, str], Board] = {}
        self._lock = threading.Lock()
        self._labels: dict[str, str] = {}
        self._names: dict[str, str] = {}

    def close(self) -> None:
        if self._changes is not None:
            self._changes.close()

    def board(self, game: str, variants: str) -> Board:
        """The board brought up to the store as it is now (read under the board's lock:
        one request reads, the others wait for it and find it done). A pair the store
        has no finished match of (:meth:`listed`) gets an empty board that is not kept:
        made-up names cost nothing to remember."""
        generation = self._look()
        with self._lock:
            board = self._boards.get((game, variants))
        if board is None:
            if (game, variants) not in self.listed():
                return Board(game, variants)
            with self._lock:
                board = self._boards.setdefault((game, variants), Board(game, variants))
        with board.lock:
            if board.checked != generation:
                self._refresh(board)
                board.checked = generation
        return board

    def listed(self) -> list[tuple[str, str]]:
        """Every (game, variant key) with a finished match (:meth:`Store.boards`)."""
        generation = self._look()
        keys = self._keys
        if keys is None or keys[0] != generation:
            keys = self._keys = (generation, self.store.boards())
        return keys[1]

    def _look(self) -> int:
        """The generation of the store as it is now (a new one if it may have changed)."""
        token = self._changes.token() if self._changes is not None else None
        with self._lock:
            if token is None or token != self._token:
                self._generation += 1
                self._token = token
            return self._generation

    def rows(self, board: Board) -> list[BoardRow]:
        """The rows of a board from :meth:`board`: fitted once per change, then kept."""
        with board.lock:
            return self._rows(board)

    def table(self, board: Board) -> list[dict[str, Any]]:
        """The rows as the pages and the API show them (:func:`board_row`), kept too:
        treat them as read-only."""
        with board.lock:
            if board.table is None:
                rows = self._rows(board)
                names = self.names(r.bot_id for r in rows)
                board.table = [board_row(r, names.get(r.bot_id, r.label)) for r in rows]
            return board.table

    def _rows(self, board: Board) -> list[BoardRow]:
        if board.rows is None:
            labels = self.labels(board.totals.games)
            board.rows = board_rows(board.totals, board.running, labels)
            board.table = None
        return board.rows

    def labels(self, bot_ids: Iterable[str]) -> dict[str, str]:
        """Bot id -> label (``name@version``), with these bots in it: read again when
        one is not known yet (bots are only ever added, never renamed)."""
        if not set(bot_ids) <= self._labels.keys():
            self._read_bots()
        return self._labels

    def names(self, bot_ids: Iterable[str]) -> dict[str, str]:
        """Bot id -> name, with these bots in it (as :meth:`labels`)."""
        if not set(bot_ids) <= self._names.keys():
            self._read_bots()
        return self._names

    def _read_bots(self) -> None:
        bots = self.store.bots()
        self._labels = {row.id: row.label for row in bots}
        self._names = {row.id: row.name for row in bots}

    def _refresh(self, board: Board) -> None:
        store, game, variants = self.store, board.game, board.variants
        if store.count_finished(game, variants) == board.known:
            return
        before = board.settled_before
        fetched = store.finished_since(game, variants, before)
        # counted after the tail was read: a match stamped before the tail and committed
        # since the last look (a writer slower than the margin) shows here, and only here
        if before is not None and store.count_finished(game, variants, before) != board.settled:
            board.reset()
            fetched = store.finished_since(game, variants)
        board.take(fetched)
