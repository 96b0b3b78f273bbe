"""Arena's pages in a real browser: ``arena web`` as a process, Debian's Chromium driven
by Playwright, screenshots as small PNGs, and a replay stored as a match to open.

The browser tests (``tests/web``) and ``scripts/screenshots.py`` (the README's images)
use these same functions, so the README shows what the tests look at. Playwright and
Pillow come with the ``dev`` extra (``pip install -e .[dev]``); Chromium is Debian's
(``scripts/ensure_chromium.sh``): Playwright never downloads a browser here.
"""

from __future__ import annotations

import contextlib
import io
import os
import socket
import subprocess
import sys
import time
import urllib.request
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
#: the window the pages are looked at (and shot) in
VIEWPORT = {"width": 1200, "height": 800}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serve(
    db: Path | str, *extra: str, timeout_s: float = 60.0, said: list[str] | None = None
) -> Iterator[str]:
    """``arena web`` on the store ``db`` as a process of its own, on a free port (``extra``:
    more flags, such as ``--referee``): its base URL once it answers; stopped (SIGTERM)
    after, when ``said`` (if given) gets the lines it printed, stdout and stderr."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "web", "--db", str(db), "--port", str(port), *extra],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_up(base, process, timeout_s, lambda: process.communicate()[0])
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if process.stdout is not None:
            if said is not None:
                said.extend(process.stdout.read().splitlines())
            process.stdout.close()


def wait_up(
    base: str, process: subprocess.Popen[Any], timeout_s: float, said: Callable[[], str]
) -> None:
    """Returns once ``arena web`` (``process``) answers at ``base``; RuntimeError with
    what it ``said`` if it ends or does not answer within ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(base + "/", timeout=5) as answer:
                if answer.status == 200:
                    return
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise RuntimeError(f"arena web did not start: {said()}")
        time.sleep(0.2)


def store_replay(db: Path | str, text: str, match_id: str | None = None) -> str:
    """The store at ``db`` (made if missing) holding the replay ``text`` as a finished
    match of house:random (a match of no tournament: its replay is shown at once), by
    ``match_id`` (None: a new one); the match's id. The long replays the viewer's tests
    and benchmark open."""
    import json

    from arena.store import Outcome, Store

    replay = json.loads(text)
    store = Store(str(db))
    try:
        house = store.house_bot("random")
        match_id = match_id or "long-" + uuid.uuid4().hex[:8]
        seats = replay["num_players"]
        store.start_match(
            match_id,
            replay["game"],
            [house.label] * seats,
            bot_ids=[house.id] * seats,
            options=replay["options"],
            seed=replay["seed"],
        )
        result = replay["result"]
        store.record_result(
            Outcome(
                match_id,
                "finished",
                reason=result["reason"],
                places=tuple(result["places"]),
                detail=result["detail"],
                replay=text,
            )
        )
    finally:
        store.close()
    return match_id


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    if not os.path.exists(CHROMIUM):
        raise RuntimeError(f"no Chromium at {CHROMIUM}: run scripts/ensure_chromium.sh")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield browser
        finally:
            browser.close()


def new_page(browser: Browser, javascript: bool = True) -> Page:
    """A page in a context of its own, in :data:`VIEWPORT`."""
    context = browser.new_context(java_script_enabled=javascript, viewport=VIEWPORT)
    return context.new_page()


def shoot(page: Page, folder: Path, name: str, full_page: bool = True, **options: Any) -> Path:
    """Save ``folder/name.png``: the page as Chromium draws it, made small (at most 256
    colours, which a page of text and flat colours loses nothing visible to, and
    compressed at Pillow's best)."""
    from PIL import Image

    size = page.viewport_size
    if full_page and size:
        # the whole page and no more: a short page would be padded to the window's height
        page.set_viewport_size({"width": size["width"], "height": 200})
    try:
        png = page.screenshot(full_page=full_page, **options)
    finally:
        if full_page and size:
            page.set_viewport_size(size)
    image = Image.open(io.BytesIO(png)).convert("RGB")
    small = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    small.save(path, optimize=True)
    return path


#: the README's pictures: name -> what they show
README_SHOTS = {
    "leaderboard": "the classic Risk leaderboard",
    "risk-replay": "a finished Risk match's page (its replay viewer)",
}


def readme_shots(browser: Browser, base: str, folder: Path) -> dict[str, Path]:
    """The README's pictures of the app at ``base``, saved in ``folder``: the classic
    Risk leaderboard, and the page of a finished classic Risk match (the longest of the
    first tournament's). The browser tests make them with this same function."""
    import json

    page = new_page(browser)
    try:
        page.goto(f"{base}/leaderboards/risk/classic")
        page.get_by_role("table").first.wait_for()
        shots = {"leaderboard": shoot(page, folder, "leaderboard")}
        with urllib.request.urlopen(f"{base}/api/tournaments") as answer:
            tournaments = json.load(answer)
        risk = next(t for t in reversed(tournaments) if t["game"] == "risk" and t["variants"] == "")
        with urllib.request.urlopen(f"{base}/api/tournaments/{risk['tournament_id']}") as answer:
            matches = json.load(answer)["match_list"]
        steps = {}
        for m in matches:
            with urllib.request.urlopen(f"{base}/api/matches/{m['match_id']}/events") as answer:
                steps[m["match_id"]] = json.load(answer)["steps"]
        longest = max(steps, key=lambda match_id: steps[match_id])
        page.goto(f"{base}/matches/{longest}")
        page.get_by_role("heading", name="Event log").wait_for()
        # the window's worth: the page goes on with every step of the event log
        shots["risk-replay"] = shoot(page, folder, "risk-replay", full_page=False)
        return shots
    finally:
        page.context.close()


