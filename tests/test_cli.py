"""The arena command line: summaries, odds, listings and clear errors."""

from __future__ import annotations

import json
import re

import pytest

from arena.cli import main
from arena.engine import replay


def test_play_prints_seats_turns_eliminations_and_ranking(capsys):
    assert (
        main(
            [
                "play",
                "risk",
                "--players",
                "aggressive,blitz,defensive,random",
                "--seed",
                "3",
                "--option",
                "cards=none",
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "risk: 4 players, seed 3" in out
    assert "options: cards=none" in out
    assert "seats (turn order): 0:aggressive, 1:blitz, 2:defensive, 3:random" in out
    assert "turns: " in out
    assert "eliminations, in order:" in out
    assert out.count(" eliminated by ") in (2, 3)
    assert "ranking: 1. " in out


def test_play_writes_a_replay_that_names_the_bots(tmp_path, capsys):
    path = tmp_path / "g.json"
    assert (
        main(
            ["play", "risk", "--players", "blitz,blitz,blitz", "--seed", "1", "--replay", str(path)]
        )
        == 0
    )
    data = json.loads(path.read_text())
    assert data["players"] == ["blitz", "blitz", "blitz"]
    assert data["seed"] == 1
    assert f"replay: {path}" in capsys.readouterr().out


def test_a_stratego_summary_counts_attacks_apart_from_strikes(tmp_path, capsys):
    """A Stratego "strike" event is an attack; the word strike in the summary means an
    illegal move only (the seats' conduct), never both three lines apart."""
    path = tmp_path / "g.json"
    args = ["play", "stratego", "--players", "heuristic,random", "--seed", "3"]
    assert main([*args, "--replay", str(path)]) == 0
    out = capsys.readouterr().out
    attacks = sum(event["e"] == "strike" for event in replay.load(path).events)
    assert attacks > 0
    assert re.search(rf"^moves: \d+ \({attacks} attacks\), decisions: \d+$", out, re.M), out
    assert [line for line in out.splitlines() if "strike" in line] == [
        "strikes (illegal moves), timeouts and forfeits:",
        "  seat 0 heuristic: 0 strikes, 0 timeouts, no forfeit",
        "  seat 1 random: 0 strikes, 0 timeouts, no forfeit",
    ]


def test_the_same_seed_plays_the_same_game(capsys):
    args = ["play", "risk", "--players", "random,aggressive,defensive", "--seed", "11"]
    main(args)
    first = capsys.readouterr().out
    main(args)
    assert capsys.readouterr().out == first


def test_without_a_seed_play_draws_a_secret_one_and_prints_it(capsys):
    args = ["play", "stratego", "--players", "heuristic,random", "--option", "turn-limit=40"]
    outs = []
    for _ in range(3):
        assert main(args) == 0
        outs.append(capsys.readouterr().out)
    seeds = [int(re.search(r"stratego: 2 players, seed (\d+)\n", out).group(1)) for out in outs]
    assert len(set(seeds)) == 3 and all(seed >= 2**32 for seed in seeds), seeds
    assert main([*args, "--seed", str(seeds[0])]) == 0  # the printed seed: the same game
    assert capsys.readouterr().out == outs[0]


def test_a_seed_that_no_store_holds_is_refused(capsys):
    for seed in ("x", str(2**63)):
        with pytest.raises(SystemExit) as exit:
            main(["play", "risk", "--players", "random,random,random", "--seed", seed])
        assert exit.value.code == 2
        assert (
            f"seed must be an integer from {-(2**63)} to {2**63 - 1}, got '{seed}'"
            in capsys.readouterr().err
        )


def test_odds_prints_the_battle_probability_and_the_one_roll_table(capsys):
    assert main(["odds", "3", "2"]) == 0
    out = capsys.readouterr().out
    assert "P(capture) = 0.6560" in out
    assert "3v2: defender loses 2 2890/7776" in out


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["play", "risk", "--players", "random,random"],
            "Risk takes 3 to 6 players, not 2 (2 players play with --variant neutral)",
        ),
        (["play", "risk", "--players", ",".join(["random"] * 7)], "not 7"),
        (["play", "risk", "--players", "random,random,nobody"], "unknown bot 'nobody'"),
        (["play", "chess", "--players", "a,b"], "unknown game 'chess'"),
        (
            ["play", "risk", "--players", "random,random,random", "--option", "cards=gold"],
            "option cards='gold': expected one of progressive, fixed, none",
        ),
        (
            ["play", "risk", "--players", "random,random,random", "--option", "colour=red"],
            "unknown option(s) for risk: colour",
        ),
        (
            ["play", "risk", "--players", "random,random,random", "--option", "turn-limit"],
            "option turn-limit needs a value",
        ),
        (
            ["play", "risk", "--players", "random,random,random", "--option", "turn-limit=-1"],
            "turn-limit='-1'",
        ),
        (
            ["play", "risk", "--players", "random,random,random", "--option", "map=nowhere"],
            "unknown map 'nowhere'",
        ),
        (["odds", "3", "0"], "defenders >= 1"),
        (
            [
                *("tournament", "create", "--game", "risk", "--bots", "random", "--every", "1h"),
                *("--seed", "3", "--db", "sqlite://"),
            ],
            "--seed 3 with --every: every run draws its own secret seed",
        ),
        (["replay", "verify", "/nonexistent/replay.json"], "/nonexistent/replay.json: no such"),
    ],
)
def test_bad_input_gets_a_clear_error(args, message, capsys):
    assert main(args) == 2
    assert message in capsys.readouterr().err


