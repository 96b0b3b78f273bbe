"""``--json`` on the reading commands (the same facts as their text, as one JSON document),
``arena --version``, every option's help, and compare's finite Elo bounds."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import re
import subprocess
import sys
import uuid
from importlib.metadata import version
from pathlib import Path

import pytest

from arena.cli import build_parser, main
from arena.cli.leaderboard import ELO_SHOWN
from arena.store import Outcome, Store

RUN = ["tournament", "run", "--game", "risk", "--bots", "aggressive,defensive,random"]
RUN += ["--seats", "3", "--games-per-pairing", "2", "--option", "turn-limit=20"]
RUN += ["--seed", "7", "--workers", "0", "--quiet"]


def _run(args: list[str]) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(args)
    assert code == 0, out.getvalue()
    return out.getvalue()


def _json(args: list[str]) -> object:
    """The command's stdout with --json, which must be exactly one JSON document."""
    return json.loads(_run([*args, "--json"]))


def _beat(store: Store, winner: str, loser: str, times: int) -> None:
    """``times`` finished Stratego matches that house:winner won against house:loser."""
    a, b = store.house_bot(winner), store.house_bot(loser)
    for _ in range(times):
        match_id = "won-" + uuid.uuid4().hex[:8]
        store.start_match(match_id, "stratego", [a.label, b.label], bot_ids=[a.id, b.id], seed=1)
        store.record_result(Outcome(match_id, "finished", reason="flag", places=(1, 2)))


@pytest.fixture(scope="module")
def filled(tmp_path_factory) -> tuple[str, str]:
    """A store with one finished Risk tournament and 3 Stratego wins of heuristic over
    random: (the --db value, the tournament id)."""
    db = str(tmp_path_factory.mktemp("json") / "arena.db")
    out = _run([*RUN, "--db", db])
    tournament_id = re.search(r"^tournament (\w+): risk round-robin", out, re.M).group(1)
    store = Store(db)
    try:
        _beat(store, "heuristic", "random", 3)
    finally:
        store.close()
    return db, tournament_id


def _text_rows(text: str) -> dict[str, list[str]]:
    """A rendered leaderboard's rows by label: rank, games, W, D, L, score, Elo, interval."""
    found = re.finditer(r"^\s*(\d+)\s+(\S+@\d+)\s+(.*)$", text, re.M)
    return {m.group(2): [m.group(1), *m.group(3).split()[:7]] for m in found}


def test_leaderboard_json_has_the_text_boards_and_numbers(filled):
    db, _ = filled
    text = _run(["leaderboard", "--db", db])
    boards = _json(["leaderboard", "--db", db])["boards"]
    assert [b["title"] for b in boards] == ["risk (classic)", "stratego (classic)"]
    for board, chunk in zip(boards, text.split("\n\n"), strict=True):
        assert chunk.startswith(board["title"] + "\n")
        shown = _text_rows(chunk)
        assert [r["label"] for r in board["rows"]] == list(shown)
        for r in board["rows"]:
            rank, games, w, d, losses, score, elo, interval = shown[r["label"]]
            assert [r["rank"], r["games"], r["wins"], r["draws"], r["losses"]] == [
                int(n) for n in (rank, games, w, d, losses)
            ]
            assert f"{r['score']:.3f}" == score and f"{r['elo']:.0f}" == elo
            assert f"{r['elo_low']:.0f}..{r['elo_high']:.0f}" == interval
    one = _json(["leaderboard", "--game", "stratego", "--db", db])["boards"]
    assert one == boards[1:]
    assert _json(["leaderboard", "--game", "risk", "--variant", "neutral", "--db", db]) == {
        "boards": []
    }


def test_leaderboard_json_is_the_web_apis(filled):
    from arena.web import data

    db, _ = filled
    store = Store(db)
    try:
        assert _json(["leaderboard", "--db", db])["boards"] == json.loads(
            json.dumps(data.boards(store))
        )
    finally:
        store.close()


def test_compare_json_has_the_text_facts(filled):
    db, _ = filled
    args = ["compare", "aggressive", "house:random", "--game", "risk", "--db", db]
    text = _run(args)
    got = _json(args)
    found = re.search(
        r"(\d+) matches together; \S+ placed ahead (\d+), level (\d+), behind (\d+)", text
    )
    assert [got["matches"], got["wins"], got["draws"], got["losses"]] == [
        int(n) for n in found.groups()
    ]
    assert got["matches"] == 2  # the one group of three, twice
    assert (got["a"], got["b"], got["game"], got["variants"]) == (
        "house:aggressive@1",
        "house:random@1",
        "risk",
        "",
    )
    low, high = f"{got['elo_low']:+.0f}", f"{got['elo_high']:+.0f}"
    assert f"Elo difference: {got['elo']:+.0f} (95% interval {low} .. {high})" in text
    assert f"likelihood of superiority: {got['los']:.1%}" in text
    s = got["sprt"]
    assert f"SPRT elo0={s['elo0']:g} elo1={s['elo1']:g}: LLR {s['llr']:+.2f}" in text
    assert s["verdict"] in text