#: the windows the layout is checked and shot at: a phone's, and a small laptop's
SIZES = {"phone": {"width": 390, "height": 844}, "laptop": {"width": 1366, "height": 768}}
#: the pages shot at each size (docs/images/layouts/SIZE-PAGE.png)
LAYOUT_PAGES = ("home", "leaderboard", "tournament", "risk-viewer", "stratego-viewer")

#: what a page's layout measures, in the browser: whether it scrolls sideways, and where
#: the parts that must be seen are (None: the page has no such part)
MEASURE = """() => {
  const box = (selector) => {
    const node = document.querySelector(selector);
    if (!node) return null;
    const r = node.getBoundingClientRect();
    const shown = getComputedStyle(node).display !== "none" && r.width > 0;
    return { left: r.left, right: r.right, top: r.top, bottom: r.bottom, shown };
  };
  const board = document.querySelector("table.board");
  const columns = board
    ? Array.from(board.querySelectorAll("thead th"), (th) => {
        const r = th.getBoundingClientRect();
        const on = getComputedStyle(th).display !== "none";
        return [th.textContent.replace(/[▲▼]/g, "").trim(), r.right, on];
      })
    : [];
  const label = document.querySelector(".risk-map text.label");
  return {
    width: window.innerWidth,
    height: window.innerHeight,
    scrollWidth: document.documentElement.scrollWidth,
    columns,
    panel: box(".viewer-panel"),
    current: box(".viewer-log li.current"),
    currentEvent: box(".viewer-log li.current .event"),
    label: label ? label.getBoundingClientRect().height : null,
  };
}"""


def layout_pages(base: str) -> dict[str, str]:
    """The URL of each of :data:`LAYOUT_PAGES` in the app at ``base``: its first classic
    Risk tournament, and the longest Risk and Stratego matches of the first of each."""
    import json

    def get(path: str) -> Any:
        with urllib.request.urlopen(base + path) as answer:
            return json.load(answer)

    tournaments = list(reversed(get("/api/tournaments")))
    longest = {}
    for game in ("risk", "stratego"):
        t = next(t for t in tournaments if t["game"] == game and t["variants"] == "")
        if game == "risk":
            risk_tournament = t["tournament_id"]
        matches = get(f"/api/tournaments/{t['tournament_id']}")["match_list"]
        steps = {
            m["match_id"]: get(f"/api/matches/{m['match_id']}/events")["steps"] for m in matches
        }
        longest[game] = max(steps, key=lambda match_id: steps[match_id])
    return {
        "home": "/",
        "leaderboard": "/leaderboards/risk/classic",
        "tournament": f"/tournaments/{risk_tournament}",
        "risk-viewer": f"/matches/{longest['risk']}",
        "stratego-viewer": f"/matches/{longest['stratego']}",
    }


def layout_shots(
    browser: Browser, base: str, folder: Path
) -> dict[str, tuple[Path, dict[str, Any]]]:
    """Each of :data:`LAYOUT_PAGES` at each of :data:`SIZES`, as ``SIZE-PAGE``: its
    screenshot in ``folder`` (what is on the screen as the page opens; a phone's viewer:
    the whole viewer, board and side) and its :data:`MEASURE`. The browser tests check
    the measures; ``scripts/screenshots.py`` keeps the pictures in docs/images/layouts."""
    out = {}
    urls = layout_pages(base)
    for size, viewport in SIZES.items():
        context = browser.new_context(viewport=viewport)
        try:
            page = context.new_page()
            for name in LAYOUT_PAGES:
                page.goto(base + urls[name])
                if name.endswith("viewer"):
                    page.wait_for_selector("#viewer[data-ready=true]", timeout=90_000)
                measured = page.evaluate(MEASURE)
                key = f"{size}-{name}"
                if size == "phone" and name.endswith("viewer"):
                    path = folder / f"{key}.png"
                    folder.mkdir(parents=True, exist_ok=True)
                    page.locator("#viewer").screenshot(path=str(path))
                    path = _small(path)
                else:
                    path = shoot(page, folder, key, full_page=False)
                out[key] = (path, measured)
        finally:
            context.close()
    return out


def _small(path: Path) -> Path:
    """The PNG at ``path`` made small as :func:`shoot` makes its own."""
    from PIL import Image

    with Image.open(path) as image:
        small = image.convert("RGB").quantize(
            colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE
        )
    small.save(path, optimize=True)
    return path
