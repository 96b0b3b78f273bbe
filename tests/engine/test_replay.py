"""Replays: every finished game verifies, a tampered one fails at the first difference."""

from __future__ import annotations

import copy
import dataclasses
import gzip
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from arena import hookimpl
from arena.cli import main
from arena.engine import replay
from arena.engine.core import EndReason, Result
from arena.engine.match import MatchRecord, play_match
from arena.engine.replay import ReplayMismatch
from arena.games.risk.variants.missions import BY_ID, Missions, completed
from arena.games.stratego.variants.isf import apply_isf
from arena.plugins import load_registry

REGISTRY = load_registry()
GAME = REGISTRY.game("risk")

CONFIGS = [
    (("random", "aggressive", "defensive"), {"setup": "claim"}),
    (
        ("blitz", "random", "aggressive", "defensive"),
        {"setup": "deal", "cards": "none", "dice": "faces"},
    ),
    (
        ("aggressive", "blitz", "defensive", "random", "blitz"),
        {"setup": "claim", "cards": "progressive", "dice": "faces", "turn-limit": "150"},
    ),
    (
        ("defensive", "aggressive", "blitz", "random", "aggressive", "blitz"),
        {"setup": "deal", "cards": "progressive", "dice": "distribution"},
    ),
    (("blitz",) * 6, {"setup": "claim", "cards": "none", "dice": "faces"}),
    (("random",) * 3, {"setup": "deal", "dice": "faces", "turn-limit": "60"}),
    (("defensive",) * 4, {"setup": "claim", "cards": "progressive", "dice": "distribution"}),
]


def play(names: tuple[str, ...], options: dict[str, str], seed: int) -> MatchRecord:
    players = [
        REGISTRY.bot("risk", name).factory(seat, seed * 1000 + seat)
        for seat, name in enumerate(names)
    ]
    return play_match(GAME, players, seed, options, names=list(names))


def reload(rec: MatchRecord) -> MatchRecord:
    """A deep, independent copy of the record, as a replay file would give it back."""
    return replay.from_json(json.loads(replay.dumps(rec)))


def find_event(rec: MatchRecord, kind: str, nth: int = 0) -> tuple[int, int]:
    """(step index, event index) of the ``nth`` event of ``kind`` in the steps."""
    seen = 0
    for i, (_seat, _action, events) in enumerate(rec.steps):
        for j, event in enumerate(events):
            if event["e"] == kind:
                if seen == nth:
                    return i, j
                seen += 1
    raise AssertionError(f"no {kind} event number {nth}")


def find_action(rec: MatchRecord, kind: str, nth: int = 0) -> int:
    hits = [i for i, (_s, action, _e) in enumerate(rec.steps) if action["type"] == kind]
    return hits[nth]


@pytest.fixture(scope="module")
def progressive_game() -> MatchRecord:
    """A finished 6-player deal game with cards: battles, draws, trades, eliminations."""
    rec = play(CONFIGS[3][0], CONFIGS[3][1], seed=3)
    kinds = Counter(e["e"] for e in rec.events)
    assert kinds["draw"] > 5 and kinds["trade"] > 2 and kinds["eliminate"] > 0, kinds
    return rec


@pytest.fixture(scope="module")
def claim_game() -> MatchRecord:
    rec = play(CONFIGS[0][0], CONFIGS[0][1], seed=4)
    assert rec.initial_events == []  # claim setup: all of setup is decisions
    return rec


# --- every finished game verifies ----------------------------------------------------------


@pytest.mark.parametrize("seed", [1, 2])
@pytest.mark.parametrize(("names", "options"), CONFIGS)
def test_every_finished_game_verifies(tmp_path, names, options, seed):
    rec = play(names, options, seed)
    assert rec.result is not None
    for name in ("game.json", "game.json.gz"):
        path = tmp_path / name
        size = replay.save(rec, path)
        assert size == path.stat().st_size
        raw = path.read_bytes()
        assert (raw[:2] == b"\x1f\x8b") == name.endswith(".gz")
        loaded = replay.load(path)
        # as JSON gives it back (a bot's int dict keys come back as strings)
        assert replay.to_json(loaded) == json.loads(replay.dumps(rec))
        assert replay.verify(loaded) == len(rec.steps)
    plain = (tmp_path / "game.json").stat().st_size
    assert (tmp_path / "game.json.gz").stat().st_size < plain
    if options.get("dice") == "faces":
        assert any("faces" in e for e in rec.events if e["e"] == "battle")


