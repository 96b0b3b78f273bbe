"""The match page's viewers: the frames of a stored replay (built once, kept), and what
the page draws on the server (the board as it stands at the end of a replay, or as the
live view starts) before the script takes over."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import orjson

from arena.engine.replay import from_json
from arena.store import Store
from arena.web import boards, data, frames

#: viewers of these games exist (templates/viewer_GAME.html, static/GAME.js)
GAMES = ("risk", "stratego")


class FrameCache:
    """The frames of the latest ``size`` replays asked for, as the JSON bytes sent and
    the last view: a replay never changes once it may be shown, so they are built once.
    A lock per replay: two viewers arriving together wait for one build."""

    def __init__(self, registry: Any, size: int = 8) -> None:
        self.registry = registry
        self.size = size
        self._built: OrderedDict[tuple[str, bool], dict[str, Any]] = OrderedDict()
        self._locks: dict[tuple[str, bool], threading.Lock] = {}
        self._guard = threading.Lock()

    def get(self, store: Store, match_id: str, reveal: bool = False) -> dict[str, Any]:
        """``json`` (bytes), ``final`` (the last view), ``board``, ``frames``. Raises
        PermissionError while the replay is hidden, NotFound without one, ValueError
        for a replay that does not re-simulate."""
        data.check_replay_shown(store, match_id)  # the secrets' rules, at every request
        key = (match_id, reveal)
        with self._guard:
            if key in self._built:
                self._built.move_to_end(key)
                return self._built[key]
            lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            with self._guard:
                if key in self._built:
                    return self._built[key]
            entry = self._build(store, match_id, reveal)
            with self._guard:
                self._built[key] = entry
                while len(self._built) > self.size:
                    old, _ = self._built.popitem(last=False)
                    self._locks.pop(old, None)
            return entry

    def _build(self, store: Store, match_id: str, reveal: bool) -> dict[str, Any]:
        # the replay and the frames are trees of a million lists and dicts, made, turned
        # into JSON and let go: the collector stays off until they are gone, or it
        # scans them as they grow and once more before they are freed (a third of the
        # time, and more in a big heap: docs/web.md, "What the first load costs")
        with frames.paused_gc():
            record = from_json(data.replay_doc(store, match_id))
            if record.game not in GAMES:
                raise data.NotFound(f"no viewer for {record.game} matches")
            built = frames.from_replay(record, self.registry, reveal)
            entry = {
                "json": orjson.dumps(built),
                "final": built["final"],
                "board": built["board"],
                "frames": built["frames"],
            }
            del built, record
        return entry


def page(
    store: Store, cache: FrameCache, match: dict[str, Any], referee: str | None
) -> dict[str, Any] | None:
    """What the match page's viewer block shows: None when the game has no viewer or
    there is nothing to show; else the picture's geometry and, for a replay, the last
    position (``mode`` replay), or, for a running match, the live view (``mode`` live,
    or ``no_referee`` when the app was started without one)."""
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
    }
    if match["replay_available"]:
        base["mode"] = "replay"
        try:
            built = cache.get(store, match["match_id"])
        except ValueError as exc:
            return {**base, "error": str(exc)}
        return {**base, **_picture(game, cache.registry, match, built["board"], built["final"])}
    if match["status"] != "running":
        return None
    base["mode"] = "live" if referee else "no_referee"
    try:
        board = _board_of(cache.registry, match, len(players))
    except ValueError as exc:
        return {**base, "error": str(exc)}
    return {**base, **_picture(game, cache.registry, match, board, None)}


def live_head(registry: Any, match: dict[str, Any]) -> dict[str, Any]:
    """What a live view's start event says besides its frames: the game, the seats'
    labels and the board's names (for Risk, the map)."""
    players = [p["label"] for p in sorted(match["players"], key=lambda p: p["seat"])]
    board = _board_of(registry, match, len(players))
    return {"game": match["game"], "players": players, "board": board}


def _board_of(registry: Any, match: dict[str, Any], seats: int) -> dict[str, Any]:
    """The board's names (the map) of a match not yet played out: from a state made
    with its options and a seed of 0 (nothing secret is read from it)."""
    game = registry.game(match["game"])
    variants = registry.resolve_variants(match["game"], match["variant_list"])
    return frames.board(game.new_state(seats, 0, match["options"], variants))


def _picture(
    game: str, registry: Any, match: dict[str, Any], board: dict[str, Any], view: Any
) -> dict[str, Any]:
    players = [p["label"] for p in sorted(match["players"], key=lambda p: p["seat"])]
    if game == "risk":
        from arena.games.risk.map import load_map

        picture = boards.risk_map(load_map(match["options"].get("map", "classic")))
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
