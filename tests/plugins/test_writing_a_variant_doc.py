"""docs/writing-a-variant.md works as written: its code is installed and played."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from arena.cli import main
from arena.engine.replay import load, verify
from arena.plugins import load_registry

DOC = Path(__file__).resolve().parents[2] / "docs" / "writing-a-variant.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text(), flags=re.DOTALL)


@pytest.fixture
def installed_doc_variant(install_plugin):
    [source] = _blocks("python")
    [toml] = _blocks("toml")
    entry_points = tomllib.loads(toml)["project"]["entry-points"]["arena"]
    module = next(iter(entry_points.values()))
    return install_plugin(module, source, entry_points)


def test_the_documented_variant_is_listed(installed_doc_variant, capsys):
    assert main(["variants"]) == 0
    out = capsys.readouterr().out
    assert "--variant double-bonus: one continent's bonus counts twice" in out
    assert "--option double-continent=VALUE (default Australia)" in out


def test_the_documented_variant_doubles_the_bonus_in_a_played_game(
    installed_doc_variant, tmp_path, capsys
):
    """Play the documented command until some turn shows the doubled bonus."""
    for seed in range(40):
        path = tmp_path / f"g{seed}.json"
        assert (
            main(
                [
                    "play",
                    "risk",
                    "--players",
                    "aggressive,defensive,random",
                    "--variant",
                    "double-bonus",
                    "--option",
                    "double-continent=Australia",
                    "--seed",
                    str(seed),
                    "--replay",
                    str(path),
                ]
            )
            == 0
        )
        rec = load(path)
        doubled = [
            e
            for e in rec.events
            if e["e"] == "reinforcements" and ["Australia doubled", 2] in e["breakdown"]
        ]
        if doubled:
            event = doubled[0]
            assert ["Australia", 2] in event["breakdown"]
            assert event["total"] == sum(n for _, n in event["breakdown"])
            assert verify(rec, load_registry()) == len(rec.steps)
            break
    else:
        pytest.fail("no game of 40 held Australia at the start of a turn")
    capsys.readouterr()


def test_the_documented_variant_refuses_a_continent_not_on_the_map(installed_doc_variant, capsys):
    assert (
        main(
            [
                "play",
                "risk",
                "--players",
                "random,random,random",
                "--variant",
                "double-bonus",
                "--option",
                "double-continent=Atlantis",
            ]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert "double-continent=Atlantis: not a continent of this map" in err
    assert "Australia" in err


def test_the_documented_option_needs_its_variant(installed_doc_variant, capsys):
    assert (
        main(
            [
                "play",
                "risk",
                "--players",
                "random,random,random",
                "--option",
                "double-continent=Europe",
            ]
        )
        == 2
    )
    assert "add --variant double-bonus" in capsys.readouterr().err
