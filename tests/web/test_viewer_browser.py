"""The replay viewers in Debian's Chromium (Playwright), on `arena web` as a process:
step a replay to its end with the controls and compare what the page shows with the
state the engine computes from the replay; without JavaScript the page shows the same
end. Screenshots of each viewer go to ``$ARENA_SCREENSHOTS`` (or the test's folder)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from arena.engine.replay import from_json
from arena.games.stratego.pieces import NAMES
from arena.store import Store

from .conftest import ViewerStore, replay_states, web_app


@pytest.fixture(scope="module")
def base(viewer_store: ViewerStore) -> Iterator[str]:
    with web_app(viewer_store.path) as url:
        yield url


def stored_record(db: Path, match_id: str) -> Any:
    """The stored replay of a match, as a MatchRecord."""
    store = Store(str(db), create=False)
    try:
        return from_json(orjson.loads(store.replay(match_id)))
    finally:
        store.close()


def states(db: Path, match_id: str) -> list[Any]:
    """The engine's state after each step of the stored replay (from the first)."""
    out = replay_states(stored_record(db, match_id))
    assert out[-1].terminal
    return out


def battle_steps(db: Path, match_id: str) -> list[int]:
    """The steps of the stored replay that fought a battle (frame i is after step i)."""
    found = [
        index
        for index, (_seat, _action, events) in enumerate(stored_record(db, match_id).steps, 1)
        if any(event.get("e") == "battle" for event in events)
    ]
    assert found, "the match fought no battle"
    return found


def final_state(db: Path, match_id: str) -> Any:
    """The engine's state at the end of the stored replay."""
    return states(db, match_id)[-1]


def open_viewer(page: Any, base: str, match_id: str) -> None:
    page.goto(f"{base}/matches/{match_id}")
    page.wait_for_selector("#viewer[data-ready=true]", timeout=90_000)


def step(page: Any) -> int:
    return int(page.locator("#viewer").get_attribute("data-step"))


def step_to_the_end(page: Any) -> int:
    """From the first step to the last with the controls: play at the fastest speed,
    then the keys back and forth. The last step's number."""
    last = int(page.locator("[data-slider]").get_attribute("max"))
    page.get_by_role("button", name="First").click()
    assert step(page) == 0
    page.get_by_role("button", name="Next ▶").click()
    assert step(page) == 1
    page.get_by_label("steps a second").select_option("300")
    page.get_by_role("button", name="Play").click()
    page.wait_for_function(  # a function, not a string: the pages' CSP forbids eval
        "() => document.querySelector('#viewer').dataset.step === "
        "document.querySelector('[data-slider]').max",
        timeout=180_000,  # a wait, not a speed: on a busy machine the timers run late
    )
    assert page.get_by_role("button", name="Play").is_visible()  # it stopped at the end
    page.locator("body").press("ArrowLeft")
    assert step(page) == last - 1
    page.locator("body").press("End")
    assert step(page) == last
    return last


def risk_territories(page: Any) -> list[tuple[int, int, str]]:
    """Each territory's owner and armies as the page holds them, and the number drawn."""
    return page.eval_on_selector_all(
        "#viewer g.territory",
        """nodes => nodes.map(n => [Number(n.dataset.owner), Number(n.dataset.armies),
                                    n.querySelector('text.armies').textContent])""",
    )


def risk_panel(page: Any) -> list[list[str]]:
    return page.eval_on_selector_all(
        "#viewer tr[data-owner]",
        """rows => rows.map(r => ['territories', 'armies', 'cards', 'continents']
                                  .map(k => r.querySelector(`[data-k=${k}]`).textContent))""",
    )


def check_risk_end(page: Any, state: Any) -> None:
    shown = risk_territories(page)
    assert [(o, a) for o, a, _ in shown] == list(zip(state.owner, state.armies, strict=True))
    assert [text for _, _, text in shown] == [str(a) for a in state.armies]
    strength = [
        sum(a for o, a in zip(state.owner, state.armies, strict=True) if o == i)
        for i in range(state.num_owners)
    ]
    expected = []
    for i in range(state.num_owners):
        held = [
            name
            for name, members in zip(state.map.continents, state.map.continent_members, strict=True)
            if all(state.owner[t] == i for t in members)
        ]
        expected.append(
            [
                str(state.territory_count[i]),
                str(strength[i]),
                str(len(state.hands[i])),
                ", ".join(held),
            ]
        )
    assert risk_panel(page) == expected


