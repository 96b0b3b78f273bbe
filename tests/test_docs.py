"""The docs stay true: every hook is specified with a docstring and documented in
docs/plugins.md; docs/sdk.md names every method, parameter and decision a bot meets, and
its bots (and the README's) play; every link stays inside the repository."""

from __future__ import annotations

import dataclasses
import functools
import inspect
import random
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pytest

from arena import hookspecs
from arena.engine.match import play_match
from arena.games.risk import state as risk_state
from arena.games.stratego import state as stratego_state
from arena.plugins import load_registry
from arena.sdk import Bot, MatchContext, run_bot_async

DOCS = Path(__file__).resolve().parent.parent / "docs" / "plugins.md"


def _hook_names() -> list[str]:
    return [
        name
        for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
        if name.startswith(("arena_", "risk_", "stratego_"))
    ]


def test_there_are_hooks_to_check():
    assert "arena_register_games" in _hook_names()


def test_every_hook_has_a_docstring():
    missing = [n for n in _hook_names() if not (getattr(hookspecs, n).__doc__ or "").strip()]
    assert not missing, f"hooks without a docstring: {missing}"


def test_every_hook_is_documented_in_plugins_md():
    headings = set(re.findall(r"^### `(\w+)`", DOCS.read_text(), flags=re.MULTILINE))
    missing = sorted(set(_hook_names()) - headings)
    assert not missing, f"hooks missing from docs/plugins.md: {missing}"
    stale = sorted(headings - set(_hook_names()))
    assert not stale, f"docs/plugins.md documents hooks that do not exist: {stale}"


# --- the SDK reference, the README's bots, and links -------------------------------------

ROOT = DOCS.parent.parent
SDK_MD = ROOT / "docs" / "sdk.md"
README = ROOT / "README.md"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
MAIN = re.compile(r'^if __name__ == "__main__":.*\n    main\(\w+\)\n\Z', re.MULTILINE)
OUTSIDE = ("/work/", "../shared", "shared/seeds", "RULES.md", "ARCHITECTURE.md")


def _doc_files() -> list[Path]:
    return [README, *sorted((ROOT / "docs").rglob("*.md"))]


def _python_blocks(path: Path) -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", path.read_text(), flags=re.MULTILINE | re.DOTALL)


def _unnamed(text: str, names: Iterable[str]) -> list[str]:
    return sorted(n for n in set(names) if f"`{n}`" not in text and f"{n}(" not in text)


def test_every_public_method_of_bot_and_parameter_of_run_bot_is_in_sdk_md():
    registry = load_registry()
    methods = {n for n, _ in inspect.getmembers(Bot) if not n.startswith("_")}
    methods |= {f"decide_{game}" for game in registry.games}
    assert {"decide", "default_setup", "decide_risk", "decide_stratego"} <= methods
    keywords = inspect.signature(run_bot_async).parameters.values()
    parameters = {"bot", "referee", "token"} | {
        p.name for p in keywords if p.kind == p.KEYWORD_ONLY
    }
    fields = {f.name for f in dataclasses.fields(MatchContext)}
    missing = _unnamed(SDK_MD.read_text(), methods | parameters | fields)
    assert not missing, f"docs/sdk.md does not name: {missing}"


def _decision_kinds_and_actions() -> tuple[set[str], set[str]]:
    """Every decision kind the engines can ask, and every action type they accept: the
    phases of both games, and the decisions of each Risk variant (asked during setup)."""
    kinds = {k for k in risk_state.PHASE_NAMES + stratego_state.PHASE_NAMES}
    kinds -= {"game_over", "variant"}
    actions = {a for phase in risk_state.PHASE_ACTIONS for a in phase}
    actions |= {a for phase in stratego_state.PHASE_ACTIONS for a in phase}
    registry = load_registry()
    for (game, name), variant in registry.variants.items():
        if game != "risk":
            continue
        state = registry.game(game).new_state(2 if name == "neutral" else 4, 1, {}, [variant])
        while state.turn == 0 and not state.terminal:
            if state._custom is not None:
                kinds.add(state._custom.kind)
                actions |= set(state._custom.handlers)
            state.apply(state.current_player, state.default_action())
    return kinds, actions


def test_every_decision_kind_and_action_type_is_in_sdk_md():
    kinds, actions = _decision_kinds_and_actions()
    assert {"neutral_place", "headquarters", "rescue", "defend"} <= kinds
    text = SDK_MD.read_text()
    missing = sorted(k for k in kinds if f"| `{k}` |" not in text)
    missing += sorted(a for a in actions if f'"type": "{a}"' not in text)
    assert not missing, f"docs/sdk.md does not document: {missing}"


@pytest.mark.parametrize("path", _doc_files(), ids=lambda p: p.name)
def test_python_code_blocks_compile(path: Path):
    for i, block in enumerate(_python_blocks(path)):
        compile(block, f"{path.name} block {i}", "exec")


def _doc_bots() -> list[tuple[str, str]]:
    """(where, code) of every whole bot in the README and docs/sdk.md: a block that
    ends by calling main() when run as a file (tests/test_doc_commands.py plays them as
    files), whose methods are more than a skeleton's `...`."""
    return [
        (f"{path.name}:{i}", block)
        for path in (README, SDK_MD)
        for i, block in enumerate(_python_blocks(path))
        if MAIN.search(block) and "): ...\n" not in block
    ]


