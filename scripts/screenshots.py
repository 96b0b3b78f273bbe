"""The README's screenshots (docs/images/): a store filled by real small tournaments,
served by ``arena web``, shot in Debian's Chromium.

Classic Risk (four house bots, three seats, cards as the rules deal them) and Stratego
(two house bots) round robins are played into a new store in a temporary directory,
with fixed seeds and ids (the same results each time; the order they finish in, and so
OpenSkill, and the times shown, vary);
``arena web`` serves it; :func:`arena.web.browser.readme_shots`, the function the
browser tests use too, saves the leaderboard and a Risk match's page as PNGs, and
:func:`arena.web.browser.layout_shots` the home page, the leaderboard, a tournament and
both viewers at a phone's size (390x844) and a laptop's (1366x768), in
docs/images/layouts/.

    .venv/bin/python scripts/screenshots.py            # writes docs/images/*.png
    make screenshots                                   # the same
    .venv/bin/python scripts/screenshots.py --out /tmp/shots --keep   # elsewhere; keep the store
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from arena.store import Store  # noqa: E402
from arena.tournament.executor import LocalExecutor  # noqa: E402
from arena.tournament.runner import TournamentSpec, create_tournament, run_tournament  # noqa: E402
from arena.web.browser import chromium, layout_shots, readme_shots, serve  # noqa: E402

TOURNAMENTS = [
    TournamentSpec(
        game="risk",
        bots=["house:aggressive", "house:blitz", "house:defensive", "house:random"],
        seats=3,
        games_per_pairing=3,
        options={"turn-limit": "60"},
        seed=2026,
        name="risk round robin",
        tournament_id="readme-risk",
    ),
    TournamentSpec(
        game="stratego",
        bots=["house:heuristic", "house:random"],
        seats=2,
        games_per_pairing=4,
        seed=2026,
        name="stratego round robin",
        tournament_id="readme-stratego",
    ),
]


def fill(db: Path) -> None:
    store = Store(str(db))
    try:
        for spec in TOURNAMENTS:
            t = create_tournament(store, spec)
            run_tournament(store, t.id, LocalExecutor(workers=0))
            print(f"played {spec.name}: {t.id}")
    finally:
        store.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "images")
    parser.add_argument("--keep", action="store_true", help="keep the store (its path is printed)")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="arena-shots-"))
    db = folder / "arena.db"
    fill(db)
    with serve(db) as base, chromium() as browser:
        for name, path in readme_shots(browser, base, args.out).items():
            print(f"{name}: {path} ({path.stat().st_size / 1024:.0f} KB)")
        # the layout at a phone's size and a laptop's (docs/web.md, "Screenshots")
        for name, (path, _measured) in layout_shots(browser, base, args.out / "layouts").items():
            print(f"{name}: {path} ({path.stat().st_size / 1024:.0f} KB)")
    if args.keep:
        print(f"the store: {db}")
    else:
        for path in sorted(folder.iterdir()):
            path.unlink()
        folder.rmdir()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
