"""Stratego pieces: ranks by strength, names, and the armies of each rule set.

Ranks are numbers by strength: the Spy is 1, the Scout 2, ..., the Marshal 10. The
manual numbers them the other way round (Marshal 1); either numbering is only a label.
The Bomb (11) and the Flag (0) never move.
"""

from __future__ import annotations

FLAG, SPY, SCOUT, MINER, SERGEANT, LIEUTENANT, CAPTAIN, MAJOR, COLONEL, GENERAL, MARSHAL, BOMB = (
    range(12)
)
NAMES = (
    "flag",
    "spy",
    "scout",
    "miner",
    "sergeant",
    "lieutenant",
    "captain",
    "major",
    "colonel",
    "general",
    "marshal",
    "bomb",
)
RANK_OF = {name: rank for rank, name in enumerate(NAMES)}
IMMOVABLE = frozenset({FLAG, BOMB})

#: pieces per side, the manual's 40
CLASSIC_ARMY = {
    "marshal": 1,
    "general": 1,
    "colonel": 2,
    "major": 3,
    "captain": 4,
    "lieutenant": 4,
    "sergeant": 4,
    "miner": 5,
    "scout": 8,
    "spy": 1,
    "bomb": 6,
    "flag": 1,
}
#: barrage: 8 pieces per side
BARRAGE_ARMY = {
    "flag": 1,
    "marshal": 1,
    "general": 1,
    "miner": 1,
    "scout": 2,
    "spy": 1,
    "bomb": 1,
}


def strike(attacker: int, defender: int) -> int:
    """The outcome of ``attacker`` striking ``defender``: 1 attacker wins, -1 defender
    wins, 0 both are removed."""
    if defender == FLAG:
        return 1
    if defender == BOMB:
        return 1 if attacker == MINER else -1
    if attacker == SPY and defender == MARSHAL:
        return 1
    if attacker == defender:
        return 0
    return 1 if attacker > defender else -1