@pytest.mark.parametrize("kind", ["risk-cards", "risk-missions", "risk-capital", "risk-neutral"])
def test_a_risk_replay_stepped_to_its_end_shows_the_engines_final_state(
    base: str, chromium: Any, viewer_store: ViewerStore, screenshots: Path, kind: str
):
    match_id = viewer_store.matches[kind]
    state = final_state(viewer_store.path, match_id)
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        open_viewer(page, base, match_id)
        step_to_the_end(page)
        check_risk_end(page, state)
        if kind == "risk-cards":
            assert sum(len(h) for h in state.hands) + len(state.discard) > 0  # cards played
        if kind == "risk-missions":  # revealed at the end, not before
            from arena.games.risk.variants.missions import BY_ID

            texts = page.locator("[data-missions] li").all_inner_texts()
            assigned = state.variant_data["missions"]["assigned"]
            assert [t.split(": ", 1)[1] for t in texts] == [BY_ID[m].text for m in assigned]
            page.get_by_role("button", name="◀ Previous").click()
            assert page.locator("[data-missions]").is_hidden()
            page.get_by_role("button", name="Last").click()
        if kind == "risk-capital":
            marked = page.eval_on_selector_all(
                "#viewer g.territory text.capital",
                "marks => marks.map(m => m.getAttribute('visibility') !== 'hidden')",
            )
            hq = state.variant_data["capital"]["hq"]
            assert [t for t, on in enumerate(marked) if on] == sorted(hq)
        if kind == "risk-neutral":
            neutral = page.locator("#viewer tr[data-owner='2'] .name").inner_text()
            assert neutral == "neutral"
        assert page.locator(".viewer-log li.current").count() == 1
        page.locator("#viewer").screenshot(path=str(screenshots / f"viewer-{kind}.png"))
        if kind == "risk-cards":  # jumps anywhere, forth and back: the engine's board
            every = states(viewer_store.path, match_id)
            for target in random.Random(3).sample(range(len(every)), 25):
                page.evaluate(f"window.ArenaViewer.show({target})")
                shown = [(o, a) for o, a, _ in risk_territories(page)]
                truth = every[target]
                assert shown == list(zip(truth.owner, truth.armies, strict=True)), target
        if kind == "risk-cards":  # a battle, with its odds, in the middle of the game
            # the match's seed is secret, so where its battles are varies: the one
            # nearest the middle, from the replay (its second half may have none)
            middle = step(page) // 2
            battles = battle_steps(viewer_store.path, match_id)
            target = min(battles, key=lambda index: abs(index - middle))
            page.locator("[data-slider]").fill(str(target))
            battle = page.locator(".viewer-log li.current .odds")
            assert "to capture" in battle.first.inner_text()
            page.locator("#viewer").screenshot(path=str(screenshots / "viewer-risk-battle.png"))
        assert errors == []
    finally:
        page.close()


@pytest.mark.parametrize("kind", ["risk-cards", "risk-long"])  # a long one: from its tail
def test_without_javascript_the_risk_page_shows_the_end(
    base: str, chromium: Any, viewer_store: ViewerStore, kind: str
):
    match_id = viewer_store.matches[kind]
    state = final_state(viewer_store.path, match_id)
    context = chromium.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(f"{base}/matches/{match_id}")
        assert [tuple(t) for t in risk_territories(page)] == [
            (o, a, str(a)) for o, a in zip(state.owner, state.armies, strict=True)
        ]
        assert page.locator("[data-controls]").is_hidden()  # nothing to press without a script
        assert page.get_by_role("heading", name="Event log").is_visible()  # the table stays
    finally:
        context.close()


def stratego_pieces(page: Any) -> list[tuple[str, str]]:
    """Each square (not a lake) as the page holds it: "OWNER:RANK" ("" while hidden)."""
    return [
        tuple(square)
        for square in page.eval_on_selector_all(
            "#viewer g.piece",
            """pieces => pieces.map(p => [p.dataset.square,
             p.getAttribute('visibility') === 'hidden' ? '' : `${p.dataset.owner}:${p.dataset.rank}`
        ])""",
        )
    ]


def test_a_stratego_replay_stepped_to_its_end_shows_what_was_revealed_then_every_rank(
    base: str, chromium: Any, viewer_store: ViewerStore, screenshots: Path
):
    from arena.games.stratego.board import LAKES, square_name

    match_id = viewer_store.matches["stratego"]
    state = final_state(viewer_store.path, match_id)
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    try:
        open_viewer(page, base, match_id)
        step_to_the_end(page)

        def expected(every_rank: bool) -> list[tuple[str, str]]:
            out = []
            for s in range(100):
                if s in LAKES:
                    continue
                o = state.owner[s]
                shown = NAMES[state.rank[s]] if o >= 0 and (every_rank or state.revealed[s]) else ""
                out.append((square_name(s), f"{o}:{shown}" if o >= 0 else ""))
            return out

        assert stratego_pieces(page) == expected(every_rank=False)
        lost = page.eval_on_selector_all(
            "#viewer [data-lost]", "rows => rows.map(r => Array.from(r.children, c => c.title))"
        )
        assert lost == [[NAMES[r] for r in side] for side in state.captured]
        assert not all(state.revealed[s] for s in range(100) if state.owner[s] >= 0)
        page.locator("#viewer").screenshot(path=str(screenshots / "viewer-stratego.png"))

        page.get_by_label("show every rank").check()
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('#viewer g.piece'))"
            ".every(p => p.getAttribute('visibility') === 'hidden' || p.dataset.rank)"
        )
        assert stratego_pieces(page) == expected(every_rank=True)
        page.locator("#viewer").screenshot(path=str(screenshots / "viewer-stratego-every-rank.png"))
    finally:
        page.close()


