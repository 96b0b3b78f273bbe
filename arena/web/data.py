"""What every page shows, as plain JSON-ready dicts: a page renders one of these, and
its twin under ``/api/`` returns the same dict, so the two never disagree.

Leaderboards come from :class:`arena.web.cache.Boards`, which keeps each board's
figures (the web app keeps one for as long as it runs; a caller that passes none gets
one for the call) with the code of :func:`arena.tournament.leaderboard.compute`, the
function behind ``arena leaderboard``, so the numbers and the order are the same.
Secrets follow :mod:`arena.web.visibility`.
"""

from __future__ import annotations

import contextlib
import functools
import threading
from collections import Counter, defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import orjson
from sqlalchemy import func, select

from arena.engine.core import ending_said
from arena.ratings import pairwise
from arena.store import (
    HOUSE_PREFIX,
    BotRow,
    MatchRow,
    SeatRow,
    Store,
    TournamentRow,
    valid_bot_name,
    variant_key,
)
from arena.store.db import as_utc
from arena.tournament.leaderboard import board_title, compute
from arena.web import frames, progress, visibility
from arena.web.cache import Boards, board_row
from arena.web.errors import BadRequest, Hidden, NotFound

#: every status of a match but ``finished``
UNFINISHED = ("pending", "running", "aborted", "failed")
CLASSIC = "classic"  # the URL segment of the variant set "" (the classic game)
#: the columns a leaderboard sorts by (``?sort=COLUMN`` or ``?sort=-COLUMN``)
SORTS = {
    "rank": "rank",
    "bot": "label",
    "games": "games",
    "wins": "wins",
    "draws": "draws",
    "losses": "losses",
    "score": "score",
    "elo": "elo",
    "openskill": "mu",
}
#: the most checkpoints a bot's rating history refits the board for (the latest ones)
HISTORY_POINTS = 40


__all__ = ["BadRequest", "Hidden", "NotFound"]


#: what marks a bot name from before today's rule of names, on a page
OLD_NAME = " (an old name)"


def shown_label(text: str) -> str:
    """A bot's name or label (``NAME``, ``NAME@VERSION``, ``house:NAME``, ``file:NAME``)
    as a page shows it: as it is when the name follows today's rule
    (:data:`arena.store.db.BOT_NAME`); else, a name registered before the rule, with
    each character that is not printable ASCII as its code point (``spy[U+0410]``: a
    Cyrillic letter cannot pass for a Latin one, nor a full-width one, nor an invisible
    one for nothing) and marked :data:`OLD_NAME` (the page escapes the rest as any
    text). The API gives names as they are."""
    name, at, version = text.rpartition("@")
    if not at or not version.isdigit():
        name, at, version = text, "", ""
    kind, colon, bare = name.partition(":")
    if not colon or kind not in ("house", "file"):
        kind, colon, bare = "", "", name
    if valid_bot_name(bare):
        return text
    shown = "".join(c if " " <= c <= "~" else f"[U+{ord(c):04X}]" for c in bare)
    return f"{kind}{colon}{shown}{at}{version}{OLD_NAME}"


def board_key(segment: str) -> str:
    """The board key of a URL segment (``classic`` is the classic game, and
    ``classic;cards=none`` the classic game without cards)."""
    if segment == CLASSIC or segment.startswith(CLASSIC + ";"):
        return segment[len(CLASSIC) :]
    return segment


def board_segment(variants: str) -> str:
    """A board key as a URL segment (the inverse of :func:`board_key`)."""
    return variants if variants and not variants.startswith(";") else CLASSIC + variants


def board_filter(
    boards: list[tuple[str, str]],
    game: str | None = None,
    variants: list[str] | None = None,
    options: dict[str, str] | None = None,
) -> list[tuple[str, str]]:
    """The boards of ``game`` (None: any) whose variant set includes ``variants`` and
    whose key holds each of ``options`` (as keys hold them, ``cards=none``): the
    leaderboards' filters of the CLI, the API and the web."""
    from arena.store.models import board_parts

    out = []
    for g, key in boards:
        names, held = board_parts(key)
        if game and g != game:
            continue
        if variants and not set(variants) <= set(names):
            continue
        if options and any(held.get(k) != v for k, v in options.items()):
            continue
        out.append((g, key))
    return out