def test_a_perfect_score_shows_finite_bounds(filled):
    """Three wins in three: the estimate and the upper bound are infinite; the text says
    "> +1000" and the JSON null (JSON has no infinity), the lower bound is a number."""
    db, _ = filled
    args = ["compare", "heuristic", "random", "--game", "stratego", "--db", db]
    text = _run(args)
    assert "inf" not in text
    got = _json(args)
    assert (got["wins"], got["draws"], got["losses"]) == (3, 0, 0)
    assert got["elo"] is None and got["elo_high"] is None
    assert -ELO_SHOWN < got["elo_low"] < ELO_SHOWN  # few games: a wide interval
    line = f"Elo difference: > +{ELO_SHOWN} (95% interval {got['elo_low']:+.0f} .. > +{ELO_SHOWN})"
    assert line in text
    reverse = _run(["compare", "random", "heuristic", "--game", "stratego", "--db", db])
    assert f"< -{ELO_SHOWN} (95% interval < -{ELO_SHOWN} .. " in reverse


def test_tournament_show_json_has_the_text_facts(filled):
    db, tournament_id = filled
    text = _run(["tournament", "show", tournament_id[:6], "--matches", "--db", db])
    got = _json(["tournament", "show", tournament_id[:6], "--db", db])
    assert text.startswith(f"tournament {got['tournament_id']}: {got['name']}\n")
    assert got["tournament_id"] == tournament_id and got["options"] == {"turn-limit": "20"}
    assert f"round-robin, 3 seats, 2 games per pairing, seed {got['seed']}" in text
    assert got["seed"] == "7" and got["status"] == "finished"
    assert got["progress"] == {"finished": 2} and "matches: 2 finished (of 2)" in text
    assert "  bots: " + ", ".join(e["label"] for e in got["entries"]) in text
    listed = re.findall(rf"^  ({tournament_id}-\S+)  finished ", text, re.M)
    assert sorted(m["match_id"] for m in got["match_list"]) == sorted(listed)
    standings = text.split("standings in this tournament:")[1]
    assert [r["label"] for r in got["standings"]["rows"]] == list(_text_rows(standings))


def test_tournament_list_and_bots_list_json_have_the_text_facts(filled):
    db, tournament_id = filled
    [line] = _run(["tournament", "list", "--db", db]).splitlines()
    got = _json(["tournament", "list", "--db", db])
    assert got["recurring"] == []
    [t] = got["tournaments"]
    assert t["tournament_id"] == tournament_id
    assert line.startswith(f"{t['tournament_id']}  {t['status']} ")
    assert line.endswith(f"{t['name']}  ({t['finished_matches']}/{t['matches']} matches)")
    lines = _run(["bots", "list", "--db", db]).splitlines()
    bots = _json(["bots", "list", "--db", db])["bots"]
    assert [line.split() for line in lines] == [
        [b["label"], b["kind"], *b["created"][:16].split("T"), b["bot_id"]] for b in bots
    ]
    assert {b["label"] for b in bots} >= {"house:heuristic@1", "house:random@1"}
    assert not any(b["revoked"] for b in bots)


def test_json_of_an_empty_store(tmp_path):
    db = str(tmp_path / "empty.db")
    Store(db).close()
    assert _json(["leaderboard", "--db", db]) == {"boards": []}
    assert _json(["bots", "list", "--db", db]) == {"bots": []}
    assert _json(["tournament", "list", "--db", db]) == {"recurring": [], "tournaments": []}
    got = _json(["compare", "random", "heuristic", "--game", "stratego", "--db", db])
    assert got["matches"] == 0 and got["elo"] is None and got["sprt"] is None


def test_version_is_the_installed_packages():
    arena = Path(sys.executable).with_name("arena")  # the console script pip installed
    done = subprocess.run([arena, "--version"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"arena {version('arena')}\n"


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ("arena",)):
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, (*path, name))


def test_every_option_of_every_command_has_help():
    """So that none is added without it: `--help` is where a user reads what it does."""
    lacking = [
        f"{' '.join(path)} {action.option_strings[-1]}"
        for path, parser in _commands(build_parser())
        for action in parser._actions
        if action.option_strings and not (action.help or "").strip()
    ]
    assert lacking == []
    assert len(list(_commands(build_parser()))) > 20  # the walk reaches the subcommands


def test_help_shows_the_defaults(capsys):
    with pytest.raises(SystemExit):
        main(["referee", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "port to listen on (default: 50051)" in out
    assert "(default: None)" not in out and "(default: False)" not in out


def test_no_switch_s_help_shows_a_true_or_false_default():
    """A switch's help says what it turns on or off: "(default: True)" after `--no-x`
    would read as if it were on."""
    shown = [
        f"{' '.join(path)} {action.option_strings[-1]}"
        for path, parser in _commands(build_parser())
        for action in parser._actions
        if action.nargs == 0
        and action.option_strings
        and "(default: " in parser.formatter_class("x")._get_help_string(action)
    ]
    assert shown == []
