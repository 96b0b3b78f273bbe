"""The web app: server-rendered pages and their JSON twins under ``/api/``.

:func:`create_app` opens the store read-only (:mod:`arena.store.readonly`): no request
can change it. Every page is complete without JavaScript; every asset is served here.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cachetools import LRUCache
from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import (
    FileResponse,
    HTMLResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
)
from fastapi.staticfiles import StaticFiles
from fastapi.templating import Jinja2Templates
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from arena.engine.core import ending_said
from arena.plugins import default_registry
from arena.store.readonly import ReadOnlyStore
from arena.web import data, errors, live, prebuild, progress, safety, svg, viewers
from arena.web.cache import Boards
from arena.web.streams import EventStream

log = logging.getLogger(__name__)

HERE = Path(__file__).resolve().parent
#: how long the app waits, as it stops, for the leaderboards' first read to end
WARM_JOIN_S = 10.0
#: the bytes of leaderboard tables kept as HTML (the least recently used go first)
TABLE_BYTES = 16 * 2**20
#: a page route: HTML, left out of the API's description (its twin under /api/ is in it)
PAGE: dict[str, Any] = {"response_class": HTMLResponse, "include_in_schema": False}
#: how long a browser turned away from a full stream is asked to wait (seconds)
RETRY_AFTER_S = 30


@dataclass(frozen=True)
class Limits:
    """How much the web takes on at once (``arena web`` options; docs/web.md,
    "Bounds"): browsers watching live matches, in all and on one match; tournament
    pages' event streams; the bytes of viewers' frames kept."""

    live_watchers: int = live.WATCHERS
    live_per_match: int = live.WATCHERS_PER_MATCH
    tournament_streams: int = progress.STREAMS
    frames_bytes: int = viewers.VIEWED_BYTES


class ArenaApp(FastAPI):
    """FastAPI with :class:`arena.web.safety.Headers` outside everything, the error
    pages of the server itself included."""

    def build_middleware_stack(self) -> Any:
        return safety.Headers(super().build_middleware_stack())


def public(response: Response, shown: bool = True) -> Response:
    """``response`` marked as public (kept by a browser, asked again each time), or, if
    not ``shown``, as holding what may not be kept (:mod:`arena.web.safety`)."""
    response.headers["cache-control"] = safety.PUBLIC if shown else safety.SECRET
    return response


#: the leaderboards' repeatable filters (``?variant=a&variant=b``): one object each,
#: since FastAPI keeps a parameter's name on it
VARIANTS = Query([])
OPTIONS = Query([])


def full(detail: str) -> StarletteHTTPException:
    """A 503 for a stream beyond its cap: it says so, and when to try again."""
    return StarletteHTTPException(503, detail, headers={"retry-after": str(RETRY_AFTER_S)})


def create_app(
    db_url: str,
    referee: str | None = None,
    poll_s: float = progress.POLL_S,
    prebuild_s: float | None = None,
    limits: Limits | None = None,
) -> FastAPI:
    """The app on the store at ``db_url``; ``referee`` (HOST:PORT), if given, is the
    referee whose health the home page shows; ``poll_s``: how often a running
    tournament's event stream looks at the store; ``prebuild_s``: how often the store is
    looked at for matches that ended, whose frames are then built ahead of their first
    viewer (:mod:`arena.web.prebuild`; None, the default: not built ahead; ``arena web``
    builds ahead every :data:`prebuild.POLL_S` seconds); ``limits``: :class:`Limits`."""
    from arena.plugins import load_registry

    store = ReadOnlyStore(db_url)
    registry = load_registry()
    # the leaderboards, kept up to date from the results that arrive (arena.web.cache)
    cache = Boards(store, watch=True)
    # set as the server stops: the leaderboards' first read and the event streams end
    stopping = threading.Event()
    limits = limits or Limits()
    hub = live.LiveHub(referee, limits.live_watchers, limits.live_per_match) if referee else None
    templates = Jinja2Templates(directory=HERE / "templates")
    templates.env.globals.update(bar=svg.bar, history_plot=svg.history_plot)
    templates.env.filters["elo"] = lambda v: f"{v:.0f}"
    templates.env.filters["bot"] = data.shown_label
    templates.env.filters["ending"] = ending_said
    live_part = templates.env.get_template("_tournament_live.html")

    def tournament_event(tournament_id: str) -> dict[str, Any]:
        """A tournament event's data: made once per change for every stream open on
        it, in a worker thread (a 2,000-match tournament takes a good part of a second)."""
        t = data.tournament(store, tournament_id)
        return {
            "status": t["status"],
            "matches": t["matches"],
            "finished_matches": t["finished_matches"],
            "progress": t["progress"],
            "html": live_part.render(t=t),
        }

    tournaments = progress.TournamentHub(
        store, tournament_event, stopping, poll_s, limits.tournament_streams
    )

    def stop_streams() -> None:
        if hub is not None:
            hub.stop()
        tournaments.stop()

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        loop = asyncio.get_running_loop()
        # the live streams wait on their matches: end them at once (from the loop: a
        # signal handler may run in the middle of its work)
        progress.end_streams_on_signal(stopping, lambda: loop.call_soon_threadsafe(stop_streams))
        warm = threading.Thread(target=_warm, args=(cache, stopping), name="warm", daemon=True)
        warm.start()
        ahead = None
        if prebuilder is not None:
            ahead = threading.Thread(
                target=prebuilder.run, args=(stopping,), name="prebuild", daemon=True
            )
            ahead.start()
        yield
        stopping.set()
        if prebuilder is not None and ahead is not None:
            prebuilder.stop()
            ahead.join(timeout=WARM_JOIN_S)
        # a thread still in numpy or SQLite as the interpreter exits can crash it: wait
        # for the board being read (a big store's first read may outlast this: left then)
        warm.join(timeout=WARM_JOIN_S)
        cache.close()
        if hub is not None:
            await hub.close()
        store.close()

    app = ArenaApp(
        lifespan=lifespan,
        title="Arena",
        summary="Read-only views of an Arena store: leaderboards, bots, tournaments, matches",
        # FastAPI's own /docs loads its scripts from a CDN: ours is a page of this app
        docs_url=None,
        redoc_url=None,
    )
    app.state.store = store
    app.state.boards = cache
    app.state.referee = referee
    app.state.live = hub
    app.state.tournaments = tournaments
    frame_cache = viewers.FrameCache(registry, limits.frames_bytes)
    prebuilder = (
        None
        if prebuild_s is None
        else prebuild.Prebuilder(store, frame_cache, db_url, poll_s=prebuild_s)
    )
    app.state.frames = frame_cache
    app.state.prebuilder = prebuilder
    app.mount("/static", StaticFiles(directory=HERE / "static"), name="static")
    _errors(app, templates)

    def page(request: Request, name: str, shown: bool = True, **context: Any) -> Response:
        """A page (``shown``: nothing on it is secret or live; else never kept)."""
        return public(templates.TemplateResponse(request, name, context), shown)

    # --- pages ----------------------------------------------------------------------

    @app.get("/", **PAGE)
    async def home_page(request: Request) -> Response:
        return page(request, "home.html", home=await _home(), title=None)

    def board_filters(game: str | None, variant: list[str], option: list[str]) -> dict[str, Any]:
        """The leaderboards' filters of a request (``?game=risk&variant=missions&option=
        cards=none``); a malformed option is a 400 naming the form it must have."""
        options = {}
        variants = [v for text in variant for v in text.replace(",", " ").split()]
        for text in option:
            if not text.strip():  # a form's empty field
                continue
            name, equals, value = text.strip().partition("=")
            if not equals or not name or not value or len(text) > 200:
                raise StarletteHTTPException(400, "an option filter is NAME=VALUE, e.g. cards=none")
            options[name] = value
        if game and options:
            try:
                default_registry().check_board_query(game, variants, options)
            except (KeyError, ValueError) as exc:  # one line, of bounded input
                raise StarletteHTTPException(400, str(exc).strip("'\"")[:300]) from None
        return {"game": game or None, "variants": variants, "options": options}

    @app.get("/leaderboards", **PAGE)
    def leaderboards_page(
        request: Request,
        game: str | None = None,
        variant: list[str] = VARIANTS,
        option: list[str] = OPTIONS,
    ) -> Response:
        filters = board_filters(game, variant, option)
        return page(
            request,
            "leaderboards.html",
            boards=data.boards(store, cache=cache, **filters),
            filters=filters,
            title="Leaderboards",
        )

    # a leaderboard's table as HTML, drawn again only when its rows change: 500 rows
    # take Jinja some 50 ms, the rest of the page 1 ms. By (game, variants, sort): the
    # rows it was drawn from (a board keeps the same row dicts until it changes); the
    # least recently used go beyond TABLE_BYTES
    drawn: LRUCache[tuple[str, str, str], tuple[list[dict[str, Any]], Markup]] = LRUCache(
        TABLE_BYTES, lambda kept: len(kept[1]) + 64 * len(kept[0])
    )
    drawing = threading.Lock()

    def board_table(board: dict[str, Any]) -> Markup:
        key = (board["game"], board["variants"], board["sort"])
        rows = board["rows"]
        with drawing:
            kept = drawn.get(key)
        if (
            kept
            and len(kept[0]) == len(rows)
            and all(a is b for a, b in zip(kept[0], rows, strict=True))
        ):
            return kept[1]
        html = templates.env.get_template("_macros.html").module.board_table(board)
        with drawing, contextlib.suppress(ValueError):  # one larger than all: not kept
            drawn[key] = (rows, html)
        return html

    @app.get("/leaderboards/{game}/{variants}", **PAGE)
    def leaderboard_page(request: Request, game: str, variants: str, sort: str = "rank"):
        board = a_board(game, variants, sort)
        table = board_table(board)
        return page(request, "leaderboard.html", board=board, table=table, title=board["title"])

    def a_board(game: str, variants: str, sort: str) -> dict[str, Any]:
        """A leaderboard (a 404 for a game there is not, saying so)."""
        key = data.board_key(variants)
        return data.leaderboard(store, game, key, sort, cache=cache, games=registry.games)

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        """The tab's icon (browsers ask for it at this path, whatever the page says)."""
        answer = FileResponse(HERE / "static" / "favicon.ico", media_type="image/x-icon")
        answer.headers["cache-control"] = safety.STATIC
        return answer

    @app.get("/bots", **PAGE)
    def bots_page(request: Request) -> Response:
        return page(request, "bots.html", bots=data.bots(store), title="Bots")

    @app.get("/bots/{name:path}", **PAGE)
    def bot_page(request: Request, name: str) -> Response:
        bot = data.bot(store, name, cache, registry)
        return page(request, "bot.html", bot=bot, title=data.shown_label(name))

    @app.get("/tournaments", **PAGE)
    def tournaments_page(request: Request) -> Response:
        rows = data.tournaments(store)
        return page(request, "tournaments.html", tournaments=rows, title="Tournaments")

    @app.get("/tournaments/{tournament_id}", **PAGE)
    def tournament_page(request: Request, tournament_id: str, sort: str = "rank"):
        t = data.tournament(store, tournament_id, sort)
        return page(request, "tournament.html", not t["live"], t=t, title=t["name"])

    @app.get("/matches/{match_id}", **PAGE)
    def match_page(request: Request, match_id: str, page_: int = Query(1, alias="page")):
        m = data.match(store, match_id)
        with data.one_replay_read():  # the event log and the frames: one parse
            log = data.event_log(store, match_id, page_) if m["replay_available"] else None
            viewer = viewers.page(store, frame_cache, m, referee)
        shown = _settled(m)
        return page(
            request, "match.html", shown, m=m, log=log, viewer=viewer, title=f"match {match_id}"
        )

    @app.get("/docs", **PAGE)
    def api_docs_page(request: Request) -> Response:
        return page(request, "api.html", schema=app.openapi(), title="API")

    # --- the API ----------------------------------------------------------------------

    async def _home() -> dict[str, Any]:
        home = await run_in_threadpool(data.home, store, registry, cache)
        home["referee"] = await _referee_status(referee) if referee else None
        return home

    @app.get("/api/home", summary="games, top 5 of each leaderboard, running tournaments")
    async def api_home(response: Response) -> dict[str, Any]:
        """What the home page shows: the games and their variants, the top five of each
        leaderboard, the running tournaments, the latest finished matches, and the
        referee's health when the app was given one."""
        public(response)
        return await _home()

    @app.get(
        "/api/leaderboards",
        summary="every leaderboard (game, variant set, options that change play), or those "
        "of ?game=G&variant=V&option=NAME=VALUE",
    )
    def api_leaderboards(
        response: Response,
        game: str | None = None,
        variant: list[str] = VARIANTS,
        option: list[str] = OPTIONS,
    ) -> list[dict[str, Any]]:
        """Every board with a finished match (game, variant set, and the options that
        make it a game of its own), each with its whole table; or those the filters
        keep."""
        filters = board_filters(game, variant, option)
        public(response)
        return data.boards(store, cache=cache, **filters)

    @app.get(
        "/api/leaderboards/{game}/{variants}.csv",
        summary="a leaderboard as CSV",
        response_class=PlainTextResponse,
    )
    def api_leaderboard_csv(game: str, variants: str, sort: str = "rank") -> Response:
        """The table as CSV (one row a bot version, the same columns as the JSON)."""
        board = a_board(game, variants, sort)
        name = f"leaderboard-{game}-{variants}.csv"
        return public(
            Response(
                data.leaderboard_csv(board),
                media_type="text/csv; charset=utf-8",
                headers={"content-disposition": safety.attachment(name)},
            )
        )

    @app.get("/api/leaderboards/{game}/{variants}", summary="one leaderboard")
    def api_leaderboard(
        response: Response, game: str, variants: str, sort: str = "rank"
    ) -> dict[str, Any]:
        """`variants`: the variant names joined by `+` in alphabetical order, or
        `classic`. `sort`: rank (default), bot, games, wins, draws, losses, score,
        elo, openskill; `-COLUMN` for descending. Rows, numbers and (by rank) order
        are those of `arena leaderboard`."""
        public(response)
        return a_board(game, variants, sort)

    @app.get("/api/bots", summary="every bot name with its versions")
    def api_bots(response: Response) -> list[dict[str, Any]]:
        public(response)
        return data.bots(store)

    @app.get("/api/bots/{name:path}", summary="one bot: versions, ratings, history, head to head")
    def api_bot(response: Response, name: str) -> dict[str, Any]:
        """A bot by name (a house bot: `house:NAME`): its versions, and on each board
        it played: its versions' rows, their rating history (the MLE Elo after each
        tournament it played in) and head-to-head counts; its latest matches."""
        public(response)
        return data.bot(store, name, cache, registry)

    @app.get("/api/tournaments", summary="every tournament, newest first")
    def api_tournaments(response: Response) -> list[dict[str, Any]]:
        """`seed` is null until the tournament has finished."""
        public(response)
        return data.tournaments(store)

    @app.get("/api/tournaments/{tournament_id}", summary="one tournament")
    def api_tournament(
        response: Response, tournament_id: str, sort: str = "rank"
    ) -> dict[str, Any]:
        """Progress (matches by status), entries, standings, crosstable, matches.
        A unique prefix of the id will do."""
        t = data.tournament(store, tournament_id, sort)
        public(response, not t["live"])
        return t

    @app.get(
        "/api/tournaments/{tournament_id}/events",
        summary="a tournament's page as it is played (server-sent events)",
        response_class=EventStream,
    )
    async def api_tournament_events(tournament_id: str, request: Request) -> Response:
        """`text/event-stream`: a `tournament` event at once and at each change of its
        status or progress (the store is looked at every second), whose data is JSON:
        `status`, `matches`, `finished_matches`, `progress` and `html`, the live part of
        the tournament's page; its `id` is the render's (one render per change for
        every stream), and a browser that connects again with the id it has is not sent
        it again; `end` once it has finished or stopped. A stream lasts a minute at
        most: an EventSource connects again by itself. 503 when as many streams are
        open as the app takes."""
        t = await run_in_threadpool(store.tournament, tournament_id)
        if t is None:
            raise data.NotFound(f"no tournament {tournament_id!r}")
        release = tournaments.admit()
        if release is None:
            raise full("as many tournament pages are being followed as this web app takes")
        last_id = request.headers.get("last-event-id")
        return EventStream(
            tournaments.stream(t.id, last_id), {"cache-control": safety.SECRET}, release
        )

    @app.get("/api/matches/{match_id}", summary="one match")
    def api_match(response: Response, match_id: str) -> dict[str, Any]:
        """Players, result, and whether its replay can be had (`replay_hidden` says
        why not yet); `seed` is null while the replay is hidden."""
        m = data.match(store, match_id)
        public(response, _settled(m))
        return m

    @app.get("/api/matches/{match_id}/events", summary="a page of a match's event log")
    def api_events(response: Response, match_id: str, page: int = 1) -> dict[str, Any]:
        """The replay's steps, 200 a page: the seat, its action, the events it caused.
        403 while the replay is hidden."""
        rows = data.event_log(store, match_id, page)
        public(response)
        return rows

    @app.get("/api/matches/{match_id}/replay", summary="a match's replay JSON")
    def api_replay(match_id: str) -> Response:
        """The replay (docs/replay-format.md) as a download; 403 while it is hidden (a
        match that has not finished, or one of a tournament that has not)."""
        return public(
            Response(
                data.replay_text(store, match_id),
                media_type="application/json",
                headers={"content-disposition": safety.attachment(f"{match_id}.json")},
            )
        )

    @app.get("/api/matches/{match_id}/frames", summary="a match's replay as the viewer's frames")
    def api_frames(match_id: str, reveal: bool = False, since: int = Query(0, ge=0)) -> Response:
        """The replay re-simulated as frames of public facts (docs/web.md, "The frame
        API"): `keyframes`, `deltas` and `log` per step, `board`, `result`. `reveal`:
        every fact (a Stratego piece's rank before it is struck). `since`: the frames of
        the build that holds that step (`first`: the frame the lists start at, 0 or, for
        a long replay, the start of its tail; `frames` still counts every frame): the
        page of a long replay starts with its last steps. 400 for a `since` that is not
        a step of the replay (0 to the number of steps). 403 while the replay is hidden,
        as the replay itself (a match that has not finished, or one of a tournament
        that has not)."""
        with data.one_replay_read():  # checking `since` and building: one parse
            built = frame_cache.get(store, match_id, reveal, since)
        return public(Response(built["json"], media_type="application/json"))

    @app.get(
        "/api/matches/{match_id}/live",
        summary="a running match's frames as server-sent events",
        response_class=EventStream,
    )
    async def api_live(match_id: str, request: Request) -> Response:
        """Server-sent events from the referee's spectator stream (docs/web.md, "The
        live view"): `start` (the frames so far, as in `/frames`, from `base`, then as
        many `frames` events as it takes), then `frames` as the match is played, then
        `end` (or `problem`, why it cannot be watched, or why this browser was dropped).
        Public facts only. 404 without a referee (`arena web --referee`), 409 for a
        match that is not running, 503 (with Retry-After) when the match or the app has
        as many watchers as it takes. Deflated (`content-encoding: deflate`) for a
        client that accepts it, as browsers do."""
        if hub is None:
            await run_in_threadpool(data.match, store, match_id)  # 404 for an unknown one
            raise data.NotFound(
                "this web app has no referee to watch matches on: start it with "
                "arena web --referee HOST:PORT"
            )
        release = hub.admit(match_id)
        if release is None:
            raise full(live.FULL)
        try:

            async def look_up() -> dict[str, Any]:
                m = await run_in_threadpool(data.match, store, match_id)
                if m["status"] != "running":
                    raise StarletteHTTPException(
                        409, f"match {match_id} is {m['status']}, not running"
                    )
                row = await run_in_threadpool(store.match, match_id)
                try:
                    return viewers.live_head(registry, m, dict(row.options or {}) if row else {})
                except (KeyError, TypeError, ValueError) as exc:
                    log.warning("match %s cannot be watched: %s", match_id, exc)
                    raise StarletteHTTPException(409, viewers.NO_BOARD) from None

            # others watch it already (it is running), or are asking the store for it
            head = await hub.head(match_id, look_up)
        except BaseException:
            release()
            raise
        packed = live.accepts_deflate(request.headers.get("accept-encoding", ""))
        headers = {"cache-control": safety.SECRET, "vary": "accept-encoding"}
        if packed:
            headers["content-encoding"] = "deflate"
        return EventStream(hub.stream(match_id, head, packed), headers, release)

    return app


