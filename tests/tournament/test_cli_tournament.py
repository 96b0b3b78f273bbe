"""The tournament commands: run, resume, show and list; leaderboard, compare, bots list."""

from __future__ import annotations

import contextlib
import io
import re
import subprocess
import sys

import pytest

from arena.cli import main
from arena.store import Store
from arena.tournament import executor as executor_module
from arena.tournament.executor import LocalExecutor, play_local

RISK_RUN = [
    "tournament",
    "run",
    "--game",
    "risk",
    "--bots",
    "aggressive, blitz,defensive,random",
    "--seats",
    "3",
    "--games-per-pairing",
    "3",
    "--option",
    "turn-limit=30",
    "--seed",
    "4",
    "--quiet",
]
LABELS = ["house:aggressive@1", "house:blitz@1", "house:defensive@1", "house:random@1"]


def _board_lines(out: str) -> dict[str, str]:
    """The leaderboard lines of ``out``, by bot label."""
    return {m.group(1): m.group(0) for m in re.finditer(r"^\s*\d+\s+(\S+@\d+)\s.*$", out, re.M)}


@pytest.fixture(scope="module")
def played(tmp_path_factory) -> tuple[str, str, str]:
    """A database with one finished Risk tournament, played by one worker process:
    (the --db value, the tournament id, what `tournament run` printed)."""
    db = str(tmp_path_factory.mktemp("cli") / "arena.db")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*RISK_RUN, "--workers", "1", "--db", db])
    assert code == 0, out.getvalue()
    match = re.search(r"^tournament (\w+): risk round-robin, 12 matches$", out.getvalue(), re.M)
    assert match, out.getvalue()
    return db, match.group(1), out.getvalue()


def test_tournament_run_plays_every_match_and_prints_the_leaderboard(played):
    db, tournament_id, out = played
    assert f"tournament {tournament_id}: finished, 12/12 matches finished (12 in this run)" in out
    assert f"tournament {tournament_id}: risk (classic)" in out
    assert "resume with" not in out
    lines = _board_lines(out)
    assert sorted(lines) == LABELS
    for line in lines.values():
        assert re.search(r"\s9\s", line)  # 3 groups of 3 games for every bot
        assert re.search(r"\d+\.\.\d+", line)  # its interval
    store = Store(db)
    assert store.progress(tournament_id) == {"finished": 12}
    store.close()


def test_tournament_show_by_id_or_unique_prefix(played, capsys):
    db, tournament_id, _ = played
    for ref in (tournament_id, tournament_id[:5]):
        assert main(["tournament", "show", ref, "--matches", "--db", db]) == 0
        out = capsys.readouterr().out
        assert out.startswith(f"tournament {tournament_id}: risk round-robin\n")
        assert "  game: risk (classic)" in out
        assert "  options: turn-limit=30" in out
        assert "round-robin, 3 seats, 3 games per pairing, seed 4" in out
        assert "status: finished; matches: 12 finished (of 12)" in out
        assert "  bots: " + ", ".join(LABELS) in out
        assert len(re.findall(rf"^  {tournament_id}-\S+  finished ", out, re.M)) == 12
        assert sorted(_board_lines(out.split("standings in this tournament:")[1])) == LABELS


def test_tournament_show_refuses_an_unknown_or_too_short_id(played, capsys):
    db, tournament_id, _ = played
    for ref in ("ffffffff", tournament_id[:3]):
        assert main(["tournament", "show", ref, "--db", db]) == 2
        assert f"arena: error: no tournament {ref!r} in {db}" in capsys.readouterr().err


def test_tournament_list_shows_status_and_progress(played, capsys):
    db, tournament_id, _ = played
    assert main(["tournament", "list", "--db", db]) == 0
    [line] = capsys.readouterr().out.splitlines()
    assert line.startswith(f"{tournament_id}  finished ")
    assert line.endswith("risk round-robin  (12/12 matches)")