# --- tampering -------------------------------------------------------------------------------


def assert_mismatch(rec: MatchRecord, step: int, *fragments: str) -> ReplayMismatch:
    with pytest.raises(ReplayMismatch) as info:
        replay.verify(rec)
    exc = info.value
    assert exc.step == step, f"expected step {step}, got {exc.step}: {exc}"
    for fragment in fragments:
        assert fragment in str(exc), f"{fragment!r} not in {exc}"
    return exc


def test_tampered_battle_rolls_fail_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i, j = find_event(rec, "battle", nth=3)
    event = rec.steps[i][2][j]
    event["rolls"] = "".join(
        {"2": "6", "6": "2", "4": "2", "1": "3", "3": "1"}[c] for c in event["rolls"]
    )
    assert event != progressive_game.steps[i][2][j]
    assert_mismatch(rec, i, f"step {i} ", f"event {j}:", json.dumps(event), "attack")


def test_tampered_draw_fails_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i, j = find_event(rec, "draw", nth=2)
    event = rec.steps[i][2][j]
    event["card"] = (event["card"] + 1) % 44
    assert_mismatch(rec, i, f"step {i} ", f"event {j}:", json.dumps(event), "end_attack")


def test_tampered_reinforcements_total_fails_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i, j = find_event(rec, "reinforcements", nth=4)
    event = rec.steps[i][2][j]
    event["total"] += 1
    assert_mismatch(rec, i, f"step {i} ", f"event {j}:", json.dumps(event))


def test_tampered_initial_event_fails_in_setup(progressive_game):
    rec = reload(progressive_game)
    assert rec.initial_events[0]["e"] == "deal"
    rec.initial_events[1]["t"][0] = rec.initial_events[0]["t"][0]
    exc = assert_mismatch(rec, -1, "setup:", "event 1:", json.dumps(rec.initial_events[1]))
    assert str(exc).startswith("setup:")


def test_a_removed_event_is_reported(progressive_game):
    rec = reload(progressive_game)
    i, j = find_event(rec, "conquer", nth=1)
    del rec.steps[i][2][j]
    assert_mismatch(rec, i, f"step {i} ")


def test_an_action_made_illegal_fails_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i = find_action(rec, "attack", nth=5)
    rec.steps[i][1]["dice"] = 4
    exc = assert_mismatch(rec, i, f"step {i}:", "illegal", "dice")
    assert f"seat {rec.steps[i][0]}" in str(exc)


def test_an_action_by_the_wrong_seat_fails_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i = find_action(rec, "reinforce", nth=2)
    rec.steps[i][0] = (rec.steps[i][0] + 1) % rec.num_players
    assert_mismatch(rec, i, f"step {i}:", "illegal", "not your turn")


def state_before(rec: MatchRecord, step: int) -> Any:
    state = GAME.new_state(rec.num_players, rec.seed, rec.options)
    for seat, action, _events in rec.steps[:step]:
        state.apply(seat, copy.deepcopy(action))
    return state


def test_a_different_legal_action_fails_at_that_step(progressive_game):
    rec = reload(progressive_game)
    i = find_action(rec, "reinforce", nth=3)
    seat, action, _ = rec.steps[i]
    state = state_before(rec, i)
    total = state.decision().options["armies"]
    own = state.decision().options["territories"]
    placed = {str(t): n for t, n in dict(action["armies"]).items()}
    # every army on one territory the recorded action did not load the most
    target = next(t for t in own if placed.get(str(t), 0) != total)
    rec.steps[i][1] = {"type": "reinforce", "armies": {target: total}}
    state.apply(seat, copy.deepcopy(rec.steps[i][1]))  # legal
    assert_mismatch(rec, i, f"step {i} ", "reinforce", json.dumps(rec.steps[i][2][0]))


def test_a_wrong_seed_fails_in_setup_for_a_deal_game(progressive_game):
    rec = reload(progressive_game)
    rec.seed += 1
    exc = assert_mismatch(rec, -1, "setup:", "deal")
    assert str(exc).startswith("setup:")