def test_a_long_replay_opens_at_its_end_from_its_tail_then_loads_every_step(
    base: str, chromium: Any, viewer_store: ViewerStore
):
    """The page of a replay longer than viewers.TAIL_STEPS is drawn from its tail, and
    the viewer starts with it: ready at the last step, it steps back within the tail
    while the whole frames are held back (Playwright holds the real server's answer),
    a step before the tail waits ("Loading earlier steps…") and is drawn once they
    arrive; then any step can be shown."""
    import re

    from arena.web.viewers import tail_start

    match_id = viewer_store.matches["risk-long"]
    every = states(viewer_store.path, match_id)
    last = len(every) - 1
    first = tail_start(last)
    assert first > 0
    page = chromium.new_page(viewport={"width": 1280, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/frames" in r.url else None)
    held: list[Any] = []  # the request for every frame, answered when the test says
    page.route(re.compile(r"/api/matches/[^/?]+/frames$"), lambda route: held.append(route))

    def shows(state: Any) -> bool:
        return [(o, a) for o, a, _ in risk_territories(page)] == list(
            zip(state.owner, state.armies, strict=True)
        )

    try:
        open_viewer(page, base, match_id)
        assert page.locator("#viewer").get_attribute("data-first") == str(first)
        assert step(page) == last
        assert page.locator("[data-slider]").get_attribute("max") == str(last)  # the whole match
        check_risk_end(page, every[last])
        for _ in range(100):  # the whole frames are asked for once the end is shown
            if held:
                break
            page.wait_for_timeout(50)
        assert len(held) == 1
        assert [u.split("/frames")[1] for u in asked] == [f"?since={first}", ""]
        assert page.evaluate("window.ArenaViewer.completeAt") is None
        page.locator("body").press("ArrowLeft")
        assert step(page) == last - 1 and shows(every[last - 1])
        assert page.locator(".viewer-log li.current .step").inner_text() == str(last - 1)

        page.get_by_role("button", name="First").click()  # before the tail: it waits
        assert page.locator("[data-status]").inner_text() == "Loading earlier steps…"
        assert page.locator("#viewer").get_attribute("data-waiting") == "true"
        assert page.locator("[data-slider]").input_value() == "0"
        assert page.locator("[data-counter]").inner_text() == f"step 0 of {last}"
        assert step(page) == last - 1 and shows(every[last - 1])  # nothing else drawn
        assert page.locator(".viewer-log li").count() == 0
        page.locator("body").press("ArrowRight")  # still before the tail
        assert page.locator("[data-counter]").inner_text() == f"step 1 of {last}"
        page.locator("body").press("ArrowLeft")

        held[0].continue_()  # every frame arrives: the step asked for is drawn
        page.wait_for_function("() => window.ArenaViewer.completeAt !== undefined")
        page.wait_for_selector("#viewer[data-step='0']")
        assert page.locator("#viewer").get_attribute("data-waiting") is None
        check_risk_end(page, every[0])  # the territories as dealt, one army each
        assert page.locator("[data-status]").inner_text() != "Loading earlier steps…"
        assert page.locator(".viewer-log li.current .step").inner_text() == "0"

        page.locator("body").press("End")
        page.locator("body").press("ArrowLeft")
        assert step(page) == last - 1 and shows(every[last - 1])
        for target in random.Random(5).sample(range(first), 5):  # anywhere before the tail
            page.evaluate(f"window.ArenaViewer.show({target})")
            assert step(page) == target and shows(every[target]), target
        assert page.evaluate("window.ArenaViewer.readyAt < window.ArenaViewer.completeAt")
        assert errors == []
    finally:
        page.close()


@pytest.mark.parametrize("kind", ["stratego", "risk-cards"])
def test_the_event_log_shows_the_steps_up_to_the_one_shown_never_after(
    base: str, chromium: Any, viewer_store: ViewerStore, kind: str
):
    page = chromium.new_page(viewport={"width": 1366, "height": 768})
    try:
        open_viewer(page, base, viewer_store.matches[kind])
        assert page.locator("[data-log-box] h3").inner_text().startswith("Events up to this step")
        last = int(page.locator("[data-slider]").get_attribute("max"))
        for target in (0, 1, last // 3, last // 2, last - 1, last):
            page.evaluate(f"window.ArenaViewer.show({target})")
            shown = [int(s) for s in page.locator(".viewer-log li .step").all_inner_texts()]
            # this step first, then the ones before it, the latest first: none after
            assert shown[0] == target and shown == sorted(shown, reverse=True), (target, shown)
            assert shown == list(range(target, target - len(shown), -1))
            assert len(shown) == min(target + 1, 13)  # the step and the 12 before
            current = page.locator(".viewer-log li[aria-current=step] .step").inner_text()
            assert current == str(target)
        page.get_by_role("button", name="◀ Previous").click()
        assert page.locator(".viewer-log li .step").first.inner_text() == str(last - 1)
    finally:
        page.close()
