"""A match's spectators (``WatchMatch``), served from one prepared source, off the
decision path.

The match only notes each step (its seat, the steps played, its events: a tuple, no
message) while someone watches. At most every SPECTATOR_BATCH_S a timer turns what was
noted into messages, once for every watcher: their public events, encoded once, the
position (``State.spectator_view``) after the last of them, made once, each message
serialized once and the same bytes queued for every watcher of its kind. So the work of
watching is a few messages a second per match, whatever the number of watchers or the
speed of the match, and none of it happens while the match decides.

A watcher whose queue grows past MAX_WAITING messages does not keep up (it does not
read, or reads slower than the match plays): it is dropped, and its stream ends with
RESOURCE_EXHAUSTED saying so.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from arena.referee.codec import to_json_text
from arena.v1 import arena_pb2 as pb

if TYPE_CHECKING:
    from arena.referee.live import LiveMatch

log = logging.getLogger("arena.referee")

#: how often the steps noted go out to the watchers, as one message each (seconds)
SPECTATOR_BATCH_S = 0.1
#: messages that may wait for a watcher: about this many ticks (10 s), then it is dropped
MAX_WAITING = 100
#: what a watcher's queue ends with once the match has ended (see ``Watcher.ending``)
FINISHED = b""


@dataclass(eq=False)
class Watcher:
    """One WatchMatch stream: what waits for it (serialized SpectatorMessages), then
    FINISHED (the match ended: the stream sends its end) or None (it was dropped:
    ``dropped`` says why)."""

    batches: bool
    peer: str = ""
    queue: asyncio.Queue[bytes | None] = field(default_factory=asyncio.Queue)
    dropped: str = ""

    def put(self, data: bytes) -> bool:
        """Queue ``data``; False (and the watcher is dropped) once it does not keep up."""
        if self.dropped:
            return False
        if self.queue.qsize() >= MAX_WAITING:
            self.dropped = f"a spectator that does not keep up: over {MAX_WAITING} messages waiting"
            log.info(
                "dropped a spectator from %s: over %d messages waiting", self.peer, MAX_WAITING
            )
            self.queue.put_nowait(None)
            return False
        self.queue.put_nowait(data)
        return True


class Spectators:
    """The watchers of one match, and the steps noted for them since the last tick."""

    def __init__(self, match: LiveMatch) -> None:
        self.match = match
        self.watchers: list[Watcher] = []
        #: (seat or None, steps played after it, the engine's events): not sent yet
        self._noted: list[tuple[int | None, int, list[dict[str, Any]]]] = []
        self._timer: asyncio.TimerHandle | None = None
        #: where the match stands, for new watchers: (steps, plain, batch) message bytes
        self._start: tuple[int, bytes, bytes] | None = None
        #: the end, as every watcher gets it, and without the replay and the seed
        self._end: tuple[bytes, bytes] | None = None

    # --- the match's side: O(1) a step -----------------------------------------------

    def note(self, seat: int | None, steps: int, events: list[dict[str, Any]]) -> None:
        """A step was played (called by the match only while someone watches)."""
        self._noted.append((seat, steps, events))
        if self._timer is None:
            self._timer = asyncio.get_running_loop().call_later(SPECTATOR_BATCH_S, self.flush)

    # --- the watchers' side ----------------------------------------------------------

    def join(self, watcher: Watcher) -> None:
        """A new watcher: it starts with where the match stands (nothing before the
        match's state is made); the steps noted before it came go to the others first,
        so that from now on it gets the very messages every watcher of its kind gets."""
        self.flush()
        if self.match.state is not None:
            _, plain, batch = self._where_it_stands()
            watcher.put(batch if watcher.batches else plain)
        self.watchers.append(watcher)

    def leave(self, watcher: Watcher) -> None:
        if watcher in self.watchers:
            self.watchers.remove(watcher)

    def _where_it_stands(self) -> tuple[int, bytes, bytes]:
        """The position now, as the first message of a new watcher of either kind: made
        once per step played, however many watchers join meanwhile."""
        steps = self.match.steps_played()
        if self._start is None or self._start[0] != steps:
            events = pb.MatchEvents(
                match_id=self.match.match_id, view_json=self.match.spectator_view(), steps=steps
            )
            plain = pb.SpectatorMessage(events=events).SerializeToString()
            batch = pb.SpectatorMessage(batch=pb.SpectatorBatch(steps=[events]))
            self._start = (steps, plain, batch.SerializeToString())
        return self._start

    # --- the tick ----------------------------------------------------------------------

    def flush(self) -> None:
        """The steps noted since the last tick, as one message per kind of watcher, made
        once for all: a SpectatorBatch (each step's events and seat, the position after
        the last) for those that asked for batches, one MatchEvents (every step's
        events, the position after them, whose steps they were if all one seat's) for
        the others."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        noted, self._noted = self._noted, []
        if not noted or not self.watchers:
            return
        match = self.match
        game = match.game
        public = game.public_event
        shown = [
            [to_json_text(e) for event in events if (e := public(event, None)) is not None]
            for _, _, events in noted
        ]
        view = match.spectator_view() if match.state is not None else ""
        last_steps = noted[-1][1]
        messages: dict[bool, bytes] = {}
        if any(w.batches for w in self.watchers):
            message = pb.SpectatorMessage()
            steps = message.batch.steps
            for (seat, played, _), texts in zip(noted, shown, strict=True):
                step = steps.add(match_id=match.match_id, events_json=texts, steps=played)
                if seat is not None:
                    step.seat = seat
            step.view_json = view
            messages[True] = message.SerializeToString()
        if not all(w.batches for w in self.watchers):
            seats = {seat for seat, _, _ in noted}
            events = pb.MatchEvents(
                match_id=match.match_id,
                events_json=[text for texts in shown for text in texts],
                view_json=view,
                steps=last_steps,
            )
            if len(seats) == 1 and None not in seats:
                events.seat = next(iter(seats))  # type: ignore[assignment]
            messages[False] = pb.SpectatorMessage(events=events).SerializeToString()
        for watcher in list(self.watchers):
            if not watcher.put(messages[watcher.batches]):
                self.leave(watcher)

    def finish(self, info: pb.MatchInfo) -> None:
        """The match has ended: what was noted goes out, then FINISHED to every watcher
        (each stream then sends ``end(hidden)``)."""
        self.flush()
        hidden = pb.MatchInfo()
        hidden.CopyFrom(info)
        hide_replay(hidden)
        self._end = (
            pb.SpectatorMessage(finished=info).SerializeToString(),
            pb.SpectatorMessage(finished=hidden).SerializeToString(),
        )
        for watcher in self.watchers:
            watcher.queue.put_nowait(FINISHED)  # never dropped: the end always goes out
        self.watchers = []

    def end(self, hidden: bool) -> bytes:
        """The last message: the match's MatchInfo, with or without its replay and seed."""
        assert self._end is not None
        return self._end[1 if hidden else 0]


def hide_replay(info: pb.MatchInfo) -> None:
    """Take out what tells a match's secrets: its replay and its seeds."""
    info.replay_json = ""
    info.ClearField("seed")
    info.ClearField("deal_seed")