def _time(moment: datetime | None) -> str | None:
    return as_utc(moment).isoformat(timespec="seconds") if moment else None


# --- leaderboards ---------------------------------------------------------------------


def sort_rows(rows: list[dict[str, Any]], sort: str) -> list[dict[str, Any]]:
    """Rows ordered by ``sort`` (a column of :data:`SORTS`, ``-`` first: descending)."""
    column = sort.removeprefix("-")
    if column not in SORTS:
        raise BadRequest(f"sort {sort!r}: expected one of {', '.join(SORTS)} (or -COLUMN)")
    field = SORTS[column]
    # ties keep the leaderboard's order, whichever the direction (the sort is stable)
    return sorted(rows, key=lambda r: r[field], reverse=sort.startswith("-"))


def leaderboard(
    store: Store,
    game: str,
    variants: str,
    sort: str = "rank",
    tournament_id: str | None = None,
    cache: Boards | None = None,
    games: Any = None,
) -> dict[str, Any]:
    """A board's table (``tournament_id``: the standings of that tournament's matches);
    ``games``: the names of the games there are (a board of none of them is an unknown
    game's, and its 404 says so)."""
    if tournament_id is None:
        cache = cache or Boards(store)
        board = cache.board(game, variants)
        if not board.known:
            if games is not None and game not in games:
                raise NotFound(f"no game {game!r}: the games are {', '.join(sorted(games))}")
            raise NotFound(f"no finished match of {board_title(game, variants)} yet")
        rows = cache.table(board)
    else:
        names = _bot_names(store)
        found = compute(store, game, variants, tournament_id)
        rows = [board_row(r, names.get(r.bot_id, r.label)) for r in found]
    return {
        "game": game,
        "variants": variants,
        "segment": board_segment(variants),
        "title": board_title(game, variants),
        "sort": sort,
        "rows": sort_rows(rows, sort),
        "scale": _scale(rows),
        "legend": legend([r["label"] for r in rows]),
    }


#: what a house bot's label means (the CLI's legend says the same: arena.demo)
HOUSE_SAID = "built into Arena, played inside the referee"
TWIN_SAID = "the same bot, run as its own process and connected over gRPC"


def legend(labels: list[str]) -> list[dict[str, Any]]:
    """What a board's labels mean, as the CLI's legend (arena.demo) says it:
    ``house:NAME`` is a bot built into Arena, played inside the referee; ``NAME`` alone,
    when the same board has ``house:NAME`` too, is that same bot as a process of its
    own, over gRPC; the others are bot processes; ``@N`` is a version. Each
    ``{"label", "means", "bot"}`` (``bot``: the label is a bot's)."""
    names = {label.rsplit("@", 1)[0] for label in labels}
    house = sorted(n for n in names if n.startswith(HOUSE_PREFIX))
    out = [{"label": n, "means": HOUSE_SAID, "bot": True} for n in house]
    out += [
        {"label": n.removeprefix(HOUSE_PREFIX), "means": TWIN_SAID, "bot": True}
        for n in house
        if n.removeprefix(HOUSE_PREFIX) in names
    ]
    if any(not n.startswith(HOUSE_PREFIX) for n in names):
        out.append(
            {"label": "the others", "means": "bot processes connected over gRPC", "bot": False}
        )
    if labels:
        out.append(
            {
                "label": "@N",
                "means": "the version (a name registered again is the next)",
                "bot": False,
            }
        )
    return out


