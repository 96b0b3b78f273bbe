"""Stratego plays through the CLI under every rule set and its replays verify."""

import pytest

from arena.cli import main


@pytest.mark.parametrize("variant", [[], ["--variant", "isf"], ["--variant", "barrage"]])
def test_play_and_verify_stratego(variant, tmp_path, capsys):
    replay = tmp_path / "s.json"
    assert (
        main(
            [
                "play",
                "stratego",
                "--players",
                "heuristic,random",
                "--seed",
                "2",
                "--replay",
                str(replay),
                *variant,
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "stratego: 2 players, seed 2" in out
    assert "ranking: " in out
    assert main(["replay", "verify", str(replay)]) == 0