def test_a_wrong_seed_fails_early_for_a_claim_game(claim_game):
    rec = reload(claim_game)
    rec.seed += 1
    with pytest.raises(ReplayMismatch) as info:
        replay.verify(rec)
    step = info.value.step
    # Claims and placements use no chance: the first roll is the first place to differ.
    first_battle = find_event(rec, "battle")[0]
    fifth_battle = find_event(rec, "battle", nth=4)[0]
    assert first_battle <= step <= fifth_battle, (first_battle, step, fifth_battle)
    assert f"step {step}" in str(info.value)


def test_a_tampered_result_fails_after_the_last_step(claim_game):
    rec = reload(claim_game)
    places = list(rec.result.places)
    places.reverse()
    data = replay.to_json(rec)
    data["result"]["places"] = places
    rec = replay.from_json(data)
    assert_mismatch(rec, len(rec.steps), "result")


def test_a_game_continued_past_its_end_fails(claim_game):
    rec = reload(claim_game)
    rec.steps.append(copy.deepcopy(rec.steps[-1]))
    assert_mismatch(rec, len(rec.steps) - 1, "already over")


# --- through the command line ----------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_cli_replay_verify(tmp_path, capsys, progressive_game, suffix):
    good = tmp_path / f"good{suffix}"
    replay.save(progressive_game, good)
    assert main(["replay", "verify", str(good)]) == 0
    captured = capsys.readouterr()
    assert "OK" in captured.out and f"{len(progressive_game.steps)} decisions" in captured.out
    assert "MISMATCH" not in captured.err

    rec = reload(progressive_game)
    i, j = find_event(rec, "battle", nth=7)
    rec.steps[i][2][j]["def_loss"] += 1
    bad = tmp_path / f"bad{suffix}"
    replay.save(rec, bad)
    assert main(["replay", "verify", str(bad)]) == 1
    captured = capsys.readouterr()
    assert "MISMATCH" in captured.err
    assert f"step {i} " in captured.err
    assert json.dumps(rec.steps[i][2][j]) in captured.err
    assert "OK" not in captured.out


def test_cli_replay_verify_of_a_non_replay_is_an_error(tmp_path, capsys):
    path = tmp_path / "junk.json"
    path.write_text(json.dumps({"format": "something else"}))
    assert main(["replay", "verify", str(path)]) == 2
    assert "not an arena replay" in capsys.readouterr().err


# --- rules versions ---------------------------------------------------------------------------


class MissionsVersion1(Missions):
    """Secret missions as version 1 played them: a mission counted only when completed on
    its holder's own turn (``player``), never through another player's action."""

    @hookimpl
    def risk_check_victory(self, state: Any, player: int) -> Result | None:
        data = state.variant_data.get("missions")
        if data is None or player < 0:
            return None
        mission = BY_ID[data["assigned"][player]]
        if completed(state, player, mission, data["killed_by"]):
            text = f"seat {player} completed the mission: {mission.text}"
            return Result(EndReason.VICTORY, state.places([player]), text)
        return None


MISSIONS = REGISTRY.variant("risk", "missions")
MISSIONS_V1 = dataclasses.replace(MISSIONS, plugin=MissionsVersion1(), rules_version=1)


def play_missions(variant: Any, seed: int = 5125) -> MatchRecord:
    names = ["defensive", "blitz", "aggressive", "random"]
    players = [REGISTRY.bot("risk", n).factory(s, seed * 1000 + s) for s, n in enumerate(names)]
    return play_match(GAME, players, seed, {}, [variant], names=names)


def test_a_replay_records_the_rules_version_of_a_variant_whose_rules_changed(tmp_path):
    assert MISSIONS.rules_version == 2
    assert REGISTRY.variant("risk", "capital").rules_version == 2
    rec = play_missions(MISSIONS)
    path = tmp_path / "missions.json"
    replay.save(rec, path)
    data = json.loads(path.read_text())
    # the game's own rules under its name: Risk's chance changed in version 2
    assert data["rules"] == {"risk": 2, "missions": 2}
    assert replay.load(path).rules == {"risk": 2, "missions": 2}
    assert "rules" in replay.to_json(play(("random",) * 3, {"turn-limit": "5"}, seed=1))
    # rules at version 1 (Stratego's own, no variant) are left out: the format as before
    stratego = REGISTRY.game("stratego")
    players = [REGISTRY.bot("stratego", "random").factory(s, s) for s in (0, 1)]
    plain = play_match(stratego, players, 3, {"turn-limit": "4"})
    assert stratego.rules_version == 1 and "rules" not in replay.to_json(plain)
    # a record made without versions (as a referee makes it) gets this arena's
    bare = MatchRecord(game="risk", num_players=4, seed=1, players=["a"] * 4, variants=["missions"])
    assert bare.rules is None and replay.to_json(bare)["rules"] == {"risk": 2, "missions": 2}


