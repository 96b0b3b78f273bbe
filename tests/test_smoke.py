"""The README's main job works: a classic game between the built-in bots, verified."""

from arena.cli import main


def test_play_and_verify_the_readme_game(tmp_path, capsys):
    replay = tmp_path / "game.json"
    assert (
        main(
            [
                "play",
                "risk",
                "--players",
                "random,aggressive,defensive",
                "--seed",
                "7",
                "--replay",
                str(replay),
            ]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "seats (turn order): 0:random, 1:aggressive, 2:defensive" in out
    assert "winner:" in out or "tie between" in out
    assert main(["replay", "verify", str(replay)]) == 0
    assert "OK" in capsys.readouterr().out