def test_a_file_that_is_not_a_replay_is_refused(tmp_path, capsys):
    path = tmp_path / "x.json"
    path.write_text('{"format": "something-else"}')
    assert main(["replay", "verify", str(path)]) == 2
    assert "not an arena replay" in capsys.readouterr().err
    path.write_text("{not json")
    assert main(["replay", "verify", str(path)]) == 2
    assert "not valid JSON" in capsys.readouterr().err


def test_variants_lists_the_game_its_options_and_bots(capsys):
    assert main(["variants"]) == 0
    out = capsys.readouterr().out
    assert "risk: " in out
    assert "--option cards=progressive|fixed|none (default progressive)" in out
    assert "bots: aggressive, blitz, defensive, random, search" in out


@pytest.mark.parametrize(
    ("game", "players", "flag", "stored"),
    [
        ("stratego", "random,random", "rescue", {"rescue": "on"}),
        ("risk", "random,random,random", "fixed-cards", {"cards": "fixed"}),
    ],
)
def test_a_bare_flag_is_stored_as_what_it_means(tmp_path, capsys, game, players, flag, stored):
    """`--option rescue` is `rescue=on` in the replay, an alias its option and value:
    never a null, which a reader of the replay would have to guess at."""
    path = tmp_path / "game.json"
    args = ["play", game, "--players", players, "--option", flag, "--replay", str(path)]
    assert main([*args, "--seed", "3", "--option", "turn-limit=5"]) == 0
    options = json.loads(path.read_text())["options"]
    assert options.items() >= stored.items() and None not in options.values()
    assert main(["replay", "verify", str(path)]) == 0


def test_a_tournament_takes_an_option_alias(tmp_path, capsys):
    db = f"sqlite:///{tmp_path / 'arena.db'}"
    run = ["tournament", "run", "--game", "risk", "--bots", "random,aggressive,defensive"]
    run += ["--seats", "3", "--games-per-pairing", "1", "--workers", "0", "--db", db]
    assert main([*run, "--option", "fixed-cards", "--option", "turn-limit=5"]) == 0
    from arena.store import Store

    store = Store(db)
    try:
        (tournament,) = store.tournaments()
        assert tournament.options["cards"] == "fixed"
    finally:
        store.close()


def test_the_demo_s_last_hint_names_the_arena_command_this_shell_can_run(tmp_path, monkeypatch):
    from arena.demo import arena_command

    script = tmp_path / ".venv" / "bin" / "arena"
    script.parent.mkdir(parents=True)
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    # `make run` runs .venv/bin/arena, and no virtual environment is active
    monkeypatch.setattr("sys.argv", [".venv/bin/arena", "demo"])
    assert arena_command() == ".venv/bin/arena"
    # run by its whole path from elsewhere: that path
    monkeypatch.chdir("/")
    monkeypatch.setattr("sys.argv", [str(script), "demo"])
    assert arena_command() == str(script)
    # with the environment active, `arena` is this command
    monkeypatch.setenv("PATH", f"{script.parent}:/usr/bin:/bin")
    assert arena_command() == "arena"
    # python -m arena.cli: the installed name
    monkeypatch.setattr("sys.argv", ["/x/arena/cli/__main__.py", "demo"])
    assert arena_command() == "arena"