@pytest.mark.parametrize("rule_set", ["isf", "barrage"])
def test_a_stratego_replay_records_the_isf_rules_version(rule_set):
    """ISF and barrage follow chases of several pieces since version 2, and count a
    Scout's moves by the squares its first move covered (ISF 10.2) since version 3."""
    bare = MatchRecord(
        game="stratego", num_players=2, seed=1, players=["a", "b"], variants=[rule_set]
    )
    assert replay.to_json(bare)["rules"] == {rule_set: 3}


class IsfVersion2:
    """The ISF rules as version 2 played them: a Scout's moves counted against the
    two-squares rule only between the same two squares (no ISF 10.2)."""

    @hookimpl
    def stratego_rules(self, rules: Any, options: dict[str, Any]) -> None:
        apply_isf(rules)
        rules.scout_lines = False


ISF = REGISTRY.variant("stratego", "isf")
ISF_V2 = dataclasses.replace(ISF, plugin=IsfVersion2(), rules_version=2)


class Scripted:
    """A Stratego player with a fixed setup (flag and bombs on the back row, seat 0's
    Scout on a4) and a fixed list of moves."""

    def __init__(self, moves: list[tuple[int, int]]) -> None:
        self.moves = iter(moves)

    def decide(self, observation: Any, decision: Any) -> dict[str, Any]:
        if decision.kind == "setup":
            army = decision.options["army"]
            names = ["flag"] + ["bomb"] * army["bomb"] + ["scout"]
            left = Counter(army) - Counter(names)
            names += sorted(left.elements())
            squares = sorted(decision.options["squares"], reverse=observation["seat"] == 1)
            if observation["seat"] == 0:  # the Scout on a4, the rest from the back row on
                squares = squares[:7] + [30] + [s for s in squares[7:] if s != 30]
            return {"type": "setup", "placement": dict(zip(squares, names, strict=True))}
        a, b = next(self.moves)
        return {"type": "move", "from": a, "to": b}


#: seat 0's Scout: a4-a6, back, a4-a6 again, then a6-a5 (the fourth move on the squares
#: a4 to a6: refused by ISF 10.2); seat 1 steps four front pieces forward meanwhile
SCOUT_SERIES = [(30, 50), (50, 30), (30, 50), (50, 40)]
FRONT_STEPS = [(64, 54), (65, 55), (68, 58), (69, 59)]