def test_leaderboard_of_a_game_and_of_every_game(played, capsys):
    db, _, _ = played
    assert main(["leaderboard", "--game", "risk", "--db", db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("risk (classic)\n")
    assert sorted(_board_lines(out)) == LABELS
    assert main(["leaderboard", "--db", db]) == 0
    assert capsys.readouterr().out == out
    assert main(["leaderboard", "--game", "stratego", "--db", db]) == 0
    assert capsys.readouterr().out == "stratego (classic)\n  (no finished matches yet)\n"
    assert main(["leaderboard", "--game", "risk", "--variant", "neutral", "--db", db]) == 0
    assert "(no finished matches yet)" in capsys.readouterr().out


def test_compare_two_bots_that_met(played, capsys):
    db, _, _ = played
    assert main(["compare", "aggressive", "house:random", "--game", "risk", "--db", db]) == 0
    out = capsys.readouterr().out
    assert out.startswith("house:aggressive@1 against house:random@1 in risk (classic):\n")
    # they share 2 of the 4 groups of 3 bots, 3 games each
    found = re.search(r"6 matches together; \S+ placed ahead (\d+), level (\d+), behind (\d+)", out)
    assert found, out
    assert sum(int(n) for n in found.groups()) == 6
    assert "Elo difference: " in out and "likelihood of superiority: " in out
    assert "SPRT elo0=0 elo1=10: LLR " in out


def test_compare_refuses_an_unknown_bot(played, capsys):
    db, _, _ = played
    assert main(["compare", "aggressive", "nemo", "--game", "risk", "--db", db]) == 2
    assert "no registered bot and no risk house bot named 'nemo'" in capsys.readouterr().err


def test_bots_list_shows_every_version(played, capsys):
    db, _, _ = played
    assert main(["bots", "list", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert [line.split()[:2] for line in lines] == [[label, "house"] for label in LABELS]


def test_resuming_a_finished_tournament_plays_nothing(played, capsys, monkeypatch):
    db, tournament_id, _ = played
    monkeypatch.setattr(
        LocalExecutor, "_submit", lambda self, job: pytest.fail(f"played {job.match_id}")
    )
    store = Store(db)
    before = {m.id: m.finished for m in store.tournament_matches(tournament_id)}
    assert main(["tournament", "resume", tournament_id, "--quiet", "--db", db]) == 0
    out = capsys.readouterr().out
    assert f"tournament {tournament_id}: resuming, 0 matches to play" in out
    assert "12/12 matches finished (0 in this run)" in out
    assert {m.id: m.finished for m in store.tournament_matches(tournament_id)} == before
    store.close()


def test_an_interrupted_run_is_resumed_from_the_command_line(tmp_path, capsys, monkeypatch):
    db = str(tmp_path / "arena.db")

    def play_two_then_interrupt(self, jobs, on_outcome, stop=None, on_start=None):
        for job in list(jobs)[:2]:
            on_outcome(job, play_local(job))
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(LocalExecutor, "run", play_two_then_interrupt)
        assert main([*RISK_RUN, "--workers", "0", "--db", db]) == 130
    captured = capsys.readouterr()
    tournament_id = re.search(r"^tournament (\w+):", captured.out, re.M).group(1)
    # the store is not the default one: the line names it
    resume = f"arena tournament resume {tournament_id} --db {db}"
    assert f"stopped: resume with `{resume}`" in captured.err

    played_ids = []
    monkeypatch.setattr(
        executor_module,
        "play_local",
        lambda job: played_ids.append(job.match_id) or play_local(job),
    )
    assert (
        main(["tournament", "resume", tournament_id, "--workers", "0", "--quiet", "--db", db]) == 0
    )
    out = capsys.readouterr().out
    assert f"tournament {tournament_id}: resuming, 10 matches to play" in out
    assert "12/12 matches finished (10 in this run)" in out
    assert len(set(played_ids)) == len(played_ids) == 10
    assert sorted(_board_lines(out)) == LABELS


def test_a_variant_tournament_shows_its_standings(database_url, capsys):
    args = ["--bots", "heuristic,random", "--games-per-pairing", "2", "--db", database_url]
    run = ["tournament", "run", "--game", "stratego", "--variant", "barrage", "--workers", "0"]
    assert main([*run, "--quiet", *args]) == 0
    out = capsys.readouterr().out
    tournament_id = re.search(r"^tournament (\w+):", out, re.M).group(1)
    assert f"tournament {tournament_id}: stratego (barrage)" in out
    assert sorted(_board_lines(out)) == ["house:heuristic@1", "house:random@1"]
    assert main(["tournament", "show", tournament_id, "--db", database_url]) == 0
    out = capsys.readouterr().out
    assert "  game: stratego (barrage)" in out
    standings = out.split("standings in this tournament:")[1]
    assert sorted(_board_lines(standings)) == ["house:heuristic@1", "house:random@1"]
    assert (
        main(["leaderboard", "--game", "stratego", "--variant", "barrage", "--db", database_url])
        == 0
    )
    assert sorted(_board_lines(capsys.readouterr().out)) == ["house:heuristic@1", "house:random@1"]


def test_an_unknown_bot_exits_2_with_a_clear_message_and_writes_no_tournament(tmp_path):
    db = str(tmp_path / "arena.db")
    command = [sys.executable, "-m", "arena.cli", "tournament", "run", "--quiet", "--db", db]
    extra = ["--game", "risk", "--bots", "random,blitz,nobody", "--seats", "3"]
    proc = subprocess.run([*command, *extra], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == (
        "arena: error: no registered bot and no risk house bot named 'nobody' (house bots of "
        "risk: aggressive, blitz, defensive, random, search; registered: `arena bots list`)\n"
    )
    assert proc.stdout == ""
    store = Store(db)
    assert store.tournaments() == []
    store.close()


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--game", "risk", "--bots", "random,blitz", "--seats", "2"], "not 2"),
        (
            ["--game", "risk", "--bots", "random,blitz,house:blitz", "--seats", "3"],
            "is in the tournament twice",
        ),
        (
            ["--game", "stratego", "--bots", "heuristic,blitz"],
            "no stratego house bot named 'blitz'",
        ),
        (["--bots", "random,blitz"], "--game and --bots are needed"),
    ],
)
def test_bad_tournaments_exit_2_and_write_nothing(tmp_path, capsys, extra, message):
    db = str(tmp_path / "arena.db")
    assert main(["tournament", "run", "--quiet", "--db", db, *extra]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("arena: error: ")
    assert message in captured.err
    assert captured.out == ""
    store = Store(db)
    assert store.tournaments() == []
    store.close()


def test_an_empty_database_says_so(tmp_path, capsys):
    db = str(tmp_path / "empty.db")
    Store(db).close()  # a missing one is refused instead (tests/test_cli_errors.py)
    assert main(["tournament", "list", "--db", db]) == 0
    assert capsys.readouterr().out == "no tournaments yet\n"
    assert main(["leaderboard", "--db", db]) == 0
    assert capsys.readouterr().out == f"no finished matches in {db} yet\n"
    assert main(["bots", "list", "--db", db]) == 0
    assert capsys.readouterr().out.startswith(f"no bots in {db} yet")
    assert main(["compare", "random", "heuristic", "--game", "stratego", "--db", db]) == 0
    assert "they have not met in a finished match yet" in capsys.readouterr().out


def test_bots_list_marks_revoked_versions(tmp_path, capsys):
    db = str(tmp_path / "arena.db")
    store = Store(db)
    old, _ = store.register_bot("alice")
    new, _ = store.register_bot("alice")
    store.revoke_bot(old.id)
    store.close()
    assert main(["bots", "list", "--db", db]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("alice@1") and lines[0].endswith(f"{old.id} (revoked)")
    assert lines[1].startswith("alice@2") and lines[1].endswith(new.id)
    assert lines[1].split()[1] == "remote"


def test_tournament_show_lists_running_matches_with_age_worker_referee_and_lease(
    database_url, capsys
):
    from arena.tournament.runner import TournamentSpec, create_tournament

    store = Store(database_url)
    try:
        bots = ["random", "blitz", "aggressive"]
        spec = TournamentSpec(game="risk", bots=bots, seats=3, games_per_pairing=2)
        tournament = create_tournament(store, spec)
        live, stalled = (m.id for m in store.tournament_matches(tournament.id)[:2])
        store.set_tournament_status(tournament.id, "running")
        store.claim_match(live, "w1@box pid 7", 60, "127.0.0.1:50051")
        store.claim_match(stalled, "w2@box pid 9", -90)  # its worker stopped renewing
    finally:
        store.close()
    assert main(["tournament", "show", tournament.id, "--db", database_url]) == 0
    out = capsys.readouterr().out
    lines = {line.split()[0]: line for line in out.split("running now:\n")[1].splitlines()[:2]}
    left = re.fullmatch(
        rf"    {live}  for \d+ s \(attempt 1\)  worker w1@box pid 7  "
        r"referee 127\.0\.0\.1:50051  lease (\d+) s left",
        lines[live],
    )
    assert left, lines[live]
    lapsed = re.fullmatch(
        rf"    {stalled}  for \d+ s \(attempt 1\)  worker w2@box pid 9  "
        r"referee in-process  lease lapsed (\d+) s ago",
        lines[stalled],
    )
    assert lapsed, lines[stalled]
    # the seconds since the claims: a few on a busy machine (91 s was seen under load)
    assert 55 <= int(left[1]) <= 60 and 89 <= int(lapsed[1]) <= 95, (left[1], lapsed[1])


def test_tournament_stop_stops_a_running_tournament_and_names_an_unknown_one(
    database_url, capsys, monkeypatch
):
    from arena.tournament.runner import TournamentSpec, create_tournament

    monkeypatch.delenv("ARENA_BROKER_URL", raising=False)
    store = Store(database_url)
    try:
        spec = TournamentSpec(game="risk", bots=["random", "blitz", "aggressive"], seats=3)
        tournament = create_tournament(store, spec)
        store.set_tournament_status(tournament.id, "running")
        (match,) = store.tournament_matches(tournament.id)
    finally:
        store.close()
    assert main(["tournament", "stop", "ffffffff", "--db", database_url]) == 2
    assert "arena: error: no tournament 'ffffffff'" in capsys.readouterr().err
    assert main(["tournament", "stop", tournament.id, "--db", database_url]) == 0
    out = capsys.readouterr().out
    assert f"tournament {tournament.id}: stopped; 0 matches in play end as they would" in out
    store = Store(database_url)
    try:
        assert store.tournament(tournament.id).status == "stopped"
        assert store.claim_match(match.id, "w1", 60) is None  # no further match starts
    finally:
        store.close()
    assert main(["tournament", "stop", tournament.id, "--db", database_url]) == 0
    assert "stopped, nothing to stop" in capsys.readouterr().out