def test_the_readme_has_a_short_risk_bot_and_a_short_stratego_bot():
    readme = [code for where, code in _doc_bots() if where.startswith("README")]
    games = {game for code in readme for game in re.findall(r"def decide_(\w+)", code)}
    assert games == {"risk", "stratego"}
    assert all(len(code.splitlines()) <= 30 for code in readme)


@pytest.mark.parametrize("where,code", _doc_bots(), ids=[w for w, _ in _doc_bots()])
def test_the_bots_of_the_docs_play_a_whole_game_in_process(where: str, code: str):
    """Each plays a whole game against a house bot, with the SDK's own Bot class, its
    observations and decisions as in process (imported, its main() not run)."""
    namespace: dict[str, Any] = {"__name__": "doc_bot"}
    exec(compile(code, where, "exec"), namespace)
    bots = [
        v for v in namespace.values() if isinstance(v, type) and issubclass(v, Bot) and v is not Bot
    ]
    assert len(bots) == 1, f"{where}: expected one Bot subclass"
    (game,) = re.findall(r"def decide_(\w+)", code)
    registry = load_registry()
    opponents = ["random", "random"] if game == "risk" else ["random"]
    names = ["doc", *opponents]
    players = [
        bots[0](MatchContext("m", game, 0, names)),
        *(registry.bot(game, n).factory(s + 1, s + 1) for s, n in enumerate(opponents)),
    ]
    options = {"turn-limit": "60"} if game == "risk" else {}
    random.seed(5)  # the docs' bots draw from the module's generator
    rec = play_match(registry.game(game), players, 5, options, names=names)
    assert rec.result is not None
    played = {action["type"] for seat, action, _ in rec.steps if seat == 0}
    assert played >= ({"reinforce", "attack", "move_in"} if game == "risk" else {"setup", "move"})


def test_no_doc_refers_to_files_outside_the_repository():
    found = [
        f"{path.relative_to(ROOT)}: {needle}"
        for path in _doc_files()
        for needle in OUTSIDE
        if needle in path.read_text()
    ]
    assert not found, f"docs point outside the repository: {found}"


def test_every_relative_link_resolves_inside_the_repository():
    broken = []
    for path in _doc_files():
        for target in LINK.findall(path.read_text()):
            if re.match(r"[a-z]+:", target) or target.startswith("#"):
                continue  # a URL or an anchor of the same page
            resolved = (path.parent / target.split("#")[0]).resolve()
            if not resolved.is_relative_to(ROOT) or not resolved.exists():
                broken.append(f"{path.relative_to(ROOT)}: {target}")
    assert not broken, f"links that leave the repository or point at nothing: {broken}"


def test_the_readme_lists_every_doc():
    listed = {(ROOT / target).resolve() for target in LINK.findall(README.read_text())}
    missing = [
        str(p.relative_to(ROOT)) for p in sorted((ROOT / "docs").rglob("*.md")) if p not in listed
    ]
    assert not missing, f"README.md does not list: {missing}"


class _Watching:
    """A house bot whose observations' fields are noted."""

    def __init__(self, inner: Any, fields: set[str]) -> None:
        self.inner, self.fields = inner, fields

    def decide(self, observation: Any, decision: Any) -> Any:
        self.fields.update(observation)
        return self.inner.decide(observation, decision)


@functools.cache
def _played() -> tuple[frozenset[str], dict[str, frozenset[str]]]:
    """The event types, and each game's observation fields, of short games of every game
    and variant, house bots playing."""
    registry = load_registry()
    games = [
        ("risk", [], 3, {"defender-dice": "choose", "dice": "faces"}),
        *(
            (g, [v], 2 if g == "stratego" or n == "neutral" else 4, {})
            for (g, n), v in registry.variants.items()
        ),
        ("stratego", [], 2, {"rescue": "on"}),
    ]
    events: set[str] = set()
    fields: dict[str, set[str]] = {"risk": set(), "stratego": set()}
    for game, variants, seats, options in games:
        bot = "aggressive" if game == "risk" else "random"
        if game == "risk":
            options = {"turn-limit": "30", **options}
        players = [
            _Watching(registry.bot(game, bot).factory(s, s), fields[game]) for s in range(seats)
        ]
        rec = play_match(registry.game(game), players, 3, options, variants)
        played = rec.initial_events + [e for _, _, step in rec.steps for e in step]
        events |= {event["e"] for event in played}
    return frozenset(events), {game: frozenset(names) for game, names in fields.items()}


def test_every_observation_field_is_in_sdk_md():
    text = SDK_MD.read_text()
    _, fields = _played()
    every = fields["risk"] | fields["stratego"]
    assert {"mission", "headquarters", "move_in", "attack", "board"} <= every
    missing = sorted(f for f in every if f"`{f}`" not in text)
    assert not missing, f"docs/sdk.md does not describe the observation fields {missing}"


def test_every_event_type_played_is_in_replay_format_md():
    text = (ROOT / "docs" / "replay-format.md").read_text()
    seen, _ = _played()
    assert {"battle", "strike", "headquarters", "neutral_place", "missions_dealt"} <= seen
    missing = sorted(e for e in seen if f"| `{e}` |" not in text)
    assert not missing, f"docs/replay-format.md does not document the events {missing}"


def test_the_docs_describe_what_exists_not_the_work_on_it():
    history = re.compile(r"next issue|issue \d|the issue|session \d|#\d+", re.IGNORECASE)
    found = [
        f"{path.relative_to(ROOT)}: {match.group()}"
        for path in _doc_files()
        for match in history.finditer(path.read_text())
    ]
    assert not found, f"docs that speak of issues or work sessions: {found}"