def _scale(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The Elo range every interval bar of one table is drawn on."""
    if not rows:
        return {"low": 1400.0, "high": 1600.0}
    low = min(r["elo_low"] for r in rows)
    high = max(r["elo_high"] for r in rows)
    pad = max(10.0, (high - low) * 0.05)
    return {"low": low - pad, "high": high + pad}


def boards(
    store: Store,
    top: int | None = None,
    cache: Boards | None = None,
    game: str | None = None,
    variants: list[str] | None = None,
    options: dict[str, str] | None = None,
) -> list[dict[str, Any]]:
    """Every leaderboard (those of ``game`` with ``variants`` and ``options``, if
    given: :func:`board_filter`), each with its ``top`` rows (None: all)."""
    cache = cache or Boards(store)
    out = []
    for board_game, key in board_filter(cache.listed(), game, variants, options):
        board = leaderboard(store, board_game, key, cache=cache)
        if top is not None:
            board["rows"] = board["rows"][:top]
        out.append(board)
    return out


def leaderboard_csv(board: dict[str, Any]) -> str:
    import csv
    import io

    columns = [
        "rank", "bot", "games", "wins", "draws", "losses", "score",
        "elo", "elo_low", "elo_high", "online_elo", "openskill_mu", "openskill_sigma",
    ]  # fmt: skip
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    for r in board["rows"]:
        writer.writerow(
            [r["rank"], r["label"], r["games"], r["wins"], r["draws"], r["losses"]]
            + [f"{r[k]:.4f}" for k in ("score", "elo", "elo_low", "elo_high", "online_elo")]
            + [f"{r['mu']:.4f}", f"{r['sigma']:.4f}"]
        )
    return out.getvalue()


# --- home -----------------------------------------------------------------------------


def players_said(least: int, most: int) -> str:
    """How many players a game takes, in words: "2 players", "2 to 6 players"."""
    return f"{least} players" if least == most else f"{least} to {most} players"


def home(store: Store, registry: Any, cache: Boards | None = None) -> dict[str, Any]:
    games = []
    for name, game in sorted(registry.games.items()):
        variants = sorted(v.name for (g, _), v in registry.variants.items() if g == name)
        games.append(
            {
                "name": name,
                "description": game.description,
                "players": players_said(game.min_players, game.max_players),
                "variants": variants,
            }
        )
    cache = cache or Boards(store)
    return {
        "games": games,
        "boards": boards(store, top=5, cache=cache),
        "running": running_tournaments(store),
        "recent": recent_matches(store, limit=10, cache=cache),
    }


# --- matches --------------------------------------------------------------------------


def _bot_names(store: Store) -> dict[str, str]:
    return {row.id: row.name for row in store.bots()}


def _match_summary(match: MatchRow, seats: list[SeatRow], names: dict[str, str]) -> dict[str, Any]:
    result = match.result or {}
    return {
        "match_id": match.id,
        "tournament_id": match.tournament_id,
        "round": match.round,
        "game": match.game,
        "variants": match.variant_key,
        "status": match.status,
        "players": [
            {
                "seat": seat.seat,
                "label": match.players[seat.seat] if seat.seat < len(match.players) else "",
                "name": names.get(seat.bot_id, ""),
                "place": seat.place if match.status == "finished" else None,
                "forfeit": seat.forfeit if match.status == "finished" else None,
            }
            for seat in seats
        ],
        "reason": result.get("reason", "") if match.status == "finished" else "",
        "finished": _time(match.finished) if match.status == "finished" else None,
    }


def _summaries(
    store: Store, matches: list[MatchRow], cache: Boards | None = None
) -> list[dict[str, Any]]:
    seats = store.match_seats([m.id for m in matches])
    seated = {seat.bot_id for rows in seats.values() for seat in rows}
    names = cache.names(seated) if cache else _bot_names(store)
    return [_match_summary(m, seats[m.id], names) for m in matches]


def recent_matches(
    store: Store, limit: int, bot_ids: list[str] | None = None, cache: Boards | None = None
) -> list[dict[str, Any]]:
    """The latest finished matches (of these bot versions, if given), newest first."""
    with store.session() as s:
        query = select(MatchRow).where(MatchRow.status == "finished")
        if bot_ids is not None:
            seated = select(SeatRow.match_id).where(SeatRow.bot_id.in_(bot_ids))
            query = query.where(MatchRow.id.in_(seated))
        query = query.order_by(MatchRow.finished.desc(), MatchRow.id.desc()).limit(limit)
        matches = list(s.scalars(query))
    return _summaries(store, matches, cache)


def match(store: Store, match_id: str) -> dict[str, Any]:
    row = store.match(match_id)
    if row is None:
        raise NotFound(f"no match {match_id!r}")
    tournament = store.tournament(row.tournament_id) if row.tournament_id else None
    hidden = visibility.replay_hidden_why(row, tournament)
    summary = _summaries(store, [row])[0]
    result = row.result if row.status == "finished" else None
    return {
        **summary,
        "tournament_name": tournament.name if tournament else None,
        "options": shown_options(row.game, row.options),
        "variant_list": row.variants,
        "result": result,
        "attempts": row.attempts,
        "created": _time(row.created),
        "started": _time(row.started),
        "replay_available": hidden is None and store.replay(row.id) is not None,
        "replay_hidden": hidden,
        "seed": str(row.seed) if hidden is None else None,
        "deal_seed": (str(row.deal_seed) if hidden is None and row.deal_seed is not None else None),
    }


def shown_options(game: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """A match's or a tournament's options as pages and the API show them: a Risk map by
    its name (:func:`~arena.games.risk.map.map_shown`: never a path an older Arena
    stored, nor a map's whole JSON)."""
    out = dict(options or {})
    if game == "risk" and "map" in out:
        from arena.games.risk.map import map_shown

        out["map"] = map_shown(str(out["map"]))
    return out


def _legacy_map_path(row: MatchRow) -> bool:
    """Whether a Risk match's stored ``map`` option is neither a built-in name nor a
    map's content: a path an older Arena stored."""
    from arena.games.risk.map import BUILT_IN

    value = str((row.options or {}).get("map", "classic")) if row.game == "risk" else "classic"
    return not (BUILT_IN.fullmatch(value) or value.lstrip().startswith("{"))


def check_replay_shown(store: Store, match_id: str) -> None:
    """:class:`Hidden` while the match's replay is hidden (NotFound: no match)."""
    row = store.match(match_id)
    if row is None:
        raise NotFound(f"no match {match_id!r}")
    tournament = store.tournament(row.tournament_id) if row.tournament_id else None
    hidden = visibility.replay_hidden_why(row, tournament)
    if hidden is not None:
        raise Hidden(f"the replay of match {match_id} is hidden for now: {hidden}")


def replay_text(store: Store, match_id: str) -> str:
    """The replay's JSON text, if it may be shown (:class:`Hidden` if not yet)."""
    check_replay_shown(store, match_id)
    text = store.replay(match_id)
    if text is None:
        raise NotFound(f"match {match_id} has no stored replay")
    row = store.match(match_id)
    if row is not None and _legacy_map_path(row):  # a path of the machine that played
        doc = orjson.loads(text)
        doc["options"] = shown_options("risk", doc.get("options"))
        text = orjson.dumps(doc).decode()
    return text


def event_log(store: Store, match_id: str, page: int, per_page: int = 200) -> dict[str, Any]:
    """One page of the replay's steps as table rows: who acted, the action, the events.
    The secrets' rules are checked at every request; the page, once made, is kept (a
    replay that may be shown never changes, and a long one takes 0.1 s to read)."""
    check_replay_shown(store, match_id)
    return _event_log_page(store, match_id, page, per_page)


def replay_doc(store: Store, match_id: str) -> dict[str, Any]:
    """The replay's JSON, parsed, if it may be shown (:class:`Hidden` if not
    yet); read-only (inside :func:`one_replay_read` it is shared). A long replay (4 MB)
    is a tree of a million lists and dicts: a caller that reads it once and lets it go
    does so inside :func:`arena.web.frames.paused_gc`, or the collector's passes over it
    as it is made cost as much as the parsing, and it is walked again before it is
    freed."""
    check_replay_shown(store, match_id)
    shared: dict[str, dict[str, Any]] | None = getattr(_reading, "docs", None)
    if shared is not None and match_id in shared:
        return shared[match_id]
    text = store.replay(match_id)
    if text is None:
        raise NotFound(f"match {match_id} has no stored replay")
    doc = orjson.loads(text)
    if shared is not None:
        shared[match_id] = doc
    return doc


#: the replays parsed in this thread's :func:`one_replay_read` block, by match id
_reading = threading.local()


@contextlib.contextmanager
def one_replay_read() -> Iterator[None]:
    """Meanwhile, in this thread, :func:`replay_doc` parses a replay once and hands the
    same tree to every caller (the match page reads it for its event log and for its
    viewer's frames: 0.06 s each for a long one), the garbage collector off; the trees
    are let go at the end, before the collector is back on."""
    with frames.paused_gc():
        _reading.docs = {}
        try:
            yield
        finally:
            _reading.docs = None


@functools.lru_cache(maxsize=64)
def _event_log_page(store: Store, match_id: str, page: int, per_page: int) -> dict[str, Any]:
    with frames.paused_gc():  # the replay, read and let go (replay_doc)
        return _log_rows(replay_doc(store, match_id), match_id, page, per_page)


def _log_rows(replay: dict[str, Any], match_id: str, page: int, per_page: int) -> dict[str, Any]:
    players = replay.get("players", [])
    steps = replay.get("steps", [])
    first = 1 if replay.get("initial_events") else 0  # the setup's events make a row
    count = first + len(steps)
    pages = max(1, -(-count // per_page))
    if not 1 <= page <= pages:
        raise BadRequest(f"page {page}: the event log has pages 1 to {pages}")
    names = LogNames.of(replay)
    rows: list[dict[str, Any]] = []  # only this page's rows: a long replay has 30,000
    for row in range((page - 1) * per_page, min(page * per_page, count)):
        if row < first:
            rows.append(_step_row(0, None, players, None, replay["initial_events"], names))
        else:
            seat, action, events = steps[row - first]
            rows.append(_step_row(row - first + 1, seat, players, action, events, names))
    return {
        "match_id": match_id,
        "page": page,
        "pages": pages,
        "steps": count,
        "rows": rows,
    }


def _step_row(
    index: int,
    seat: int | None,
    players: list[str],
    action: Any,
    events: list[Any],
    names: LogNames,
) -> dict[str, Any]:
    return {
        "step": index,
        "seat": seat,
        "player": players[seat] if seat is not None and seat < len(players) else "",
        "action": _fields(action, names) if isinstance(action, dict) else "",
        "events": [_fields(e, names) if isinstance(e, dict) else str(e) for e in events],
    }


#: the fields of events and actions that name an owner (a seat, or Risk's neutral), and
#: those that name a place (a Risk territory, a Stratego square), by their number
OWNER_FIELDS = frozenset({"p", "prev", "by", "player", "seat"})
PLACE_FIELDS = frozenset({"t", "from", "to", "bonus", "neutral", "square", "territory", "hq"})
COLUMNS = "abcdefghij"


@dataclass(frozen=True)
class LogNames:
    """The names the viewer gives what a replay's events number: its owners (the seats'
    labels, then passive owners: Risk's neutral) and its places (a Risk map's
    territories; Stratego's squares, ``a1`` to ``j10``)."""

    owners: tuple[str, ...]
    places: tuple[str, ...]

    @classmethod
    def of(cls, replay: dict[str, Any]) -> LogNames:
        owners = [str(p) for p in replay.get("players", [])]
        places: list[str] = []
        game = replay.get("game")
        try:
            if game == "risk":
                from arena.games.risk.map import load_map

                places = list(
                    load_map((replay.get("options") or {}).get("map", "classic")).territories
                )
                if "neutral" in (replay.get("variants") or []):
                    owners.append("neutral")
            elif game == "stratego":
                places = [f"{COLUMNS[s % 10]}{s // 10 + 1}" for s in range(100)]
        except ValueError:  # a map this Arena cannot load: the numbers, as stored
            places = []
        return cls(tuple(owners), tuple(places))

    def value(self, key: str, value: Any) -> Any:
        """``value`` of the field ``key`` with its numbers named (lists of them too,
        and a list's pairs ``[place, armies]``)."""
        names = self.owners if key in OWNER_FIELDS else self.places if key in PLACE_FIELDS else None
        if key == "armies" and isinstance(value, list):
            return [self._pair(item) for item in value]
        if names is None:
            return value
        if isinstance(value, list):
            return [self._name(names, v) for v in value]
        return self._name(names, value)

    def _pair(self, item: Any) -> Any:
        if isinstance(item, list) and len(item) == 2:
            return [self._name(self.places, item[0]), item[1]]
        return item

    @staticmethod
    def _name(names: tuple[str, ...], value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < len(names):
            return names[value]
        return value


def _fields(item: dict[str, Any], names: LogNames | None = None) -> str:
    """``type`` (or ``e``) first, then ``key=value`` pairs: one readable line, with the
    owners and places named as the viewer names them (``names``)."""
    head = item.get("type", item.get("e", ""))
    named = names.value if names is not None else (lambda _k, v: v)

    def shown(key: str, value: Any) -> Any:  # a game's end in words, as the result says it
        return (
            ending_said(value) if key == "reason" and isinstance(value, str) else named(key, value)
        )

    rest = " ".join(f"{k}={_said(shown(k, v))}" for k, v in item.items() if k not in ("type", "e"))
    return f"{head} {rest}".strip()


def _said(value: Any) -> str:
    """A field's value: a name as it is (no quotes), anything else as JSON."""
    if isinstance(value, str):
        return value
    return orjson.dumps(value).decode()


# --- tournaments ----------------------------------------------------------------------


def _tournament_summary(
    store: Store, t: TournamentRow, counts: Counter[str] | None = None
) -> dict[str, Any]:
    counts = store.progress(t.id) if counts is None else counts
    return {
        "tournament_id": t.id,
        "name": t.name,
        "game": t.game,
        "variants": variant_key(t.variants, t.options, t.game),
        "format": t.format,
        "seats": t.seats,
        "games_per_pairing": t.games_per_pairing,
        "status": t.status,
        "matches": sum(counts.values()),
        "progress": dict(sorted(counts.items())),
        "finished_matches": counts.get("finished", 0),
        "created": _time(t.created),
        "started": _time(t.started),
        "finished": _time(t.finished),
        "seed": str(t.seed) if visibility.tournament_seed_visible(t) else None,
    }


def tournaments(store: Store) -> list[dict[str, Any]]:
    """Every tournament, newest first."""
    progress = store.progress_by_tournament()  # one query, not one a tournament
    return [
        _tournament_summary(store, t, progress.get(t.id, Counter()))
        for t in reversed(store.tournaments())
    ]


def running_tournaments(store: Store) -> list[dict[str, Any]]:
    """The tournaments being played, newest first."""
    with store.session() as s:
        rows = list(s.scalars(select(TournamentRow).where(TournamentRow.status == "running")))
    rows.sort(key=lambda t: as_utc(t.created), reverse=True)
    return [_tournament_summary(store, t) for t in rows]


def tournament(store: Store, tournament_id: str, sort: str = "rank") -> dict[str, Any]:
    t = store.tournament(tournament_id)
    if t is None:
        raise NotFound(f"no tournament {tournament_id!r}")
    entries = store.entries(t.id)
    standings = leaderboard(
        store, t.game, variant_key(t.variants, t.options, t.game), sort, tournament_id=t.id
    )
    matches = _summaries(store, store.tournament_matches(t.id))
    return {
        **_tournament_summary(store, t),
        "options": shown_options(t.game, t.options),
        "entries": [{"label": e.label, "challenger": e.challenger} for e in entries],
        "standings": standings,
        "crosstable": crosstable(store, t, [e.label for e in entries]),
        "match_list": matches,
        "replays_hidden": None
        if visibility.tournament_seed_visible(t)
        else (visibility.TOURNAMENT_HIDES),
        # still to change: its page follows /api/tournaments/ID/events (arena.web.live)
        "live": t.status in progress.LIVE,
    }


def crosstable(store: Store, t: TournamentRow, labels: list[str]) -> dict[str, Any]:
    """Pairwise scores within the tournament: a row bot's points against a column bot
    (1 for placing ahead, 1/2 for the same place) out of the games they shared."""
    by_id = {e.bot_id: e.label for e in store.entries(t.id)}
    points: Counter[tuple[str, str]] = Counter()
    games: Counter[tuple[str, str]] = Counter()
    for g in store.played(t.game, tournament_id=t.id):
        for a, b, score in pairwise(g.bot_ids, g.places):
            la, lb = by_id.get(a, a), by_id.get(b, b)
            points[la, lb] += score
            points[lb, la] += 1 - score
            games[la, lb] += 1
            games[lb, la] += 1
    cells = {
        a: {b: {"points": points[a, b], "games": games[a, b]} for b in labels if b != a}
        for a in labels
    }
    return {"labels": labels, "cells": cells}


# --- bots -----------------------------------------------------------------------------


def bots(store: Store) -> list[dict[str, Any]]:
    """Every bot name with its versions and how many matches they finished."""
    with store.session() as s:
        # every seat of each bot (one scan of the seats' bot index), less its seats in
        # matches not finished (few): not a join of every seat with its match
        seats = Counter(
            dict(s.execute(select(SeatRow.bot_id, func.count()).group_by(SeatRow.bot_id)).all())
        )
        unfinished = select(MatchRow.id).where(MatchRow.status.in_(UNFINISHED))
        seats.subtract(
            dict(
                s.execute(
                    select(SeatRow.bot_id, func.count())
                    .where(SeatRow.match_id.in_(unfinished))
                    .group_by(SeatRow.bot_id)
                ).all()
            )
        )
        played = seats
    by_name: dict[str, list[BotRow]] = defaultdict(list)
    for row in store.bots():
        by_name[row.name].append(row)
    return [
        {
            "name": name,
            "kind": rows[0].kind,
            "versions": [r.version for r in rows],
            "matches": sum(played.get(r.id, 0) for r in rows),
        }
        for name, rows in sorted(by_name.items())
    ]


def bot_versions(store: Store) -> list[dict[str, Any]]:
    """Every bot version (``arena bots list --json``), as :func:`bot` lists them."""
    rows = store.bots()
    sizes = store.code_sizes(row.digest for row in rows if row.digest)
    return [{**_version(row, sizes), "bot_id": row.id} for row in rows]


def _version(row: BotRow, sizes: dict[str, int]) -> dict[str, Any]:
    """A version as listed: a hosted bot's (and a stored bot file's) code by its digest
    and size (None: no code kept)."""
    return {
        "label": row.label,
        "version": row.version,
        "kind": row.kind,
        "revoked": row.revoked,
        "games": row.games or [],
        "created": _time(row.created),
        "digest": row.digest,
        "size": sizes.get(row.digest) if row.digest else None,
    }


def bot(
    store: Store, name: str, cache: Boards | None = None, registry: Any = None
) -> dict[str, Any]:
    """One bot's page; ``registry``: the games and their bots, which say the games a
    house bot plays (the store lists none for it: it is built in)."""
    with store.session() as s:
        query = select(BotRow).where(BotRow.name == name).order_by(BotRow.version)
        versions = list(s.scalars(query))
    if not versions:
        raise NotFound(f"no bot named {name!r}")
    cache = cache or Boards(store)
    ids = [row.id for row in versions]
    mine = set(ids)
    sections = []
    for game, variants in cache.listed():
        board = cache.board(game, variants)
        if mine.isdisjoint(board.totals.games):
            continue  # not rated on this board
        rows = [r for r in cache.table(board) if r["bot_id"] in mine]
        with board.lock:
            history = board.history(mine, HISTORY_POINTS)
            tallies = {me: board.totals.head_to_head(me) for me in ids}
        labels = cache.labels([*ids, *(other for t in tallies.values() for other in t)])
        sections.append(
            {
                "game": game,
                "variants": variants,
                "segment": board_segment(variants),
                "title": board_title(game, variants),
                "rows": rows,
                "history": [{"label": labels.get(p.pop("bot_id"), ""), **p} for p in history],
                "head_to_head": head_to_head(tallies, labels),
            }
        )
    sizes = store.code_sizes(row.digest for row in versions if row.digest)
    shown = [_version(row, sizes) for row in versions]
    if registry is not None and name.startswith(HOUSE_PREFIX):
        built_in = name.removeprefix(HOUSE_PREFIX)
        plays = sorted({game for game, bot_name in registry.bots if bot_name == built_in})
        for version in shown:
            version["games"] = version["games"] or plays
    return {
        "name": name,
        "versions": shown,
        "boards": sections,
        "recent": recent_matches(store, limit=20, bot_ids=ids, cache=cache),
    }


def head_to_head(
    tallies: dict[str, dict[str, tuple[int, int, int]]], labels: dict[str, str]
) -> list[dict[str, Any]]:
    """Each (version, opponent) pair: in how many matches the version placed ahead of,
    level with, behind the opponent (each pair of seats of a match counts, as in the
    ratings; a match with a bot in two seats is left out, as there)."""
    out = []
    for me, opponents in tallies.items():
        for other, (ahead, level, behind) in opponents.items():
            games = ahead + level + behind
            out.append(
                {
                    "label": labels.get(me, me),
                    "opponent": labels.get(other, other),
                    "opponent_name": labels.get(other, other).rsplit("@", 1)[0],
                    "games": games,
                    "ahead": ahead,
                    "level": level,
                    "behind": behind,
                    "score": (ahead + level / 2) / games,
                }
            )
    return sorted(out, key=lambda r: (r["label"], r["opponent"]))
