"""The match page's viewers: the frames of a stored replay (built once, kept), and what
the page draws on the server (the board as it stands at the end of a replay, or as the
live view starts) before the script takes over.

A long replay's page is made from its tail (the frames of its last steps, cheap to
build) and the viewer starts with the same tail; it asks for the whole frames once it
shows the end (docs/web.md, "How a long replay loads")."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from typing import Any

import orjson
from cachetools import Cache, LRUCache

from arena.engine.core import ENDINGS_SAID
from arena.engine.replay import from_json
from arena.store import Store
from arena.web import boards, data, frames
from arena.web.errors import BadRequest, ReplayBroken

log = logging.getLogger(__name__)

#: viewers of these games exist (templates/viewer_GAME.html, static/GAME.js)
GAMES = ("risk", "stratego")
#: a replay of more steps than this is shown first from its tail
TAIL_STEPS = 4_000
#: the steps a tail has at least (from a keyframe: fewer than KEYFRAME_EVERY more)
TAIL_LENGTH = 2_000


def tail_start(steps: int) -> int:
    """Where the page of a replay of ``steps`` steps starts its frames: 0 (all of them)
    up to :data:`TAIL_STEPS` steps, else the keyframe at or before the last
    :data:`TAIL_LENGTH` steps."""
    if steps <= TAIL_STEPS:
        return 0
    every = frames.KEYFRAME_EVERY
    return (steps - TAIL_LENGTH) // every * every


#: a build's key: (match id, reveal, its first frame)
_Key = tuple[str, bool, int]


#: how long a viewer waits for a build made ahead (at a lower priority: a busy machine
#: may starve it) before building the same itself (seconds)
WAIT_S = 3.0
#: the bytes of frames kept for viewers (the least recently used go first), and of those
#: built ahead and not viewed yet: a long Risk replay's frames are some 6 MB a 30,000
#: steps
VIEWED_BYTES = 192 * 2**20
AHEAD_BYTES = 64 * 2**20
#: what an entry holds beside its JSON (its last view and board, as Python objects)
ENTRY_OVERHEAD = 64 * 2**10


def entry_size(entry: dict[str, Any]) -> int:
    return len(entry["json"]) + ENTRY_OVERHEAD


def build_start(since: int, steps: int) -> int:
    """Where the build asked for from step ``since`` starts: one of the two builds the
    web makes of a replay, every frame (0) or, for a long one, its tail
    (:func:`tail_start`): the tail's start when ``since`` is in the tail, else 0. So
    however many ``since`` values are asked for, a replay is built at most twice (and
    twice again with every rank). Raises BadRequest for a ``since`` outside 0 to
    ``steps``."""
    if not 0 <= since <= steps:
        raise BadRequest(f"since {since}: the replay has steps 0 to {steps}")
    tail = tail_start(steps)
    return tail if tail and since >= tail else 0


def _peek(kept: LRUCache[_Key, dict[str, Any]], key: _Key) -> dict[str, Any] | None:
    """An entry without counting it as used."""
    return Cache.__getitem__(kept, key) if key in kept else None


class FrameCache:
    """The frames of the builds asked for (a replay whole, or its tail: a long replay's
    page makes both), as the JSON bytes sent and the last view: a replay never changes
    once it may be shown, so they are built once, and kept while they fit in
    ``viewed_bytes`` (the least recently used go first). A lock per build: two viewers
    arriving together wait for one. Builds made ahead (:meth:`prebuild`) are kept apart,
    in ``ahead_bytes``, until first viewed, so that a burst of them does not push out
    what viewers are using. An entry larger than its whole budget is not kept."""

    def __init__(
        self, registry: Any, viewed_bytes: int = VIEWED_BYTES, ahead_bytes: int = AHEAD_BYTES
    ) -> None:
        self.registry = registry
        self._built: LRUCache[_Key, dict[str, Any]] = LRUCache(viewed_bytes, entry_size)
        self._ahead: LRUCache[_Key, dict[str, Any]] = LRUCache(ahead_bytes, entry_size)
        self._locks: dict[_Key, threading.Lock] = {}
        #: the keys being built ahead now (a viewer waits for them at most WAIT_S)
        self._building_ahead: set[_Key] = set()
        #: the steps of the replays asked for (a long one's page starts from its tail)
        self._steps: LRUCache[str, int] = LRUCache(1024)
        self._guard = threading.Lock()

    def kept_bytes(self) -> int:
        """The bytes of every entry kept (viewed and ahead)."""
        with self._guard:
            return int(self._built.currsize + self._ahead.currsize)

    def get(
        self, store: Store, match_id: str, reveal: bool = False, since: int = 0
    ) -> dict[str, Any]:
        """``json`` (bytes), ``final`` (the last view), ``board``, ``frames``, ``first``:
        the frames of the build that holds step ``since`` (:func:`build_start`; 0:
        every frame). Raises Hidden while the replay is hidden, NotFound without one,
        BadRequest for a ``since`` outside the replay's steps, ReplayBroken for a
        replay that does not re-simulate."""
        data.check_replay_shown(store, match_id)  # the secrets' rules, at every request
        first = build_start(since, self.steps(store, match_id)) if since else 0
        key = (match_id, reveal, first)
        entry = self._kept(key)
        if entry is not None:
            return entry
        # a build under way is waited for, not repeated: a viewer's until it ends, one
        # made ahead for WAIT_S at most
        lock = self._lock_of(key)
        with self._guard:
            ahead = key in self._building_ahead
        locked = lock.acquire(timeout=WAIT_S) if ahead else lock.acquire()
        try:
            entry = self._kept(key)
            if entry is not None:
                return entry
            entry = self._build(store, match_id, reveal, first)
            self._keep(key, entry)
            return entry
        finally:
            if locked:
                lock.release()
            self._forget_locks()

    def prebuild(
        self,
        store: Store,
        match_id: str,
        build: Callable[[str], dict[str, Any]],
    ) -> bool:
        """Builds now, with ``build(match_id)`` (:func:`build_entry`, maybe in
        another process), the whole frames of a replay, which its first viewer then
        finds kept (:meth:`for_page` takes them for a long replay's page too); a viewer
        who asks meanwhile waits for them (:data:`WAIT_S` at most). False if they were
        kept already. Raises as :meth:`get` does, and whatever ``build`` raises (nothing
        is kept then)."""
        data.check_replay_shown(store, match_id)
        key = (match_id, False, 0)
        try:
            with self._lock_of(key):
                if self._kept(key, touch=False) is not None:
                    return False
                with self._guard:
                    self._building_ahead.add(key)
                try:
                    entry = build(match_id)
                finally:
                    with self._guard:
                        self._building_ahead.discard(key)
                self._keep(key, entry, ahead=True)
            return True
        finally:
            self._forget_locks()

    def _kept(self, key: _Key, touch: bool = True) -> dict[str, Any] | None:
        """The entry of ``key``, if kept; ``touch``: it is being used (one made ahead
        joins the others)."""
        with self._guard:
            entry = self._built.get(key) if touch else _peek(self._built, key)
            if entry is not None:
                return entry
            entry = self._ahead.get(key) if touch else _peek(self._ahead, key)
            if entry is not None and touch:
                del self._ahead[key]
                self._put(self._built, key, entry)
            return entry

    def _lock_of(self, key: _Key) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    def _forget_locks(self) -> None:
        """Let go of the locks nobody holds (a build's lock lives while it is built)."""
        with self._guard:
            for key in [k for k, lock in self._locks.items() if not lock.locked()]:
                del self._locks[key]

    def _keep(self, key: _Key, entry: dict[str, Any], ahead: bool = False) -> None:
        with self._guard:
            if ahead:
                self._put(self._ahead, key, entry)
            else:
                self._ahead.pop(key, None)
                self._put(self._built, key, entry)

    @staticmethod
    def _put(kept: LRUCache[_Key, dict[str, Any]], key: _Key, entry: dict[str, Any]) -> None:
        """(Under the guard) ``entry`` as the newest of ``kept``, the least recently
        used let go until they fit; one larger than the whole budget is not kept."""
        with contextlib.suppress(ValueError):  # cachetools: "value too large"
            kept[key] = entry

    def for_page(self, store: Store, match_id: str) -> dict[str, Any]:
        """The build the match page draws from: the whole frames of a replay of up to
        :data:`TAIL_STEPS` steps, or of a longer one whose whole frames are kept already
        (built ahead, or viewed before: the viewer then loads them at once), else its
        tail (:func:`tail_start`); the page needs only the last view, and the viewer
        starts with the same frames."""
        whole = self._kept((match_id, False, 0))
        if whole is not None:
            data.check_replay_shown(store, match_id)
            return whole
        return self.get(store, match_id, since=tail_start(self.steps(store, match_id)))

    def steps(self, store: Store, match_id: str) -> int:
        """How many steps the replay has (read once; the caller checked it may be shown)."""
        with self._guard:
            known = self._steps.get(match_id)
        if known is not None:
            return known
        with frames.paused_gc():  # the replay, parsed and let go (or shared: one_replay_read)
            steps = len(data.replay_doc(store, match_id).get("steps") or ())
        with self._guard:
            self._steps[match_id] = steps
        return steps

    def _build(self, store: Store, match_id: str, reveal: bool, first: int) -> dict[str, Any]:
        return build_entry(store, self.registry, match_id, first, reveal)


def build_entry(
    store: Store, registry: Any, match_id: str, first: int = 0, reveal: bool = False
) -> dict[str, Any]:
    """The cache's entry of a replay's frames from keyframe ``first`` on (0: every frame;
    see :func:`frames.first_frame`). The caller has checked that it may be shown."""
    # the replay and the frames are trees of a million lists and dicts, made, turned
    # into JSON and let go: the collector stays off until they are gone, or it
    # scans them as they grow and once more before they are freed (a third of the
    # time, and more in a big heap: docs/benchmarks.md, "Where the targets stand")
    with frames.paused_gc():
        doc = data.replay_doc(store, match_id)
        try:
            record = from_json(doc)
        except Exception as exc:  # not a replay this Arena reads: said in the log only
            raise ReplayBroken(match_id, f"{type(exc).__name__}: {exc}") from None
        if record.game not in GAMES:
            raise data.NotFound(f"no viewer for {record.game} matches")
        try:
            built = frames.from_replay(record, registry, reveal, first)
        except (KeyError, TypeError, ValueError) as exc:  # a map, an option, a step
            raise ReplayBroken(match_id, f"{type(exc).__name__}: {exc}") from None
        entry = {
            "json": orjson.dumps(built),
            "final": built["final"],
            "board": built["board"],
            "frames": built["frames"],
            "first": built["first"],
        }
        del built, record
    return entry


#: what the viewer says of a match whose board it cannot draw (the log says why)
NO_BOARD = "the viewer cannot draw this match's board (the web's log says why)"


def page(
    store: Store, cache: FrameCache, match: dict[str, Any], referee: str | None
) -> dict[str, Any] | None:
    """What the match page's viewer block shows: None when the game has no viewer or
    there is nothing to show; else the picture's geometry and, for a replay, the last
    position (``mode`` replay; ``first``: the frame the viewer's first frames start
    at, :meth:`FrameCache.for_page`), or, for a running match, the live view (``mode`` live,
    or ``no_referee`` when the app was started without one). A board that cannot be
    drawn (a replay that does not re-simulate, a map this Arena does not know) says so
    in a fixed line (``error``); the reason goes to the log."""
    game = match["game"]
    if game not in GAMES:
        return None
    players = [p["label"] for p in sorted(match["players"], key=lambda p: p["seat"])]
    base: dict[str, Any] = {
        "template": f"viewer_{game}.html",
        "game": game,
        "match_id": match["match_id"],
        "players": players,
        "error": None,
        "endings": ENDINGS_SAID,
    }
    row = store.match(match["match_id"])
    options = dict(row.options or {}) if row is not None else {}
    if match["replay_available"]:
        base["mode"] = "replay"
        try:
            built = cache.for_page(store, match["match_id"])
            picture = _picture(game, options, players, built["board"], built["final"])
        except ReplayBroken as exc:
            log.warning("match %s: %s", match["match_id"], exc.detail)
            return {**base, "error": str(exc)}
        except ValueError as exc:
            log.warning("match %s: the viewer cannot draw its board: %s", match["match_id"], exc)
            return {**base, "error": NO_BOARD}
        return {**base, **picture, "first": built["first"]}
    if match["status"] != "running":
        return None
    base["mode"] = "live" if referee else "no_referee"
    try:
        board = _board_of(cache.registry, match, options, len(players))
        picture = _picture(game, options, players, board, None)
    except (KeyError, TypeError, ValueError) as exc:
        log.warning("match %s: the viewer cannot draw its board: %s", match["match_id"], exc)
        return {**base, "error": NO_BOARD}
    return {**base, **picture}


def live_head(registry: Any, match: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """What a live view's start event says besides its frames: the game, the seats'
    labels and the board's names (for Risk, the map); ``options``: the match's own, as
    stored. Raises ValueError (said in the log, never to a user) for a board this
    Arena cannot make."""
    players = [p["label"] for p in sorted(match["players"], key=lambda p: p["seat"])]
    board = _board_of(registry, match, options, len(players))
    return {"game": match["game"], "players": players, "board": board}


def _board_of(
    registry: Any, match: dict[str, Any], options: dict[str, Any], seats: int
) -> dict[str, Any]:
    """The board's names (the map) of a match not yet played out: from a state made
    with its options and a seed of 0 (nothing secret is read from it)."""
    game = registry.game(match["game"])
    variants = registry.resolve_variants(match["game"], match["variant_list"])
    return frames.board(game.new_state(seats, 0, options, variants))


def _picture(
    game: str, options: dict[str, Any], players: list[str], board: dict[str, Any], view: Any
) -> dict[str, Any]:
    if game == "risk":
        from arena.games.risk.map import load_map

        # the map by name or by its content (arena.games.risk.map): never a file
        picture = boards.risk_map(load_map(options.get("map", "classic")))
        panel = boards.risk_panel(view, players, board) if view is not None else None
        owners = boards.risk_owners(players, board)
        return {"picture": picture, "panel": panel, "owners": owners, "view": view}
    return {
        "picture": boards.stratego_board(),
        "view": view,
        "owners": [
            {"index": i, "label": label, "colour": boards.SEAT_COLOURS[i]}
            for i, label in enumerate(players)
        ],
    }