def test_an_old_isf_replay_of_a_scouts_series_says_in_one_line_that_the_rules_changed(
    tmp_path, capsys
):
    """Version 2 let a Scout go on moving within the squares a4 to a6; verifying that
    game now says that the rules changed, at the move ISF 10.2 refuses."""
    stratego = REGISTRY.game("stratego")
    old = play_match(
        stratego,
        [Scripted(SCOUT_SERIES), Scripted(FRONT_STEPS)],
        7,
        {"turn-limit": "8"},
        [ISF_V2],
        names=["a", "b"],
    )
    assert old.rules == {"isf": 2} and old.result.reason == EndReason.TURN_LIMIT
    path = tmp_path / "old-isf.json"
    replay.save(old, path)
    assert_mismatch(
        replay.load(path),
        8,  # two setups, then a6-a5 is the seventh move
        "recorded under version 2 of the isf rules and this arena plays version 3",
        "two-squares rule (ISF 10.2)",
    )
    assert main(["replay", "verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "MISMATCH: the rules changed" in err
    assert "version 2 of the isf rules" in err


def test_an_old_isf_replay_the_scouts_rule_does_not_change_still_verifies():
    """Games in which no Scout moved on within its first move's squares play alike under
    versions 2 and 3: their old replays verify."""
    stratego = REGISTRY.game("stratego")
    names = ("heuristic", "random")
    for seed in range(5):
        runs = []
        for variant in (ISF_V2, ISF):
            bots = [
                REGISTRY.bot("stratego", n).factory(s, seed * 10 + s) for s, n in enumerate(names)
            ]
            runs.append(play_match(stratego, bots, seed, {"turn-limit": "200"}, [variant]))
        old, new = (reload(rec) for rec in runs)
        if old.steps == new.steps:
            assert old.rules == {"isf": 2}
            assert replay.verify(old) == len(old.steps)
            return
    raise AssertionError("every seed's game differs between the rules versions")


def test_an_old_missions_replay_says_the_rules_version_changed(tmp_path, capsys):
    """A missions game recorded under version 1 went on past seat 1's completed mission;
    verifying it now says that the rules changed, at the step where the games part."""
    old = play_missions(MISSIONS_V1, seed=5263)
    assert len(old.steps) == 648  # version 1: seat 1 won on its own turn, 34 steps later
    assert len(play_missions(MISSIONS, seed=5263).steps) == 614
    path = tmp_path / "old.json"
    replay.save(old, path)
    # as version 1 missions replays were written: no version for the missions
    assert json.loads(path.read_text())["rules"] == {"risk": 2}
    loaded = replay.load(path)
    assert loaded.rules == {"risk": 2}
    assert replay.to_json(loaded)["rules"] == {"risk": 2}, "re-saving stamped the new version"
    assert_mismatch(
        loaded,
        613,
        "the rules changed since this replay was made",
        "recorded under version 1 of the missions rules and this arena plays version 2",
        "step 613 (seat 2, attack)",
    )
    assert main(["replay", "verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert "MISMATCH" in err and "version 1 of the missions rules" in err


def test_an_old_replay_the_new_rules_do_not_change_still_verifies():
    """Version 1 and 2 play this game alike: no difference, nothing to report."""
    for seed in range(3):
        old = reload(play_missions(MISSIONS_V1, seed))
        old.rules = {"risk": 2}
        new = play_missions(MISSIONS, seed)
        if old.steps == reload(new).steps:
            assert replay.verify(old) == len(old.steps)
            return
    raise AssertionError("every seed's game differs between the rules versions")


def test_a_bad_rules_field_is_refused_clearly():
    data = replay.to_json(play(("random",) * 3, {"turn-limit": "5"}, seed=1))
    data["rules"] = {"missions": "two"}
    with pytest.raises(ValueError, match="'rules' must map the game's and variants' names"):
        replay.from_json(data)


# --- size -------------------------------------------------------------------------------------


def test_a_long_game_replay_stays_compact(tmp_path, capsys):
    names = ("random",) * 6
    rec = play(names, {"cards": "progressive", "turn-limit": "500"}, seed=8)
    assert rec.result.reason.value == "turn_limit"
    assert len(rec.steps) > 10_000  # really a long game
    assert sum(1 for e in rec.events if e["e"] == "trade") > 50
    path = tmp_path / "long.json"
    size = replay.save(rec, path)
    assert size < 5_000_000, f"{size:,} bytes"
    gz = tmp_path / "long.json.gz"
    assert replay.save(rec, gz) < size // 4
    with gzip.open(gz) as fh:
        assert json.load(fh)["steps"][-1] == json.loads(json.dumps(rec.steps[-1]))
    assert replay.verify(replay.load(path)) == len(rec.steps)
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == ""


# --- replays made before the secure chance ------------------------------------------------

DATA = Path(__file__).resolve().with_name("data")


def test_a_replay_of_the_mersenne_twister_says_in_one_line_that_the_rules_changed(capsys):
    """risk-mersenne-twister.json.gz was made by Arena when Risk's chance was a Mersenne
    Twister (version 1 of the risk rules, recorded as no version): its deal and its dice
    come out otherwise now, and verifying it says why, on one line."""
    path = DATA / "risk-mersenne-twister.json.gz"
    old = replay.load(path)
    assert old.rules == {} and old.deal_seed is None
    assert_mismatch(
        old,
        -1,  # the deal is the first thing to differ
        "recorded under version 1 of the risk rules and this arena plays version 2",
    )
    assert main(["replay", "verify", str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "MISMATCH: the rules changed" in err
    assert "version 1 of the risk rules" in err


def test_an_old_stratego_replay_still_verifies(capsys):
    """Stratego's chance makes only the fallback setups, which a replay records as the
    actions they were: its replays from the Mersenne Twister verify as they are."""
    path = DATA / "stratego-mersenne-twister.json.gz"
    assert main(["replay", "verify", str(path)]) == 0
    assert "OK (42 decisions" in capsys.readouterr().out
