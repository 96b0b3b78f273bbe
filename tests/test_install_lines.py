"""The install says what it does (#29: it was silent for 70 s after "Successfully built
arena"): pip's lines go through the Makefile's filter, which keeps one line each for what
is fetched and says before the long install what it is doing."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _filter() -> str:
    """The shell pipeline of the Makefile's PIP_LINES."""
    text = (ROOT / "Makefile").read_text()
    found = re.search(r"^PIP_LINES = (.*?)\n(?=\S|\n)", text, re.M | re.S)
    assert found, "PIP_LINES is gone from the Makefile"
    return found.group(1).replace("\\\n", " ").replace("$$", "$")


def test_the_install_says_what_it_is_doing_before_the_long_part() -> None:
    pip = "\n".join(
        [
            "Collecting grpcio>=1.66 (from arena==0.1.0)",
            "  Downloading grpcio-1.85.3-cp311-cp311-manylinux.whl (6.2 MB)",
            "Building wheels for collected packages: arena",
            "Successfully built arena",
            "Installing collected packages: sortedcontainers, numpy, scipy, grpcio, arena",
            "Successfully installed arena-0.1.0 grpcio-1.85.3",
        ]
    )
    done = subprocess.run(
        ["bash", "-c", _filter()], input=pip, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Collecting grpcio>=1.66",
        "Successfully built arena",
        "installing the packages fetched (the large ones take a while): sortedcontainers, "
        "numpy, scipy, grpci",
        "Successfully installed arena-0.1.0 grpcio-1.85.3",
    ]
