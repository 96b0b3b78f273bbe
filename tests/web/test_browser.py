"""`arena web` as a real process (uvicorn) in Debian's Chromium, driven by Playwright:
what a person sees and clicks. Screenshots of each page go to ``$ARENA_SCREENSHOTS``
(or the test's own directory). ``make test`` installs Chromium (scripts/ensure_chromium.sh)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page

from arena.web.browser import README_SHOTS, VIEWPORT, new_page, readme_shots, serve
from arena.web.browser import shoot as browser_shoot
from arena.web.data import OLD_NAME

from .conftest import XSS, Filled, cli_leaderboard


@pytest.fixture(scope="module")
def server(filled: Filled) -> Iterator[str]:
    with serve(filled.path) as base:
        yield base


@pytest.fixture(scope="module")
def browser(chromium: Browser) -> Browser:
    return chromium


@pytest.fixture
def shots(screenshots: Path) -> Path:
    return screenshots


def shoot(page: Page, folder: Path, name: str, full_page: bool = True) -> Path:
    path = browser_shoot(page, folder, name, full_page=full_page)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return path


def table_rows(page: Page) -> list[list[str]]:
    """The first table's body rows, cell texts as the browser renders them."""
    rows = page.get_by_role("table").first.get_by_role("row").all()
    return [
        [" ".join(t.split()) for t in row.get_by_role("cell").all_inner_texts()]
        for row in rows[1:]  # the header row
    ]


def test_pages_without_javascript_leaderboard_to_bot_to_match(
    server: str, browser: Browser, filled: Filled, copy: Path, shots: Path
):
    expected = cli_leaderboard(copy, "risk")
    page = new_page(browser, javascript=False)
    try:
        page.goto(server + "/")
        assert page.get_by_role("navigation", name="main").get_by_role(
            "link"
        ).all_inner_texts() == [
            "Home",
            "Leaderboards",
            "Tournaments",
            "Bots",
            "API",
        ]
        shoot(page, shots, "home")
        page.get_by_role("link", name="risk (classic)").first.click()
        page.wait_for_url("**/leaderboards/risk/classic")
        shown = [
            (rank, bot, games, w, d, losses, score, elo, interval)
            for rank, bot, elo, interval, games, w, d, losses, score, _ in table_rows(page)
        ]
        assert shown == [row[:9] for row in expected]
        shoot(page, shots, "leaderboard")

        page.get_by_role("link", name="W", exact=True).click()  # sort by wins, on the server
        page.wait_for_url("**?sort=-wins")
        wins = [int(row[5]) for row in table_rows(page)]
        assert wins == sorted(wins, reverse=True)

        leader = expected[0][1]
        page.get_by_role("link", name=leader, exact=True).click()
        name = leader.rsplit("@", 1)[0]
        assert page.get_by_role("heading", name=f"Bot {name}").is_visible()
        assert page.get_by_role("img", name=re.compile("rating history")).first.is_visible()
        shoot(page, shots, "bot")

        page.get_by_role("link", name=re.compile(rf"^{filled.risk_id}-")).first.click()
        assert page.get_by_role("heading", name=re.compile(r"^Match ")).is_visible()
        assert page.get_by_role("link", name="Download the replay (JSON)").is_visible()
        assert page.get_by_role("heading", name="Event log").is_visible()
        assert page.get_by_role("cell", name=name, exact=False).first.is_visible()
        shoot(page, shots, "match", full_page=False)  # its event log is long

        page.get_by_role("link", name=re.compile("^risk round-robin")).click()
        assert page.get_by_role("heading", name="Crosstable").is_visible()
        shoot(page, shots, "tournament")
        page.get_by_role("navigation", name="main").get_by_role("link", name="API").click()
        assert page.get_by_role("heading", name="GET /api/home").is_visible()
        shoot(page, shots, "api")
    finally:
        page.context.close()


def test_a_bot_named_like_a_script_shows_as_text_and_runs_nothing(
    server: str, browser: Browser, shots: Path
):
    page = browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    try:
        page.goto(server + "/leaderboards/stratego/classic")
        # a name from before the rule of names: shown as text, marked
        link = page.get_by_role("link", name=f"{XSS}@1{OLD_NAME}", exact=True)
        assert link.is_visible()
        link.click()
        assert page.get_by_role("heading", name=f"Bot {XSS}{OLD_NAME}").is_visible()
        shoot(page, shots, "markup-bot")
        assert dialogs == []
    finally:
        page.close()


def test_the_readme_pictures_are_made_by_the_code_the_tests_use(
    server: str, browser: Browser, shots: Path
):
    from PIL import Image

    made = readme_shots(browser, server, shots)
    assert set(made) == set(README_SHOTS)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    for name, path in made.items():
        assert f"(docs/images/{name}.png)" in readme  # what scripts/screenshots.py writes
        with Image.open(path) as image:
            assert image.format == "PNG" and image.mode == "P"  # made small: a palette
            assert image.width == VIEWPORT["width"] and image.height >= 200


def test_the_pages_fit_a_phone_and_a_laptop(server: str, browser: Browser, shots: Path):
    """At 390x844 no page scrolls sideways, the leaderboard's W/D/L/Score are on the
    screen, the viewers' side panel is whole and the Risk map's names are of a readable
    size (the map pans instead); at 1366x768 the step's events are above the fold."""
    from arena.web.browser import LAYOUT_PAGES, SIZES, layout_shots

    made = layout_shots(browser, server, shots)
    assert set(made) == {f"{size}-{name}" for size in SIZES for name in LAYOUT_PAGES}
    for key, (path, m) in made.items():
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert m["scrollWidth"] <= m["width"], f"{key} scrolls sideways"
        size, name = key.split("-", 1)
        if name in ("home", "leaderboard", "tournament"):
            shown = {label: (right, on) for label, right, on in m["columns"]}
            for column in ("#", "Bot", "Elo", "W", "D", "L", "Score"):
                right, on = shown[column]
                assert on and 0 < right <= m["width"], f"{key}: {column} off the screen"
        if name.endswith("viewer"):
            panel = m["panel"]
            assert panel["shown"] and panel["left"] >= 0 and panel["right"] <= m["width"], key
        if name == "risk-viewer":
            # the names drawn at least 10 px high on a phone (the map is panned sideways)
            assert m["label"] >= (10 if size == "phone" else 7), (key, m["label"])
        if size == "laptop" and name.endswith("viewer"):
            event = m["currentEvent"]  # the page opens on the last step: its first event
            assert event["shown"] and event["top"] >= 0 and event["bottom"] <= m["height"], (
                key,
                event,
            )
