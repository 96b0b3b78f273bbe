"""A bot file for the SDK tests: it plays the first legal option, writes what it is told
(the events of each decision, the end of each match) as JSON lines to the file named by
$RECORD, and raises in every decision from the one numbered $FAIL_FROM on (0: never).
It threads: with --threads N it notes the thread each decision ran in."""

from __future__ import annotations

import json
import os
import threading
from typing import Any

from arena.sdk import Bot, main

RECORD = os.environ.get("RECORD", "")
FAIL_FROM = int(os.environ.get("FAIL_FROM", "0"))


def note(entry: dict[str, Any]) -> None:
    if RECORD:
        with open(RECORD, "a") as out:
            out.write(json.dumps(entry) + "\n")


class Recording(Bot):
    def __init__(self, match: Any) -> None:
        super().__init__(match)
        self.decisions = 0

    def decide(self, observation: dict[str, Any], decision: Any) -> dict[str, Any]:
        self.decisions += 1
        note(
            {
                "match": self.match.match_id,
                "seat": self.match.seat,
                "kind": decision.kind,
                "events": decision.events,
                "thread": threading.current_thread().name,
            }
        )
        if FAIL_FROM and self.decisions >= FAIL_FROM:
            raise ValueError("boom")
        options = decision.options
        if self.match.game == "stratego":
            if decision.kind == "setup":
                return self.default_setup(decision)
            source, target = options["moves"][0]
            return {"type": "move", "from": source, "to": target}
        return self.state_default(observation, decision)

    @staticmethod
    def state_default(observation: dict[str, Any], decision: Any) -> dict[str, Any]:
        """A legal Risk answer: the least that every decision allows."""
        options, kind = decision.options, decision.kind
        if kind in ("claim", "setup_place"):
            return {
                "type": "claim" if kind == "claim" else "place",
                "territory": options["territories"][0],
            }
        if kind == "trade":
            return (
                {"type": "trade", "cards": options["sets"][0]}
                if options["must_trade"]
                else {"type": "no_trade"}
            )
        if kind == "reinforce":
            return {"type": "reinforce", "armies": {options["territories"][0]: options["armies"]}}
        if kind == "attack":
            return {"type": "end_attack"}
        if kind == "move_in":
            return {"type": "move_in", "armies": options["min"]}
        if kind == "fortify":
            return {"type": "end_turn"}
        if kind == "defend":
            return {"type": "defend", "dice": options["max_dice"]}
        raise ValueError(f"no answer for {kind}")

    def on_end(self, end: Any) -> None:
        note(
            {
                "match": self.match.match_id,
                "seat": end.seat,
                "end": end.reason,
                "place": end.place,
                "places": end.places,
                "forfeits": {str(k): v for k, v in end.forfeits.items()},
                "events": end.events,
            }
        )


if __name__ == "__main__":
    main(Recording)