def _settled(match: dict[str, Any]) -> bool:
    """Whether a match's page and answer are settled and public (finished, its replay
    shown): else they are live, or hide something for now, and are never kept."""
    return match["status"] == "finished" and match["replay_hidden"] is None


def _warm(cache: Boards, stop: threading.Event) -> None:
    """Read every leaderboard once as the app starts, so that the first visitor does not
    wait for it (a store of 200,000 matches takes a minute to read the first time)."""
    try:
        for game, variants in cache.listed():
            if stop.is_set():
                return
            cache.table(cache.board(game, variants))
    except Exception:
        if not stop.is_set():  # the store closed under it at shutdown: nothing to say
            raise


async def _referee_status(address: str) -> dict[str, Any]:
    """The referee's gRPC health: SERVING, NOT_SERVING, or why it did not answer."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    try:
        async with grpc.aio.insecure_channel(address) as channel:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=""), timeout=2.0
            )
        status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    except grpc.RpcError as exc:
        status = exc.code().name
    return {"address": address, "status": status, "serving": status == "SERVING"}


def _errors(app: FastAPI, templates: Jinja2Templates) -> None:
    """A missing thing is a 404, a secret not yet shown a 403, a bad parameter a 400: a
    JSON `{"detail": ...}` under /api/, a page elsewhere, with the one-line reason that
    the app wrote for it (:mod:`arena.web.errors`). Any other failure is a 500 saying
    only that (:data:`errors.FAILED`): its text, which may name a file or a database,
    goes to the log."""

    def answer(request: Request, status: int, detail: str, headers: Any = None) -> Response:
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": detail}, status_code=status, headers=headers)
        context = {"status": status, "detail": detail, "title": f"{status}"}
        return templates.TemplateResponse(
            request, "error.html", context, status_code=status, headers=headers
        )

    @app.exception_handler(errors.NotFound)
    async def not_found(request: Request, exc: errors.NotFound) -> Response:
        return answer(request, 404, str(exc))

    @app.exception_handler(errors.Hidden)
    async def hidden(request: Request, exc: errors.Hidden) -> Response:
        return answer(request, 403, str(exc))

    @app.exception_handler(errors.BadRequest)
    async def bad_value(request: Request, exc: errors.BadRequest) -> Response:
        if isinstance(exc, errors.ReplayBroken):
            log.warning("match %s: %s", exc.match_id, exc.detail)
        return answer(request, 400, str(exc))

    @app.exception_handler(RequestValidationError)
    async def bad_parameter(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0]
        name = first["loc"][-1]
        given = str(request.query_params.get(str(name), first.get("input")))
        shown = given if len(given) <= 40 else given[:40] + "..."
        return answer(request, 400, f"{name} {shown!r}: {first['msg'].lower()}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return answer(request, exc.status_code, str(exc.detail), exc.headers)

    @app.exception_handler(Exception)
    async def failed(request: Request, exc: Exception) -> Response:
        log.error("%s %s failed", request.method, request.url.path, exc_info=exc)
        return answer(request, 500, errors.FAILED)
